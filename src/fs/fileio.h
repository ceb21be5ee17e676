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
#include "nfsd.h"

#define NFS3_MAXIO (1024 * 1024)   /* rtmax = wtmax: the largest READ or WRITE, 1 MiB */

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

enum fileio_stable { FILEIO_UNSTABLE = 0, FILEIO_DATA_SYNC = 1, FILEIO_FILE_SYNC = 2 };

/* WRITE count bytes of data at off. Returns 0 or -errno (the verifier is then rotated), or
 * FILEIO_WAIT, when other requests are running (asked once the bytes are in the cache: one of
 * them may be the neighbour), in direct mode: a stable WRITE whose end blocks are still partial,
 * or an UNSTABLE one left partial in a crowded cache (its writer is ahead of the others:
 * bcache_file_crowded). The data is in the cache then; call fileio_write_wait(). */
#define FILEIO_WAIT 1
int fileio_write(struct nfs_req *rq, struct fh_obj *o, uint64_t off, const void *data, uint32_t count,
		 enum fileio_stable stable);
/* The second half of a WRITE that got FILEIO_WAIT: suspend the calling fiber until the reason
 * to wait is gone, or for at most a second (less when nothing else runs), then 0 (UNSTABLE), or 0
 * or -errno once committed (filling what no neighbour brought). */
int fileio_write_wait(struct nfs_req *rq, struct fh_obj *o, uint64_t off, uint32_t count,
		      enum fileio_stable stable);
/* READ up to count bytes at off into a buffer handed to the reply (rq->payload); *n and *eof set.
 * size is the file's size from its attributes (direct mode asks the cache instead). 0 or -errno. */
int fileio_read(struct nfs_req *rq, struct fh_obj *o, uint64_t off, uint32_t count, uint64_t size,
		uint32_t *n, bool *eof);
/* COMMIT [off, off + count) (count 0: to end of file). 0 or -errno (verifier rotated). */
int fileio_commit(struct nfs_req *rq, struct fh_obj *o, uint64_t off, uint32_t count);
/* SETATTR size. 0 or -errno. Access is the caller's to check. */
int fileio_truncate(struct nfs_req *rq, struct fh_obj *o, uint64_t size);
/* The size a client must see for a regular file: cached bytes count as written. st is updated in
 * place (st->stx_size). */
void fileio_fix_size(struct fs_chan *ch, struct fh_obj *o, struct statx *st);

#endif
