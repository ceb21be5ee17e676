/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS version 1 (RFC 2203), the parts that are bytes and numbers: the credential a call
 * carries, and the window of sequence numbers a context accepts. Pure functions over buffers;
 * the GSS-API calls (context creation, MICs, wrapping) live above, beside the contexts. */
#ifndef NFSD_UC_RPC_GSS_H
#define NFSD_UC_RPC_GSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPC_AUTH_GSS 6
#define RPCSEC_GSS_VERS_1 1
/* Sequence numbers from here on end the context (RFC 2203 5.3.3.1: RPCSEC_GSS_CTXPROBLEM). */
#define GSS_MAXSEQ 0x80000000u
/* A context handle is the server's to choose; ours are short, and a longer one is no handle of
 * ours (RFC 2203 sets no bound: the credential's own 400 bytes are the only one). */
#define GSS_HANDLE_MAX 32

enum gss_proc { GSS_PROC_DATA = 0, GSS_PROC_INIT = 1, GSS_PROC_CONTINUE_INIT = 2,
		GSS_PROC_DESTROY = 3 };
enum gss_service { GSS_SVC_NONE = 1, GSS_SVC_INTEGRITY = 2, GSS_SVC_PRIVACY = 3 };

/* rpc_gss_cred_vers_1_t; handle points into the body it was decoded from. */
struct gss_cred {
	uint32_t proc;            /* enum gss_proc */
	uint32_t seq;
	uint32_t service;         /* enum gss_service */
	const uint8_t *handle;
	uint32_t handle_len;
};

/* What a credential says is wrong with it, as the reply must say it (RFC 2203 5.3.3.3). */
enum gss_cred_verdict {
	GSS_CRED_OK = 0,
	GSS_CRED_BAD,             /* malformed, or an unknown proc or service: AUTH_BADCRED */
	GSS_CRED_VERSION,         /* not version 1: AUTH_BADCRED as well, but worth counting apart */
};

/* The credential body of a call whose flavor is RPC_AUTH_GSS: every byte of it used, handles
 * no longer than GSS_HANDLE_MAX, INIT and CONTINUE_INIT only in their own shapes. */
enum gss_cred_verdict gss_cred_decode(const uint8_t *body, uint32_t len, struct gss_cred *c);

/* A DATA call's arguments by its service (RFC 2203 5.3.2.2, 5.3.2.3), split without their
 * cryptography: rpc_gss_integ_data's body (seq_num + arguments) and checksum, each in place;
 * rpc_gss_priv_data's sealed token. False when the bytes are not that shape (or an integrity
 * body is too short to hold its sequence number, or its checksum is longer than a MIC can be). */
/* A MIC token of krb5 (RFC 4121: 16 bytes of header, 12 or 16 of checksum) fits with room. */
#define GSS_MIC_MAX 128
bool gss_integ_split(const uint8_t *args, size_t len, const uint8_t **body, uint32_t *body_len,
		     const uint8_t **mic, uint32_t *mic_len);
bool gss_priv_split(const uint8_t *args, size_t len, const uint8_t **tok, uint32_t *tok_len);

/* RFC 2203 5.3.3.1: a context accepts each sequence number once, and none below a window under
 * the highest seen; anything else is dropped without a reply (the client retransmits with a new
 * number). The window's size is what INIT told the client (gr_win). Owned by the context: the
 * caller serialises calls to it. */
#define GSS_SEQWIN_MAX 1024
struct gss_seqwin {
	uint32_t size;            /* a power of two, at most GSS_SEQWIN_MAX */
	uint32_t top;             /* the highest number accepted */
	bool any;                 /* a number was accepted */
	uint64_t seen[GSS_SEQWIN_MAX / 64];   /* bit (seq % size): seq in (top - size, top] seen */
};

enum gss_seq_verdict {
	GSS_SEQ_OK = 0,           /* new: go on with the call */
	GSS_SEQ_REPLAY,           /* seen already: drop */
	GSS_SEQ_OLD,              /* below the window: drop */
	GSS_SEQ_CTXPROBLEM,       /* at or past GSS_MAXSEQ: the context is used up */
};

/* size is rounded down to a power of two in 1..GSS_SEQWIN_MAX. */
void gss_seqwin_init(struct gss_seqwin *w, uint32_t size);
enum gss_seq_verdict gss_seqwin_accept(struct gss_seqwin *w, uint32_t seq);

#endif
