/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 calls hand-encoded over rawrpc. See rawnfs.h. No cmocka here: the file is part of the
 * library nfsduc_rawrpc, which the bench's GSS load generator links too. */
#include "rawnfs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NFS_PROG 100003
#define MOUNT_PROG 100005
#define STATS_PROG 0x20004e55u
#define FATTR3_LEN 84             /* type .. ctime, fixed size */
#define WCC_ATTR_LEN 24           /* size, mtime, ctime */
#define RN_CHUNK 4096             /* WRITE payload that fits struct xb with its header */

static void user_call(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
		      uint32_t uid, uint32_t gid)
{
	struct xb cred = {0};
	xb_auth_sys(&cred, uid, gid);
	b->len = 0;
	xb_call(b, xid, 2, prog, vers, proc, RAW_AUTH_SYS, &cred);
}

static void root_call(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	user_call(b, xid, prog, vers, proc, 0, 0);
}

static void put_fh(struct xb *b, const struct rn_fh *fh)
{
	xb_opaque(b, fh->data, fh->len);
}

void rn_enc_mnt(struct xb *b, uint32_t xid, const char *path)
{
	rn_enc_mnt_as(b, xid, path, 0, 0);
}

void rn_enc_create(struct xb *b, uint32_t xid, const struct rn_fh *dir, const char *name)
{
	rn_enc_create_how(b, xid, dir, name, RN_UNCHECKED);
}

void rn_enc_create_how(struct xb *b, uint32_t xid, const struct rn_fh *dir, const char *name,
                       int how)
{
	root_call(b, xid, NFS_PROG, 3, 8);
	put_fh(b, dir);
	xb_string(b, name);
	xb_u32(b, (uint32_t)how);
	for (int i = 0; i < 6; i++)
		xb_u32(b, 0);         /* sattr3: nothing set */
}

void rn_enc_write(struct xb *b, uint32_t xid, const struct rn_fh *fh, uint64_t off, const void *data,
                  uint32_t len, int stable)
{
	root_call(b, xid, NFS_PROG, 3, 7);
	put_fh(b, fh);
	xb_u64(b, off);
	xb_u32(b, len);
	xb_u32(b, (uint32_t)stable);
	xb_opaque(b, data, len);
}

void rn_enc_read(struct xb *b, uint32_t xid, const struct rn_fh *fh, uint64_t off, uint32_t count)
{
	rn_enc_read_as(b, xid, fh, off, count, 0, 0);
}

void rn_enc_getattr(struct xb *b, uint32_t xid, const struct rn_fh *fh)
{
	rn_enc_getattr_as(b, xid, fh, 0, 0);
}

void rn_enc_readdir(struct xb *b, uint32_t xid, const struct rn_fh *dir, uint32_t count)
{
	static const uint8_t zero_verf[8];
	root_call(b, xid, NFS_PROG, 3, 16);
	put_fh(b, dir);
	xb_u64(b, 0);                 /* cookie */
	xb_bytes(b, zero_verf, 8);
	xb_u32(b, count);
}

void rn_enc_getattr_as(struct xb *b, uint32_t xid, const struct rn_fh *fh, uint32_t uid, uint32_t gid)
{
	user_call(b, xid, NFS_PROG, 3, 1, uid, gid);
	put_fh(b, fh);
}

/* A call whose arguments are one diropargs3 (LOOKUP, REMOVE, ...). */
static void dirop_call(struct xb *b, uint32_t xid, uint32_t proc, const struct rn_fh *dir,
		       const char *name, uint32_t uid, uint32_t gid)
{
	user_call(b, xid, NFS_PROG, 3, proc, uid, gid);
	put_fh(b, dir);
	xb_string(b, name);
}

void rn_enc_lookup_as(struct xb *b, uint32_t xid, const struct rn_fh *dir, const char *name,
                      uint32_t uid, uint32_t gid)
{
	dirop_call(b, xid, 3, dir, name, uid, gid);
}

void rn_enc_read_as(struct xb *b, uint32_t xid, const struct rn_fh *fh, uint64_t off, uint32_t count,
                    uint32_t uid, uint32_t gid)
{
	user_call(b, xid, NFS_PROG, 3, 6, uid, gid);
	put_fh(b, fh);
	xb_u64(b, off);
	xb_u32(b, count);
}

void rn_enc_remove_as(struct xb *b, uint32_t xid, const struct rn_fh *dir, const char *name,
                      uint32_t uid, uint32_t gid)
{
	dirop_call(b, xid, 12, dir, name, uid, gid);
}

void rn_enc_mnt_as(struct xb *b, uint32_t xid, const char *path, uint32_t uid, uint32_t gid)
{
	user_call(b, xid, MOUNT_PROG, 3, 1, uid, gid);
	xb_string(b, path);
}

void rn_enc_fsinfo(struct xb *b, uint32_t xid, const struct rn_fh *fh)
{
	root_call(b, xid, NFS_PROG, 3, 19);
	put_fh(b, fh);
}

void rn_enc_commit(struct xb *b, uint32_t xid, const struct rn_fh *fh, uint64_t off, uint32_t count)
{
	root_call(b, xid, NFS_PROG, 3, 21);
	put_fh(b, fh);
	xb_u64(b, off);
	xb_u32(b, count);
}

/* ---- decoding ---- */

struct rd {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static uint32_t rd_u32(struct rd *d)
{
	if (d->left < 4) {
		d->bad = true;
		return 0;
	}
	uint32_t v = get_u32(d->p);
	d->p += 4;
	d->left -= 4;
	return v;
}

static uint64_t rd_u64(struct rd *d)
{
	uint64_t hi = rd_u32(d);
	return hi << 32 | rd_u32(d);
}

static void rd_skip(struct rd *d, size_t n)
{
	if (d->left < n) {
		d->bad = true;
		return;
	}
	d->p += n;
	d->left -= n;
}

static const uint8_t *rd_opaque(struct rd *d, uint32_t *len)
{
	*len = rd_u32(d);
	const uint8_t *p = d->p;
	rd_skip(d, (*len + 3u) & ~3u);
	return d->bad ? NULL : p;
}

static void rd_fh(struct rd *d, struct rn_fh *fh)
{
	uint32_t n;
	const uint8_t *p = rd_opaque(d, &n);
	if (!p || n > sizeof fh->data) {
		d->bad = true;
		return;
	}
	fh->len = n;
	memcpy(fh->data, p, n);
}

static void rd_post_op(struct rd *d, uint64_t *size)
{
	if (rd_u32(d)) {
		rd_skip(d, 20);           /* type, mode, nlink, uid, gid */
		uint64_t s = rd_u64(d);
		if (size)
			*size = s;
		rd_skip(d, FATTR3_LEN - 28);
	}
}

static void rd_wcc(struct rd *d)
{
	if (rd_u32(d))
		rd_skip(d, WCC_ATTR_LEN);
	rd_post_op(d, NULL);
}

static struct rd body(const struct raw_reply *r)
{
	struct rd d = {r->body, r->body_len, r->reply_stat != 0 || r->accept_stat != 0};
	return d;
}

static int done(const struct rd *d, uint32_t status)
{
	return d->bad ? -1 : (int)status;
}

int rn_dec_mnt(const struct raw_reply *r, struct rn_fh *fh)
{
	struct rd d = body(r);
	uint32_t st = rd_u32(&d);
	if (st == 0)
		rd_fh(&d, fh);
	return done(&d, st);
}

int rn_dec_create(const struct raw_reply *r, struct rn_fh *fh)
{
	struct rd d = body(r);
	uint32_t st = rd_u32(&d);
	if (st == 0) {
		if (!rd_u32(&d))
			d.bad = true;     /* we need the handle */
		else
			rd_fh(&d, fh);
	}
	return done(&d, st);
}

int rn_dec_lookup(const struct raw_reply *r, struct rn_fh *fh)
{
	struct rd d = body(r);
	uint32_t st = rd_u32(&d);
	if (st == 0)
		rd_fh(&d, fh);
	return done(&d, st);
}

int rn_dec_write(const struct raw_reply *r, uint32_t *count, uint32_t *committed)
{
	uint8_t verf[8];
	return rn_dec_write_verf(r, count, committed, verf);
}

/* The write verifier that ends WRITE's and COMMIT's results, when status is NFS3_OK. */
static void rd_verf(struct rd *d, uint32_t status, uint8_t verf[8])
{
	if (status == 0 && !d->bad && d->left >= 8)
		memcpy(verf, d->p, 8);
	if (status == 0)
		rd_skip(d, 8);
}

int rn_dec_write_verf(const struct raw_reply *r, uint32_t *count, uint32_t *committed,
                      uint8_t verf[8])
{
	struct rd d = body(r);
	uint32_t st = rd_u32(&d);
	rd_wcc(&d);
	if (st == 0) {
		*count = rd_u32(&d);
		*committed = rd_u32(&d);
	}
	rd_verf(&d, st, verf);
	return done(&d, st);
}

int rn_dec_read(const struct raw_reply *r, const uint8_t **data, uint32_t *count, bool *eof)
{
	struct rd d = body(r);
	uint32_t st = rd_u32(&d);
	rd_post_op(&d, NULL);
	if (st == 0) {
		*count = rd_u32(&d);
		*eof = rd_u32(&d) != 0;
		uint32_t n;
		*data = rd_opaque(&d, &n);
		if (n != *count)
			d.bad = true;
	}
	return done(&d, st);
}

int rn_dec_getattr(const struct raw_reply *r, uint64_t *size)
{
	struct rd d = body(r);
	uint32_t st = rd_u32(&d);
	if (st == 0) {
		rd_skip(&d, 20);
		*size = rd_u64(&d);
		rd_skip(&d, FATTR3_LEN - 28);
	}
	return done(&d, st);
}

int rn_dec_getattr_ids(const struct raw_reply *r, uint32_t *uid, uint32_t *gid)
{
	struct rd d = body(r);
	uint32_t st = rd_u32(&d);
	if (st == 0) {
		rd_skip(&d, 12);      /* type, mode, nlink */
		*uid = rd_u32(&d);
		*gid = rd_u32(&d);
		rd_skip(&d, FATTR3_LEN - 20);
	}
	return done(&d, st);
}

int rn_dec_commit(const struct raw_reply *r)
{
	uint8_t verf[8];
	return rn_dec_commit_verf(r, verf);
}

int rn_dec_commit_verf(const struct raw_reply *r, uint8_t verf[8])
{
	struct rd d = body(r);
	uint32_t st = rd_u32(&d);
	rd_wcc(&d);
	rd_verf(&d, st, verf);
	return done(&d, st);
}

int rn_dec_fsinfo(const struct raw_reply *r, uint32_t *rtmax, uint32_t *wtmax)
{
	struct rd d = body(r);
	uint32_t st = rd_u32(&d);
	rd_post_op(&d, NULL);
	if (st == 0) {
		*rtmax = rd_u32(&d);
		rd_skip(&d, 8);           /* rtpref, rtmult */
		*wtmax = rd_u32(&d);
		rd_skip(&d, 32);          /* wtpref .. dtpref, maxfilesize, time_delta, properties */
	}
	return done(&d, st);
}

int rn_dec_status(const struct raw_reply *r)
{
	struct rd d = body(r);
	uint32_t st = rd_u32(&d);
	return done(&d, st);
}

/* ---- one call at a time ---- */

static uint32_t next_xid = 0x5a000000;
#define REPLY_CAP (2u << 20)

int rn_exchange(int fd, const struct xb *b, uint8_t *buf, size_t cap, struct raw_reply *r)
{
	return raw_call(fd, b, buf, cap, r);
}

static int call(int fd, const struct xb *b, uint8_t **buf, struct raw_reply *r)
{
	*buf = malloc(REPLY_CAP);
	if (!*buf || raw_call(fd, b, *buf, REPLY_CAP, r) < 0)
		return -1;
	return 0;
}

int rn_mnt(int fd, const char *path, struct rn_fh *fh)
{
	struct xb *b = calloc(1, sizeof *b);
	uint8_t *buf = NULL;
	struct raw_reply r;
	int st = -1;
	if (b) {
		rn_enc_mnt(b, next_xid++, path);
		if (call(fd, b, &buf, &r) == 0)
			st = rn_dec_mnt(&r, fh);
	}
	free(buf);
	free(b);
	return st;
}

int rn_create(int fd, const struct rn_fh *dir, const char *name, struct rn_fh *fh)
{
	struct xb *b = calloc(1, sizeof *b);
	uint8_t *buf = NULL;
	struct raw_reply r;
	int st = -1;
	if (b) {
		rn_enc_create(b, next_xid++, dir, name);
		if (call(fd, b, &buf, &r) == 0)
			st = rn_dec_create(&r, fh);
	}
	free(buf);
	free(b);
	return st;
}

int rn_lookup(int fd, const struct rn_fh *dir, const char *name, struct rn_fh *fh)
{
	struct xb *b = calloc(1, sizeof *b);
	uint8_t *buf = NULL;
	struct raw_reply r;
	int st = -1;
	if (b) {
		rn_enc_lookup_as(b, next_xid++, dir, name, 0, 0);
		if (call(fd, b, &buf, &r) == 0)
			st = rn_dec_lookup(&r, fh);
	}
	free(buf);
	free(b);
	return st;
}

static int write_one(int fd, const struct rn_fh *fh, uint64_t off, const void *data, uint32_t len,
		     int stable)
{
	struct xb *b = calloc(1, sizeof *b);
	uint8_t *buf = NULL;
	struct raw_reply r;
	int st = -1;
	uint32_t count = 0, committed = 0;
	if (b) {
		rn_enc_write(b, next_xid++, fh, off, data, len, stable);
		if (call(fd, b, &buf, &r) == 0)
			st = rn_dec_write(&r, &count, &committed);
		if (st == 0 && (count != len || (int)committed < stable))
			st = -1;
	}
	free(buf);
	free(b);
	return st;
}

/* In pieces that fit a call buffer. */
int rn_write(int fd, const struct rn_fh *fh, uint64_t off, const void *data, uint32_t len, int stable)
{
	for (uint32_t done = 0; done < len;) {
		uint32_t n = len - done < RN_CHUNK ? len - done : RN_CHUNK;
		int st = write_one(fd, fh, off + done, (const uint8_t *)data + done, n, stable);
		if (st != 0)
			return st;
		done += n;
	}
	return 0;
}

int rn_commit(int fd, const struct rn_fh *fh)
{
	struct xb *b = calloc(1, sizeof *b);
	uint8_t *buf = NULL;
	struct raw_reply r;
	int st = -1;
	if (b) {
		rn_enc_commit(b, next_xid++, fh, 0, 0);
		if (call(fd, b, &buf, &r) == 0)
			st = rn_dec_commit(&r);
	}
	free(buf);
	free(b);
	return st;
}

static int read_one(int fd, const struct rn_fh *fh, uint64_t off, void *out, uint32_t len)
{
	struct xb *b = calloc(1, sizeof *b);
	uint8_t *buf = NULL;
	struct raw_reply r;
	int st = -1;
	const uint8_t *data;
	uint32_t count = 0;
	bool eof;
	if (b) {
		rn_enc_read(b, next_xid++, fh, off, len);
		if (call(fd, b, &buf, &r) == 0)
			st = rn_dec_read(&r, &data, &count, &eof);
		if (st == 0 && count != len)
			st = -1;
		if (st == 0)
			memcpy(out, data, len);
	}
	free(buf);
	free(b);
	return st;
}

int rn_read(int fd, const struct rn_fh *fh, uint64_t off, void *out, uint32_t len)
{
	for (uint32_t done = 0; done < len;) {
		uint32_t n = len - done < (1u << 20) ? len - done : (1u << 20);
		int st = read_one(fd, fh, off + done, (uint8_t *)out + done, n);
		if (st != 0)
			return st;
		done += n;
	}
	return 0;
}

uint64_t rn_counter(uint16_t port, const char *name)
{
	uint64_t v = UINT64_MAX;
	int fd = raw_connect(port, NULL);
	struct xb *b = calloc(1, sizeof *b);
	uint8_t *buf = NULL;
	struct raw_reply r;
	if (fd >= 0 && b) {
		root_call(b, next_xid++, STATS_PROG, 1, 1);
		if (call(fd, b, &buf, &r) == 0) {
			struct rd d = body(&r);
			uint32_t n = rd_u32(&d);
			for (uint32_t i = 0; i < n && !d.bad; i++) {
				uint32_t len;
				const uint8_t *s = rd_opaque(&d, &len);
				uint64_t val = rd_u64(&d);
				if (s && len == strlen(name) && memcmp(s, name, len) == 0)
					v = val;
			}
		}
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	free(b);
	return v;
}
