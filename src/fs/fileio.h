/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the file-system layer: file data, per the export's mode. In cached and direct mode
 * nfsd-uc's cache (src/cache) sits between the verbs and the disk, and backend.c supplies its I/O
 * (struct bcache_ops) on O_DIRECT descriptors through the calling fiber's ring; in dontcache
 * and buffered mode the data goes through the page cache. write.c (WRITE, COMMIT, truncate and
 * size), park.c (a WRITE waiting for its neighbour), nospace.c (the disk full), read.c (READ). */
#ifndef NFSD_UC_FS_FILEIO_H
#define NFSD_UC_FS_FILEIO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cache/bcache.h"
#include "fs/fh.h"
#include "fs/fs_int.h"

/* What the cache's ops get for a handle: an O_DIRECT descriptor, fixed for the handle's life. */
struct file_io {
	int fd;
	/* Set once after fd, while the cache may already write through fd from other threads. */
	_Atomic int wfd;              /* the cache's writes: fd, or one that keeps mtime and ctime
				       * (nocmtime.h) */
	_Atomic int tfd;              /* the file's last block: buffered, as wfd leaves the times
				       * (backend.c op_write_eof); -1: none */
	bool fd_set;                  /* fd, wfd and tfd are set */
	bool hinted;                  /* the extent size hint was asked for (fh_hint_extents) */
	uint64_t touched_ns;          /* CLOCK_MONOTONIC of this handle's last mtime touch */
};

/* The daemon's cache, sized from [cache] size, with backend.c's ops. 0 or -errno. */
int fileio_cache_create(struct fs *fs);
/* ftruncate of fd as the server, on the blocking pool from a ring's fiber. 0 or -errno. */
int fileio_truncate_fd(int fd, uint64_t size);

/* SETATTR size. 0 or -errno. Access is the caller's to check. */
int fileio_truncate(struct fs_call *fc, struct fh_obj *o, uint64_t size);
/* The size a client must see for a regular file: cached bytes count as written. st is updated in
 * place (st->stx_size). seq, taken before st was read, lets st's size stand for the disk's where
 * the cache had the file open then (no second look at it); NULL: look. */
struct fileio_size_seq {
	struct bcache_file *bf;   /* NULL: the cache did not have the file open */
	unsigned seq;
};
void fileio_size_seq(const struct fh_obj *o, struct fileio_size_seq *seq);
void fileio_fix_size(struct fs_chan *ch, struct fh_obj *o, struct statx *st,
		     const struct fileio_size_seq *seq);

/* What a WRITE's first half answers when its bytes are in the cache and it is to wait for the
 * neighbour of a partial block: fileio_write_wait() is its second half. */
#define FILEIO_WAIT 1
/* Suspend the calling fiber until the reason to wait is gone, or for at most a second (less when
 * nothing else runs or arrives), then 0 (UNSTABLE), or 0 or -errno once committed (filling what
 * no neighbour brought). */
int fileio_write_wait(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count,
		      enum fs_stable stable);
/* A WRITE failed with rc (synced: the failure may be a sync's, which reports data written
 * before): logged, and the verifier changed if acknowledged data may be lost. */
void fileio_write_failed(struct fs_call *fc, uint64_t off, uint32_t count, int rc, bool synced);
/* A paged-mode call on a file a cached export of the same file system may hold in the cache
 * (export_rt.shares_cache): the cache's dirty blocks go to disk first and its clean ones are
 * dropped. 0 or the flush's -errno. */
int fileio_paged_coherent(struct fs_call *fc, struct fh_obj *o);

/* The disk full (nospace.c): may the WRITE or COMMIT that failed with rc try again (try number
 * tries, from 0)? Deleted files are let go first. */
bool fileio_space_again(struct fs_call *fc, int rc, int tries, bool while_freed);
/* Did any ring let deleted files go in the last second? */
bool fileio_freed_lately(struct fs *fs);
/* A file whose cached blocks could not be written: they get another try. */
void fileio_retry_cached(struct fs_call *fc, struct fh_obj *o);

/* The export's writes go through nfsd-uc's cache: cached (write-behind) or direct (through). */
static inline bool uses_cache(const struct fh_obj *o)
{
	return io_mode_uses_cache(o->exp->write_mode);
}

static inline bool behind(const struct fh_obj *o)
{
	return o->exp->write_mode == IO_MODE_CACHED;
}

static inline struct bcache_file *cache_of(struct fs_call *fc, struct fh_obj *o, int *err)
{
	return fh_bcache(fc->ch, o, (uint32_t)o->exp->block, err);
}

/* A stable WRITE completes a partial end block without the neighbour that shares it. */
static inline void count_alone(struct fs *fs)
{
	atomic_fetch_add_explicit(&fs->stable_alone, 1, memory_order_relaxed);
}

static inline enum bcache_sync sync_of(enum fs_stable stable)
{
	return stable == FS_FILE_SYNC ? BCACHE_SYNC_FILE : BCACHE_SYNC_DATA;
}

/* A direct-mode UNSTABLE WRITE's reply waits while the file's cache is crowded and the WRITE left
 * a block partial: its writer is ahead of a neighbour (see bcache_file_crowded). In cached mode
 * the cache holds the writer at the front itself (bcache_write_buf). */
static inline bool hold_back(const struct fh_obj *o, struct bcache_file *bf, uint64_t off,
			     uint32_t count)
{
	return !behind(o) && bcache_file_crowded(bf) && bcache_range_partial(bf, off, count);
}

#endif
