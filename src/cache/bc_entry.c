/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Entry life cycle and the cache-wide bookkeeping that follows it: counts, peaks, and the
 * clean/dirty lists eviction picks from. Callers hold the inode lock. */
#include <stdlib.h>

#include "bc_internal.h"

static void account_new(struct bcache *c, struct bc_entry *e, uint32_t bs)
{
	e->id = atomic_fetch_add_explicit(&c->next_id, 1, memory_order_relaxed);
	bc_peak(&c->entries_peak, atomic_fetch_add_explicit(&c->entries, 1, memory_order_relaxed) + 1);
	bc_peak(&c->bytes_peak, atomic_fetch_add_explicit(&c->bytes, bs, memory_order_relaxed) + bs);
}

/* A new entry is dirty from the start: its creator copies a WRITE into it before unlocking. */
struct bc_entry *bc_entry_new(struct bc_inode *ino, uint64_t index)
{
	struct bc_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->data = aligned_alloc(ino->bs, ino->bs);
	e->bits = calloc(ino->bs / 64, sizeof(uint64_t));
	if (!e->data || !e->bits) {
		free(e->data);
		free(e->bits);
		free(e);
		return NULL;
	}
	e->ino = ino;
	e->index = index;
	e->dirty = true;
	bc_list_init(&e->glink);
	account_new(ino->cache, e, ino->bs);
	bc_map_insert(&ino->map, e);
	bc_list_add_tail(&ino->age, &e->ilink);
	ino->bytes += ino->bs;
	bc_entry_relist(ino, e);
	return e;
}

void bc_entry_relist(struct bc_inode *ino, struct bc_entry *e)
{
	struct bcache *c = ino->cache;
	struct bc_shard *sh = &c->shard[ino->shard];
	uint8_t want = e->busy ? BC_GL_NONE : e->dirty ? BC_GL_DIRTY : BC_GL_CLEAN;

	if (e->dirty != e->gdirty) {
		if (e->dirty)
			atomic_fetch_add_explicit(&c->ndirty, 1, memory_order_relaxed);
		else
			atomic_fetch_sub_explicit(&c->ndirty, 1, memory_order_relaxed);
		e->gdirty = e->dirty;
	}
	if (want == e->glist)
		return;
	pthread_mutex_lock(&sh->lock);
	bc_list_del(&e->glink);
	if (want != BC_GL_NONE) {
		bc_list_add_tail(want == BC_GL_DIRTY ? &sh->dirty : &sh->clean, &e->glink);
		e->lstamp = atomic_fetch_add_explicit(&c->stamp, 1, memory_order_relaxed);
	}
	e->glist = want;
	pthread_mutex_unlock(&sh->lock);
}

void bc_entry_set_busy(struct bc_inode *ino, struct bc_entry *e, bool busy)
{
	e->busy = busy;
	if (busy) {
		ino->nbusy++;
	} else {
		ino->nbusy--;
		co_cond_broadcast(&ino->cond);
	}
	bc_entry_relist(ino, e);
}

/* A READ between bcache_read_begin and _overlay may have read the disk before these bytes got
 * there, and will not find them in the cache any more: it must read again. */
void bc_readers_stale(struct bc_inode *ino, uint64_t index)
{
	uint64_t start = bc_block_off(ino, index), end = start + ino->bs;

	for (struct bcache_read *r = ino->readers; r; r = r->next)
		if (r->off < end && start < r->off + r->len)
			r->stale = true;
}

void bc_entry_free(struct bc_inode *ino, struct bc_entry *e)
{
	struct bcache *c = ino->cache;

	bc_readers_stale(ino, e->index);
	bc_map_remove(&ino->map, e);
	bc_list_del(&e->ilink);
	ino->bytes -= ino->bs;
	if (e->glist != BC_GL_NONE) {
		pthread_mutex_lock(&c->shard[ino->shard].lock);
		bc_list_del(&e->glink);
		pthread_mutex_unlock(&c->shard[ino->shard].lock);
	}
	if (e->gdirty)
		atomic_fetch_sub_explicit(&c->ndirty, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&c->entries, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&c->bytes, ino->bs, memory_order_relaxed);
	free(e->data);
	free(e->bits);
	free(e);
	/* Room was made, or a block went to disk: parked WRITEs may go on. */
	co_cond_broadcast(&ino->cond);
}

/* Callers first wait for nbusy == 0. */
void bc_entry_free_all(struct bc_inode *ino)
{
	while (!bc_list_empty(&ino->age))
		bc_entry_free(ino, bc_container_of(ino->age.next, struct bc_entry, ilink));
}
