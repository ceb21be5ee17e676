/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A ring's table of its clients' latest calls (svc/seen.h): one entry per address (an
 * IPv4-mapped one is its IPv4 client), the latest time kept, at most SEEN_SLOTS entries however
 * many addresses call (the rest counted as dropped), and a reader on another thread never sees
 * one address with another's time while the ring rewrites slots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "svc/seen.h"

static struct sockaddr_storage v4(uint32_t host_order)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(host_order);
	return ss;
}

static struct sockaddr_storage v4_mapped(uint32_t host_order)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	in6->sin6_family = AF_INET6;
	in6->sin6_addr.s6_addr[10] = in6->sin6_addr.s6_addr[11] = 0xff;
	uint32_t a = htonl(host_order);
	memcpy(&in6->sin6_addr.s6_addr[12], &a, 4);
	return ss;
}

struct found {
	size_t n;
	uint32_t addr;                /* the last one walked (IPv4, host order) */
	uint64_t last;
	bool torn;                    /* a time that is not its address's (the threaded test) */
};

static void collect(void *ctx, const struct sockaddr_storage *ss, uint64_t last)
{
	struct found *f = ctx;
	assert_int_equal(ss->ss_family, AF_INET);
	f->n++;
	f->addr = ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr);
	f->last = last;
	if (last >> 32 != f->addr)
		f->torn = true;
}

/* One address, by IPv4 and by its mapped form: one entry with the latest time. */
static void test_one_entry(void **state)
{
	(void)state;
	struct seen_table *t = seen_new();
	assert_non_null(t);
	struct sockaddr_storage a = v4(0x7f000001), m = v4_mapped(0x7f000001);
	seen_note(t, &a, 100);
	seen_note(t, &m, 200);
	seen_note(t, &a, 300);
	struct found f = {0};
	seen_walk(t, collect, &f);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.addr, 0x7f000001);
	assert_int_equal(f.last, 300);
	assert_int_equal(atomic_load(&t->dropped), 0);
	seen_free(t);
}

/* 100000 addresses: the table holds at most SEEN_SLOTS, counts the rest as dropped, and the
 * latest caller is in it. */
static void test_bound(void **state)
{
	(void)state;
	struct seen_table *t = seen_new();
	assert_non_null(t);
	const uint32_t n = 100000;
	for (uint32_t i = 0; i < n; i++) {
		struct sockaddr_storage a = v4(0x0a000000 + i);
		seen_note(t, &a, (uint64_t)(i + 1));
	}
	struct found f = {0};
	seen_walk(t, collect, &f);
	assert_true(f.n <= SEEN_SLOTS);
	assert_true(f.n > SEEN_SLOTS / 2);      /* the probe sets fill most of the table */
	assert_int_equal(atomic_load(&t->dropped), n - f.n);
	struct sockaddr_storage last = v4(0x0a000000 + n - 1);
	seen_note(t, &last, n);                 /* already there: no drop */
	assert_int_equal(atomic_load(&t->dropped), n - f.n);
	seen_free(t);
}

struct race {
	struct seen_table *t;
	atomic_bool stop;
	atomic_uint rounds;           /* the writer's thousands of notes so far */
};

/* The ring: addresses come and go (more of them than slots), each noted at a time whose high
 * half is the address itself, so a reader can tell a torn copy. */
static void *writer(void *arg)
{
	struct race *r = arg;
	for (uint64_t k = 0; !atomic_load(&r->stop); k++) {
		uint32_t addr = 0x0a000000u + (uint32_t)(k * 7919 % 50000);
		struct sockaddr_storage a = v4(addr);
		seen_note(r->t, &a, (uint64_t)addr << 32 | (k & 0xffffffffu));
		if (k % 1000 == 999)
			atomic_fetch_add(&r->rounds, 1);
	}
	return NULL;
}

static void test_reader_beside_writer(void **state)
{
	(void)state;
	struct race r = {.t = seen_new()};
	assert_non_null(r.t);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, writer, &r), 0);
	struct found f = {0};
	while (atomic_load(&r.rounds) == 0)     /* the thread may start late on a busy machine */
		sched_yield();
	for (int i = 0; i < 200 && !f.torn; i++)
		seen_walk(r.t, collect, &f);
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	assert_false(f.torn);
	assert_true(f.n > 0);
	seen_free(r.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_entry),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_reader_beside_writer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
