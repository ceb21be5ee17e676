/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Eviction under the memory bounds (the cache's, a file's, WRITTEN's share): which entry goes
 * (the victim lists, oldest first, 2Q), clean blocks freed a batch at a time, dirty ones written
 * before they go. Apart from the write paths because it is policy: what to give up when memory
 * is short. */
#include <pthread.h>

#include "bc_internal.h"

enum evicted { EV_DONE, EV_SKIPPED, EV_FAILED };

/* Write dirty e for the memory bound: with the ready blocks around it as one run when it is
 * complete, else alone (filled: a forced completion). e is still there, clean, on success. */
static int evict_write(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h)
{
	struct bc_run r;

	if (bc_entry_complete(ino, e)) {
		bc_run_around(ino, e->index, UINT64_MAX, false, &r);
		if (e->index - r.first < r.n && r.v[e->index - r.first] == e)
			return bc_run_write(ino, &r, h);
	} else {
		bc_count(&ino->cache->n.forced);   /* completed with a read or zeros */
	}
	return bc_entry_flush(ino, e, h, BC_FILL_BOUND, NULL);
}

/* Free, or write and free, e to save memory. EV_SKIPPED (lock never dropped) when it cannot go
 * now: busy, under a middle in flight, no handle to write it through, or (unless fill) still
 * partial: completing it now would read from disk what its neighbour is about to bring. */
static enum evicted evict(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
			  bool fill, int *err)
{
	uint64_t id = e->id, index = e->index;

	if (e->busy)
		return EV_SKIPPED;
	if (e->dirty) {
		/* (a file whose write failed keeps its dirty blocks for its COMMIT: trying them for
		 * every WRITE that needs room made each WRITE a storm of failing writes) */
		if (!h || ino->wb_stuck || bc_span_covers(ino, e->index) ||
		    (!fill && !bc_entry_complete(ino, e)))
			return EV_SKIPPED;
		int rc = evict_write(ino, e, h);
		if (rc) {
			*err = (int)bc_wb_failed(ino, rc);
			return EV_FAILED;
		}
		/* the lock was dropped: e may have been freed or rewritten meanwhile */
		e = bc_map_find(&ino->map, index);
		if (!e || e->id != id || e->busy || e->dirty)
			return EV_DONE;
	}
	bc_entry_free(ino, e);
	return EV_DONE;
}

/* The oldest of the inode's first few entries that can go: freed if clean, written (as a run)
 * and freed if dirty; partial blocks only when nothing else can (fill). A bounded look, so that
 * a file holding its whole bound in dirty blocks costs each WRITE little. Inode lock held. */
#define INODE_EVICT_LOOK 64
static bool evict_oldest_look(struct bcache_file *h, bool fill)
{
	struct bc_inode *ino = h->ino;
	int looked = 0;

	for (struct bc_list *l = ino->age.next, *next; l != &ino->age && looked < INODE_EVICT_LOOK;
	     l = next, looked++) {
		struct bc_entry *e = bc_container_of(l, struct bc_entry, ilink);

		next = l->next;
		/* 2Q here too: a block READs came back to gets another round; and so does a partial
		 * block waiting for its neighbour's WRITE, so that the look moves on to blocks that
		 * can go without a read (interleaved writers drift apart: the oldest blocks of a
		 * busy file are the partial ones around a slow writer's records). */
		if ((e->hot && !e->dirty && !e->busy) ||
		    (!fill && e->dirty && !e->busy && !bc_entry_complete(ino, e))) {
			bc_list_del(&e->ilink);
			bc_list_add_tail(&ino->age, &e->ilink);
			continue;
		}
		int err;
		enum evicted ev = evict(ino, e, h, fill, &err);

		/* past a flush the lock was dropped: l may be gone */
		if (ev != EV_SKIPPED)
			return ev == EV_DONE;
	}
	return false;
}

/* A second look before any fill: the first moved the partial blocks it passed over to the
 * back, so the second sees the next entries. */
static bool evict_oldest_of_inode(struct bcache_file *h)
{
	return evict_oldest_look(h, false) || evict_oldest_look(h, false) ||
	       evict_oldest_look(h, true);
}

/* The shard whose list `which` has the oldest head (and *stamp, if asked: its stamp, UINT64_MAX
 * for none), or NULL when all are empty. Each shard is looked at under its own lock; the answer
 * may be stale by the time it is used, which costs only an older entry's turn. */
static struct bc_shard *oldest_shard(struct bcache *c, uint8_t which, uint64_t *stamp)
{
	struct bc_shard *best = NULL;
	uint64_t best_stamp = UINT64_MAX;

	for (unsigned i = 0; i < BC_SHARDS; i++) {
		struct bc_shard *sh = &c->shard[i];
		struct bc_list *list = bc_shard_list(sh, which);

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
	if (stamp)
		*stamp = best_stamp;
	return best;
}

uint64_t bc_oldest_stamp(struct bcache *c, uint8_t which)
{
	uint64_t stamp;

	oldest_shard(c, which, &stamp);
	return stamp;
}

/* The order eviction looks at the lists in: data written and never read first, then 2Q's
 * probation before HOT, unless HOT holds more than three quarters of the clean bytes; dirty
 * last. */
#define VICTIM_LISTS 4
static void victim_order(struct bcache *c, uint8_t order[VICTIM_LISTS])
{
	uint64_t bytes = atomic_load_explicit(&c->bytes, memory_order_relaxed);
	uint64_t dirty = atomic_load_explicit(&c->dirty_bytes, memory_order_relaxed);
	uint64_t hot = atomic_load_explicit(&c->hot_bytes, memory_order_relaxed);
	uint64_t clean = bytes > dirty ? bytes - dirty : 0;
	bool hot_first = hot * 4 > clean * 3;

	order[0] = BC_GL_WRITTEN;
	order[1] = hot_first ? BC_GL_HOT : BC_GL_CLEAN;
	order[2] = hot_first ? BC_GL_CLEAN : BC_GL_HOT;
	order[3] = BC_GL_DIRTY;
}

struct bc_inode *bc_pick_oldest(struct bcache *c, const uint8_t *lists, int n, uint64_t *index,
				uint64_t *id, uint64_t *stamp)
{
	for (int k = 0; k < n; k++) {
		struct bc_shard *sh = oldest_shard(c, lists[k], NULL);
		if (!sh)
			continue;
		struct bc_list *list = bc_shard_list(sh, lists[k]);
		struct bc_inode *ino = NULL;

		pthread_mutex_lock(&sh->lock);
		if (!bc_list_empty(list)) {
			struct bc_entry *e = bc_container_of(list->next, struct bc_entry, glink);

			bc_list_del(&e->glink);
			bc_list_add_tail(list, &e->glink);
			if (stamp)
				*stamp = e->lstamp;
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

/* The cache's next victim: a clean one only when clean_only. */
static struct bc_inode *pick_victim(struct bcache *c, bool clean_only, uint64_t *index,
				    uint64_t *id)
{
	uint8_t order[VICTIM_LISTS];

	victim_order(c, order);
	return bc_pick_oldest(c, order, clean_only ? VICTIM_LISTS - 1 : VICTIM_LISTS, index, id,
			      NULL);
}

/* Is the cache over its bound? *entries (if asked): how many it holds. */
static bool over_limit(struct bcache *c, uint64_t *entries)
{
	if (entries)
		*entries = atomic_load_explicit(&c->entries, memory_order_relaxed);
	return bc_load(&c->bytes) + bc_load(&c->reserve_bytes) > c->limit;
}

/* One attempt on the next victim of the whole cache (any inode: its own handle does the I/O).
 * false when there is nothing left to try; *rc gets a failed write's -errno. */
static bool evict_oldest_of_cache(struct bcache *c, bool clean_only, bool fill, int *rc)
{
	uint64_t index, id;
	struct bc_inode *ino;
	struct bc_entry *e;

	ino = pick_victim(c, clean_only, &index, &id);
	if (!ino)
		return false;
	co_mutex_lock(&ino->lock);
	e = bc_map_find(&ino->map, index);
	if (e && e->id == id && !(clean_only && e->dirty))
		evict(ino, e, ino->handles, fill, rc);
	co_mutex_unlock(&ino->lock);
	bc_inode_unpin(ino);
	return true;
}

bool bc_over_limit(struct bcache *c)
{
	return over_limit(c, NULL);
}

/* Up to CLEAN_BATCH of the oldest entries of a shard's clean (or HOT) list that belong to *ino,
 * or, when *ino is NULL, to the inode of its oldest entry, which is then pinned (listed, so alive
 * while the shard lock is held). By index and id: they are checked again under the inode's lock.
 * How many. */
#define CLEAN_BATCH 64
static size_t collect_clean(struct bcache *c, struct bc_shard *sh, uint8_t which,
			    struct bc_inode **ino, uint64_t *index, uint64_t *id)
{
	struct bc_list *list = bc_shard_list(sh, which);
	size_t n = 0;
	int looked = 0;

	pthread_mutex_lock(&sh->lock);
	for (struct bc_list *l = list->next; l != list && n < CLEAN_BATCH && looked < 4 * CLEAN_BATCH;
	     l = l->next, looked++) {
		struct bc_entry *e = bc_container_of(l, struct bc_entry, glink);

		if (!*ino) {
			*ino = e->ino;
			pthread_mutex_lock(&c->lock);
			e->ino->refs++;
			pthread_mutex_unlock(&c->lock);
		}
		if (e->ino == *ino) {
			index[n] = e->index;
			id[n++] = e->id;
		}
	}
	pthread_mutex_unlock(&sh->lock);
	return n;
}

/* Which bound clean blocks are freed for. */
enum bound { BOUND_FILE, BOUND_CACHE, BOUND_WRITTEN };

/* WRITTEN holds more than its share, or more than its floor while frames are short: the memory
 * of written data goes to new frames before the cache maps more (bc_reserve.c). */
static bool written_over(struct bcache *c)
{
	uint64_t w = bc_load(&c->written_bytes);

	return w > c->written_limit || (w > c->written_floor && bc_reserve_low(c));
}

static bool bound_passed(struct bc_inode *ino, enum bound b)
{
	struct bcache *c = ino->cache;

	switch (b) {
	case BOUND_FILE:
		return ino->bytes > c->file_limit;
	case BOUND_WRITTEN:
		return written_over(c);
	default:
		return over_limit(c, NULL);
	}
}

struct frame_rest {
	struct bcache_buf *frame;
	size_t freed;
};

static bool free_in_frame(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	struct frame_rest *fr = arg;

	if (e->buf == fr->frame && !e->dirty && !e->busy && !e->hot) {
		bc_entry_free(ino, e);
		fr->freed++;
	}
	return true;
}

/* The written data of a frame goes with the rest of the frame's clean blocks that nobody read:
 * the frame's memory comes back only with its last block, and freeing the oldest written blocks
 * alone, spread over many frames, freed few of them while new frames were mapped (32 writers,
 * 4 in flight each: 337 frames opened for 256 frames of data, 181 of them fresh). How many went,
 * e among them. Inode lock held. */
static size_t free_with_frame(struct bc_inode *ino, struct bc_entry *e)
{
	struct frame_rest fr = { e->buf, 0 };

	if (!e->buf || !bc_buf_is_frame(e->buf)) {
		bc_entry_free(ino, e);
		return 1;
	}
	uint64_t per = BC_FRAME_BYTES >> ino->bshift, first = e->index / per * per;
	bc_map_range(ino, first, first + per - 1, free_in_frame, &fr);
	return fr.freed;
}

/* Free those of the collected entries that are still the same clean blocks, while the bound is
 * passed (for the written share, with the rest of their frames). Inode lock held. How many
 * went. */
static size_t free_collected(struct bc_inode *ino, const uint64_t *index, const uint64_t *id,
			     size_t n, enum bound b)
{
	size_t freed = 0;

	for (size_t i = 0; i < n && bound_passed(ino, b); i++) {
		struct bc_entry *e = bc_map_find(&ino->map, index[i]);

		if (!e || e->id != id[i] || e->dirty || e->busy)
			continue;
		if (b == BOUND_WRITTEN) {
			size_t k = free_with_frame(ino, e);
			bc_count_add(&ino->cache->n.written_trimmed, k);
			freed += k;
		} else {
			bc_entry_free(ino, e);
			freed++;
		}
	}
	return freed;
}

/* Free the inode's oldest clean blocks (written and unread first, then 2Q's probation list; its
 * shard's, where other inodes' are passed over), a batch at a time. Whether any went. Inode
 * lock held. */
/* One batch of the inode's oldest blocks of list `which` in its shard, freed while bound b is
 * passed. How many went. Inode lock held. */
static size_t free_batch_of_inode(struct bc_inode *ino, uint8_t which, enum bound b)
{
	uint64_t index[CLEAN_BATCH], id[CLEAN_BATCH];
	size_t n = collect_clean(ino->cache, &ino->cache->shard[ino->shard], which, &ino, index, id);

	return free_collected(ino, index, id, n, b);
}

static bool free_clean_of_inode(struct bc_inode *ino)
{
	return free_batch_of_inode(ino, BC_GL_WRITTEN, BOUND_FILE) > 0 ||
	       free_batch_of_inode(ino, BC_GL_CLEAN, BOUND_FILE) > 0;
}

/* Clean blocks first, at no cost; only then dirty ones (written: a chunk still filling is cut),
 * and partial ones last. */
bool bc_reclaim_file(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;
	bool wrote = false;

	co_mutex_lock(&ino->lock);
	while (ino->bytes > ino->cache->file_limit && free_clean_of_inode(ino))
		;
	while (ino->bytes > ino->cache->file_limit && evict_oldest_of_inode(h))
		wrote = true;
	co_mutex_unlock(&ino->lock);
	return wrote;
}

/* The oldest clean blocks of list `which`, freed a batch at a time: those of the inode of its
 * oldest one, under one hold of that inode's lock. One block per hold made a cold scan through a
 * full cache hand the file's lock between rings for every 4 KiB (a wake-up across rings each:
 * 13% of the daemon's time). Whether any went. */
static bool free_clean_batch(struct bcache *c, uint8_t which, enum bound b)
{
	struct bc_shard *sh = oldest_shard(c, which, NULL);
	uint64_t index[CLEAN_BATCH], id[CLEAN_BATCH];
	struct bc_inode *ino = NULL;

	if (!sh)
		return false;
	size_t n = collect_clean(c, sh, which, &ino, index, id);
	if (!ino)
		return false;
	co_mutex_lock(&ino->lock);
	size_t freed = free_collected(ino, index, id, n, b);
	co_mutex_unlock(&ino->lock);
	bc_inode_unpin(ino);
	return freed > 0;
}

void bc_reclaim_clean(struct bcache *c)
{
	uint8_t order[VICTIM_LISTS];

	bc_reserve_trim(c);
	victim_order(c, order);
	for (int k = 0; k < VICTIM_LISTS - 1; k++)
		while (over_limit(c, NULL) && free_clean_batch(c, order[k], BOUND_CACHE))
			;
}

/* Freed a batch at a time under the file's lock, which under many writers is a queue: a WRITE
 * that had to queue once more for it freed one batch per round of the queue while every WRITE
 * of the round wrote more (128 writers, 4 WRITEs in flight each: written data grew to 344 MiB
 * against its share of 128, the frames it held never came back to the reserve, and new ones
 * were mapped and cleared). So a WRITE frees its own file's oldest written blocks while it
 * holds the lock anyway, up to a few batches: more than it adds; bc_trim_written, after, sees
 * to other files'. */
#define TRIM_BATCHES 4
void bc_trim_written_of(struct bc_inode *ino)
{
	for (int k = 0; k < TRIM_BATCHES && written_over(ino->cache); k++)
		if (!free_batch_of_inode(ino, BC_GL_WRITTEN, BOUND_WRITTEN))
			return;
}

void bc_trim_written(struct bcache *c)
{
	while (written_over(c) && free_clean_batch(c, BC_GL_WRITTEN, BOUND_WRITTEN))
		;
}

int bc_reclaim(struct bcache_file *h)
{
	struct bcache *c = h->ino->cache;
	uint64_t tries;
	int rc = 0;

	bc_reclaim_file(h);
	bc_reserve_trim(c);
	/* Each entry gets one try at most per round, so entries that cannot go now (busy, under a
	 * middle) do not keep us spinning; partial blocks are completed (read) only in the second
	 * round, when nothing else made room. */
	for (int fill = 0; fill < 2; fill++) {
		if (!over_limit(c, &tries))
			return rc;
		while (tries-- > 0 && rc == 0 && evict_oldest_of_cache(c, false, fill, &rc) &&
		       over_limit(c, NULL))
			;
	}
	return rc;
}
