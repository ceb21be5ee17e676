/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Write-behind readiness: per 1 MiB chunk of a file, how many of its blocks are ready to go to
 * disk (dirty, complete, not busy) and covered by WRITEs since they were last there. When the count reaches the chunk's size the chunk goes to the
 * write-behind queue at once: a run that can be written whole is not kept waiting for COMMIT. A
 * chunk map holds only chunks with a ready block, so it is as small as the dirty data. */
#include <errno.h>
#include <stdlib.h>

#include "bc_internal.h"
#include "io/fiber.h"

#define CHUNKS_MIN 16u

int bc_chunks_init(struct bc_chunks *m)
{
	m->nbuckets = CHUNKS_MIN;
	m->count = 0;
	m->whole = 0;
	m->closes = 0;
	m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
	return m->buckets ? 0 : -ENOMEM;
}

void bc_chunks_fini(struct bc_chunks *m)
{
	for (unsigned i = 0; i < m->nbuckets; i++) {
		while (m->buckets[i]) {
			struct bc_chunk *ch = m->buckets[i];

			m->buckets[i] = ch->next;
			free(ch);
		}
	}
	free(m->buckets);
	m->buckets = NULL;
}

static unsigned chunk_slot(unsigned nbuckets, uint64_t key)
{
	return (unsigned)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 40) & (nbuckets - 1);
}

static void chunks_grow(struct bc_chunks *m)
{
	unsigned n = m->nbuckets * 2;
	struct bc_chunk **b = calloc(n, sizeof(*b));

	if (!b)
		return;   /* longer chains, still correct */
	for (unsigned i = 0; i < m->nbuckets; i++) {
		for (struct bc_chunk *ch = m->buckets[i], *next; ch; ch = next) {
			unsigned s = chunk_slot(n, ch->key);

			next = ch->next;
			ch->next = b[s];
			b[s] = ch;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = n;
}

/* Add delta (+1 or -1) to the chunk's count, *n the new count; the chunk, NULL once its count is
 * 0. A chunk that cannot be allocated is not counted (its data goes by the dirty threshold or
 * COMMIT instead). */
static struct bc_chunk *chunk_add(struct bc_chunks *m, uint64_t key, int delta, uint32_t *n)
{
	struct bc_chunk **p = &m->buckets[chunk_slot(m->nbuckets, key)], *ch;

	*n = 0;
	while ((ch = *p) && ch->key != key)
		p = &ch->next;
	if (!ch) {   /* only a block becoming ready (+1) makes a chunk */
		if (delta < 0)
			return NULL;
		if (m->count >= m->nbuckets)
			chunks_grow(m);   /* when it cannot: longer chains, still correct */
		ch = calloc(1, sizeof(*ch));
		if (!ch)
			return NULL;
		unsigned slot = chunk_slot(m->nbuckets, key);
		*ch = (struct bc_chunk){.key = key, .ready = 1, .next = m->buckets[slot]};
		m->buckets[slot] = ch;
		m->count++;
		*n = 1;
		return ch;
	}
	*n = ch->ready = (uint32_t)((int64_t)ch->ready + delta);
	if (*n == 0) {
		*p = ch->next;
		free(ch);
		m->count--;
		return NULL;
	}
	return ch;
}

/* A ready block counts toward its chunk only once WRITEs have covered it since it was last on
 * disk. A block complete only because it held a clean image (an overwrite) is written as soon
 * as the first of the two WRITEs sharing it arrives otherwise, and again, alone, after the
 * second. */
void bc_chunk_update(struct bc_inode *ino, struct bc_entry *e)
{
	bool ready = bc_entry_ready(ino, e);
	bool whole = ready && e->covered == ino->bs;

	if (ready != e->gready) {
		e->gready = ready;
		if (ready)
			atomic_fetch_add_explicit(&ino->cache->nready, 1, memory_order_relaxed);
		else
			atomic_fetch_sub_explicit(&ino->cache->nready, 1, memory_order_relaxed);
	}
	if (whole == e->gwhole)
		return;
	e->gwhole = whole;
	uint64_t key = e->index >> ino->chunk_shift;
	struct bc_chunks *m = &ino->chunks;
	uint32_t per = 1u << ino->chunk_shift;
	size_t open = bc_chunks_open(ino);
	uint32_t n;
	struct bc_chunk *ch = chunk_add(m, key, whole ? 1 : -1, &n);
	if (whole && n == 1 && per > 1) {
		ch->opened_ns = fiber_now_ns();   /* once a chunk: a clock read per MiB */
		ino->chunks_opened++;
	}
	if (whole && n == per) {
		m->whole++;
	} else if (!whole && n + 1 == per) {
		m->whole--;
		ch->opened_ns = 0;   /* on its way to disk (or cut): no writer is behind it */
	}
	if (bc_chunks_open(ino) < open) {
		m->closes++;
		if (ino->window_waiters)
			co_cond_broadcast(&ino->window);
	}
	if (whole && n == per && !ino->wb_stuck)
		bc_wbq_push(ino, key);
}

bool bc_chunk_whole(const struct bc_inode *ino, uint64_t key)
{
	const struct bc_chunks *m = &ino->chunks;
	const struct bc_chunk *ch = m->buckets[chunk_slot(m->nbuckets, key)];

	while (ch && ch->key != key)
		ch = ch->next;
	return ch && ch->ready == 1u << ino->chunk_shift;
}

bool bc_chunk_filling(const struct bc_inode *ino, uint64_t key, uint64_t now, uint64_t ns)
{
	const struct bc_chunks *m = &ino->chunks;
	const struct bc_chunk *ch = m->buckets[chunk_slot(m->nbuckets, key)];

	while (ch && ch->key != key)
		ch = ch->next;
	return ch && ch->opened_ns && ch->ready < 1u << ino->chunk_shift && now - ch->opened_ns < ns;
}

/* The open chunks opened less than young_ns ago: a writer is on its way to each (older ones have
 * a hole nobody is filling now, or a writer far behind). A walk of the chunk map, which is as
 * small as the dirty data in chunks; asked only of a WRITE that opened a chunk. */
size_t bc_chunks_young(const struct bc_inode *ino, uint64_t now, uint64_t young_ns)
{
	const struct bc_chunks *m = &ino->chunks;
	size_t n = 0;

	for (unsigned i = 0; i < m->nbuckets; i++)
		for (const struct bc_chunk *ch = m->buckets[i]; ch; ch = ch->next)
			n += ch->opened_ns && ch->ready < 1u << ino->chunk_shift &&
			     now - ch->opened_ns < young_ns;
	return n;
}
