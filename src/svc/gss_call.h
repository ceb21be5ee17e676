/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS (RFC 2203) as the dispatcher meets it: a call's credential checked before its
 * procedure runs (the header's MIC before its sequence number, so that a forged call uses none
 * up), its integrity or privacy body opened in the record's own memory, the principal's user
 * as the call's credential; the reply given its verifier and, for krb5i and krb5p, sealed.
 * Contexts are made (INIT, CONTINUE_INIT) on a pool thread of their own: accepting one reads
 * the keytab and may wait on the KDC. The contexts themselves are rpc/gss_ctx.c's. */
#ifndef NFSD_UC_SVC_GSS_CALL_H
#define NFSD_UC_SVC_GSS_CALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpc/oncrpc.h"

struct config;
struct reply;
struct svc_gss;
struct gss_ctx;
struct gss_ctx_table;

/* The table of contexts and the thread that makes them, from the conf's keytab and bounds.
 * Without a usable keytab: NULL, and GSS calls are refused (a line says why, once). */
struct svc_gss *svc_gss_new(const struct config *cfg);
void svc_gss_free(struct svc_gss *g);

/* What RPCSEC_GSS did since the start (the metrics, nfsd-uc-stat). */
struct gss_stats {
	uint64_t contexts;            /* held now, established or being made */
	uint64_t made, refused;       /* contexts established; steps refused (bad ticket, no key,
				       * clock skew, too many) */
	uint64_t calls[3];            /* DATA calls checked, by service: krb5, krb5i, krb5p */
	uint64_t unknown_ctx;         /* calls naming no context (the client makes a new one) */
	uint64_t bad_headers;         /* header MICs that did not check, or no GSS verifier */
	uint64_t bad_bodies;          /* krb5i checksums or krb5p seals that did not check */
	uint64_t seq_drops;           /* calls dropped: a sequence number seen or too old */
};
void svc_gss_stats(struct svc_gss *g, struct gss_stats *out);

/* A DATA call that passed the checks, until its reply is sealed. */
struct gss_call {
	struct gss_ctx *ctx;      /* held; NULL: not an RPCSEC_GSS call */
	uint32_t seq, service;
};

enum gss_call_verdict {
	GSS_CALL_RUN,             /* a DATA call: run the procedure, then gss_call_seal */
	GSS_CALL_ANSWERED,        /* *out is the whole reply (a context's step, DESTROY, an error) */
	GSS_CALL_DROP,            /* no reply: a replayed or stale sequence number */
};

/* call (its cred.flavor RPC_AUTH_GSS) from rec: checked, its args and cred rewritten to the
 * opened body and the principal's user. rec is the record's own memory: a privacy body is
 * decrypted in place. Run in the call's fiber; a context's step waits on the pool. */
enum gss_call_verdict gss_call_accept(struct svc_gss *g, const struct sockaddr_storage *peer,
				      uint8_t *rec, struct rpc_call *call, struct gss_call *gc,
				      struct reply **out);
/* The reply to gc's call given RPCSEC_GSS's verifier and, on success, the body its service
 * asks for; a rejected reply is left as it is. The reply may be replaced (NULL: no memory).
 * The context is let go. */
void gss_call_seal(struct gss_call *gc, struct reply **r);
/* A krb5p DATA call's first *n plaintext bytes (its sequence number, then its arguments; *n
 * lowered to what a small call has) into plain, from call decoded over the first bytes of its
 * record rec, before the record is whole or opened (unchecked: a hint for placing a WRITE,
 * charging a READ: `whole`, whose count lies at the end, see gss_ctx_peek). The index in rec
 * where those bytes will lie once the body is opened, or -1 when they cannot be had. */
long gss_call_peek(struct svc_gss *g, const uint8_t *rec, const struct rpc_call *call,
		   bool whole, uint8_t *plain, size_t *n);
/* gc's context let go without a reply. */
void gss_call_end(struct gss_call *gc);

#endif
