/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Record fragments (RFC 5531 record marking) are reassembled in linear time: a 512 KiB WRITE sent
 * as 1-byte fragments (2.6 MB of stream) costs the daemon little CPU, not seconds (before, the
 * record was grown and copied at every fragment: quadratic), and its bytes land as sent. A client
 * sending its records so does not hold up another's calls: NULL calls on another connection are
 * answered while two of them stream and their records are put together. */
#include "client.h"
#include "rawbig.h"
#include "rawnfs.h"

#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIB 1024u
#define LEN (1024 * KIB)
#define CPU_MAX_S 2           /* the bug: 8 s and more */

static struct rn_fh root;

static uint8_t byte_at(uint32_t i)
{
	return (uint8_t)(i * 2654435761u >> 11);
}

/* A WRITE of LEN bytes at 0 as one fragment per byte: the stream, malloc'd; *n its length. */
static uint8_t *fragmented_write(uint32_t xid, const struct rn_fh *fh, size_t *n)
{
	uint8_t args[512];
	size_t alen = rb_write_args(args, sizeof args, xid, fh, 0, LEN);
	assert_true(alen > 0);
	size_t total = alen + LEN;
	uint8_t *s = malloc(total * 5);
	assert_non_null(s);
	for (size_t i = 0; i < total; i++) {
		uint32_t mark = htonl((i + 1 == total ? 0x80000000u : 0) | 1u);
		memcpy(s + 5 * i, &mark, 4);
		s[5 * i + 4] = i < alen ? args[i] : byte_at((uint32_t)(i - alen));
	}
	*n = total * 5;
	return s;
}

static void expect_write_reply(int fd, uint32_t xid)
{
	static uint8_t buf[4096];
	struct raw_reply r;
	uint32_t count, committed;
	ssize_t n = raw_recv_record(fd, buf, sizeof buf, 60000);
	assert_true(n > 0);
	assert_int_equal(raw_parse_reply(buf, (size_t)n, &r), 0);
	assert_int_equal(r.xid, xid);
	assert_int_equal(rn_dec_write(&r, &count, &committed), 0);
	assert_int_equal(count, LEN);
}

static void test_one_byte_fragments_linear(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh fh;
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_create(fd, &root, "fragments", &fh), 0);
	size_t n;
	uint8_t *s = fragmented_write(0x46000001u, &fh, &n);
	long c0 = rb_cpu_ticks(t->pid);
	assert_int_equal(raw_send_all(fd, s, n), 0);
	expect_write_reply(fd, 0x46000001u);
	long c1 = rb_cpu_ticks(t->pid);
	long hz = sysconf(_SC_CLK_TCK);
	print_message("daemon CPU for a %u KiB WRITE in 1-byte fragments: %ld ticks of %ld\n",
		      LEN / KIB, c1 - c0, hz);
	assert_true(c1 - c0 < CPU_MAX_S * hz);
	static uint8_t back[LEN];
	assert_int_equal(rn_read(fd, &fh, 0, back, LEN), 0);
	for (uint32_t i = 0; i < LEN; i++)
		if (back[i] != byte_at(i))
			fail_msg("byte %u differs", i);
	free(s);
	close(fd);
}

/* Two clients stream fragmented WRITEs (from a thread); a third's NULL calls are answered
 * meanwhile, each within half a second: a few milliseconds now; before, a ring spent a second in
 * one receive's fragments, copying the record once per fragment. */
struct streamer {
	int fd[2];
	const uint8_t *s[2];
	size_t n;
	int rc;
};

static void *stream_both(void *arg)
{
	struct streamer *st = arg;
	size_t off[2] = {0, 0};
	long long deadline = rb_now_ms() + 120000;
	while ((off[0] < st->n || off[1] < st->n) && rb_now_ms() < deadline)
		for (int k = 0; k < 2; k++) {
			size_t chunk = st->n - off[k] < 65536 ? st->n - off[k] : 65536;
			if (chunk && rb_send_by(st->fd[k], st->s[k] + off[k], chunk, deadline) < 0)
				st->rc = -1;
			off[k] += chunk;
		}
	return NULL;
}

static void test_fragmenting_clients_do_not_hold_others(void **state)
{
	struct itest *t = *state;
	int a = raw_connect(t->port, NULL), b = raw_connect(t->port, NULL);
	int c = raw_connect(t->port, NULL);
	struct rn_fh fh;
	assert_true(a >= 0 && b >= 0 && c >= 0);
	assert_int_equal(rn_lookup(a, &root, "fragments", &fh), 0);
	size_t n;
	uint8_t *s = fragmented_write(0x46000002u, &fh, &n);
	uint8_t *s2 = fragmented_write(0x46000003u, &fh, &n);
	struct streamer st = {{a, b}, {s, s2}, n, 0};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, stream_both, &st), 0);
	long long worst = 0;
	int calls = 0;
	bool sent = false;
	for (struct pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}}; !sent || poll(p, 2, 0) < 2;
	     calls++) {
		struct xb x = {0}, cred = {0};
		struct raw_reply r;
		static uint8_t buf[4096];
		xb_auth_sys(&cred, 0, 0);
		xb_call(&x, 0x46100000u + (uint32_t)calls, 2, 100003, 3, 0, RAW_AUTH_SYS, &cred);
		long long t0 = rb_now_ms();
		assert_int_equal(raw_call(c, &x, buf, sizeof buf, &r), 0);
		long long dt = rb_now_ms() - t0;
		worst = dt > worst ? dt : worst;
		sent = sent || pthread_tryjoin_np(th, NULL) == 0;
		it_sleep_ms(10);
		assert_true(calls < 10000);
	}
	assert_int_equal(st.rc, 0);
	expect_write_reply(a, 0x46000002u);
	expect_write_reply(b, 0x46000003u);
	print_message("slowest of %d NULL calls beside two fragmenting clients: %lld ms\n", calls,
		      worst);
	assert_true(worst < 500);
	free(s);
	free(s2);
	close(a);
	close(b);
	close(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_byte_fragments_linear),
		cmocka_unit_test(test_fragmenting_clients_do_not_hold_others),
	};
	return IT_MAIN("fragment reassembly", tests);
}
