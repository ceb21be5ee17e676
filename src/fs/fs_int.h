/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the file-system layer: the daemon's state (struct fs) and a ring's (struct fs_chan). */
#ifndef NFSD_UC_FS_FS_INT_H
#define NFSD_UC_FS_FS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/log.h"
#include "fs/cred.h"
#include "fs/fs.h"
#include "io/fiber.h"

struct export_table;
struct fh_cache;

/* Inodes whose last link went away through one ring: every other ring closes its handles of them
 * at its next turn, so the file's space is freed without waiting for a sweep (chan.c). */
#define FORGET_RING 1024
struct forget_ring {
	pthread_mutex_t lock;
	_Atomic uint64_t seq;         /* entries ever published */
	struct {
		dev_t dev;
		uint64_t ino;
	} ent[FORGET_RING];
};
struct peer_names;
struct pool;

struct fs {
	struct config *cfg;
	struct fs_ring_ops ops;
	struct export_table *table;   /* the exports in force (exptable.h); the main thread's */
	pthread_mutex_t table_mu;     /* held to replace table, and by readers of other threads */
	struct export_table **retired;   /* tables a reload could not free yet (freed at exit) */
	size_t nretired;
	bool stop_pending;            /* SIGTERM came while a reload waited (main thread only) */
	uint8_t fh_key[16];           /* SipHash key authenticating file handles; persisted */
	_Atomic uint64_t write_verf;  /* drawn at start, rotated after a write or fsync error */
	atomic_uint wb_fibers;        /* write-behind fibers of every ring (fs_writeback) */
	struct bcache *cache;
	size_t place_align;           /* WRITE payloads placed modulo this: the largest export block */
	struct pool *pool;            /* blocking calls with no io_uring op (cred_offload) */
	struct pool *resolver;        /* clients' names for wildcard rules (peername.c) */
	struct listcache *listcache;  /* READDIRPLUS's handles (listcache.h); NULL: none kept */
	unsigned fh_cache_max;        /* handle-cache entries per ring, from RLIMIT_NOFILE */
	atomic_uint sweep_gen;        /* bumped to make every ring sweep its handle cache now */
	_Atomic uint64_t deleted_closed_ns;   /* when a ring last closed handles of deleted files */
	struct forget_ring *forgets;  /* inodes gone through one ring, for the others (chan.c) */
	struct fs_chan *chans;
	unsigned nchans;
	_Atomic uint64_t stable_alone;   /* fs_stable_alone() */
	struct log_ratelimit write_errors, fh_log;
	/* Fault seam for the tests, from the environment at start; 0: off. */
	unsigned fault_readdir_delay_ms;
};

/* One ring's part: only its own thread touches it, except the fields marked otherwise. */
struct fs_chan {
	struct fs *fs;
	unsigned id;
	void *ring;                   /* the rings' own pointer, for fs->ops */
	struct io_ring *io;
	struct fiber_sched *sched;    /* its inbox takes messages from any thread */
	struct fh_cache *fhc;
	bool stopping;
	/* credentials currently applied to this thread (cred.c keeps it to skip no-op switches) */
	struct cred_state creds;
	struct cred_personalities *personalities;   /* cred.c: their io_uring personalities */
	/* the exports its requests use (exptable.h): the table in force, the one before it while
	 * requests that began under it run, and how many do */
	struct export_table *table, *old_table, *table_next;
	unsigned table_refs, old_refs;
	atomic_uint table_released;   /* gen of table once old_table is let go (read by main) */
	struct fiber_msg table_msg;
	struct peer_names *names;     /* clients' confirmed names, for wildcard rules (peername.c) */
	/* handle-cache housekeeping (chan.c) */
	long next_sweep;              /* CLOCK_MONOTONIC second of the next handle-cache sweep */
	atomic_uint sweep_gen;        /* fs->sweep_gen as of our last sweep (read by others) */
	unsigned sweep_pending;       /* ... as of the sweep whose handles are being closed */
	bool closing;                 /* a fiber closes the handles the sweeps took out (fh_doomed) */
	uint64_t forget_seq;          /* forget_ring entries applied to our handle cache */
};

/* A verb acts as its call's caller: the thread takes fc->cred (a no-op when it has them). 0 or
 * -errno (then the thread is root: the verb must not go on). */
static inline int fs_as_caller(struct fs_call *fc)
{
	return fc->ch ? cred_apply(fc->ch, &fc->cred) : 0;
}

/* fn(arg) in a new fiber of ch's ring, with the server's credentials (saved across its waits).
 * 0 or -errno. */
int fs_spawn_as_server(struct fs_chan *ch, void (*fn)(void *arg), void *arg);
/* Dirty data is waiting (bcache_writeback_wanted): start a write-behind fiber on this ring
 * unless [cache] writeback_depth of them run already, on all rings. They run as the server, end
 * when there is nothing left, and are waited for when the ring stops. */
void fs_writeback(struct fs_chan *ch);
/* The inode (dev, ino) lost its last link through this ring (which forgot it already): every
 * other ring closes its handles of it at its next turn. */
void fs_forget_everywhere(struct fs_chan *self, dev_t dev, uint64_t ino);
/* Make every ring close its handles of deleted files (a WRITE found the disk full). With wait,
 * return once they all did (or after 100 ms): only the caller's own cache is swept by the caller,
 * as the caches are per ring. */
void fs_sweep_everywhere(struct fs_chan *self, bool wait);
/* Whether st, found by name inside exp, lies past a mount point (call.c). */
bool fs_off_export(const struct export_rt *exp, const struct statx *st);

#endif
