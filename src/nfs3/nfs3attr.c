/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers every NFSv3 handler shares: handles, credentials, attributes, errors. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/cred.h"
#include "conf/export.h"
#include "fs/fs_int.h"
#include "fs/fileio.h"
#include "io/ring.h"
#include "base/log.h"
#include "svc/worker.h"
#include "nfs3/nfs3.h"

nfsstat3 nfs3_errno(int err)
{
	switch (err < 0 ? -err : err) {
	case 0: return NFS3_OK;
	case EPERM: return NFS3ERR_PERM;
	case ENOENT: return NFS3ERR_NOENT;
	case ENXIO: return NFS3ERR_NXIO;
	case EACCES: return NFS3ERR_ACCES;
	case EEXIST: return NFS3ERR_EXIST;
	case EXDEV: return NFS3ERR_XDEV;
	case ENODEV: return NFS3ERR_NODEV;
	case ENOTDIR: return NFS3ERR_NOTDIR;
	case EISDIR: return NFS3ERR_ISDIR;
	case EINVAL: return NFS3ERR_INVAL;
	case EFBIG: return NFS3ERR_FBIG;
	case ENOSPC: return NFS3ERR_NOSPC;
	case EROFS: return NFS3ERR_ROFS;
	case EMLINK: return NFS3ERR_MLINK;
	case ENAMETOOLONG: return NFS3ERR_NAMETOOLONG;
	case ENOTEMPTY: return NFS3ERR_NOTEMPTY;
	case EDQUOT: return NFS3ERR_DQUOT;
	case ESTALE: return NFS3ERR_STALE;
	case EOPNOTSUPP: return NFS3ERR_NOTSUPP;
	case ELOOP: return NFS3ERR_ACCES;    /* a symlink where a directory was expected: as knfsd */
	case EIO: return NFS3ERR_IO;
	case ETXTBSY: return NFS3ERR_JUKEBOX;
	default:
		return NFS3ERR_IO;
	}
}

bool nfs3_writable(const struct nfs_req *rq)
{
	return rq->rule && rq->rule->rw;
}

nfsstat3 nfs3_check_name(const char *name)
{
	size_t n = strlen(name);
	if (n == 0)
		return NFS3ERR_ACCES;
	if (n > NAME_MAX)
		return NFS3ERR_NAMETOOLONG;
	if (strchr(name, '/'))
		return NFS3ERR_ACCES;
	return NFS3_OK;
}

static uint16_t peer_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

nfsstat3 nfs3_fh_get(struct nfs_req *rq, const nfs_fh3 *fh, struct fh_obj *out)
{
	int err = 0;
	switch (fh_resolve(rq, fh->data.data_val, fh->data.data_len, out, &err)) {
	case FH_OK: break;
	case FH_BADHANDLE: return NFS3ERR_BADHANDLE;
	case FH_STALE: return NFS3ERR_STALE;
	case FH_ERR:
		log_ratelimited(&rq->fs->fs->fh_log, LOG_WARNING, "cannot open file handle: %s",
				strerror(err));
		return nfs3_errno(err);
	}
	const struct client_rule *rule = export_match_named(out->exp->cfg,
							    (const struct sockaddr *)&rq->peer,
							    fs_peer_name, rq);
	if (!rule || (rule->secure && peer_port(&rq->peer) >= 1024)) {
		log_debug("client not allowed on export %s", out->exp->cfg->path);
		return NFS3ERR_ACCES;
	}
	if (rule->subtree_check && !fh_in_subtree(out)) {
		log_debug("handle outside export %s (subtree_check)", out->exp->cfg->path);
		return NFS3ERR_STALE;
	}
	/* Credentials of the first handle's export win (RENAME/LINK name two handles of one export). */
	if (!rq->exp) {
		rq->exp = out->exp;
		rq->rule = rule;
		export_squash(rule, &rq->cred);
	} else if (rq->exp != out->exp) {
		return NFS3ERR_XDEV;
	}
	int rc = cred_apply(rq->fs, &rq->cred);
	return rc < 0 ? NFS3ERR_SERVERFAULT : NFS3_OK;
}

int nfs3_stat(struct nfs_req *rq, int fd, struct statx *st)
{
	/* An open inode's attributes are in memory, so statx on the descriptor itself never waits
	 * for the disk; through the ring it is always handed to an io-wq thread, which cost two
	 * thread switches per call, four per WRITE (its pre- and post-op attributes). */
	int rc = statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, st) < 0
		 ? -errno : 0;
	/* The handle's file was removed behind our back (its descriptor outlives the last link). */
	if (rc == 0 && st->stx_nlink == 0)
		return -ESTALE;
	struct fh_obj o;
	if (rc == 0 && S_ISREG(st->stx_mode) && rq->exp && fh_obj_of_fd(rq->fs, fd, &o)) {
		o.exp = rq->exp;
		fileio_fix_size(rq->fs, &o, st);
	}
	return rc;
}

int nfs3_stat_at(struct nfs_req *rq, int dirfd, const char *name, struct statx *st)
{
	int flags = AT_SYMLINK_NOFOLLOW | (name[0] ? 0 : AT_EMPTY_PATH);
	return io_statx(rq->w->ring, dirfd, name, flags, STATX_BASIC_STATS | STATX_BTIME, st);
}

static ftype3 ftype_of(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR: return NF3DIR;
	case S_IFBLK: return NF3BLK;
	case S_IFCHR: return NF3CHR;
	case S_IFLNK: return NF3LNK;
	case S_IFSOCK: return NF3SOCK;
	case S_IFIFO: return NF3FIFO;
	default: return NF3REG;
	}
}

static nfstime3 ts(struct statx_timestamp t) { return (nfstime3){(uint32_t)t.tv_sec, t.tv_nsec}; }

void nfs3_fattr(const struct nfs_req *rq, const struct statx *st, fattr3 *a)
{
	a->type = ftype_of(st->stx_mode);
	a->mode = st->stx_mode & 07777;
	a->nlink = st->stx_nlink;
	a->uid = st->stx_uid;
	a->gid = st->stx_gid;
	a->size = st->stx_size;
	a->used = st->stx_blocks * 512;
	a->rdev.specdata1 = st->stx_rdev_major;
	a->rdev.specdata2 = st->stx_rdev_minor;
	a->fsid = rq->exp ? rq->exp->cfg->fsid : 0;
	a->fileid = st->stx_ino;
	a->atime = ts(st->stx_atime);
	a->mtime = ts(st->stx_mtime);
	a->ctime = ts(st->stx_ctime);
}

void nfs3_post_op_attr(struct nfs_req *rq, int fd, post_op_attr *out)
{
	struct statx st;
	out->attributes_follow = nfs3_stat(rq, fd, &st) == 0;
	if (out->attributes_follow)
		nfs3_fattr(rq, &st, &out->post_op_attr_u.attributes);
}

void nfs3_pre_op_attr(const struct statx *st, pre_op_attr *out)
{
	out->attributes_follow = st != NULL;
	if (!st)
		return;
	wcc_attr *w = &out->pre_op_attr_u.attributes;
	w->size = st->stx_size;
	w->mtime = ts(st->stx_mtime);
	w->ctime = ts(st->stx_ctime);
}

void nfs3_wcc(struct nfs_req *rq, const struct statx *before, int fd, wcc_data *out)
{
	nfs3_pre_op_attr(before, &out->before);
	if (fd >= 0)
		nfs3_post_op_attr(rq, fd, &out->after);
	else
		out->after.attributes_follow = false;
}

void nfs3_fh_out(struct nfs_req *rq, const struct fh *fh, nfs_fh3 *out)
{
	out->data.data_val = arena_alloc(&rq->arena, fh->len);
	out->data.data_len = out->data.data_val ? fh->len : 0;
	if (out->data.data_val)
		memcpy(out->data.data_val, fh->data, fh->len);
}

bool nfs3_off_export(const struct export_rt *exp, const struct statx *st)
{
	if (makedev(st->stx_dev_major, st->stx_dev_minor) != exp->dev)
		return true;
	bool mount_root = (st->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
			  (st->stx_attributes & STATX_ATTR_MOUNT_ROOT);
	return mount_root && st->stx_ino != exp->root_ino;
}

nfsstat3 nfs3_new_obj(struct nfs_req *rq, const struct export_rt *exp, int dirfd, const char *name,
		      post_op_fh3 *fh, post_op_attr *attr)
{
	struct statx st;
	int rc = nfs3_stat_at(rq, dirfd, name, &st);
	if (rc < 0)
		return nfs3_errno(rc);
	if (nfs3_off_export(exp, &st))
		return NFS3ERR_ACCES;   /* a mount point inside the export: not crossed */
	attr->attributes_follow = true;
	nfs3_fattr(rq, &st, &attr->post_op_attr_u.attributes);
	struct fh h;
	if (fh_compose(rq->fs, exp, dirfd, name, &h) == 0) {
		fh->handle_follows = true;
		nfs3_fh_out(rq, &h, &fh->post_op_fh3_u.handle);
	}
	return NFS3_OK;
}

void nfs3_forget_inode(struct nfs_req *rq, const struct statx *victim)
{
	dev_t dev = makedev(victim->stx_dev_major, victim->stx_dev_minor);
	fh_forget(rq->fs, dev, victim->stx_ino);
	fh_close_doomed(rq->fs);
	/* The other workers may hold it open too: its space comes back only when they let go. */
	fs_forget_everywhere(rq->fs, dev, victim->stx_ino);
}

void nfs3_cookieverf(const struct statx *dir, cookieverf3 out)
{
	/* Cookies are getdents64 offsets, which ext4 and XFS keep valid while the directory changes:
	 * a verifier that changed with every change would make clients (Linux treats BAD_COOKIE as
	 * the end) lose entries of a directory being written. It names the directory instead, so a
	 * cookie carried over to another directory, or from before a reuse of the inode, is refused.
	 * Never all zeros (zero means "none"). */
	uint64_t v = (dir->stx_ino * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)dir->stx_btime.tv_sec << 20) ^
		     dir->stx_btime.tv_nsec;
	v |= 1;
	memcpy(out, &v, sizeof v);
}

/* Owner, mode and times, in one trip to the blocking pool (no io_uring op for any of them). */
struct attr_call {
	int fd;
	const sattr3 *sa;
};

static long do_set_attrs(void *arg)
{
	const struct attr_call *a = arg;
	const sattr3 *sa = a->sa;
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", a->fd);
	if (sa->uid.set_it || sa->gid.set_it) {
		uid_t u = sa->uid.set_it ? sa->uid.set_uid3_u.uid : (uid_t)-1;
		gid_t g = sa->gid.set_it ? sa->gid.set_gid3_u.gid : (gid_t)-1;
		if (fchownat(a->fd, "", u, g, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	if (sa->mode.set_it) {
		if (chmod(path, sa->mode.set_mode3_u.mode & 07777) < 0)
			return -errno;
	}
	if (sa->atime.set_it != DONT_CHANGE || sa->mtime.set_it != DONT_CHANGE) {
		struct timespec t[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
		if (sa->atime.set_it == SET_TO_SERVER_TIME)
			t[0].tv_nsec = UTIME_NOW;
		else if (sa->atime.set_it == SET_TO_CLIENT_TIME)
			t[0] = (struct timespec){sa->atime.set_atime_u.atime.seconds,
						 sa->atime.set_atime_u.atime.nseconds};
		if (sa->mtime.set_it == SET_TO_SERVER_TIME)
			t[1].tv_nsec = UTIME_NOW;
		else if (sa->mtime.set_it == SET_TO_CLIENT_TIME)
			t[1] = (struct timespec){sa->mtime.set_mtime_u.mtime.seconds,
						 sa->mtime.set_mtime_u.mtime.nseconds};
		if (utimensat(AT_FDCWD, path, t, 0) < 0)
			return -errno;
	}
	return 0;
}

/* SETATTR's work, shared with CREATE. Order as knfsd: size, then owner, mode, times; all run on
 * the blocking pool as the caller (fchownat, chmod and utimensat through /proc/self/fd, and the
 * truncate in fileio). */
int nfs3_setattr_fd(struct nfs_req *rq, struct fh_obj *o, const sattr3 *sa)
{
	if (sa->size.set_it) {
		struct statx st;
		int rc = nfs3_stat(rq, o->fd, &st);
		if (rc < 0)
			return rc;
		if (S_ISDIR(st.stx_mode))
			return -EISDIR;
		if (!S_ISREG(st.stx_mode))
			return -EINVAL;
		/* Write permission, or the owner's override as for WRITE (open, then ftruncate). */
		if (cred_access(o->fd, W_OK) < 0 && st.stx_uid != rq->cred.uid)
			return -EACCES;
		/* Past the export's bound (sizes of 2^63 and up included), as the kernel's
		 * truncate answers knfsd: before the cache or the disk is touched. */
		if (sa->size.set_size3_u.size > o->exp->maxbytes)
			return -EFBIG;
		rc = fileio_truncate(rq, o, sa->size.set_size3_u.size);
		if (rc < 0)
			return rc;
	}
	if (!sa->uid.set_it && !sa->gid.set_it && !sa->mode.set_it && sa->atime.set_it == DONT_CHANGE &&
	    sa->mtime.set_it == DONT_CHANGE)
		return 0;
	struct attr_call a = {o->fd, sa};
	return (int)cred_offload(rq->fs, do_set_attrs, &a);
}
