/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 READDIR and READDIRPLUS (RFC 1813 sections 3.3.16 and 3.3.17).
 *
 * The cookie of an entry is the d_off getdents64 gives it: the file system's own position of the
 * next entry, stable across calls on ext4 (hash), XFS, btrfs and tmpfs, so a listing resumes with
 * lseek(cookie) however many calls it takes. "." and ".." are listed, as knfsd does.
 *
 * Blocking system calls made here because io_uring has no operation for them:
 *   - getdents64 (reading the entries)
 *   - lseek      (resuming at a cookie)
 * plus name_to_handle_at inside fh_compose (READDIRPLUS handles). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/cred.h"
#include "fs/fs_int.h"
#include "io/ring.h"
#include "nfs3/nfs3.h"

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

static nfsstat3 rd_begin(struct nfs_req *rq, const nfs_fh3 *fh, uint64_t cookie,
			 const char verf[NFS3_COOKIEVERFSIZE], struct rd_dir *d)
{
	memset(d, 0, sizeof *d);
	nfsstat3 st = nfs3_fh_get(rq, fh, &d->o);
	if (st != NFS3_OK)
		return st;
	d->resolved = true;
	int rc = nfs3_stat(rq, d->o.fd, &d->st);
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
static void rd_dir_attr(struct nfs_req *rq, const struct rd_dir *d, post_op_attr *out)
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

/* What READDIRPLUS adds to one entry, found on the pool with the entries themselves. */
struct plus_entry {
	int rc;                  /* 0; 1: the directory itself ("." and the root's ".."); -errno */
	struct statx st;
	struct fh_kernel kh;
};

struct dir_cursor {
	int fd;
	size_t len, pos;
	bool end;    /* getdents64 said the directory has no more entries */
	unsigned delay_ms;   /* fault seam: srv->fault_readdir_delay_ms */
	/* READDIRPLUS: attributes and handle of every entry of buf, in its order */
	bool plus, is_root, connectable;
	int dirfd;               /* the directory's O_PATH descriptor, for the lookups */
	struct plus_entry *pe;
	size_t npe, cur;         /* entries in pe; index of the entry cursor_next last gave */
	alignas(8) char buf[16384];
};

/* Open the directory for reading at cookie. Through the descriptor's /proc link rather than
 * openat(fd, "."), because "." would also need search permission: READDIR needs only read. */
static nfsstat3 cursor_open(struct nfs_req *rq, const struct rd_dir *d, uint64_t cookie,
			    struct dir_cursor *c)
{
	char path[32];
	snprintf(path, sizeof path, "/proc/self/fd/%d", d->o.fd);
	c->len = c->pos = 0;
	c->end = false;
	c->delay_ms = rq->fs->fs->fault_readdir_delay_ms;
	c->fd = io_openat(rq->w->ring, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (c->fd < 0)
		return nfs3_errno(-c->fd);
	if (cookie == 0)
		return NFS3_OK;
	if (cookie <= INT64_MAX && lseek(c->fd, (off_t)cookie, SEEK_SET) >= 0)
		return NFS3_OK;
	io_close(rq->w->ring, c->fd);
	c->fd = -1;
	return NFS3ERR_BAD_COOKIE;
}

static void cursor_close(struct nfs_req *rq, struct dir_cursor *c)
{
	if (c->fd >= 0)
		io_close(rq->w->ring, c->fd);
	c->fd = -1;
	free(c->pe);
	c->pe = NULL;
	c->npe = 0;
}

/* Stat and name every entry of the buffer just read, on the pool thread that read it: one trip
 * per 16 KiB of entries, not two per entry. */
static void plus_fill(struct dir_cursor *c)
{
	size_t n = 0;
	for (size_t pos = 0; pos < c->len; n++)
		pos += ((const struct dirent64 *)(c->buf + pos))->d_reclen;
	struct plus_entry *pe = realloc(c->pe, (n ? n : 1) * sizeof *pe);
	if (!pe) {
		c->npe = 0;      /* every entry then goes without attributes and handle */
		return;
	}
	c->pe = pe;
	c->npe = n;
	size_t k = 0;
	for (size_t pos = 0; pos < c->len; k++) {
		const struct dirent64 *de = (const struct dirent64 *)(c->buf + pos);
		const char *name = de->d_name;
		pos += de->d_reclen;
		if (strcmp(name, ".") == 0 || (c->is_root && strcmp(name, "..") == 0)) {
			pe[k].rc = 1;
			continue;
		}
		if (statx(c->dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME,
			  &pe[k].st) < 0)
			pe[k].rc = -errno;
		else
			pe[k].rc = fh_kernel_at(c->dirfd, name, c->connectable, &pe[k].kh);
	}
}

static long do_getdents(void *arg)
{
	struct dir_cursor *c = arg;
	if (c->delay_ms) {
		/* A slow or stuck file system, for the tests: wherever this runs, it blocks. */
		struct timespec ts = {(time_t)(c->delay_ms / 1000), (long)(c->delay_ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
	}
	ssize_t n = getdents64(c->fd, c->buf, sizeof c->buf);
	if (n < 0)
		return -errno;
	c->len = (size_t)n;
	if (c->plus && n > 0)
		plus_fill(c);
	return n;
}

/* The next entry; NULL at the end of the directory (c->end) or on an error (*err = errno). Each
 * buffer of entries is read on the blocking pool: a huge directory or a stuck file system holds
 * a pool thread, not the ring. */
static const struct dirent64 *cursor_next(struct nfs_req *rq, struct dir_cursor *c, int *err)
{
	if (c->pos >= c->len) {
		if (c->end)
			return NULL;
		long n = cred_offload(rq->fs, do_getdents, c);
		if (n <= 0) {
			if (n < 0)
				*err = (int)-n;
			else
				c->end = true;
			return NULL;
		}
		c->len = (size_t)n;
		c->pos = 0;
		c->cur = (size_t)-1;
	}
	const struct dirent64 *de = (const struct dirent64 *)(c->buf + c->pos);
	c->pos += de->d_reclen;
	c->cur++;
	return de;
}

/* The fileid an entry shows: ".." of the export root is the root itself (nothing above it is
 * exported). */
static uint64_t entry_fileid(const struct rd_dir *d, const struct dirent64 *de)
{
	if (d->is_root && strcmp(de->d_name, "..") == 0)
		return d->st.stx_ino;
	return de->d_ino;
}

/* How a listing ended: eof only when the directory was read to its end; TOOSMALL when not even
 * one entry fitted. */
static nfsstat3 list_end(const struct dir_cursor *c, int err, bool any, bool_t *eof)
{
	if (err)
		return nfs3_errno(err);
	if (!any && !c->end)
		return NFS3ERR_TOOSMALL;
	*eof = c->end;
	return NFS3_OK;
}

/* ---- READDIR ---- */

static nfsstat3 list_names(struct nfs_req *rq, const struct rd_dir *d, struct dir_cursor *c,
			   size_t budget, dirlist3 *out)
{
	entry3 **tail = &out->entries;
	const struct dirent64 *de;
	int err = 0;
	bool any = false;
	while ((de = cursor_next(rq, c, &err))) {
		size_t need = entry_size(strlen(de->d_name));
		if (need > budget)
			break;
		entry3 *e = arena_alloc(&rq->arena, sizeof *e);
		char *name = arena_strdup(&rq->arena, de->d_name);
		if (!e || !name)
			return NFS3ERR_SERVERFAULT;
		*e = (entry3){ .fileid = entry_fileid(d, de), .name = name,
			       .cookie = (uint64_t)de->d_off, .nextentry = NULL };
		*tail = e;
		tail = &e->nextentry;
		budget -= need;
		any = true;
	}
	return list_end(c, err, any, &out->eof);
}

NFS3_HANDLER(readdir)
{
	const READDIR3args *a = argp;
	READDIR3res *res = resp;
	memset(res, 0, sizeof *res);
	rq->reply_hint = (a->count < RD_MAX_COUNT ? a->count : RD_MAX_COUNT) + RD_REPLY_SLACK;
	struct rd_dir d;
	struct dir_cursor c = { .fd = -1 };
	READDIR3resok *ok = &res->READDIR3res_u.resok;
	nfsstat3 st = rd_begin(rq, &a->dir, a->cookie, a->cookieverf, &d);
	if (st == NFS3_OK && a->count < RD_HDR_SIZE)
		st = NFS3ERR_TOOSMALL;
	if (st == NFS3_OK)
		st = cursor_open(rq, &d, a->cookie, &c);
	if (st == NFS3_OK)
		st = list_names(rq, &d, &c, rd_budget(a->count), &ok->reply);
	cursor_close(rq, &c);
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
 * the export's file system, gets neither: the client LOOKUPs it if it cares. */
static void plus_extras(struct nfs_req *rq, const struct rd_dir *d, const struct dir_cursor *c,
			entryplus3 *e)
{
	struct fh fh;
	const struct statx *stp = &d->st;
	const struct fh *fhp = &d->o.fh;
	if (c->cur >= c->npe)
		return;
	const struct plus_entry *pe = &c->pe[c->cur];
	if (pe->rc < 0)
		return;
	if (pe->rc == 0) {
		if (nfs3_off_export(d->o.exp, &pe->st))
			return;
		fh_seal(rq->fs->fs, d->o.exp, &pe->kh, &fh);
		stp = &pe->st;
		fhp = &fh;
	}
	e->name_attributes.attributes_follow = TRUE;
	nfs3_fattr(rq, stp, &e->name_attributes.post_op_attr_u.attributes);
	e->name_handle.handle_follows = TRUE;
	nfs3_fh_out(rq, fhp, &e->name_handle.post_op_fh3_u.handle);
}

/* Encoded size of an entry with what plus_extras gave it. */
static size_t plus_size(const entryplus3 *e)
{
	size_t n = entry_size(strlen(e->name)) + 4 + 4;
	if (e->name_attributes.attributes_follow)
		n += 84;
	if (e->name_handle.handle_follows)
		n += 4 + xdr_pad(e->name_handle.post_op_fh3_u.handle.data.data_len);
	return n;
}

/* Like list_names. dircount is not enforced: like knfsd, maxcount alone bounds the reply (the
 * Linux client sends dircount as a fraction of maxcount, a hint). */
static nfsstat3 list_plus(struct nfs_req *rq, const struct rd_dir *d, struct dir_cursor *c,
			  size_t budget, dirlistplus3 *out)
{
	entryplus3 **tail = &out->entries;
	const struct dirent64 *de;
	int err = 0;
	bool any = false;
	while ((de = cursor_next(rq, c, &err))) {
		/* Cheap test first: no stat or handle for an entry that cannot fit anyway. */
		if (entry_size(strlen(de->d_name)) + 8 > budget)
			break;
		entryplus3 *e = arena_alloc(&rq->arena, sizeof *e);
		char *name = arena_strdup(&rq->arena, de->d_name);
		if (!e || !name)
			return NFS3ERR_SERVERFAULT;
		*e = (entryplus3){ .fileid = entry_fileid(d, de), .name = name,
				   .cookie = (uint64_t)de->d_off, .nextentry = NULL };
		plus_extras(rq, d, c, e);
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

NFS3_HANDLER(readdirplus)
{
	const READDIRPLUS3args *a = argp;
	READDIRPLUS3res *res = resp;
	memset(res, 0, sizeof *res);
	rq->reply_hint = (a->maxcount < RD_MAX_COUNT ? a->maxcount : RD_MAX_COUNT) + RD_REPLY_SLACK;
	struct rd_dir d;
	struct dir_cursor c = { .fd = -1 };
	READDIRPLUS3resok *ok = &res->READDIRPLUS3res_u.resok;
	nfsstat3 st = rd_begin(rq, &a->dir, a->cookie, a->cookieverf, &d);
	if (st == NFS3_OK && a->maxcount < RD_HDR_SIZE)
		st = NFS3ERR_TOOSMALL;
	if (st == NFS3_OK) {
		st = cursor_open(rq, &d, a->cookie, &c);
		c.plus = true;
		c.is_root = d.is_root;
		c.connectable = d.o.exp->subtree_check;
		c.dirfd = d.o.fd;
	}
	if (st == NFS3_OK)
		st = list_plus(rq, &d, &c, rd_budget(a->maxcount), &ok->reply);
	cursor_close(rq, &c);
	if (st == NFS3_OK) {
		rd_dir_attr(rq, &d, &ok->dir_attributes);
		nfs3_cookieverf(&d.st, ok->cookieverf);
	} else {
		memset(res, 0, sizeof *res);
		rd_dir_attr(rq, &d, &res->READDIRPLUS3res_u.resfail.dir_attributes);
	}
	res->status = st;
}
