/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dispatcher: a call's header decoded, its program found among those registered, its
 * arguments decoded, its handler run, its result encoded; the duplicate request cache consulted
 * for the procedures whose replies it keeps. */
#include "svc/dispatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bufstash.h"
#include "base/log.h"
#include "io/fiber.h"
#include "rpc/drc.h"
#include "rpc/recmark.h"
#include "svc/gss_call.h"
#include "svc/reply.h"
#include "svc/seen.h"
#include "svc/worker.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nfs3_zc.h"

#define REPLY_DEFAULT 8192

void reply_free(struct reply *r)
{
	if (!r)
		return;
	if (r->payload_free)
		r->payload_free(r->payload_mem);
	bufstash_free(r->hdr);
	free(r);
}

int reply_body_iov(const struct reply *r, struct iovec *v)
{
	static const uint8_t zeros[4];
	int n = 0;
	if (r->payload_iov) {
		memcpy(v, r->payload_iov, (size_t)r->payload_iovcnt * sizeof *v);
		n = r->payload_iovcnt;
	} else if (r->payload_len) {
		v[n++] = (struct iovec){r->payload, r->payload_len};
	}
	if (r->pad)
		v[n++] = (struct iovec){(void *)zeros, r->pad};
	return n;
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

int dispatch_add(struct svc *svc, const struct prog_desc *p, void *ctx)
{
	if (svc->nprogs == SVC_PROGS_MAX)
		return -ENOSPC;
	svc->progs[svc->nprogs++] = (struct svc_prog){p, ctx};
	return 0;
}

/* Every program version served, a program's versions side by side (lowest first): a call for a
 * version in none of them gets PROG_MISMATCH with the program's lowest and highest. */
static const struct svc_prog *find_prog(const struct svc *svc, int proto, uint32_t prog,
					uint32_t vers, bool *known, uint32_t *low, uint32_t *high)
{
	*known = false;
	for (size_t i = 0; svc && i < svc->nprogs; i++) {
		const struct prog_desc *p = svc->progs[i].desc;
		if (p->prog != prog || (p->tcp_only && proto == IPPROTO_UDP))
			continue;
		if (!*known)
			*low = p->vers;
		*known = true;
		*high = p->vers;
		if (p->vers == vers)
			return &svc->progs[i];
	}
	return NULL;
}

/* Encode the procedure's result after an accepted-SUCCESS header. */
static struct reply *encode_result(const struct worker *w, const struct proc_desc *pd,
				   struct svc_call *rq, void *res)
{
	size_t cap = 4 + RPC_REPLY_HDR_MAX + (rq->reply_hint > REPLY_DEFAULT ? rq->reply_hint : REPLY_DEFAULT);
	struct reply *r = calloc(1, sizeof *r);
	/* Warm from the ring's stash: from the allocator, with hundreds of replies in flight, the
	 * first word written was a page fault on memory it had given back meanwhile (5% of the
	 * daemon's time on 47008-byte WRITEs from 128 writers x 4). */
	uint8_t *buf = bufstash_alloc(_Alignof(max_align_t), cap);
	if (!r || !buf)
		goto fail;
	size_t n = rpc_encode_accepted(buf + 4, rq->call->xid, ACCEPT_SUCCESS);
	XDR x;
	xdrmem_create(&x, (char *)buf + 4 + n, (u_int)(cap - 4 - n), XDR_ENCODE);
	if (!pd->encode(&x, res)) {
		if (w)
			log_ratelimited(&w->srv->encode_log, LOG_ERR, "%s: reply does not fit in "
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
	bufstash_free(buf);
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
	struct worker *w;
	const struct proc_desc *pd;
	void *args, *res;
	struct rpc_call hdr;          /* rq.call points here */
	struct svc_call rq;
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
	struct reply *r = encode_result(cl->w, cl->pd, &cl->rq, cl->res);
	if (!r) {
		struct hdr_ctx h = {.xid = cl->hdr.xid, .stat = ACCEPT_SYSTEM_ERR};
		r = short_reply(enc_accepted, &h);
	}
	call_free(cl);
	return r;
}

/* The result's status, for the observer (the metrics): -1 for procedures without one. */
static int64_t status_of(const struct svc_prog *sp, const struct rpc_call *hdr,
			 const struct proc_desc *pd, const void *res)
{
	if (!sp->desc->status || pd->res_size < sizeof(int32_t))
		return -1;
	return sp->desc->status(hdr->proc, res);
}

/* The observer's view of a call (svc_observer): begun, handled, done. */
static void observe_begin(struct worker *w, const struct rpc_call *hdr)
{
	if (w && w->obs && w->srv->obs.call_begin)
		w->srv->obs.call_begin(w->obs, hdr->prog, hdr->proc);
}

static void observe_handled(struct worker *w, const struct svc_call *rq, const void *res)
{
	if (w && w->obs && w->srv->obs.call_handled)
		w->srv->obs.call_handled(w->obs, rq, res);
}

static void record(struct worker *w, const struct rpc_call *hdr, int64_t status, uint64_t t0)
{
	if (w && w->obs && w->srv->obs.call_done)
		w->srv->obs.call_done(w->obs, hdr->prog, hdr->proc, status, fiber_now_ns() - t0);
}

static void call_proc(struct worker *w, const struct xprt *xp, struct record_mem *rm,
		      const struct rpc_call *hdr, const struct svc_prog *sp, struct reply **out)
{
	const struct proc_desc *pd = &sp->desc->procs[hdr->proc];
	struct hdr_ctx h = {.xid = hdr->xid, .stat = ACCEPT_GARBAGE_ARGS};
	uint64_t t0 = fiber_now_ns();
	struct call *cl = calloc(1, sizeof *cl);
	*out = NULL;
	if (!cl)
		return;
	cl->w = w;
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
	cl->rq = (struct svc_call){.prog = sp->ctx, .call = &cl->hdr, .peer = *xp->peer,
				  .local = xp->local ? *xp->local
						     : (struct sockaddr_storage){.ss_family = AF_UNSPEC},
				  .proto = xp->proto ? xp->proto : IPPROTO_TCP};
	fs_call_begin(&cl->rq.fs, w ? w->fs : NULL, &hdr->cred, &cl->rq.peer, &cl->rq.arena, rm);
	observe_begin(w, hdr);
	/* May suspend the fiber any number of times (I/O, a busy cache entry, a neighbour). */
	pd->handler(&cl->rq, cl->args, cl->res);
	int64_t status = status_of(sp, hdr, pd, cl->res);
	observe_handled(w, &cl->rq, cl->res);
	if (cl->rq.fs.wrongsec) {
		/* The export's rule wants another flavor: RFC 2623 2.3.2's answer (knfsd's NFSv3
		 * answers NFS3ERR_ACCES; Ganesha, as here, AUTH_TOOWEAK). */
		h.stat = RPC_REPLY_AUTH_TOOWEAK;
		*out = short_reply(enc_rejected, &h);
		call_free(cl);
	} else {
		*out = call_finish(cl);
	}
	record(w, hdr, status, t0);
}

/* The reply a call header's verdict earns before any check of its credential; NULL for
 * RPC_OK, and for RPC_DROP (nothing to answer). */
static struct reply *header_reply(const struct rpc_call *call, enum rpc_verdict v)
{
	struct hdr_ctx h = {.xid = call->xid, .stat = v};
	if (v == RPC_OK || v == RPC_DROP)
		return NULL;
	if (v == RPC_REPLY_GARBAGE_ARGS) {
		h.stat = ACCEPT_GARBAGE_ARGS;
		return short_reply(enc_accepted, &h);
	}
	return short_reply(enc_rejected, &h);
}

/* The program version and procedure the call names, *sp; or the reply that says it is not
 * served (*sp NULL). After the credential's checks, as knfsd: a GSS call learns nothing of
 * what is served before its header checks, and the answer carries its verifier. */
static struct reply *program_reply(const struct worker *w, int proto, const struct rpc_call *call,
				   const struct svc_prog **sp)
{
	struct hdr_ctx h = {.xid = call->xid};
	bool known;
	const struct svc_prog *p = find_prog(w ? w->srv : NULL, proto, call->prog, call->vers, &known,
					     &h.low, &h.high);
	*sp = NULL;
	if (!known) {
		h.stat = ACCEPT_PROG_UNAVAIL;
		return short_reply(enc_accepted, &h);
	}
	if (!p)
		return short_reply(enc_mismatch, &h);
	if (call->proc >= p->desc->nprocs || !p->desc->procs[call->proc].handler) {
		h.stat = ACCEPT_PROC_UNAVAIL;
		return short_reply(enc_accepted, &h);
	}
	*sp = p;
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
		      struct record_mem *rm, const struct rpc_call *call, const struct svc_prog *sp,
		      struct reply **out)
{
	const struct proc_desc *pd = &sp->desc->procs[call->proc];
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
	call_proc(w, x, rm, call, sp, out);
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
	const struct svc_prog *sp;
	struct gss_call gc = {0};
	if (w && w->seen)
		seen_note(w->seen, peer, fiber_now_ns());   /* its "last seen" (nfsd-uc-stat clients) */
	enum rpc_verdict v = rpc_decode_call(rec, len, &call);
	*out = header_reply(&call, v);
	if (v != RPC_OK)
		return;
	/* The record is this call's own memory: a krb5p body is opened where it lies. */
	if (call.cred.flavor == RPC_AUTH_GSS &&
	    gss_call_accept(w ? w->srv->gss : NULL, peer, (uint8_t *)rec, &call, &gc, out) !=
	    GSS_CALL_RUN)
		return;
	*out = program_reply(w, proto, &call, &sp);
	struct drc *drc = w ? w->srv->drc : NULL;
	const struct xprt x = {peer, local, proto};
	if (sp && sp->desc->procs[call.proc].cache_reply && drc)
		call_once(drc, w, &x, rm, &call, sp, out);
	else if (sp)
		call_proc(w, &x, rm, &call, sp, out);
	gss_call_seal(&gc, out);
}

/* A WRITE's or READ's arguments at args (len bytes of them here; args_idx: where they lie in
 * the record once it is opened) into pk. */
static void peek_args(uint32_t proc, const uint8_t *args, size_t len, size_t args_idx,
		      struct dispatch_peek *pk)
{
	uint32_t dlen;
	size_t off_in_args;
	if (proc == NFSPROC3_WRITE &&
	    write3args_peek(args, len, &pk->file_off, &dlen, &off_in_args)) {
		pk->write = true;
		pk->payload_idx = args_idx + off_in_args;
	} else if (proc == NFSPROC3_READ) {
		pk->read = read3args_peek(args, len, &pk->read_count);
	}
}

void dispatch_peek(struct svc_gss *g, const uint8_t *rec, size_t avail, struct dispatch_peek *pk)
{
	struct rpc_call call;
	*pk = (struct dispatch_peek){0};
	if (rpc_decode_call(rec, avail, &call) != RPC_OK || call.prog != NFS_PROGRAM ||
	    call.vers != NFS_V3 || (call.proc != NFSPROC3_WRITE && call.proc != NFSPROC3_READ))
		return;
	if (call.cred.flavor == RPC_AUTH_GSS && call.gss.proc != GSS_PROC_DATA)
		return;
	/* krb5p: the arguments are sealed, their first bytes deciphered unchecked (a WRITE's file
	 * offset, so that its data lands aligned where the body will be opened in place) */
	if (call.cred.flavor == RPC_AUTH_GSS && call.gss.service == GSS_SVC_PRIVACY) {
		uint8_t plain[4 + 128];
		size_t n = sizeof plain;
		long at = gss_call_peek(g, rec, &call, call.proc == NFSPROC3_READ, plain, &n);
		if (at >= 0 && n >= 4)
			peek_args(call.proc, plain + 4, n - 4, (size_t)at + 4, pk);
		return;
	}
	/* krb5i: the arguments follow the body's length and sequence number */
	if (call.cred.flavor == RPC_AUTH_GSS && call.gss.service == GSS_SVC_INTEGRITY) {
		if (call.args_len < 8)
			return;
		call.args += 8;
		call.args_len -= 8;
	}
	peek_args(call.proc, call.args, call.args_len, (size_t)(call.args - rec), pk);
}
