/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One file's lock list: conflicts between owners (never within one), fcntl's replace / split /
 * merge rules for an owner's own locks, ranges up to UINT64_MAX, removal by owner and host,
 * the record counts, and allocation failures that leave the list as it was. Every check walks
 * the whole list and compares it with what it must be; a model over 64 offsets (at the bottom
 * and at the top of the 64-bit space) checks random sequences against the same rules. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/lk_table.h"
#include "lock/lock_seam.h"

#define MAX UINT64_MAX
#define HALF (UINT64_C(1) << 63)

static const struct lk_owner A = {1, 1}, B = {1, 2}, C = {2, 1};

struct want {
	struct lk_owner o;
	uint64_t start, end;
	bool excl;
};

static void check(const struct lk_file *f, const struct want *w, size_t n)
{
	size_t i = 0;
	LK_FOREACH(l, f) {
		assert_true(i < n);
		assert_int_equal(l->owner.host, w[i].o.host);
		assert_int_equal(l->owner.svid, w[i].o.svid);
		assert_true(l->start == w[i].start);
		assert_true(l->end == w[i].end);
		assert_int_equal(l->excl, w[i].excl);
		i++;
	}
	assert_int_equal(i, n);
	assert_int_equal(f->count, n);
}

#define CHECK(f, ...)                                                                   \
	do {                                                                            \
		const struct want w_[] = {__VA_ARGS__};                                 \
		check((f), w_, sizeof w_ / sizeof w_[0]);                               \
	} while (0)
#define CHECK_EMPTY(f) check((f), NULL, 0)

/* Lock with an oh naming the owner, asserting success; the net change of the count. */
static int add(struct lk_file *f, struct lk_owner o, uint64_t s, uint64_t e, bool excl)
{
	char oh[32];
	int n = snprintf(oh, sizeof oh, "oh %llu/%d", (unsigned long long)o.host, (int)o.svid);
	int delta = 99;
	assert_int_equal(lk_add(f, o, oh, (uint32_t)n, s, e, excl, &delta), 0);
	return delta;
}

static void test_range_span(void **state)
{
	(void)state;
	uint64_t s, e, off, len;
	assert_true(lk_range(10, 5, &s, &e));
	assert_true(s == 10 && e == 14);
	assert_true(lk_range(7, 0, &s, &e));
	assert_true(s == 7 && e == MAX);
	assert_true(lk_range(MAX, 1, &s, &e));
	assert_true(s == MAX && e == MAX);
	assert_true(lk_range(HALF, HALF, &s, &e));          /* ends exactly at MAX */
	assert_true(s == HALF && e == MAX);
	assert_true(lk_range(1, MAX, &s, &e));
	assert_true(e == MAX);
	assert_false(lk_range(MAX, 2, &s, &e));             /* overflows: clamped */
	assert_true(s == MAX && e == MAX);
	assert_false(lk_range(HALF + 1, HALF, &s, &e));
	assert_true(s == HALF + 1 && e == MAX);
	assert_false(lk_range(MAX - 5, MAX, &s, &e));
	assert_true(e == MAX);

	lk_span(10, 14, &off, &len);
	assert_true(off == 10 && len == 5);
	lk_span(HALF + 3, MAX, &off, &len);
	assert_true(off == HALF + 3 && len == 0);
	lk_span(0, MAX - 1, &off, &len);
	assert_true(off == 0 && len == MAX);
	lk_span(MAX - 1, MAX - 1, &off, &len);
	assert_true(off == MAX - 1 && len == 1);
}

static void test_conflicts(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	add(&f, A, 0, 99, false);
	add(&f, C, 200, 299, true);
	/* shared / shared: never, whoever asks */
	assert_null(lk_conflict(&f, B, 50, 60, false));
	assert_null(lk_conflict(&f, C, 0, 99, false));
	/* exclusive against shared: another process of the same host, another host */
	const struct lk_lock *l = lk_conflict(&f, B, 50, 60, true);
	assert_non_null(l);
	assert_true(lk_owner_eq(l->owner, A) && l->start == 0 && l->end == 99);
	assert_non_null(lk_conflict(&f, C, 99, 99, true));
	assert_null(lk_conflict(&f, C, 100, 100, true));    /* edge: just past */
	/* shared and exclusive against exclusive */
	l = lk_conflict(&f, A, 250, 250, false);
	assert_non_null(l);
	assert_true(lk_owner_eq(l->owner, C));
	assert_non_null(lk_conflict(&f, B, 150, 200, true));
	assert_null(lk_conflict(&f, B, 300, MAX, true));
	/* the same owner never conflicts with itself */
	assert_null(lk_conflict(&f, A, 0, 99, true));
	assert_null(lk_conflict(&f, C, 200, 299, false));
	/* the first in order of start */
	l = lk_conflict(&f, B, 0, MAX, true);
	assert_true(lk_owner_eq(l->owner, A));
	lk_file_clear(&f);
	CHECK_EMPTY(&f);
}

static void test_unlock_middle(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	add(&f, A, 0, 99, true);
	add(&f, B, 40, 59, true);     /* another owner's lock in the hole: untouched */
	assert_int_equal(lk_remove(&f, A, 40, 59), 0);
	CHECK(&f, {A, 0, 39, true}, {B, 40, 59, true}, {A, 60, 99, true});
	/* what A does not hold: nothing happens */
	assert_int_equal(lk_remove(&f, A, 40, 59), 0);
	assert_int_equal(lk_remove(&f, C, 0, MAX), 0);
	CHECK(&f, {A, 0, 39, true}, {B, 40, 59, true}, {A, 60, 99, true});
	/* trimming both ends, across the hole */
	assert_int_equal(lk_remove(&f, A, 30, 69), 0);
	CHECK(&f, {A, 0, 29, true}, {B, 40, 59, true}, {A, 70, 99, true});
	assert_int_equal(lk_remove(&f, A, 0, MAX), 0);
	CHECK(&f, {B, 40, 59, true});
	assert_int_equal(lk_remove(&f, A, 5, 4), -EINVAL);
	lk_file_clear(&f);
}

static void test_trim_keeps_order(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	add(&f, A, 0, 99, false);
	add(&f, B, 10, 20, false);
	add(&f, C, 30, 40, false);
	/* A's lock now starts at 50: after B's and C's */
	assert_int_equal(lk_remove(&f, A, 0, 49), 0);
	CHECK(&f, {B, 10, 20, false}, {C, 30, 40, false}, {A, 50, 99, false});
	/* the same through an upgrade of its head */
	add(&f, B, 0, 60, false);
	add(&f, B, 0, 35, true);
	CHECK(&f, {B, 0, 35, true}, {C, 30, 40, false}, {B, 36, 60, false}, {A, 50, 99, false});
	lk_file_clear(&f);
}

static void test_upgrade_downgrade_middle(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	assert_int_equal(add(&f, A, 0, 99, false), 1);
	assert_int_equal(add(&f, A, 40, 59, true), 2);
	CHECK(&f, {A, 0, 39, false}, {A, 40, 59, true}, {A, 60, 99, false});
	/* downgrade: the three are one shared lock again */
	assert_int_equal(add(&f, A, 40, 59, false), -2);
	CHECK(&f, {A, 0, 99, false});
	/* and the other way round */
	lk_file_clear(&f);
	add(&f, A, 0, 99, true);
	assert_int_equal(add(&f, A, 10, 19, false), 2);
	CHECK(&f, {A, 0, 9, true}, {A, 10, 19, false}, {A, 20, 99, true});
	lk_file_clear(&f);
}

static void test_upgrade_across(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	add(&f, A, 0, 49, false);
	add(&f, A, 60, 99, false);
	/* the head of one, the gap, the tail of the other */
	assert_int_equal(add(&f, A, 40, 69, true), 1);
	CHECK(&f, {A, 0, 39, false}, {A, 40, 69, true}, {A, 70, 99, false});
	/* one exclusive over everything replaces them all */
	assert_int_equal(add(&f, A, 0, 99, true), -2);
	CHECK(&f, {A, 0, 99, true});
	lk_file_clear(&f);
	/* a lock that replaces some and merges with others */
	add(&f, A, 0, 9, false);
	add(&f, A, 20, 29, true);
	add(&f, A, 40, 49, false);
	assert_int_equal(add(&f, A, 10, 39, false), -2);
	CHECK(&f, {A, 0, 49, false});
	lk_file_clear(&f);
}

static void test_merge_overlap(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	add(&f, A, 0, 9, true);
	add(&f, A, 20, 29, true);
	assert_int_equal(add(&f, A, 5, 24, true), -1);
	CHECK(&f, {A, 0, 29, true});
	/* inside what is held: no change */
	assert_int_equal(add(&f, A, 3, 7, true), 0);
	CHECK(&f, {A, 0, 29, true});
	lk_file_clear(&f);
}

static void test_merge_adjacent(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	add(&f, A, 0, 9, false);
	assert_int_equal(add(&f, A, 10, 19, false), 0);
	CHECK(&f, {A, 0, 19, false});
	add(&f, A, 30, 39, false);
	CHECK(&f, {A, 0, 19, false}, {A, 30, 39, false});
	assert_int_equal(add(&f, A, 20, 29, false), -1);  /* touches both */
	CHECK(&f, {A, 0, 39, false});
	/* the other type touches but does not merge */
	assert_int_equal(add(&f, A, 40, 49, true), 1);
	CHECK(&f, {A, 0, 39, false}, {A, 40, 49, true});
	/* one apart does not touch */
	assert_int_equal(add(&f, A, 51, 60, true), 1);
	CHECK(&f, {A, 0, 39, false}, {A, 40, 49, true}, {A, 51, 60, true});
	lk_file_clear(&f);
}

static void test_other_owner_not_merged(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	add(&f, A, 0, 9, false);
	assert_int_equal(add(&f, B, 10, 19, false), 1);  /* same host, other svid */
	assert_int_equal(add(&f, C, 20, 29, false), 1);  /* same svid, other host */
	CHECK(&f, {A, 0, 9, false}, {B, 10, 19, false}, {C, 20, 29, false});
	/* overlapping shared locks of two owners stay two; B's own merge */
	assert_int_equal(add(&f, B, 5, 15, false), 0);
	CHECK(&f, {A, 0, 9, false}, {B, 5, 19, false}, {C, 20, 29, false});
	/* B unlocking does not touch A's part of the overlap */
	assert_int_equal(lk_remove(&f, B, 0, 29), 0);
	CHECK(&f, {A, 0, 9, false}, {C, 20, 29, false});
	lk_file_clear(&f);
}

static void test_64bit_ends(void **state)
{
	(void)state;
	struct lk_file f;
	uint64_t s, e;
	lk_file_init(&f);
	/* len 0 from above 2^63 */
	assert_true(lk_range(HALF + 100, 0, &s, &e));
	add(&f, A, s, e, true);
	CHECK(&f, {A, HALF + 100, MAX, true});
	assert_non_null(lk_conflict(&f, B, MAX, MAX, false));
	assert_null(lk_conflict(&f, B, HALF, HALF + 99, true));
	/* unlock in the middle, far up */
	assert_int_equal(lk_remove(&f, A, HALF + 110, HALF + 119), 0);
	CHECK(&f, {A, HALF + 100, HALF + 109, true}, {A, HALF + 120, MAX, true});
	/* the last byte alone */
	assert_int_equal(lk_remove(&f, A, MAX, MAX), 0);
	CHECK(&f, {A, HALF + 100, HALF + 109, true}, {A, HALF + 120, MAX - 1, true});
	/* adjacency up to MAX: merges */
	add(&f, A, MAX, MAX, true);
	CHECK(&f, {A, HALF + 100, HALF + 109, true}, {A, HALF + 120, MAX, true});
	/* [MAX, MAX] and [0, 0] do not touch: MAX + 1 must not wrap to 0 */
	add(&f, A, 0, 0, true);
	CHECK(&f, {A, 0, 0, true}, {A, HALF + 100, HALF + 109, true}, {A, HALF + 120, MAX, true});
	/* nor the other way round: a new lock up to MAX against one at 0 */
	add(&f, C, 0, 5, false);
	add(&f, C, HALF, MAX, false);
	assert_int_equal(lk_remove_owner(&f, C), 2);
	/* an overflowing (offset, len) covers up to MAX */
	assert_false(lk_range(HALF + 105, MAX, &s, &e));
	assert_int_equal(lk_remove(&f, A, s, e), 0);
	CHECK(&f, {A, 0, 0, true}, {A, HALF + 100, HALF + 104, true});
	/* the whole space, then a split of it */
	add(&f, B, 0, MAX, false);
	assert_int_equal(add(&f, B, HALF, HALF, true), 2);
	CHECK(&f, {A, 0, 0, true}, {B, 0, HALF - 1, false}, {B, HALF, HALF, true},
	      {B, HALF + 1, MAX, false}, {A, HALF + 100, HALF + 104, true});
	lk_file_clear(&f);
}

static void test_remove_owner_host(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	add(&f, A, 0, 9, false);
	add(&f, A, 20, 29, true);
	add(&f, B, 0, 9, false);
	add(&f, C, 40, 49, true);
	add(&f, C, 60, 69, false);
	assert_int_equal(lk_host_count(&f, 1), 3);
	assert_int_equal(lk_host_count(&f, 2), 2);
	assert_int_equal(lk_host_count(&f, 3), 0);
	assert_true(lk_owner_holds(&f, A) && lk_owner_holds(&f, B) && lk_owner_holds(&f, C));
	assert_false(lk_owner_holds(&f, ((struct lk_owner){2, 2})));

	assert_int_equal(lk_remove_owner(&f, A), 2);
	assert_false(lk_owner_holds(&f, A));
	CHECK(&f, {B, 0, 9, false}, {C, 40, 49, true}, {C, 60, 69, false});
	assert_int_equal(lk_remove_owner(&f, A), 0);
	assert_int_equal(lk_remove_host(&f, 2), 2);
	CHECK(&f, {B, 0, 9, false});
	assert_int_equal(lk_remove_host(&f, 2), 0);
	assert_int_equal(lk_remove_host(&f, 1), 1);
	CHECK_EMPTY(&f);
	lk_file_clear(&f);
}

/* The sum of the deltas is the count, and the count is the list's length (check). */
static void test_counts(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	long total = 0;
	total += add(&f, A, 0, 99, false);
	total += add(&f, A, 10, 19, true);
	total += add(&f, A, 30, 39, true);
	total += add(&f, B, 0, 9, false);
	total += add(&f, A, 15, 35, true);
	assert_int_equal(total, (long)f.count);
	CHECK(&f, {A, 0, 9, false}, {B, 0, 9, false}, {A, 10, 39, true}, {A, 40, 99, false});
	total += add(&f, A, 0, 99, false);
	assert_int_equal(total, (long)f.count);
	CHECK(&f, {B, 0, 9, false}, {A, 0, 99, false});    /* equal starts: the newer after */
	lk_file_clear(&f);
}

static void test_oh(void **state)
{
	(void)state;
	struct lk_file f;
	uint8_t big[LK_OH_MAX + 1];
	char oh[] = "first";
	lk_file_init(&f);
	memset(big, 7, sizeof big);
	assert_int_equal(lk_add(&f, A, oh, 5, 0, 9, false, NULL), 0);
	oh[0] = 'X';                       /* copied: the lock keeps its own */
	assert_int_equal(f.head->oh_len, 5);
	assert_memory_equal(f.head->oh, "first", 5);
	/* the newest oh wins in a merge */
	assert_int_equal(lk_add(&f, A, "second!", 7, 10, 19, false, NULL), 0);
	CHECK(&f, {A, 0, 19, false});
	assert_int_equal(f.head->oh_len, 7);
	assert_memory_equal(f.head->oh, "second!", 7);
	/* also when the new range is inside the old one */
	assert_int_equal(lk_add(&f, A, "3", 1, 5, 6, false, NULL), 0);
	CHECK(&f, {A, 0, 19, false});
	assert_memory_equal(f.head->oh, "3", 1);
	/* empty, and the largest */
	assert_int_equal(lk_add(&f, B, NULL, 0, 30, 39, true, NULL), 0);
	assert_int_equal(lk_add(&f, C, big, LK_OH_MAX, 40, 49, true, NULL), 0);
	CHECK(&f, {A, 0, 19, false}, {B, 30, 39, true}, {C, 40, 49, true});
	const struct lk_lock *l = lk_conflict(&f, A, 45, 45, false);
	assert_int_equal(l->oh_len, LK_OH_MAX);
	assert_memory_equal(l->oh, big, LK_OH_MAX);
	assert_int_equal(lk_conflict(&f, A, 35, 35, false)->oh_len, 0);
	/* refused */
	int delta = 5;
	assert_int_equal(lk_add(&f, C, big, LK_OH_MAX + 1, 60, 69, true, &delta), -EINVAL);
	assert_int_equal(delta, 0);
	assert_int_equal(lk_add(&f, C, big, 1, 69, 60, true, NULL), -EINVAL);
	assert_int_equal(lk_add(&f, C, NULL, 1, 60, 69, true, NULL), -EINVAL);
	CHECK(&f, {A, 0, 19, false}, {B, 30, 39, true}, {C, 40, 49, true});
	lk_file_clear(&f);
}

/* The allocator of the lock table: malloc, until the countdown reaches zero. */
static int allocs_left = -1;
static int allocs_made;

static void *countdown_alloc(size_t n)
{
	if (allocs_left == 0)
		return NULL;
	if (allocs_left > 0)
		allocs_left--;
	allocs_made++;
	return malloc(n);
}

static void fail_after(int n)
{
	allocs_left = n;
	allocs_made = 0;
	lk_table_set_alloc(countdown_alloc);
}

static void alloc_ok(void)
{
	lk_table_set_alloc(NULL);
}

/* A full copy of the list, oh included, to compare after a failed operation. */
struct snap {
	size_t n;
	struct want w[16];
	uint32_t oh_len[16];
	uint8_t oh[16][32];
};

static void take(const struct lk_file *f, struct snap *s)
{
	s->n = 0;
	LK_FOREACH(l, f) {
		assert_true(s->n < 16 && l->oh_len <= 32);
		s->w[s->n] = (struct want){l->owner, l->start, l->end, l->excl};
		s->oh_len[s->n] = l->oh_len;
		memcpy(s->oh[s->n], l->oh, l->oh_len);
		s->n++;
	}
}

static void same(const struct lk_file *f, const struct snap *s)
{
	check(f, s->w, s->n);
	size_t i = 0;
	LK_FOREACH(l, f) {
		assert_int_equal(l->oh_len, s->oh_len[i]);
		assert_memory_equal(l->oh, s->oh[i], l->oh_len);
		i++;
	}
}

/* Fail each allocation of the operation in turn: -ENOMEM and the list as it was each time;
 * then it succeeds, having made exactly `needed` allocations. */
static void fail_each(struct lk_file *f, int needed, int (*op)(struct lk_file *f))
{
	struct snap before;
	take(f, &before);
	for (int i = 0; i < needed; i++) {
		fail_after(i);
		assert_int_equal(op(f), -ENOMEM);
		alloc_ok();
		same(f, &before);
	}
	fail_after(-1);
	assert_int_equal(op(f), 0);
	assert_int_equal(allocs_made, needed);
	alloc_ok();
}

static int op_new(struct lk_file *f)
{
	return lk_add(f, C, "c", 1, 200, 299, true, NULL);
}

static int op_upgrade_middle(struct lk_file *f)
{
	int delta = 7;
	int r = lk_add(f, A, "a2", 2, 40, 49, true, &delta);
	assert_int_equal(delta, r ? 0 : 2);
	return r;
}

static int op_unlock_middle(struct lk_file *f)
{
	return lk_remove(f, B, 110, 119);
}

static int op_merge(struct lk_file *f)
{
	return lk_add(f, A, "a3", 2, 0, 150, false, NULL);
}

static void test_enomem(void **state)
{
	(void)state;
	struct lk_file f;
	lk_file_init(&f);
	add(&f, A, 0, 99, false);
	add(&f, B, 100, 199, true);
	fail_each(&f, 1, op_new);
	CHECK(&f, {A, 0, 99, false}, {B, 100, 199, true}, {C, 200, 299, true});
	fail_each(&f, 2, op_upgrade_middle);   /* the new lock, and the tail of the split */
	CHECK(&f, {A, 0, 39, false}, {A, 40, 49, true}, {A, 50, 99, false},
	      {B, 100, 199, true}, {C, 200, 299, true});
	fail_each(&f, 1, op_unlock_middle);
	CHECK(&f, {A, 0, 39, false}, {A, 40, 49, true}, {A, 50, 99, false},
	      {B, 100, 109, true}, {B, 120, 199, true}, {C, 200, 299, true});
	fail_each(&f, 1, op_merge);
	CHECK(&f, {A, 0, 150, false}, {B, 100, 109, true}, {B, 120, 199, true},
	      {C, 200, 299, true});
	/* what needs no allocation works without one: unlocks that only trim or drop, and a
	 * lock that is already held */
	fail_after(0);
	assert_int_equal(lk_remove(&f, B, 100, 125), 0);
	assert_int_equal(lk_remove(&f, A, 100, MAX), 0);
	assert_int_equal(lk_add(&f, A, "a3", 2, 10, 20, false, NULL), 0);
	assert_int_equal(lk_remove_owner(&f, C), 1);
	alloc_ok();
	CHECK(&f, {A, 0, 99, false}, {B, 126, 199, true});
	lk_file_clear(&f);
}

/* The model: for each of three owners, what it holds at each of 64 offsets (0 none, 1 shared,
 * 2 exclusive). Offset i is base + i, so that the top run ends at UINT64_MAX. */
#define SPAN 64
enum { NONE, SH, EX };

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state % n;
}

/* The list holds exactly the maximal runs of each owner's model, and is sorted by start. */
static void check_model(const struct lk_file *f, uint8_t m[3][SPAN], const struct lk_owner *ow,
			uint64_t base)
{
	size_t runs = 0;
	uint64_t last_start = 0;
	LK_FOREACH(l, f) {
		assert_true(l->start >= last_start);
		last_start = l->start;
	}
	for (int k = 0; k < 3; k++) {
		const struct lk_lock *l = lk_first(f);
		for (int i = 0; i < SPAN;) {
			int j = i;
			while (j + 1 < SPAN && m[k][j + 1] == m[k][i])
				j++;
			if (m[k][i] != NONE) {
				while (l && !lk_owner_eq(l->owner, ow[k]))
					l = lk_next(l);
				assert_non_null(l);
				assert_true(l->start == base + (uint64_t)i);
				assert_true(l->end == base + (uint64_t)j);
				assert_int_equal(l->excl, m[k][i] == EX);
				l = lk_next(l);
				runs++;
			}
			i = j + 1;
		}
		while (l && !lk_owner_eq(l->owner, ow[k]))
			l = lk_next(l);
		assert_null(l);
	}
	assert_int_equal(runs, f->count);
}

static bool model_conflict(uint8_t m[3][SPAN], int k, int s, int e, bool excl)
{
	for (int o = 0; o < 3; o++)
		for (int i = s; o != k && i <= e; i++)
			if (m[o][i] != NONE && (excl || m[o][i] == EX))
				return true;
	return false;
}

/* Random locks and unlocks of three owners, a fraction of them with the allocator failing:
 * after each, the list must be the model's runs (a failed one having changed nothing). */
static void run_model(uint64_t base)
{
	const struct lk_owner ow[3] = {A, B, C};
	uint8_t m[3][SPAN] = {{0}};
	struct lk_file f;
	int failed = 0;
	lk_file_init(&f);
	for (int step = 0; step < 20000; step++) {
		int k = (int)rnd(3), s = (int)rnd(SPAN), e = s + (int)rnd((uint64_t)(SPAN - s));
		bool excl = rnd(2), lock = rnd(3) != 0;
		uint64_t rs = base + (uint64_t)s, re = base + (uint64_t)e;
		assert_int_equal(lk_conflict(&f, ow[k], rs, re, excl) != NULL,
				 model_conflict(m, k, s, e, excl));
		if (rnd(8) == 0)
			fail_after(0);
		int r = lock ? lk_add(&f, ow[k], "x", 1, rs, re, excl, NULL)
			     : lk_remove(&f, ow[k], rs, re);
		alloc_ok();
		assert_true(r == 0 || r == -ENOMEM);
		failed += r != 0;
		for (int i = s; r == 0 && i <= e; i++)
			m[k][i] = lock ? (excl ? EX : SH) : NONE;
		check_model(&f, m, ow, base);
	}
	assert_true(failed > 0);     /* the failures did happen */
	lk_file_clear(&f);
}

static void test_model_low(void **state)
{
	(void)state;
	run_model(0);
}

static void test_model_top(void **state)
{
	(void)state;
	run_model(MAX - (SPAN - 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_span),
		cmocka_unit_test(test_conflicts),
		cmocka_unit_test(test_unlock_middle),
		cmocka_unit_test(test_trim_keeps_order),
		cmocka_unit_test(test_upgrade_downgrade_middle),
		cmocka_unit_test(test_upgrade_across),
		cmocka_unit_test(test_merge_overlap),
		cmocka_unit_test(test_merge_adjacent),
		cmocka_unit_test(test_other_owner_not_merged),
		cmocka_unit_test(test_64bit_ends),
		cmocka_unit_test(test_remove_owner_host),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_oh),
		cmocka_unit_test(test_enomem),
		cmocka_unit_test(test_model_low),
		cmocka_unit_test(test_model_top),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
