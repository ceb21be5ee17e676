/* Hand-encoded ONC RPC over a plain TCP socket, for what libnfs will not send: malformed
 * records, wrong versions, foreign auth flavors, garbage arguments, other source addresses. */
#ifndef NFSD_UC_IT_RAWRPC_H
#define NFSD_UC_IT_RAWRPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A growing big-endian (XDR) writer. */
struct xb {
	uint8_t buf[8192];
	size_t len;
};
void xb_u32(struct xb *b, uint32_t v);
void xb_u64(struct xb *b, uint64_t v);
void xb_bytes(struct xb *b, const void *p, size_t n);          /* raw, no length, no padding */
void xb_opaque(struct xb *b, const void *p, size_t n);         /* variable-length opaque<> */
void xb_string(struct xb *b, const char *s);

uint32_t get_u32(const uint8_t *p);
void put_u32(uint8_t *p, uint32_t v);     /* big-endian, as get_u32 reads it */

#define RAW_AUTH_NONE 0
#define RAW_AUTH_SYS 1
#define RAW_RPCSEC_GSS 6

/* A call header: xid, CALL, rpcvers, prog, vers, proc, credential (flavor + body), AUTH_NONE
 * verifier. */
void xb_call(struct xb *b, uint32_t xid, uint32_t rpcvers, uint32_t prog, uint32_t vers,
             uint32_t proc, uint32_t flavor, const struct xb *cred);
/* The body of an AUTH_SYS credential for uid/gid and no extra groups. */
void xb_auth_sys(struct xb *cred, uint32_t uid, uint32_t gid);

/* TCP connection to 127.0.0.1:port, from source address src (NULL: any). -1 on failure. */
int raw_connect(uint16_t port, const char *src);
/* Send rec as one record (one fragment marked last). 0 or -1. */
int raw_send_record(int fd, const void *rec, size_t len);
int raw_send_all(int fd, const void *p, size_t len);
/* Receive one whole record (reassembling fragments) into buf. Its length; -1 on error or
 * when the peer closed; -2 on timeout. */
ssize_t raw_recv_record(int fd, uint8_t *buf, size_t cap, int timeout_ms);
/* Wait until the peer closes (EOF or reset): 1, or 0 if it is still open after timeout_ms.
 * Anything received meanwhile is discarded. */
int raw_wait_closed(int fd, int timeout_ms);

/* A decoded reply header. */
struct raw_reply {
	uint32_t xid;
	uint32_t reply_stat;      /* 0 MSG_ACCEPTED, 1 MSG_DENIED */
	uint32_t accept_stat;     /* when accepted */
	uint32_t reject_stat;     /* when denied: 0 RPC_MISMATCH, 1 AUTH_ERROR */
	uint32_t auth_stat;       /* when AUTH_ERROR */
	uint32_t low, high;       /* PROG_MISMATCH / RPC_MISMATCH */
	const uint8_t *body;      /* procedure results, when accepted with SUCCESS */
	size_t body_len;
};
/* 0, or -1 when the record is not a well-formed reply. */
int raw_parse_reply(const uint8_t *rec, size_t len, struct raw_reply *r);

/* Send a call (header + args) and wait for its reply; 0 or -1. reply->body points into buf. */
int raw_call(int fd, const struct xb *call, uint8_t *buf, size_t cap, struct raw_reply *reply);

#endif
