/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The grace period as a state machine: none without recorded hosts; during it new locks and
 * TESTs are denied and reclaims allowed; it ends at its time, or earlier once every recorded
 * host is done (its first ordinary request, SM_NOTIFY or FREE_ALL); unknown hosts change
 * nothing; once over it stays over. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "lock/grace.h"
#include "lock/lock_seam.h"

#define SEC 1000000000ull

static void test_no_hosts_no_grace(void **state)
{
	(void)state;
	struct grace g;
	assert_int_equal(grace_start(&g, 5 * SEC, 90 * SEC, NULL, 0), 0);
	assert_false(grace_active(&g, 5 * SEC));
	assert_int_equal(grace_check(&g, 5 * SEC, 1, false), GRACE_OK);
	assert_int_equal(grace_check(&g, 5 * SEC, 1, true), GRACE_DENY);   /* nothing to reclaim */
	assert_int_equal(grace_remaining_ns(&g, 5 * SEC), 0);
	assert_int_equal(grace_pending(&g), 0);
	grace_free(&g);
	/* hosts but no time: none either */
	const uint64_t h[] = {1};
	assert_int_equal(grace_start(&g, 5 * SEC, 0, h, 1), 0);
	assert_false(grace_active(&g, 5 * SEC));
	assert_int_equal(grace_check(&g, 5 * SEC, 1, false), GRACE_OK);
	grace_free(&g);
}

static void test_deny_new_allow_reclaim(void **state)
{
	(void)state;
	struct grace g;
	const uint64_t h[] = {10, 20};
	assert_int_equal(grace_start(&g, 0, 90 * SEC, h, 2), 0);
	assert_true(grace_active(&g, 1));
	assert_int_equal(grace_check(&g, 1, 10, true), GRACE_OK);
	assert_int_equal(grace_check(&g, 2, 20, true), GRACE_OK);
	/* a host that held nothing: denied, may reclaim (nothing to collide with) */
	assert_int_equal(grace_check(&g, 3, 30, false), GRACE_DENY);
	assert_int_equal(grace_check(&g, 3, 30, true), GRACE_OK);
	/* reclaims do not finish a host */
	assert_int_equal(grace_pending(&g), 2);
	assert_int_equal(grace_check(&g, 4, 10, false), GRACE_DENY);   /* 10 done, 20 not */
	assert_int_equal(grace_check(&g, 5, 10, false), GRACE_DENY);
	assert_int_equal(grace_pending(&g), 1);
	assert_true(grace_active(&g, 6));
	grace_free(&g);
}

static void test_ends_by_time(void **state)
{
	(void)state;
	struct grace g;
	const uint64_t h[] = {10};
	assert_int_equal(grace_start(&g, 1000, 500, h, 1), 0);
	assert_true(grace_active(&g, 1000));
	assert_int_equal(grace_remaining_ns(&g, 1200), 300);
	assert_int_equal(grace_check(&g, 1499, 11, false), GRACE_DENY);
	assert_int_equal(grace_remaining_ns(&g, 1499), 1);
	/* over at exactly its end: requests are ordinary, reclaims too late (as knfsd's) */
	assert_int_equal(grace_check(&g, 1500, 11, false), GRACE_OK);
	assert_int_equal(grace_check(&g, 1500, 10, true), GRACE_DENY);
	assert_false(grace_active(&g, 1500));
	assert_int_equal(grace_remaining_ns(&g, 1500), 0);
	/* for good: an earlier time does not bring it back */
	assert_false(grace_active(&g, 1200));
	assert_int_equal(grace_check(&g, 1200, 11, false), GRACE_OK);
	assert_int_equal(grace_pending(&g), 0);
	grace_free(&g);
}

static void test_ends_early(void **state)
{
	(void)state;
	struct grace g;
	const uint64_t h[] = {30, 10, 20};
	assert_int_equal(grace_start(&g, 0, 90 * SEC, h, 3), 0);
	assert_int_equal(grace_pending(&g), 3);
	assert_int_equal(grace_check(&g, 1, 10, false), GRACE_DENY);   /* 10: reclaims over */
	grace_host_done(&g, 20);                                        /* 20 rebooted too */
	grace_host_done(&g, 20);                                        /* counted once */
	assert_int_equal(grace_pending(&g), 1);
	assert_true(grace_active(&g, 2));
	assert_int_equal(grace_check(&g, 3, 30, true), GRACE_OK);
	assert_int_equal(grace_pending(&g), 1);
	/* the last one's first ordinary request ends it, and is itself granted */
	assert_int_equal(grace_check(&g, 4, 30, false), GRACE_OK);
	assert_false(grace_active(&g, 4));
	assert_int_equal(grace_remaining_ns(&g, 4), 0);
	assert_int_equal(grace_check(&g, 5, 99, false), GRACE_OK);
	grace_free(&g);

	/* all of them by grace_host_done */
	assert_int_equal(grace_start(&g, 0, 90 * SEC, h, 3), 0);
	grace_host_done(&g, 10);
	grace_host_done(&g, 30);
	assert_true(grace_active(&g, 1));
	grace_host_done(&g, 20);
	assert_false(grace_active(&g, 1));
	grace_free(&g);
}

static void test_unknown_hosts_do_not_end_it(void **state)
{
	(void)state;
	struct grace g;
	const uint64_t h[] = {10};
	assert_int_equal(grace_start(&g, 0, 90 * SEC, h, 1), 0);
	grace_host_done(&g, 11);
	grace_host_done(&g, 9);
	for (uint64_t host = 0; host < 100; host++)
		if (host != 10)
			assert_int_equal(grace_check(&g, host, host, false), GRACE_DENY);
	assert_int_equal(grace_pending(&g), 1);
	assert_true(grace_active(&g, 100));
	grace_host_done(&g, 10);
	assert_false(grace_active(&g, 100));
	grace_free(&g);
}

static void test_duplicates_and_many(void **state)
{
	(void)state;
	struct grace g;
	const uint64_t dup[] = {5, 7, 5, 5};
	assert_int_equal(grace_start(&g, 0, 90 * SEC, dup, 4), 0);
	assert_int_equal(grace_pending(&g), 2);
	grace_host_done(&g, 5);
	assert_true(grace_active(&g, 1));
	grace_host_done(&g, 7);
	assert_false(grace_active(&g, 1));
	grace_free(&g);

	/* many, out of order (found by binary search) */
	enum { N = 1000 };
	uint64_t *h = malloc(N * sizeof *h);
	assert_non_null(h);
	for (uint64_t i = 0; i < N; i++)
		h[i] = (i * 7919) % N * 1000003u;           /* a permutation, spread out */
	assert_int_equal(grace_start(&g, 0, 90 * SEC, h, N), 0);
	free(h);                                            /* copied */
	for (uint64_t i = 0; i + 1 < N; i++)
		assert_int_equal(grace_check(&g, 1, i * 1000003u, false), GRACE_DENY);
	assert_int_equal(grace_pending(&g), 1);
	assert_int_equal(grace_check(&g, 1, (N - 1) * 1000003u, false), GRACE_OK);
	assert_false(grace_active(&g, 1));
	grace_free(&g);
}

static void test_end_saturates(void **state)
{
	(void)state;
	struct grace g;
	const uint64_t h[] = {1};
	assert_int_equal(grace_start(&g, UINT64_MAX - 10, 100, h, 1), 0);
	assert_true(grace_active(&g, UINT64_MAX - 1));
	assert_int_equal(grace_remaining_ns(&g, UINT64_MAX - 1), 1);
	assert_false(grace_active(&g, UINT64_MAX));
	grace_free(&g);
}

static void *no_alloc(size_t n)
{
	(void)n;
	return NULL;
}

static void test_enomem(void **state)
{
	(void)state;
	struct grace g;
	const uint64_t h[] = {1, 2};
	grace_set_alloc(no_alloc);
	assert_int_equal(grace_start(&g, 0, 90 * SEC, h, 2), -ENOMEM);
	grace_set_alloc(NULL);
	assert_false(grace_active(&g, 0));
	assert_null(g.hosts);
	grace_free(&g);
	/* and it can be started again */
	assert_int_equal(grace_start(&g, 0, 90 * SEC, h, 2), 0);
	assert_true(grace_active(&g, 0));
	assert_int_equal(grace_check(&g, 0, 3, false), GRACE_DENY);
	grace_free(&g);
	assert_false(grace_active(&g, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_hosts_no_grace),
		cmocka_unit_test(test_deny_new_allow_reclaim),
		cmocka_unit_test(test_ends_by_time),
		cmocka_unit_test(test_ends_early),
		cmocka_unit_test(test_unknown_hosts_do_not_end_it),
		cmocka_unit_test(test_duplicates_and_many),
		cmocka_unit_test(test_end_saturates),
		cmocka_unit_test(test_enomem),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
