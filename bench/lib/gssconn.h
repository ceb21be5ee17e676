/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gssconn: one TCP connection to an NFSv3 server with an RPCSEC_GSS context of its own, and
 * calls pipelined on it, for bench/gssload.c (libnfs, the other load generators' client, has no
 * Kerberos). The context is made by tests/integration/rawgss.c (INIT over the blocking socket);
 * then the socket is non-blocking and each call goes out of a slot of its own: sealed in place
 * in the slot's buffer (a WRITE's data written there once and checksummed or encrypted there),
 * sent whole as one record, its reply received into the connection's buffer, matched to its slot
 * by xid and opened in place (verifier, checksum, decryption: rawgss.c's rg_reply_open). */
#ifndef NFSBENCH_GSSCONN_H
#define NFSBENCH_GSSCONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rawgss.h"
#include "rawnfs.h"

#define GC_NFS_PROG 100003u

/* One call's place: its buffer (the record mark, then the call) and what it is for. */
struct gslot {
	uint8_t *buf;
	struct rg_parts parts;    /* parts.cap: the room after the record mark */
	bool busy;
	/* the caller's: what the call asked */
	int kind;
	uint64_t off;
	uint32_t len;
};

struct gconn {
	int fd;
	unsigned id;
	struct rg_ctx ctx;
	uint32_t service;         /* RG_NONE, RG_INTEGRITY, RG_PRIVACY: every DATA call's */
	struct gslot *slots;
	unsigned nslots, inflight;
	size_t slot_cap;
	/* slots sealed and waiting to go out, oldest first; sent: bytes of the first one gone */
	struct gslot **sendq;
	unsigned sq_head, sq_len;
	size_t sent;
	/* the record being received: a fragment's mark, or in_frag and how much of it is to come */
	uint8_t mark[4];
	size_t mark_got, frag_left;
	bool in_frag, last_frag;
	uint8_t *rbuf;
	size_t rcap, rlen;
};

/* The answer to one call, opened: rep.r.body holds the results (pointing into the connection's
 * buffer, valid until the callback returns). */
typedef void gc_reply_fn(struct gconn *c, struct gslot *s, struct rg_reply *rep, void *arg);

/* Connect to host:port (IPv4 or IPv6 literal), make a context with cred for target (a host-based
 * service name, "nfs@localhost") on NFS version 3, and ready nslots slots of slot_cap bytes
 * (a call's arguments and the RPC and GSS around them) and a reply buffer of reply_cap. 0, or -1
 * with err. */
int gc_open(struct gconn *c, const char *host, int port, gss_cred_id_t cred, const char *target,
            uint32_t service, unsigned nslots, size_t slot_cap, size_t reply_cap, char *err,
            size_t errlen);
/* DESTROY the context when no call is in flight (its reply awaited 10 s, whatever it says),
 * close, free. */
void gc_close(struct gconn *c);

/* A slot with no call in it, or NULL. */
struct gslot *gc_free_slot(struct gconn *c);
/* Begin an NFSv3 call proc in s with args_len bytes of arguments (XDR), the connection's service
 * and the context's next sequence number and xid: where the arguments go, or NULL. */
uint8_t *gc_begin(struct gconn *c, struct gslot *s, uint32_t proc, size_t args_len);
/* Seal the call begun in s and queue it (and send what the socket takes now). 0 or -1. */
int gc_queue(struct gconn *c, struct gslot *s);
/* A whole call encoded by rawnfs (its xid the context's next one: gc_next_xid) sealed in s and
 * queued. 0 or -1. */
int gc_queue_plain(struct gconn *c, struct gslot *s, const struct xb *plain);
uint32_t gc_next_xid(struct gconn *c);

/* The poll events the connection waits for. */
short gc_events(const struct gconn *c);
/* Send what is queued and receive what has come, calling fn for each reply (its slot is free
 * again after fn returns). 0, or -1 with err (connection lost, a reply to no call, a reply that
 * does not parse). */
int gc_service(struct gconn *c, gc_reply_fn *fn, void *arg, char *err, size_t errlen);

/* One call and its reply, the socket blocking meanwhile (set-up, checks): plain (rawnfs's) sealed
 * with the connection's service, the reply opened into *rep (free it with rg_reply_free). 0, or
 * -1 when nothing came back; rg_reply_good says whether it went through. No calls may be in
 * flight. */
int gc_call_sync(struct gconn *c, const struct xb *plain, struct rg_reply *rep);

#endif
