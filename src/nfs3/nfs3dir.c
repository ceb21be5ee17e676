/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 procedures that change directories (RFC 1813 sections 3.3.8 to 3.3.15): CREATE, MKDIR,
 * SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK. READDIR and READDIRPLUS are in nfs3readdir.c.
 * Each checks what the protocol asks and calls the file-system layer's verb; permissions are the
 * kernel's business (the verbs act as the caller). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "nfs3/nfs3_int.h"

/* A directory a procedure changes: its handle and its attributes before the change (wcc). */
struct dir_op {
	struct fh_obj o;
	struct statx before;
	bool resolved;   /* o is valid */
	bool have_before;
	struct fs_new made;   /* CREATE: the new file's handle and attributes (made.fh.len 0: none) */
};

static bool is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

static mode_t sattr_mode(const sattr3 *sa, mode_t dflt)
{
	return sa->mode.set_it ? (sa->mode.set_mode3_u.mode & 07777) : dflt;
}

/* Resolve a directory handle and take its pre-op attributes; anything else is NOTDIR. */
static nfsstat3 dir_get(struct svc_call *rq, const nfs_fh3 *fh, struct dir_op *d)
{
	memset(d, 0, sizeof *d);
	nfsstat3 st = nfs3_fh_get(rq, fh, &d->o);
	if (st != NFS3_OK)
		return st;
	d->resolved = true;
	int rc = fs_getattr(&rq->fs, &d->o, &d->before);
	if (rc < 0)
		return nfs3_errno(-rc);
	d->have_before = true;
	return S_ISDIR(d->before.stx_mode) ? NFS3_OK : NFS3ERR_NOTDIR;
}

/* The checks every procedure that changes one directory entry starts with. */
static nfsstat3 dir_begin(struct svc_call *rq, const diropargs3 *where, struct dir_op *d)
{
	nfsstat3 st = dir_get(rq, &where->dir, d);
	if (st == NFS3_OK && !nfs3_writable(rq))
		st = NFS3ERR_ROFS;
	if (st == NFS3_OK)
		st = nfs3_check_name(where->name);
	return st;
}

/* wcc_data of a directory; empty when its handle never resolved. */
static void dir_wcc(struct svc_call *rq, const struct dir_op *d, wcc_data *out)
{
	if (!d->resolved) {
		memset(out, 0, sizeof *out);
		return;
	}
	nfs3_wcc(rq, d->have_before ? &d->before : NULL, &d->o, out);
}

/* What of sa remains to apply once the creation call has set the mode. A new file is empty, so
 * size 0 is already true; size means nothing for other types. Returns whether anything remains. */
static bool sattr_rest(const sattr3 *sa, bool regular, sattr3 *rest)
{
	*rest = *sa;
	rest->mode.set_it = FALSE;
	if (!regular || rest->size.set_size3_u.size == 0)
		rest->size.set_it = FALSE;
	return rest->uid.set_it || rest->gid.set_it || rest->size.set_it ||
	       rest->atime.set_it != DONT_CHANGE || rest->mtime.set_it != DONT_CHANGE;
}

/* dir/name as a resolved handle: fs_setattr works on those. */
static nfsstat3 open_new(struct svc_call *rq, const struct dir_op *d, const char *name,
			 struct fh_obj *obj)
{
	const struct fh *made = &d->made.fh;
	if (made->len)
		return nfs3_errno(fs_fh_get(&rq->fs, made->data, made->len, obj));
	return nfs3_errno(fs_open_at(&rq->fs, &d->o, name, obj));
}

/* The new object's handle and attributes for the reply, after applying rest (NULL: nothing). */
static nfsstat3 new_obj_reply(struct svc_call *rq, const struct dir_op *d, const char *name,
			      const sattr3 *rest, post_op_fh3 *fh, post_op_attr *attr)
{
	if (!rest) {
		if (d->made.fh.len) {
			fh->handle_follows = TRUE;
			nfs3_fh_out(rq, &d->made.fh, &fh->post_op_fh3_u.handle);
			attr->attributes_follow = TRUE;
			nfs3_fattr(rq, &d->made.st, &attr->post_op_attr_u.attributes);
			return NFS3_OK;
		}
		/* The object exists whatever fails now; a reply without its handle makes the client
		 * LOOKUP it (RFC 1813 post_op_fh3), which is better than an error it would retry. */
		if (nfs3_new_obj(rq, &d->o, name, fh, attr) != NFS3_OK)
			fh->handle_follows = FALSE;
		return NFS3_OK;
	}
	struct fh_obj obj;
	nfsstat3 st = open_new(rq, d, name, &obj);
	if (st != NFS3_OK)
		return st;
	struct fs_sattr sa;
	nfs3_sattr(rest, &sa);
	int rc = fs_setattr(&rq->fs, &obj, &sa);
	if (rc < 0)
		return nfs3_errno(-rc);
	fh->handle_follows = TRUE;
	nfs3_fh_out(rq, &obj.fh, &fh->post_op_fh3_u.handle);
	nfs3_post_op_attr(rq, &obj, attr);
	return NFS3_OK;
}

/* The end shared by CREATE, MKDIR, SYMLINK and MKNOD, whose results have one shape: resok
 * {obj, obj_attributes, dir_wcc}, resfail {dir_wcc} (ok_wcc and fail_wcc: not the same place). */
static nfsstat3 finish_new(struct svc_call *rq, const struct dir_op *d, const char *name, nfsstat3 st,
			   const sattr3 *rest, post_op_fh3 *obj, post_op_attr *attrs, wcc_data *ok_wcc,
			   wcc_data *fail_wcc)
{
	if (st == NFS3_OK)
		st = new_obj_reply(rq, d, name, rest, obj, attrs);
	dir_wcc(rq, d, st == NFS3_OK ? ok_wcc : fail_wcc);
	return st;
}

/* ---- CREATE ---- */

/* The verifier as knfsd keeps it: its two 32-bit halves as mtime and atime seconds, the top bit
 * cleared because file systems without 64-bit times (XFS without bigtime) cannot hold it. */
static void verf_times(const createverf3 verf, struct timespec ts[2])
{
	uint32_t half[2];
	memcpy(half, verf, sizeof half);
	ts[0] = (struct timespec){ .tv_sec = half[1] & 0x7fffffff };  /* atime */
	ts[1] = (struct timespec){ .tv_sec = half[0] & 0x7fffffff };  /* mtime */
}

static bool verf_matches(const struct statx *st, const createverf3 verf)
{
	struct timespec ts[2];
	verf_times(verf, ts);
	return st->stx_atime.tv_sec == ts[0].tv_sec && st->stx_mtime.tv_sec == ts[1].tv_sec;
}

/* EXCLUSIVE's own earlier attempt is still empty, as knfsd requires: data written since (a
 * WRITE that only reached the cache counts) makes the name taken, not this CREATE done. */
static bool still_empty(struct svc_call *rq, const struct dir_op *d, const char *name,
			const struct statx *st)
{
	struct fh_obj obj;
	struct statx now;
	return st->stx_size == 0 && open_new(rq, d, name, &obj) == NFS3_OK &&
	       fs_getattr(&rq->fs, &obj, &now) == 0 && now.stx_size == 0;
}

/* The name is taken. UNCHECKED reuses a regular file and applies only the size (as knfsd),
 * EXCLUSIVE recognises its own earlier attempt by the verifier and an empty file, anything
 * else is EXIST. */
static nfsstat3 create_existing(struct svc_call *rq, const struct dir_op *d, const char *name,
				const createhow3 *how, sattr3 *rest, bool *want_rest)
{
	if (how->mode == GUARDED)
		return NFS3ERR_EXIST;
	struct statx st;
	int rc = fs_getattr_at(&rq->fs, &d->o, name, &st);
	if (rc < 0)
		return nfs3_errno(-rc);
	if (!S_ISREG(st.stx_mode))
		return NFS3ERR_EXIST;
	if (how->mode == EXCLUSIVE)
		return verf_matches(&st, how->createhow3_u.verf) && still_empty(rq, d, name, &st)
		       ? NFS3_OK : NFS3ERR_EXIST;
	memset(rest, 0, sizeof *rest);
	rest->size = how->createhow3_u.obj_attributes.size;
	*want_rest = rest->size.set_it;
	return NFS3_OK;
}

/* Create the file O_EXCL; on EEXIST the mode decides. *want_rest: rest must still be applied. */
static nfsstat3 create_file(struct svc_call *rq, struct dir_op *d, const char *name,
			    const createhow3 *how, sattr3 *rest, bool *want_rest)
{
	*want_rest = false;
	if (is_dot(name))
		return NFS3ERR_EXIST;
	bool excl = how->mode == EXCLUSIVE;
	mode_t mode = excl ? 0 : sattr_mode(&how->createhow3_u.obj_attributes, 0644);
	struct timespec ts[2];
	if (excl)
		verf_times(how->createhow3_u.verf, ts);
	int rc = fs_create(&rq->fs, &d->o, name, mode, excl ? ts : NULL, &d->made);
	if (rc == -EEXIST)
		return create_existing(rq, d, name, how, rest, want_rest);
	if (rc < 0)
		return nfs3_errno(-rc);
	if (!excl)
		*want_rest = sattr_rest(&how->createhow3_u.obj_attributes, true, rest);
	return NFS3_OK;
}

void nfs3_create(struct svc_call *rq, void *argp, void *resp)
{
	const CREATE3args *a = argp;
	CREATE3res *res = resp;
	memset(res, 0, sizeof *res);
	struct dir_op d;
	sattr3 rest;
	bool want_rest = false;
	nfsstat3 st = dir_begin(rq, &a->where, &d);
	if (st == NFS3_OK)
		st = create_file(rq, &d, a->where.name, &a->how, &rest, &want_rest);
	CREATE3resok *ok = &res->CREATE3res_u.resok;
	res->status = finish_new(rq, &d, a->where.name, st, want_rest ? &rest : NULL, &ok->obj,
				  &ok->obj_attributes, &ok->dir_wcc,
				  &res->CREATE3res_u.resfail.dir_wcc);
}

/* ---- MKDIR, SYMLINK, MKNOD ---- */

void nfs3_mkdir(struct svc_call *rq, void *argp, void *resp)
{
	const MKDIR3args *a = argp;
	MKDIR3res *res = resp;
	memset(res, 0, sizeof *res);
	struct dir_op d;
	sattr3 rest;
	bool want_rest = false;
	nfsstat3 st = dir_begin(rq, &a->where, &d);
	if (st == NFS3_OK) {
		int rc = fs_mkdir(&rq->fs, &d.o, a->where.name, sattr_mode(&a->attributes, 0755));
		if (rc < 0)
			st = nfs3_errno(-rc);
		else
			want_rest = sattr_rest(&a->attributes, false, &rest);
	}
	MKDIR3resok *ok = &res->MKDIR3res_u.resok;
	res->status = finish_new(rq, &d, a->where.name, st, want_rest ? &rest : NULL, &ok->obj,
				  &ok->obj_attributes, &ok->dir_wcc,
				  &res->MKDIR3res_u.resfail.dir_wcc);
}

void nfs3_symlink(struct svc_call *rq, void *argp, void *resp)
{
	const SYMLINK3args *a = argp;
	SYMLINK3res *res = resp;
	memset(res, 0, sizeof *res);
	struct dir_op d = {0};
	sattr3 rest;
	bool want_rest = false;
	const char *target = a->symlink.symlink_data ? a->symlink.symlink_data : "";
	/* Before the directory is even looked at, as knfsd: an empty target, which is also what
	 * a target holding a NUL byte decodes as (nfs3_prot.x). */
	nfsstat3 st = *target ? dir_begin(rq, &a->where, &d) : NFS3ERR_INVAL;
	if (st == NFS3_OK) {
		int rc = fs_symlink(&rq->fs, &d.o, a->where.name, target);
		if (rc < 0)
			st = nfs3_errno(-rc);
		else    /* Linux symlinks have no mode of their own: sattr_rest drops it */
			want_rest = sattr_rest(&a->symlink.symlink_attributes, false, &rest);
	}
	SYMLINK3resok *ok = &res->SYMLINK3res_u.resok;
	res->status = finish_new(rq, &d, a->where.name, st, want_rest ? &rest : NULL, &ok->obj,
				  &ok->obj_attributes, &ok->dir_wcc,
				  &res->SYMLINK3res_u.resfail.dir_wcc);
}

/* What MKNOD is asked to make: file type bits + permissions, device number, attributes. */
static nfsstat3 mknod_what(const mknoddata3 *w, mode_t *mode, dev_t *dev, const sattr3 **sa)
{
	*dev = 0;
	switch (w->type) {
	case NF3CHR:
	case NF3BLK: {
		const specdata3 *spec = &w->mknoddata3_u.device.spec;
		/* Linux device numbers hold a 12-bit major and a 20-bit minor. */
		if (spec->specdata1 > 0xfff || spec->specdata2 > 0xfffff)
			return NFS3ERR_INVAL;
		*dev = makedev(spec->specdata1, spec->specdata2);
		*sa = &w->mknoddata3_u.device.dev_attributes;
		*mode = w->type == NF3CHR ? S_IFCHR : S_IFBLK;
		break;
	}
	case NF3SOCK:
	case NF3FIFO:
		*sa = &w->mknoddata3_u.pipe_attributes;
		*mode = w->type == NF3SOCK ? S_IFSOCK : S_IFIFO;
		break;
	default:    /* regular files, directories and symlinks have their own procedures */
		return NFS3ERR_BADTYPE;
	}
	*mode |= sattr_mode(*sa, 0644);
	return NFS3_OK;
}

static nfsstat3 make_node(struct svc_call *rq, const struct dir_op *d, const char *name,
			  const mknoddata3 *w, sattr3 *rest, bool *want_rest)
{
	mode_t mode;
	dev_t dev;
	const sattr3 *sa;
	nfsstat3 st = mknod_what(w, &mode, &dev, &sa);
	if (st != NFS3_OK)
		return st;
	int rc = fs_mknod(&rq->fs, &d->o, name, mode, dev);
	if (rc < 0)
		return nfs3_errno(-rc);
	*want_rest = sattr_rest(sa, false, rest);
	return NFS3_OK;
}

void nfs3_mknod(struct svc_call *rq, void *argp, void *resp)
{
	const MKNOD3args *a = argp;
	MKNOD3res *res = resp;
	memset(res, 0, sizeof *res);
	struct dir_op d;
	sattr3 rest;
	bool want_rest = false;
	nfsstat3 st = dir_begin(rq, &a->where, &d);
	if (st == NFS3_OK)
		st = make_node(rq, &d, a->where.name, &a->what, &rest, &want_rest);
	MKNOD3resok *ok = &res->MKNOD3res_u.resok;
	res->status = finish_new(rq, &d, a->where.name, st, want_rest ? &rest : NULL, &ok->obj,
				  &ok->obj_attributes, &ok->dir_wcc,
				  &res->MKNOD3res_u.resfail.dir_wcc);
}

/* ---- REMOVE, RMDIR ---- */

/* errno of a call that removes or replaces a name. NFSv3 has no EBUSY (the name is a mount
 * point): ACCES, as knfsd. Some file systems say EEXIST for a non-empty directory. */
static nfsstat3 unlink_errno(int err)
{
	if (err == EBUSY)
		return NFS3ERR_ACCES;
	if (err == EEXIST)
		return NFS3ERR_NOTEMPTY;
	return nfs3_errno(err);
}

/* Remove dir/name (a directory with rmdir). */
static nfsstat3 unlink_entry(struct svc_call *rq, const struct dir_op *d, const char *name,
			     bool rmdir)
{
	int rc = fs_remove(&rq->fs, &d->o, name, rmdir);
	return rc < 0 ? unlink_errno(-rc) : NFS3_OK;
}

void nfs3_remove(struct svc_call *rq, void *argp, void *resp)
{
	const REMOVE3args *a = argp;
	REMOVE3res *res = resp;
	memset(res, 0, sizeof *res);
	struct dir_op d;
	nfsstat3 st = dir_begin(rq, &a->object, &d);
	if (st == NFS3_OK)
		st = unlink_entry(rq, &d, a->object.name, false);   /* a directory: EISDIR */
	dir_wcc(rq, &d, st == NFS3_OK ? &res->REMOVE3res_u.resok.dir_wcc
				      : &res->REMOVE3res_u.resfail.dir_wcc);
	res->status = st;
}

void nfs3_rmdir(struct svc_call *rq, void *argp, void *resp)
{
	const RMDIR3args *a = argp;
	RMDIR3res *res = resp;
	memset(res, 0, sizeof *res);
	struct dir_op d;
	nfsstat3 st = dir_begin(rq, &a->object, &d);
	/* The kernel answers "." with EINVAL and ".." with ENOTEMPTY, as RFC 1813 wants. */
	if (st == NFS3_OK)
		st = unlink_entry(rq, &d, a->object.name, true);
	dir_wcc(rq, &d, st == NFS3_OK ? &res->RMDIR3res_u.resok.dir_wcc
				      : &res->RMDIR3res_u.resfail.dir_wcc);
	res->status = st;
}

/* ---- RENAME ---- */

/* Rename; what it replaces is let go of once its last link went with it (fs_rename). */
static nfsstat3 rename_entry(struct svc_call *rq, const struct dir_op *from, const char *fname,
			     const struct dir_op *to, const char *tname)
{
	int rc = fs_rename(&rq->fs, &from->o, fname, &to->o, tname);
	return rc < 0 ? unlink_errno(-rc) : NFS3_OK;
}

static nfsstat3 rename_check(struct svc_call *rq, const RENAME3args *a, const struct dir_op *from,
			     const struct dir_op *to)
{
	if (from->o.exp != to->o.exp)
		return NFS3ERR_XDEV;
	if (!nfs3_writable(rq))
		return NFS3ERR_ROFS;
	nfsstat3 st = nfs3_check_name(a->from.name);
	if (st == NFS3_OK)
		st = nfs3_check_name(a->to.name);
	/* The kernel would say EBUSY, which NFSv3 lacks; knfsd answers PERM. */
	if (st == NFS3_OK && (is_dot(a->from.name) || is_dot(a->to.name)))
		st = NFS3ERR_PERM;
	return st;
}

void nfs3_rename(struct svc_call *rq, void *argp, void *resp)
{
	const RENAME3args *a = argp;
	RENAME3res *res = resp;
	memset(res, 0, sizeof *res);
	struct dir_op from, to;
	memset(&to, 0, sizeof to);
	nfsstat3 st = dir_get(rq, &a->from.dir, &from);
	if (st == NFS3_OK)
		st = dir_get(rq, &a->to.dir, &to);
	if (st == NFS3_OK)
		st = rename_check(rq, a, &from, &to);
	if (st == NFS3_OK)
		st = rename_entry(rq, &from, a->from.name, &to, a->to.name);
	if (st == NFS3_OK) {
		dir_wcc(rq, &from, &res->RENAME3res_u.resok.fromdir_wcc);
		dir_wcc(rq, &to, &res->RENAME3res_u.resok.todir_wcc);
	} else {
		dir_wcc(rq, &from, &res->RENAME3res_u.resfail.fromdir_wcc);
		dir_wcc(rq, &to, &res->RENAME3res_u.resfail.todir_wcc);
	}
	res->status = st;
}

/* ---- LINK ---- */

static nfsstat3 link_entry(struct svc_call *rq, const struct fh_obj *file, const struct dir_op *d,
			   const char *name)
{
	struct statx st;
	int rc = fs_getattr(&rq->fs, file, &st);
	if (rc < 0)
		return nfs3_errno(-rc);
	if (S_ISDIR(st.stx_mode))
		return NFS3ERR_ISDIR;
	rc = fs_link(&rq->fs, file, &d->o, name);
	return rc < 0 ? nfs3_errno(-rc) : NFS3_OK;
}

static nfsstat3 link_check(struct svc_call *rq, const struct fh_obj *file, const struct dir_op *d,
			   const char *name)
{
	if (file->exp != d->o.exp)
		return NFS3ERR_XDEV;
	if (!nfs3_writable(rq))
		return NFS3ERR_ROFS;
	nfsstat3 st = nfs3_check_name(name);
	if (st == NFS3_OK && is_dot(name))
		st = NFS3ERR_EXIST;
	return st;
}

void nfs3_link(struct svc_call *rq, void *argp, void *resp)
{
	const LINK3args *a = argp;
	LINK3res *res = resp;
	memset(res, 0, sizeof *res);
	struct fh_obj file;
	struct dir_op d;
	memset(&d, 0, sizeof d);
	nfsstat3 st = nfs3_fh_get(rq, &a->file, &file);
	bool have_file = st == NFS3_OK;
	if (st == NFS3_OK)
		st = dir_get(rq, &a->link.dir, &d);
	if (st == NFS3_OK)
		st = link_check(rq, &file, &d, a->link.name);
	if (st == NFS3_OK)
		st = link_entry(rq, &file, &d, a->link.name);
	LINK3resok *ok = &res->LINK3res_u.resok;
	LINK3resfail *fail = &res->LINK3res_u.resfail;
	if (have_file)
		nfs3_post_op_attr(rq, &file, st == NFS3_OK ? &ok->file_attributes
							   : &fail->file_attributes);
	dir_wcc(rq, &d, st == NFS3_OK ? &ok->linkdir_wcc : &fail->linkdir_wcc);
	res->status = st;
}
