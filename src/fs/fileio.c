/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Calls with no io_uring op: ftruncate and the mtime touch go to the blocking pool; fstat in the
 * cache's disk_size runs in place (memory only, and called under the inode lock, where the
 * shortest call is best); every op on a thread without a ring (the main thread closing the
 * empty handle cache of a ring that never started) is a plain syscall. */
#include "fs/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/bcache.h"
#include "fs/cred.h"
#include "io/fiber.h"
#include "io/ring.h"
#include "base/log.h"
#include "fs/fs_int.h"
#include "fs/verifier.h"

/* What write_tries and write_finish answer when the bytes are in the cache and the WRITE is to
 * wait for the neighbour of a partial block (write_wait). */
#define FILEIO_WAIT 1

/* ---- the cache's I/O ---- */

static int op_write(void *io, uint64_t off, const void *buf, size_t len)
{
	int fd = ((struct file_io *)io)->wfd;
	struct io_ring *r = io_ring_thread();
	size_t done = 0;
	while (done < len) {
		ssize_t n = r ? io_pwrite(r, fd, (const char *)buf + done, len - done, off + done, 0)
			      : pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0)
			return r ? (int)n : -errno;
		if (n == 0)
			return -ENOSPC;
		done += (size_t)n;
	}
	return 0;
}

/* One vectored write (write-behind and COMMIT runs); a short one goes on with the rest. */
static int op_writev(void *io, uint64_t off, const struct iovec *iov, int iovcnt)
{
	int fd = ((struct file_io *)io)->wfd;
	struct io_ring *r = io_ring_thread();
	struct iovec v[BCACHE_IOV_MAX];
	if (iovcnt > BCACHE_IOV_MAX)
		return -EINVAL;
	memcpy(v, iov, (size_t)iovcnt * sizeof *v);
	int i = 0;
	while (i < iovcnt) {
		ssize_t n = r ? io_pwritev(r, fd, v + i, iovcnt - i, off)
			      : pwritev(fd, v + i, iovcnt - i, (off_t)off);
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
static int truncate_fd(int fd, uint64_t size)
{
	struct truncate_call a = {fd, size};
	return (int)cred_offload_root(fs_chan_self(), do_truncate, &a);
}

static int op_truncate(void *io, uint64_t size)
{
	return truncate_fd(((struct file_io *)io)->fd, size);
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
					      op_spawn, op_hole};
	/* One inode may take at most half of the cache unless told otherwise: a single runaway
	 * writer cannot starve the others' partial blocks into forced fills. */
	const struct config *cfg = fs->cfg;
	size_t file = cfg->cache_file_size ? cfg->cache_file_size : cfg->cache_size / 2;
	int rc = bcache_create(&ops, cfg->cache_size, file, &fs->cache);

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

/* The export's writes go through nfsd-uc's cache: cached (write-behind) or direct (through). */
static bool uses_cache(const struct fh_obj *o)
{
	return io_mode_uses_cache(o->exp->write_mode);
}

static bool behind(const struct fh_obj *o)
{
	return o->exp->write_mode == IO_MODE_CACHED;
}

static struct bcache_file *cache_of(struct fs_call *fc, struct fh_obj *o, int *err)
{
	return fh_bcache(fc->ch, o, (uint32_t)o->exp->block, err);
}

/* ---- WRITE and COMMIT ---- */

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
		free(rm->mem);
	rm->mem = NULL;
	rm->hold = NULL;
}


static ssize_t write_all(struct io_ring *r, int fd, const char *buf, size_t len, uint64_t off, int rwf)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = io_pwrite(r, fd, buf + done, len - done, off + done, rwf);
		if (n == -EOPNOTSUPP && rwf) {   /* kernel without RWF_DONTCACHE */
			rwf = 0;
			continue;
		}
		if (n < 0)
			return n;
		if (n == 0)
			return -ENOSPC;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* A stable WRITE completes a partial end block without the neighbour that shares it. */
static void count_alone(struct fs *fs)
{
	atomic_fetch_add_explicit(&fs->stable_alone, 1, memory_order_relaxed);
}

static bool covers_whole_block(uint64_t off, uint32_t len, uint64_t bs)
{
	uint64_t first = (off + bs - 1) / bs, end = (off + len) / bs;
	return end > first;
}

#define TOUCH_EVERY_NS (4 * 1000 * 1000u)

/* A WRITE that only reached the cache changed the file all the same: its mtime and ctime move now,
 * not at the later flush (clients judge their caches by them). */
static long do_touch(void *arg)
{
	const struct timespec t[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", *(int *)arg);
	return utimensat(AT_FDCWD, path, t, 0) < 0 ? -errno : 0;
}

static void touch_mtime(struct fs_chan *ch, struct fh_obj *o)
{
	/* One touch per few milliseconds is as fine as the file system keeps times anyway (ext4's
	 * are jiffies), and spares a journalled metadata update per small WRITE. */
	struct file_io *fio = fh_file_io(o);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	if (fio->touched_ns && ns - fio->touched_ns < TOUCH_EVERY_NS)
		return;
	fio->touched_ns = ns;
	long rc = cred_offload(ch, do_touch, &o->fd);
	if (rc < 0)
		log_debug("mtime of a cached WRITE: %s", strerror((int)-rc));
}

static enum bcache_sync sync_of(enum fs_stable stable)
{
	return stable == FS_FILE_SYNC ? BCACHE_SYNC_FILE : BCACHE_SYNC_DATA;
}

/* A direct-mode UNSTABLE WRITE's reply waits while the file's cache is crowded and the WRITE left
 * a block partial: its writer is ahead of a neighbour (see bcache_file_crowded). In cached mode
 * the cache holds the writer at the front itself (bcache_write_buf). */
static bool hold_back(const struct fh_obj *o, struct bcache_file *bf, uint64_t off, uint32_t count)
{
	return !behind(o) && bcache_file_crowded(bf) && bcache_range_partial(bf, off, count);
}

static int write_cached(struct fs_call *fc, struct fh_obj *o, uint64_t off, const void *data,
			uint32_t count, enum fs_stable stable)
{
	int err = 0;
	struct bcache_file *bf = cache_of(fc, o, &err);
	if (!bf)
		return -err;
	struct fs_chan *ch = fc->ch;
	fh_hint_extents(ch, o);
	if (!ch->creds.is_root && ch->creds.cur.uid != 0)
		bcache_file_restrict(bf);
	int rc = behind(o) ? bcache_write_buf(bf, off, data, count, record_buf(fc->rec))
			   : bcache_write(bf, off, data, count);
	/* In cached mode no byte of the WRITE reached the disk yet; else only the middle did. */
	if (rc == 0 && (behind(o) || !covers_whole_block(off, count, o->exp->block)))
		touch_mtime(ch, o);
	if (rc < 0)
		return rc;
	if (behind(o) && bcache_writeback_wanted(ch->fs->cache))
		fs_writeback(ch);
	/* Whether others run (one may be the neighbour) is asked now, with this WRITE's middle on
	 * disk, not when it arrived; and last, as it reads every ring's counter. In cached mode
	 * the cache's own hold of the writer ahead does what holding back does here. */
	if (stable == FS_UNSTABLE)
		return hold_back(o, bf, off, count) && ch->fs->ops.busy(ch->ring)
			       ? FILEIO_WAIT : 0;
	/* Making a partial end block durable now means reading what nobody wrote yet; the WRITE
	 * that brings it may be a moment away: one running now, or, while other WRITEs wait for
	 * theirs, one of the next the clients send (replies of a group commit go out together,
	 * and for a moment every WRITE left may be a parked one: committed at once, they made
	 * 0.0015 device reads per 6000-byte FILE_SYNC WRITE). A lone writer's is not coming. */
	if (bcache_range_partial(bf, off, count)) {
		if (ch->fs->ops.busy(ch->ring) || ch->fs->ops.parked(ch->ring))
			return FILEIO_WAIT;
		count_alone(ch->fs);
	}
	return bcache_commit(bf, off, count, sync_of(stable));
}

/* A paged-mode call on a file that a cached export of the same file system may hold in nfsd-uc's
 * cache (export_rt.shares_cache): the cache's dirty blocks go to disk first (else they would land
 * later, over this call's newer bytes) and its clean ones are dropped (this call may change
 * them). 0 or the flush's -errno. */
static int paged_coherent(struct fs_call *fc, struct fh_obj *o)
{
	if (!o->exp->shares_cache)
		return 0;
	int err = 0;
	struct bcache_file *bf = cache_of(fc, o, &err);
	if (!bf || bcache_file_entries(bf) == 0)
		return 0;   /* no handle (another block size): nothing can be cached for it */
	int rc = bcache_commit(bf, 0, 0, BCACHE_SYNC_NONE);
	bcache_file_evict_clean(bf);
	return rc;
}

static int write_paged(struct fs_call *fc, struct fh_obj *o, uint64_t off, const void *data,
		       uint32_t count, enum fs_stable stable)
{
	int prc = paged_coherent(fc, o);
	if (prc < 0)
		return prc;
	int fd = fh_io_fd(fc->ch, o, false);
	if (fd < 0)
		return fd;
	int rwf = o->exp->write_mode == IO_MODE_DONTCACHE ? RWF_DONTCACHE : 0;
	ssize_t n = write_all(fc->ch->io, fd, data, count, off, rwf);
	if (n < 0)
		return (int)n;
	if (stable != FS_UNSTABLE)
		return io_fsync(fc->ch->io, fd, stable == FS_DATA_SYNC);
	return 0;
}

/* synced: the failure may be a sync's (a stable WRITE), which reports data written before. */
static void write_failed(struct fs_call *fc, uint64_t off, uint32_t count, int rc, bool synced)
{
	bool lost = fs_verf_lost(rc, synced);
	/* A full disk fails every WRITE: one line a second says so, with how many it stands for. */
	log_ratelimited(&fc->ch->fs->write_errors, LOG_WARNING, "WRITE of %u bytes at %llu failed: %s%s",
			count, (unsigned long long)off, strerror(-rc),
			lost ? "; write verifier changed" : "");
	if (lost)
		fs_rotate_verf(fc->ch->fs);
}

static int write_finish(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count,
			enum fs_stable stable, bool force)
{
	int err = 0;
	struct bcache_file *bf = cache_of(fc, o, &err);
	if (!bf)
		return -err;
	if (stable == FS_UNSTABLE)
		return !force && hold_back(o, bf, off, count) ? FILEIO_WAIT : 0;
	if (bcache_range_partial(bf, off, count)) {
		if (!force)
			return FILEIO_WAIT;
		count_alone(fc->ch->fs);
	}
	int rc = bcache_commit(bf, off, count, sync_of(stable));
	if (rc < 0)
		write_failed(fc, off, count, rc, true);
	return rc;
}

/* A parked WRITE waits for its neighbour while other requests run or keep arriving (one of them
 * may be it), and at least PARK_MIN_NS; once nothing has run or arrived anywhere for PARK_MIN_NS
 * it waits no more, and never more than PARK_MAX_NS. Arrivals count, not only requests running:
 * behind a slow writer every WRITE in flight may be parked at one moment, the next ones the
 * clients send bringing the neighbours (32 FILE_SYNC writers of 47008-byte records: 4-23 blocks
 * completed by a read per 24000 overwriting WRITEs when "nothing running" alone decided, each
 * parked 10-20 ms beside 24-57 others). The wait is on the inode's own wake-ups (an entry written
 * or freed), with the fiber suspended: its ring serves other calls meanwhile. Once nothing runs
 * anywhere, the rings kick their parked WRITEs (fs_ring_ops): no periodic look. */
#define PARK_MIN_NS (10 * 1000 * 1000ull)
#define PARK_MAX_NS (1000 * 1000 * 1000ull)

static int write_wait(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count,
		      enum fs_stable stable)
{
	int err = 0;
	struct bcache_file *bf = cache_of(fc, o, &err);
	if (!bf)
		return -err;
	struct fs_chan *ch = fc->ch;
	const struct fs_ring_ops *ops = &ch->fs->ops;
	struct fs_parked pc;
	ops->park_begin(ch->ring, &pc);
	uint64_t start = fiber_now_ns(), min = start + PARK_MIN_NS, end = start + PARK_MAX_NS;
	int rc;
	for (;;) {
		uint64_t now = fiber_now_ns();
		uint64_t quiet = ops->last_start(ch->ring) + PARK_MIN_NS;
		uint64_t until = quiet > min ? quiet : min;
		/* Counted as running again here (ops->running), so "others" is anyone but us. */
		bool force = now >= end || (now >= until && !ops->busy(ch->ring));
		rc = write_finish(fc, o, off, count, stable, force);
		if (rc != FILEIO_WAIT)
			break;
		pc.kick.kicked = false;
		ops->running(ch->ring, false);
		/* Before then the idle kick is not armed: it would end each wait at once (nothing
		 * else runs) and the loop would spin on it. */
		bcache_wait_partial(bf, off, count, stable == FS_UNSTABLE, now < until ? until : end,
				    now < until ? NULL : &pc.kick);
		ops->running(ch->ring, true);
	}
	ops->park_end(ch->ring, &pc);
	return rc;
}

static int write_once(struct fs_call *fc, struct fh_obj *o, uint64_t off, const void *data,
		      uint32_t count, enum fs_stable stable)
{
	return uses_cache(o) ? write_cached(fc, o, off, data, count, stable)
			       : write_paged(fc, o, off, data, count, stable);
}

/* Deleted files we still hold open may be what fills the disk: let them go (here now, in the
 * other rings at their next turn). fh_sweep skips the entries the request holds (pinned). */
static void free_deleted(struct fs_chan *ch)
{
	fh_sweep(ch);
	fh_close_doomed(ch);
	fs_sweep_everywhere(ch, true);
}

/* Did any ring let deleted files go in the last second? Their space may be on its way: the
 * file system hands it out a moment after the last close (a deferred final release, a journal
 * commit). */
static bool freed_lately(struct fs *fs)
{
	return fiber_now_ns() - atomic_load(&fs->deleted_closed_ns) < 1000 * 1000 * 1000ull;
}

/* A file whose cached blocks could not be written is refused WRITEs past the bound: with space
 * freed, its blocks get another try before the WRITE does (not without: each WRITE so retried
 * would add its bytes to what cannot go). */
static void retry_cached(struct fs_call *fc, struct fh_obj *o)
{
	int err = 0;
	struct bcache_file *bf = behind(o) ? cache_of(fc, o, &err) : NULL;
	if (bf)
		bcache_file_retry(bf);
}

/* A WRITE or COMMIT that found the disk full: may it try again (try number tries, from 0)?
 * Deleted files we still hold may be what fills it, so first let them go. The space they free
 * may take the file system a moment (a deferred final release; ext4 hands freed blocks out
 * after its journal commits): up to 4 tries, 50 ms apart, and with while_freed only while some
 * ring let deleted files go in the last second. */
static bool space_again(struct fs_call *fc, int rc, int tries, bool while_freed)
{
	if ((rc != -ENOSPC && rc != -EDQUOT) || tries >= 4)
		return false;
	if (tries && while_freed && !freed_lately(fc->ch->fs))
		return false;
	free_deleted(fc->ch);
	if (tries)
		fiber_sleep_ns(50 * 1000 * 1000ull);
	return true;
}

/* The WRITE's bytes into the file or the cache, the disk full tried again; FILEIO_WAIT when it
 * is to wait for a neighbour (write_wait). */
static int write_tries(struct fs_call *fc, struct fh_obj *o, uint64_t off, const void *data,
		       uint32_t count, enum fs_stable stable)
{
	int rc = write_once(fc, o, off, data, count, stable);
	/* Once in every mode; more only in cached mode, where the failure may be a write-behind's
	 * whose blocks retry_cached lets go again. */
	for (int tries = 0; (tries == 0 || behind(o)) && space_again(fc, rc, tries, true); tries++) {
		if (freed_lately(fc->ch->fs))
			retry_cached(fc, o);
		rc = write_once(fc, o, off, data, count, stable);
	}
	if (rc < 0)
		write_failed(fc, off, count, rc, stable != FS_UNSTABLE);
	return rc;
}

/* *synced: the error is the writing or syncing of held data's, not the handle's. */
static int commit_once(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count,
		       bool *synced)
{
	int err = 0;
	*synced = false;
	if (uses_cache(o)) {
		struct bcache_file *bf = cache_of(fc, o, &err);
		*synced = bf != NULL;
		return bf ? bcache_commit(bf, off, count, BCACHE_SYNC_FILE) : -err;
	}
	int fd = fh_io_fd(fc->ch, o, false);
	*synced = fd >= 0;
	return fd < 0 ? fd : io_fsync(fc->ch->io, fd, false);
}

int fs_write(struct fs_call *fc, struct fh_obj *o, uint64_t off, const void *data,
	     uint32_t count, enum fs_stable stable)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	int rc = write_tries(fc, o, off, data, count, stable);
	if (rc == FILEIO_WAIT)
		rc = write_wait(fc, o, off, count, stable);
	return rc;
}

int fs_commit(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	bool synced;
	int rc = commit_once(fc, o, off, count, &synced);
	/* In cached mode a full disk shows here, not in the WRITEs: what is still dirty gets
	 * written once more. Not in the others: an fsync that failed has reported (and cleared)
	 * the file's write-back error, and a second one would succeed over the lost pages. */
	for (int tries = 0; behind(o) && space_again(fc, rc, tries, false); tries++)
		rc = commit_once(fc, o, off, count, &synced);
	if (rc < 0 && fs_verf_lost(rc, synced)) {
		log_warn("COMMIT failed: %s; write verifier changed", strerror(-rc));
		fs_rotate_verf(fc->ch->fs);
	} else if (rc < 0) {
		log_debug("COMMIT failed: %s", strerror(-rc));
	}
	return rc;
}

int fileio_truncate(struct fs_call *fc, struct fh_obj *o, uint64_t size)
{
	int err = 0;
	if (uses_cache(o)) {
		struct bcache_file *bf = cache_of(fc, o, &err);
		return bf ? bcache_truncate(bf, size) : -err;
	}
	int fd = fh_io_fd(fc->ch, o, false);
	if (fd < 0)
		return fd;
	int rc = paged_coherent(fc, o);
	return rc < 0 ? rc : truncate_fd(fd, size);
}

/* Also through a paged export of a file system a cached one serves (shares_cache). */
void fileio_fix_size(struct fs_chan *ch, struct fh_obj *o, struct statx *st)
{
	if (!o->exp || !(uses_cache(o) || o->exp->shares_cache) || !S_ISREG(st->stx_mode))
		return;
	int err;
	struct bcache_file *bf = fh_bcache(ch, o, (uint32_t)o->exp->block, &err);
	if (!bf)
		return;
	int64_t size = bcache_file_size(bf);
	if (size >= 0)
		st->stx_size = (uint64_t)size;
}

/* ---- READ ---- */

static void read_buf_put(void *p) { bcache_buf_put(p); }

/* What a disk read brought: the buffer (mem) in a holder (hold: the reply's payload, and in
 * cached mode also the image of the blocks the cache keeps from it, one reference each: freed
 * when the reply is sent and the last of those blocks has left the cache), where the READ's bytes
 * start in it (data), and how many bytes from the buffer's start are whole blocks the disk gave
 * (keep_len), for the cache to keep clean. */
struct disk_read {
	struct bcache_buf *hold;
	char *mem, *data;
	uint64_t keep_len;
};

/* The range a READ of [off, off + len) reads from disk: for O_DIRECT the aligned cover, stretched
 * to `extra` bytes past the READ (readahead); the range itself in the other modes. */
static void read_cover(const struct fh_obj *o, uint64_t off, uint64_t len, uint64_t extra,
		       uint64_t *a0, uint64_t *a1)
{
	bool direct = o->exp->read_mode == IO_MODE_DIRECT;
	uint64_t bs = direct ? o->exp->block : 1;
	*a0 = off & ~(bs - 1);
	*a1 = (off + len + (direct ? extra : 0) + bs - 1) & ~(bs - 1);
}

/* Read the cover [a0, a1) of a READ at off from the file as the export's read mode says, data
 * pointing at off inside it (no second copy). Bytes past the end of the file read as zeros.
 * 0 or -errno. */
static int read_disk(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint64_t a0, uint64_t a1,
		     struct disk_read *dr)
{
	bool direct = o->exp->read_mode == IO_MODE_DIRECT;
	uint64_t bs = direct ? o->exp->block : 4096;
	int fd = fh_io_fd(fc->ch, o, direct);
	if (fd < 0)
		return fd;
	char *buf = aligned_alloc(bs, ((a1 - a0) + bs - 1) & ~(bs - 1));
	struct bcache_buf *hold = buf ? bcache_buf_heap(buf, malloc_usable_size(buf)) : NULL;
	if (!hold) {
		free(buf);
		return -ENOMEM;
	}
	int rwf = o->exp->read_mode == IO_MODE_DONTCACHE ? RWF_DONTCACHE : 0;
	ssize_t n = io_pread_flags(fc->ch->io, fd, buf, a1 - a0, a0, rwf);
	if (n == -EOPNOTSUPP && rwf)
		n = io_pread(fc->ch->io, fd, buf, a1 - a0, a0);
	if (n < 0) {
		bcache_buf_put(hold);
		return (int)n;
	}
	if ((uint64_t)n < a1 - a0)
		memset(buf + n, 0, a1 - a0 - (uint64_t)n);
	*dr = (struct disk_read){.hold = hold, .mem = buf, .data = buf + (off - a0),
				 .keep_len = direct ? (uint64_t)n & ~(bs - 1) : 0};
	return 0;
}

/* The disk's bytes with the cache's newer ones laid over them. A cached block that left the cache
 * between the disk read and the overlay may have reached the disk after the read: read again.
 * In cached mode the blocks read stay in the cache, clean. */
static int read_overlaid(struct fs_call *fc, struct fh_obj *o, struct bcache_file *bf, uint64_t off,
			 uint32_t len, uint64_t extra, struct disk_read *dr)
{
	uint64_t a0, a1;
	read_cover(o, off, len, extra, &a0, &a1);
	for (int tries = 0; tries < 16; tries++) {
		struct bcache_read rd;
		/* The whole buffer is overlaid: what the cache keeps of it must be current too. */
		bcache_read_begin(bf, &rd, a0, a1 - a0);
		int rc = read_disk(fc, o, off, a0, a1, dr);
		if (rc < 0) {
			bcache_read_cancel(bf, &rd);
			return rc;
		}
		if (bcache_read_overlay(bf, &rd, dr->mem) == 0) {
			if (behind(o) && dr->keep_len)
				bcache_read_keep(bf, &rd, a0, dr->keep_len, dr->mem, dr->hold);
			return 0;
		}
		bcache_buf_put(dr->hold);
	}
	return -EIO;
}

/* Readahead for a sequential reader in cached mode: the READ that misses reads up to this much
 * more (the window grows from 1 MiB while the reader stays sequential), which the following
 * READs then find in the cache. */
#define READAHEAD_MAX (8u << 20)

/* A READ served from cached blocks with no copy: the reply's payload is their images, pinned
 * until it is sent. Enough iovecs for a whole-size READ of single blocks, and its two ends (on
 * the fiber's stack while the cache is asked; a hit keeps what it got, sized to it). */
#define PIN_MAX (FS_MAXIO / 4096 + 2)
struct pinned_read {
	int npins;
	struct bcache_buf **pins;   /* npins of them, after iov[] in the same allocation */
	struct iovec iov[];
};

static void pinned_read_free(void *p)
{
	struct pinned_read *pr = p;
	for (int i = 0; i < pr->npins; i++)
		bcache_buf_put(pr->pins[i]);
	free(pr);
}

/* 1 when the READ was answered from the cache (*out set), 0 on a miss, or -errno. */
static int read_hit(struct bcache_file *bf, uint64_t off, uint32_t len, struct fs_payload *out)
{
	struct iovec iov[PIN_MAX];
	struct bcache_buf *pins[PIN_MAX];
	int npins;
	int n = bcache_read_pinned(bf, off, len, iov, PIN_MAX, pins, &npins);
	if (n <= 0)
		return n;
	struct pinned_read *pr = malloc(sizeof *pr + (size_t)n * sizeof *iov +
					(size_t)npins * sizeof *pins);
	if (!pr) {
		for (int i = 0; i < npins; i++)
			bcache_buf_put(pins[i]);
		return -ENOMEM;
	}
	pr->npins = npins;
	pr->pins = (struct bcache_buf **)(pr->iov + n);
	memcpy(pr->iov, iov, (size_t)n * sizeof *iov);
	memcpy(pr->pins, pins, (size_t)npins * sizeof *pins);
	*out = (struct fs_payload){.iov = pr->iov, .iovcnt = n, .len = len, .mem = pr,
				   .free = pinned_read_free};
	return 1;
}

static int read_cached(struct fs_call *fc, struct fh_obj *o, struct bcache_file *bf, uint64_t off,
		       uint32_t len, uint64_t size, struct disk_read *dr, struct fs_payload *out)
{
	if (!behind(o))
		return read_overlaid(fc, o, bf, off, len, 0, dr);
	int rc = read_hit(bf, off, len, out);
	if (rc != 0)
		return rc;   /* 1: answered */
	uint64_t ra_off, ra_len, extra = 0;
	bool ra = bcache_readahead(bf, off, len, READAHEAD_MAX, &ra_off, &ra_len);
	if (ra && ra_off + ra_len > off + len)
		extra = ra_off + ra_len - (off + len);
	if (off + len + extra > size)    /* not past the end of file */
		extra = size > off + len ? size - (off + len) : 0;
	rc = read_overlaid(fc, o, bf, off, len, extra, dr);
	if (ra)
		bcache_readahead_end(bf);
	return rc;
}

int fs_read(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count, uint64_t size,
	    uint32_t *n, bool *eof, struct fs_payload *out)
{
	struct bcache_file *bf = NULL;
	int err = 0;
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	if (uses_cache(o)) {
		bf = cache_of(fc, o, &err);
		if (!bf)
			return -err;
		int64_t sz = bcache_file_size(bf);
		if (sz < 0)
			return (int)sz;
		size = (uint64_t)sz;
	}
	*n = 0;
	*eof = off >= size;
	if (*eof || count == 0)
		return 0;
	uint32_t len = size - off < count ? (uint32_t)(size - off) : count;
	struct disk_read dr;
	int rc = bf ? 0 : paged_coherent(fc, o);
	if (rc == 0 && bf) {
		rc = read_cached(fc, o, bf, off, len, size, &dr, out);
	} else if (rc == 0) {
		uint64_t a0, a1;
		read_cover(o, off, len, 0, &a0, &a1);
		rc = read_disk(fc, o, off, a0, a1, &dr);
	}
	if (rc < 0)
		return rc;
	*n = len;
	*eof = off + len >= size;
	if (rc == 1)
		return 0;    /* from the cache: read_hit set the payload */
	*out = (struct fs_payload){.data = dr.data, .len = len, .mem = dr.hold,
				   .free = read_buf_put};
	return 0;
}
