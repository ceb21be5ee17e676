/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 procedures on single objects and the file system, and the procedure table: each checks
 * what the protocol asks and calls the file-system layer's verbs (fs/fs.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "nfs3/nfs3_int.h"
#include "svc/dispatch.h"
#include "xdr/nfs3_zc.h"


void nfs3_null(struct svc_call *rq, void *argp, void *resp)
{
	(void)rq, (void)argp, (void)resp;
}

void nfs3_getattr(struct svc_call *rq, void *argp, void *resp)
{
	GETATTR3args *a = argp;
	GETATTR3res *r = resp;
	struct fh_obj o;
	struct statx st;
	rq->fs.root_bypass = true;   /* RFC 2623 2.3.2: the root's, with AUTH_SYS on a krb5 export */
	r->status = nfs3_fh_get(rq, &a->object, &o);
	if (r->status != NFS3_OK)
		return;
	int rc = fs_getattr(&rq->fs, &o, &st);
	r->status = nfs3_errno(rc);
	if (rc == 0)
		nfs3_fattr(rq, &st, &r->GETATTR3res_u.resok.obj_attributes);
}

static bool same_time(nfstime3 a, struct statx_timestamp b)
{
	return a.seconds == (uint32_t)b.tv_sec && a.nseconds == b.tv_nsec;
}

void nfs3_setattr(struct svc_call *rq, void *argp, void *resp)
{
	SETATTR3args *a = argp;
	SETATTR3res *r = resp;
	wcc_data *wcc = &r->SETATTR3res_u.resfail.obj_wcc;   /* same layout in resok */
	struct fh_obj o;
	struct statx before;
	r->status = nfs3_fh_get(rq, &a->object, &o);
	if (r->status != NFS3_OK)
		return;
	int rc = fs_getattr(&rq->fs, &o, &before);
	if (rc < 0) {
		r->status = nfs3_errno(rc);
		return;
	}
	struct fs_sattr sa;
	nfs3_sattr(&a->new_attributes, &sa);
	if (!nfs3_writable(rq))
		r->status = NFS3ERR_ROFS;
	else if (a->guard.check && !same_time(a->guard.sattrguard3_u.obj_ctime, before.stx_ctime))
		r->status = NFS3ERR_NOT_SYNC;
	else if (sa.set_size && S_ISDIR(before.stx_mode))
		r->status = NFS3ERR_ISDIR;
	else
		r->status = nfs3_errno(fs_setattr(&rq->fs, &o, &sa));
	nfs3_wcc(rq, &before, &o, wcc);
}

/* The handle and attributes of dir/name for LOOKUP; "." and ".." never leave the export. */
static nfsstat3 lookup_name(struct svc_call *rq, struct fh_obj *dir, const struct statx *dst,
			    const char *name, LOOKUP3resok *ok)
{
	if (strcmp(name, ".") == 0 || (strcmp(name, "..") == 0 && dst->stx_ino == dir->exp->root_ino))
		name = "";
	else if (strcmp(name, "..") != 0) {
		nfsstat3 s = nfs3_check_name(name);
		if (s != NFS3_OK)
			return s;
	}
	post_op_fh3 fh = {0};
	nfsstat3 s = nfs3_new_obj(rq, dir, name, &fh, &ok->obj_attributes);
	if (s != NFS3_OK)
		return s;
	if (!fh.handle_follows)
		return NFS3ERR_SERVERFAULT;
	ok->object = fh.post_op_fh3_u.handle;
	return NFS3_OK;
}

void nfs3_lookup(struct svc_call *rq, void *argp, void *resp)
{
	LOOKUP3args *a = argp;
	LOOKUP3res *r = resp;
	struct fh_obj dir;
	struct statx st;
	r->status = nfs3_fh_get(rq, &a->what.dir, &dir);
	if (r->status != NFS3_OK)
		return;
	int rc = fs_getattr(&rq->fs, &dir, &st);
	if (rc < 0)
		r->status = nfs3_errno(rc);
	else if (!S_ISDIR(st.stx_mode))
		r->status = NFS3ERR_NOTDIR;
	else
		r->status = lookup_name(rq, &dir, &st, a->what.name, &r->LOOKUP3res_u.resok);
	post_op_attr *da = r->status == NFS3_OK ? &r->LOOKUP3res_u.resok.dir_attributes
						: &r->LOOKUP3res_u.resfail.dir_attributes;
	nfs3_post_op_attr(rq, &dir, da);
}

void nfs3_access(struct svc_call *rq, void *argp, void *resp)
{
	ACCESS3args *a = argp;
	ACCESS3res *r = resp;
	struct fh_obj o;
	struct statx st;
	rq->fs.root_bypass = true;   /* RFC 2623 2.3.2: the root's, with AUTH_SYS on a krb5 export */
	r->status = nfs3_fh_get(rq, &a->object, &o);
	if (r->status != NFS3_OK)
		return;
	int rc = fs_getattr(&rq->fs, &o, &st);
	if (rc < 0) {
		r->status = nfs3_errno(rc);
		return;
	}
	bool dir = S_ISDIR(st.stx_mode);
	static const struct { uint32_t bit; int mode; bool dir_only, file_only, modifies; } map[] = {
		{ACCESS3_READ, R_OK, false, false, false},   {ACCESS3_LOOKUP, X_OK, true, false, false},
		{ACCESS3_MODIFY, W_OK, false, false, true},  {ACCESS3_EXTEND, W_OK, false, false, true},
		{ACCESS3_DELETE, W_OK, true, false, true},   {ACCESS3_EXECUTE, X_OK, false, true, false},
	};
	uint32_t granted = 0;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		if (!(a->access & map[i].bit) || (map[i].dir_only && !dir) || (map[i].file_only && dir))
			continue;
		if (map[i].modifies && !nfs3_writable(rq))
			continue;
		if (fs_access(&rq->fs, &o, map[i].mode) == 0)
			granted |= map[i].bit;
	}
	r->ACCESS3res_u.resok.access = granted;
	r->ACCESS3res_u.resok.obj_attributes.attributes_follow = true;
	nfs3_fattr(rq, &st, &r->ACCESS3res_u.resok.obj_attributes.post_op_attr_u.attributes);
}

void nfs3_readlink(struct svc_call *rq, void *argp, void *resp)
{
	READLINK3args *a = argp;
	READLINK3res *r = resp;
	struct fh_obj o;
	r->status = nfs3_fh_get(rq, &a->symlink, &o);
	if (r->status != NFS3_OK)
		return;
	char *buf = arena_alloc(&rq->arena, PATH_MAX + 1);
	long n = buf ? fs_readlink(&rq->fs, &o, buf, PATH_MAX) : -ENOMEM;
	if (n < 0) {
		r->status = n == -ENOENT ? NFS3ERR_INVAL : nfs3_errno((int)-n);
		nfs3_post_op_attr(rq, &o, &r->READLINK3res_u.resfail.symlink_attributes);
		return;
	}
	buf[n] = 0;
	r->READLINK3res_u.resok.data = buf;
	nfs3_post_op_attr(rq, &o, &r->READLINK3res_u.resok.symlink_attributes);
}

/* READ and WRITE may use a file the caller cannot open but owns (it was created with a mode that
 * forbids the access after the fact, as "cp -a" of a read-only file does): knfsd's owner override,
 * which fs_permission applies. */
static nfsstat3 check_io_access(struct svc_call *rq, struct fh_obj *o, const struct statx *st, int mode)
{
	if (S_ISDIR(st->stx_mode))
		return NFS3ERR_ISDIR;
	if (!S_ISREG(st->stx_mode))
		return NFS3ERR_INVAL;
	return fs_permission(&rq->fs, o, st, mode) == 0 ? NFS3_OK : NFS3ERR_ACCES;
}

void nfs3_read(struct svc_call *rq, void *argp, void *resp)
{
	READ3args *a = argp;
	READ3res *r = resp;
	struct fh_obj o;
	struct statx st;
	r->status = nfs3_fh_get(rq, &a->file, &o);
	if (r->status != NFS3_OK)
		return;
	int rc = fs_getattr(&rq->fs, &o, &st);
	r->status = rc < 0 ? nfs3_errno(rc) : check_io_access(rq, &o, &st, R_OK);
	if (r->status == NFS3_OK) {
		READ3resok *ok = &r->READ3res_u.resok;
		uint32_t count = a->count > FS_MAXIO ? FS_MAXIO : a->count;
		bool eof;
		rc = fs_read(&rq->fs, &o, a->offset, count, st.stx_size, &ok->count, &eof,
			     &rq->payload);
		r->status = nfs3_errno(rc);
		if (rc == 0) {
			ok->eof = eof;
			ok->data.data_len = ok->count;
			ok->data.data_val = rq->payload.data;
			struct nfs3_stats *ctr = rq->prog;
			atomic_fetch_add(&ctr->reads, 1);
			atomic_fetch_add(&ctr->bytes_read, ok->count);
			/* A READ changes nothing: the attributes it was checked against (and its
			 * eof judged by) are the ones after it. */
			nfs3_post_op_from(rq, &st, &ok->file_attributes);
			return;
		}
	}
	nfs3_post_op_attr(rq, &o, &r->READ3res_u.resfail.file_attributes);
}

/* after: the attributes after the WRITE when fs_write could tell them, else NULL (asked now). */
static void write_reply(struct svc_call *rq, WRITE3args *a, WRITE3res *r, struct fh_obj *o,
			const struct statx *before, const struct statx *after, int rc)
{
	r->status = nfs3_errno(rc);
	if (r->status != NFS3_OK) {
		nfs3_wcc(rq, before, o, &r->WRITE3res_u.resfail.file_wcc);
		return;
	}
	struct nfs3_stats *ctr = rq->prog;
	atomic_fetch_add(&ctr->writes, 1);
	atomic_fetch_add(&ctr->bytes_written, a->count);
	WRITE3resok *ok = &r->WRITE3res_u.resok;
	ok->count = a->count;
	ok->committed = a->stable;
	fs_verifier(&rq->fs, ok->verf);
	if (!after) {
		nfs3_wcc(rq, before, o, &ok->file_wcc);
		return;
	}
	nfs3_pre_op_attr(before, &ok->file_wcc.before);
	nfs3_post_op_from(rq, after, &ok->file_wcc.after);
}

void nfs3_write(struct svc_call *rq, void *argp, void *resp)
{
	WRITE3args *a = argp;
	WRITE3res *r = resp;
	struct fh_obj o;
	struct statx before;
	r->status = nfs3_fh_get(rq, &a->file, &o);
	if (r->status != NFS3_OK)
		return;
	int rc = fs_getattr(&rq->fs, &o, &before);
	if (rc < 0)
		r->status = nfs3_errno(rc);
	else if (!nfs3_writable(rq))
		r->status = NFS3ERR_ROFS;
	else if (a->data.data_len < a->count || a->count > FS_MAXIO)
		r->status = NFS3ERR_INVAL;
	else if (a->offset >= o.exp->maxbytes)
		r->status = NFS3ERR_FBIG;   /* before any I/O: nothing of anyone's is lost */
	else
		r->status = check_io_access(rq, &o, &before, W_OK);
	if (r->status != NFS3_OK) {
		nfs3_wcc(rq, rc == -ESTALE ? NULL : &before, &o, &r->WRITE3res_u.resfail.file_wcc);
		return;
	}
	/* Across the bound, as the kernel's write() and so knfsd: cut short there. */
	if (a->count > o.exp->maxbytes - a->offset)
		a->count = (uint32_t)(o.exp->maxbytes - a->offset);
	struct statx after = before;
	bool known;
	rc = fs_write(&rq->fs, &o, a->offset, a->data.data_val, a->count, (enum fs_stable)a->stable,
		      &after, &known);
	write_reply(rq, a, r, &o, &before, known ? &after : NULL, rc);
}

void nfs3_commit(struct svc_call *rq, void *argp, void *resp)
{
	COMMIT3args *a = argp;
	COMMIT3res *r = resp;
	struct fh_obj o;
	struct statx before;
	r->status = nfs3_fh_get(rq, &a->file, &o);
	if (r->status != NFS3_OK)
		return;
	int rc = fs_getattr(&rq->fs, &o, &before);
	if (rc == 0 && !S_ISREG(before.stx_mode))
		rc = S_ISDIR(before.stx_mode) ? -EISDIR : -EINVAL;
	if (rc == 0 && !nfs3_writable(rq))
		rc = -EROFS;
	/* As knfsd's nfsd_file_acquire(NFSD_MAY_WRITE): a caller who may not write the file (the
	 * owner may) cannot make the server write and sync it, nor learn the verifier from it. */
	if (rc == 0 && check_io_access(rq, &o, &before, W_OK) != NFS3_OK)
		rc = -EACCES;
	if (rc == 0 && a->offset >= o.exp->maxbytes)
		rc = -EFBIG;   /* no byte can be there: answered before any I/O, verifier kept */
	if (rc == 0)
		rc = fs_commit(&rq->fs, &o, a->offset, a->count);
	r->status = nfs3_errno(rc);
	atomic_fetch_add(&((struct nfs3_stats *)rq->prog)->commits, 1);
	wcc_data *wcc = r->status == NFS3_OK ? &r->COMMIT3res_u.resok.file_wcc : &r->COMMIT3res_u.resfail.file_wcc;
	nfs3_wcc(rq, rc == -ESTALE ? NULL : &before, &o, wcc);
	if (r->status == NFS3_OK)
		fs_verifier(&rq->fs, r->COMMIT3res_u.resok.verf);
}

void nfs3_fsstat(struct svc_call *rq, void *argp, void *resp)
{
	FSSTAT3args *a = argp;
	FSSTAT3res *r = resp;
	struct fh_obj o;
	struct statfs s;
	rq->fs.root_bypass = true;
	r->status = nfs3_fh_get(rq, &a->fsroot, &o);
	if (r->status != NFS3_OK)
		return;
	int rc = fs_statfs(&rq->fs, &o, &s);
	if (rc < 0) {
		r->status = nfs3_errno(rc);
		nfs3_post_op_attr(rq, &o, &r->FSSTAT3res_u.resfail.obj_attributes);
		return;
	}
	FSSTAT3resok *ok = &r->FSSTAT3res_u.resok;
	ok->tbytes = (uint64_t)s.f_blocks * (uint64_t)s.f_frsize;
	ok->fbytes = (uint64_t)s.f_bfree * (uint64_t)s.f_frsize;
	ok->abytes = (uint64_t)s.f_bavail * (uint64_t)s.f_frsize;
	ok->tfiles = s.f_files;
	ok->ffiles = s.f_ffree;
	ok->afiles = s.f_ffree;
	ok->invarsec = 0;
	nfs3_post_op_attr(rq, &o, &ok->obj_attributes);
}

void nfs3_fsinfo(struct svc_call *rq, void *argp, void *resp)
{
	FSINFO3args *a = argp;
	FSINFO3res *r = resp;
	struct fh_obj o;
	rq->fs.root_bypass = true;
	r->status = nfs3_fh_get(rq, &a->fsroot, &o);
	if (r->status != NFS3_OK)
		return;
	FSINFO3resok *ok = &r->FSINFO3res_u.resok;
	ok->rtmax = ok->rtpref = ok->wtmax = ok->wtpref = FS_MAXIO;
	ok->rtmult = ok->wtmult = (uint32_t)o.exp->block;
	ok->dtpref = 65536;
	ok->maxfilesize = o.exp->maxbytes;   /* as knfsd: s_maxbytes */
	ok->time_delta = (nfstime3){0, 1};
	ok->properties = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;
	nfs3_post_op_attr(rq, &o, &ok->obj_attributes);
}

void nfs3_pathconf(struct svc_call *rq, void *argp, void *resp)
{
	PATHCONF3args *a = argp;
	PATHCONF3res *r = resp;
	struct fh_obj o;
	r->status = nfs3_fh_get(rq, &a->object, &o);
	if (r->status != NFS3_OK)
		return;
	PATHCONF3resok *ok = &r->PATHCONF3res_u.resok;
	long link_max = fs_link_max(&rq->fs, &o);   /* unknown: reported as 1 */
	ok->linkmax = link_max > 0 ? (uint32_t)link_max : 1;
	ok->name_max = NAME_MAX;
	ok->no_trunc = TRUE;
	ok->chown_restricted = TRUE;
	ok->case_insensitive = FALSE;
	ok->case_preserving = TRUE;
	nfs3_post_op_attr(rq, &o, &ok->obj_attributes);
}

static void release_write(void *args) { write3args_zc_free(args); }

/* The last field says whether the duplicate request cache keeps the replies (drc.h): the
 * non-idempotent procedures, as knfsd's table marks them (RC_REPLBUFF, RC_REPLSTAT); running one
 * of them twice for one call gives the client a wrong answer (REMOVE's NOENT, MKDIR's EXIST). */
#define PROC_(NAME, handler, ARGS, RES, drc) \
	{#NAME, XDRPROC(xdr_##ARGS), NULL, XDRPROC(xdr_##RES), sizeof(ARGS), sizeof(RES), handler, drc}
#define PROC(NAME, handler, ARGS, RES) PROC_(NAME, handler, ARGS, RES, false)
#define PROC_DRC(NAME, handler, ARGS, RES) PROC_(NAME, handler, ARGS, RES, true)

static const struct proc_desc nfs3_procs[] = {
	[NFSPROC3_NULL] = {"NULL", XDRPROC(xdr_void), NULL, XDRPROC(xdr_void), 0, 0, nfs3_null, false},
	[NFSPROC3_GETATTR] = PROC(GETATTR, nfs3_getattr, GETATTR3args, GETATTR3res),
	[NFSPROC3_SETATTR] = PROC_DRC(SETATTR, nfs3_setattr, SETATTR3args, SETATTR3res),
	[NFSPROC3_LOOKUP] = PROC(LOOKUP, nfs3_lookup, LOOKUP3args, LOOKUP3res),
	[NFSPROC3_ACCESS] = PROC(ACCESS, nfs3_access, ACCESS3args, ACCESS3res),
	[NFSPROC3_READLINK] = PROC(READLINK, nfs3_readlink, READLINK3args, READLINK3res),
	[NFSPROC3_READ] = {"READ", XDRPROC(xdr_READ3args), NULL, XDRPROC(xdr_READ3res_zc),
			   sizeof(READ3args), sizeof(READ3res), nfs3_read, false},
	[NFSPROC3_WRITE] = {"WRITE", XDRPROC(xdr_WRITE3args_zc), release_write, XDRPROC(xdr_WRITE3res),
			    sizeof(WRITE3args), sizeof(WRITE3res), nfs3_write, true},
	[NFSPROC3_CREATE] = PROC_DRC(CREATE, nfs3_create, CREATE3args, CREATE3res),
	[NFSPROC3_MKDIR] = PROC_DRC(MKDIR, nfs3_mkdir, MKDIR3args, MKDIR3res),
	[NFSPROC3_SYMLINK] = PROC_DRC(SYMLINK, nfs3_symlink, SYMLINK3args, SYMLINK3res),
	[NFSPROC3_MKNOD] = PROC_DRC(MKNOD, nfs3_mknod, MKNOD3args, MKNOD3res),
	[NFSPROC3_REMOVE] = PROC_DRC(REMOVE, nfs3_remove, REMOVE3args, REMOVE3res),
	[NFSPROC3_RMDIR] = PROC_DRC(RMDIR, nfs3_rmdir, RMDIR3args, RMDIR3res),
	[NFSPROC3_RENAME] = PROC_DRC(RENAME, nfs3_rename, RENAME3args, RENAME3res),
	[NFSPROC3_LINK] = PROC_DRC(LINK, nfs3_link, LINK3args, LINK3res),
	[NFSPROC3_READDIR] = PROC(READDIR, nfs3_readdir, READDIR3args, READDIR3res),
	[NFSPROC3_READDIRPLUS] = PROC(READDIRPLUS, nfs3_readdirplus, READDIRPLUS3args, READDIRPLUS3res),
	[NFSPROC3_FSSTAT] = PROC(FSSTAT, nfs3_fsstat, FSSTAT3args, FSSTAT3res),
	[NFSPROC3_FSINFO] = PROC(FSINFO, nfs3_fsinfo, FSINFO3args, FSINFO3res),
	[NFSPROC3_PATHCONF] = PROC(PATHCONF, nfs3_pathconf, PATHCONF3args, PATHCONF3res),
	[NFSPROC3_COMMIT] = PROC(COMMIT, nfs3_commit, COMMIT3args, COMMIT3res),
};

/* Every NFSv3 result but NULL's begins with its nfsstat3. */
static int64_t nfs3_status(uint32_t proc, const void *res)
{
	int32_t st;
	if (proc == NFSPROC3_NULL)
		return -1;
	memcpy(&st, res, sizeof st);
	return st;
}

const struct prog_desc nfs3_program = {NFS_PROGRAM, NFS_V3, nfs3_procs,
				       sizeof nfs3_procs / sizeof nfs3_procs[0], true, nfs3_status};
