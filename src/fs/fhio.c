/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A cached handle's descriptors for I/O, opened on first use: the buffered and O_DIRECT ones
 * (reopened through /proc as the server), the two the cache writes through that leave the times
 * alone (nocmtime.c), the cache's handle on the file, and the extent size hint. Blocking calls
 * here: the XFS handle ioctls, FS_IOC_FSGETXATTR/FSSETXATTR, open (all on the pool). */
#include "fs/fh.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fdpath.h"
#include "base/log.h"
#include "cache/bcache.h"
#include "fs/cred.h"
#include "fs/exptable.h"
#include "fs/fh_int.h"
#include "fs/fileio.h"
#include "fs/fs_int.h"
#include "fs/nocmtime.h"
#include "io/ring.h"

struct file_io *fh_file_io(struct fh_obj *o)
{
	return &o->ent->fio;
}

/* Direct-mode WRITEs arrive out of order (32 interleaved writers), and O_DIRECT allocates as they
 * come: XFS gave a 128 MiB file 4222 extents, whose map then has to be read back from disk after a
 * cache drop (device reads per WRITE on an overwrite). An extent size hint makes it allocate in
 * aligned 1 MiB units instead (7 extents). It can only be set while the file holds no data, so it
 * is asked for by a file's first WRITE (in cached mode its first that does not start the file:
 * write.c), once per handle, and only on exports whose
 * file system keeps it (export_rt.extent_hints): ext4 takes the ioctl, drops the flag and moves
 * the ctime, every time. Never from a reading call: those must not change a file. */
#define EXTENT_HINT (1u << 20)
int fh_set_extent_hint(int fd)
{
	struct fsxattr fa;
	struct stat sb;
	if (fstat(fd, &sb) < 0 || sb.st_size != 0 || sb.st_blocks != 0 ||
	    ioctl(fd, FS_IOC_FSGETXATTR, &fa) < 0 || (fa.fsx_xflags & FS_XFLAG_EXTSIZE))
		return 0;
	fa.fsx_xflags |= FS_XFLAG_EXTSIZE;
	fa.fsx_extsize = EXTENT_HINT;
	if (ioctl(fd, FS_IOC_FSSETXATTR, &fa) < 0)
		return -errno;
	/* Kept? ext4 answers 0 and forgets it. */
	if (ioctl(fd, FS_IOC_FSGETXATTR, &fa) < 0)
		return -errno;
	return (fa.fsx_xflags & FS_XFLAG_EXTSIZE) ? 1 : -EOPNOTSUPP;
}

static long do_hint_extents(void *arg)
{
	return fh_set_extent_hint(*(int *)arg);
}

bool fh_hint_extents(struct fs_chan *ch, struct fh_obj *o)
{
	struct file_io *fio = fh_file_io(o);
	if (!o->exp->extent_hints || !fio || fio->hinted || !fio->fd_set)
		return false;
	fio->hinted = true;
	long rc = cred_offload(ch, do_hint_extents, &fio->fd);
	if (rc < 0)
		log_debug("extent size hint: %s", strerror((int)-rc));
	return rc == 1;
}

struct nocmtime_call {
	int fd, dirfd;
	int tfd;        /* out: the buffered one, or -1 */
};

static long do_nocmtime_open(void *arg)
{
	struct nocmtime_call *a = arg;
	int wfd = nocmtime_open(a->fd, a->dirfd, true);
	int tfd = wfd >= 0 ? nocmtime_open(a->fd, a->dirfd, false) : -1;
	a->tfd = tfd >= 0 ? tfd : -1;
	return wfd;
}

/* The descriptors a cached export's cache writes through: whole blocks O_DIRECT (wfd), the
 * file's last block buffered (tfd), both leaving mtime and ctime as the WRITEs set them (as
 * root: it takes CAP_SYS_ADMIN). Else fd itself, and the buffered descriptor of READs: the
 * kernel stamps the times again when the cache writes. */
static void cache_write_fds(struct fs_chan *ch, struct fh_obj *o, struct file_io *fio)
{
	if (o->exp->keeps_times) {
		struct nocmtime_call a = {fio->fd, o->exp->root_fd, -1};
		long rc = cred_offload_root(ch, do_nocmtime_open, &a);   /* yields */
		if (rc >= 0) {
			fio->tfd = a.tfd;
			fio->wfd = (int)rc;
			return;
		}
		log_debug("write-behind moves mtime and ctime: %s", strerror((int)-rc));
	}
	int tfd = fh_io_fd(ch, o, false);   /* yields */
	fio->tfd = tfd >= 0 ? tfd : -1;
}

/* The cache knows a file by (dev, key). The inode number alone would let a new file that reuses
 * the number of a deleted one, still cached, inherit its blocks: the key is a hash of the kernel
 * handle instead, which holds the inode's generation (and not the export id, so two exports of
 * one file system share a file's entries). A connectable handle (subtree_check) also names the
 * directory it was found in: two links, or a rename, would give one inode two keys, and two
 * caches of one block. Its plain handle is hashed instead (memory only, in place). */
static void cache_key(struct fs_chan *ch, const struct fh_entry *e, uint64_t *key)
{
	const uint8_t *bytes = e->fh.data + 6;
	size_t len = e->fh.len - 6 - FH_MAC;
	uint32_t type;
	memcpy(&type, e->fh.data + 6, sizeof type);
	struct fh_kernel kh;
	if ((type & FILEID_IS_CONNECTABLE) && fh_kernel_at(e->fd, "", false, &kh) == 0) {
		uint8_t plain[4 + FH_KMAX];
		memcpy(plain, &kh.h.handle_type, 4);
		memcpy(plain + 4, kh.h.f_handle, kh.h.handle_bytes);
		crypto_shorthash_siphash24((unsigned char *)key, plain, 4 + kh.h.handle_bytes,
					   ch->fs->fh_key);
		return;
	}
	crypto_shorthash_siphash24((unsigned char *)key, bytes, len, ch->fs->fh_key);
}

struct bcache_file *fh_bcache_if_open(const struct fh_obj *o)
{
	return o->ent->bf;
}

struct cache_fds_call {
	int path_fd, dirfd;
	int dio, wfd, tfd;   /* out, each -1 until opened */
};

static long do_cache_fds(void *arg)
{
	struct cache_fds_call *a = arg;
	struct fd_path fp;
	const char *path = fd_path(&fp, a->path_fd);
	a->dio = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (a->dio < 0)
		return -errno;
	struct nocmtime_call n = {a->dio, a->dirfd, -1};
	long wfd = do_nocmtime_open(&n);
	if (wfd < 0)
		return wfd;
	a->wfd = (int)wfd;
	a->tfd = n.tfd;
	return 0;
}

static void close_if(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* A file's first use of the cache on an export that keeps times: its O_DIRECT descriptor and the
 * cache's two (cache_write_fds) in one trip to the pool, where the O_DIRECT open alone took one
 * through io-wq first (a small file's first WRITE). false: nothing set, the caller opens them one
 * by one (which also says why one cannot be had); so too when another fiber opened any of them
 * meanwhile. */
static bool cache_fds_at_once(struct fs_chan *ch, struct fh_obj *o)
{
	struct fh_entry *e = o->ent;
	if (!o->exp->keeps_times || e->dio_fd >= 0 || e->fio.fd_set)
		return false;
	struct cache_fds_call a = {e->fd, o->exp->root_fd, -1, -1, -1};
	long rc = cred_offload_root(ch, do_cache_fds, &a);   /* yields */
	if (rc < 0 || e->dio_fd >= 0 || e->fio.fd_set) {
		close_if(a.dio);
		close_if(a.wfd);
		close_if(a.tfd);
		return false;
	}
	e->dio_fd = a.dio;
	e->fio.fd = a.dio;
	e->fio.wfd = a.wfd;
	e->fio.tfd = a.tfd;
	e->fio.fd_set = true;
	return true;
}

struct bcache_file *fh_bcache(struct fs_chan *ch, struct fh_obj *o, uint32_t block, int *err)
{
	struct fh_entry *e = o->ent;
	if (e->bf)
		return e->bf;
	if (!cache_fds_at_once(ch, o) && e->bf)
		return e->bf;   /* opened by another fiber while we waited */
	int fd = fh_io_fd(ch, o, true);
	if (fd < 0) {
		*err = -fd;
		return NULL;
	}
	if (!e->fio.fd_set) {
		/* Set before the opens yield: other fibers may open the cache's handle and write
		 * through fd meanwhile, and through the others once they are set (atomic). */
		e->fio.fd = fd;
		e->fio.wfd = fd;
		e->fio.tfd = -1;
		e->fio.fd_set = true;
		cache_write_fds(ch, o, &e->fio);
	}
	if (e->bf)
		return e->bf;   /* opened by another fiber while we waited (fh_io_fd, nocmtime) */
	uint64_t key;
	cache_key(ch, e, &key);
	struct bcache_file *bf;
	int rc = bcache_file_open(ch->fs->cache, e->dev, key, block, &e->fio, &bf);
	if (rc < 0) {
		*err = -rc;
		return e->bf;   /* NULL, unless another fiber's open went through meanwhile */
	}
	/* The open may have waited for the inode's lock, and another fiber opened one too. */
	if (e->bf) {
		bcache_file_close(bf);   /* not the inode's last handle: nothing to write */
	} else {
		bcache_file_set_mode(bf, o->exp->write_mode == IO_MODE_CACHED ? BCACHE_BEHIND
									 : BCACHE_THROUGH);
		e->bf = bf;
	}
	return e->bf;
}

int fh_io_fd(struct fs_chan *ch, struct fh_obj *o, bool direct)
{
	struct fh_entry *e = o->ent;
	int *slot = direct ? &e->dio_fd : &e->io_fd;
	if (*slot >= 0)
		return *slot;
	/* Reopen the O_PATH descriptor through /proc as the server; the caller checked access as the
	 * user. Read-only file systems or files only readable by us still serve READ. */
	struct rpc_cred saved = ch->creds.cur;
	bool was_root = ch->creds.is_root;
	struct fd_path fp;
	const char *path = fd_path(&fp, e->fd);
	cred_root(ch);
	int flags = O_RDWR | (direct ? O_DIRECT : 0);
	int fd = io_openat(ch->io, AT_FDCWD, path, flags, 0);
	if (fd < 0 && fh_relieve(ch->fhc, -fd))
		fd = io_openat(ch->io, AT_FDCWD, path, flags, 0);
	if (fd == -EROFS || fd == -EACCES || fd == -EPERM || fd == -ETXTBSY)
		fd = io_openat(ch->io, AT_FDCWD, path, flags & ~O_RDWR, 0);
	if (!was_root)
		cred_apply(ch, &saved);
	if (fd >= 0 && *slot >= 0) {
		close(fd);      /* another fiber opened it while we waited for ours */
		return *slot;
	}
	if (fd >= 0)
		*slot = fd;
	return fd;
}
