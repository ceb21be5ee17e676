/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Call headers are decoded by hand: they are a dozen words, and libtirpc's xdr_callmsg wants to own
 * the credential buffers. Every read is bounds-checked against the record. */
#include "rpc/oncrpc.h"

#include <string.h>

#include "rpc/xdrbuf.h"

#define RPC_MSG_CALL 0
#define RPC_MSG_REPLY 1
#define RPC_VERSION 2
#define MSG_ACCEPTED 0
#define MSG_DENIED 1
#define REJ_RPC_MISMATCH 0
#define REJ_AUTH_ERROR 1
#define AUTH_BADCRED 1
#define AUTH_BADVERF 3
#define AUTH_TOOWEAK 5
#define RPCSEC_GSS_CREDPROBLEM 13
#define RPCSEC_GSS_CTXPROBLEM 14

/* Skip an opaque<max>, its length kept. */
static bool skip_opaque(struct xdr_rd *r, uint32_t max, uint32_t *len)
{
	const uint8_t *b;
	return xdr_get_opaque(r, max, &b, len);
}

/* AUTH_SYS body (RFC 5531 appendix A): stamp, machinename<255>, uid, gid, gids<16>. */
static bool decode_auth_sys(const uint8_t *body, uint32_t len, struct rpc_cred *c)
{
	struct xdr_rd r = {body, body + len};
	uint32_t stamp, namelen, uid, gid, n;
	if (!xdr_get32(&r, &stamp) || !skip_opaque(&r, 255, &namelen) || !xdr_get32(&r, &uid) ||
	    !xdr_get32(&r, &gid) || !xdr_get32(&r, &n) || n > RPC_MAX_GIDS)
		return false;
	c->uid = uid;
	c->gid = gid;
	c->ngids = n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t g;
		if (!xdr_get32(&r, &g))
			return false;
		c->gids[i] = g;
	}
	return r.p == r.end;
}

/* The credential's body by its flavor into call; RPC_OK or the reply it earns. */
static enum rpc_verdict decode_cred(uint32_t flavor, const uint8_t *body, uint32_t len,
				    struct rpc_call *call)
{
	call->cred.flavor = flavor;
	switch (flavor) {
	case RPC_AUTH_NONE:
		return RPC_OK;
	case RPC_AUTH_SYS:
		return decode_auth_sys(body, len, &call->cred) ? RPC_OK : RPC_REPLY_AUTH_BADCRED;
	case RPC_AUTH_GSS:
		if (gss_cred_decode(body, len, &call->gss) != GSS_CRED_OK)
			return RPC_REPLY_AUTH_BADCRED;
		call->cred.gss_service = call->gss.service;
		return RPC_OK;
	default:
		return RPC_REPLY_AUTH_TOOWEAK;
	}
}

enum rpc_verdict rpc_decode_call(const uint8_t *rec, size_t len, struct rpc_call *call)
{
	struct xdr_rd r = {rec, rec + len};
	uint32_t type, rpcvers, flavor, credlen;
	memset(call, 0, sizeof *call);
	if (!xdr_get32(&r, &call->xid) || !xdr_get32(&r, &type) || type != RPC_MSG_CALL)
		return RPC_DROP;
	if (!xdr_get32(&r, &rpcvers))
		return RPC_REPLY_GARBAGE_ARGS;
	if (rpcvers != RPC_VERSION)
		return RPC_REPLY_RPC_MISMATCH;
	if (!xdr_get32(&r, &call->prog) || !xdr_get32(&r, &call->vers) || !xdr_get32(&r, &call->proc))
		return RPC_REPLY_GARBAGE_ARGS;
	if (!xdr_get32(&r, &flavor))
		return RPC_REPLY_AUTH_BADCRED;
	const uint8_t *body;
	if (!xdr_get_opaque(&r, RPC_MAX_AUTH_BYTES, &body, &credlen))
		return RPC_REPLY_AUTH_BADCRED;
	enum rpc_verdict v = decode_cred(flavor, body, credlen, call);
	if (v != RPC_OK)
		return v;
	call->hdr_len = (size_t)(r.p - rec);
	if (!xdr_get32(&r, &call->verf_flavor))
		return RPC_REPLY_AUTH_BADCRED;
	if (!xdr_get_opaque(&r, RPC_MAX_AUTH_BYTES, &call->verf, &call->verf_len))
		return RPC_REPLY_AUTH_BADCRED;
	call->args = r.p;
	call->args_len = (size_t)(r.end - r.p);
	return RPC_OK;
}

/* xid, REPLY, MSG_ACCEPTED, the verifier (flavor, length, bytes, padding), accept_stat */
size_t rpc_encode_accepted_verf(uint8_t *buf, uint32_t xid, enum rpc_accept stat,
				uint32_t vflavor, const void *verf, size_t vlen)
{
	uint8_t *p = xdr_put32(buf, xid);
	p = xdr_put32(p, RPC_MSG_REPLY);
	p = xdr_put32(p, MSG_ACCEPTED);
	p = xdr_put32(p, vflavor);
	p = xdr_put_opaque(p, verf, vlen);
	p = xdr_put32(p, stat);
	return (size_t)(p - buf);
}

size_t rpc_encode_accepted(uint8_t *buf, uint32_t xid, enum rpc_accept stat)
{
	return rpc_encode_accepted_verf(buf, xid, stat, RPC_AUTH_NONE, NULL, 0);
}

size_t rpc_encode_prog_mismatch(uint8_t *buf, uint32_t xid, uint32_t low, uint32_t high)
{
	size_t n = rpc_encode_accepted(buf, xid, ACCEPT_PROG_MISMATCH);
	xdr_put32(xdr_put32(buf + n, low), high);
	return n + 8;
}

static uint32_t auth_stat(enum rpc_verdict why)
{
	switch (why) {
	case RPC_REPLY_AUTH_TOOWEAK: return AUTH_TOOWEAK;
	case RPC_REPLY_AUTH_BADVERF: return AUTH_BADVERF;
	case RPC_REPLY_GSS_CREDPROBLEM: return RPCSEC_GSS_CREDPROBLEM;
	case RPC_REPLY_GSS_CTXPROBLEM: return RPCSEC_GSS_CTXPROBLEM;
	default: return AUTH_BADCRED;
	}
}

size_t rpc_encode_rejected(uint8_t *buf, uint32_t xid, enum rpc_verdict why)
{
	uint8_t *p = xdr_put32(buf, xid);
	p = xdr_put32(p, RPC_MSG_REPLY);
	p = xdr_put32(p, MSG_DENIED);
	if (why == RPC_REPLY_RPC_MISMATCH) {
		p = xdr_put32(p, REJ_RPC_MISMATCH);
		p = xdr_put32(p, RPC_VERSION);
		p = xdr_put32(p, RPC_VERSION);
	} else {
		p = xdr_put32(p, REJ_AUTH_ERROR);
		p = xdr_put32(p, auth_stat(why));
	}
	return (size_t)(p - buf);
}
