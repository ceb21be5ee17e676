/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Call headers are decoded by hand: they are a dozen words, and libtirpc's xdr_callmsg wants to own
 * the credential buffers. Every read is bounds-checked against the record. */
#include "rpc/oncrpc.h"

#include <string.h>

#define RPC_MSG_CALL 0
#define RPC_MSG_REPLY 1
#define RPC_VERSION 2
#define MSG_ACCEPTED 0
#define MSG_DENIED 1
#define REJ_RPC_MISMATCH 0
#define REJ_AUTH_ERROR 1
#define AUTH_BADCRED 1
#define AUTH_TOOWEAK 5

struct rd {
	const uint8_t *p, *end;
};

static bool get32(struct rd *r, uint32_t *v)
{
	if (r->end - r->p < 4)
		return false;
	*v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	return true;
}

/* Skip an opaque<max> (length word, bytes, padding to 4). */
static bool skip_opaque(struct rd *r, uint32_t max, uint32_t *len)
{
	if (!get32(r, len) || *len > max)
		return false;
	size_t padded = ((size_t)*len + 3) & ~(size_t)3;
	if ((size_t)(r->end - r->p) < padded)
		return false;
	r->p += padded;
	return true;
}

/* AUTH_SYS body (RFC 5531 appendix A): stamp, machinename<255>, uid, gid, gids<16>. */
static bool decode_auth_sys(const uint8_t *body, uint32_t len, struct rpc_cred *c)
{
	struct rd r = {body, body + len};
	uint32_t stamp, namelen, uid, gid, n;
	if (!get32(&r, &stamp) || !skip_opaque(&r, 255, &namelen) || !get32(&r, &uid) ||
	    !get32(&r, &gid) || !get32(&r, &n) || n > RPC_MAX_GIDS)
		return false;
	c->uid = uid;
	c->gid = gid;
	c->ngids = n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t g;
		if (!get32(&r, &g))
			return false;
		c->gids[i] = g;
	}
	return r.p == r.end;
}

enum rpc_verdict rpc_decode_call(const uint8_t *rec, size_t len, struct rpc_call *call)
{
	struct rd r = {rec, rec + len};
	uint32_t type, rpcvers, flavor, credlen, verflen, vflavor;
	memset(call, 0, sizeof *call);
	if (!get32(&r, &call->xid) || !get32(&r, &type) || type != RPC_MSG_CALL)
		return RPC_DROP;
	if (!get32(&r, &rpcvers))
		return RPC_REPLY_GARBAGE_ARGS;
	if (rpcvers != RPC_VERSION)
		return RPC_REPLY_RPC_MISMATCH;
	if (!get32(&r, &call->prog) || !get32(&r, &call->vers) || !get32(&r, &call->proc))
		return RPC_REPLY_GARBAGE_ARGS;
	if (!get32(&r, &flavor))
		return RPC_REPLY_AUTH_BADCRED;
	const uint8_t *body = r.p + 4;
	if (!skip_opaque(&r, RPC_MAX_AUTH_BYTES, &credlen))
		return RPC_REPLY_AUTH_BADCRED;
	call->cred.flavor = flavor;
	if (flavor == RPC_AUTH_SYS) {
		if (!decode_auth_sys(body, credlen, &call->cred))
			return RPC_REPLY_AUTH_BADCRED;
	} else if (flavor != RPC_AUTH_NONE) {
		return RPC_REPLY_AUTH_TOOWEAK;
	}
	if (!get32(&r, &vflavor) || !skip_opaque(&r, RPC_MAX_AUTH_BYTES, &verflen))
		return RPC_REPLY_AUTH_BADCRED;
	call->args = r.p;
	call->args_len = (size_t)(r.end - r.p);
	return RPC_OK;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

/* xid, REPLY, MSG_ACCEPTED, verifier AUTH_NONE (flavor 0, length 0), accept_stat */
size_t rpc_encode_accepted(uint8_t *buf, uint32_t xid, enum rpc_accept stat)
{
	uint8_t *p = put32(buf, xid);
	p = put32(p, RPC_MSG_REPLY);
	p = put32(p, MSG_ACCEPTED);
	p = put32(p, RPC_AUTH_NONE);
	p = put32(p, 0);
	p = put32(p, stat);
	return (size_t)(p - buf);
}

size_t rpc_encode_prog_mismatch(uint8_t *buf, uint32_t xid, uint32_t low, uint32_t high)
{
	size_t n = rpc_encode_accepted(buf, xid, ACCEPT_PROG_MISMATCH);
	put32(put32(buf + n, low), high);
	return n + 8;
}

size_t rpc_encode_rejected(uint8_t *buf, uint32_t xid, enum rpc_verdict why)
{
	uint8_t *p = put32(buf, xid);
	p = put32(p, RPC_MSG_REPLY);
	p = put32(p, MSG_DENIED);
	if (why == RPC_REPLY_RPC_MISMATCH) {
		p = put32(p, REJ_RPC_MISMATCH);
		p = put32(p, RPC_VERSION);
		p = put32(p, RPC_VERSION);
	} else {
		p = put32(p, REJ_AUTH_ERROR);
		p = put32(p, why == RPC_REPLY_AUTH_TOOWEAK ? AUTH_TOOWEAK : AUTH_BADCRED);
	}
	return (size_t)(p - buf);
}
