/* SPDX-License-Identifier: GPL-2.0-or-later */
/* File data I/O of the handlers, per the export's mode: READ, WRITE, COMMIT, truncate and size.
 * In direct mode the boundary cache (src/cache) sits between the handlers and the disk, and this
 * file supplies the cache's I/O (struct bcache_ops) on O_DIRECT descriptors through the calling
 * worker's ring. In dontcache and buffered modes the data goes through the page cache. */
#ifndef NFSD_UC_FS_FILEIO_H
#define NFSD_UC_FS_FILEIO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fs/fh.h"

struct bcache_buf;
struct fs;
struct fs_call;
struct fs_chan;

/* What the cache's ops get for a handle: an O_DIRECT descriptor, fixed for the handle's life. */
struct file_io {
	int fd;
	int wfd;                      /* the cache's writes: fd, or one that keeps mtime and ctime
				       * (nocmtime.h) */
	bool fd_set;                  /* fd and wfd are set */
	bool hinted;                  /* the extent size hint was asked for (fh_hint_extents) */
	uint64_t touched_ns;          /* CLOCK_MONOTONIC of this handle's last mtime touch */
};

/* The memory of a request's record. A WRITE that the cache keeps (write_mode = cached) lends it
 * the record instead of copying the payload: record_buf() turns the memory into a reference-
 * counted holder, which the request's end releases like any other reference. */
struct record_mem {
	void *mem;
	struct bcache_buf *hold;
};
struct bcache_buf *record_buf(struct record_mem *rm);
void record_mem_release(struct record_mem *rm);

/* The daemon's boundary cache, sized from [cache] size. 0 or -errno. */
int fileio_cache_create(struct fs *fs);

/* SETATTR size. 0 or -errno. Access is the caller's to check. */
int fileio_truncate(struct fs_call *fc, struct fh_obj *o, uint64_t size);
/* The size a client must see for a regular file: cached bytes count as written. st is updated in
 * place (st->stx_size). */
void fileio_fix_size(struct fs_chan *ch, struct fh_obj *o, struct statx *st);

#endif
