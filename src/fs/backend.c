/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cache's back end: struct bcache_ops over a handle's O_DIRECT descriptors (and a buffered
 * one for the block that ends a file), through the calling fiber's ring (io_ring_thread()).
 * Calls with no io_uring op: ftruncate goes to the blocking pool; fstat in the cache's disk_size
 * runs in place (memory only, and called under the inode lock, where the shortest call is best);
 * every op on a thread without a ring (the main thread closing the empty handle cache of a ring
 * that never started) is a plain syscall. And the record a cached WRITE lends the cache. */
#include "fs/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bufstash.h"
#include "base/log.h"
#include "cache/bcache.h"
#include "fs/cred.h"
#include "fs/fs_int.h"
#include "io/fiber.h"
#include "io/ring.h"


/* pwritev of iov[0, iovcnt) at off through the ring (in place on a thread without one); a short
 * write goes on with the rest. rwf: RWF_* flags, RWF_DSYNC or RWF_SYNC making each piece
 * durable when it returns. */
static int writev_full(int fd, uint64_t off, const struct iovec *iov, int iovcnt, int rwf)
{
	struct io_ring *r = io_ring_thread();
	struct iovec v[BCACHE_IOV_MAX + 1];
	if (iovcnt > BCACHE_IOV_MAX + 1)
		return -EINVAL;
	memcpy(v, iov, (size_t)iovcnt * sizeof *v);
	int i = 0;
	while (i < iovcnt) {
		ssize_t n = r ? io_pwritev(r, fd, v + i, iovcnt - i, off, rwf)
			      : pwritev2(fd, v + i, iovcnt - i, (off_t)off, rwf);
		if (n < 0)
			return r ? (int)n : -errno;
		if (n == 0)
			return -ENOSPC;
		off += (uint64_t)n;
		while (i < iovcnt && (size_t)n >= v[i].iov_len)
			n -= (ssize_t)v[i++].iov_len;
		if (i < iovcnt) {
			v[i].iov_base = (char *)v[i].iov_base + n;
			v[i].iov_len -= (size_t)n;
		}
	}
	return 0;
}

/* Write-behind's and COMMIT's runs, O_DIRECT. */
static int op_writev(void *io, uint64_t off, const struct iovec *iov, int iovcnt)
{
	return writev_full(((struct file_io *)io)->wfd, off, iov, iovcnt, 0);
}

static int op_write(void *io, uint64_t off, const void *buf, size_t len)
{
	struct iovec v = {(void *)buf, len};
	return writev_full(((struct file_io *)io)->wfd, off, &v, 1, 0);
}

static int op_writev_sync(void *io, uint64_t off, const struct iovec *iov, int iovcnt,
			  bool datasync)
{
	return writev_full(((struct file_io *)io)->wfd, off, iov, iovcnt,
			   datasync ? RWF_DSYNC : RWF_SYNC);
}

/* Whole blocks through the page cache, RWF_DONTCACHE (dropped once written); where the kernel or
 * file system refuses it, -EOPNOTSUPP: they go O_DIRECT instead, so that the page cache holds no
 * more than a page per file end. */
static int write_dropped(int fd, uint64_t off, const struct iovec *iov, int iovcnt)
{
	int rc = writev_full(fd, off, iov, iovcnt, RWF_DONTCACHE);
	return rc == -EINVAL ? -EOPNOTSUPP : rc;   /* refused before writing anything */
}

/* The file's end, once per file end: through the page cache, where the kernel zero-fills the
 * rest of a block past the end of file without reading it, and RWF_DONTCACHE drops the pages
 * once written. The end's page is kept where the cache asks (keep: an appended file, whose next
 * append would otherwise read the block back), and where RWF_DONTCACHE is refused (only a lone
 * end goes then). The O_DIRECT way for the end, the block padded and the size trimmed back,
 * costs a device read: the trim zeroes the block's tail through the page cache
 * (xfs_truncate_page). */
static int op_write_eof(void *io, uint64_t off, const struct iovec *iov, int iovcnt, bool keep)
{
	int fd = ((struct file_io *)io)->tfd, rc;
	if (fd < 0)
		return -EOPNOTSUPP;
	if (keep) {
		int whole = iovcnt - 1;
		rc = whole > 0 ? write_dropped(fd, off, iov, whole) : 0;
		for (int i = 0; i < whole; i++)
			off += iov[i].iov_len;
		if (rc == 0)
			rc = writev_full(fd, off, iov + whole, 1, 0);
	} else {
		rc = write_dropped(fd, off, iov, iovcnt);
		if (rc == -EOPNOTSUPP && iovcnt == 1)
			rc = writev_full(fd, off, iov, 1, 0);
	}
	return rc == -EBADF ? -EOPNOTSUPP : rc;   /* READs' descriptor, read-only: pad, trim */
}


static ssize_t op_read(void *io, uint64_t off, void *buf, size_t len)
{
	int fd = ((struct file_io *)io)->fd;
	struct io_ring *r = io_ring_thread();
	size_t done = 0;
	while (done < len) {
		ssize_t n = r ? io_pread(r, fd, (char *)buf + done, len - done, off + done)
			      : pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0)
			return r ? n : -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int64_t op_disk_size(void *io)
{
	struct stat sb;
	if (fstat(((struct file_io *)io)->fd, &sb) < 0)
		return -errno;
	return sb.st_size;
}

/* SEEK_DATA: memory only where the extent map is cached (it is for a file being written), and
 * the file position it moves is used by nobody (every read and write here is positioned). A
 * file system without SEEK_DATA of its own says all is data (generic_file_llseek): read, as
 * before. */
static int op_hole(void *io, uint64_t off, size_t len)
{
	off_t data = lseek(((struct file_io *)io)->fd, (off_t)off, SEEK_DATA);
	if (data < 0)
		return errno == ENXIO ? 1 : -errno;
	return (uint64_t)data >= off + len;
}

static int op_sync(void *io, bool datasync)
{
	int fd = ((struct file_io *)io)->fd;
	struct io_ring *r = io_ring_thread();
	if (r)
		return io_fsync(r, fd, datasync);
	return (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0;
}

struct truncate_call {
	int fd;
	uint64_t size;
};

static long do_truncate(void *arg)
{
	struct truncate_call *a = arg;
	return ftruncate(a->fd, (off_t)a->size) < 0 ? -errno : 0;
}

/* On the blocking pool when called from a ring's fiber (io_uring has no ftruncate in liburing
 * 2.3); in place elsewhere. As the server: the cache truncates for its own bookkeeping too. */
int fileio_truncate_fd(int fd, uint64_t size)
{
	struct truncate_call a = {fd, size};
	return (int)cred_offload_root(fs_chan_self(), do_truncate, &a);
}

static int op_truncate(void *io, uint64_t size)
{
	return fileio_truncate_fd(((struct file_io *)io)->fd, size);
}

static long do_trim(void *arg)
{
	struct truncate_call *a = arg;
	struct stat sb;
	if (fstat(a->fd, &sb) < 0 || ftruncate(a->fd, (off_t)a->size) < 0)
		return -errno;
	const struct timespec t[2] = {{0, UTIME_OMIT}, sb.st_mtim};
	return futimens(a->fd, t) < 0 ? -errno : 0;
}

static int op_trim(void *io, uint64_t size)
{
	struct truncate_call a = {((struct file_io *)io)->fd, size};
	return (int)cred_offload_root(fs_chan_self(), do_trim, &a);
}

/* Cached data reaches the disk later, from whichever fiber writes it (write-behind, COMMIT, the
 * bound's eviction): with the credentials of the server, but never past the limits its writer
 * had. A file an NFS user wrote is written as nobody, without CAP_SYS_RESOURCE (through its
 * open descriptor: no permission is asked), so reserved blocks and quotas hold as they would
 * have for the user's own write (knfsd's page cache allocates at write(), as the user). */
_Static_assert(sizeof(struct cred_state) <= sizeof(struct bcache_writer_saved), "room for creds");

static void op_writer_begin(void *io, bool restricted, struct bcache_writer_saved *saved)
{
	static const struct rpc_cred nobody = {.uid = 65534, .gid = 65534};
	struct fs_chan *ch = fs_chan_self();
	(void)io;
	if (!ch)
		return;   /* the main thread at exit: as root */
	memcpy(saved->bytes, &ch->creds, sizeof ch->creds);
	if ((restricted ? cred_apply(ch, &nobody) : cred_root(ch)) < 0)
		log_warn("cannot take the credentials to write cached data with");
}

static void op_writer_end(void *io, const struct bcache_writer_saved *saved)
{
	struct fs_chan *ch = fs_chan_self();
	struct cred_state cs;
	(void)io;
	if (!ch)
		return;
	memcpy(&cs, saved->bytes, sizeof cs);
	if ((cs.is_root ? cred_root(ch) : cred_apply(ch, &cs.cur)) < 0) {
		/* Never go on as root for a user (cred_apply fell back to root): as nobody, its
		 * calls fail rather than overreach, as cred_restore does. */
		static const struct rpc_cred nobody = {.uid = 65534, .gid = 65534};
		log_err("cannot take back a request's credentials after writing cached data");
		cred_apply(ch, &nobody);
	}
}

/* A helper of a COMMIT's writes: a fiber of the caller's ring. Only for a caller that is itself
 * a fiber there: it yields while it waits for the helper, which a thread blocked outside one
 * (the main thread closing handles at exit) would never let run. */
static int op_spawn(void *io, void (*fn)(void *arg), void *arg)
{
	struct fs_chan *ch = fs_chan_self();
	(void)io;
	if (!ch || !fiber_self())
		return -EAGAIN;
	return fs_spawn_as_server(ch, fn, arg);
}

/* Does an export use write-behind, where small WRITEs filling files take frames (bc_frame.c)? */
static bool any_export_behind(const struct config *cfg)
{
	for (size_t i = 0; i < cfg->nexports; i++)
		if (cfg->exports[i].write_mode == IO_MODE_CACHED)
			return true;
	return false;
}

int fileio_cache_create(struct fs *fs)
{
	static const struct bcache_ops ops = {op_write, op_read, op_disk_size, op_sync, op_truncate,
					      op_writev, op_trim, op_writer_begin, op_writer_end,
					      op_spawn, op_hole, op_write_eof, op_writev_sync};
	/* One inode may take at most half of the cache unless told otherwise: a single runaway
	 * writer cannot starve the others' partial blocks into forced fills. */
	const struct config *cfg = fs->cfg;
	size_t file = cfg->cache_file_size ? cfg->cache_file_size : cfg->cache_size / 2;
	int rc = bcache_create(&ops, cfg->cache_size, file, &fs->cache);

	if (rc == 0)
		bcache_set_sync_behind(fs->cache, cfg->cache_sync_behind);

	/* An eighth of the cache faulted in ahead of need for frames (bc_reserve.c): 128M of the
	 * default, what a stream of interleaved writers holds at once (32 writers of 47008-byte
	 * records, 1 or 4 in flight each: 80-145 MiB); at least 32M (but half a small cache), as
	 * written data is let go to the floor once the frames in being are all out. An export made
	 * write-behind by a reload later maps its frames as it needs them, and so do all without
	 * the reserve: it saves time, it is not needed. */
	if (rc || !any_export_behind(cfg))
		return rc;
	size_t size = cfg->cache_size, want = size / 8 < (32u << 20) ? 32u << 20 : size / 8;
	int err = bcache_set_reserve(fs->cache, want < size / 2 ? want : size / 2, true);
	if (err)
		log_warn("no reserve of memory for the cache's frames: %s", strerror(-err));
	return 0;
}

struct bcache_buf *record_buf(struct record_mem *rm)
{
	if (!rm)
		return NULL;
	/* The whole allocation counts: header and slack too. NULL: the cache copies instead. */
	if (!rm->hold)
		rm->hold = bcache_buf_heap(rm->mem, malloc_usable_size(rm->mem));
	return rm->hold;
}

void record_mem_release(struct record_mem *rm)
{
	if (rm->hold)
		bcache_buf_put(rm->hold);
	else
		bufstash_free(rm->mem);
	rm->mem = NULL;
	rm->hold = NULL;
}
