/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rpc_decode_call() (src/rpc/oncrpc.c) on arbitrary bytes: the call header, AUTH_NONE and
 * AUTH_SYS credentials (machine name, up to 16 groups), verifiers. Beyond ASan's bounds checks:
 * what it decodes must be consistent (arguments are the record's tail, a credential the server
 * takes), the header must delimit itself (decoding it without the arguments gives the same call),
 * a canonical re-encoding of the call must decode to the same call, and the reply headers the
 * server would send for the verdict (rpc_encode_*) must have their exact RFC 5531 layout. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/oncrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_rpc_call: %s\n", #c); abort(); } } while (0)

static uint32_t word(const uint8_t *p, size_t i)
{
	p += 4 * i;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t *put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
	return p + 4;
}

static bool same_call(const struct rpc_call *a, const struct rpc_call *b)
{
	if (a->xid != b->xid || a->prog != b->prog || a->vers != b->vers || a->proc != b->proc ||
	    a->cred.flavor != b->cred.flavor || a->args_len != b->args_len ||
	    memcmp(a->args, b->args, a->args_len) != 0)
		return false;
	if (a->cred.flavor != RPC_AUTH_SYS)
		return true;
	return a->cred.uid == b->cred.uid && a->cred.gid == b->cred.gid && a->cred.ngids == b->cred.ngids &&
	       memcmp(a->cred.gids, b->cred.gids, a->cred.ngids * sizeof a->cred.gids[0]) == 0;
}

static void check_decoded(const uint8_t *rec, size_t len, const struct rpc_call *c)
{
	CHECK(c->args >= rec && c->args + c->args_len == rec + len);
	CHECK(c->cred.flavor == RPC_AUTH_NONE || c->cred.flavor == RPC_AUTH_SYS ||
	      c->cred.flavor == RPC_AUTH_GSS);
	CHECK(c->cred.ngids <= RPC_MAX_GIDS);
	if (c->cred.flavor == RPC_AUTH_GSS)   /* its credential lies in the header it signs */
		CHECK(c->gss.handle >= rec && c->gss.handle + c->gss.handle_len <= rec + c->hdr_len &&
		      c->cred.gss_service == c->gss.service && c->hdr_len <= len - c->args_len);
	if (c->cred.flavor == RPC_AUTH_NONE)
		CHECK(c->cred.uid == 0 && c->cred.gid == 0 && c->cred.ngids == 0);
	/* the header alone */
	struct rpc_call h;
	CHECK(rpc_decode_call(rec, len - c->args_len, &h) == RPC_OK);
	CHECK(h.args_len == 0 && h.xid == c->xid && h.proc == c->proc);
}

/* xid, CALL, 2, prog, vers, proc, the credential, an AUTH_NONE verifier, the arguments. */
static void check_reencoded(const struct rpc_call *c)
{
	static uint8_t buf[64 + 4 * RPC_MAX_GIDS + 65536 * 2];
	if (c->args_len > 65536 * 2 || c->cred.flavor == RPC_AUTH_GSS)
		return;   /* RPCSEC_GSS's credential: fuzz_gss re-encodes it */
	uint8_t *p = buf;
	p = put(put(put(put(put(put(p, c->xid), 0), 2), c->prog), c->vers), c->proc);
	p = put(p, c->cred.flavor);
	if (c->cred.flavor == RPC_AUTH_SYS) {
		p = put(p, 4 * (6 + c->cred.ngids));     /* stamp, "mach", uid, gid, n, gids */
		p = put(put(p, 7), 4);
		memcpy(p, "mach", 4);
		p = put(put(put(p + 4, c->cred.uid), c->cred.gid), c->cred.ngids);
		for (uint32_t i = 0; i < c->cred.ngids; i++)
			p = put(p, c->cred.gids[i]);
	} else {
		p = put(p, 0);
	}
	p = put(put(p, RPC_AUTH_NONE), 0);
	memcpy(p, c->args, c->args_len);
	p += c->args_len;
	struct rpc_call d;
	CHECK(rpc_decode_call(buf, (size_t)(p - buf), &d) == RPC_OK);
	CHECK(same_call(c, &d));
}

/* Each reply header: xid, REPLY, then the layout of its kind; the returned length is all of it. */
static void check_replies(uint32_t xid, enum rpc_verdict v)
{
	uint8_t b[RPC_REPLY_HDR_MAX + 8];
	memset(b, 0xee, sizeof b);
	size_t n;
	if (v == RPC_OK || v == RPC_REPLY_GARBAGE_ARGS) {
		for (int st = ACCEPT_SUCCESS; st <= ACCEPT_SYSTEM_ERR; st++) {
			n = rpc_encode_accepted(b, xid, (enum rpc_accept)st);
			CHECK(n == 24 && word(b, 0) == xid && word(b, 1) == 1 && word(b, 2) == 0 &&
			      word(b, 3) == 0 && word(b, 4) == 0 && word(b, 5) == (uint32_t)st);
		}
		n = rpc_encode_prog_mismatch(b, xid, 3, 3);
		CHECK(n == 32 && word(b, 5) == ACCEPT_PROG_MISMATCH && word(b, 6) == 3 && word(b, 7) == 3);
	} else if (v != RPC_DROP) {
		n = rpc_encode_rejected(b, xid, v);
		CHECK(n <= RPC_REPLY_HDR_MAX && word(b, 0) == xid && word(b, 1) == 1 && word(b, 2) == 1);
		if (v == RPC_REPLY_RPC_MISMATCH)
			CHECK(n == 24 && word(b, 3) == 0 && word(b, 4) == 2 && word(b, 5) == 2);
		else
			CHECK(n == 20 && word(b, 3) == 1 &&
			      word(b, 4) == (v == RPC_REPLY_AUTH_TOOWEAK ? 5u : 1u));
	}
	CHECK(b[RPC_REPLY_HDR_MAX] == 0xee);    /* nothing past the bound */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_call c;
	enum rpc_verdict v = rpc_decode_call(data, size, &c);
	CHECK(v >= RPC_OK && v <= RPC_REPLY_GARBAGE_ARGS);
	if (v == RPC_DROP)
		CHECK(size < 8 || word(data, 1) != 0);
	else
		CHECK(c.xid == word(data, 0));
	if (v == RPC_OK) {
		check_decoded(data, size, &c);
		check_reencoded(&c);
	}
	check_replies(c.xid, v);
	return 0;
}
