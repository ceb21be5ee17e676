/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing entries to disk: completing a partial block (fill), the write itself with its end-of-
 * file care, COMMIT's walk over a range, and eviction under the memory bounds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bc_bits.h"
#include "bc_internal.h"

void bc_wait(struct bc_inode *ino)
{
	co_cond_wait(&ino->cond, &ino->lock, 0);
}

/* Where the file's data ends as far as WRITEs know: acknowledged ones and middles in flight.
 * A block write may extend the file up to here without anyone seeing a wrong size. */
uint64_t bc_logical_end(const struct bc_inode *ino)
{
	uint64_t end = ino->hint;

	for (const struct bc_span *s = ino->spans; s; s = s->next)
		end = bc_max(end, s->end);
	return end;
}

bool bc_span_covers(const struct bc_inode *ino, uint64_t index)
{
	for (const struct bc_span *s = ino->spans; s; s = s->next)
		if (index >= s->first && index <= s->last)
			return true;
	return false;
}

/* Bytes [a, b) of the block nobody wrote: from the disk's copy where it had them, else zeros. */
static void fill_hole(unsigned char *data, const unsigned char *disk, size_t ndisk, uint32_t a,
		      uint32_t b)
{
	uint32_t from_disk = ndisk > a ? (uint32_t)(ndisk < b ? ndisk : b) : a;

	if (from_disk > a)
		memcpy(data + a, disk + a, from_disk - a);
	memset(data + from_disk, 0, b - from_disk);
}

/* Complete e's image with the bytes no WRITE gave it. disk_size was read at fill time (middles
 * in flight move it): a hole wholly at or past it is zeros, no read. Touches only bytes whose bit
 * is clear, which nobody else reads or writes meanwhile, so it may run without the lock while e
 * is busy. Does not set e->filled (the caller does, under the lock). */
static int fill(struct bc_inode *ino, struct bc_entry *e, void *io, int64_t disk_size)
{
	struct bcache *c = ino->cache;
	uint32_t bs = ino->bs, a = bc_bits_find(e->bits, 0, bs, false);
	uint64_t base = bc_block_off(ino, e->index);
	unsigned char *disk = NULL;
	ssize_t n = 0;

	if (base + a < (uint64_t)disk_size) {
		disk = aligned_alloc(bs, bs);
		if (!disk)
			return -ENOMEM;
		n = c->ops.read(io, base, disk, bs);
		bc_count(&c->n.fill_reads);
		if (n < 0) {
			free(disk);
			return bc_io_result(c, (int)n);
		}
	} else {
		bc_count(&c->n.fill_zeros);
	}
	while (a < bs) {
		uint32_t b = bc_bits_find(e->bits, a, bs, true);

		fill_hole(e->data, disk, (size_t)n, a, b);
		a = bc_bits_find(e->bits, b, bs, false);
	}
	free(disk);
	return 0;
}

/* The block ends past both the data's logical end and the disk's end: writing it whole pads the
 * file with zeros to the block's end, so the size goes back right after. Done under the lock
 * from the size probe to the truncate: no WRITE can start past the logical end meanwhile (its
 * span would move the end) and no size query can see the padding. */
static int flush_past_eof(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
			  int64_t disk_size, uint64_t logical_end)
{
	struct bcache *c = ino->cache;
	uint64_t base = bc_block_off(ino, e->index), size = bc_max((uint64_t)disk_size, logical_end);
	int rc = 0;

	if (!bc_entry_complete(ino, e)) {
		rc = fill(ino, e, h->io, disk_size);
		if (rc)
			return rc;
		e->filled = true;
	}
	rc = bc_io_result(c, c->ops.write(h->io, base, e->data, ino->bs));
	if (rc == 0 && size < base + ino->bs)
		rc = bc_io_result(c, c->ops.truncate(h->io, size));
	return rc;
}

/* The common case: the block ends within the file's data or the disk's end, so writing it shows
 * no wrong size. The I/O runs without the lock; e is busy meanwhile. */
static int flush_unlocked(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
			  bool need_fill, int64_t disk_size)
{
	struct bcache *c = ino->cache;
	int rc = 0, frc = 0;

	bc_entry_set_busy(ino, e, true);
	h->inflight++;
	co_mutex_unlock(&ino->lock);
	if (need_fill)
		frc = fill(ino, e, h->io, disk_size);
	if (frc == 0)
		rc = bc_io_result(c, c->ops.write(h->io, bc_block_off(ino, e->index), e->data,
						  ino->bs));
	co_mutex_lock(&ino->lock);
	if (need_fill && frc == 0)
		e->filled = true;
	h->inflight--;
	bc_entry_set_busy(ino, e, false);
	return frc ? frc : rc;
}

int bc_entry_flush(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h)
{
	struct bcache *c = ino->cache;
	uint64_t end = bc_block_off(ino, e->index) + ino->bs, logical_end = bc_logical_end(ino);
	bool need_fill = !bc_entry_complete(ino, e), by_writes = e->nwritten == ino->bs;
	int64_t disk_size = 0;
	int rc;

	if (need_fill || end > logical_end) {
		disk_size = c->ops.disk_size(h->io);
		if (disk_size < 0)
			return bc_io_result(c, (int)disk_size);
	}
	if (end > logical_end && (uint64_t)disk_size < end)
		rc = flush_past_eof(ino, e, h, disk_size, logical_end);
	else
		rc = flush_unlocked(ino, e, h, need_fill, disk_size);
	if (rc == 0 && by_writes) {
		bc_count(&c->n.completed);
		ino->win_completed++;
	}
	return rc;
}

struct collect {
	struct bc_written *v;
	size_t n;
};

static bool collect_dirty(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	struct collect *col = arg;

	(void)ino;
	if (e->dirty)
		col->v[col->n++].index = e->index;
	return true;
}

/* 1 if it wrote the entry (recorded in *w), 0 if there was nothing to write any more. */
static int flush_one(struct bcache_file *h, uint64_t index, struct bc_written *w)
{
	struct bc_inode *ino = h->ino;
	struct bc_entry *e;
	int rc;

	for (;;) {
		e = bc_map_find(&ino->map, index);
		if (!e || !e->dirty)
			return 0;
		/* A middle in flight over the block will supersede it, or fail and leave it to
		 * us: either way its fate is known only once the middle is done. */
		if (!e->busy && !bc_span_covers(ino, index))
			break;
		bc_wait(ino);
	}
	rc = bc_entry_flush(ino, e, h);
	if (rc)
		return rc;
	*w = (struct bc_written){ .index = index, .id = e->id, .gen = e->gen };
	return 1;
}

/* The list of indexes is taken once, up front: entries WRITEs create meanwhile belong to WRITEs
 * this COMMIT need not cover, and would otherwise keep it going forever. */
int bc_flush_range(struct bcache_file *h, uint64_t first, uint64_t last,
		   struct bc_written **done, size_t *ndone)
{
	struct bc_inode *ino = h->ino;
	struct collect col = { .v = NULL, .n = 0 };
	size_t nw = 0;
	int rc = 0;

	*done = NULL;
	*ndone = 0;
	if (ino->map.count == 0)
		return 0;
	col.v = calloc(ino->map.count, sizeof(*col.v));
	if (!col.v)
		return -ENOMEM;
	bc_map_range(ino, first, last, collect_dirty, &col);
	for (size_t i = 0; i < col.n; i++) {
		/* flush_one overwrites only slots already read: nw <= i */
		int r = flush_one(h, col.v[i].index, &col.v[nw]);

		if (r > 0)
			nw++;
		else if (r < 0 && rc == 0)
			rc = r;
	}
	*done = col.v;
	*ndone = nw;
	return rc;
}

void bc_flush_settle(struct bc_inode *ino, const struct bc_written *done, size_t ndone)
{
	for (size_t i = 0; i < ndone; i++) {
		struct bc_entry *e = bc_map_find(&ino->map, done[i].index);

		if (!e || e->id != done[i].id || e->gen != done[i].gen || e->busy || !e->dirty)
			continue;
		if (e->nwritten == ino->bs) {
			bc_entry_free(ino, e);
		} else {
			e->dirty = false;
			bc_entry_relist(ino, e);
		}
	}
}

enum evicted { EV_DONE, EV_SKIPPED, EV_FAILED };

/* Free, or write and free, e to save memory. EV_SKIPPED (lock never dropped) when it cannot go
 * now: busy, under a middle in flight, or no handle to write it through. */
static enum evicted evict(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h)
{
	if (e->busy)
		return EV_SKIPPED;
	if (e->dirty) {
		if (!h || bc_span_covers(ino, e->index))
			return EV_SKIPPED;
		if (bc_entry_flush(ino, e, h))
			return EV_FAILED;
		bc_count(&ino->cache->n.forced);
	}
	bc_entry_free(ino, e);
	return EV_DONE;
}

/* Oldest clean entry first, else oldest dirty one. Inode lock held. */
static bool evict_oldest_of_inode(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;

	for (int pass = 0; pass < 2; pass++) {
		for (struct bc_list *l = ino->age.next; l != &ino->age; l = l->next) {
			struct bc_entry *e = bc_container_of(l, struct bc_entry, ilink);
			enum evicted ev;

			if (e->dirty == (pass == 0))
				continue;
			ev = evict(ino, e, h);
			/* past a flush the lock was dropped: l may be gone */
			if (ev != EV_SKIPPED)
				return ev == EV_DONE;
		}
	}
	return false;
}

/* The shard whose list (clean, or dirty) has the oldest head, or NULL when all are empty. Each
 * shard is looked at under its own lock; the answer may be stale by the time it is used, which
 * costs only an older entry's turn. */
static struct bc_shard *oldest_shard(struct bcache *c, bool dirty)
{
	struct bc_shard *best = NULL;
	uint64_t best_stamp = UINT64_MAX;

	for (unsigned i = 0; i < BC_SHARDS; i++) {
		struct bc_shard *sh = &c->shard[i];
		struct bc_list *list = dirty ? &sh->dirty : &sh->clean;

		pthread_mutex_lock(&sh->lock);
		if (!bc_list_empty(list)) {
			struct bc_entry *e = bc_container_of(list->next, struct bc_entry, glink);

			if (e->lstamp < best_stamp) {
				best_stamp = e->lstamp;
				best = sh;
			}
		}
		pthread_mutex_unlock(&sh->lock);
	}
	return best;
}

/* Pick the cache's oldest clean (else dirty) entry and pin its inode; it goes to the tail of its
 * list, so that one that cannot be evicted now does not stop the next pick. No lock held. */
static struct bc_inode *pick_victim(struct bcache *c, uint64_t *index, uint64_t *id)
{
	for (int dirty = 0; dirty < 2; dirty++) {
		struct bc_shard *sh = oldest_shard(c, dirty);
		if (!sh)
			continue;
		struct bc_list *list = dirty ? &sh->dirty : &sh->clean;
		struct bc_inode *ino = NULL;

		pthread_mutex_lock(&sh->lock);
		if (!bc_list_empty(list)) {
			struct bc_entry *e = bc_container_of(list->next, struct bc_entry, glink);

			bc_list_del(&e->glink);
			bc_list_add_tail(list, &e->glink);
			e->lstamp = atomic_fetch_add_explicit(&c->stamp, 1, memory_order_relaxed);
			*index = e->index;
			*id = e->id;
			ino = e->ino;
			/* Listed, so its inode is alive while we hold the shard lock: pin it. */
			pthread_mutex_lock(&c->lock);
			ino->refs++;
			pthread_mutex_unlock(&c->lock);
		}
		pthread_mutex_unlock(&sh->lock);
		if (ino)
			return ino;
	}
	return NULL;
}

/* Is the cache over its bound? *entries (if asked): how many it holds. */
static bool over_limit(struct bcache *c, uint64_t *entries)
{
	if (entries)
		*entries = atomic_load_explicit(&c->entries, memory_order_relaxed);
	return atomic_load_explicit(&c->bytes, memory_order_relaxed) > c->limit;
}

/* One attempt on the oldest entry of the whole cache (any inode: its own handle does the I/O).
 * false when there is nothing left to try. */
static bool evict_oldest_of_cache(struct bcache *c)
{
	uint64_t index, id;
	struct bc_inode *ino;
	struct bc_entry *e;

	ino = pick_victim(c, &index, &id);
	if (!ino)
		return false;
	co_mutex_lock(&ino->lock);
	e = bc_map_find(&ino->map, index);
	if (e && e->id == id)
		evict(ino, e, ino->handles);
	co_mutex_unlock(&ino->lock);
	bc_inode_unpin(ino);
	return true;
}

void bc_reclaim(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;
	struct bcache *c = ino->cache;
	uint64_t tries;

	co_mutex_lock(&ino->lock);
	while (ino->bytes > c->file_limit && evict_oldest_of_inode(h))
		;
	co_mutex_unlock(&ino->lock);
	/* Each entry gets one try at most, so entries that cannot go now (busy, under a middle)
	 * do not keep us spinning. */
	if (!over_limit(c, &tries))
		return;
	while (tries-- > 0 && evict_oldest_of_cache(c) && over_limit(c, NULL))
		;
}
