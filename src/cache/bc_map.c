/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-inode map from block index to entry: open addressing, linear probing, at most half full.
 *
 * Nearly every lookup is of a block next to the last one (a WRITE's blocks, a run being
 * collected, its neighbours), so the hash keeps each aligned group of 8 consecutive blocks in
 * 8 consecutive slots (two cache lines), and a slot holds the index beside the entry: a lookup
 * reads the slots, not the entries. (A chained map with Fibonacci hashing spread consecutive
 * blocks over all buckets and read every entry of a chain: two cache misses a lookup, 8% of
 * the daemon's own CPU under interleaved writers.) Deletion shifts the rest of the cluster
 * back rather than leaving tombstones, so a lookup stops at the first empty slot; a map left
 * under a sixteenth full shrinks. */
#include <errno.h>
#include <stdlib.h>

#include "bc_internal.h"

#define MIN_BITS 5u     /* 32 slots to start with */
#define GROUP_BITS 3u   /* 8 consecutive blocks share a run of slots */

static size_t nslots(const struct bc_map *m)
{
	return (size_t)1 << m->bits;
}

static size_t home(const struct bc_map *m, uint64_t index)
{
	uint64_t group = (index >> GROUP_BITS) * UINT64_C(0x9E3779B97F4A7C15);
	size_t base = (size_t)(group >> (64 - (m->bits - GROUP_BITS))) << GROUP_BITS;

	return base | (size_t)(index & ((1u << GROUP_BITS) - 1));
}

static size_t next(const struct bc_map *m, size_t i)
{
	return (i + 1) & (nslots(m) - 1);
}

static int alloc_slots(struct bc_map *m, unsigned bits)
{
	m->slots = calloc((size_t)1 << bits, sizeof(*m->slots));
	m->bits = bits;
	return m->slots ? 0 : -ENOMEM;
}

int bc_map_init(struct bc_map *m)
{
	m->count = 0;
	m->walking = 0;
	return alloc_slots(m, MIN_BITS);
}

void bc_map_fini(struct bc_map *m)
{
	free(m->slots);
	m->slots = NULL;
}

/* The slot of index, or of the empty slot where it would go. */
static size_t probe(const struct bc_map *m, uint64_t index)
{
	size_t i = home(m, index);

	while (m->slots[i].e && m->slots[i].index != index)
		i = next(m, i);
	return i;
}

struct bc_entry *bc_map_find(const struct bc_map *m, uint64_t index)
{
	return m->slots[probe(m, index)].e;
}

/* The same entries in 2^bits slots. -ENOMEM leaves the map as it was. */
static int rehash(struct bc_map *m, unsigned bits)
{
	struct bc_map to = { .count = m->count, .walking = m->walking };

	if (alloc_slots(&to, bits))
		return -ENOMEM;
	for (size_t i = 0; i < nslots(m); i++)
		if (m->slots[i].e)
			to.slots[probe(&to, m->slots[i].index)] = m->slots[i];
	free(m->slots);
	*m = to;
	return 0;
}

/* A map left mostly empty (a file's blocks written and evicted while it stays open) gives its
 * memory back, down to a quarter full: a file once at the per-file bound held 2 MiB of slots.
 * Not while a walk is on the slots. */
static void maybe_shrink(struct bc_map *m)
{
	unsigned bits = m->bits;

	if (m->walking || bits == MIN_BITS || 16 * m->count >= nslots(m))
		return;
	while (bits > MIN_BITS && 4 * m->count < ((size_t)1 << (bits - 1)))
		bits--;
	rehash(m, bits);   /* on failure it stays as it is */
}

/* Room for one more entry: past half full the map doubles; when it cannot, it fills up to one
 * empty slot (which ends every probe) before failing. */
int bc_map_reserve(struct bc_map *m)
{
	if (2 * (m->count + 1) > nslots(m) && rehash(m, m->bits + 1) && m->count + 2 > nslots(m))
		return -ENOMEM;
	return 0;
}

/* After bc_map_reserve. A newer entry of a block takes its older one's slot: lookups find the
 * newer one, and the older one's bc_map_remove (by identity) then leaves the slot alone. */
void bc_map_insert(struct bc_map *m, struct bc_entry *e)
{
	struct bc_map_slot *s = &m->slots[probe(m, e->index)];

	if (!s->e)
		m->count++;
	*s = (struct bc_map_slot){ .index = e->index, .e = e };
}

/* Empty slot hole: move back each later entry of its cluster that may sit there (its home is
 * not cyclically in (hole, j]), until the cluster ends. */
static void close_hole(struct bc_map *m, size_t hole)
{
	for (size_t j = next(m, hole); m->slots[j].e; j = next(m, j)) {
		size_t h = home(m, m->slots[j].index);
		bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);

		if (stays)
			continue;
		m->slots[hole] = m->slots[j];
		m->slots[j] = (struct bc_map_slot){ 0 };
		hole = j;
	}
}

void bc_map_remove(struct bc_map *m, struct bc_entry *e)
{
	size_t i = probe(m, e->index);

	if (m->slots[i].e != e)
		return;   /* not mapped, or a newer entry took its slot */
	m->slots[i] = (struct bc_map_slot){ 0 };
	m->count--;
	close_hole(m, i);
	maybe_shrink(m);
}

/* Every slot once, starting after an empty one: fn may remove its entry, which shifts later
 * entries of the cluster back into the slot just visited (never past an empty slot, never
 * forward), so a slot whose entry changed under fn is visited again. */
static bool walk(struct bc_inode *ino, uint64_t first, uint64_t last, bc_visit_fn fn, void *arg)
{
	struct bc_map *m = &ino->map;
	size_t start = 0, n = nslots(m);

	bool all = true;

	while (m->slots[start].e)
		start = next(m, start);
	m->walking++;
	for (size_t k = 1; k <= n && all; k++) {
		size_t i = (start + k) & (n - 1);
		struct bc_entry *e = m->slots[i].e;

		while (e && e->index >= first && e->index <= last) {
			all = fn(ino, e, arg);
			if (!all || m->slots[i].e == e)
				break;
			e = m->slots[i].e;
		}
	}
	m->walking--;
	maybe_shrink(m);
	return all;
}

bool bc_map_range(struct bc_inode *ino, uint64_t first, uint64_t last, bc_visit_fn fn, void *arg)
{
	struct bc_map *m = &ino->map;

	if (first > last || m->count == 0)
		return true;
	/* A short range (a WRITE's middle, a small COMMIT) is cheaper looked up block by block;
	 * a long one (COMMIT to end of file) by walking every slot. */
	if (last - first >= 2 * m->count)
		return walk(ino, first, last, fn, arg);
	for (uint64_t i = first;; i++) {
		struct bc_entry *e = bc_map_find(m, i);

		if (e && !fn(ino, e, arg))
			return false;
		if (i == last)
			return true;
	}
}
