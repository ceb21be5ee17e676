/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cache's block map (src/cache/bc_map.c) against a plain array: lookups, growth, a newer
 * entry taking an older one's slot, removal in the middle of clusters, walks whose visitor
 * removes what it is given, and shrinking once mostly empty. Indexes come in the shapes the cache makes: runs of consecutive
 * blocks (which the hash packs together) and scattered ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache/bc_internal.h"

#define DOMAIN 4096u   /* indexes 0..DOMAIN-1, plus FAR + the same (sparse, huge offsets) */
#define FAR (UINT64_C(1) << 40)

struct model {
	struct bc_inode ino;
	struct bc_entry *ref[2 * DOMAIN];    /* what the map should say for each index */
	size_t count;
	unsigned seed;
};

static uint64_t index_of(unsigned k)
{
	return k < DOMAIN ? k : FAR + (k - DOMAIN);
}

static unsigned pick(struct model *md)
{
	unsigned r = (unsigned)rand_r(&md->seed);
	/* Three in four among the first DOMAIN blocks (dense: whole groups of 8 fill up, as a
	 * WRITE's blocks do), the rest anywhere in both ranges. */
	return (r % 4 ? r % 512 + (r >> 20) % 8 * 512 : r) % (2 * DOMAIN);
}

static struct bc_entry *new_entry(uint64_t index)
{
	struct bc_entry *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	e->index = index;
	return e;
}

static void put(struct model *md, unsigned k)
{
	struct bc_entry *old = md->ref[k], *e = new_entry(index_of(k));

	assert_int_equal(bc_map_reserve(&md->ino.map), 0);
	bc_map_insert(&md->ino.map, e);
	md->ref[k] = e;
	if (old) {   /* as the cache replaces a block's image: the older one is removed after */
		bc_map_remove(&md->ino.map, old);
		free(old);
	} else {
		md->count++;
	}
}

static void drop(struct model *md, unsigned k)
{
	if (!md->ref[k])
		return;
	bc_map_remove(&md->ino.map, md->ref[k]);
	free(md->ref[k]);
	md->ref[k] = NULL;
	md->count--;
}

static void check_all(struct model *md)
{
	assert_int_equal(md->ino.map.count, md->count);
	for (unsigned k = 0; k < 2 * DOMAIN; k++)
		assert_ptr_equal(bc_map_find(&md->ino.map, index_of(k)), md->ref[k]);
	/* and never for what was not put */
	assert_null(bc_map_find(&md->ino.map, FAR - 1));
	assert_null(bc_map_find(&md->ino.map, UINT64_MAX));
}

static void model_init(struct model *md, unsigned seed)
{
	memset(md, 0, sizeof(*md));
	md->seed = seed;
	assert_int_equal(bc_map_init(&md->ino.map), 0);
}

static void model_fini(struct model *md)
{
	for (unsigned k = 0; k < 2 * DOMAIN; k++)
		drop(md, k);
	assert_int_equal(md->ino.map.count, 0);
	bc_map_fini(&md->ino.map);
}

static void test_random_operations(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 4; seed++) {
		struct model md;
		model_init(&md, seed);
		for (int op = 0; op < 40000; op++) {
			unsigned k = pick(&md);
			/* grow to a few thousand, then churn around there */
			if (rand_r(&md.seed) % 3 || md.count < 1000)
				put(&md, k);
			else
				drop(&md, k);
			if (op % 5000 == 0)
				check_all(&md);
		}
		check_all(&md);
		model_fini(&md);
	}
}

struct visit {
	struct model *md;
	uint64_t first, last;
	unsigned seen[2 * DOMAIN];
	bool remove;
	unsigned stop_after;   /* 0: never stop */
	unsigned calls;
};

static unsigned key_of(uint64_t index)
{
	return index < FAR ? (unsigned)index : (unsigned)(index - FAR) + DOMAIN;
}

static bool visitor(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	struct visit *v = arg;
	unsigned k = key_of(e->index);

	assert_ptr_equal(ino, &v->md->ino);
	assert_true(e->index >= v->first && e->index <= v->last);
	assert_ptr_equal(v->md->ref[k], e);
	v->seen[k]++;
	v->calls++;
	if (v->remove)
		drop(v->md, k);
	return !(v->stop_after && v->calls == v->stop_after);
}

/* Each entry in range visited exactly once, removing or not, by the short path (block by block)
 * and the long one (every slot); entries out of range untouched. */
static void walk_and_check(struct model *md, uint64_t first, uint64_t last, bool remove)
{
	struct visit *v = calloc(1, sizeof(*v));
	struct bc_entry *before[2 * DOMAIN];

	assert_non_null(v);
	memcpy(before, md->ref, sizeof(before));
	*v = (struct visit){ .md = md, .first = first, .last = last, .remove = remove };
	assert_true(bc_map_range(&md->ino, first, last, visitor, v));
	for (unsigned k = 0; k < 2 * DOMAIN; k++) {
		bool in = index_of(k) >= first && index_of(k) <= last;
		assert_int_equal(v->seen[k], before[k] && in ? 1 : 0);
		if (!in || !remove)
			assert_ptr_equal(md->ref[k], before[k]);
	}
	check_all(md);
	free(v);
}

static void fill(struct model *md, int n)
{
	for (int i = 0; i < n; i++)
		put(md, pick(md));
}

static void test_walks(void **state)
{
	(void)state;
	for (unsigned seed = 10; seed < 16; seed++) {
		struct model md;
		model_init(&md, seed);
		fill(&md, 3000);
		walk_and_check(&md, 0, UINT64_MAX, false);         /* every slot */
		walk_and_check(&md, 100, 140, false);              /* block by block */
		walk_and_check(&md, 1000, 1010, true);             /* short, removing */
		walk_and_check(&md, 2000, UINT64_MAX, true);       /* a truncation */
		fill(&md, 2000);
		walk_and_check(&md, 0, UINT64_MAX, true);          /* everything, removing */
		assert_int_equal(md.ino.map.count, 0);
		model_fini(&md);
	}
}

static void test_walk_stops_when_told(void **state)
{
	(void)state;
	struct model md;
	struct visit *v = calloc(1, sizeof(*v));

	assert_non_null(v);
	model_init(&md, 77);
	fill(&md, 500);
	*v = (struct visit){ .md = &md, .first = 0, .last = UINT64_MAX, .stop_after = 5 };
	assert_false(bc_map_range(&md.ino, 0, UINT64_MAX, visitor, v));
	assert_int_equal(v->calls, 5);
	free(v);
	model_fini(&md);
}

/* One aligned group after another, as sequential writers fill a file: the map grows through
 * every size with the same answers. */
static void test_growth_with_consecutive_blocks(void **state)
{
	(void)state;
	struct model md;

	model_init(&md, 5);
	for (unsigned k = 0; k < 2 * DOMAIN; k++) {
		put(&md, k);
		if ((k & (k + 1)) == 0)   /* at each power of two */
			check_all(&md);
	}
	check_all(&md);
	assert_true(md.ino.map.count * 2 <= ((size_t)1 << md.ino.map.bits));
	for (unsigned k = 0; k < 2 * DOMAIN; k += 2)   /* every other one: holes in each cluster */
		drop(&md, k);
	check_all(&md);
	/* Down to a few dozen: the slots shrink with them, and still answer right. */
	unsigned most = 1u << md.ino.map.bits;
	for (unsigned k = 1; k < 2 * DOMAIN - 64; k += 2)
		drop(&md, k);
	check_all(&md);
	assert_true((1u << md.ino.map.bits) < most / 16);
	assert_true((1u << md.ino.map.bits) <= 16 * md.ino.map.count);
	model_fini(&md);
}

/* A walk that removes everything leaves the map small (the slots do not move during it). */
static void test_walk_then_shrink(void **state)
{
	(void)state;
	struct model md;

	model_init(&md, 9);
	fill(&md, 3000);
	unsigned most = 1u << md.ino.map.bits;
	walk_and_check(&md, 0, UINT64_MAX, true);
	assert_int_equal(md.ino.map.count, 0);
	assert_true((1u << md.ino.map.bits) < most);
	fill(&md, 100);
	check_all(&md);
	model_fini(&md);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_operations),
		cmocka_unit_test(test_walks),
		cmocka_unit_test(test_walk_stops_when_told),
		cmocka_unit_test(test_growth_with_consecutive_blocks),
		cmocka_unit_test(test_walk_then_shrink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
