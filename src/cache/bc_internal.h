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

/* Which eviction list an entry is on. Clean ones are split as in 2Q (Johnson and Shasha, 1994):
 * CLEAN is probation, where every clean block starts and which eviction takes from first; a READ
 * that hits a clean block moves it to HOT, which eviction touches only while HOT holds more than
 * three quarters of the clean bytes. One large scan churns only probation. WRITTEN is probation
 * for blocks WRITEs gave every byte of and nobody has read since they went to disk: data written
 * once and never read again, the common case of an NFS server, which the kernel's page cache
 * keeps until memory runs short (the seeds' page-cache bloat). It is held to written_limit, and
 * goes first: its memory (frames, records) is used again, warm, by the WRITEs that follow,
 * instead of the cache growing into memory the kernel must fault in and clear. */
enum bc_glist { BC_GL_NONE = 0, BC_GL_CLEAN, BC_GL_DIRTY, BC_GL_HOT, BC_GL_WRITTEN };

struct bc_inode;
struct bc_frame;
struct bc_reserve;

/* A frame (bc_frame.c): a huge page on x86-64 and arm64 (4K base pages). */
#define BC_FRAME_BYTES (2u << 20)

/* One partly (or, once filled, completely) known block. */
struct bc_entry {
	struct bc_list ilink;    /* inode's entries, oldest first */
	struct bc_list glink;    /* cache's clean or dirty list, oldest first */
	struct bc_inode *ino;
	uint64_t index;          /* block number in the file */
	uint64_t id;             /* unique in the cache: tells a recreated entry from the old one */
	uint64_t gen;            /* bumped by every WRITE copied in: COMMIT marks clean only the
				  * image it wrote */
	unsigned char *data;     /* the block image, block-aligned for ops->write */
	uint64_t *bits;          /* bytes written by WRITEs; NULL for a whole image: a WRITE's
				  * middle (nwritten = bs) or a block a READ kept (nwritten 0,
				  * filled) */
	struct bcache_buf *buf;  /* holds data when it lies in a WRITE's record (adopted) or in a
				  * frame (bc_frame.c), or NULL: data is the entry's own allocation */
	uint32_t nwritten;       /* bits set */
	uint32_t covered;        /* bytes WRITEs gave since the block last went to disk (overlaps
				  * count twice: only a hint, for write-behind's chunks) */
	bool filled;             /* the bytes nobody wrote are in data too (from disk or zeros) */
	bool dirty;              /* data holds bytes the disk does not (or not yet synced) */
	bool busy;               /* its I/O runs without the inode lock: nobody else touches it */
	uint8_t glist;           /* enum bc_glist, shard lock */
	bool gdirty;             /* `dirty` as last counted in the cache's dirty count */
	bool gready;             /* counted in the cache's ready blocks (bc_chunk.c) */
	bool gwhole;             /* counted in its chunk's whole blocks (bc_chunk.c) */
	bool hot;                /* read again while clean: eviction's second list (2Q) */
	bool wrote;              /* WRITEs gave it its bytes since it was last read (WRITTEN) */
	bool shared;             /* data is also a READ reply's (adopted from its buffer): never
				  * changed in place, a WRITE copies it first */
	uint64_t lstamp;         /* when it was put on its clean or dirty list (shard lock) */
};

/* Block index -> entry: open addressing, at most half full (bc_map.c). */
struct bc_map_slot {
	uint64_t index;
	struct bc_entry *e;      /* NULL: empty */
};

struct bc_map {
	struct bc_map_slot *slots;
	unsigned bits;           /* log2(slot count) */
	unsigned walking;        /* walks under way: the slots must stay where they are */
	size_t count;
};

/* The whole blocks of a WRITE's middle while its ops->write is in flight (on the caller's
 * stack). Entry writes of these blocks wait or are left to the middle, which supersedes them. */
struct bc_span {
	uint64_t first, last;    /* block indexes, inclusive */
	uint64_t end;            /* byte end of the middle */
	struct bc_span *next;
	/* Aboard an append train (bc_train.c), under the inode lock: */
	const void *src;         /* its data */
	struct bc_span *qnext;   /* the queue, by offset */
	int rc;                  /* its write's result, once done */
	bool done;
};

/* How many blocks of one write-behind chunk (BC_CHUNK bytes, aligned) are ready: dirty, complete,
 * not busy. A chunk whose every block is ready goes to the write-behind queue. */
struct bc_chunk {
	uint64_t key;            /* chunk number */
	uint32_t ready;
	uint64_t opened_ns;      /* when it got its first ready block; 0 once it left whole */
	struct bc_chunk *next;
};
struct bc_chunks {
	struct bc_chunk **buckets;
	unsigned nbuckets;       /* power of two */
	size_t count;
	size_t whole;            /* of those, chunks every block of which is ready */
	uint64_t closes;         /* times a chunk stopped being open (whole, or none ready) */
};

#define BC_WSEQ_UNKNOWN UINT64_MAX

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
	atomic_bool restricted;  /* a WRITE without CAP_SYS_RESOURCE left data here (sticky) */
	struct co_cond cond;     /* broadcast when an entry stops being busy or is freed, a span
				  * leaves, or a handle's in-flight I/O ends */
	struct bc_parked *parked; /* WRITEs parked for a neighbour (bcache_wait_partial) */
	unsigned nparked;
	bool parked_woken;        /* all woken since the last of them waited (bc_parked_landing) */
	struct bcache_file *handles;
	struct bc_map map;
	struct bc_list age;      /* entries, oldest first */
	struct bc_span *spans;
	struct bcache_read *readers;
	size_t bytes;            /* block images held */
	unsigned nbusy;
	/* End of the last acknowledged byte (bcache_file_size_hint). Written under the lock, read
	 * without it by bcache_file_size(). */
	_Atomic uint64_t hint;
	_Atomic unsigned pad_seq;  /* odd while flush_past_eof() has the file padded past its size */
	struct bc_chunks chunks; /* write-behind readiness per chunk */
	unsigned chunk_shift;    /* log2(blocks per chunk) */
	int wb_err;              /* first failure of a write-behind (or of a sync behind) since
				  * the last COMMIT told it */
	uint64_t unsynced;       /* run bytes a BEHIND handle wrote since the last sync began, */
	bool sync_queued;        /* and a sync behind is on the write-behind queue (bc_behind.c) */
	int wb_stuck;            /* -errno while its writes fail: none is tried for write-behind or
				  * the bound until a write of its works, its COMMIT succeeds, or
				  * bcache_file_retry; its WRITEs past the bound get this error */
	uint64_t wseq;           /* bumped by every write to disk and truncate: a READ's disk bytes
				  * may be cached as clean only if it did not move meanwhile */
	uint64_t synced_wseq;    /* wseq when the last sync that succeeded began (BC_WSEQ_UNKNOWN:
				  * none yet): equal, nothing written since awaits a sync */
	/* The file's end went to disk inside a block the disk held data in (an append shorter
	 * than a block, after another): from then on its end's page stays in the kernel's page
	 * cache (ops.write_eof's keep), so that the next such append is not read back first. */
	bool appending;
	bool seq_read_known;     /* readahead: where the last READ ended, */
	uint64_t seq_read_end;
	uint64_t ra_window;      /* the next window (doubles while reads stay sequential), */
	uint64_t ra_from, ra_to; /* and the range a readahead is reading now (ra_to 0: none); */
	struct co_cond ra_done;  /* the READs inside it wait here, broadcast when it ends */
	uint64_t win_writes;     /* WRITEs and blocks they completed, lately (halved at 4096 WRITEs): */
	uint64_t win_completed;  /* how much the file's writers complete each other's blocks */
	uint64_t win_next;       /* (cached mode: WRITEs that found data just before or after them) */
	uint64_t chunks_opened;  /* times a chunk got its first ready block (bc_chunk.c) */
	struct co_cond window;   /* broadcast when a chunk closes while WRITEs wait (bc_hold_ahead) */
	unsigned window_waiters;
	struct bc_frame *frames;  /* open frames, where copied blocks go (bc_frame.c), most recently
				   * used first; a reference on each */
	unsigned nframes;
	uint64_t frame_takes;     /* slots ever taken in the inode's frames: how stale one is */
#define BC_FRAMES_CLOSED 64
	uint64_t frames_closed[BC_FRAMES_CLOSED];   /* keys of the frames closed last (a ring), */
	unsigned nclosed;                            /* and how many ever */
	uint64_t *seen;          /* chunks large READs touched lately, key + 1 per slot (bc_read.c:
				  * bcache_read_worth_keeping); NULL until the first */
#define BC_RECENT 128
	struct bc_extent { uint64_t start, end; } recent[BC_RECENT];  /* the last aligned WRITEs */
	unsigned recent_next;    /* (a ring, next slot), */
	uint64_t front;          /* the furthest end of any, */
	uint32_t al_writes, al_near;  /* and how many lately, and near the front then: lands_alone */
	struct bc_sync_group {   /* rounds of write + sync, one at a time (bc_commit.c) */
		struct bc_sync_req *queue;  /* callers for the next round */
		bool running;
		struct co_cond done; /* broadcast when a round ends */
	} sync;
	struct bc_train {        /* middles past the end of file, written in order (bc_train.c) */
		struct bc_span *queue;   /* aboard, waiting for the next write, by offset */
		struct bc_span *flying;  /* aboard the write on its way (its leader's batch), or
					  * NULL: none is on its way */
		struct co_cond done;     /* broadcast when a write of the train ends */
	} train;
};

struct bcache_file {
	struct bc_inode *ino;
	void *io;
	enum bcache_mode mode;
	unsigned inflight;       /* cache I/O through io running now (eviction by other threads) */
	struct bcache_file *next;
};

struct bc_counters {
	_Atomic uint64_t writes, direct_middles, bounced_middles, completed;
	_Atomic uint64_t fill_reads, fill_reads_bound, fill_zeros, fill_holes, forced, io_errors;
	_Atomic uint64_t eof_writes, eof_trims;
	_Atomic uint64_t train_waits, train_writes;
	_Atomic uint64_t read_once, lone_writes;
	_Atomic uint64_t adopted, copied, frames, frames_warm, frames_mapped;
	_Atomic uint64_t wb_writes, wb_bytes, wb_hist[BCACHE_WB_HIST];
	_Atomic uint64_t read_hits, read_misses, read_cached, readahead_bytes;
	_Atomic uint64_t bp_waits, wb_failures, wb_refused, spread_holds, written_trimmed;
	_Atomic uint64_t syncs_behind, sync_writes;
};

/* Write-behind: chunk size, and the queue of chunks found ready (each holds a pin on its
 * inode). A full queue drops the chunk: the dirty threshold finds it later. BC_WBQ_SYNC in
 * place of a chunk asks for a sync behind. */
#define BC_CHUNK (1u << 20)
#define BC_WBQ 1024u
#define BC_WBQ_SYNC UINT64_MAX
struct bc_wbq {
	pthread_mutex_t lock;
	struct bc_wbq_item {
		struct bc_inode *ino;
		uint64_t chunk;
	} v[BC_WBQ];
	unsigned head;
	_Atomic unsigned n;     /* read without the lock by bcache_writeback_wanted() */
};

/* How long dirty data has waited (bc_behind.c): now and then (a quarter of young_ns) the list
 * stamp is sampled with the time, so that an entry listed before the newest sample taken
 * young_ns ago or more is known to be older than that. */
#define BC_AGE_SAMPLES 8u
struct bc_age {
	pthread_mutex_t lock;
	struct bc_age_sample {
		uint64_t stamp, ns;
	} v[BC_AGE_SAMPLES];
	unsigned next;
	_Atomic uint64_t due_ns;   /* when the next sample is taken */
	_Atomic uint64_t before;   /* entries listed before this stamp are old (0: none known) */
	_Atomic bool overdue;      /* the oldest dirty entry was old at the last sample */
};

/* Eviction's age lists, split by inode so that no lock is shared by every WRITE: the oldest
 * entry of the cache is the oldest of the shards' heads (lstamp). */
#define BC_SHARDS 16
struct bc_shard {
	pthread_mutex_t lock;
	struct bc_list clean, dirty, hot, written;
};

struct bcache {
	struct bcache_ops ops;
	size_t limit, file_limit;
	size_t written_limit;    /* WRITTEN's share of the bound (bc_trim_written), */
	size_t written_floor;    /* and what it keeps while frames' memory runs short */
	uint64_t hold_ns;        /* longest a WRITE ahead waits for its file's writers behind, */
	uint64_t young_ns;       /* and how long a chunk's opening holds WRITEs back */
	size_t spread_chunks;    /* open chunks a file's interleaved writers may spread over */
	uint64_t sync_behind;    /* a file's unsynced bytes that queue a sync (0: never) */
	struct bc_counters n;
#define BC_GHOST_SLOTS 16384u
	_Atomic uint64_t ghost[BC_GHOST_SLOTS];  /* blocks small READs missed lately, by tag
						  * (bc_read.c: read_again); races only lose one */

	pthread_mutex_t lock;    /* the inode table and inode refs */
	struct bc_inode *table[BC_TABLE_SIZE];
	struct bc_shard shard[BC_SHARDS];
	_Atomic uint64_t next_id, stamp;
	_Atomic uint64_t entries, entries_peak, ndirty, bytes, bytes_peak;
	_Atomic uint64_t dirty_bytes, inflight_bytes, hot_bytes, written_bytes;
	_Atomic uint64_t reserve_bytes;  /* ready frames (bc_reserve.c), inside the bound */
	struct bc_reserve *reserve;      /* NULL: frames are mapped when needed */
	_Atomic uint64_t nready;  /* blocks ready for write-behind (dirty, complete, not busy) */
	struct bc_wbq wbq;
	struct bc_age age;
	_Atomic unsigned room_waiters;
	struct co_mutex room_lock;
	struct co_cond room;     /* broadcast when an entry is freed or written: backpressure */
};

static inline struct bc_list *bc_shard_list(struct bc_shard *sh, uint8_t glist)
{
	switch (glist) {
	case BC_GL_DIRTY:
		return &sh->dirty;
	case BC_GL_HOT:
		return &sh->hot;
	case BC_GL_WRITTEN:
		return &sh->written;
	default:
		return &sh->clean;
	}
}

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

static inline void bc_count_add(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

static inline uint64_t bc_load(_Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* Counts a failed ops call; returns rc. */
/* Cached data of ino to the device, as whoever wrote it may (ops.writer_begin: a file written by
 * a caller without CAP_SYS_RESOURCE is written under the same limits, whichever fiber writes
 * it), and synced as `how` says (ops->writev_sync; BCACHE_SYNC_NONE: a plain write). 0 or
 * -errno. */
int bc_dev_writev(struct bc_inode *ino, void *io, uint64_t off, const struct iovec *iov, int n,
		  enum bcache_sync how);
/* The same through ops->write_eof (the file's end, through the page cache; the op must exist):
 * 0, -errno, or -EOPNOTSUPP as the op says. */
int bc_dev_write_eof(struct bc_inode *ino, void *io, uint64_t off, const struct iovec *iov, int n);

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
int bc_map_reserve(struct bc_map *m);   /* 0 or -ENOMEM, before creating an entry */
void bc_map_insert(struct bc_map *m, struct bc_entry *e);
void bc_map_remove(struct bc_map *m, struct bc_entry *e);
/* Calls fn on every entry with first <= index <= last, in no particular order, until fn returns
 * false (then returns false). fn may free the entry it is given, and only that one; it may not
 * create one. */
typedef bool (*bc_visit_fn)(struct bc_inode *ino, struct bc_entry *e, void *arg);
bool bc_map_range(struct bc_inode *ino, uint64_t first, uint64_t last, bc_visit_fn fn, void *arg);

/* bc_entry.c (inode lock held) */
/* A block written in part: its image in slot of frame (bc_frame_slot), or memory of its own when
 * slot is NULL. */
struct bc_entry *bc_entry_new(struct bc_inode *ino, uint64_t index, unsigned char *slot,
			      struct bcache_buf *frame);
/* A WRITE's whole block, copied from src into slot of frame or memory of its own (slot NULL). */
struct bc_entry *bc_entry_new_copy(struct bc_inode *ino, uint64_t index, const void *src,
				   unsigned char *slot, struct bcache_buf *frame);
/* A whole block whose image is data, inside buf's memory (a reference is taken), or a copy of it
 * when buf is NULL. Any older entry of the block is the caller's to free after (bc_map_remove
 * goes by identity). dirty: a WRITE's block, adopted (every byte written; a WRITE's block copied
 * is bc_entry_new_copy's); else the disk's, read (clean, filled). */
struct bc_entry *bc_entry_new_whole(struct bc_inode *ino, uint64_t index, const void *data,
				    struct bcache_buf *buf, bool dirty);
void bc_entry_free(struct bc_inode *ino, struct bc_entry *e);
void bc_entry_free_all(struct bc_inode *ino);
/* Call after changing e->dirty or e->busy: moves e to the list that matches. */
void bc_entry_relist(struct bc_inode *ino, struct bc_entry *e);
void bc_entry_set_busy(struct bc_inode *ino, struct bc_entry *e, bool busy);
/* e's image went to disk: bc_entry_landed, and counted as completed where by_writes (WRITEs had
 * covered it all, no fill: the ratio that picks write-behind, bcache.c). Called before e is
 * listed again. */
void bc_entry_wrote(struct bc_inode *ino, struct bc_entry *e, bool by_writes);
/* Blocks left the cache's care without a busy flag to clear (bc_entry_set_busy wakes those):
 * fibers waiting on the inode's condition, and WRITEs waiting for room, look again. */
void bc_wake_waiters(struct bc_inode *ino);
/* Make e's image its own (a copy) if it is shared with a READ reply: before writing into it.
 * 0 or -ENOMEM. */
int bc_entry_own(struct bc_inode *ino, struct bc_entry *e);
/* A READ used clean e: 2Q's promotion. */
void bc_entry_touch(struct bc_inode *ino, struct bc_entry *e);
void bc_readers_stale(struct bc_inode *ino, uint64_t index);

/* bc_frame.c (inode lock held) */
/* Should a WRITE of blocks [first, last] put its bytes in frames, opening new ones? When the
 * file is being filled side by side: its WRITEs land next to each other's, and (for a small
 * WRITE, or in a file's first WRITEs) a block just outside this one's holds another WRITE's bytes
 * not yet on disk. (Clean blocks say nothing: a random writer over a file read or written before
 * finds them everywhere.) Never under a file bound too small for frames counted whole. */
bool bc_frame_wanted(const struct bc_inode *ino, uint64_t first, uint64_t last, bool large);
/* The slot of block index in the inode's frame for its stretch of the file, taken for a new
 * entry (*buf: the frame, with a reference the entry takes over, or drops if it is not made
 * after all); NULL when the block is to have memory of its own: no frame there (and may_open
 * false, or none could be made), or its slot used. */
unsigned char *bc_frame_slot(struct bc_inode *ino, uint64_t index, bool may_open,
			    struct bcache_buf **buf);
/* Block index gets an image outside the frames: an open frame's slot for it will never be
 * used, and is taken so that the frame can fill. */
void bc_frame_skip(struct bc_inode *ino, uint64_t index);
/* The frame for block index's stretch of the file closed lately (one of the inode's last
 * BC_FRAMES_CLOSED): no new one opens there. */
bool bc_frame_closed_recently(const struct bc_inode *ino, uint64_t index);
/* Frame b holds no block any more: if it is open, it closes (its memory goes back, to the
 * reserve). */
void bc_frame_emptied(struct bc_inode *ino, struct bcache_buf *b);
/* Drop the inode's references on its open frames (their entries keep theirs). */
void bc_frames_close(struct bc_inode *ino);
/* b is a frame (else an adopted record or a READ's buffer). */
bool bc_buf_is_frame(const struct bcache_buf *b);

/* bc_reserve.c (any thread, no lock held) */
/* Fresh frame memory, its pages not yet present. NULL when out of memory. */
unsigned char *bc_frame_map(void);
/* Memory for a new frame: a ready one of the reserve, else freshly mapped; *res gets a reference
 * on the reserve (NULL without one), to hand back with the memory. NULL when out of memory. */
unsigned char *bc_reserve_take(struct bcache *c, struct bc_reserve **res);
/* A frame's memory back (mem may be NULL: the reference only): kept ready, or unmapped. */
void bc_reserve_give(struct bc_reserve *res, unsigned char *mem);
/* Unmap ready frames while the cache is over its bound: they go before any data. */
void bc_reserve_trim(struct bcache *c);
/* Every frame the reserve keeps in being is out: the next one would be memory mapped afresh. */
bool bc_reserve_low(struct bcache *c);
/* The cache is going: the thread ends, ready frames are unmapped, frames still out are unmapped
 * when they come back. */
void bc_reserve_stop(struct bcache *c);

/* bc_chunk.c (inode lock held) */
int bc_chunks_init(struct bc_chunks *m);
void bc_chunks_fini(struct bc_chunks *m);
/* Recount e's readiness after a change; queues its chunk when that made it whole. */
void bc_chunk_update(struct bc_inode *ino, struct bc_entry *e);
size_t bc_chunks_young(const struct bc_inode *ino, uint64_t now, uint64_t young_ns);
/* Chunks with ready blocks that are not whole: what the file's writers have begun and not
 * finished. */
static inline size_t bc_chunks_open(const struct bc_inode *ino)
{
	return ino->chunks.count - ino->chunks.whole;
}
/* Do the file's WRITEs land next to each other's (a quarter of them, lately, found data just
 * before or after them), as interleaved or sequential writers' do, and random ones' do not? */
static inline bool bc_interleaved(const struct bc_inode *ino)
{
	return ino->win_next * 4 >= ino->win_writes;
}
/* A WRITE of h that opened a chunk: if the file's writers are spread too far, wait for a chunk to
 * close (bc_behind.c). Inode lock held (released while waiting). */
void bc_hold_ahead(struct bcache_file *h);
/* Every block of the chunk is ready. */
bool bc_chunk_whole(const struct bc_inode *ino, uint64_t key);
/* The chunk is open (some blocks ready, not all) and was opened less than ns before now. */
bool bc_chunk_filling(const struct bc_inode *ino, uint64_t key, uint64_t now, uint64_t ns);
/* e's image went to disk (the COMMIT's sync makes it durable): clean. A block WRITEs had covered
 * starts counting again (the next pass of an overwrite); one written before they did (its rest
 * filled, to make room) keeps what they gave, so that the neighbour still to come completes it
 * for its chunk. Called before e is listed again (bc_entry_set_busy, bc_entry_relist). */
static inline void bc_entry_landed(const struct bc_inode *ino, struct bc_entry *e)
{
	e->dirty = false;
	if (e->covered >= ino->bs)
		e->covered = 0;
}

/* A WRITE parked for its neighbour, on its inode's list while it waits (bcache_wait_partial). */
struct bc_parked {
	struct bc_parked *next;
	uint64_t first, last;    /* its blocks */
	bool while_crowded;      /* it also waits while the file is crowded */
	struct co_cond cond;
};

/* Up to this many WRITEs parked on a file, each is woken the moment one of its blocks stops
 * being partial, and so joins its neighbour's round rather than waiting for the block to be
 * written: 6000-byte FILE_SYNC records at 4 x 1 went 1.15-1.49x as fast, at 32 x 1 1.13-1.20x.
 * Beyond it, as before, every landing and free of the file's blocks wakes them all: at 128 x 4,
 * all woken at completion, the same records went 0.72-0.86x as fast at 1.2-1.3x the CPU (with
 * this bound 0.91-0.95x: the early wake-ups before the parked WRITEs pass it). */
#define BC_PARK_EARLY_MAX 32

/* Block index may have stopped being partial (completed by a WRITE, filled, freed; freed: room,
 * too): the WRITEs parked on it look again. With four writers of a file on two rings, waking all
 * of them at every landing made half of the daemon's wake-ups, each one of the other ring's
 * thread. Inode lock held. */
void bc_partial_ended(struct bc_inode *ino, uint64_t index, bool room);
/* A block of the file landed or was freed: above BC_PARK_EARLY_MAX parked, they all look again. */
void bc_parked_landing(struct bc_inode *ino);

static inline void bc_entry_filled(struct bc_inode *ino, struct bc_entry *e)
{
	e->filled = true;
	bc_partial_ended(ino, e->index, false);
}

static inline bool bc_entry_ready(const struct bc_inode *ino, const struct bc_entry *e)
{
	return e->dirty && !e->busy && bc_entry_complete(ino, e);
}

/* bc_run.c */
/* Adjacent dirty blocks written with one vectored write. */
#define BC_RUN_MAX BCACHE_IOV_MAX  /* blocks (and iovecs) of one run: one ops->writev */
struct bc_run {
	struct bc_entry *v[BC_RUN_MAX];
	size_t n;
	uint64_t first;
	enum bcache_sync sync;   /* the write syncs too (ops->writev_sync); NONE from collect */
};
/* Gather from `first` on (at most to `last`, and to BC_RUN_MAX blocks) the entries a run may
 * hold: there, dirty, not busy, not under a middle in flight, complete unless fill is allowed,
 * and ending within the file's logical end. Inode lock held. */
void bc_run_collect(struct bc_inode *ino, uint64_t first, uint64_t last, bool fill, struct bc_run *r);
/* Append the ready blocks that follow the run (no fill). */
void bc_run_extend(struct bc_inode *ino, struct bc_run *r);
/* Fill what needs it and write the run through h; the entries are clean after. Lock held,
 * dropped during the I/O (they are busy then). 0 or -errno (they stay dirty). */
int bc_run_write(struct bc_inode *ino, struct bc_run *r, struct bcache_file *h);
/* bc_run_collect of the run around index: from as far back over ready entries as half a run,
 * up to last. */
void bc_run_around(struct bc_inode *ino, uint64_t index, uint64_t last, bool fill, struct bc_run *r);
/* A file's end: the dirty block right after the run r (of complete blocks, fewer than 16) if the
 * file's data ends inside it, the WRITEs gave it every byte before that end, and the disk ends
 * before it (*disk_size set, through io); else NULL. Lock held. */
struct bc_entry *bc_run_eof_tail(struct bc_inode *ino, const struct bc_run *r, void *io,
				 int64_t *disk_size);
/* The run and that block up to the file's end in one ops->write_eof: through the page cache, one
 * write where an O_DIRECT run and the end apart were two. The lock stays held throughout, as for
 * any block past the end (bc_flush.c): no WRITE moves the end meanwhile. 0, -errno (all stay
 * dirty), or 1: the op refused, nothing written. */
int bc_run_write_eof(struct bc_inode *ino, struct bc_run *r, struct bc_entry *t,
		     struct bcache_file *h, int64_t disk_size);

/* bc_behind.c */
/* A write for write-behind or the bound failed (n < 0): counted, kept as the inode's wb_err for
 * its next COMMIT to report and as wb_stuck: no more of its blocks tried meanwhile. n. Inode lock
 * held. */
ssize_t bc_wb_failed(struct bc_inode *ino, ssize_t n);
/* Queue chunk (or BC_WBQ_SYNC) of ino for write-behind; false when the queue is full. */
bool bc_wbq_push(struct bc_inode *ino, uint64_t chunk);
/* h wrote a run of bytes of ino's cached data to disk: past the cache's sync_behind since the
 * last sync began, a BEHIND handle's file gets a sync behind queued. Inode lock held. */
void bc_wrote(struct bcache_file *h, uint64_t bytes);
void bc_wbq_drain(struct bcache *c);
/* Wake writers waiting for room (cheap when none waits). */
void bc_room_made(struct bcache *c);
void bc_room_wait(struct bcache *c);

static inline void bc_hint_raise(struct bc_inode *ino, uint64_t end)
{
	if (atomic_load_explicit(&ino->hint, memory_order_relaxed) < end)
		atomic_store(&ino->hint, end);
}

/* bc_flush.c */
/* Why a block is completed (counted apart when that takes a device read). */
enum bc_fill_why { BC_FILL_COMMIT, BC_FILL_BOUND };
uint64_t bc_logical_end(const struct bc_inode *ino);
bool bc_span_covers(const struct bc_inode *ino, uint64_t index);
/* Fill (if needed, for why) and write e's block through h. Inode lock held, e neither busy nor
 * covered by a span; the lock may be dropped meanwhile (e is busy then). e is still there on
 * return. *sync (NULL: none): the write is also to sync as it says (the ops' *_sync), and is
 * set to BCACHE_SYNC_NONE where it did not (a block padded past the end of file, trimmed after
 * its write). */
int bc_entry_flush(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
		   enum bc_fill_why why, enum bcache_sync *sync);
/* Fill (if needed) bytes a WRITE did not give e from disk or zeros. Lock not needed while e is
 * busy. */
int bc_fill(struct bc_inode *ino, struct bc_entry *e, void *io, int64_t disk_size,
	    enum bc_fill_why why);
void bc_wait(struct bc_inode *ino);

/* bc_train.c */
/* The middle s (announced: span_enter) to disk from src; lock held, and held again on return.
 * Middles past the end of file go in offset order, those that queued meanwhile as one vectored
 * write. 0 or -errno. */
int bc_train_write(struct bcache_file *h, struct bc_span *s, const void *src);

/* bc_range.c */
/* Flush every dirty entry in the ranges (block indexes, inclusive; sorted and merged in place)
 * through h, waiting for busy ones and spans; records what it wrote in *done (allocated, *ndone
 * long) for bc_flush_settle(). lone: where one write carries every block, it syncs as lone says
 * (*synced set then; the caller checks that no other write came between). First -errno or 0. */
struct bc_written {
	uint64_t index, id, gen;
};
struct bc_range {
	uint64_t first, last;
};
int bc_flush_ranges(struct bcache_file *h, struct bc_range *r, size_t n, enum bcache_sync lone,
		    struct bc_written **done, size_t *ndone, bool *synced);
/* After the writes of bc_flush_ranges are durable: free entries WRITEs completed, mark the
 * others clean, unless they changed since. */
void bc_flush_settle(struct bc_inode *ino, const struct bc_written *done, size_t ndone);
/* Their sync failed: dirty again, those still as written. */
void bc_flush_undo(struct bc_inode *ino, const struct bc_written *done, size_t ndone);

/* bc_evict.c */
/* The oldest entry on the first of lists[0, n) (enum bc_glist) that has one, over every shard,
 * with its inode pinned (bc_inode_unpin after), and its stamp (*stamp, if asked); it goes to the
 * tail of its list, so that one that cannot be used now does not stop the next pick. NULL when
 * all are empty. No lock held. */
struct bc_inode *bc_pick_oldest(struct bcache *c, const uint8_t *lists, int n, uint64_t *index,
				uint64_t *id, uint64_t *stamp);
/* The stamp of the oldest entry on list `which` (enum bc_glist) over every shard; UINT64_MAX
 * when it is empty. */
uint64_t bc_oldest_stamp(struct bcache *c, uint8_t which);
/* Bring the inode, then the cache, back under their memory bounds. No lock held. */
int bc_reclaim(struct bcache_file *h);
/* Its parts: the inode's own bound (writes as needed; true if freeing its clean blocks was
 * not enough: that is a wait, they are not), and freeing clean blocks cache-wide. */
bool bc_reclaim_file(struct bcache_file *h);
void bc_reclaim_clean(struct bcache *c);
/* Free the oldest WRITTEN blocks while they hold more than written_limit, or more than
 * written_floor while the reserve is low. No lock held. */
void bc_trim_written(struct bcache *c);
/* The same for the inode's own written blocks, a few batches at most. Inode lock held. */
void bc_trim_written_of(struct bc_inode *ino);
bool bc_over_limit(struct bcache *c);

/* bcache.c */
void bc_inode_unpin(struct bc_inode *ino);

#endif
