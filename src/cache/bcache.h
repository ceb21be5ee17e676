/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The boundary-block cache (docs/cache.md).
 *
 * A misaligned WRITE covers whole blocks in its middle and part of a block at each end; each end
 * block is shared with the neighbouring WRITE. The middle goes straight to disk (O_DIRECT, through
 * ops->write); each partly written end block waits here, in an entry, until the WRITE that
 * completes it arrives, and is then written whole with no read. COMMIT (and a stable WRITE) makes
 * the entries in its range durable: the bytes nobody wrote are read from disk (one counted device
 * read) or zero-filled past the end of file, the block is written, and the entry keeps its now
 * complete image, clean, so a neighbour arriving later still completes it without a read.
 *
 * The module knows nothing of RPC, sockets, io_uring or file descriptors: all I/O goes through
 * struct bcache_ops on an opaque per-handle pointer (file_io) that the caller registers.
 *
 * Ordering. Every call takes effect on each block at one point under the file's lock, before it
 * returns; for a WRITE's middle that point is after its data is on disk. Bytes of the call that
 * took effect later win, so a call that returned before another one started always loses to it:
 * newest bytes win whatever the mix of prefixes, suffixes and middles sharing a block. A stale
 * entry is never written over newer data: an entry whose block a middle covers whole is dropped
 * (superseded) before that WRITE returns, and no entry write and middle write of one block are
 * ever on the way to disk at the same time.
 *
 * Locking. One mutex per inode (fiber-aware: io/cosync.h; shared by every handle of that (dev,
 * ino)) guards its entries; the eviction lists are split over shards with a mutex each, the
 * memory accounting is atomic, and one mutex per cache guards the inode table. Order: inode
 * lock, then shard lock, then cache lock; never two inode locks at once. Device I/O runs without the inode
 * lock (the entry is marked busy meanwhile, and calls that need it wait), except the write of a
 * block that crosses the end of file, which holds the lock from the size probe to the write
 * (and the truncate, if any: rare, the last block of a file). Every function is thread-safe; calls on one handle may run
 * concurrently, except bcache_file_close(), which must be the handle's last call.
 *
 * Size of a file. The block that ends a file goes through ops->write_eof, up to the end alone.
 * Without that op, it is written whole, zero-filled past the on-disk end of file, which extends
 * the file to the block's end; the cache puts the size back itself (ops->trim or ->truncate)
 * before anyone can see it, while still holding the lock. What a client must see as the size is max(on-disk size, end of the last
 * acknowledged WRITE): bcache_file_size() returns exactly that, bcache_file_size_hint() the second
 * term alone (cheaper, no ops call). Neither takes the inode lock unless the file is padded just
 * then (a WRITE asks for the size twice, and on a busy file the lock's queue is long).
 *
 * Errors. A failed ops->write or ops->sync is returned to the caller (who rotates the write
 * verifier); the entry's bytes stay in the cache, dirty, and are written again by the next COMMIT,
 * the next completion of the block, or eviction. Exceptions, all covered by the verifier rotation
 * (clients resend everything they have not seen committed): the last bcache_file_close() of an
 * inode drops what it could not write; an eviction in the window between a COMMIT's writes and its
 * sync frees what it rewrote.
 */
#ifndef NFSD_UC_BCACHE_H
#define NFSD_UC_BCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The layer below, supplied by the server (and faked by the tests). Every function gets the
 * file_io of the handle the cache works through; all may be called from several threads at once
 * for one file_io, on distinct blocks. */
/* Room for the credentials a writer_begin op saves (opaque to the cache). */
struct bcache_writer_saved {
	_Alignas(8) unsigned char bytes[256];
};

struct bcache_ops {
	/* O_DIRECT write: off, len and buf all aligned to the file's block size. 0 or -errno
	 * (a short write is an error: -EIO or -ENOSPC). */
	int (*write)(void *file_io, uint64_t off, const void *buf, size_t len);
	/* Aligned read of one block; may be short at end of file (0 past it). Bytes read or
	 * -errno. This is a device read, and the cache counts it. */
	ssize_t (*read)(void *file_io, uint64_t off, void *buf, size_t len);
	/* Current on-disk size (st_size), or -errno. */
	int64_t (*disk_size)(void *file_io);
	/* fdatasync (datasync) or fsync. 0 or -errno. */
	int (*sync)(void *file_io, bool datasync);
	/* ftruncate. Used to put the size back after a zero-filled block past the end of file,
	 * and by bcache_truncate(). 0 or -errno. */
	int (*truncate)(void *file_io, uint64_t size);
	/* The same from iov[0, iovcnt) (at most BCACHE_IOV_MAX), each aligned; NULL: the cache
	 * calls write once per iovec. */
	int (*writev)(void *file_io, uint64_t off, const struct iovec *iov, int iovcnt);
	/* ftruncate that leaves the mtime as it was: puts the size back after a zero-filled block
	 * past the end of file, which no WRITE asked for (ctime moves: clients see it as their own
	 * COMMIT's by its wcc_data). NULL: truncate. */
	int (*trim)(void *file_io, uint64_t size);
	/* Around each device write of cached data other than a WRITE's own middle (optional, both
	 * or neither): take the credentials such data is written with (restricted: a caller
	 * without CAP_SYS_RESOURCE wrote to this file, so no reserved blocks and quotas apply;
	 * else the server's), saving the caller's in *saved, then put them back. */
	void (*writer_begin)(void *file_io, bool restricted, struct bcache_writer_saved *saved);
	void (*writer_end)(void *file_io, const struct bcache_writer_saved *saved);
	/* Run fn(arg) beside the caller, which will wait for it with a co_cond (optional): a
	 * COMMIT then writes several runs at once, through the same file_io. 0, or -errno when
	 * it cannot (the caller does the work itself). */
	int (*spawn)(void *file_io, void (*fn)(void *arg), void *arg);
	/* 1 when the file holds no data in [off, off + len) (a hole, or space allocated and never
	 * written: a read gives zeros), 0 when it may, -errno (optional; taken as 0). A block
	 * completed over such a range is zero-filled, with no device read: on a new file the
	 * bytes a missing neighbour would have brought are a hole. */
	int (*hole)(void *file_io, uint64_t off, size_t len);
	/* A write from iov[0, iovcnt) that ends the file inside a block: off aligned, every piece
	 * aligned and whole blocks but the last, whose block lies wholly past the on-disk end of
	 * file, the cache holding every byte before the end. Through the kernel's page cache, which
	 * zero-fills the rest of a block past the end of file without reading it (and reads none of
	 * the whole blocks before), and drops the pages once written. 0, -errno, or -EOPNOTSUPP
	 * (optional, as NULL; an op may refuse only writes of more than one piece): the cache then
	 * writes the blocks before O_DIRECT, and the last block whole and puts the size back
	 * (ops->trim), which on Linux reads the block from disk to zero its tail
	 * (xfs_truncate_page). keep: the last piece's page stays cached (the file is appended to
	 * in pieces shorter than a block: the next one then reads nothing), and the block may
	 * hold data on disk. */
	int (*write_eof)(void *file_io, uint64_t off, const struct iovec *iov, int iovcnt,
			 bool keep);
	/* ops->writev and ops->sync(datasync) in one call (RWF_DSYNC, RWF_SYNC): a COMMIT whose
	 * only write it is needs no sync of its own, and a small file's COMMIT is one trip to the
	 * kernel's workers, not two. Only this write's bytes and the size it sets are sure to be
	 * durable (a file system may flush no more than what it wrote: a FUA write), so the cache
	 * uses it only where nothing else of the file awaits a sync. Not for write_eof's writes:
	 * through the page cache a write that syncs itself ran at half the rate of a write and a
	 * sync, 32 files in flight. 0 or -errno (optional). */
	int (*writev_sync)(void *file_io, uint64_t off, const struct iovec *iov, int iovcnt,
			   bool datasync);
};

#define BCACHE_IOV_MAX 1024

/* How a handle's WRITEs meet the disk (bcache_file_set_mode):
 *  THROUGH  the middle of each WRITE is written before bcache_write() returns; the cache holds
 *           only partial end blocks (and frees a block once written whole).
 *  BEHIND   the whole WRITE enters the cache (the middle's blocks adopted from the caller's
 *           buffer, no copy) and bcache_write() returns with no device I/O; chunks of 1 MiB whose
 *           every block is dirty are written out by bcache_writeback() in one vectored write,
 *           the rest when dirty memory passes a quarter of the bound, by COMMIT, or by the
 *           writers themselves at the bound (backpressure: their WRITE waits). Data written or
 *           read stays as clean blocks for READs until evicted. */
enum bcache_mode { BCACHE_THROUGH = 0, BCACHE_BEHIND };

/* A reference-counted owner of WRITE payload memory that the cache may adopt: each block taken
 * holds a reference, and release() runs when the last goes. The caller sets refs to 1, size to
 * the bytes of memory it holds (0: unknown) and cached to 0, calls bcache_write_buf() and then
 * bcache_buf_put() for its own reference. While any of its blocks is cached, the whole size
 * counts against the cache's bound (a record's header and slack are memory too); with size 0
 * each block counts as one block. */
struct bcache_buf {
	_Atomic unsigned refs;
	void (*release)(struct bcache_buf *b);
	size_t size;
	_Atomic unsigned cached;      /* the cache's: its entries holding it */
};
/* Set up b with one reference (the caller's). */
void bcache_buf_init(struct bcache_buf *b, void (*release)(struct bcache_buf *), size_t size);
/* A holder of one reference for mem (from malloc and friends), which its release frees; size as
 * above. NULL when out of memory (mem is then still the caller's). */
struct bcache_buf *bcache_buf_heap(void *mem, size_t size);
void bcache_buf_put(struct bcache_buf *b);

#define BCACHE_WB_HIST 9
struct bcache;       /* one per server */
struct bcache_file;  /* one per bcache_file_open(): a handle on a shared (dev, ino) */

/* Smallest and largest block size accepted by bcache_file_open(). */
#define BCACHE_BLOCK_MIN 512u
#define BCACHE_BLOCK_MAX (1u << 20)

/* A cache holding at most `limit` bytes of block images in all (the conf's cache size, 64M by
 * default), and at most `file_limit` for one inode (0: same as limit). Past a bound the oldest
 * clean entries are freed first (no I/O), then the oldest dirty ones are completed as by a COMMIT
 * and freed (counted as forced). The bound is exceeded transiently by at most the two end blocks of
 * each WRITE in flight, and durably only when nothing is evictable (every entry busy or covered by
 * a WRITE in flight). ops is copied. 0 or -EINVAL, -ENOMEM. */
int bcache_create(const struct bcache_ops *ops, size_t limit, size_t file_limit,
		  struct bcache **out);
/* Every handle must have been closed. NULL is a no-op. */
void bcache_destroy(struct bcache *c);
/* BEHIND mode's flow control (bc_behind.c): a WRITE whose writer is ahead of its file's others
 * waits for one of the chunks they are filling to close, at most hold_ns; a chunk open for longer
 * than young_ns holds nobody back, and dirty data older than that is written behind. Set before
 * the first WRITE (the tests' lever). */
#define BCACHE_HOLD_NS (20 * 1000 * 1000ull)
#define BCACHE_YOUNG_NS (200 * 1000 * 1000ull)
void bcache_set_flow(struct bcache *c, uint64_t hold_ns, uint64_t young_ns);
/* Once the cache wrote `bytes` of a BEHIND handle's file to disk as runs since its last sync
 * began (not the middles WRITEs write straight), the next write-behind fiber syncs it
 * (fdatasync), so that its COMMIT's flush stays short (bc_behind.c). 0, the default: never. Set
 * before the first WRITE. */
void bcache_set_sync_behind(struct bcache *c, uint64_t bytes);

/* Keep up to `bytes` of frames' memory ready (bc_reserve.c): taken back from frames that end
 * and, with prefault, faulted in ahead of need by a thread of idle priority, so that small
 * WRITEs filling files do not pay for the kernel clearing new pages. Inside the bound: ready
 * frames go first when the cache needs room. Once, before the first WRITE. 0, or -errno (-EBUSY
 * if set already). */
int bcache_set_reserve(struct bcache *c, size_t bytes, bool prefault);

/* Register a handle on inode (dev, ino): handles of one inode share its entries. block is the
 * inode's block size, a power of two in [BCACHE_BLOCK_MIN, BCACHE_BLOCK_MAX]; it is fixed by the
 * first handle and a later handle with another size gets -EINVAL. file_io is what the ops get for
 * I/O done through this handle; it must stay valid until bcache_file_close() returns. Entries of
 * an inode may also be written through any of its handles by eviction. 0 or -EINVAL, -ENOMEM. */
int bcache_file_open(struct bcache *c, uint64_t dev, uint64_t ino, uint32_t block,
		     void *file_io, struct bcache_file **out);
/* Unregister; waits for the cache's I/O through this handle to end. When it was the inode's last
 * handle, every dirty entry is completed and written (no sync) and every entry freed: a -errno
 * then says some bytes could not be written and are lost (rotate the verifier). NULL: 0. */
int bcache_file_close(struct bcache_file *f);
/* The file is gone (REMOVE, or RENAME over it, once its last link is gone): free every entry of
 * the inode without writing it, and forget its size hint. */
void bcache_file_drop(struct bcache_file *f);
/* After a write of the file failed, its dirty blocks wait for its COMMIT and its WRITEs past the
 * bound are refused. The caller freed space meanwhile (or knows the fault cleared): try them
 * again now. The failure is still the next COMMIT's to report. */
void bcache_file_retry(struct bcache_file *f);
uint32_t bcache_file_block(const struct bcache_file *f);
/* THROUGH (the default) or BEHIND; set before the handle's first WRITE. */
void bcache_file_set_mode(struct bcache_file *f, enum bcache_mode mode);

/* An NFS WRITE of data[0, len) at off (unstable; for a stable WRITE call bcache_commit() on
 * [off, off + len) after it). The partial blocks at each end are copied into entries (a write
 * inside one block is all prefix); a block every byte of which has now been written is written
 * whole and its entry freed. The whole blocks of the middle go to ops->write in one call, straight
 * from data when data + (middle - off) is aligned to the block size (place payloads so), else
 * through one aligned bounce copy. 0, or the first -errno of the WRITE's I/O (-ENOMEM, -EFBIG):
 * see "Errors" above. */
int bcache_write(struct bcache_file *f, uint64_t off, const void *data, size_t len);
/* The same; in BEHIND mode a whole block of data that is aligned is adopted (buf, which owns the
 * memory, gets a reference per block), any other byte copied once. buf may be NULL (copy). Then
 * the WRITE's own share of flow control: a WRITE at the front of a file's interleaved writers
 * waits (at most hold_ns) for a chunk the others are filling to close (bcache_set_flow); over
 * the bound it writes back the oldest dirty runs itself (or waits for the ones on the way)
 * before returning. */
int bcache_write_buf(struct bcache_file *f, uint64_t off, const void *data, size_t len,
		     struct bcache_buf *buf);
/* A WRITE whose blocks must be on disk before its reply (a stable one): the middle goes to disk
 * now, from data, in either mode, as in THROUGH; the ends into the cache. Call bcache_commit()
 * on [off, off + len) after it. */
int bcache_write_now(struct bcache_file *f, uint64_t off, const void *data, size_t len);

/* Write-behind. Whether there is work for bcache_writeback(): a chunk is ready, dirty memory is
 * past a quarter of the bound, or ready data is older than young_ns. Cheap: atomics and a clock
 * read (and a look at each shard's oldest dirty entry every quarter of young_ns). */
bool bcache_writeback_wanted(struct bcache *c);
/* Write one run of dirty blocks (a ready chunk, else the oldest dirty run when past the
 * threshold or older than young_ns) through a handle of its inode. Bytes written, 0 when there was nothing to do, or
 * -errno (the blocks stay dirty, and the inode's next COMMIT fails with it). Any thread. */
ssize_t bcache_writeback(struct bcache *c);

enum bcache_sync {
	BCACHE_SYNC_NONE = 0,  /* write the entries, no sync */
	BCACHE_SYNC_DATA,      /* then ops->sync(datasync = true): COMMIT, DATA_SYNC */
	BCACHE_SYNC_FILE,      /* then ops->sync(datasync = false): FILE_SYNC */
};
/* COMMIT of [off, off + count) (count 0: to end of file), or the stable part of a WRITE: every
 * dirty entry of a block the range touches is completed (bytes nobody wrote read from disk, or
 * zeros past the on-disk end of file as read at fill time), written, then the file synced as `how`
 * says. Waits for WRITEs in flight on those blocks. Once the sync succeeded, an entry whose every
 * byte was written by WRITEs is freed, any other keeps its complete image, clean (evictable
 * without I/O), for the WRITE that completes it; except, after a COMMIT of the whole file (off 0,
 * count 0), the image of the last block, whose missing bytes lie past the end of file: nothing is
 * held then. 0 or the first -errno; on error the entries not durable stay dirty. */
int bcache_commit(struct bcache_file *f, uint64_t off, uint64_t count, enum bcache_sync how);

/* Whether bcache_commit() of the range would have to fill a block (read the bytes nobody wrote
 * from disk, or zero them): some dirty entry in it is still partial. A stable WRITE asks this to
 * decide whether waiting for the neighbour that completes the block can spare a device read. */
bool bcache_range_partial(struct bcache_file *f, uint64_t off, uint64_t count);

/* Wait while bcache_range_partial(f, off, count) holds (and, with while_crowded, while
 * bcache_file_crowded(f) holds too), at most until deadline_ns (CLOCK_MONOTONIC; 0: no limit),
 * or until co_kick(kick) (kick may be NULL). Woken by what changes the answer: an entry of the
 * inode written, freed or no longer busy. false when the deadline came first. Works in a fiber
 * (io/fiber.h: the fiber waits, not its thread) and in a plain thread. */
struct co_kick;
bool bcache_wait_partial(struct bcache_file *f, uint64_t off, uint64_t count, bool while_crowded,
			 uint64_t deadline_ns, struct co_kick *kick);

/* A READ is three steps: bcache_read_begin(), the caller's disk read into buf, and
 * bcache_read_overlay(), which copies the cached bytes of [off, off + len) over buf. If an entry in
 * the range left the cache between the two calls, its bytes may have reached the disk after the
 * disk read looked: overlay then returns -EAGAIN and the caller reads the disk again (the entry is
 * gone, so the retry finds the bytes on disk). buf must hold what the disk has for the range, with
 * zeros where the disk read came back short; the READ's count and eof come from
 * bcache_file_size(). The struct is the caller's (stack is fine) and private. */
struct bcache_read {
	uint64_t off, len;
	uint64_t wseq;
	bool stale;
	struct bcache_read *next;
};
void bcache_read_begin(struct bcache_file *f, struct bcache_read *rd, uint64_t off,
		       uint64_t len);
/* 0, or -EAGAIN (see above). Always ends the read: call begin again to retry. */
int bcache_read_overlay(struct bcache_file *f, struct bcache_read *rd, void *buf);
/* End a read without overlaying (the disk read failed). */
void bcache_read_cancel(struct bcache_file *f, struct bcache_read *rd);
/* BEHIND mode, a READ served from the cache with no copy: if every byte of [off, off + len) is
 * cached (dirty or clean; len stops at the file's size, the caller's to clamp), fill iov (at most
 * max iovecs, adjacent memory merged) with the cached images and pins[] with a
 * reference on each memory they lie in (as many as iovecs at most), so that they stay valid
 * after the call: the cache never writes into a block pinned so (a WRITE copies it first).
 * Returns the number of iovecs (*npins set), 0 on a miss (nothing pinned), or -ENOMEM. The
 * caller drops the pins with bcache_buf_put() once the reply is sent. A range a readahead is
 * reading now is waited for first (a fiber waits, not its ring), so that READs behind it do
 * not read it again. */
int bcache_read_pinned(struct bcache_file *f, uint64_t off, uint64_t len, struct iovec *iov,
		       int max, struct bcache_buf **pins, int *npins);
/* BEHIND mode: after bcache_read_overlay() succeeded on buf (aligned cover [off, off + len) of
 * whole blocks, len a multiple of the block size), keep its blocks as clean entries where the
 * cache has none, unless a write reached the disk since bcache_read_begin() (rd->wseq). Room is
 * made by freeing clean blocks only (a READ never writes: not even other files' dirty data), so
 * nothing is kept while dirty data fills the cache. With
 * owner (which holds buf's memory, and may be a READ reply's) the blocks are adopted: a reference
 * each, and the cache never writes into them (a WRITE to such a block copies it first); NULL:
 * copied. */
void bcache_read_keep(struct bcache_file *f, const struct bcache_read *rd, uint64_t off,
		      uint64_t len, const void *buf, struct bcache_buf *owner);
/* BEHIND mode, a READ of [off, off + len) that missed: should its blocks be kept? Not when the
 * READ is large (512 KiB or more) and this is the first time lately that any READ of such size
 * touched its chunks: a stream read once (a backup, a copy) then goes straight from disk to the
 * reply in memory used again, while a file read twice is kept the second time. Nor when it is
 * small, neither starts the file nor continues its last READ, and its first block was not
 * missed lately: a random reader's. Records the touch. */
bool bcache_read_worth_keeping(struct bcache_file *f, uint64_t off, uint64_t len);
/* Readahead for a sequential reader: true and [*ra_off, *ra_off + *ra_len) when the READ at
 * [off, off + len) follows the last one, the window after it is not cached and no readahead is
 * on its way: the caller reads the window along with the READ and then calls
 * bcache_readahead_end(). The window starts at 1 MiB and doubles with each sequential READ that
 * needs one, up to max_window; any other READ resets it. Records the READ's end. */
bool bcache_readahead(struct bcache_file *f, uint64_t off, uint64_t len, uint64_t max_window,
		      uint64_t *ra_off, uint64_t *ra_len);
void bcache_readahead_end(struct bcache_file *f);

/* SETATTR size: wait for the cache's writes on the inode to land, free entries past new_size,
 * trim the one it cuts, lower the size hint, then ops->truncate(new_size) under the lock (a
 * caller-side ftruncate could race a block write past the new end and bring old bytes back).
 * 0 or the truncate's -errno. */
int bcache_truncate(struct bcache_file *f, uint64_t new_size);

/* End of the last byte acknowledged by a WRITE since the inode was registered (lowered by
 * bcache_truncate, zeroed by bcache_file_drop): at least the end of every cached byte. */
uint64_t bcache_file_size_hint(struct bcache_file *f);
/* The size to report (GETATTR, READ eof): max(ops->disk_size(), hint), read under the lock so
 * that a block written past the end of file before its truncate is never seen. Or -errno. */
int64_t bcache_file_size(struct bcache_file *f);
/* The same from a disk size the caller read itself (statx, which it needed anyway): take the
 * sequence before reading it, and pass both. */
unsigned bcache_file_size_seq(struct bcache_file *f);
int64_t bcache_file_size_seen(struct bcache_file *f, unsigned seq, int64_t disk);

/* Whether the file's WRITEs should slow down: it holds more than half its bound, and its writers
 * complete each other's blocks (at least one block per four WRITEs lately: interleaved writers,
 * some ahead of the others). Writers drift apart as they go; the blocks between the ones ahead
 * and the ones behind wait in the cache, and past the bound they are completed with device reads.
 * Holding back the replies of WRITEs that leave a partial block lets the ones behind catch up. A
 * writer whose partial blocks nobody completes (sparse unaligned writes) is never held back. */
bool bcache_file_crowded(struct bcache_file *f);
/* A caller without CAP_SYS_RESOURCE writes to this file: from now on (while the cache knows the
 * file) its cached data is written with ops.writer_begin(restricted). */
void bcache_file_restrict(struct bcache_file *f);

/* How many entries the inode holds now (dirty and clean). */
size_t bcache_file_entries(struct bcache_file *f);
/* Free the inode's clean entries (no I/O), e.g. when the file goes idle. Returns how many. */
size_t bcache_file_evict_clean(struct bcache_file *f);
/* The same, but for the block that holds the end of the file inside it, which an append would
 * complete without a read (a partial block's image is a copy: the WRITE's record goes). For a
 * small file committed whole, whose client keeps its own copy. */
void bcache_file_let_go(struct bcache_file *f);

struct bcache_stats {
	uint64_t writes;          /* bcache_write() calls */
	uint64_t direct_middles;  /* middles written straight from the caller's buffer */
	uint64_t bounced_middles; /* middles copied once into an aligned buffer first */
	uint64_t train_waits;     /* middles past the end of file that waited for the one before
				   * (bc_train.c), */
	uint64_t train_writes;    /* and the writes that took two middles or more at once */
	uint64_t completed;       /* blocks every byte of which came from WRITEs, written whole:
				   * no read, the point of the cache */
	uint64_t fill_reads;      /* completions that read the block from disk (device reads), */
	uint64_t fill_reads_commit; /* of those, for a COMMIT or stable WRITE (the neighbour that
				   * shares the block had not come: it never does at the end of a
				   * file's data, and a parked stable WRITE gives up waiting), */
	uint64_t fill_reads_bound;  /* and for the memory bound (a partial block forced out) */
	uint64_t fill_zeros;      /* completions zero-filled past the end of file, no read */
	uint64_t fill_holes;      /* completions zero-filled over a hole in the file, no read */
	uint64_t eof_writes;      /* blocks ending the file written through ops->write_eof */
	uint64_t eof_trims;       /* blocks written whole past the end of file and trimmed back:
				   * the kernel may read each to zero its tail */
	uint64_t lone_writes;     /* BEHIND: aligned WRITEs next to nothing cached nor recent, far
				   * from the file's front, written straight to disk (a random
				   * writer's) */
	uint64_t read_once;       /* READs that missed and were not kept: a large one's chunks, a
				   * small random one's block, not read lately
				   * (bcache_read_worth_keeping) */
	uint64_t forced;          /* dirty entries written and freed by the memory bounds */
	uint64_t io_errors;       /* failed ops->write, ops->read, ops->sync, ops->truncate */
	uint64_t entries;         /* entries held now, clean ones included */
	uint64_t entries_peak;
	uint64_t dirty;           /* entries holding bytes not yet written (or not yet synced
				   * by the COMMIT that wrote them): the analogue of knfsd's
				   * BdiDontcacheDirty, 0 after a final COMMIT */
	uint64_t bytes;           /* block images held now */
	uint64_t bytes_peak;
	uint64_t dirty_bytes;     /* of those, not yet written */
	uint64_t inflight_bytes;  /* being written now */
	uint64_t ready;           /* dirty blocks complete and not on their way: write-behind's
				   * backlog (the rest of the dirty ones wait for neighbours) */
	uint64_t clean_bytes;     /* written or read, kept for READs */
	uint64_t written_bytes;   /* of those, blocks WRITEs gave and nobody has read since */
	uint64_t written_trimmed; /* such blocks let go to hold them to their share (reused) */
	uint64_t adopted;         /* whole blocks taken from WRITE records without a copy */
	uint64_t copied;          /* whole blocks copied (unaligned payloads, small WRITEs) */
	uint64_t frames;          /* frames opened for copied blocks (bc_frame.c) */
	uint64_t frames_warm;     /* of those, given memory the reserve had ready (bc_reserve.c) */
	uint64_t frames_mapped;   /* frames' memory mapped afresh, ahead (reserve) or on demand:
				   * the rest was memory used again */
	uint64_t reserve_bytes;   /* ready frames now, inside the bound */
	uint64_t wb_writes;       /* vectored writes of dirty runs (write-behind, COMMIT, bound) */
	uint64_t wb_bytes;
	uint64_t wb_hist[BCACHE_WB_HIST]; /* of those, by size: < 8K, < 16K, ... < 512K, < 1M, >= 1M */
	uint64_t read_hits;       /* READs served whole from the cache */
	uint64_t read_misses;     /* READs that read the disk */
	uint64_t read_cached;     /* blocks kept clean after a disk read */
	uint64_t readahead_bytes;
	uint64_t bp_waits;        /* WRITEs that waited or wrote back for room (backpressure) */
	uint64_t wb_failures;     /* write-behind writes (the data stays dirty) and syncs that failed */
	uint64_t wb_refused;      /* WRITEs refused past the bound after one of their file's failed */
	uint64_t spread_holds;    /* WRITEs held because their writer was ahead of the file's others */
	uint64_t syncs_behind;    /* syncs write-behind made of files writers left unsynced */
	uint64_t sync_writes;     /* COMMITs and stable WRITEs made durable by their one write
				   * (ops->writev_sync), with no sync of their own */
};
void bcache_get_stats(struct bcache *c, struct bcache_stats *out);

#endif
