/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Internals of the boundary cache, shared by its source files. Nothing here is API.
 *
 * What guards what (see bcache.h, "Locking"):
 *   inode lock: everything in struct bc_inode below `lock` except tnext and refs, every field of
 *               its entries except glink and the g* fields, and bcache_file.inflight/next.
 *   cache lock: the inode table, bc_inode.tnext and refs. Taken on open, close and pin, inside
 *               an inode lock or a shard lock, never around one.
 *   shard lock: the clean/dirty lists of the inodes that hash to it (glink, glist, gdirty,
 *               lstamp of their entries). Taken inside an inode lock, never around one; the
 *               WRITE path takes no lock shared by every file.
 *   entry and byte counts, and their peaks: atomics.
 *   counters in struct bc_counters are atomics, bumped wherever the event happens.
 */
#ifndef NFSD_UC_BC_INTERNAL_H
#define NFSD_UC_BC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bc_list.h"
#include "bcache.h"
#include "io/cosync.h"

#define BC_TABLE_SIZE 256u

enum bc_glist { BC_GL_NONE = 0, BC_GL_CLEAN, BC_GL_DIRTY };

struct bc_inode;

/* One partly (or, once filled, completely) known block. */
struct bc_entry {
	struct bc_entry *hnext;  /* hash chain of the inode's map */
	struct bc_list ilink;    /* inode's entries, oldest first */
	struct bc_list glink;    /* cache's clean or dirty list, oldest first */
	struct bc_inode *ino;
	uint64_t index;          /* block number in the file */
	uint64_t id;             /* unique in the cache: tells a recreated entry from the old one */
	uint64_t gen;            /* bumped by every WRITE copied in: COMMIT marks clean only the
				  * image it wrote */
	unsigned char *data;     /* the block image, block-aligned for ops->write */
	uint64_t *bits;          /* bytes written by WRITEs */
	uint32_t nwritten;       /* bits set */
	bool filled;             /* the bytes nobody wrote are in data too (from disk or zeros) */
	bool dirty;              /* data holds bytes the disk does not (or not yet synced) */
	bool busy;               /* its I/O runs without the inode lock: nobody else touches it */
	uint8_t glist;           /* enum bc_glist, shard lock */
	bool gdirty;             /* `dirty` as last counted in the cache's dirty count */
	uint64_t lstamp;         /* when it was put on its clean or dirty list (shard lock) */
};

/* Block index -> entry, chained, power-of-two buckets grown at load 1. */
struct bc_map {
	struct bc_entry **buckets;
	unsigned shift;          /* 64 - log2(bucket count) */
	size_t count;
};

/* The whole blocks of a WRITE's middle while its ops->write is in flight (on the caller's
 * stack). Entry writes of these blocks wait or are left to the middle, which supersedes them. */
struct bc_span {
	uint64_t first, last;    /* block indexes, inclusive */
	uint64_t end;            /* byte end of the middle */
	struct bc_span *next;
};

/* Everything the cache knows of one (dev, ino), shared by its handles. */
struct bc_inode {
	struct bcache *cache;
	uint64_t dev, ino;
	uint32_t bs;             /* block size */
	unsigned bshift;         /* log2(bs) */
	struct bc_inode *tnext;  /* cache table chain (cache lock) */
	unsigned refs;           /* handles + short pins by eviction (cache lock) */
	unsigned shard;          /* its entries' lists: bcache.shard[shard] */

	/* Fiber-aware (io/cosync.h): a fiber waiting here, or holding it across the I/O of a
	 * block past the end of file, leaves its ring free for other calls. */
	struct co_mutex lock;
	struct co_cond cond;     /* broadcast when an entry stops being busy or is freed, a span
				  * leaves, or a handle's in-flight I/O ends */
	struct bcache_file *handles;
	struct bc_map map;
	struct bc_list age;      /* entries, oldest first */
	struct bc_span *spans;
	struct bcache_read *readers;
	size_t bytes;            /* block images held */
	unsigned nbusy;
	uint64_t hint;           /* end of the last acknowledged byte (bcache_file_size_hint) */
	uint64_t win_writes;     /* WRITEs and blocks they completed, lately (halved at 4096 WRITEs): */
	uint64_t win_completed;  /* how much the file's writers complete each other's blocks */
	struct bc_sync_group {   /* syncs of the inode, one at a time, shared (bc_commit.c) */
		uint64_t ticket;     /* last ticket handed out */
		uint64_t covered;    /* every ticket up to here is synced (or failed) */
		uint64_t err_from, err_upto;  /* tickets whose sync failed (a conservative range) */
		int err;
		unsigned waiting;    /* callers between ticket and answer */
		bool running;
		bool want_full;      /* the next sync must be a full fsync, not fdatasync */
		struct co_cond done; /* broadcast when a sync ends */
	} sync;
};

struct bcache_file {
	struct bc_inode *ino;
	void *io;
	unsigned inflight;       /* cache I/O through io running now (eviction by other threads) */
	struct bcache_file *next;
};

struct bc_counters {
	_Atomic uint64_t writes, direct_middles, bounced_middles, completed;
	_Atomic uint64_t fill_reads, fill_zeros, forced, io_errors;
};

/* Eviction's age lists, split by inode so that no lock is shared by every WRITE: the oldest
 * entry of the cache is the oldest of the shards' heads (lstamp). */
#define BC_SHARDS 16
struct bc_shard {
	pthread_mutex_t lock;
	struct bc_list clean, dirty;
};

struct bcache {
	struct bcache_ops ops;
	size_t limit, file_limit;
	struct bc_counters n;

	pthread_mutex_t lock;    /* the inode table and inode refs */
	struct bc_inode *table[BC_TABLE_SIZE];
	struct bc_shard shard[BC_SHARDS];
	_Atomic uint64_t next_id, stamp;
	_Atomic uint64_t entries, entries_peak, ndirty, bytes, bytes_peak;
};

/* Raise *peak to at least v. */
static inline void bc_peak(_Atomic uint64_t *peak, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(peak, memory_order_relaxed);
	while (cur < v && !atomic_compare_exchange_weak_explicit(peak, &cur, v, memory_order_relaxed,
								 memory_order_relaxed))
		;
}

static inline void bc_count(_Atomic uint64_t *counter)
{
	atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

/* Counts a failed ops call; returns rc. */
static inline int bc_io_result(struct bcache *c, int rc)
{
	if (rc < 0)
		bc_count(&c->n.io_errors);
	return rc;
}

static inline uint64_t bc_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline uint64_t bc_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t bc_block_off(const struct bc_inode *ino, uint64_t index)
{
	return index << ino->bshift;
}

/* Holds every byte of its block in data (written by WRITEs or filled). */
static inline bool bc_entry_complete(const struct bc_inode *ino, const struct bc_entry *e)
{
	return e->filled || e->nwritten == ino->bs;
}

/* bc_map.c */
int bc_map_init(struct bc_map *m);
void bc_map_fini(struct bc_map *m);
struct bc_entry *bc_map_find(const struct bc_map *m, uint64_t index);
void bc_map_insert(struct bc_map *m, struct bc_entry *e);
void bc_map_remove(struct bc_map *m, struct bc_entry *e);
/* Calls fn on every entry with first <= index <= last, in no particular order, until fn returns
 * false (then returns false). fn may free the entry it is given, and only that one. */
typedef bool (*bc_visit_fn)(struct bc_inode *ino, struct bc_entry *e, void *arg);
bool bc_map_range(struct bc_inode *ino, uint64_t first, uint64_t last, bc_visit_fn fn, void *arg);

/* bc_entry.c (inode lock held) */
struct bc_entry *bc_entry_new(struct bc_inode *ino, uint64_t index);
void bc_entry_free(struct bc_inode *ino, struct bc_entry *e);
void bc_entry_free_all(struct bc_inode *ino);
/* Call after changing e->dirty or e->busy: moves e to the list that matches. */
void bc_entry_relist(struct bc_inode *ino, struct bc_entry *e);
void bc_entry_set_busy(struct bc_inode *ino, struct bc_entry *e, bool busy);
void bc_readers_stale(struct bc_inode *ino, uint64_t index);

/* bc_flush.c */
uint64_t bc_logical_end(const struct bc_inode *ino);
bool bc_span_covers(const struct bc_inode *ino, uint64_t index);
/* Fill (if needed) and write e's block through h. Inode lock held, e neither busy nor covered by
 * a span; the lock may be dropped meanwhile (e is busy then). e is still there on return. */
int bc_entry_flush(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h);
/* Flush every dirty entry in [first, last] through h, waiting for busy ones and spans; records
 * what it wrote in *done (allocated, *ndone long) for bc_flush_settle(). First -errno or 0. */
struct bc_written {
	uint64_t index, id, gen;
};
int bc_flush_range(struct bcache_file *h, uint64_t first, uint64_t last,
		   struct bc_written **done, size_t *ndone);
/* After the writes of bc_flush_range are durable: free entries WRITEs completed, mark the
 * others clean, unless they changed since. */
void bc_flush_settle(struct bc_inode *ino, const struct bc_written *done, size_t ndone);
/* Bring the inode, then the cache, back under their memory bounds. No lock held. */
void bc_reclaim(struct bcache_file *h);
void bc_wait(struct bc_inode *ino);

/* bcache.c */
void bc_inode_unpin(struct bc_inode *ino);

#endif
