/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The verbs that change directories: create, mkdir, symlink, mknod, remove, rename, link.
 * Permissions are the kernel's business: each verb acts as its call's caller. Through the ring's
 * io_uring, but for what it has no operation for, on the blocking pool as the caller:
 *   - mknodat   (mknod)
 *   - futimens  (an exclusive create's verifier, kept in the new file's atime and mtime)
 * Modes reach the kernel as the client sent them (its user's umask applied already), so the
 * daemon runs with umask 0, as knfsd's threads do. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "base/fdpath.h"
#include "fs/fh.h"
#include "fs/fs_int.h"
#include "io/ring.h"

struct futimens_call {
	int fd;
	const struct timespec *ts;
};

static long do_futimens(void *arg)
{
	struct futimens_call *a = arg;
	return futimens(a->fd, a->ts) < 0 ? -errno : 0;
}

/* The new file's handle and attributes from its own descriptor, which the handle cache then
 * keeps: both calls read only the inode in memory, so they run in place, where a lookup by name
 * took a statx through io-wq and a name_to_handle_at on the pool, and the file's first WRITE an
 * open_by_handle_at there too (tar's CREATE, WRITE, COMMIT of a small file). Not under
 * subtree_check, whose handles name the parent (the kernel makes those only from a name).
 * false: fd is still the caller's. */
static bool describe_new(struct fs_call *fc, const struct fh_obj *dir, int fd, struct fs_new *out)
{
	struct fh_kernel kh;
	if (dir->exp->subtree_check ||
	    statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &out->st) < 0 ||
	    fh_kernel_at(fd, "", false, &kh) < 0)
		return false;
	fh_seal(fc->ch->fs, dir->exp, &kh, &out->fh);
	fh_adopt(fc->ch, &out->fh, fd, makedev(out->st.stx_dev_major, out->st.stx_dev_minor),
		 out->st.stx_ino);
	return true;
}

int fs_create(struct fs_call *fc, const struct fh_obj *dir, const char *name, mode_t mode,
	      const struct timespec *times, struct fs_new *out)
{
	out->fh.len = 0;
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	struct io_ring *r = fc->ch->io;
	int fd = io_openat(r, dir->fd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			   mode);
	if (fd < 0)
		return fd;
	long rc = 0;
	if (times) {
		struct futimens_call c = {fd, times};
		rc = cred_offload(fc->ch, do_futimens, &c);
		/* Without the verifier the client's retry would fail with EXIST. */
		if (rc < 0)
			io_unlinkat(r, dir->fd, name, 0);
	}
	if (rc < 0 || !describe_new(fc, dir, fd, out)) {
		out->fh.len = 0;
		io_close(r, fd);
	}
	return (int)rc;
}

int fs_mkdir(struct fs_call *fc, const struct fh_obj *dir, const char *name, mode_t mode)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	return io_mkdirat(fc->ch->io, dir->fd, name, mode);
}

int fs_symlink(struct fs_call *fc, const struct fh_obj *dir, const char *name, const char *target)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	return io_symlinkat(fc->ch->io, target, dir->fd, name);
}

struct mknod_call {
	int dirfd;
	const char *name;
	mode_t mode;
	dev_t dev;
};

static long do_mknod(void *arg)
{
	struct mknod_call *a = arg;
	return mknodat(a->dirfd, a->name, a->mode, a->dev) < 0 ? -errno : 0;
}

int fs_mknod(struct fs_call *fc, const struct fh_obj *dir, const char *name, mode_t mode, dev_t dev)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	struct mknod_call c = {dir->fd, name, mode, dev};
	return (int)cred_offload(fc->ch, do_mknod, &c);
}

/* The inode lost its last link (or was replaced): forget its cached descriptors and cached data,
 * here and on the other rings, which may hold it open too (its space comes back only when they
 * let go). */
static void forget_inode(struct fs_call *fc, const struct statx *victim)
{
	dev_t dev = makedev(victim->stx_dev_major, victim->stx_dev_minor);
	fh_forget(fc->ch, dev, victim->stx_ino);
	fh_close_doomed(fc->ch);
	fs_forget_everywhere(fc->ch, dev, victim->stx_ino);
}

/* The victim is looked at first: afterwards it has no name. */
int fs_remove(struct fs_call *fc, const struct fh_obj *dir, const char *name, bool rmdir)
{
	struct statx victim;
	int rc = fs_getattr_at(fc, dir, name, &victim);
	if (rc < 0)
		return rc;
	rc = io_unlinkat(fc->ch->io, dir->fd, name, rmdir ? AT_REMOVEDIR : 0);
	if (rc < 0)
		return rc;
	if (rmdir || victim.stx_nlink <= 1)
		forget_inode(fc, &victim);
	return 0;
}

static bool same_inode(const struct statx *a, const struct statx *b)
{
	return a->stx_ino == b->stx_ino && a->stx_dev_major == b->stx_dev_major &&
	       a->stx_dev_minor == b->stx_dev_minor;
}

/* A replaced target whose last link went with it is forgotten. Renaming one hard link onto
 * another of the same inode succeeds and changes nothing, so nothing is forgotten then. */
int fs_rename(struct fs_call *fc, const struct fh_obj *from, const char *fname,
	      const struct fh_obj *to, const char *tname)
{
	struct statx src, victim;
	int rc = fs_getattr_at(fc, from, fname, &src);
	if (rc < 0)
		return rc;
	bool replaces = fs_getattr_at(fc, to, tname, &victim) == 0 && !same_inode(&src, &victim);
	rc = io_renameat(fc->ch->io, from->fd, fname, to->fd, tname, 0);
	if (rc < 0)
		return rc;
	if (replaces && (S_ISDIR(victim.stx_mode) || victim.stx_nlink <= 1))
		forget_inode(fc, &victim);
	return 0;
}

/* linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH, which the caller's credentials lack;
 * following the descriptor's /proc link reaches the same inode (a symlink itself, not its target)
 * with only the ordinary checks. */
int fs_link(struct fs_call *fc, const struct fh_obj *o, const struct fh_obj *dir, const char *name)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	struct fd_path fp;
	return io_linkat(fc->ch->io, AT_FDCWD, fd_path(&fp, o->fd), dir->fd, name,
			 AT_SYMLINK_FOLLOW);
}
