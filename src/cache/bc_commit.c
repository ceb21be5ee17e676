/* SPDX-License-Identifier: GPL-2.0-or-later */
/* COMMIT, SETATTR size and REMOVE: the calls that change what is cached without a WRITE. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bc_bits.h"
#include "bc_internal.h"

static bool drop_eof_image(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	uint64_t end = *(const uint64_t *)arg;
	uint32_t first_missing = e->bits ? bc_bits_find(e->bits, 0, ino->bs, false) : ino->bs;

	if (first_missing < ino->bs && !e->dirty && !e->busy &&
	    bc_block_off(ino, e->index) + first_missing >= end)
		bc_entry_free(ino, e);
	return true;
}

/* The image of the file's last block, completed with zeros past the end of file, waits for an
 * append that may never come: a COMMIT of the whole file lets it go (the append, if it comes,
 * reads the block back once), so that nothing is held once a client has committed everything.
 * An image with a hole before the end of file stays for the WRITE that fills the hole. */
static void drop_eof_images(struct bc_inode *ino)
{
	uint64_t end = bc_logical_end(ino);

	bc_map_range(ino, end ? (end - 1) >> ino->bshift : 0, UINT64_MAX, drop_eof_image, &end);
}

/* Has nothing of the file been written since its last sync? Then a round whose one write syncs
 * itself needs no sync of its own. A file this cache has not written (since the inode was made)
 * with nothing on disk has nothing to sync either: a new file's first COMMIT. */
static bool all_synced(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;

	if (ino->synced_wseq == BC_WSEQ_UNKNOWN && ino->wseq == 0 &&
	    ino->cache->ops.disk_size(h->io) == 0)
		ino->synced_wseq = 0;
	return ino->synced_wseq == ino->wseq;
}

/* The round's sync, unless its one write synced itself (synced) and no other write landed since
 * the last sync (seq: wseq before the round's writes). 0 or -errno. Lock held, dropped
 * meanwhile. */
static int round_sync(struct bcache_file *h, enum bcache_sync how, bool synced, uint64_t seq)
{
	struct bc_inode *ino = h->ino;
	int rc;

	ino->unsynced = 0;   /* a sync behind queued meanwhile has little left to do */
	if (synced && ino->wseq == seq + 1) {
		ino->synced_wseq = ino->wseq;
		bc_count(&ino->cache->n.sync_writes);
		return 0;
	}
	uint64_t at = ino->wseq;
	co_mutex_unlock(&ino->lock);
	rc = bc_io_result(ino->cache, ino->cache->ops.sync(h->io, how == BCACHE_SYNC_DATA));
	co_mutex_lock(&ino->lock);
	if (rc == 0)
		ino->synced_wseq = at;
	return rc;
}

/* Write what the ranges need, sync (unless how is BCACHE_SYNC_NONE), and settle what got written.
 * through: a THROUGH handle asked (its completed blocks are freed once durable); whole: a COMMIT
 * of the whole file asked. Called and returns with the lock (dropped meanwhile). */
static int write_and_sync(struct bcache_file *h, struct bc_range *r, size_t n, enum bcache_sync how,
			  bool through, bool whole)
{
	struct bc_inode *ino = h->ino;
	enum bcache_sync lone = how != BCACHE_SYNC_NONE && all_synced(h) ? how : BCACHE_SYNC_NONE;
	uint64_t seq = ino->wseq;
	struct bc_written *done;
	size_t ndone;
	bool synced;
	int rc, src = 0;

	rc = bc_flush_ranges(h, r, n, lone, &done, &ndone, &synced);
	/* Failed, it leaves the file stuck as a write-behind would: the stable WRITEs that follow
	 * are refused past the bound instead of adding to what cannot go. */
	ino->wb_stuck = rc;
	/* Synced even after a failed write: what did get written is still made durable. */
	if (how != BCACHE_SYNC_NONE)
		src = round_sync(h, how, synced, seq);
	if (src && ndone)
		bc_flush_undo(ino, done, ndone);   /* written, maybe not durable: the next COMMIT's */
	if ((ndone || whole) && src == 0 && through) {
		bc_flush_settle(ino, done, ndone);
		/* (BEHIND keeps clean blocks for READs anyway: the last one stays too.) */
		if (whole && rc == 0)
			drop_eof_images(ino);
	}
	free(done);
	return rc ? rc : src;
}

/* A caller of bcache_commit waiting for a round, on its own stack. */
struct bc_sync_req {
	struct bc_sync_req *next;
	struct bc_range range;
	enum bcache_sync how;
	bool through, whole;
	bool done;
	int rc;
};

/* One round for every caller queued now: all their ranges written together (neighbours' blocks
 * in one run, several runs at once), then one sync, whose outcome is each one's answer. */
static void sync_round(struct bcache_file *h)
{
	struct bc_sync_group *g = &h->ino->sync;
	struct bc_sync_req *q = g->queue;
	enum bcache_sync how = BCACHE_SYNC_DATA;
	bool through = false, whole = false;
	size_t n = 0;

	g->queue = NULL;
	g->running = true;
	for (struct bc_sync_req *r = q; r; r = r->next)
		n++;
	struct bc_range *ranges = malloc(n * sizeof(*ranges));
	int rc = -ENOMEM;
	if (ranges) {
		n = 0;
		for (struct bc_sync_req *r = q; r; r = r->next) {
			ranges[n++] = r->range;
			if (r->how == BCACHE_SYNC_FILE)
				how = BCACHE_SYNC_FILE;
			through |= r->through;
			whole |= r->whole;
		}
		rc = write_and_sync(h, ranges, n, how, through, whole);
		free(ranges);
	}
	for (struct bc_sync_req *r = q, *next; r; r = next) {
		next = r->next;   /* (r is gone once its caller sees done) */
		r->rc = rc;
		r->done = true;
	}
	g->running = false;
	co_cond_broadcast(&g->done);
}

/* Group commit. Callers that come while a round runs queue for the next one, whose first caller
 * to get the lock writes and syncs for them all: with many stable WRITEs on a file, the device
 * gets their blocks as long runs and one sync answers them. (Writing at once and sharing only
 * the sync cost a sync per dozen 47008-byte FILE_SYNC WRITEs among 128 in flight. Letting the
 * next round write while this one syncs made the rounds smaller, not faster: 1.5x the syncs,
 * 8% less MiB/s; waiting 1 or 3 ms for more callers before a round, 9% and 16% less; waiting
 * for the writers the last round answered, up to a quarter of its time and at most 2 ms, no
 * faster on an idle machine or a loaded one: 32 writers of 47008-byte FILE_SYNC records, one in
 * flight each, 215-298 MiB/s against 221-332.) */
static int commit_shared(struct bcache_file *h, struct bc_range range, enum bcache_sync how,
			 bool whole)
{
	struct bc_sync_group *g = &h->ino->sync;
	struct bc_sync_req me = { .next = g->queue, .range = range, .how = how,
				  .through = h->mode == BCACHE_THROUGH, .whole = whole };

	g->queue = &me;
	while (!me.done) {
		if (g->running)
			co_cond_wait(&g->done, &h->ino->lock, 0);
		else
			sync_round(h);
	}
	return me.rc;
}

int bcache_commit(struct bcache_file *h, uint64_t off, uint64_t count, enum bcache_sync how)
{
	struct bc_inode *ino = h->ino;
	struct bc_range range = { off >> ino->bshift, UINT64_MAX };
	bool whole = off == 0 && count == 0;
	int rc;

	if (count && off + (count - 1) >= off)
		range.last = (off + (count - 1)) >> ino->bshift;
	co_mutex_lock(&ino->lock);
	/* A write-behind that failed since the last COMMIT is this one's to report (its blocks are
	 * still dirty, and written again below): the client resends, as the verifier changes. */
	int werr = ino->wb_err;
	ino->wb_err = 0;
	if (how == BCACHE_SYNC_NONE)
		rc = write_and_sync(h, &range, 1, how, h->mode == BCACHE_THROUGH, whole);
	else
		rc = commit_shared(h, range, how, whole);
	co_mutex_unlock(&ino->lock);
	return werr ? werr : rc;
}

static bool spans_past(const struct bc_inode *ino, uint64_t size)
{
	for (const struct bc_span *s = ino->spans; s; s = s->next)
		if (s->end > size)
			return true;
	return false;
}

static bool drop_entry(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	(void)arg;
	bc_entry_free(ino, e);
	return true;
}

/* Forget bytes [a, bs) of e: a whole or filled image takes the zeros the truncated disk has there
 * (copied first when a READ reply still sends it). 0, or -ENOMEM with e unchanged (it may be
 * dirty: nothing of it can be dropped). */
static int trim(struct bc_inode *ino, struct bc_entry *e, uint32_t a)
{
	if (bc_entry_own(ino, e))
		return -ENOMEM;
	if (e->bits)
		e->nwritten -= bc_bits_change(e->bits, a, ino->bs, false);
	if (!e->bits || e->filled)
		memset(e->data + a, 0, ino->bs - a);
	bc_readers_stale(ino, e->index);
	if (e->bits && !e->filled && e->nwritten == 0)
		bc_entry_free(ino, e);
	return 0;
}

/* Waits for entry writes (any may extend the file) and for middles reaching past the new size,
 * so that none lands after the truncate and brings old bytes back. */
int bcache_truncate(struct bcache_file *h, uint64_t new_size)
{
	struct bc_inode *ino = h->ino;
	uint64_t mask = ino->bs - 1, first_gone = (new_size >> ino->bshift) + ((new_size & mask) != 0);
	struct bc_entry *e;
	int rc;

	co_mutex_lock(&ino->lock);
	while (ino->nbusy || spans_past(ino, new_size))
		bc_wait(ino);
	e = bc_map_find(&ino->map, new_size >> ino->bshift);
	if (e && (new_size & mask) && (rc = trim(ino, e, (uint32_t)(new_size & mask))) != 0) {
		co_mutex_unlock(&ino->lock);   /* before anything changed */
		return rc;
	}
	bc_map_range(ino, first_gone, UINT64_MAX, drop_entry, NULL);
	bc_frames_close(ino);   /* slots of dropped blocks are used: a rewrite starts new frames */
	if (ino->hint > new_size)
		ino->hint = new_size;
	ino->wseq++;
	rc = bc_io_result(ino->cache, ino->cache->ops.truncate(h->io, new_size));
	co_mutex_unlock(&ino->lock);
	return rc;
}

void bcache_file_retry(struct bcache_file *h)
{
	co_mutex_lock(&h->ino->lock);
	h->ino->wb_stuck = 0;
	co_mutex_unlock(&h->ino->lock);
}

void bcache_file_drop(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;

	co_mutex_lock(&ino->lock);
	while (ino->nbusy)
		bc_wait(ino);
	bc_entry_free_all(ino);
	ino->hint = 0;
	ino->wseq++;
	co_mutex_unlock(&ino->lock);
}

size_t bcache_file_entries(struct bcache_file *h)
{
	size_t n;

	co_mutex_lock(&h->ino->lock);
	n = h->ino->map.count;
	co_mutex_unlock(&h->ino->lock);
	return n;
}

size_t bcache_file_evict_clean(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;
	struct bc_list *l, *next;
	size_t n = 0;

	co_mutex_lock(&ino->lock);
	for (l = ino->age.next; l != &ino->age; l = next) {
		struct bc_entry *e = bc_container_of(l, struct bc_entry, ilink);

		next = l->next;
		if (!e->dirty && !e->busy) {
			bc_entry_free(ino, e);
			n++;
		}
	}
	co_mutex_unlock(&ino->lock);
	return n;
}

static bool let_go_entry(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	uint64_t end = *(const uint64_t *)arg;
	bool ends_inside = (end & (ino->bs - 1)) && e->index == end >> ino->bshift;

	if (!e->dirty && !e->busy && !ends_inside)
		bc_entry_free(ino, e);
	return true;
}

void bcache_file_let_go(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;

	co_mutex_lock(&ino->lock);
	uint64_t end = bc_logical_end(ino);
	bc_map_range(ino, 0, UINT64_MAX, let_go_entry, &end);
	co_mutex_unlock(&ino->lock);
}

static bool entry_partial(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	(void)arg;
	return !(e->dirty && !bc_entry_complete(ino, e));   /* false stops the walk: found one */
}

bool bcache_range_partial(struct bcache_file *h, uint64_t off, uint64_t count)
{
	struct bc_inode *ino = h->ino;
	uint64_t first = off >> ino->bshift, last = UINT64_MAX;
	bool partial;

	if (count && off + (count - 1) >= off)
		last = (off + (count - 1)) >> ino->bshift;
	co_mutex_lock(&ino->lock);
	partial = !bc_map_range(ino, first, last, entry_partial, NULL);
	co_mutex_unlock(&ino->lock);
	return partial;
}

static bool crowded_locked(const struct bc_inode *ino)
{
	return ino->bytes > ino->cache->file_limit / 2 && ino->win_completed * 4 >= ino->win_writes;
}

bool bcache_wait_partial(struct bcache_file *h, uint64_t off, uint64_t count, bool while_crowded,
			 uint64_t deadline_ns, struct co_kick *kick)
{
	struct bc_inode *ino = h->ino;
	uint64_t first = off >> ino->bshift, last = UINT64_MAX;
	bool waited_out = false;

	if (count && off + (count - 1) >= off)
		last = (off + (count - 1)) >> ino->bshift;
	struct bc_parked me = { .first = first, .last = last, .while_crowded = while_crowded };
	co_mutex_lock(&ino->lock);
	me.next = ino->parked;
	ino->parked = &me;
	ino->nparked++;
	/* Checked and waited for under one lock: an entry that completes in between still wakes us. */
	while (!bc_map_range(ino, first, last, entry_partial, NULL) &&
	       (!while_crowded || crowded_locked(ino)) && !(kick && kick->kicked)) {
		ino->parked_woken = false;
		if (!co_cond_wait_kickable(&me.cond, &ino->lock, deadline_ns, kick)) {
			waited_out = true;
			break;
		}
	}
	struct bc_parked **p = &ino->parked;
	while (*p != &me)
		p = &(*p)->next;
	*p = me.next;
	ino->nparked--;
	co_mutex_unlock(&ino->lock);
	return !waited_out;
}
