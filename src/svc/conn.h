/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A TCP connection of a ring, shared by the files that make up the server (private to them):
 * server.c (lifetime, sending, receiving records, the request fiber), accept.c (accepting,
 * connection limits) and recvmem.c (receive memory). Only the owning ring touches one. */
#ifndef NFSD_UC_SVC_CONN_H
#define NFSD_UC_SVC_CONN_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "svc/connlimit.h"
#include "svc/worker.h"
#include "rpc/recasm.h"

#define SBUF_SIZE (64 * 1024)
#define SEC_NS 1000000000ull

/* Why a connection waits for receive memory: its own share, its client's, or all of it. */
enum mem_wait_why { MW_SHARE, MW_CLIENT, MW_ALL };

struct conn {
	struct conn *next, *prev;
	struct worker *w;
	unsigned inflight;            /* its requests running: it is not freed before they end */
	int fd;
	struct sockaddr_storage peer;
	struct sockaddr_storage local;   /* our address the client connected to */
	struct io_op recv_op, send_op;
	bool recv_busy, send_busy, dead;
	bool recv_direct;             /* the pending recv targets the record, not the stream buffer */
	bool big_records;             /* its last record was large: read the next one's head alone */
	bool stalled;                 /* stopped reading because its ring was full */
	bool mem_wait;                /* stopped reading: no receive memory for it (recvmem.c) */
	uint8_t mem_wait_why;         /* ... why: MW_SHARE, MW_CLIENT or MW_ALL (recvmem.c) */
	bool win_charged;             /* the pending direct recv's window is charged (w->nwin) */
	bool revoking;                /* that window is being taken back (its recv cancelled) */
	uint64_t last_rx_ns;          /* when bytes last came (idle_timeout) */
	uint64_t rec_start_ns;        /* since when a record is arriving, 0: none (record_timeout) */
	uint64_t last_tx_ns;          /* when a send last made progress (a client not reading) */
	uint64_t posted_ns;           /* when the pending direct recv was posted */
	/* receive memory (recvmem.c): the record being received (its bytes, and the window of its
	 * pending recv), its records running, its READs' replies running or unsent */
	size_t rec_charged, run_charged, read_charged;
	/* its client address's account: what this connection put in it (its part), and the record
	 * being received at its announced size (its promise) */
	struct climit_client *client;
	size_t client_part, rec_promise;
	size_t win;                   /* its receive window: the most a direct recv asks for */
	/* stream buffer: bytes [head, tail) not yet consumed */
	uint8_t *sbuf;
	size_t head, tail;
	struct recasm ra;             /* the record being put together outside the stream buffer */
	/* replies waiting for the socket; the head one is being sent */
	struct reply *sq_head, *sq_tail;
	size_t sq_bytes;
	struct iovec iov[4];
	struct iovec *iov_big;        /* a reply with many payload iovecs (iov_cap of them) */
	size_t iov_cap;
	struct msghdr msg;
};

static inline bool conn_in_rec(const struct conn *c)
{
	return c->ra.mem != NULL;
}

/* server.c */
void conn_kill(struct conn *c);
void conn_settle(struct conn *c);
void conn_pump(struct conn *c);
void conn_post_recv(struct conn *c);
void conn_on_recv(struct io_op *op, int res);
void conn_on_send(struct io_op *op, int res);
const char *conn_peer_str(const struct sockaddr_storage *s, char a[INET6_ADDRSTRLEN]);

/* accept.c: a connection ring 0 accepted, on the ring it was handed to. */
void conn_open(struct worker *w, int fd, const struct sockaddr_storage *peer,
	       enum climit_verdict verdict);
bool conn_idle(const struct conn *c);
void accept_start(struct worker *w);
void accept_stop(struct worker *w);

/* recvmem.c: receive memory (conf receive_memory, receive_memory_per_connection,
 * receive_memory_per_client) */
/* Charge len bytes (a READ's reply) to the connection, or mark it waiting; force (its first):
 * whatever the bounds say, but its client's share when len is more than a stream buffer. */
bool mem_take(struct conn *c, size_t len, bool force);
/* A record that arrived whole in the stream buffer (len bytes, always taken) or one put
 * together (its rec_charged) becomes a request; and the end of that request. */
void mem_run_begin(struct conn *c, size_t len);
void mem_run_end(struct conn *c, size_t charged);
/* May a large record of promise bytes (its announced size; nothing charged for it yet) begin?
 * Else the connection waits. */
bool mem_may_begin(struct conn *c, size_t promise);
/* May the record being put together take more bytes, charged as they come (from the stream
 * buffer, or a receive window of at most a stream buffer)? Else the connection waits. */
bool mem_rec_grow(struct conn *c);
/* Charge what arrived in the record beyond what was charged. */
void mem_rec_arrived(struct conn *c);
/* The size of the next direct recv into the record, at most left: its window, charged ahead
 * when larger than a stream buffer. 0: the connection waits. */
size_t mem_window(struct conn *c, size_t left);
/* That recv brought got bytes: charge them, give back the rest of the window. */
void mem_window_done(struct conn *c, size_t got);
/* The pending direct recv was cancelled to take its window back (conn.revoking). */
void mem_window_revoked(struct conn *c);
/* The record becomes a request: its charge, now the request's; held: the bytes of its buffer. */
size_t mem_rec_done(struct conn *c, size_t held);
void mem_conn_free(struct conn *c);
/* Bring the client's account up to what the connection holds now (after each of its events). */
void mem_client_sync(struct conn *c);
/* Look again at the ring's connections that wait for memory. */
void mem_retry(struct worker *w);
void mem_ring_stop(struct worker *w);

#endif
