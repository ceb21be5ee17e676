/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS contexts (RFC 2203 section 5): made by INIT and CONTINUE_INIT through MIT
 * Kerberos's GSS-API, used by DATA calls, ended by DESTROY or their ticket's end. Once made, a
 * context's tokens are ours (rpc/gss_krb5.h, from the keys MIT's lucid context gives) for the
 * AES enctypes, MIT's for any other. One table for the server: a Linux client that reconnects
 * keeps its context, whichever ring the new connection lands on, so the table is shared, under
 * a mutex, and each context has a lock of its own for its tokens (neither MIT's context nor
 * ours is safe for concurrent use: send sequence number, cipher state) and its window.
 * The rings' side of the protocol is svc/gss_call.c. */
#ifndef NFSD_UC_RPC_GSS_CTX_H
#define NFSD_UC_RPC_GSS_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "rpc/gss.h"
#include "rpc/oncrpc.h"

#define GSS_CTX_HANDLE_LEN 16     /* random: a handle cannot be guessed to hijack a context */
_Static_assert(GSS_CTX_HANDLE_LEN <= GSS_HANDLE_MAX, "our handles are ones we accept");

struct gss_ctx_table;
struct gss_ctx;

/* keytab: the acceptor's keys (every principal in it is accepted, as knfsd's gssproxy does);
 * window: the sequence window told to clients; max contexts in all and per client address;
 * refuse_unmapped: no context for a principal with no local user (gss_ident.h). NULL with err
 * set (the GSS-API's own words) when the keys cannot be had. */
struct gss_ctx_params {
	const char *keytab;
	unsigned window, max, per_client;
	bool refuse_unmapped;
	bool mit_crypto;          /* MIT's GSS-API seals and checks every token, not gss_krb5.h */
};
struct gss_ctx_table *gss_ctx_table_new(const struct gss_ctx_params *p, char *err, size_t errlen);
void gss_ctx_table_free(struct gss_ctx_table *t);


/* What INIT and CONTINUE_INIT answer (rpc_gss_init_res), and the reply's verifier once the
 * context is complete (a MIC of the window). token is malloc'd (gss_init_res_free). */
struct gss_init_res {
	uint8_t handle[GSS_CTX_HANDLE_LEN];
	uint32_t handle_len;      /* 0 when the context failed */
	uint32_t major, minor;
	uint32_t window;
	char principal[256];      /* the client's, once known ("" before): for a refusal's log line */
	uint8_t *token;
	size_t token_len;
	uint8_t verf[GSS_MIC_MAX];
	size_t verf_len;          /* 0 but when major is GSS_S_COMPLETE */
};
void gss_init_res_free(struct gss_init_res *r);

/* One step of making a context: INIT (handle_len 0) or CONTINUE_INIT. Reads the keytab and
 * may block: off the rings. 0 with *res filled (its major says how it went: GSS_S_COMPLETE,
 * GSS_S_CONTINUE_NEEDED, or the failure), or -1 when the call is to be refused outright (no
 * such context to continue, too many contexts: res->major then GSS_S_FAILURE). */
int gss_ctx_accept(struct gss_ctx_table *t, const struct sockaddr_storage *peer,
		   const uint8_t *handle, uint32_t handle_len, const void *token, size_t token_len,
		   struct gss_init_res *res);

/* An established, unexpired context by its handle, held until gss_ctx_put; NULL otherwise
 * (the call then answers RPCSEC_GSS_CREDPROBLEM, and the client makes a new one). */
struct gss_ctx *gss_ctx_get(struct gss_ctx_table *t, const uint8_t *handle, uint32_t handle_len);
/* Let go of a held context, without the table's lock: the last holder frees it. */
void gss_ctx_put(struct gss_ctx *c);
/* The client's principal ("alice@REALM", "nfs/host@REALM"). */
const char *gss_ctx_principal(const struct gss_ctx *c);
/* Whether c's tokens are made and checked by rpc/gss_krb5.h (true) or MIT's GSS-API. */
bool gss_ctx_own_tokens(const struct gss_ctx *c);

/* mic is the context's MIC of msg: a call's verifier (of its header, xid up to the credential's
 * end; checked before the sequence number is taken, so that a forged call cannot use one up),
 * or an integrity body's checksum. 0 or -1. */
int gss_ctx_verify_mic(struct gss_ctx *c, const void *msg, size_t len, const void *mic,
		       size_t mic_len);
/* The context's MIC of the n pieces of v, as one message, into out (an integrity reply's
 * checksum, made over a READ's data where it lies): its length, or -1. */
int gss_ctx_get_mic_iov(struct gss_ctx *c, const struct iovec *v, int n, uint8_t *out, size_t cap);
/* A privacy body's token unwrapped in place: *data points into token. 0, or -1 when it does
 * not check or was not sealed. */
int gss_ctx_unwrap(struct gss_ctx *c, uint8_t *token, size_t len, uint8_t **data, size_t *dlen);
/* Sealing in place (gss_wrap_iov), so that a reply's body is written once and encrypted where
 * it lies: wrap_room gives the token's bytes before len bytes of data and after them; wrap
 * seals data with exactly that room around it (data - head .. data + len + tail is then the
 * token, as gss_wrap would make it). 0 or -1 each; -1 also for a mechanism that pads. */
int gss_ctx_wrap_room(struct gss_ctx *c, size_t len, size_t *head, size_t *tail);
int gss_ctx_wrap(struct gss_ctx *c, uint8_t *data, size_t len, size_t head, size_t tail);
/* The same token sealed from the n pieces of v (their total: wrap_room's len) into out (head +
 * len + tail bytes), the pieces read once: a READ's data from the cache's blocks into the
 * reply, the encryption being the copy. 0, -1, or GSS_CTX_NOT_OWN when c's tokens are MIT's
 * (which seals in place only: copy the pieces and use gss_ctx_wrap). */
#define GSS_CTX_NOT_OWN (-2)
int gss_ctx_wrap_iov_out(struct gss_ctx *c, const struct iovec *v, int n, uint8_t *out);
/* Plaintext bytes [0, *n) of a krb5p body's token into out, before the record is whole:
 * token's first avail bytes are here, len is the whole token's; *n is lowered to what the
 * token has (a small call's). Decrypted WITHOUT checking (a hint, such as a WRITE's offset
 * for placing its record; gss_ctx_unwrap checks the whole later). The offset in the token at
 * which gss_ctx_unwrap will leave the plaintext, or -1 (MIT's tokens, a rotated token, too
 * few bytes here). With `whole` (a READ's count lies in its last bytes) a small token all here
 * is opened in a copy, so its end is had too; without (a WRITE: its offset comes first), only
 * the bytes before the last two cipher blocks, and the token is deciphered once, not twice. */
long gss_ctx_peek(struct gss_ctx *c, const uint8_t *token, size_t len, size_t avail,
		  bool whole, uint8_t *out, size_t *n);
/* The principal's local identity (rpc/gss_ident.h) as the call's credential: cred's flavor
 * becomes RPC_AUTH_GSS; its gss_service is kept. */
void gss_ctx_cred(const struct gss_ctx *c, struct rpc_cred *cred);
/* Its sequence number against the context's window (rpc/gss.h). */
enum gss_seq_verdict gss_ctx_check_seq(struct gss_ctx *c, uint32_t seq);
/* A MIC of the 4-byte big-endian n into out: a DATA reply's verifier (n the call's sequence
 * number) or INIT's (n the window). Its length, or -1 (too small, or the GSS-API failed). */
int gss_ctx_mic_u32(struct gss_ctx *c, uint32_t n, uint8_t *out, size_t cap);

/* DESTROY: the handle names no context from now on (calls holding it finish). 0, or -1 when
 * it named none. */
int gss_ctx_destroy(struct gss_ctx_table *t, const uint8_t *handle, uint32_t handle_len);
/* The GSS-API's words for a status (a refused context's log line). */
void gss_ctx_status_text(uint32_t major, uint32_t minor, char *out, size_t len);
/* Contexts in the table (established or being made). */
unsigned gss_ctx_count(struct gss_ctx_table *t);

#endif
