/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Write-behind: which dirty data goes to disk before anyone asks, and who waits for room.
 *
 * Two sources of work. A chunk (BC_CHUNK bytes, aligned) whose every block became ready is queued
 * the moment it does (bc_chunk.c) and written as one run: sequential and interleaved writers
 * produce these steadily, and the device gets 1 MiB writes as soon as they can be formed. Past a
 * quarter of the bound in dirty bytes, the oldest dirty data goes too, as the longest run around
 * it: data that will never fill a chunk (the tail of a file, sparse writes) does not sit until
 * COMMIT while memory fills. Whoever calls bcache_writeback() does the I/O (the server:
 * [cache] writeback_depth fibers in all, started when bcache_writeback_wanted()). */
#include <errno.h>

#include "bc_internal.h"
#include "io/fiber.h"

bool bc_wbq_push(struct bc_inode *ino, uint64_t chunk)
{
	struct bcache *c = ino->cache;
	struct bc_wbq *q = &c->wbq;
	bool taken = false;

	pthread_mutex_lock(&q->lock);
	if (q->n < BC_WBQ) {
		q->v[(q->head + q->n) % BC_WBQ] = (struct bc_wbq_item){ ino, chunk };
		q->n++;
		taken = true;
	}
	pthread_mutex_unlock(&q->lock);
	if (taken) {
		pthread_mutex_lock(&c->lock);
		ino->refs++;
		pthread_mutex_unlock(&c->lock);
	}
	return taken;
}

static bool wbq_pop(struct bcache *c, struct bc_wbq_item *out)
{
	struct bc_wbq *q = &c->wbq;
	bool got = false;

	pthread_mutex_lock(&q->lock);
	if (q->n) {
		*out = q->v[q->head];
		q->head = (q->head + 1) % BC_WBQ;
		q->n--;
		got = true;
	}
	pthread_mutex_unlock(&q->lock);
	return got;
}

void bc_wbq_drain(struct bcache *c)
{
	struct bc_wbq_item it;

	while (wbq_pop(c, &it))
		bc_inode_unpin(it.ino);
}

/* When the oldest dirty data goes without waiting for a chunk: past a quarter of the bound in
 * dirty blocks, or once the cache is three quarters full and holds any (what is written can be
 * evicted at no cost when WRITEs need the room; what is dirty cannot). */
static bool past_threshold(struct bcache *c)
{
	uint64_t dirty = bc_load(&c->dirty_bytes);

	/* (only blocks that are ready can go: partial ones wait for their neighbours) */
	if (!bc_load(&c->nready))
		return false;
	return dirty > c->limit / 4 || bc_load(&c->bytes) > c->limit / 4 * 3;
}

/* Dirty data nobody completes or overwrites goes once it is older than young_ns, below any
 * threshold: a random writer's blocks will find no neighbours, and until its COMMIT the device
 * would idle while they wait (40000 random 4 KiB WRITEs: their COMMIT alone took 0.9 of 2.4 s,
 * all of it after the last WRITE). A chunk being filled closes well within young_ns (bc_hold_ahead
 * holds on the same clock), and one that does not has a hole nobody is filling. Sampled at most
 * every quarter of young_ns by whichever WRITE comes, so a WRITE reads the clock and nothing
 * more; the sample looks at every shard's oldest dirty entry. */
static void age_sample(struct bcache *c, uint64_t now)
{
	struct bc_age *a = &c->age;
	uint64_t due = atomic_load_explicit(&a->due_ns, memory_order_relaxed), before = 0;

	if (now < due || !atomic_compare_exchange_strong(&a->due_ns, &due, now + c->young_ns / 4))
		return;
	pthread_mutex_lock(&a->lock);
	a->v[a->next++ % BC_AGE_SAMPLES] = (struct bc_age_sample){bc_load(&c->stamp), now};
	for (unsigned i = 0; i < BC_AGE_SAMPLES; i++)
		if (a->v[i].ns && a->v[i].ns + c->young_ns <= now && a->v[i].stamp > before)
			before = a->v[i].stamp;
	pthread_mutex_unlock(&a->lock);
	atomic_store(&a->before, before);
	if (before && bc_oldest_stamp(c, BC_GL_DIRTY) < before)
		atomic_store(&a->overdue, true);
}

bool bcache_writeback_wanted(struct bcache *c)
{
	struct bc_wbq *q = &c->wbq;

	if (atomic_load_explicit(&q->n, memory_order_relaxed) || past_threshold(c))
		return true;
	if (!bc_load(&c->nready))
		return false;
	age_sample(c, fiber_now_ns());
	return atomic_load(&c->age.overdue);
}

/* Sync behind. The data a file's writers leave unsynced is flushed by its COMMIT, and the device
 * takes that flush in time that grows with it (a loop device over XFS: about 0.45 ms per MiB
 * written since the last flush, 230 ms for 512 MiB), while the writers wait and the device has
 * nothing else to do. Synced as the data goes, a COMMIT's flush is short and the earlier ones
 * overlapped the writes (128 writers of 47008-byte records, 4 in flight each, into a fresh
 * file: 434-611 MiB/s without, 587-675 with a sync every 32 MiB). Only the cache's runs count
 * (write-behind, the bound, COMMIT's walk): middles WRITEs write straight come as a stream that
 * keeps the device busy, and a flush among them only delays them (2 GiB of 1 MiB WRITEs: 990-1018
 * MiB/s with, 1021-1175 without). A write-behind fiber syncs, never a WRITE: no client waits for
 * it. It makes nothing durable that a client counts on, so its failure is the next COMMIT's to
 * report (the kernel reports a failed writeback once per open file: the COMMIT's own sync would
 * not see it). Off unless set ([cache] sync_behind): at 32 MiB the bench's 47008-byte UNSTABLE
 * cases went a sixth faster, at a sixth more of the daemon's CPU per GiB (the records a flush
 * holds up while it runs), which its CPU goal cannot spare.
 *
 * Only while write-behind keeps up: once dirty data reaches half the dirty threshold, or a WRITE
 * waits for room, the device is what limits the writers, and a flush would hold its queue still
 * while the cache filled (a loop device queues writes behind a flush): 24 GiB written by 32
 * writers into a daemon capped at 1 GiB ran its last third at 0.46 of its first, and the bound
 * read 8664 partial blocks back to complete them; with this rule, 1.05 and 2. */
static bool device_keeps_up(struct bcache *c)
{
	return !atomic_load_explicit(&c->room_waiters, memory_order_relaxed) &&
	       bc_load(&c->dirty_bytes) <= c->limit / 8;
}

void bc_wrote(struct bcache_file *h, uint64_t bytes)
{
	struct bc_inode *ino = h->ino;
	uint64_t every = ino->cache->sync_behind;

	if (h->mode != BCACHE_BEHIND || every == 0)
		return;
	ino->unsynced += bytes;
	if (ino->unsynced >= every && !ino->sync_queued && device_keeps_up(ino->cache) &&
	    bc_wbq_push(ino, BC_WBQ_SYNC))
		ino->sync_queued = true;
}

/* A failed write or sync behind: counted, and the first such error kept for the inode's next
 * COMMIT or stable WRITE to report. Inode lock held. */
static void wb_report(struct bc_inode *ino, int err)
{
	bc_count(&ino->cache->n.wb_failures);
	if (!ino->wb_err)
		ino->wb_err = err;
}

/* The queued sync, unless a COMMIT's synced most of it meanwhile or the device fell behind. 0
 * or -errno. */
static ssize_t sync_behind(struct bc_inode *ino)
{
	struct bcache *c = ino->cache;
	struct bcache_file *h;
	int rc = 0;

	co_mutex_lock(&ino->lock);
	ino->sync_queued = false;
	h = ino->handles;
	if (h && !ino->wb_stuck && ino->unsynced >= c->sync_behind / 2 && device_keeps_up(c)) {
		ino->unsynced = 0;
		h->inflight++;   /* keeps h open (bcache_file_close waits) */
		co_mutex_unlock(&ino->lock);
		rc = bc_io_result(c, c->ops.sync(h->io, true));
		co_mutex_lock(&ino->lock);
		h->inflight--;
		co_cond_broadcast(&ino->cond);
		bc_count(&c->n.syncs_behind);
		if (rc < 0)   /* the writes worked: write-behind goes on (no wb_stuck) */
			wb_report(ino, rc);
	}
	co_mutex_unlock(&ino->lock);
	bc_inode_unpin(ino);
	return rc;
}

/* Bytes written, 0 for an empty run, or -errno. */
static ssize_t run_write(struct bc_inode *ino, struct bc_run *r, struct bcache_file *h)
{
	if (r->n == 0)
		return 0;
	int rc = bc_run_write(ino, r, h);
	return rc ? rc : (ssize_t)(r->n * ino->bs);
}

/* Write the run of ready blocks of chunk, and of the chunks after it that are whole too, up to a
 * run's length; never part of a chunk still filling, which would then never be whole. Inode
 * lock held. Bytes written or -errno. */
static ssize_t write_chunk(struct bc_inode *ino, uint64_t chunk, struct bcache_file *h)
{
	uint64_t per = (uint64_t)1 << ino->chunk_shift, first = chunk << ino->chunk_shift;
	uint64_t last = first + per - 1;
	struct bc_run r;

	while ((last - first + 1) + per <= BC_RUN_MAX && bc_chunk_whole(ino, (last + 1) >> ino->chunk_shift))
		last += per;
	bc_run_collect(ino, first, last, false, &r);
	return run_write(ino, &r, h);
}

/* The longest ready run around index (partial blocks wait for their neighbours: only COMMIT and
 * the bound fill them). Inode lock held. */
static ssize_t write_around(struct bc_inode *ino, uint64_t index, struct bcache_file *h)
{
	struct bc_entry *e = bc_map_find(&ino->map, index);
	struct bc_run r;

	if (!e || !bc_entry_ready(ino, e))
		return 0;
	bc_run_around(ino, index, UINT64_MAX, false, &r);
	return run_write(ino, &r, h);
}

/* A failed write-behind: the blocks stay dirty (bc_run_write), the inode stops queueing chunks,
 * eviction passes its dirty blocks over, WRITEs past the bound are refused (bc_write.c), and its
 * next COMMIT or stable WRITE reports the error. */
ssize_t bc_wb_failed(struct bc_inode *ino, ssize_t n)
{
	if (n < 0) {
		wb_report(ino, (int)n);
		ino->wb_stuck = (int)n;
	}
	return n;
}

/* Interleaved writers drift apart (a random walk), and every chunk between the writers ahead and
 * the one behind waits, open, for the one behind: past a spread the cache cannot hold, the dirty
 * threshold cuts them all into short runs (32 writers of 47008-byte records in a 256 MiB cache:
 * no write of 1 MiB after the first 5 s). So once a file whose WRITEs land next to each other's
 * has more than spread_chunks young open chunks, a WRITE that opened another (its writer
 * is ahead) waits for one chunk to close before it is answered, the holds in turn: the front
 * moves no faster than the back. A hold is short (a chunk closes every 2 ms at 600 MiB/s; at
 * most hold_ns): a long one would make its writer the one behind. A chunk open for longer than
 * young_ns has a hole nobody is filling now (a chunk cut by the bound, whose partial blocks
 * came late; a writer that stopped) and holds nobody back: the dirty threshold writes it.
 * Random writers, whose WRITEs land apart, are never held. */
void bc_hold_ahead(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;
	struct bcache *c = ino->cache;
	size_t most = c->spread_chunks;

	if (bc_chunks_open(ino) <= most || !bc_interleaved(ino))
		return;
	uint64_t now = fiber_now_ns();
	if (bc_chunks_young(ino, now, c->young_ns) <= most)
		return;
	bc_count(&c->n.spread_holds);
	uint64_t target = ino->chunks.closes + ino->window_waiters + 1, deadline = now + c->hold_ns;
	ino->window_waiters++;
	while (ino->chunks.closes < target && co_cond_wait(&ino->window, &ino->lock, deadline))
		;
	ino->window_waiters--;
}

/* How long a chunk of a file filled side by side may take to close before its old dirty blocks
 * go anyway (the age rule alone would cut it at young_ns): writers drift apart further on a busy
 * machine or with several WRITEs in flight each (32 writers, 4 in flight, 47008-byte records,
 * the machine loaded: a third of the runs under 512 KiB at young_ns). */
#define FILLING_NS(c) (5 * (c)->young_ns)

/* Write the queued whole chunk (chunk), else the longest ready run around block `at`; an aged
 * pick (below the thresholds) passes over a chunk its file's writers are still filling. Bytes
 * written, 0, or -errno. */
static ssize_t writeback_in(struct bc_inode *ino, bool chunk, uint64_t at, bool aged)
{
	ssize_t n = 0;

	co_mutex_lock(&ino->lock);
	/* With no handle there is nothing to write through (the last close wrote everything);
	 * while its writes fail the data waits for the COMMIT that reports it. */
	if (!ino->handles || ino->wb_stuck)
		;
	else if (chunk)
		n = bc_wb_failed(ino, write_chunk(ino, at, ino->handles));
	else if (!aged || !bc_interleaved(ino) ||
		 !bc_chunk_filling(ino, at >> ino->chunk_shift, fiber_now_ns(),
				   FILLING_NS(ino->cache)))
		n = bc_wb_failed(ino, write_around(ino, at, ino->handles));
	co_mutex_unlock(&ino->lock);
	bc_inode_unpin(ino);
	return n;
}

ssize_t bcache_writeback(struct bcache *c)
{
	struct bc_wbq_item it;
	uint64_t index;

	while (wbq_pop(c, &it)) {
		ssize_t n = it.chunk == BC_WBQ_SYNC ? sync_behind(it.ino)
						    : writeback_in(it.ino, true, it.chunk, false);
		if (n != 0)
			return n;
	}
	static const uint8_t dirty[] = { BC_GL_DIRTY };
	for (int tries = 0; tries < 8; tries++) {
		bool over = past_threshold(c);
		uint64_t id, stamp;

		if (!over && !atomic_load(&c->age.overdue))
			break;
		struct bc_inode *ino = bc_pick_oldest(c, dirty, 1, &index, &id, &stamp);
		if (!ino || (!over && stamp >= atomic_load(&c->age.before))) {
			if (!over)   /* the oldest is young, or none is left: nothing is due */
				atomic_store(&c->age.overdue, false);
			if (ino)
				bc_inode_unpin(ino);
			break;
		}
		ssize_t n = writeback_in(ino, false, index, !over);
		if (n != 0)
			return n;
	}
	return 0;
}

void bc_room_made(struct bcache *c)
{
	if (!atomic_load_explicit(&c->room_waiters, memory_order_relaxed))
		return;
	co_mutex_lock(&c->room_lock);
	co_cond_broadcast(&c->room);
	co_mutex_unlock(&c->room_lock);
}

/* Over the bound with nothing this WRITE could write or free itself (every dirty block on its
 * way already): wait for those writes, at most a while, then look again. */
#define ROOM_WAIT_NS (50 * 1000 * 1000ull)
void bc_room_wait(struct bcache *c)
{
	uint64_t deadline = fiber_now_ns() + ROOM_WAIT_NS;   /* CLOCK_MONOTONIC, any thread */
	atomic_fetch_add_explicit(&c->room_waiters, 1, memory_order_relaxed);
	co_mutex_lock(&c->room_lock);
	if (atomic_load_explicit(&c->inflight_bytes, memory_order_relaxed))
		co_cond_wait(&c->room, &c->room_lock, deadline);
	co_mutex_unlock(&c->room_lock);
	atomic_fetch_sub_explicit(&c->room_waiters, 1, memory_order_relaxed);
}
