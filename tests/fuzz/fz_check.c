/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reply checks: the RPC layer by hand (a few words, and every one must be right), results with
 * the rpcgen decoders a client would use. */
#include "fz_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "mount3_prot.h"
#include "nfs3_prot.h"
#include "nfs3_zc.h"
#include "rpc/oncrpc.h"
#include "rpc/recmark.h"

bool fz_trace;

void fz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s:%d: reply check failed: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

struct rd {
	const uint8_t *p, *end;
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t take(struct rd *r, const char *what)
{
	FZ_CHECK(r->end - r->p >= 4, "reply ends before its %s", what);
	uint32_t v = be32(r->p);
	r->p += 4;
	return v;
}

/* A decoded reply header (RFC 5531 section 9). */
struct hdr {
	uint32_t xid, stat;           /* reply_stat: 0 accepted, 1 denied */
	uint32_t accept, reject, auth, low, high;
	const uint8_t *body;          /* result of an accepted SUCCESS */
	size_t body_len;
};

static void at_end(const struct rd *r, const char *what)
{
	FZ_CHECK(r->p == r->end, "%zu bytes after a %s reply", (size_t)(r->end - r->p), what);
}

static void parse_accepted(struct rd *r, struct hdr *h)
{
	uint32_t vflavor = take(r, "verifier");
	uint32_t vlen = take(r, "verifier length");
	/* The server answers with AUTH_NONE, whatever the call's verifier. */
	FZ_CHECK(vflavor == RPC_AUTH_NONE && vlen == 0, "verifier %u/%u", vflavor, vlen);
	h->accept = take(r, "accept_stat");
	switch (h->accept) {
	case ACCEPT_SUCCESS:
		h->body = r->p;
		h->body_len = (size_t)(r->end - r->p);
		return;
	case ACCEPT_PROG_MISMATCH:
		h->low = take(r, "low version");
		h->high = take(r, "high version");
		break;
	case ACCEPT_PROG_UNAVAIL: case ACCEPT_PROC_UNAVAIL: case ACCEPT_GARBAGE_ARGS:
	case ACCEPT_SYSTEM_ERR:
		break;
	default:
		FZ_FAIL("accept_stat %u", h->accept);
	}
	at_end(r, "short accepted");
}

static void parse_denied(struct rd *r, struct hdr *h)
{
	h->reject = take(r, "reject_stat");
	if (h->reject == 0) {           /* RPC_MISMATCH */
		h->low = take(r, "low version");
		h->high = take(r, "high version");
	} else {
		FZ_CHECK(h->reject == 1, "reject_stat %u", h->reject);
		h->auth = take(r, "auth_stat");
	}
	at_end(r, "denied");
}

/* One record, last fragment, its length what follows the mark. */
static void parse_reply(const uint8_t *rep, size_t rlen, struct hdr *h)
{
	memset(h, 0, sizeof *h);
	FZ_CHECK(rlen >= 4, "reply of %zu bytes", rlen);
	uint32_t m = recmark_get(rep);
	FZ_CHECK(recmark_is_last(m), "reply not marked as the last fragment");
	FZ_CHECK(recmark_len(m) == rlen - 4, "record mark says %u bytes, reply has %zu", recmark_len(m),
		 rlen - 4);
	struct rd r = {rep + 4, rep + rlen};
	h->xid = take(&r, "xid");
	FZ_CHECK(take(&r, "msg_type") == 1, "not a REPLY");
	h->stat = take(&r, "reply_stat");
	if (h->stat == 0)
		parse_accepted(&r, h);
	else if (h->stat == 1)
		parse_denied(&r, h);
	else
		FZ_FAIL("reply_stat %u", h->stat);
}

void fz_check_reply_shape(const uint8_t *rep, size_t rlen)
{
	struct hdr h;
	parse_reply(rep, rlen, &h);
}

static const struct prog_desc *find_prog(uint32_t prog)
{
	static const struct prog_desc *const progs[] = {&nfs3_program, &mount3_program, &stats_program};
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
		if (progs[i]->prog == prog)
			return progs[i];
	return NULL;
}

static bool nfsstat3_valid(uint32_t s)
{
	static const uint32_t ok[] = {0, 1, 2, 5, 6, 13, 17, 18, 19, 20, 21, 22, 27, 28, 30, 31, 63,
				      66, 69, 70, 71, 10001, 10002, 10003, 10004, 10005, 10006, 10007,
				      10008};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (s == ok[i])
			return true;
	return false;
}

static bool mountstat3_valid(uint32_t s)
{
	static const uint32_t ok[] = {0, 1, 2, 5, 13, 20, 22, 63, 10004, 10006};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (s == ok[i])
			return true;
	return false;
}

/* Decode the call's arguments as the server's table says: whether they decode. */
static bool args_decode(const struct proc_desc *pd, const struct rpc_call *c, void *args)
{
	XDR x;
	xdrmem_create(&x, (char *)c->args, (u_int)c->args_len, XDR_DECODE);
	bool ok = pd->decode(&x, args);
	xdr_destroy(&x);
	return ok;
}

static void args_release(const struct proc_desc *pd, void *args)
{
	if (pd->release)
		pd->release(args);
	else
		xdr_free(pd->decode, args);
}

static void keep_fh(const nfs_fh3 *f, struct fz_fh *fh)
{
	fh->len = f->data.data_len <= sizeof fh->data ? f->data.data_len : 0;
	memcpy(fh->data, f->data.data_val, fh->len);
}

/* A handle in an NFSv3 result: LOOKUP's object, or the new object of CREATE & co. */
static bool nfs3_new_handle(uint32_t proc, const void *res, struct fz_fh *fh)
{
	const post_op_fh3 *p = NULL;
	switch (proc) {
	case NFSPROC3_LOOKUP: {
		const LOOKUP3res *r = res;
		if (r->status != NFS3_OK)
			return false;
		keep_fh(&r->LOOKUP3res_u.resok.object, fh);
		return fh->len > 0;
	}
	case NFSPROC3_CREATE: p = &((const CREATE3res *)res)->CREATE3res_u.resok.obj; break;
	case NFSPROC3_MKDIR: p = &((const MKDIR3res *)res)->MKDIR3res_u.resok.obj; break;
	case NFSPROC3_SYMLINK: p = &((const SYMLINK3res *)res)->SYMLINK3res_u.resok.obj; break;
	case NFSPROC3_MKNOD: p = &((const MKNOD3res *)res)->MKNOD3res_u.resok.obj; break;
	default: return false;
	}
	if (*(const nfsstat3 *)res != NFS3_OK || !p->handle_follows)
		return false;
	keep_fh(&p->post_op_fh3_u.handle, fh);
	return fh->len > 0;
}

/* What the result says against what was asked: READ and WRITE never do more than the count. */
static void nfs3_semantics(const struct rpc_call *c, uint32_t proc, const void *res)
{
	if (proc == NFSPROC3_READ && ((const READ3res *)res)->status == NFS3_OK) {
		const READ3resok *ok = &((const READ3res *)res)->READ3res_u.resok;
		READ3args a;
		memset(&a, 0, sizeof a);
		XDR x;
		xdrmem_create(&x, (char *)c->args, (u_int)c->args_len, XDR_DECODE);
		bool_t dec = xdr_READ3args(&x, &a);
		xdr_destroy(&x);
		FZ_CHECK(dec, "READ answered but its arguments do not decode");
		FZ_CHECK(ok->count == ok->data.data_len, "READ count %u, data %u", ok->count,
			 ok->data.data_len);
		FZ_CHECK(ok->count <= a.count, "READ of %u bytes returned %u", a.count, ok->count);
		xdr_free((xdrproc_t)xdr_READ3args, (char *)&a);
	}
	if (proc == NFSPROC3_WRITE && ((const WRITE3res *)res)->status == NFS3_OK) {
		uint64_t off;
		uint32_t dlen;
		size_t at;
		FZ_CHECK(write3args_peek(c->args, c->args_len, &off, &dlen, &at), "WRITE args");
		uint32_t n = ((const WRITE3res *)res)->WRITE3res_u.resok.count;
		FZ_CHECK(n <= dlen, "WRITE of %u bytes says %u written", dlen, n);
	}
}

/* An accepted SUCCESS result of NFSv3 or MOUNT must decode to exactly its bytes. */
static bool check_result(const struct rpc_call *c, const struct proc_desc *pd, const struct hdr *h,
			 bool replayed, struct fz_fh *fh)
{
	bool nfs = c->prog == NFS_PROGRAM, mnt = c->prog == MOUNT_PROGRAM;
	if (!nfs && !mnt)
		return false;      /* the stats program: no client decoder to hold it to */
	xdrproc_t dec = nfs && c->proc == NFSPROC3_READ ? (xdrproc_t)xdr_READ3res : pd->encode;
	size_t size = nfs && c->proc == NFSPROC3_READ ? sizeof(READ3res) : pd->res_size;
	void *res = calloc(1, size ? size : 1);
	/* The body's own copy, of its exact size: a decoder reading past it is caught by ASan. */
	char *body = malloc(h->body_len ? h->body_len : 1);
	FZ_CHECK(res && body, "out of memory");
	memcpy(body, h->body, h->body_len);
	XDR x;
	xdrmem_create(&x, body, (u_int)h->body_len, XDR_DECODE);
	bool ok = dec(&x, res);
	u_int pos = xdr_getpos(&x);
	xdr_destroy(&x);
	FZ_CHECK(ok, "%s result of %zu bytes does not decode", pd->name, h->body_len);
	FZ_CHECK(pos == h->body_len, "%s result: %u of %zu bytes decoded", pd->name, pos, h->body_len);
	bool got = false;
	if (fz_trace)
		fprintf(stderr, "fz: %s xid %08x: status %u\n", pd->name, c->xid,
			size ? *(const uint32_t *)res : 0);
	if (size) {
		uint32_t st = *(const uint32_t *)res;
		if (nfs) {
			FZ_CHECK(nfsstat3_valid(st), "%s status %u is no nfsstat3", pd->name, st);
			if (!replayed)
				nfs3_semantics(c, c->proc, res);
			got = nfs3_new_handle(c->proc, res, fh);
		} else if (c->proc == MOUNTPROC3_MNT) {
			const mountres3 *m = res;
			FZ_CHECK(mountstat3_valid(st), "MNT status %u is no mountstat3", st);
			if (m->fhs_status == MNT3_OK) {
				const fhandle3 *f = &m->mountres3_u.mountinfo.fhandle;
				fh->len = f->fhandle3_len <= sizeof fh->data ? f->fhandle3_len : 0;
				memcpy(fh->data, f->fhandle3_val, fh->len);
				got = fh->len > 0;
			}
		}
	}
	xdr_free(dec, res);
	free(res);
	free(body);
	return got;
}

/* RPC_OK: the program, version and procedure decide, then the arguments. */
static bool check_dispatched(const struct rpc_call *c, const struct hdr *h, bool replayed,
			     struct fz_fh *fh)
{
	FZ_CHECK(h->stat == 0, "call with a good header denied");
	const struct prog_desc *p = find_prog(c->prog);
	if (!p) {
		FZ_CHECK(h->accept == ACCEPT_PROG_UNAVAIL, "program %u: accept_stat %u", c->prog, h->accept);
		return false;
	}
	if (c->vers != p->vers) {
		FZ_CHECK(h->accept == ACCEPT_PROG_MISMATCH && h->low == p->vers && h->high == p->vers,
			 "program %u version %u: accept_stat %u", c->prog, c->vers, h->accept);
		return false;
	}
	if (c->proc >= p->nprocs || !p->procs[c->proc].handler) {
		FZ_CHECK(h->accept == ACCEPT_PROC_UNAVAIL, "procedure %u: accept_stat %u", c->proc, h->accept);
		return false;
	}
	const struct proc_desc *pd = &p->procs[c->proc];
	FZ_CHECK(h->accept != ACCEPT_SYSTEM_ERR, "%s: SYSTEM_ERR (reply did not encode)", pd->name);
	void *args = calloc(1, pd->args_size ? pd->args_size : 1);
	FZ_CHECK(args, "out of memory");
	bool decodes = args_decode(pd, c, args);
	args_release(pd, args);
	free(args);
	/* A reply from the duplicate request cache answered an earlier call with the same key,
	 * whose arguments may differ past what the key covers. */
	FZ_CHECK(replayed || decodes == (h->accept == ACCEPT_SUCCESS), "%s: arguments %s, accept_stat %u",
		 pd->name, decodes ? "decode" : "do not decode", h->accept);
	return h->accept == ACCEPT_SUCCESS && check_result(c, pd, h, replayed, fh);
}

bool fz_check_reply(const uint8_t *rec, size_t len, const uint8_t *rep, size_t rlen, bool replayed,
		    struct fz_fh *fh)
{
	struct rpc_call c;
	enum rpc_verdict v = rpc_decode_call(rec, len, &c);
	if (v == RPC_DROP) {
		FZ_CHECK(!rep, "a reply to a record that is no call");
		return false;
	}
	FZ_CHECK(rep, "no reply to call xid %08x (verdict %d)", c.xid, (int)v);
	struct hdr h;
	parse_reply(rep, rlen, &h);
	FZ_CHECK(h.xid == c.xid, "reply xid %08x to call %08x", h.xid, c.xid);
	if (fz_trace)
		fprintf(stderr, "fz: xid %08x prog %u vers %u proc %u: verdict %d, reply_stat %u, "
			"accept_stat %u%s\n", c.xid, c.prog, c.vers, c.proc, (int)v, h.stat, h.accept,
			replayed ? " (replayed)" : "");
	switch (v) {
	case RPC_REPLY_RPC_MISMATCH:
		FZ_CHECK(h.stat == 1 && h.reject == 0 && h.low == 2 && h.high == 2, "RPC_MISMATCH expected");
		return false;
	case RPC_REPLY_AUTH_BADCRED:
	case RPC_REPLY_AUTH_TOOWEAK:
		FZ_CHECK(h.stat == 1 && h.reject == 1 && h.auth == (v == RPC_REPLY_AUTH_BADCRED ? 1u : 5u),
			 "AUTH_ERROR %s expected", v == RPC_REPLY_AUTH_BADCRED ? "BADCRED" : "TOOWEAK");
		return false;
	case RPC_REPLY_GARBAGE_ARGS:
		FZ_CHECK(h.stat == 0 && h.accept == ACCEPT_GARBAGE_ARGS, "GARBAGE_ARGS expected");
		return false;
	case RPC_OK:
		return check_dispatched(&c, &h, replayed, fh);
	case RPC_DROP:
		break;
	}
	return false;
}
