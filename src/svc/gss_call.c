/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS on the dispatcher's path (gss_call.h), following RFC 2203 section 5 and, where it
 * leaves a choice, knfsd's net/sunrpc/auth_gss/svcauth_gss.c: a header that does not check, or
 * an unknown context, answers RPCSEC_GSS_CREDPROBLEM; a body that does not check, GARBAGE_ARGS;
 * a sequence number seen or below the window, nothing. Replies are sealed after the duplicate
 * request cache has seen them, so that a retransmission (a new sequence number) gets the kept
 * reply sealed afresh for its own number, as knfsd does. */
#include "svc/gss_call.h"

#include <gssapi/gssapi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/bufstash.h"
#include "base/log.h"
#include "base/sockaddr.h"
#include "conf/config.h"
#include "io/pool.h"
#include "rpc/gss_ctx.h"
#include "rpc/recmark.h"
#include "rpc/xdrbuf.h"
#include "svc/reply.h"

/* Threads that make contexts: a slow KDC holds one of them, never a ring or the file pool. */
#define GSS_THREADS 2

/* Counters of gss_stats, bumped by every ring (relaxed: each is a count of its own). */
struct gss_counters {
	atomic_uint_fast64_t made, refused, calls[3], unknown_ctx, bad_headers, bad_bodies,
		seq_drops;
};

struct svc_gss {
	struct gss_ctx_table *tbl;
	struct pool *pool;
	struct log_ratelimit refused_log;
	struct gss_counters n;
};

#define BUMP(g, field) atomic_fetch_add_explicit(&(g)->n.field, 1, memory_order_relaxed)
#define READ(g, field) atomic_load_explicit(&(g)->n.field, memory_order_relaxed)

void svc_gss_stats(struct svc_gss *g, struct gss_stats *out)
{
	*out = (struct gss_stats){
		.contexts = gss_ctx_count(g->tbl), .made = READ(g, made), .refused = READ(g, refused),
		.calls = {READ(g, calls[0]), READ(g, calls[1]), READ(g, calls[2])},
		.unknown_ctx = READ(g, unknown_ctx), .bad_headers = READ(g, bad_headers),
		.bad_bodies = READ(g, bad_bodies), .seq_drops = READ(g, seq_drops),
	};
}

struct svc_gss *svc_gss_new(const struct config *cfg)
{
	char err[512];
	struct svc_gss *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	const struct gss_ctx_params p = {
		.keytab = cfg->keytab, .window = cfg->gss_window, .max = cfg->gss_contexts,
		.per_client = cfg->gss_contexts_per_client,
		.refuse_unmapped = cfg->gss_refuse_unmapped, .mit_crypto = cfg->gss_crypto_gssapi,
	};
	g->tbl = gss_ctx_table_new(&p, err, sizeof err);
	if (g->tbl)
		g->pool = pool_new(GSS_THREADS, NULL, NULL);
	if (!g->tbl || !g->pool) {
		log_msg(config_first_krb5(cfg, NULL) ? LOG_WARNING : LOG_INFO,
			"RPCSEC_GSS (Kerberos) calls are refused: %s", g->tbl ? "no threads" : err);
		svc_gss_free(g);
		return NULL;
	}
	return g;
}

void svc_gss_free(struct svc_gss *g)
{
	if (!g)
		return;
	pool_free(g->pool);
	gss_ctx_table_free(g->tbl);
	free(g);
}

/* A reply of buf's first len bytes, record mark (its first 4) set; NULL, buf freed, without
 * memory. */
static struct reply *flat_reply(uint8_t *buf, size_t len)
{
	struct reply *r = buf ? calloc(1, sizeof *r) : NULL;
	if (!r) {
		free(buf);
		return NULL;
	}
	recmark_put(buf, (uint32_t)(len - 4));
	r->hdr = buf;
	r->hdr_len = len;
	return r;
}

static struct reply *rejected(uint32_t xid, enum rpc_verdict why)
{
	uint8_t *buf = malloc(4 + RPC_REPLY_HDR_MAX);
	return buf ? flat_reply(buf, 4 + rpc_encode_rejected(buf + 4, xid, why)) : NULL;
}

/* An accepted reply with no verifier yet and no body: gss_call_seal gives it both. */
static struct reply *accepted(uint32_t xid, enum rpc_accept stat)
{
	uint8_t *buf = malloc(4 + RPC_REPLY_HDR_MAX);
	return buf ? flat_reply(buf, 4 + rpc_encode_accepted(buf + 4, xid, stat)) : NULL;
}

/* ---- a context's steps: INIT and CONTINUE_INIT ---- */

struct step {
	struct gss_ctx_table *tbl;
	const struct sockaddr_storage *peer;
	const struct gss_cred *cred;
	const uint8_t *token;
	uint32_t token_len;
	struct gss_init_res res;
};

static long run_step(void *arg)
{
	struct step *s = arg;
	return gss_ctx_accept(s->tbl, s->peer, s->cred->handle, s->cred->handle_len, s->token,
			      s->token_len, &s->res);
}

/* rpc_gss_init_res after an accepted header whose verifier is the window's MIC once the
 * context is complete (RFC 2203 5.2.3.1). */
static struct reply *init_reply(uint32_t xid, const struct gss_init_res *res)
{
	size_t cap = 4 + RPC_REPLY_HDR_MAX + xdr_padded(res->verf_len) + 4 + GSS_CTX_HANDLE_LEN + 12 +
		     4 + xdr_padded(res->token_len);
	uint8_t *buf = malloc(cap);
	if (!buf)
		return NULL;
	size_t n = 4 + rpc_encode_accepted_verf(buf + 4, xid, ACCEPT_SUCCESS,
						res->verf_len ? RPC_AUTH_GSS : RPC_AUTH_NONE,
						res->verf, res->verf_len);
	uint8_t *p = xdr_put_opaque(buf + n, res->handle, res->handle_len);
	p = xdr_put32(p, res->major);
	p = xdr_put32(p, res->minor);
	p = xdr_put32(p, res->window);
	p = xdr_put_opaque(p, res->token, res->token_len);
	return flat_reply(buf, (size_t)(p - buf));
}

/* Why a context was refused, at most a line a second: the GSS-API's words (a bad ticket, no
 * key, clock skew), a principal with no local user, or the table's bounds. */
static void log_refused(struct svc_gss *g, const struct sockaddr_storage *peer,
			const struct gss_init_res *res)
{
	char why[320], addr[INET6_ADDRSTRLEN];
	if (res->principal[0])
		snprintf(why, sizeof why, "%s has no local user (gss_unmapped = refuse)",
			 res->principal);
	else if (res->major == GSS_S_FAILURE && !res->minor)
		snprintf(why, sizeof why, "too many contexts, or none to continue");
	else
		gss_ctx_status_text(res->major, res->minor, why, sizeof why);
	log_ratelimited(&g->refused_log, LOG_WARNING, "RPCSEC_GSS context from %s refused: %s",
			sa_str(peer, addr), why);
}

static enum gss_call_verdict step(struct svc_gss *g, const struct sockaddr_storage *peer,
				  const struct rpc_call *call, struct reply **out)
{
	struct xdr_rd r = {call->args, call->args + call->args_len};
	struct step s = {.tbl = g->tbl, .peer = peer, .cred = &call->gss};
	/* Contexts are made on the NULL procedure only (RFC 2203 5.2.1), as knfsd insists. */
	if (call->proc != 0) {
		*out = rejected(call->xid, RPC_REPLY_AUTH_BADCRED);
		return GSS_CALL_ANSWERED;
	}
	if (!xdr_get_opaque(&r, UINT32_MAX, &s.token, &s.token_len) || r.p != r.end) {
		*out = accepted(call->xid, ACCEPT_GARBAGE_ARGS);
		return GSS_CALL_ANSWERED;
	}
	pool_run(g->pool, run_step, &s);
	if (s.res.major == GSS_S_COMPLETE)
		BUMP(g, made);
	if (s.res.major != GSS_S_COMPLETE && s.res.major != GSS_S_CONTINUE_NEEDED) {
		BUMP(g, refused);
		log_refused(g, peer, &s.res);
	}
	*out = init_reply(call->xid, &s.res);
	gss_init_res_free(&s.res);
	return GSS_CALL_ANSWERED;
}

/* ---- DATA and DESTROY ---- */

/* rpc_gss_integ_data: opaque(seq + args), opaque(MIC of the first); args into call. */
static bool open_integ(struct gss_ctx *c, struct rpc_call *call)
{
	const uint8_t *body, *mic;
	uint32_t len, mic_len;
	if (!gss_integ_split(call->args, call->args_len, &body, &len, &mic, &mic_len) ||
	    xdr_word(body) != call->gss.seq || gss_ctx_verify_mic(c, body, len, mic, mic_len) < 0)
		return false;
	call->args = body + 4;
	call->args_len = len - 4;
	return true;
}

/* rpc_gss_priv_data: opaque(wrap(seq + args)), decrypted where it lies in the record. */
static bool open_priv(struct gss_ctx *c, struct rpc_call *call)
{
	const uint8_t *tok;
	uint8_t *data;
	uint32_t len;
	size_t dlen;
	if (!gss_priv_split(call->args, call->args_len, &tok, &len) ||
	    gss_ctx_unwrap(c, (uint8_t *)tok, len, &data, &dlen) < 0 || dlen < 4 ||
	    xdr_word(data) != call->gss.seq)
		return false;
	call->args = data + 4;
	call->args_len = dlen - 4;
	return true;
}

static bool open_body(struct gss_ctx *c, struct rpc_call *call)
{
	switch (call->gss.service) {
	case GSS_SVC_INTEGRITY: return open_integ(c, call);
	case GSS_SVC_PRIVACY: return open_priv(c, call);
	default: return true;
	}
}

/* The header's MIC, then the sequence number: a verdict other than GSS_CALL_RUN answered. */
static enum gss_call_verdict check_header(struct svc_gss *g, struct gss_ctx *c,
					  const uint8_t *rec, const struct rpc_call *call,
					  struct reply **out)
{
	enum rpc_verdict why = RPC_REPLY_GSS_CREDPROBLEM;
	if (call->verf_flavor != RPC_AUTH_GSS)
		why = RPC_REPLY_AUTH_BADVERF;
	else if (gss_ctx_verify_mic(c, rec, call->hdr_len, call->verf, call->verf_len) == 0)
		switch (gss_ctx_check_seq(c, call->gss.seq)) {
		case GSS_SEQ_OK: return GSS_CALL_RUN;
		case GSS_SEQ_CTXPROBLEM: why = RPC_REPLY_GSS_CTXPROBLEM; break;
		default: BUMP(g, seq_drops); return GSS_CALL_DROP;
		}
	if (why != RPC_REPLY_GSS_CTXPROBLEM)
		BUMP(g, bad_headers);
	*out = rejected(call->xid, why);
	return GSS_CALL_ANSWERED;
}

static enum gss_call_verdict data(struct svc_gss *g, uint8_t *rec, struct rpc_call *call,
				  struct gss_call *gc, struct reply **out)
{
	struct gss_ctx *c = gss_ctx_get(g->tbl, call->gss.handle, call->gss.handle_len);
	if (!c) {
		BUMP(g, unknown_ctx);
		*out = rejected(call->xid, RPC_REPLY_GSS_CREDPROBLEM);
		return GSS_CALL_ANSWERED;
	}
	enum gss_call_verdict v = check_header(g, c, rec, call, out);
	if (v != GSS_CALL_RUN) {
		gss_ctx_put(c);
		return v;
	}
	*gc = (struct gss_call){.ctx = c, .seq = call->gss.seq, .service = call->gss.service};
	if (call->gss.proc == GSS_PROC_DESTROY) {
		gss_ctx_destroy(g->tbl, call->gss.handle, call->gss.handle_len);
		*out = accepted(call->xid, ACCEPT_SUCCESS);
		gss_call_seal(gc, out);
		return GSS_CALL_ANSWERED;
	}
	BUMP(g, calls[call->gss.service - 1]);
	if (!open_body(c, call)) {
		BUMP(g, bad_bodies);
		*out = accepted(call->xid, ACCEPT_GARBAGE_ARGS);
		gss_call_seal(gc, out);
		return GSS_CALL_ANSWERED;
	}
	gss_ctx_cred(c, &call->cred);
	return GSS_CALL_RUN;
}

enum gss_call_verdict gss_call_accept(struct svc_gss *g, const struct sockaddr_storage *peer,
				      uint8_t *rec, struct rpc_call *call, struct gss_call *gc,
				      struct reply **out)
{
	*gc = (struct gss_call){0};
	*out = NULL;
	if (!g) {
		*out = rejected(call->xid, RPC_REPLY_AUTH_BADCRED);
		return GSS_CALL_ANSWERED;
	}
	if (call->gss.proc == GSS_PROC_INIT || call->gss.proc == GSS_PROC_CONTINUE_INIT)
		return step(g, peer, call, out);
	return data(g, rec, call, gc, out);
}

long gss_call_peek(struct svc_gss *g, const uint8_t *rec, const struct rpc_call *call,
		   bool whole, uint8_t *plain, size_t *n)
{
	/* rpc_gss_priv_data: the token's length, then the token, of which only call->args_len
	 * bytes (what is here) may be read */
	if (!g || call->gss.proc != GSS_PROC_DATA || call->gss.service != GSS_SVC_PRIVACY ||
	    call->args_len < 4)
		return -1;
	struct gss_ctx *c = gss_ctx_get(g->tbl, call->gss.handle, call->gss.handle_len);
	if (!c)
		return -1;
	const uint8_t *tok = call->args + 4;
	long at = gss_ctx_peek(c, tok, xdr_word(call->args), call->args_len - 4, whole, plain, n);
	gss_ctx_put(c);
	return at < 0 ? -1 : (long)(tok - rec) + at;
}

/* ---- replies ---- */

/* Our own accepted replies have an empty AUTH_NONE verifier: the accept_stat at 4 + 20 after
 * the record mark, the body after it. */
#define PLAIN_HDR (4 + 24)

/* The bytes after the plain header: result, payload, padding (a multiple of 4). */
static size_t body_len(const struct reply *r)
{
	return r->hdr_len - PLAIN_HDR + r->payload_len + r->pad;
}

/* The pieces of r's body behind a sequence number, as krb5i checksums them and krb5p seals
 * them: seq and result (seq written over the accept_stat word before the result, which the
 * sealed reply has in its own header), the payload where it lies (a READ's data, maybe the
 * cache's own blocks, which no call may encrypt in place), the padding. In stack (room for
 * BODY_STACK) or malloc'd (then the caller frees it); NULL when memory ran out. */
#define BODY_STACK 8
static struct iovec *body_pieces(struct reply *r, uint32_t seq, struct iovec *stack, int *n)
{
	struct iovec *v = stack;
	size_t need = 1 + REPLY_BODY_IOVS(r);
	if (need > BODY_STACK && !(v = malloc(need * sizeof *v)))
		return NULL;
	uint8_t *body = r->hdr + PLAIN_HDR - 4;
	xdr_put32(body, seq);
	v[0] = (struct iovec){body, 4 + r->hdr_len - PLAIN_HDR};
	*n = 1 + reply_body_iov(r, v + 1);
	return v;
}

/* The pieces of v copied to dst, where MIT's GSS-API then seals them in place. */
static void copy_pieces(const struct iovec *v, int n, uint8_t *dst)
{
	for (int i = 0; i < n; i++) {
		memcpy(dst, v[i].iov_base, v[i].iov_len);
		dst += v[i].iov_len;
	}
}

/* rpc_gss_priv_data at p: opaque(wrap(seq + body)), written once: sealed from the pieces as
 * they are read (our own tokens), or copied and sealed there (MIT's). Its end, or NULL. */
static uint8_t *priv_body(struct gss_call *gc, struct reply *r, uint8_t *p, size_t head,
			  size_t tail)
{
	size_t len = 4 + body_len(r), tok = head + len + tail, pad = xdr_padded(tok) - tok;
	struct iovec stack[BODY_STACK];
	int n;
	struct iovec *v = body_pieces(r, gc->seq, stack, &n);
	if (!v)
		return NULL;
	p = xdr_put32(p, (uint32_t)tok);
	int rc = gss_ctx_wrap_iov_out(gc->ctx, v, n, p);
	if (rc == GSS_CTX_NOT_OWN) {
		copy_pieces(v, n, p + head);
		rc = gss_ctx_wrap(gc->ctx, p + head, len, head, tail);
	}
	if (v != stack)
		free(v);
	if (rc < 0)
		return NULL;
	memset(p + tok, 0, pad);
	return p + tok + pad;
}

/* krb5p: r's result and payload sealed after a header with verifier verf, in one buffer. */
static struct reply *sealed_reply(struct gss_call *gc, struct reply *r, const uint8_t *verf,
				  size_t vlen)
{
	size_t len = 4 + body_len(r), head, tail;
	if (gss_ctx_wrap_room(gc->ctx, len, &head, &tail) < 0)
		return NULL;
	/* A 1 MiB READ's sealed reply: a warm buffer of the ring's (base/bufstash.h says why) */
	uint8_t *buf = bufstash_alloc(_Alignof(max_align_t), 4 + RPC_REPLY_HDR_MAX +
				      xdr_padded(vlen) + 8 + head + len + tail + 4);
	if (!buf)
		return NULL;
	size_t n = 4 + rpc_encode_accepted_verf(buf + 4, xdr_word(r->hdr + 4), ACCEPT_SUCCESS,
						RPC_AUTH_GSS, verf, vlen);
	uint8_t *end = priv_body(gc, r, buf + n, head, tail);
	if (!end) {
		bufstash_free(buf);
		return NULL;
	}
	return flat_reply(buf, (size_t)(end - buf));
}

/* The MIC of r's body (behind seq) as an opaque at tail: its end, or NULL. */
static uint8_t *integ_mic(struct gss_call *gc, struct reply *r, uint8_t *tail)
{
	struct iovec stack[BODY_STACK];
	int n;
	struct iovec *v = body_pieces(r, gc->seq, stack, &n);
	if (!v)
		return NULL;
	uint8_t mic[GSS_MIC_MAX];
	int m = gss_ctx_get_mic_iov(gc->ctx, v, n, mic, sizeof mic);
	if (v != stack)
		free(v);
	return m < 0 ? NULL : xdr_put_opaque(tail, mic, (size_t)m);
}

/* krb5i: rpc_gss_integ_data, opaque(seq + body) then opaque(its MIC). The payload is not
 * copied: the checksum is made over it where it lies and sent after it, as r's payload is
 * moved to the new reply. */
static struct reply *integ_reply(struct gss_call *gc, struct reply *r, const uint8_t *verf,
				 size_t vlen)
{
	size_t res = r->hdr_len - PLAIN_HDR;
	size_t hmax = 4 + RPC_REPLY_HDR_MAX + xdr_padded(vlen) + 8 + res;
	uint8_t *buf = malloc(hmax + 4 + GSS_MIC_MAX + 4);
	struct reply *n = buf ? calloc(1, sizeof *n) : NULL;
	uint8_t *end = n ? integ_mic(gc, r, buf + hmax) : NULL;
	if (!end) {
		free(buf);
		free(n);
		return NULL;
	}
	size_t h = 4 + rpc_encode_accepted_verf(buf + 4, xdr_word(r->hdr + 4), ACCEPT_SUCCESS,
						RPC_AUTH_GSS, verf, vlen);
	uint8_t *body = xdr_put32(buf + h, (uint32_t)(4 + body_len(r)));
	memcpy(body, r->hdr + PLAIN_HDR - 4, 4 + res);   /* seq (body_pieces put it) and result */
	*n = *r;
	n->next = NULL;
	n->hdr = buf;
	n->hdr_len = (size_t)(body - buf) + 4 + res;
	n->tail = buf + hmax;
	n->tail_len = (size_t)(end - n->tail);
	recmark_put(buf, (uint32_t)(n->hdr_len - 4 + n->payload_len + n->pad + n->tail_len));
	r->payload_free = NULL;   /* the payload is n's now */
	return n;
}

/* r with the verifier in its header and its body (payload too) as it was. */
static struct reply *verified_reply(struct reply *r, const uint8_t *verf, size_t vlen)
{
	size_t res = r->hdr_len - PLAIN_HDR;
	uint8_t *buf = malloc(4 + RPC_REPLY_HDR_MAX + xdr_padded(vlen) + res);
	struct reply *n = buf ? calloc(1, sizeof *n) : NULL;
	if (!n) {
		free(buf);
		return NULL;
	}
	size_t h = 4 + rpc_encode_accepted_verf(buf + 4, xdr_word(r->hdr + 4), xdr_word(r->hdr + 24),
						RPC_AUTH_GSS, verf, vlen);
	memcpy(buf + h, r->hdr + PLAIN_HDR, res);
	*n = *r;
	n->hdr = buf;
	n->hdr_len = h + res;
	recmark_put(buf, (uint32_t)(n->hdr_len - 4 + n->payload_len + n->pad));
	r->payload_free = NULL;   /* the payload is n's now */
	return n;
}

static bool is_plain_accepted(const struct reply *r)
{
	return r->hdr_len >= PLAIN_HDR && xdr_word(r->hdr + 8) == 1 && xdr_word(r->hdr + 12) == 0 &&
	       xdr_word(r->hdr + 16) == RPC_AUTH_NONE && xdr_word(r->hdr + 20) == 0;
}

void gss_call_seal(struct gss_call *gc, struct reply **rp)
{
	struct reply *r = *rp;
	if (!gc->ctx)
		return;
	if (r && is_plain_accepted(r)) {
		uint8_t verf[GSS_MIC_MAX];
		int vlen = gss_ctx_mic_u32(gc->ctx, gc->seq, verf, sizeof verf);
		bool wrap = xdr_word(r->hdr + 24) == ACCEPT_SUCCESS && gc->service != GSS_SVC_NONE;
		*rp = vlen < 0				      ? NULL
		      : !wrap				      ? verified_reply(r, verf, (size_t)vlen)
		      : gc->service == GSS_SVC_INTEGRITY ? integ_reply(gc, r, verf, (size_t)vlen)
							      : sealed_reply(gc, r, verf, (size_t)vlen);
		reply_free(r);
	}
	gss_call_end(gc);
}

void gss_call_end(struct gss_call *gc)
{
	if (gc->ctx)
		gss_ctx_put(gc->ctx);
	gc->ctx = NULL;
}
