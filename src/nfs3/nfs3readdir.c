/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 READDIR and READDIRPLUS (RFC 1813 sections 3.3.16 and 3.3.17), over the file-system
 * layer's listings (fs_dir_*: getdents64 on the blocking pool, cookies the file system's own
 * positions). "." and ".." are listed, as knfsd does. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "nfs3/nfs3_int.h"

/* Largest count/maxcount honoured: bigger requests get a reply of this size (knfsd caps too).
 * rpcgen encodes the entry list recursively, one stack frame per entry: 256 KiB of the smallest
 * entries (28 bytes) stays far below what a worker's 8 MiB stack holds, even under ASan. */
#define RD_MAX_COUNT (256 * 1024)
/* Room the dispatcher adds for the RPC reply header around the encoded result. */
#define RD_REPLY_SLACK 512
/* Encoded resok without entries: status, post_op_attr (4 + fattr3 84), cookieverf, the final
 * "no more entries" word, eof. */
#define RD_HDR_SIZE (4 + 4 + 84 + 8 + 4 + 4)

static size_t xdr_pad(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* One READDIR entry: value-follows word, fileid, name (length + padded bytes), cookie. */
static size_t entry_size(size_t namelen)
{
	return 4 + 8 + 4 + xdr_pad(namelen) + 8;
}

/* The directory being listed, with the attributes its cookie verifier is drawn from. */
struct rd_dir {
	struct fh_obj o;
	struct statx st;
	bool resolved;
	bool have_st;
	bool is_root;    /* the export's root: its ".." is itself */
};

static nfsstat3 rd_begin(struct svc_call *rq, const nfs_fh3 *fh, uint64_t cookie,
			 const char verf[NFS3_COOKIEVERFSIZE], struct rd_dir *d)
{
	memset(d, 0, sizeof *d);
	nfsstat3 st = nfs3_fh_get(rq, fh, &d->o);
	if (st != NFS3_OK)
		return st;
	d->resolved = true;
	int rc = fs_getattr(&rq->fs, &d->o, &d->st);
	if (rc < 0)
		return nfs3_errno(-rc);
	d->have_st = true;
	if (!S_ISDIR(d->st.stx_mode))
		return NFS3ERR_NOTDIR;
	d->is_root = d->st.stx_ino == d->o.exp->root_ino &&
		     makedev(d->st.stx_dev_major, d->st.stx_dev_minor) == d->o.exp->dev;
	/* A verifier from before the directory changed: the client's cookies may be stale. Zero is
	 * what a client sends that has none. */
	static const char zero[NFS3_COOKIEVERFSIZE];
	cookieverf3 now;
	nfs3_cookieverf(&d->st, now);
	if (cookie != 0 && memcmp(verf, zero, sizeof zero) != 0 && memcmp(verf, now, sizeof now) != 0)
		return NFS3ERR_BAD_COOKIE;
	return NFS3_OK;
}

/* The directory's attributes as they were when listing began. */
static void rd_dir_attr(struct svc_call *rq, const struct rd_dir *d, post_op_attr *out)
{
	out->attributes_follow = d->have_st;
	if (d->have_st)
		nfs3_fattr(rq, &d->st, &out->post_op_attr_u.attributes);
}

static size_t rd_budget(uint32_t count)
{
	size_t c = count < RD_MAX_COUNT ? count : RD_MAX_COUNT;
	return c > RD_HDR_SIZE ? c - RD_HDR_SIZE : 0;
}

/* ---- reading entries ---- */

/* The fileid an entry shows: ".." of the export root is the root itself (nothing above it is
 * exported). */
static uint64_t entry_fileid(const struct rd_dir *d, const struct fs_dirent *de)
{
	if (d->is_root && strcmp(de->name, "..") == 0)
		return d->st.stx_ino;
	return de->ino;
}

/* How a listing ended: eof only when the directory was read to its end; TOOSMALL when not even
 * one entry fitted. */
static nfsstat3 list_end(const struct fs_dir *c, int err, bool any, bool_t *eof)
{
	if (err)
		return nfs3_errno(err);
	if (!any && !c->end)
		return NFS3ERR_TOOSMALL;
	*eof = c->end;
	return NFS3_OK;
}

/* ---- READDIR ---- */

static nfsstat3 list_names(struct svc_call *rq, const struct rd_dir *d, struct fs_dir *c,
			   size_t budget, dirlist3 *out)
{
	entry3 **tail = &out->entries;
	struct fs_dirent de;
	int err = 0;
	bool any = false;
	while (fs_dir_next(&rq->fs, c, &de, &err)) {
		size_t need = entry_size(strlen(de.name));
		if (need > budget)
			break;
		entry3 *e = arena_alloc(&rq->arena, sizeof *e);
		char *name = arena_strdup(&rq->arena, de.name);
		if (!e || !name)
			return NFS3ERR_SERVERFAULT;
		*e = (entry3){ .fileid = entry_fileid(d, &de), .name = name, .cookie = de.cookie,
			       .nextentry = NULL };
		*tail = e;
		tail = &e->nextentry;
		budget -= need;
		any = true;
	}
	return list_end(c, err, any, &out->eof);
}

void nfs3_readdir(struct svc_call *rq, void *argp, void *resp)
{
	const READDIR3args *a = argp;
	READDIR3res *res = resp;
	memset(res, 0, sizeof *res);
	rq->reply_hint = (a->count < RD_MAX_COUNT ? a->count : RD_MAX_COUNT) + RD_REPLY_SLACK;
	struct rd_dir d;
	struct fs_dir c = { .fd = -1 };
	READDIR3resok *ok = &res->READDIR3res_u.resok;
	nfsstat3 st = rd_begin(rq, &a->dir, a->cookie, a->cookieverf, &d);
	if (st == NFS3_OK && a->count < RD_HDR_SIZE)
		st = NFS3ERR_TOOSMALL;
	if (st == NFS3_OK)
		st = nfs3_errno(fs_dir_open(&rq->fs, &d.o, a->cookie, false, d.is_root, &c));
	if (st == NFS3_OK)
		st = list_names(rq, &d, &c, rd_budget(a->count), &ok->reply);
	fs_dir_close(&rq->fs, &c);
	if (st == NFS3_OK) {
		rd_dir_attr(rq, &d, &ok->dir_attributes);
		nfs3_cookieverf(&d.st, ok->cookieverf);
	} else {
		memset(res, 0, sizeof *res);    /* drop a partial list */
		rd_dir_attr(rq, &d, &res->READDIR3res_u.resfail.dir_attributes);
	}
	res->status = st;
}

/* ---- READDIRPLUS ---- */

/* Attributes and handle of one entry, from the batch plus_fill made. "." is the directory
 * itself, and so is ".." at the export root. An entry that vanished, or a mount point leading off
 * the export's file system, gets neither: the client LOOKUPs it if it cares. False when the
 * entry was not looked up: it lies past the reply's room (fs_dir_room). */
static bool plus_extras(struct svc_call *rq, const struct rd_dir *d, const struct fs_dir *c,
			entryplus3 *e)
{
	struct fh fh;
	const struct statx *stp = &d->st;
	const struct fh *fhp = &d->o.fh;
	int got = fs_dir_plus(&rq->fs, c, &d->o, &stp, &fh);
	if (got == 2)
		return false;
	if (got < 0)
		return true;
	if (got == 0)
		fhp = &fh;
	e->name_attributes.attributes_follow = TRUE;
	nfs3_fattr(rq, stp, &e->name_attributes.post_op_attr_u.attributes);
	e->name_handle.handle_follows = TRUE;
	nfs3_fh_out(rq, fhp, &e->name_handle.post_op_fh3_u.handle);
	return true;
}

/* Encoded size of an entry whose name is namelen bytes, with attributes and a handle of fh_len
 * bytes (fh_len 0: with neither, as plus_extras gives them: both or none). */
static size_t plus_cost(size_t namelen, size_t fh_len)
{
	size_t n = entry_size(namelen) + 4 + 4;
	if (fh_len)
		n += 84 + 4 + xdr_pad(fh_len);
	return n;
}

static size_t plus_size(const entryplus3 *e)
{
	return plus_cost(strlen(e->name), e->name_handle.handle_follows ?
			 e->name_handle.post_op_fh3_u.handle.data.data_len : 0);
}

/* Like list_names. dircount is not enforced: like knfsd, maxcount alone bounds the reply (the
 * Linux client sends dircount as a fraction of maxcount, a hint). */
static nfsstat3 list_plus(struct svc_call *rq, const struct rd_dir *d, struct fs_dir *c,
			  size_t budget, dirlistplus3 *out)
{
	entryplus3 **tail = &out->entries;
	struct fs_dirent de;
	int err = 0;
	bool any = false;
	while (fs_dir_next(&rq->fs, c, &de, &err)) {
		/* Cheap test first: no handle for an entry that cannot fit anyway. */
		if (entry_size(strlen(de.name)) + 8 > budget)
			break;
		entryplus3 *e = arena_alloc(&rq->arena, sizeof *e);
		char *name = arena_strdup(&rq->arena, de.name);
		if (!e || !name)
			return NFS3ERR_SERVERFAULT;
		*e = (entryplus3){ .fileid = entry_fileid(d, &de), .name = name, .cookie = de.cookie,
				   .nextentry = NULL };
		if (!plus_extras(rq, d, c, e))
			break;
		size_t need = plus_size(e);
		if (need > budget)
			break;
		*tail = e;
		tail = &e->nextentry;
		budget -= need;
		any = true;
	}
	return list_end(c, err, any, &out->eof);
}

void nfs3_readdirplus(struct svc_call *rq, void *argp, void *resp)
{
	const READDIRPLUS3args *a = argp;
	READDIRPLUS3res *res = resp;
	memset(res, 0, sizeof *res);
	rq->reply_hint = (a->maxcount < RD_MAX_COUNT ? a->maxcount : RD_MAX_COUNT) + RD_REPLY_SLACK;
	struct rd_dir d;
	struct fs_dir c = { .fd = -1 };
	READDIRPLUS3resok *ok = &res->READDIRPLUS3res_u.resok;
	nfsstat3 st = rd_begin(rq, &a->dir, a->cookie, a->cookieverf, &d);
	if (st == NFS3_OK && a->maxcount < RD_HDR_SIZE)
		st = NFS3ERR_TOOSMALL;
	if (st == NFS3_OK)
		st = nfs3_errno(fs_dir_open(&rq->fs, &d.o, a->cookie, true, d.is_root, &c));
	if (st == NFS3_OK) {
		fs_dir_room(&c, rd_budget(a->maxcount), plus_cost);
		st = list_plus(rq, &d, &c, rd_budget(a->maxcount), &ok->reply);
	}
	fs_dir_close(&rq->fs, &c);
	if (st == NFS3_OK) {
		rd_dir_attr(rq, &d, &ok->dir_attributes);
		nfs3_cookieverf(&d.st, ok->cookieverf);
	} else {
		memset(res, 0, sizeof *res);
		rd_dir_attr(rq, &d, &res->READDIRPLUS3res_u.resfail.dir_attributes);
	}
	res->status = st;
}
