/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A ring's part of the file-system layer: its fibers of the server's own (write-behind, closing
 * handles), and the housekeeping of its handle cache between the ring's fibers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "cache/bcache.h"
#include "fs/fh.h"
#include "fs/fs_int.h"
#include "io/fiber.h"

#define SWEEP_SECONDS 10

static _Thread_local struct fs_chan *tls_chan;

void fs_chan_attach(struct fs_chan *ch, void *ring, struct io_ring *io, struct fiber_sched *sched)
{
	ch->ring = ring;
	ch->io = io;
	ch->sched = sched;
}

void fs_chan_bind(struct fs_chan *ch)
{
	tls_chan = ch;
}

struct fs_chan *fs_chan_self(void)
{
	return tls_chan;
}

int fs_chan_personality(void *ch)
{
	return cred_personality(ch);
}

void fs_chan_stop(struct fs_chan *ch)
{
	ch->stopping = true;
}

void fs_chan_end(struct fs_chan *ch)
{
	/* Closing the handles writes what the boundary cache still holds for them, through this
	 * ring (outside any fiber: each call waits in place), on its own thread, which is the only
	 * one that ever submits to it. */
	fh_cache_free(ch->fhc);
	ch->fhc = NULL;
}

/* ---- fibers of the server's own ---- */

/* A fiber of the ring's own, as the server: whatever fiber ran before, its I/O goes as the
 * server (the files are open), or as the cache's writer_begin op says while it writes a file;
 * saved across its waits. */
struct server_fiber {
	struct cred_saved as_server;
	void (*fn)(void *arg);
	void *arg;
};

static void server_fiber_main(void *p)
{
	struct server_fiber *sf = p;

	fiber_set_hooks(fiber_self(), cred_save, cred_restore, &sf->as_server);
	cred_restore(&sf->as_server);
	sf->fn(sf->arg);
	fiber_set_hooks(fiber_self(), NULL, NULL, NULL);
	free(sf);
}

int fs_spawn_as_server(struct fs_chan *ch, void (*fn)(void *arg), void *arg)
{
	struct server_fiber *sf = malloc(sizeof *sf);
	if (!sf)
		return -ENOMEM;
	*sf = (struct server_fiber){.as_server = {.ch = ch, .root = true, .set = true},
				    .fn = fn, .arg = arg};
	int rc = ch->fs->ops.spawn(ch->ring, server_fiber_main, sf);
	if (rc < 0)
		free(sf);
	return rc;
}

static void writeback_main(void *arg)
{
	struct fs_chan *ch = arg;
	struct fs *fs = ch->fs;
	while (!ch->stopping || bcache_writeback_wanted(fs->cache)) {
		ssize_t n = bcache_writeback(fs->cache);
		if (n == 0)
			break;
		if (n < 0)
			log_ratelimited(&fs->write_errors, LOG_WARNING,
					"write-behind failed: %s; the next COMMIT of the file reports it",
					strerror((int)-n));
	}
	atomic_fetch_sub(&fs->wb_fibers, 1);
}

/* Each write-behind fiber keeps one run (up to a few MiB) in flight. Their number is the
 * server's, not each ring's: the device's queue wants [cache] writeback_depth of them (as fio
 * keeps its iodepth), whatever the number of rings; more only queue COMMITs and READs behind
 * a wall of writes, fewer leave a fast device idle between runs (at 4 per ring on 2 rings,
 * cached 1 MiB sequential WRITEs ran at 0.53 of write_mode = direct's speed; at 16, 0.72-0.90). */
void fs_writeback(struct fs_chan *ch)
{
	struct fs *fs = ch->fs;
	unsigned n = atomic_load_explicit(&fs->wb_fibers, memory_order_relaxed);

	do {
		if (n >= fs->cfg->cache_writeback_depth)
			return;
	} while (!atomic_compare_exchange_weak(&fs->wb_fibers, &n, n + 1));
	/* Not spawned for lack of memory: COMMIT and the bound write the data instead. */
	if (fs_spawn_as_server(ch, writeback_main, ch) != 0)
		atomic_fetch_sub(&fs->wb_fibers, 1);
}

/* ---- handle-cache housekeeping, between requests ---- */

/* Close the handles the sweeps took out of the cache, on a fiber: closing waits for the file's
 * cache lock, which a fiber of this ring may hold. Then this ring's sweep counts as done. */
static void close_doomed_main(void *arg)
{
	struct fs_chan *ch = arg;

	while (fh_close_doomed(ch))
		;
	atomic_store(&ch->sweep_gen, ch->sweep_pending);
	ch->closing = false;
}

static void close_doomed(struct fs_chan *ch)
{
	if (ch->closing)
		return;
	if (!fh_doomed(ch)) {
		atomic_store(&ch->sweep_gen, ch->sweep_pending);
		return;
	}
	/* Not spawned for lack of memory: the next turn tries again. */
	if (fs_spawn_as_server(ch, close_doomed_main, ch) == 0)
		ch->closing = true;
}

/* Let go of handles of files deleted behind the handle cache's back (a local rm, or a REMOVE
 * through another ring): their space stays allocated while we hold them. Every SWEEP_SECONDS,
 * busy or not, and at once when a WRITE found the disk full (fs_sweep_everywhere). */
static void maybe_sweep(struct fs_chan *ch)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	unsigned gen = atomic_load(&ch->fs->sweep_gen);
	if (ch->closing || (now.tv_sec < ch->next_sweep && gen == atomic_load(&ch->sweep_gen)))
		return;
	ch->next_sweep = now.tv_sec + SWEEP_SECONDS;
	unsigned n = fh_sweep(ch);
	ch->sweep_pending = gen;
	if (n)
		log_debug("ring %u: closing %u handle(s) of deleted files", ch->id, n);
}

static void wake_others(struct fs_chan *self)
{
	struct fs *fs = self->fs;
	for (unsigned i = 0; i < fs->nchans; i++)
		if (&fs->chans[i] != self && fs->chans[i].ring)
			fs->ops.wake(fs->chans[i].ring);
}

void fs_forget_everywhere(struct fs_chan *self, dev_t dev, uint64_t ino)
{
	struct forget_ring *f = self->fs->forgets;
	pthread_mutex_lock(&f->lock);
	uint64_t s = atomic_load(&f->seq);
	f->ent[s % FORGET_RING].dev = dev;
	f->ent[s % FORGET_RING].ino = ino;
	atomic_store(&f->seq, s + 1);
	pthread_mutex_unlock(&f->lock);
	self->forget_seq += self->forget_seq == s;   /* ours is done already */
	wake_others(self);
}

/* Apply what other rings published; fallen too far behind, sweep everything instead. */
static void apply_forgets(struct fs_chan *ch)
{
	struct forget_ring *f = ch->fs->forgets;
	uint64_t end = atomic_load(&f->seq);
	if (ch->forget_seq == end)
		return;
	if (end - ch->forget_seq > FORGET_RING) {
		fh_sweep(ch);
		ch->forget_seq = end;
		return;
	}
	pthread_mutex_lock(&f->lock);
	for (; ch->forget_seq < end; ch->forget_seq++)
		fh_forget(ch, f->ent[ch->forget_seq % FORGET_RING].dev,
			  f->ent[ch->forget_seq % FORGET_RING].ino);
	pthread_mutex_unlock(&f->lock);
}

void fs_sweep_everywhere(struct fs_chan *self, bool wait)
{
	struct fs *fs = self->fs;
	unsigned gen = atomic_fetch_add(&fs->sweep_gen, 1) + 1;
	wake_others(self);
	if (!wait)
		return;
	/* Idle rings sweep as soon as they wake, busy ones between their fibers: wait a little
	 * (the calling fiber sleeps; its ring goes on). */
	for (int tries = 0; tries < 100; tries++) {
		unsigned behind = 0;
		for (unsigned i = 0; i < fs->nchans; i++)
			if (&fs->chans[i] != self && fs->chans[i].ring &&
			    (int)(atomic_load(&fs->chans[i].sweep_gen) - gen) < 0)
				behind++;
		if (!behind)
			return;
		fiber_sleep_ns(1000 * 1000);
	}
}

void fs_chan_between(struct fs_chan *ch)
{
	apply_forgets(ch);
	maybe_sweep(ch);
	close_doomed(ch);
}
