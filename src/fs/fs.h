/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The file-system layer: the exports as served, file handles and each ring's cache of them,
 * credentials, file data through nfsd-uc's cache or the page cache, the write verifier.
 *
 * One struct fs per daemon. Each ring has its own part of it, a struct fs_chan (as SPDK's
 * channels: only that ring's thread touches it, but for what is marked atomic), made by
 * fs_new() and handed by the ring to every call it makes here. What the layer asks of the
 * rings (does another request run? a fiber of the ring's own, a wake-up) goes through struct
 * fs_ring_ops, which the rings' layer supplies: nothing here knows their structure. */
#ifndef NFSD_UC_FS_FS_H
#define NFSD_UC_FS_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/cosync.h"

struct bcache;
struct config;
struct fiber_sched;
struct fs;
struct fs_chan;
struct io_ring;

/* A WRITE parked for its neighbour, listed on its ring while it waits: once no request runs
 * anywhere the ring kicks its wait (co_kick), so it needs no periodic look. */
struct fs_parked {
	struct co_kick kick;
	struct fs_parked *next, *prev;
};

/* What the layer asks of the rings. ring: the pointer the ring gave fs_chan_attach(). */
struct fs_ring_ops {
	/* Whether a request other than the caller's runs on any ring, parked ones not counted:
	 * one of them may be the WRITE a parked one waits for. */
	bool (*busy)(void *ring);
	/* When the latest request began on any ring (CLOCK_MONOTONIC ns). */
	uint64_t (*last_start)(void *ring);
	/* WRITEs parked on every ring now. */
	unsigned (*parked)(void *ring);
	/* The calling request stops (parking) or starts again (going on) being counted by busy. */
	void (*running)(void *ring, bool running);
	void (*park_begin)(void *ring, struct fs_parked *p);
	void (*park_end)(void *ring, struct fs_parked *p);
	/* fn(arg) in a new fiber of the ring, first run at its loop's next turn. 0 or -errno. */
	int (*spawn)(void *ring, void (*fn)(void *arg), void *arg);
	/* Wake the ring's loop from any thread (it then runs fs_chan_between()). */
	void (*wake)(void *ring);
};

struct fs_params {
	struct config *cfg;           /* its exports; read-only while the rings run */
	unsigned rings;               /* one fs_chan each */
	const struct fs_ring_ops *ops;
	const uint8_t *fh_key;        /* 16 bytes; NULL: state_dir/fh.key, made on first start */
	unsigned fh_cache_max;        /* handles per ring; 0: what RLIMIT_NOFILE has room for */
};

/* Open the exports, the cache, the blocking pool and the name resolver's threads. 0, or -1
 * with a log line (nothing left behind). */
int fs_new(const struct fs_params *p, struct fs **out);
/* After the rings ended: every handle closes (writing what the cache holds), the pools stop.
 * NULL is a no-op. */
void fs_free(struct fs *fs);
/* syncfs of every export's file system. 0, or -1 with a log line per failure. */
int fs_sync_exports(struct fs *fs);

/* SIGHUP, on the main thread: the exports of file again (fs/exptable.h). */
void fs_reload(struct fs *fs, const char *file, bool verbose);
/* A stop signal came while a reload waited: the daemon stops next. */
bool fs_stop_pending(const struct fs *fs);
size_t fs_nexports(const struct fs *fs);
/* A WRITE's payload is placed at an address congruent to its file offset modulo this. */
size_t fs_place_align(const struct fs *fs);
/* The cache, for its counters; and the stable WRITEs that completed a partial end block
 * without its neighbour (every fill read a stable WRITE causes is one of these). */
struct bcache *fs_cache(const struct fs *fs);
uint64_t fs_stable_alone(const struct fs *fs);

/* ---- a ring's part ---- */

struct fs_chan *fs_chan(struct fs *fs, unsigned ring);
/* On the main thread before the ring starts: its pointer for the ops, its io_uring and its
 * scheduler (messages from the main thread reach it there). */
void fs_chan_attach(struct fs_chan *ch, void *ring, struct io_ring *io, struct fiber_sched *sched);
/* On the ring's thread when it starts (ch) and ends (NULL): fs_chan_self() finds it. */
void fs_chan_bind(struct fs_chan *ch);
struct fs_chan *fs_chan_self(void);
/* The io_uring personality of the thread's current credentials: the ring's personality hook
 * (io_ring_set_personality_hook), so that every SQE a fiber submits runs as its caller. */
int fs_chan_personality(void *ch);
/* Between the ring's fibers: handles of deleted files let go, write-behind's end. Never waits. */
void fs_chan_between(struct fs_chan *ch);
/* The ring stops: write-behind fibers end once nothing is left to write. */
void fs_chan_stop(struct fs_chan *ch);
/* After the ring's loop, on its thread: its handles close, writing what the cache holds for
 * them through its ring. */
void fs_chan_end(struct fs_chan *ch);

#endif
