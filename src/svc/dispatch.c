/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "svc/dispatch.h"
#include "rpc/drc.h"
#include "fs/exptable.h"
#include "ops/metrics.h"
#include "io/fiber.h"
#include "ops/stats.h"

#include <stdlib.h>
#include <string.h>

#include "fs/fh.h"
#include "base/log.h"
#include <rpc/rpc.h>
#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nfs3_zc.h"
#include "rpc/recmark.h"

#define REPLY_DEFAULT 8192

void reply_free(struct reply *r)
{
	if (!r)
		return;
	if (r->payload_free)
		r->payload_free(r->payload_mem);
	free(r->hdr);
	free(r);
}

/* A reply with only an RPC header (errors before or instead of a procedure result). */
static struct reply *short_reply(size_t (*enc)(uint8_t *, void *), void *ctx)
{
	struct reply *r = calloc(1, sizeof *r);
	uint8_t *buf = malloc(4 + RPC_REPLY_HDR_MAX + 8);
	if (!r || !buf) {
		free(r);
		free(buf);
		return NULL;
	}
	size_t n = enc(buf + 4, ctx);
	recmark_put(buf, (uint32_t)n);
	r->hdr = buf;
	r->hdr_len = 4 + n;
	return r;
}

struct hdr_ctx {
	uint32_t xid;
	int stat;
	uint32_t low, high;
};

static size_t enc_accepted(uint8_t *b, void *c)
{
	struct hdr_ctx *h = c;
	return rpc_encode_accepted(b, h->xid, (enum rpc_accept)h->stat);
}
static size_t enc_mismatch(uint8_t *b, void *c)
{
	struct hdr_ctx *h = c;
	return rpc_encode_prog_mismatch(b, h->xid, h->low, h->high);
}
static size_t enc_rejected(uint8_t *b, void *c)
{
	struct hdr_ctx *h = c;
	return rpc_encode_rejected(b, h->xid, (enum rpc_verdict)h->stat);
}

/* Every program version served, a program's versions side by side (lowest first): a call for a
 * version in none of them gets PROG_MISMATCH with the program's lowest and highest. */
static const struct prog_desc *const progs[] = {
	&nfs3_program, &mount3_program, &stats_program,
	&nlm1_program, &nlm3_program, &nlm4_program, &nsm1_program,
	&pmap2_program, &rpcb3_program, &rpcb4_program,
};

static const struct prog_desc *find_prog(const struct worker *w, int proto, uint32_t prog,
					 uint32_t vers, bool *known, uint32_t *low, uint32_t *high)
{
	*known = false;
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
		if (progs[i]->prog != prog || (progs[i]->serves && !progs[i]->serves(w)) ||
		    (progs[i]->tcp_only && proto == IPPROTO_UDP))
			continue;
		if (!*known)
			*low = progs[i]->vers;
		*known = true;
		*high = progs[i]->vers;
		if (progs[i]->vers == vers)
			return progs[i];
	}
	return NULL;
}

/* Encode the procedure's result after an accepted-SUCCESS header. */
static struct reply *encode_result(const struct proc_desc *pd, struct nfs_req *rq, void *res)
{
	size_t cap = 4 + RPC_REPLY_HDR_MAX + (rq->reply_hint > REPLY_DEFAULT ? rq->reply_hint : REPLY_DEFAULT);
	struct reply *r = calloc(1, sizeof *r);
	uint8_t *buf = malloc(cap);
	if (!r || !buf)
		goto fail;
	size_t n = rpc_encode_accepted(buf + 4, rq->call->xid, ACCEPT_SUCCESS);
	XDR x;
	xdrmem_create(&x, (char *)buf + 4 + n, (u_int)(cap - 4 - n), XDR_ENCODE);
	if (!pd->encode(&x, res)) {
		if (rq->w && rq->w->srv)
			log_ratelimited(&rq->w->srv->encode_log, LOG_ERR, "%s: reply does not fit in "
					"%zu bytes", pd->name, cap);
		xdr_destroy(&x);
		goto fail;
	}
	n += xdr_getpos(&x);
	xdr_destroy(&x);
	r->hdr = buf;
	r->hdr_len = 4 + n;
	r->payload = rq->payload.data;
	r->payload_len = rq->payload.len;
	r->payload_iov = rq->payload.iov;
	r->payload_iovcnt = rq->payload.iovcnt;
	r->payload_mem = rq->payload.mem;
	r->payload_free = rq->payload.free;
	r->pad = (4 - rq->payload.len % 4) % 4;
	recmark_put(buf, (uint32_t)(n + r->payload_len + r->pad));
	return r;
fail:
	free(r);
	free(buf);
	if (rq->payload.free)
		rq->payload.free(rq->payload.mem);
	return NULL;
}

/* Where a call came from and over what. */
struct xprt {
	const struct sockaddr_storage *peer, *local;
	int proto;
};

/* A call between its decode and its reply. */
struct call {
	const struct proc_desc *pd;
	void *args, *res;
	struct rpc_call hdr;          /* rq.call points here */
	struct nfs_req rq;
};

static void call_free(struct call *cl)
{
	if (!cl)
		return;
	if (cl->args) {
		if (cl->pd->release)
			cl->pd->release(cl->args);
		else
			xdr_free(cl->pd->decode, cl->args);
	}
	fs_call_end(&cl->rq.fs);
	arena_free(&cl->rq.arena);
	free(cl->args);
	free(cl->res);
	free(cl);
}

/* Encode the result of a call whose handler is done, and free the call. */
static struct reply *call_finish(struct call *cl)
{
	struct reply *r = encode_result(cl->pd, &cl->rq, cl->res);
	if (!r) {
		struct hdr_ctx h = {.xid = cl->hdr.xid, .stat = ACCEPT_SYSTEM_ERR};
		r = short_reply(enc_accepted, &h);
	}
	call_free(cl);
	return r;
}

/* The result's status, for the metrics: every NFSv3 result and MOUNT's mountres3 begin with it;
 * -1 for procedures with none (NULL, and MOUNT's others). */
static int64_t status_of(const struct rpc_call *hdr, const struct proc_desc *pd, const void *res)
{
	bool has = hdr->prog == NFS_PROGRAM ? hdr->proc != NFSPROC3_NULL
		   : hdr->prog == MOUNT_PROGRAM && hdr->proc == MOUNTPROC3_MNT;
	if (!has || pd->res_size < sizeof(int32_t))
		return -1;
	int32_t st;
	memcpy(&st, res, sizeof st);
	return st;
}

static void record(struct worker *w, const struct rpc_call *hdr, int64_t status, uint64_t t0)
{
	if (!w || !w->metrics || (hdr->prog != NFS_PROGRAM && hdr->prog != MOUNT_PROGRAM))
		return;
	metrics_record(w->metrics, hdr->prog == NFS_PROGRAM ? MET_NFS : MET_MOUNT, hdr->proc,
		       status, fiber_now_ns() - t0);
}

static void call_proc(struct worker *w, const struct xprt *xp, struct record_mem *rm,
		      const struct rpc_call *hdr, const struct proc_desc *pd, struct reply **out)
{
	struct hdr_ctx h = {.xid = hdr->xid, .stat = ACCEPT_GARBAGE_ARGS};
	uint64_t t0 = fiber_now_ns();
	struct call *cl = calloc(1, sizeof *cl);
	*out = NULL;
	if (!cl)
		return;
	cl->pd = pd;
	cl->hdr = *hdr;
	cl->args = calloc(1, pd->args_size ? pd->args_size : 1);
	cl->res = calloc(1, pd->res_size ? pd->res_size : 1);
	if (!cl->args || !cl->res) {
		call_free(cl);
		return;
	}
	XDR x;
	xdrmem_create(&x, (char *)hdr->args, (u_int)hdr->args_len, XDR_DECODE);
	bool ok = pd->decode(&x, cl->args);
	xdr_destroy(&x);
	if (!ok) {
		log_debug("%s: garbage arguments (xid %08x)", pd->name, hdr->xid);
		*out = short_reply(enc_accepted, &h);
		call_free(cl);
		return;
	}
	cl->rq = (struct nfs_req){.w = w, .call = &cl->hdr, .peer = *xp->peer,
				  .local = xp->local ? *xp->local
						     : (struct sockaddr_storage){.ss_family = AF_UNSPEC},
				  .proto = xp->proto ? xp->proto : IPPROTO_TCP};
	fs_call_begin(&cl->rq.fs, w ? w->fs : NULL, &hdr->cred, &cl->rq.peer, &cl->rq.arena, rm);
	/* May suspend the fiber any number of times (I/O, a busy cache entry, a neighbour). */
	pd->handler(&cl->rq, cl->args, cl->res);
	int64_t status = status_of(hdr, pd, cl->res);
	*out = call_finish(cl);
	record(w, hdr, status, t0);
}

static struct reply *header_reply(const struct worker *w, int proto, const uint8_t *rec,
				  size_t len, struct rpc_call *call, const struct proc_desc **pd)
{
	enum rpc_verdict v = rpc_decode_call(rec, len, call);
	struct hdr_ctx h = {.xid = call->xid};
	*pd = NULL;
	if (v == RPC_DROP)
		return NULL;
	if (v == RPC_REPLY_GARBAGE_ARGS) {
		h.stat = ACCEPT_GARBAGE_ARGS;
		return short_reply(enc_accepted, &h);
	}
	if (v != RPC_OK) {
		h.stat = v;
		return short_reply(enc_rejected, &h);
	}
	bool known;
	const struct prog_desc *p = find_prog(w, proto, call->prog, call->vers, &known, &h.low, &h.high);
	if (!known) {
		h.stat = ACCEPT_PROG_UNAVAIL;
		return short_reply(enc_accepted, &h);
	}
	if (!p)
		return short_reply(enc_mismatch, &h);
	if (call->proc >= p->nprocs || !p->procs[call->proc].handler) {
		h.stat = ACCEPT_PROC_UNAVAIL;
		return short_reply(enc_accepted, &h);
	}
	*pd = &p->procs[call->proc];
	return NULL;
}

/* A reply the duplicate request cache kept: its bytes, record mark included, as they were sent. */
static struct reply *replay(uint8_t *bytes, size_t len)
{
	struct reply *r = calloc(1, sizeof *r);
	if (!r) {
		free(bytes);
		return NULL;
	}
	r->hdr = bytes;
	r->hdr_len = len;
	return r;
}

/* A non-idempotent call: run once per (xid, client, ...) however often the client sends it. */
static void call_once(struct drc *drc, struct worker *w, const struct xprt *x,
		      struct record_mem *rm, const struct rpc_call *call, const struct proc_desc *pd,
		      struct reply **out)
{
	struct drc_key k = {.xid = call->xid, .prog = call->prog, .vers = call->vers,
			    .proc = call->proc, .peer = x->peer, .args = call->args,
			    .args_len = call->args_len};
	struct drc_entry *slot;
	uint8_t *bytes;
	size_t n;
	switch (drc_lookup(drc, &k, &slot, &bytes, &n)) {
	case DRC_INPROG:
		log_debug("%s: retransmission of xid %08x while it runs: dropped", pd->name, call->xid);
		*out = NULL;
		return;
	case DRC_HIT:
		log_debug("%s: retransmission of xid %08x: the original reply", pd->name, call->xid);
		*out = replay(bytes, n);
		return;
	case DRC_MISS:
		break;
	}
	call_proc(w, x, rm, call, pd, out);
	/* These procedures' replies are header and result only; anything else is not kept. */
	const struct reply *r = *out;
	bool keep = r && !r->payload_len && !r->payload_iov;
	drc_done(drc, slot, keep ? r->hdr : NULL, keep ? r->hdr_len : 0);
}

void dispatch_record(struct worker *w, const struct sockaddr_storage *peer,
		     const struct sockaddr_storage *local, int proto, struct record_mem *rm,
		     const uint8_t *rec, size_t len, struct reply **out)
{
	struct rpc_call call;
	const struct proc_desc *pd;
	*out = header_reply(w, proto, rec, len, &call, &pd);
	if (!pd)
		return;
	struct drc *drc = w && w->srv ? w->srv->drc : NULL;
	const struct xprt x = {peer, local, proto};
	if (pd->cache_reply && drc)
		call_once(drc, w, &x, rm, &call, pd, out);
	else
		call_proc(w, &x, rm, &call, pd, out);
}

void dispatch_peek(const uint8_t *rec, size_t avail, struct dispatch_peek *pk)
{
	struct rpc_call call;
	*pk = (struct dispatch_peek){0};
	if (rpc_decode_call(rec, avail, &call) != RPC_OK || call.prog != NFS_PROGRAM ||
	    call.vers != NFS_V3)
		return;
	uint32_t dlen;
	size_t off_in_args;
	if (call.proc == NFSPROC3_WRITE &&
	    write3args_peek(call.args, call.args_len, &pk->file_off, &dlen, &off_in_args)) {
		pk->write = true;
		pk->payload_idx = (size_t)(call.args - rec) + off_in_args;
	} else if (call.proc == NFSPROC3_READ) {
		pk->read = read3args_peek(call.args, call.args_len, &pk->read_count);
	}
}
