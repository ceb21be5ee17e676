/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ONC RPC v2 (RFC 5531) call and reply headers, over a record already reassembled from its
 * fragments. Pure functions over buffers: no sockets. */
#ifndef NFSD_UC_ONCRPC_H
#define NFSD_UC_ONCRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rpc/gss.h"

#define RPC_AUTH_NONE 0
#define RPC_AUTH_SYS  1
#define RPC_MAX_GIDS  16
#define RPC_MAX_AUTH_BYTES 400

/* RPCSEC_GSS's pseudo-flavors (RFC 2623 section 2.2): what MNT lists and exports' sec= name. */
#define RPC_AUTH_KRB5  390003
#define RPC_AUTH_KRB5I 390004
#define RPC_AUTH_KRB5P 390005

struct rpc_cred {
	uint32_t flavor;          /* RPC_AUTH_NONE, RPC_AUTH_SYS or RPC_AUTH_GSS (rpc/gss.h) */
	uid_t uid;
	gid_t gid;
	uint32_t ngids;
	gid_t gids[RPC_MAX_GIDS];
	/* RPC_AUTH_GSS only: the service (enum gss_service, 1..3: krb5, krb5i, krb5p), and whether
	 * the principal mapped to a local user (uid, gid, gids; machine principals map to root):
	 * an unmapped one is the anonymous user. */
	uint32_t gss_service;
	bool gss_mapped;
};

/* The flavor as exports' sec= and MNT's list name it: a GSS credential's pseudo-flavor
 * (RPC_AUTH_KRB5 + service - 1), anything else its own flavor. */
static inline uint32_t rpc_cred_pseudoflavor(const struct rpc_cred *c)
{
	return c->flavor == RPC_AUTH_GSS ? RPC_AUTH_KRB5 + c->gss_service - 1 : c->flavor;
}

/* Outcome of decoding a call header: what reply (if any) the server owes before dispatch. */
enum rpc_verdict {
	RPC_OK = 0,               /* dispatch prog/vers/proc with args */
	RPC_DROP,                 /* not a call, or too short to have an xid: no reply possible */
	RPC_REPLY_RPC_MISMATCH,   /* rpcvers != 2 */
	RPC_REPLY_AUTH_BADCRED,   /* malformed credential */
	RPC_REPLY_AUTH_TOOWEAK,   /* flavor we do not accept (AUTH_DH, ...), or the export does not */
	RPC_REPLY_GARBAGE_ARGS,   /* header decodes but is inconsistent */
	/* Not from rpc_decode_call: what RPCSEC_GSS's checks answer (RFC 2203 5.3.3.3). */
	RPC_REPLY_AUTH_BADVERF,   /* the verifier is not RPCSEC_GSS's */
	RPC_REPLY_GSS_CREDPROBLEM,   /* no such context, or its header checksum is wrong */
	RPC_REPLY_GSS_CTXPROBLEM,    /* the context's sequence numbers are used up */
};

struct rpc_call {
	uint32_t xid;
	uint32_t prog, vers, proc;
	struct rpc_cred cred;
	const uint8_t *args;      /* procedure arguments: points into the record */
	size_t args_len;
	/* RPCSEC_GSS (cred.flavor RPC_AUTH_GSS): its credential; the header from the xid through
	 * the credential (what the verifier is a MIC of), and the verifier. */
	struct gss_cred gss;
	size_t hdr_len;
	uint32_t verf_flavor;
	const uint8_t *verf;
	uint32_t verf_len;
};

enum rpc_verdict rpc_decode_call(const uint8_t *rec, size_t len, struct rpc_call *call);

/* accept_stat values of an accepted reply (RFC 5531 section 9). */
enum rpc_accept {
	ACCEPT_SUCCESS = 0, ACCEPT_PROG_UNAVAIL = 1, ACCEPT_PROG_MISMATCH = 2, ACCEPT_PROC_UNAVAIL = 3,
	ACCEPT_GARBAGE_ARGS = 4, ACCEPT_SYSTEM_ERR = 5,
};

/* Reply headers are written into buf (room for at least RPC_REPLY_HDR_MAX bytes) and their
 * length returned. The caller adds the 4-byte record mark in front (see recmark.h). */
#define RPC_REPLY_HDR_MAX 32
size_t rpc_encode_accepted(uint8_t *buf, uint32_t xid, enum rpc_accept stat);
/* The same with a verifier of flavor vflavor (RPCSEC_GSS's: a MIC): buf needs
 * RPC_REPLY_HDR_MAX + vlen bytes. */
size_t rpc_encode_accepted_verf(uint8_t *buf, uint32_t xid, enum rpc_accept stat,
				uint32_t vflavor, const void *verf, size_t vlen);
/* PROG_MISMATCH carries the lowest and highest version supported. */
size_t rpc_encode_prog_mismatch(uint8_t *buf, uint32_t xid, uint32_t low, uint32_t high);
/* Rejected replies: the verdict says which (RPC_MISMATCH or an AUTH_* error, RPCSEC_GSS's too). */
size_t rpc_encode_rejected(uint8_t *buf, uint32_t xid, enum rpc_verdict why);

#endif
