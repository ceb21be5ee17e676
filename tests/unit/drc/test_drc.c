/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The duplicate request cache on its own: a call is new once, running while it runs (a copy is
 * dropped), answered with its own bytes afterwards; each part of the key tells calls apart; a
 * call whose reply was not kept runs again; the bounds on entries and bytes hold, oldest
 * answered entries going first, running ones never. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/drc.h"

static struct sockaddr_storage peer(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *a = (struct sockaddr_in *)&ss;
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	inet_pton(AF_INET, addr, &a->sin_addr);
	return ss;
}

static const uint8_t args[] = "arguments of a REMOVE";

static struct drc_key key(uint32_t xid, const struct sockaddr_storage *p)
{
	return (struct drc_key){.xid = xid, .prog = 100003, .vers = 3, .proc = 12, .peer = p,
				.args = args, .args_len = sizeof args};
}

static enum drc_verdict look(struct drc *d, const struct drc_key *k, struct drc_entry **e,
			     uint8_t **bytes, size_t *n)
{
	*bytes = NULL;
	return drc_lookup(d, k, e, bytes, n);
}

static void test_new_running_answered(void **state)
{
	(void)state;
	struct drc *d;
	struct drc_entry *e, *e2;
	uint8_t *bytes;
	size_t n;
	struct sockaddr_storage p = peer("10.0.0.1", 800);
	struct drc_key k = key(1, &p);
	assert_int_equal(drc_create(64, 1 << 20, &d), 0);
	assert_int_equal(look(d, &k, &e, &bytes, &n), DRC_MISS);
	assert_non_null(e);
	assert_int_equal(look(d, &k, &e2, &bytes, &n), DRC_INPROG);
	drc_done(d, e, (const uint8_t *)"reply!", 6);
	assert_int_equal(look(d, &k, &e2, &bytes, &n), DRC_HIT);
	assert_int_equal(n, 6);
	assert_memory_equal(bytes, "reply!", 6);
	free(bytes);
	struct drc_stats st;
	drc_get_stats(d, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.inprog_drops, 1);
	assert_int_equal(st.entries, 1);
	drc_destroy(d);
}

static void test_key_parts_differ(void **state)
{
	(void)state;
	struct drc *d;
	struct drc_entry *e;
	uint8_t *bytes;
	size_t n;
	struct sockaddr_storage p = peer("10.0.0.1", 800), port2 = peer("10.0.0.1", 801),
				addr2 = peer("10.0.0.2", 800);
	struct drc_key k = key(7, &p);
	assert_int_equal(drc_create(64, 1 << 20, &d), 0);
	assert_int_equal(look(d, &k, &e, &bytes, &n), DRC_MISS);
	drc_done(d, e, (const uint8_t *)"r", 1);
	struct drc_key other[6] = {key(8, &p), key(7, &port2), key(7, &addr2), k, k, k};
	other[3].proc = 13;
	other[4].args_len = sizeof args - 1;
	static const uint8_t args2[] = "arguments of a RENAME";
	other[5].args = args2;
	for (int i = 0; i < 6; i++) {
		assert_int_equal(look(d, &other[i], &e, &bytes, &n), DRC_MISS);
		drc_done(d, e, NULL, 0);
	}
	assert_int_equal(look(d, &k, &e, &bytes, &n), DRC_HIT);
	free(bytes);
	drc_destroy(d);
}

/* No reply kept (none was sent): a retransmission must run the call. */
static void test_forgotten_call_runs_again(void **state)
{
	(void)state;
	struct drc *d;
	struct drc_entry *e;
	uint8_t *bytes;
	size_t n;
	struct sockaddr_storage p = peer("10.0.0.1", 800);
	struct drc_key k = key(9, &p);
	assert_int_equal(drc_create(64, 1 << 20, &d), 0);
	assert_int_equal(look(d, &k, &e, &bytes, &n), DRC_MISS);
	drc_done(d, e, NULL, 0);
	assert_int_equal(look(d, &k, &e, &bytes, &n), DRC_MISS);
	drc_done(d, e, NULL, 0);
	drc_destroy(d);
}

/* Far more calls than the bounds: entries and bytes stay within them (per shard: the bound
 * over 16), the newest answers are still there, and a running call is never pushed out. */
static void test_bounds_hold(void **state)
{
	(void)state;
	struct drc *d;
	struct drc_entry *e, *running;
	uint8_t *bytes, reply[200] = {0};
	size_t n;
	struct sockaddr_storage p = peer("10.0.0.1", 800);
	struct drc_key r = key(0xffff, &p);
	assert_int_equal(drc_create(256, 64 << 10, &d), 0);
	assert_int_equal(look(d, &r, &running, &bytes, &n), DRC_MISS);
	for (uint32_t x = 0; x < 20000; x++) {
		struct drc_key k = key(x, &p);
		assert_int_equal(look(d, &k, &e, &bytes, &n), DRC_MISS);
		drc_done(d, e, reply, sizeof reply);
	}
	struct drc_stats st;
	drc_get_stats(d, &st);
	assert_true(st.entries <= 256 + 1);
	assert_true(st.bytes <= (64 << 10) + 1024);
	struct drc_key newest = key(19999, &p);
	assert_int_equal(look(d, &newest, &e, &bytes, &n), DRC_HIT);
	free(bytes);
	struct drc_key oldest = key(0, &p);
	assert_int_equal(look(d, &oldest, &e, &bytes, &n), DRC_MISS);
	drc_done(d, e, NULL, 0);
	assert_int_equal(look(d, &r, &e, &bytes, &n), DRC_INPROG);
	drc_done(d, running, reply, 10);
	assert_int_equal(look(d, &r, &e, &bytes, &n), DRC_HIT);
	free(bytes);
	drc_destroy(d);
}

/* Calls still running do not push answered replies out: with a cache of 16 entries (one per
 * shard), 64 calls in flight leave the one answered reply where it is. */
static void test_running_calls_do_not_evict(void **state)
{
	(void)state;
	struct drc *d;
	struct drc_entry *e, *running[64];
	uint8_t *bytes;
	size_t n;
	struct sockaddr_storage p = peer("10.0.0.3", 900);
	struct drc_key k = key(5, &p);
	assert_int_equal(drc_create(16, 1 << 20, &d), 0);
	assert_int_equal(look(d, &k, &e, &bytes, &n), DRC_MISS);
	drc_done(d, e, (const uint8_t *)"kept", 4);
	for (uint32_t x = 0; x < 64; x++) {
		struct drc_key r = key(1000 + x, &p);
		assert_int_equal(look(d, &r, &running[x], &bytes, &n), DRC_MISS);
	}
	assert_int_equal(look(d, &k, &e, &bytes, &n), DRC_HIT);
	free(bytes);
	for (int x = 0; x < 64; x++)
		drc_done(d, running[x], NULL, 0);
	drc_destroy(d);
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_running_answered),
		cmocka_unit_test(test_key_parts_differ),
		cmocka_unit_test(test_forgotten_call_runs_again),
		cmocka_unit_test(test_bounds_hold),
		cmocka_unit_test(test_running_calls_do_not_evict),
	};
	return cmocka_run_group_tests_name("drc", tests, NULL, NULL);
}
