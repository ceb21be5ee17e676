/* SPDX-License-Identifier: GPL-2.0-or-later */
/* WRITE and COMMIT, per the export's mode: through nfsd-uc's cache (write_mode cached: write-
 * behind; direct: the middle written through), or through the page cache (dontcache, buffered).
 * Also SETATTR's truncate and the size a client must see. A WRITE that must wait for the
 * neighbour of a partial block parks (park.c); one that finds the disk full lets deleted files
 * go and tries again (nospace.c). The mtime touch of a cached WRITE goes to the blocking pool. */
#include "fs/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/fdpath.h"
#include "base/log.h"
#include "cache/bcache.h"
#include "fs/fs_int.h"
#include "fs/verifier.h"
#include "io/ring.h"


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

static bool covers_whole_block(uint64_t off, uint32_t len, uint64_t bs)
{
	uint64_t first = (off + bs - 1) / bs, end = (off + len) / bs;
	return end > first;
}

static bool whole_blocks(uint64_t off, uint32_t len, uint64_t bs)
{
	return len && (off % bs) == 0 && (len % bs) == 0;
}

#define TOUCH_EVERY_NS (4 * 1000 * 1000u)

/* A WRITE that only reached the cache changed the file all the same: its mtime and ctime move now,
 * not at the later flush (clients judge their caches by them). */
static long do_touch(void *arg)
{
	const struct timespec t[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
	struct fd_path fp;
	return utimensat(AT_FDCWD, fd_path(&fp, *(int *)arg), t, 0) < 0 ? -errno : 0;
}

/* Was the file's mtime (st, read before the WRITE) set within the last TOUCH_EVERY_NS? A file
 * just created was: tar's and cp's CREATE, WRITE, COMMIT of a small file made three pool trips
 * at its first WRITE, and this one was a third of their cost. A clock stepped back since makes
 * the mtime look to be ahead: not recent, touched. */
static bool mtime_recent(const struct statx *st)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t ns = ((int64_t)now.tv_sec - st->stx_mtime.tv_sec) * 1000000000 +
		     ((int64_t)now.tv_nsec - st->stx_mtime.tv_nsec);
	return ns >= 0 && ns < TOUCH_EVERY_NS;
}

/* false when the touch was spared: the file's times stay as they were. */
static bool touch_mtime(struct fs_chan *ch, struct fh_obj *o, const struct statx *st)
{
	/* One touch per few milliseconds is as fine as the file system keeps times anyway (ext4's
	 * are jiffies), and spares a journalled metadata update per small WRITE. */
	struct file_io *fio = fh_file_io(o);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	if ((fio->touched_ns && ns - fio->touched_ns < TOUCH_EVERY_NS) || mtime_recent(st))
		return false;
	fio->touched_ns = ns;
	long rc = cred_offload(ch, do_touch, &o->fd);
	if (rc < 0)
		log_debug("mtime of a cached WRITE: %s", strerror((int)-rc));
	return true;
}

/* In cached mode a file's first WRITEs wait in the cache, so the hint can still be set at the
 * first one that does not start the file: a file written in one WRITE (tar's small files) is not
 * given one, which would hold a whole aligned megabyte of disk for each while the daemon keeps it
 * open. In direct mode the first WRITE lands at once and after it no hint can be set. */
static bool hint_extents(struct fs_chan *ch, struct fh_obj *o, uint64_t off)
{
	return (off > 0 || !behind(o)) && fh_hint_extents(ch, o);
}

/* *kept: the WRITE moved none of the file's attributes but its size (cached mode, UNSTABLE, the
 * touch spared): what it answered from the attributes before it is true after it too. st: the
 * attributes before the WRITE. */
static int write_cached(struct fs_call *fc, struct fh_obj *o, uint64_t off, const void *data,
			uint32_t count, enum fs_stable stable, const struct statx *st, bool *kept)
{
	int err = 0;
	struct bcache_file *bf = cache_of(fc, o, &err);
	if (!bf)
		return -err;
	struct fs_chan *ch = fc->ch;
	bool hinted = hint_extents(ch, o, off);   /* the ctime moved: the attributes did */
	if (!ch->creds.is_root && ch->creds.cur.uid != 0)
		bcache_file_restrict(bf);
	/* A stable WRITE of whole blocks leaves nothing for a neighbour to complete, and must be
	 * on disk before its reply anyway: it goes now, as in direct mode. */
	bool now = !behind(o) || (stable != FS_UNSTABLE && whole_blocks(off, count, o->exp->block));
	int rc = now ? bcache_write_now(bf, off, data, count)
		     : bcache_write_buf(bf, off, data, count, record_buf(fc->rec));
	/* Held, no byte of the WRITE reached the disk yet; else only the middle did. */
	bool touched = false;
	if (rc == 0 && (!now || !covers_whole_block(off, count, o->exp->block)))
		touched = touch_mtime(ch, o, st);
	if (rc < 0)
		return rc;
	/* Outside cached mode the middle's write moved the times, as any write to the file does. */
	*kept = behind(o) && !touched && !hinted && stable == FS_UNSTABLE;
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
int fileio_paged_coherent(struct fs_call *fc, struct fh_obj *o)
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
	int prc = fileio_paged_coherent(fc, o);
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
void fileio_write_failed(struct fs_call *fc, uint64_t off, uint32_t count, int rc, bool synced)
{
	bool lost = fs_verf_lost(rc, synced);
	/* A full disk fails every WRITE: one line a second says so, with how many it stands for. */
	log_ratelimited(&fc->ch->fs->write_errors, LOG_WARNING, "WRITE of %u bytes at %llu failed: %s%s",
			count, (unsigned long long)off, strerror(-rc),
			lost ? "; write verifier changed" : "");
	if (lost)
		fs_rotate_verf(fc->ch->fs);
}

static int write_once(struct fs_call *fc, struct fh_obj *o, uint64_t off, const void *data,
		      uint32_t count, enum fs_stable stable, const struct statx *st, bool *kept)
{
	*kept = false;
	return uses_cache(o) ? write_cached(fc, o, off, data, count, stable, st, kept)
			       : write_paged(fc, o, off, data, count, stable);
}

/* The WRITE's bytes into the file or the cache, the disk full tried again; FILEIO_WAIT when it
 * is to wait for a neighbour (fileio_write_wait). */
static int write_tries(struct fs_call *fc, struct fh_obj *o, uint64_t off, const void *data,
		       uint32_t count, enum fs_stable stable, const struct statx *st, bool *kept)
{
	int rc = write_once(fc, o, off, data, count, stable, st, kept);
	/* Once in every mode; more only in cached mode, where the failure may be a write-behind's
	 * whose blocks fileio_retry_cached lets go again. */
	for (int tries = 0; (tries == 0 || behind(o)) && fileio_space_again(fc, rc, tries, true); tries++) {
		if (fileio_freed_lately(fc->ch->fs))
			fileio_retry_cached(fc, o);
		rc = write_once(fc, o, off, data, count, stable, st, kept);
	}
	if (rc < 0)
		fileio_write_failed(fc, off, count, rc, stable != FS_UNSTABLE);
	return rc;
}

#define SMALL_FILE_MAX (64u << 10)

/* A small file committed whole (tar's and cp's close) lets its blocks go: its client keeps its
 * own copy, and held they kept the WRITE's record, so each new file's record was memory the
 * kernel faulted in afresh (6 page faults a 16 KiB file, a sixth of the daemon's time); let go at
 * once, the record goes back warm to be received into again. */
static void drop_small_file(struct bcache_file *bf, uint64_t off, uint32_t count)
{
	int64_t size;
	if (off == 0 && count == 0 && (size = bcache_file_size(bf)) >= 0 && size <= SMALL_FILE_MAX)
		bcache_file_let_go(bf);
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
		if (!bf)
			return -err;
		int rc = bcache_commit(bf, off, count, BCACHE_SYNC_FILE);
		if (rc == 0 && behind(o))
			drop_small_file(bf, off, count);
		return rc;
	}
	int fd = fh_io_fd(fc->ch, o, false);
	*synced = fd >= 0;
	return fd < 0 ? fd : io_fsync(fc->ch->io, fd, false);
}

int fs_write(struct fs_call *fc, struct fh_obj *o, uint64_t off, const void *data,
	     uint32_t count, enum fs_stable stable, struct statx *st, bool *st_after)
{
	*st_after = false;
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	bool kept = false;
	int rc = write_tries(fc, o, off, data, count, stable, st, &kept);
	if (rc == FILEIO_WAIT)
		rc = fileio_write_wait(fc, o, off, count, stable);   /* its flush may move the times */
	else if (rc == 0 && kept) {
		/* One statx less per WRITE (its two were a tenth of the daemon's time on 6000-byte
		 * records); the size is the larger of the one before and the cache's, as fs_getattr
		 * makes it, without another look at the disk's. */
		struct fileio_size_seq seq;
		fileio_size_seq(o, &seq);
		fileio_fix_size(fc->ch, o, st, &seq);
		*st_after = true;
	}
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
	for (int tries = 0; behind(o) && fileio_space_again(fc, rc, tries, false); tries++)
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
	int rc = fileio_paged_coherent(fc, o);
	return rc < 0 ? rc : fileio_truncate_fd(fd, size);
}

/* Also through a paged export of a file system a cached one serves (shares_cache). */
static bool sized_by_cache(const struct fh_obj *o)
{
	return o->exp && o->ent && (uses_cache(o) || o->exp->shares_cache);
}

void fileio_size_seq(const struct fh_obj *o, struct fileio_size_seq *seq)
{
	seq->bf = sized_by_cache(o) ? fh_bcache_if_open(o) : NULL;
	seq->seq = seq->bf ? bcache_file_size_seq(seq->bf) : 0;
}

void fileio_fix_size(struct fs_chan *ch, struct fh_obj *o, struct statx *st,
		     const struct fileio_size_seq *seq)
{
	if (!sized_by_cache(o) || !S_ISREG(st->stx_mode))
		return;
	int64_t size;
	if (seq && seq->bf) {
		size = bcache_file_size_seen(seq->bf, seq->seq, (int64_t)st->stx_size);
	} else {
		int err;
		struct bcache_file *bf = fh_bcache(ch, o, (uint32_t)o->exp->block, &err);
		if (!bf)
			return;
		size = bcache_file_size(bf);
	}
	if (size >= 0)
		st->stx_size = (uint64_t)size;
}
