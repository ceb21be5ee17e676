/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Record marking (RFC 5531 section 11): the helpers of src/rpc/recmark.c, and the reassembly of
 * fragments into a record (src/rpc/recasm.c, the daemon's own) driven as server.c's conn_pump(),
 * rec_take() and take_mark() drive it, against a plain reference.
 *
 * server.c's state machine is tied to its connections and io_uring and cannot be called as a
 * library; fuzz_conn runs the real one over TCP. Here the same steps (stream buffer, records
 * moved out of it once PEEK_MIN bytes are there, fragments appended from it, direct receives into
 * the record as large as a window that grows with what arrived, max_record) run over the
 * input cut into receives of fuzzer-chosen sizes, and must give exactly the records, and the same
 * closing on an oversized record, as a parser that has the whole stream at once; and the copying
 * recasm does to grow a record must stay linear in the record's bytes (it was quadratic: a 1 MiB
 * WRITE in 1-byte fragments cost 9 s of CPU).
 *
 * Input: byte 0 picks max_record, bytes 1-2 the receive sizes, the rest is the stream. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/recasm.h"
#include "rpc/recmark.h"

#define SBUF_SIZE (64 * 1024)     /* as server.c */
#define PEEK_MIN 512
#define WIN_MIN SBUF_SIZE         /* recvmem.c's smallest window */
#define MAX_RECORDS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_recmark: %s\n", #c); abort(); } } while (0)

/* Records as (offset, length) into a buffer of their bytes. */
struct records {
	uint8_t *bytes;
	size_t len, cap;
	size_t n, end[MAX_RECORDS];
	bool closed;              /* a record passed max_record */
};

static void rec_add(struct records *r, const uint8_t *p, size_t len)
{
	if (len == 0)
		return;               /* an empty record (bytes may still be NULL) */
	if (r->len + len > r->cap) {
		r->cap = (r->len + len) * 2;
		r->bytes = realloc(r->bytes, r->cap);
		CHECK(r->bytes);
	}
	memcpy(r->bytes + r->len, p, len);
	r->len += len;
}

static void rec_end(struct records *r)
{
	CHECK(r->n < MAX_RECORDS);
	r->end[r->n++] = r->len;
}

/* The whole stream at once: fragments until the last one, the record's total checked at each
 * mark (as take_mark does); an incomplete record at the end is not one. */
static void reference(const uint8_t *s, size_t len, size_t max_record, struct records *out)
{
	size_t i = 0, total = 0, start = out->len;
	while (len - i >= 4 && out->n < MAX_RECORDS) {
		uint32_t m = recmark_get(s + i);
		if (total + recmark_len(m) > max_record) {
			out->closed = true;
			break;
		}
		if (len - i - 4 < recmark_len(m))
			break;
		rec_add(out, s + i + 4, recmark_len(m));
		total += recmark_len(m);
		i += 4 + recmark_len(m);
		if (recmark_is_last(m)) {
			rec_end(out);
			start = out->len;
			total = 0;
		}
	}
	out->len = start;             /* drop a record begun and not finished */
}

/* server.c's struct conn, as far as reassembly goes. */
struct conn {
	uint8_t sbuf[SBUF_SIZE];
	size_t head, tail;
	struct recasm ra;
	size_t win;
	bool dead;
	size_t max_record;
	struct records *out;
	size_t rec_bytes, nrec;   /* what went through ra, for the linear check */
};

static void rec_done(struct conn *c)
{
	uint8_t *rec;
	size_t len;
	uint8_t *mem = recasm_take(&c->ra, &rec, &len);
	rec_add(c->out, rec, len);
	rec_end(c->out);
	c->rec_bytes += len;
	c->nrec++;
	free(mem);
}

static bool take_mark(struct conn *c, uint32_t *len, bool *last)
{
	if (c->tail - c->head < 4)
		return false;
	uint32_t m = recmark_get(c->sbuf + c->head);
	*len = recmark_len(m);
	*last = recmark_is_last(m);
	size_t total = (c->ra.mem ? c->ra.len : 0) + *len;
	if (total > c->max_record) {
		c->dead = true;
		c->out->closed = true;
		return false;
	}
	return true;
}

/* server.c's rec_take(): what the stream buffer holds of the record goes into it. */
static bool rec_take(struct conn *c)
{
	for (;;) {
		size_t k = c->tail - c->head;
		if (k > c->ra.frag_left)
			k = c->ra.frag_left;
		if (k) {
			CHECK(recasm_reserve(&c->ra, c->ra.len + k, c->max_record) == 0);
			recasm_put(&c->ra, c->sbuf + c->head, k);
			c->head += k;
		}
		if (c->ra.frag_left)
			return false;
		if (c->ra.last) {
			rec_done(c);
			return true;
		}
		uint32_t len;
		bool last;
		if (!take_mark(c, &len, &last))
			return false;
		c->head += 4;
		recasm_next(&c->ra, len, last);
	}
}

/* conn_pump()'s loop, without the request and memory bounds (nothing ever waits here). */
static void pump(struct conn *c)
{
	while (!c->dead) {
		if (c->ra.mem) {
			if (!rec_take(c))
				break;
			continue;
		}
		uint32_t len;
		bool last;
		if (!take_mark(c, &len, &last))
			break;
		size_t avail = c->tail - c->head - 4;
		if (last && avail >= len) {
			rec_add(c->out, c->sbuf + c->head + 4, len);
			rec_end(c->out);
			c->head += 4 + (size_t)len;
			continue;
		}
		if (avail < PEEK_MIN && avail < len && c->tail < SBUF_SIZE)
			break;
		/* rec_begin(): room for what is here and one window; placed as a WRITE may be */
		size_t room = avail + c->win;
		CHECK(recasm_begin(&c->ra, len, last, room < len ? room : len, len % 2 ? 0 : 4096,
				   avail % 4096) == 0);
		c->head += 4;
	}
	if (c->head == c->tail)
		c->head = c->tail = 0;
}

/* One receive of at most want bytes, where conn_post_recv() would put it: a direct one no larger
 * than the window (mem_window), which doubles when the record has half of it. */
static size_t receive(struct conn *c, const uint8_t *s, size_t left, size_t want)
{
	if (c->ra.mem && c->head == c->tail && c->ra.frag_left) {
		size_t posted = c->ra.frag_left < c->win ? c->ra.frag_left : c->win;
		CHECK(recasm_reserve(&c->ra, c->ra.len + posted, c->max_record) == 0);
		size_t n = want < posted ? want : posted;
		n = n < left ? n : left;
		memcpy(recasm_tail(&c->ra), s, n);
		recasm_got(&c->ra, n);
		if (n && 2 * c->ra.len >= c->win && c->win < c->max_record)
			c->win = 2 * c->win < c->max_record ? 2 * c->win : c->max_record;
		if (recasm_whole(&c->ra))
			rec_done(c);
		return n;
	}
	if (c->tail == SBUF_SIZE && c->head) {
		memmove(c->sbuf, c->sbuf + c->head, c->tail - c->head);
		c->tail -= c->head;
		c->head = 0;
	}
	size_t room = SBUF_SIZE - c->tail;
	size_t n = want < room ? want : room;
	n = n < left ? n : left;
	memcpy(c->sbuf + c->tail, s, n);
	c->tail += n;
	return n;
}

static void check_helpers(const uint8_t *p)
{
	uint32_t m = recmark_get(p);
	uint8_t back[4];
	recmark_put(back, recmark_len(m));
	CHECK(recmark_is_last(recmark_get(back)) && recmark_len(recmark_get(back)) == recmark_len(m));
	CHECK((recmark_len(m) | (recmark_is_last(m) ? RECMARK_LAST : 0)) == m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t max_records[] = {0, 1, 4, 28, 100, 512, 1000, 4096, 65536, 65540,
					     200000, 1088 * 1024};
	if (size < 3)
		return 0;
	size_t max_record = max_records[data[0] % (sizeof max_records / sizeof max_records[0])];
	size_t step_a = data[1] + 1, step_b = (size_t)data[2] * 257 + 1;
	data += 3;
	size -= 3;
	if (size >= 4)
		check_helpers(data);

	static struct records want, got;
	static struct conn c;
	want.len = want.n = got.len = got.n = 0;
	want.closed = got.closed = false;
	reference(data, size, max_record, &want);

	memset(&c, 0, sizeof c);
	c.max_record = max_record;
	c.win = WIN_MIN;
	c.out = &got;
	size_t i = 0;
	for (unsigned k = 0; i < size && !c.dead; k++) {
		/* a receive gives what the socket has, at most the room asked for */
		i += receive(&c, data + i, size - i, k % 2 ? step_b : step_a);
		pump(&c);
	}
	recasm_free(&c.ra);
	/* Growing copies at most the room it grows to: twice a record, and a few pages. */
	CHECK(c.ra.moved <= 2 * c.rec_bytes + 2 * c.max_record + 8192 * (c.nrec + 1));

	CHECK(got.closed == want.closed);
	CHECK(got.n == want.n);
	for (size_t r = 0; r < got.n; r++)
		CHECK(got.end[r] == want.end[r]);
	CHECK(got.len == want.len);
	CHECK(got.len == 0 || memcmp(got.bytes, want.bytes, got.len) == 0);
	for (size_t r = 0; r < got.n; r++)
		CHECK(got.end[r] - (r ? got.end[r - 1] : 0) <= max_record);
	return 0;
}
