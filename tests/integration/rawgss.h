/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A raw RPCSEC_GSS version 1 client (RFC 2203; NFS's use of it, RFC 2623) on MIT's GSS-API, over
 * rawrpc's connections: a context made by INIT and CONTINUE_INIT (its verifier, the MIC of the
 * window, checked), DATA calls with the services none, integrity and privacy, their replies'
 * verifiers and bodies checked and unwrapped, DESTROY. A call is sealed in place in any buffer,
 * with the offsets of its parts, so that a test can send it twice byte for byte (a replay), with
 * any sequence number (below the window), or with a byte flipped after signing (tampered), and
 * a load generator (bench/gssload.c) can pipeline 1 MiB WRITEs with no copy of their data.
 * Part of the static library nfsduc_rawrpc (tests/integration/meson.build), with rawrpc.c and
 * rawnfs.c, which it-gss and the bench's GSS tools link. */
#ifndef NFSD_UC_IT_RAWGSS_H
#define NFSD_UC_IT_RAWGSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gssapi/gssapi.h>

#include "rawrpc.h"

enum rg_proc { RG_DATA = 0, RG_INIT = 1, RG_CONTINUE_INIT = 2, RG_DESTROY = 3 };
enum rg_service { RG_NONE = 1, RG_INTEGRITY = 2, RG_PRIVACY = 3 };

/* RFC 2623 2.2: the pseudo-flavors MNT lists. */
#define RG_FLAVOR_KRB5 390003u
#define RG_FLAVOR_KRB5I 390004u
#define RG_FLAVOR_KRB5P 390005u

/* auth_stat values of RPCSEC_GSS (RFC 2203 5.3.3.3) and of RFC 5531. */
#define RG_AUTH_BADCRED 1
#define RG_AUTH_BADVERF 3
#define RG_AUTH_TOOWEAK 5
#define RG_GSS_CREDPROBLEM 13
#define RG_GSS_CTXPROBLEM 14

#define RG_HANDLE_MAX 64

/* One context, as made by rg_establish. */
struct gss_krb5;

struct rg_ctx {
	gss_ctx_id_t gss;         /* MIT's context, until rg_ctx_own */
	struct gss_krb5 *own;     /* nfsd-uc's RFC 4121 tokens on OpenSSL (rpc/gss_krb5.h), or NULL */
	uint8_t handle[RG_HANDLE_MAX];
	uint32_t handle_len;
	uint32_t window;          /* seq_window of the INIT reply */
	uint32_t next_seq;        /* what rg_wrap uses next (starts at 1) */
	uint32_t next_xid;
	uint32_t flags;           /* ret_flags of gss_init_sec_context */
};

/* An initiator credential for user by password (no ticket cache), krb5 only. 0, or -1 with err. */
int rg_cred_password(const char *user, const char *password, gss_cred_id_t *cred, char *err,
                     size_t errlen);

/* An initiator credential for principal ("host/localhost": the default realm's) from the client
 * keytab keytab, its tickets in a memory cache of its own (no file touched), krb5 only. 0, or -1
 * with err. */
int rg_cred_keytab(const char *principal, const char *keytab, gss_cred_id_t *cred, char *err,
                   size_t errlen);

/* Make a context for service (a host-based name, "nfs@localhost") over fd, the NULL procedure of
 * prog/vers carrying INIT and CONTINUE_INIT, with mutual authentication, integrity and
 * confidentiality asked for and required. The INIT reply's verifier must be the MIC of the
 * window. 0, or -1 with err saying what went wrong (the server's reply, or the GSS-API's words). */
int rg_establish(int fd, struct rg_ctx *c, gss_cred_id_t cred, const char *service, uint32_t prog,
                 uint32_t vers, char *err, size_t errlen);
/* The local half only (no DESTROY is sent). */
void rg_ctx_free(struct rg_ctx *c);
/* From here on c's tokens are made and checked by nfsd-uc's own RFC 4121 code on OpenSSL
 * (rpc/gss_krb5.h) with the keys of MIT's context, as a kernel client does its own crypto:
 * for the bench's load generator, whose cryptography would otherwise cost as much CPU as a
 * server's on MIT's built-in code. The tests do not: their client stays MIT's, independent of
 * the server's code. 0, or -1 (the enctype is not ours: c is then unusable). */
int rg_ctx_own(struct rg_ctx *c);

/* A failure's words put in err (errlen bytes): -1, for `return rg_errf(err, errlen, ...)`. */
__attribute__((format(printf, 3, 4)))
int rg_errf(char *err, size_t errlen, const char *fmt, ...);

/* The GSS-API's words for a major status (gss_display_status). */
void rg_major_words(uint32_t major, char *out, size_t len);

/* What an INIT was answered (rpc_gss_init_res), and its reply's verifier. */
struct rg_init_result {
	uint32_t handle_len, major, minor, window, token_len;
	uint32_t verf_flavor, verf_len;
};
/* One INIT with xid to the NULL procedure of prog/vers carrying token as it is (garbage, say),
 * with no context of ours behind it. 0 with *res when the reply was accepted with SUCCESS and
 * holds an rpc_gss_init_res, whatever its major status; -1 with err otherwise. */
int rg_init_raw(int fd, uint32_t xid, uint32_t prog, uint32_t vers, const void *token,
                size_t token_len, struct rg_init_result *res, char *err, size_t errlen);

/* ---- calls sealed and replies opened in the caller's memory, of any size ----
 * A DATA call's arguments are written once where the call is sent from, and checksummed (krb5i)
 * or encrypted (krb5p, gss_wrap_iov) there; a reply's results are checked or decrypted where
 * they were received (gss_unwrap_iov). The load generator bench/gssload.c sends 1 MiB WRITEs so. */

/* Where a call's parts lie in its buffer (0: absent). The caller sets xid .. seq and cap; the
 * rest is set by rg_seal_begin and rg_seal_end. */
struct rg_parts {
	uint32_t xid, prog, vers, proc, gss_proc, service, seq;
	size_t cap;               /* the buffer's size */
	size_t hdr_len;           /* xid .. the credential's end: what the verifier signs */
	size_t seq_off;           /* the credential's seq_num */
	size_t verf_off;          /* the verifier's MIC bytes */
	size_t verf_len;
	size_t body_off;          /* the arguments: plain, rpc_gss_integ_data or rpc_gss_priv_data */
	size_t args_off, args_len; /* the arguments themselves (plain text until sealed) */
	size_t databody_off;      /* integrity: databody_integ's bytes (seq_num, then the arguments) */
	size_t mic_off;           /* integrity: the checksum's bytes */
	size_t wrap_off;          /* privacy: the wrap token's bytes */
	size_t wrap_head, wrap_tail; /* privacy: the token's bytes before seq_num and after the args */
	size_t len;               /* the whole call, once sealed */
};

/* Begin a call of c's context in buf (p->cap bytes) as p's first line says, with args_len bytes
 * of arguments (XDR: a multiple of 4): the header, the credential and the verifier (the MIC of
 * the header) written, room left for the service's wrapping (a DESTROY's void arguments are not
 * wrapped, as Linux sends them). Where the arguments go, or NULL when they do not fit or the
 * GSS-API failed. */
uint8_t *rg_seal_begin(struct rg_ctx *c, uint8_t *buf, struct rg_parts *p, size_t args_len);
/* Seal the arguments written there: the call's length (p->len), or 0 when the GSS-API failed
 * or the checksum does not fit. */
size_t rg_seal_end(struct rg_ctx *c, uint8_t *buf, struct rg_parts *p);
/* plain, a whole call as rawrpc and rawnfs encode it (any flavor), as a DATA call of c with
 * service and sequence number seq, sealed into buf (p->cap bytes): its length, or 0. */
size_t rg_seal_plain(struct rg_ctx *c, const struct xb *plain, uint32_t service, uint32_t seq,
                     uint8_t *buf, struct rg_parts *p);

/* A call encoded whole into a buffer the test owns, so that it can be sent twice byte for byte
 * (a replay), with any sequence number (below the window), or with a byte flipped after signing
 * (tampered). */
struct rg_call {
	struct xb b;
	struct rg_parts p;
};

/* Encode a call of c's context: gss_proc (RG_DATA, RG_DESTROY) with service and sequence number
 * seq, xid, to prog/vers/proc with args (XDR, a multiple of 4 bytes) wrapped by the service.
 * 0, or -1 when the GSS-API failed or the call does not fit. */
int rg_encode(struct rg_ctx *c, struct rg_call *call, uint32_t gss_proc, uint32_t service,
              uint32_t seq, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
              const void *args, size_t args_len);
/* The same program, procedure, xid and arguments as plain (a whole call as rawrpc and rawnfs
 * encode it, any flavor) as a DATA call of c with service and c's next sequence number. */
int rg_wrap(struct rg_ctx *c, const struct xb *plain, uint32_t service, struct rg_call *call);
/* A DATA call of c to prog/vers's NULL procedure with the next sequence number and a fresh xid. */
int rg_null(struct rg_ctx *c, uint32_t prog, uint32_t vers, uint32_t service, struct rg_call *call);
/* DESTROY of c's context (the NULL procedure of prog/vers), next sequence number. */
int rg_destroy_call(struct rg_ctx *c, uint32_t prog, uint32_t vers, struct rg_call *call);

/* A reply, checked against its call. */
struct rg_reply {
	struct raw_reply r;       /* r.body, r.body_len: the results, unwrapped by the service */
	uint32_t verf_flavor;
	bool verf_ok;             /* an RPCSEC_GSS verifier holding the MIC of the call's seq */
	bool body_ok;             /* SUCCESS: integrity's checksum right or privacy's token unwrapped
	                           * with confidentiality, and its seq_num the call's (none: true) */
	uint8_t *rec;             /* the record (malloc'd by rg_recv; the results lie in it) */
};
/* Open rec (len bytes, the reply to a call of c as p says) in place: a krb5p body is decrypted
 * where it lies and r.body points into rec. 0 with *rep filled (rep->rec untouched), -1 when rec
 * is no well-formed reply. */
int rg_reply_open(struct rg_ctx *c, const struct rg_parts *p, uint8_t *rec, size_t len,
                  struct rg_reply *rep);
void rg_reply_free(struct rg_reply *rep);

int rg_send(int fd, const struct rg_call *call);
/* Wait timeout_ms for the reply to call: 0 with *rep (free it), -1 when the connection closed or
 * the record is no reply to call, -2 when none came in time. */
int rg_recv(int fd, struct rg_ctx *c, const struct rg_call *call, struct rg_reply *rep,
            int timeout_ms);
/* Send and receive (10 s). */
int rg_exchange(int fd, struct rg_ctx *c, const struct rg_call *call, struct rg_reply *rep);
/* A reply that says the call went through: accepted, SUCCESS, the verifier and body checked. */
bool rg_reply_good(const struct rg_reply *rep);
/* One line about a reply, for failure messages. */
const char *rg_describe(const struct rg_reply *rep);

#endif
