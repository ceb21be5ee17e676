/* Per-inode map from block index to entry. An inode holds at most its memory bound's worth of
 * entries (thousands), so a chained hash that only grows is enough. */
#include <errno.h>
#include <stdlib.h>

#include "bc_internal.h"

#define BC_MAP_MIN_SHIFT 4u  /* 16 buckets to start with */

static size_t nbuckets(const struct bc_map *m)
{
	return (size_t)1 << (64 - m->shift);
}

/* Fibonacci hashing: consecutive blocks spread over all buckets. */
static size_t slot(const struct bc_map *m, uint64_t index)
{
	return (size_t)((index * UINT64_C(0x9E3779B97F4A7C15)) >> m->shift);
}

int bc_map_init(struct bc_map *m)
{
	m->shift = 64 - BC_MAP_MIN_SHIFT;
	m->count = 0;
	m->buckets = calloc(nbuckets(m), sizeof(*m->buckets));
	return m->buckets ? 0 : -ENOMEM;
}

void bc_map_fini(struct bc_map *m)
{
	free(m->buckets);
	m->buckets = NULL;
}

struct bc_entry *bc_map_find(const struct bc_map *m, uint64_t index)
{
	struct bc_entry *e = m->buckets[slot(m, index)];

	while (e && e->index != index)
		e = e->hnext;
	return e;
}

/* Doubling failed for lack of memory: keep the old buckets, chains just get longer. */
static void grow(struct bc_map *m)
{
	struct bc_map bigger = { .shift = m->shift - 1, .count = m->count };
	size_t old = nbuckets(m);

	bigger.buckets = calloc(nbuckets(&bigger), sizeof(*bigger.buckets));
	if (!bigger.buckets)
		return;
	for (size_t i = 0; i < old; i++) {
		struct bc_entry *e = m->buckets[i], *next;

		for (; e; e = next) {
			size_t s = slot(&bigger, e->index);

			next = e->hnext;
			e->hnext = bigger.buckets[s];
			bigger.buckets[s] = e;
		}
	}
	free(m->buckets);
	*m = bigger;
}

void bc_map_insert(struct bc_map *m, struct bc_entry *e)
{
	size_t s;

	if (m->count >= nbuckets(m) && m->shift > 32)
		grow(m);
	s = slot(m, e->index);
	e->hnext = m->buckets[s];
	m->buckets[s] = e;
	m->count++;
}

void bc_map_remove(struct bc_map *m, struct bc_entry *e)
{
	struct bc_entry **p = &m->buckets[slot(m, e->index)];

	while (*p && *p != e)
		p = &(*p)->hnext;
	if (*p) {
		*p = e->hnext;
		m->count--;
	}
}

bool bc_map_range(struct bc_inode *ino, uint64_t first, uint64_t last, bc_visit_fn fn, void *arg)
{
	struct bc_map *m = &ino->map;

	if (first > last || m->count == 0)
		return true;
	/* A short range (a WRITE's middle, a small COMMIT) is cheaper looked up block by block;
	 * a long one (COMMIT to end of file) by walking every entry. */
	if (last - first < 2 * m->count) {
		for (uint64_t i = first;; i++) {
			struct bc_entry *e = bc_map_find(m, i);

			if (e && !fn(ino, e, arg))
				return false;
			if (i == last)
				return true;
		}
	}
	for (size_t b = 0; b < nbuckets(m); b++) {
		struct bc_entry *e = m->buckets[b], *next;

		for (; e; e = next) {
			next = e->hnext;
			if (e->index >= first && e->index <= last && !fn(ino, e, arg))
				return false;
		}
	}
	return true;
}
