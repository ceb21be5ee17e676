/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The verbs on one object's attributes and what describes it: setattr, readlink, statfs and the
 * link limit. io_uring has no operation for any of their calls: all run on the blocking pool, as
 * the caller (fchownat, chmod and utimensat through /proc/self/fd, ftruncate through write.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/fdpath.h"
#include "fs/fileio.h"
#include "fs/fs_int.h"

static struct timespec time_of(enum fs_time how, struct timespec set)
{
	if (how == FS_TIME_NOW)
		return (struct timespec){0, UTIME_NOW};
	return how == FS_TIME_SET ? set : (struct timespec){0, UTIME_OMIT};
}

/* Owner, mode and times, in one trip to the blocking pool (no io_uring op for any of them). */
struct attr_call {
	int fd;
	const struct fs_sattr *sa;
};

static long do_set_attrs(void *arg)
{
	const struct attr_call *a = arg;
	const struct fs_sattr *sa = a->sa;
	struct fd_path fp;
	const char *path = fd_path(&fp, a->fd);
	if (sa->set_uid || sa->set_gid) {
		uid_t u = sa->set_uid ? sa->uid : (uid_t)-1;
		gid_t g = sa->set_gid ? sa->gid : (gid_t)-1;
		if (fchownat(a->fd, "", u, g, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	if (sa->set_mode && chmod(path, sa->mode & 07777) < 0)
		return -errno;
	if (sa->atime != FS_TIME_KEEP || sa->mtime != FS_TIME_KEEP) {
		struct timespec t[2] = {time_of(sa->atime, sa->atime_set),
					time_of(sa->mtime, sa->mtime_set)};
		if (utimensat(AT_FDCWD, path, t, 0) < 0)
			return -errno;
	}
	return 0;
}

/* The size first: a regular file's, with write access or the owner's override (open, then
 * ftruncate), within the export's bound (sizes of 2^63 and up included), as the kernel's
 * truncate answers knfsd: before the cache or the disk is touched. */
static int set_size(struct fs_call *fc, struct fh_obj *o, uint64_t size)
{
	struct statx st;
	int rc = fs_getattr(fc, o, &st);
	if (rc < 0)
		return rc;
	if (S_ISDIR(st.stx_mode))
		return -EISDIR;
	if (!S_ISREG(st.stx_mode))
		return -EINVAL;
	if (cred_access(o->fd, W_OK) < 0 && st.stx_uid != fc->cred.uid)
		return -EACCES;
	if (size > o->exp->maxbytes)
		return -EFBIG;
	return fileio_truncate(fc, o, size);
}

/* Order as knfsd: size, then owner, mode, times. */
int fs_setattr(struct fs_call *fc, struct fh_obj *o, const struct fs_sattr *sa)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	if (sa->set_size) {
		int rc = set_size(fc, o, sa->size);
		if (rc < 0)
			return rc;
	}
	if (!sa->set_uid && !sa->set_gid && !sa->set_mode && sa->atime == FS_TIME_KEEP &&
	    sa->mtime == FS_TIME_KEEP)
		return 0;
	struct attr_call a = {o->fd, sa};
	return (int)cred_offload(fc->ch, do_set_attrs, &a);
}

struct readlink_call {
	int fd;
	char *buf;
	size_t size;
};

static long do_readlink(void *arg)
{
	struct readlink_call *a = arg;
	ssize_t n = readlinkat(a->fd, "", a->buf, a->size);
	return n >= 0 ? n : -errno;
}

long fs_readlink(struct fs_call *fc, const struct fh_obj *o, char *buf, size_t size)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	struct readlink_call c = {o->fd, buf, size};
	return cred_offload(fc->ch, do_readlink, &c);
}

struct statfs_call {
	int fd;
	struct statfs *s;
};

static long do_statfs(void *arg)
{
	struct statfs_call *a = arg;
	return fstatfs(a->fd, a->s) < 0 ? -errno : 0;
}

int fs_statfs(struct fs_call *fc, const struct fh_obj *o, struct statfs *out)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	struct statfs_call c = {o->fd, out};
	return (int)cred_offload(fc->ch, do_statfs, &c);
}

static long do_link_max(void *arg)
{
	return fpathconf(*(int *)arg, _PC_LINK_MAX);   /* -1 is "no limit known" */
}

long fs_link_max(struct fs_call *fc, const struct fh_obj *o)
{
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	int fd = o->fd;
	return cred_offload(fc->ch, do_link_max, &fd);
}
