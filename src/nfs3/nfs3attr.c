/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers every NFSv3 handler shares: handles, credentials, attributes, errors. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "nfs3/nfs3_int.h"

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
	case FS_EBADHANDLE: return NFS3ERR_BADHANDLE;
	case FS_EBADCOOKIE: return NFS3ERR_BAD_COOKIE;
	case FS_ESERVERFAULT: return NFS3ERR_SERVERFAULT;
	default:
		return NFS3ERR_IO;
	}
}

bool nfs3_writable(const struct svc_call *rq)
{
	return rq->fs.rule && rq->fs.rule->rw;
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

nfsstat3 nfs3_fh_get(struct svc_call *rq, const nfs_fh3 *fh, struct fh_obj *out)
{
	return nfs3_errno(fs_fh_get(&rq->fs, fh->data.data_val, fh->data.data_len, out));
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

void nfs3_fattr(const struct svc_call *rq, const struct statx *st, fattr3 *a)
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
	a->fsid = rq->fs.exp ? rq->fs.exp->cfg->fsid : 0;
	a->fileid = st->stx_ino;
	a->atime = ts(st->stx_atime);
	a->mtime = ts(st->stx_mtime);
	a->ctime = ts(st->stx_ctime);
}

void nfs3_post_op_attr(struct svc_call *rq, const struct fh_obj *o, post_op_attr *out)
{
	struct statx st;
	out->attributes_follow = fs_getattr(&rq->fs, o, &st) == 0;
	if (out->attributes_follow)
		nfs3_fattr(rq, &st, &out->post_op_attr_u.attributes);
}

void nfs3_post_op_from(const struct svc_call *rq, const struct statx *st, post_op_attr *out)
{
	out->attributes_follow = true;
	nfs3_fattr(rq, st, &out->post_op_attr_u.attributes);
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

void nfs3_wcc(struct svc_call *rq, const struct statx *before, const struct fh_obj *o,
	      wcc_data *out)
{
	nfs3_pre_op_attr(before, &out->before);
	if (o)
		nfs3_post_op_attr(rq, o, &out->after);
	else
		out->after.attributes_follow = false;
}

void nfs3_fh_out(struct svc_call *rq, const struct fh *fh, nfs_fh3 *out)
{
	out->data.data_val = arena_alloc(&rq->arena, fh->len);
	out->data.data_len = out->data.data_val ? fh->len : 0;
	if (out->data.data_val)
		memcpy(out->data.data_val, fh->data, fh->len);
}

nfsstat3 nfs3_new_obj(struct svc_call *rq, const struct fh_obj *dir, const char *name,
		      post_op_fh3 *fh, post_op_attr *attr)
{
	struct statx st;
	struct fh h;
	int rc = fs_lookup(&rq->fs, dir, name, &st, &h);
	if (rc < 0)
		return nfs3_errno(rc);
	attr->attributes_follow = true;
	nfs3_fattr(rq, &st, &attr->post_op_attr_u.attributes);
	if (h.len) {
		fh->handle_follows = true;
		nfs3_fh_out(rq, &h, &fh->post_op_fh3_u.handle);
	}
	return NFS3_OK;
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

static enum fs_time fs_time_of(time_how how)
{
	return how == SET_TO_SERVER_TIME ? FS_TIME_NOW
	       : how == SET_TO_CLIENT_TIME ? FS_TIME_SET : FS_TIME_KEEP;
}

void nfs3_sattr(const sattr3 *in, struct fs_sattr *out)
{
	*out = (struct fs_sattr){
		.set_mode = in->mode.set_it, .mode = in->mode.set_mode3_u.mode,
		.set_uid = in->uid.set_it, .uid = in->uid.set_uid3_u.uid,
		.set_gid = in->gid.set_it, .gid = in->gid.set_gid3_u.gid,
		.set_size = in->size.set_it, .size = in->size.set_size3_u.size,
		.atime = fs_time_of(in->atime.set_it), .mtime = fs_time_of(in->mtime.set_it),
		.atime_set = {in->atime.set_atime_u.atime.seconds, in->atime.set_atime_u.atime.nseconds},
		.mtime_set = {in->mtime.set_mtime_u.mtime.seconds, in->mtime.set_mtime_u.mtime.nseconds},
	};
}
