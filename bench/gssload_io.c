/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gss-load's I/O: what each writer sends next, the WRITEs and READs it sends, the replies it
 * checks, and the event loops that drive the connections. See gssload.c. */
#include "gssload.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NFS3_WRITE 7

const char *const service_names[4] = { "?", "krb5", "krb5i", "krb5p" };

/* The first failure is the one worth reading: recorded with its exit status, printed. */
void fail(struct run *r, int status, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&r->fail_lock);
	if (atomic_load(&r->failed) == 0) {
		atomic_store(&r->failed, status);
		fputs("gss-load: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	pthread_mutex_unlock(&r->fail_lock);
}

bool failed(struct run *r)
{
	return atomic_load(&r->failed) != 0;
}

uint64_t unit_len(const struct run *r, uint64_t u)
{
	uint64_t off = u * r->o->record;

	return r->size - off < r->o->record ? r->size - off : r->o->record;
}

/* ---- what each writer does next ---- */

static bool next_write(struct writer *w, struct piece *p)
{
	struct run *r = w->r;
	uint64_t u;

	if (r->o->wl == WL_INTERLEAVE) {
		if (w->next_rec >= r->nunits)
			return false;
		u = w->next_rec;
		w->next_rec += r->o->writers;
	} else {
		u = atomic_fetch_add(&r->next, 1);
		if (u >= r->nunits)
			return false;
	}
	p->off = u * r->o->record;
	p->len = (uint32_t)unit_len(r, u);
	return true;
}

static bool next_read(struct writer *w, struct piece *p)
{
	struct run *r = w->r;
	uint64_t k = atomic_fetch_add(&r->next, 1), chunk;

	if (k >= r->nreads)
		return false;
	chunk = k % r->nchunks;
	p->off = chunk * r->rsize;
	p->len = (uint32_t)(r->size - p->off < r->rsize ? r->size - p->off : r->rsize);
	return true;
}

static bool next_piece(struct writer *w, struct piece *p)
{
	if (w->todo.n > 0) {
		*p = w->todo.v[--w->todo.n];
		return true;
	}
	return w->r->phase == K_WRITE ? next_write(w, p) : next_read(w, p);
}

/* Nothing left for this writer to send in this phase (it may still wait for replies). */
static bool drained(struct writer *w)
{
	struct run *r = w->r;

	if (w->todo.n > 0)
		return false;
	if (r->phase == K_WRITE && r->o->wl == WL_INTERLEAVE)
		return w->next_rec >= r->nunits;
	return atomic_load(&r->next) >= (r->phase == K_WRITE ? r->nunits : r->nreads);
}

/* ---- calls ---- */

/* An XDR word at p: where the next goes. */
static uint8_t *put32(uint8_t *p, uint32_t v)
{
	put_u32(p, v);
	return p + 4;
}

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* WRITE3args with the data made in place: fh, offset, count, stable, opaque data. */
static int send_write(struct writer *w, struct gslot *s, const struct piece *p)
{
	struct run *r = w->r;
	size_t fhl = pad4(r->fh.len), dl = pad4(p->len);
	uint8_t *a = gc_begin(&w->c, s, NFS3_WRITE, 4 + fhl + 20 + dl);

	if (a == NULL)
		return -1;
	a = put32(a, r->fh.len);
	memcpy(a, r->fh.data, r->fh.len);
	memset(a + r->fh.len, 0, fhl - r->fh.len);
	a = put32(put32(a + fhl, (uint32_t)(p->off >> 32)), (uint32_t)p->off);
	a = put32(put32(put32(a, p->len), r->o->file_sync ? RN_FILE_SYNC : RN_UNSTABLE), p->len);
	nb_pattern_fill(r->o->seed, p->off, a, p->len);
	memset(a + p->len, 0, dl - p->len);
	return gc_queue(&w->c, s);
}

static int send_read(struct writer *w, struct gslot *s, const struct piece *p)
{
	struct xb plain;

	rn_enc_read(&plain, gc_next_xid(&w->c), &w->r->fh, p->off, p->len);
	return gc_queue_plain(&w->c, s, &plain);
}

static void pump(struct writer *w)
{
	struct run *r = w->r;
	struct gslot *s;
	struct piece p;

	while (!failed(r) && (s = gc_free_slot(&w->c)) != NULL && next_piece(w, &p)) {
		int rc = r->phase == K_WRITE ? send_write(w, s, &p) : send_read(w, s, &p);

		s->kind = r->phase;
		s->off = p.off;
		s->len = p.len;
		if (rc < 0) {
			fail(r, NB_EXIT_SERVER, "connection %u: %s at offset %" PRIu64 " not sent", w->id,
			     r->phase == K_WRITE ? "WRITE" : "READ", p.off);
			return;
		}
		w->calls++;
	}
}

/* ---- replies ---- */

/* An UNSTABLE piece's verifier: a unit whose pieces got different ones is written again. */
static void note_verf(struct run *r, uint64_t off, const uint8_t verf[8])
{
	struct unit *u = &r->units[off / r->o->record];

	if (!(u->flags & U_VERF)) {
		memcpy(u->verf, verf, 8);
		u->flags |= U_VERF;
	} else if (memcmp(u->verf, verf, 8) != 0) {
		u->flags |= U_MIXED;
	}
}

static void write_reply(struct writer *w, struct gslot *s, struct rg_reply *rep)
{
	struct run *r = w->r;
	uint32_t count = 0, committed = 0;
	uint8_t verf[8];
	int st = rn_dec_write_verf(&rep->r, &count, &committed, verf);

	if (st != 0 || count == 0 || count > s->len ||
	    (r->o->file_sync && committed != RN_FILE_SYNC)) {
		fail(r, NB_EXIT_SERVER, "WRITE of %u bytes at offset %" PRIu64 ": status %d, count "
		     "%u, committed %u", s->len, s->off, st, count, committed);
		return;
	}
	if (committed == RN_UNSTABLE)
		note_verf(r, s->off, verf);
	w->bytes += count;
	if (count < s->len) {
		w->short_ops++;
		if (nb_pieces_push(&w->todo, s->off + count, s->len - count) < 0)
			fail(r, NB_EXIT_SERVER, "out of memory");
	}
}

static void read_reply(struct writer *w, struct gslot *s, struct rg_reply *rep)
{
	struct run *r = w->r;
	const uint8_t *data = NULL;
	uint32_t count = 0;
	bool eof = false, zeros;
	int st = rn_dec_read(&rep->r, &data, &count, &eof);
	size_t i;

	if (st != 0 || count > s->len || (count == 0 && s->len > 0)) {
		fail(r, NB_EXIT_SERVER, "READ of %u bytes at offset %" PRIu64 ": status %d, count %u%s",
		     s->len, s->off, st, count, eof ? ", eof" : "");
		return;
	}
	nb_pattern_fill(r->o->seed, s->off, w->scratch, count);
	if (memcmp(data, w->scratch, count) != 0) {
		i = nb_first_diff(data, w->scratch, count, &zeros);
		fail(r, NB_EXIT_MISMATCH, "MISMATCH at offset %" PRIu64 " (record %" PRIu64 "): "
		     "expected 0x%02x, got 0x%02x%s", s->off + i, (s->off + i) / r->o->record,
		     w->scratch[i], data[i], zeros ? " (zeros follow: bytes never written?)" : "");
		return;
	}
	w->bytes += count;
	if (count < s->len) {
		w->short_ops++;
		if (nb_pieces_push(&w->todo, s->off + count, s->len - count) < 0)
			fail(r, NB_EXIT_SERVER, "out of memory");
	}
}

static void on_reply(struct gconn *c, struct gslot *s, struct rg_reply *rep, void *arg)
{
	struct writer *w = arg;

	(void)c;
	if (!rg_reply_good(rep)) {
		fail(w->r, NB_EXIT_SERVER, "%s at offset %" PRIu64 " (%s): %s",
		     s->kind == K_WRITE ? "WRITE" : "READ", s->off, service_names[c->service],
		     rg_describe(rep));
		return;
	}
	if (s->kind == K_WRITE)
		write_reply(w, s, rep);
	else
		read_reply(w, s, rep);
}

/* ---- the event loop: one per thread, over the writers t, t+T, ... ---- */

static bool serve(struct run *r, struct writer **ws, struct pollfd *pfd, unsigned n)
{
	bool busy = false;
	char err[256];

	for (unsigned i = 0; i < n; i++) {
		pfd[i].fd = ws[i]->c.fd;
		pfd[i].events = gc_events(&ws[i]->c);
		pfd[i].revents = 0;
	}
	if (poll(pfd, n, 100) < 0 && errno != EINTR) {
		fail(r, NB_EXIT_SERVER, "poll: %s", strerror(errno));
		return false;
	}
	for (unsigned i = 0; i < n && !failed(r); i++) {
		unsigned before = ws[i]->c.inflight;

		if (pfd[i].revents && gc_service(&ws[i]->c, on_reply, ws[i], err, sizeof(err)) < 0)
			fail(r, NB_EXIT_SERVER, "%s", err);
		busy = busy || ws[i]->c.inflight < before;
		pump(ws[i]);
	}
	return busy;
}

static void loop(struct run *r, unsigned t)
{
	unsigned n = 0, T = r->o->threads;
	struct writer **ws = calloc(r->o->writers, sizeof(*ws));
	struct pollfd *pfd = calloc(r->o->writers, sizeof(*pfd));
	long long last = nb_now_ms();

	if (ws == NULL || pfd == NULL) {
		fail(r, NB_EXIT_SERVER, "out of memory");
		goto out;
	}
	for (unsigned i = t; i < r->o->writers; i += T)
		ws[n++] = &r->w[i];
	for (unsigned i = 0; i < n; i++)
		pump(ws[i]);
	while (!failed(r)) {
		bool done = true;

		for (unsigned i = 0; i < n; i++)
			done = done && ws[i]->c.inflight == 0 && drained(ws[i]);
		if (done)
			break;
		if (serve(r, ws, pfd, n))
			last = nb_now_ms();
		else if (nb_now_ms() - last > NB_STALL_MS)
			fail(r, NB_EXIT_SERVER, "no reply for %d s", NB_STALL_MS / 1000);
	}
out:
	free(ws);
	free(pfd);
}

struct thread_arg {
	struct run *r;
	unsigned t;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;

	loop(a->r, a->t);
	return NULL;
}

/* Every writer's calls of the phase until none is left or one failed. */
int run_threads(struct run *r)
{
	unsigned T = r->o->threads;
	pthread_t *th = calloc(T, sizeof(*th));
	struct thread_arg *args = calloc(T, sizeof(*args));
	unsigned started = 0;

	if (th == NULL || args == NULL)
		fail(r, NB_EXIT_SERVER, "out of memory");
	for (unsigned t = 1; t < T && !failed(r); t++, started++) {
		args[t] = (struct thread_arg){ r, t };
		if (pthread_create(&th[t], NULL, thread_main, &args[t]) != 0) {
			fail(r, NB_EXIT_SERVER, "pthread_create failed");
			break;
		}
	}
	if (!failed(r))
		loop(r, 0);
	for (unsigned t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	free(th);
	free(args);
	return atomic_load(&r->failed);
}
