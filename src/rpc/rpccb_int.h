/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the call engine (rpccb.h): its calls and timers, and what its three files share:
 * rpccb.c (the engine thread, a call's life over UDP, the API), rpccb_msg.c (the calls and
 * replies as bytes: the call header, GETPORT and GETADDR, the reply's status), rpccb_tcp.c (the
 * call stage over TCP). Everything here runs on the engine thread but the inbox. */
#ifndef NFSD_UC_RPC_RPCCB_INT_H
#define NFSD_UC_RPC_RPCCB_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "rpc/rpccb.h"

#define RTO_FIRST_MS 500u
#define RTO_MAX_MS 4000u
#define RESV_LOW 600u                          /* knfsd's and bindresvport's range */
#define RESV_HIGH 1023u
#define RX_MAX 65536u                          /* any UDP datagram */
#define RM_LAST 0x80000000u                    /* record mark: last fragment (the rest: length) */
#define EVENTS_MAX 64
#define RECV_BURST 64                          /* datagrams per readiness: fairness */
/* The call header: xid, direction, rpcvers, prog, vers, proc; cred and verf (flavor, length,
 * body). */
#define HDR_MAX (6 * 4 + 2 * (8 + MAX_AUTH_BYTES))

#define container_of(p, type, member) ((type *)(void *)((char *)(p) - offsetof(type, member)))

/* A deadline on the engine's timer list. */
struct tnode {
	struct tnode *prev, *next;
	uint64_t when_ms;
	bool queued;
	void (*fire)(struct rpccb *e, struct tnode *n);
};

enum stage { ST_GETPORT, ST_CALL };

/* The TCP call stage's connection. */
enum tphase { TP_DOWN, TP_CONNECTING, TP_SENDING, TP_AWAITING };

_Static_assert(RPCCB_TCP_REPLY_MAX <= RX_MAX, "a TCP reply is handed over in the receive buffer");

struct call {
	struct call *next;                     /* the inbox, until the engine takes it */
	struct tnode tn;                       /* next retransmission, or the deadline */
	struct rpccb_target t;
	rpccb_done_fn *done;
	void *ctx;
	int fd;                                /* -1 until the engine opens it */
	enum stage st;
	uint32_t xid;                          /* of the current stage */
	uint64_t deadline_ms;
	unsigned rto_ms;
	bool refused;                          /* ICMP port unreachable during this stage */
	struct sockaddr_storage peer;          /* where the current stage goes */
	uint8_t *pkt;                          /* the current stage's datagram, for retransmission;
						* over TCP the call's record, mark included */
	size_t pkt_len;
	/* TCP, the call stage */
	enum tphase tp;
	int tfail;                             /* the deadline's status: -ETIMEDOUT, or how the
						* last connection to fail failed */
	size_t tx_off;                         /* of pkt, sent on this connection */
	uint8_t mark[4];                       /* the fragment mark being read */
	unsigned mark_got;                     /* 4: reading the fragment's bytes */
	bool frag_last;
	size_t frag_left;
	uint8_t *rbuf;                         /* the reply record so far */
	size_t rlen, rcap;
	size_t args_len;
	uint8_t args[];
};

struct utimer {
	struct utimer *next;                   /* the inbox */
	struct tnode tn;
	void (*fn)(void *ctx);
	void *ctx;
};

struct rpccb {
	pthread_t thr;
	int epfd, evfd, tfd;
	pthread_mutex_t mu;                    /* the inbox and stopping */
	struct call *in_calls;                 /* newest first */
	struct utimer *in_timers;
	bool stopping;
	/* The engine thread's own. */
	struct tnode timers;                   /* sentinel of the list, by when_ms */
	uint64_t armed_ms;                     /* what the timerfd is set to; 0: disarmed */
	uint32_t xid;
	uint64_t rng;
	char host[MAX_MACHINE_NAME + 1];
	_Atomic uint64_t started, ok, timeouts, errors, cancelled;
	uint8_t rx[RX_MAX];
};

/* rpccb.c: the engine's own. */
uint64_t cb_now_ms(void);
socklen_t cb_sa_len(int family);
void cb_sa_set_port(struct sockaddr_storage *a, uint16_t port);
/* n on the timer list at when_ms (taken off where it was). */
void cb_tl_insert(struct rpccb *e, struct tnode *n, uint64_t when_ms);
/* The call ends with status (and, on success, the result's bytes): its callback runs. */
void cb_finish(struct rpccb *e, struct call *c, int status, const uint8_t *res, size_t len);
/* Its next retransmission, or its deadline, on the timer list. */
void cb_schedule(struct rpccb *e, struct call *c, uint64_t now);
/* Bind a call's socket where its target says (its source address, a reserved port). */
int cb_bind_src(struct rpccb *e, int fd, const struct rpccb_target *t);
/* A reply of n bytes in e->rx for c: true when it ended the stage. */
bool cb_on_datagram(struct rpccb *e, struct call *c, size_t n);

/* rpccb_msg.c */
int cb_encode_call(struct rpccb *e, struct call *c, uint32_t prog, uint32_t vers, uint32_t proc,
		   const void *args, size_t args_len, bool rm);
int cb_encode_getport(struct rpccb *e, struct call *c);
int cb_decode_reply(uint8_t *rx, size_t n, size_t *off);
int cb_getport_answer(const struct call *c, const uint8_t *res, size_t len);

/* rpccb_tcp.c */
int cb_begin_tcp(struct rpccb *e, struct call *c, uint16_t port);
void cb_tcp_reconnect(struct rpccb *e, struct call *c);
void cb_tcp_event(struct rpccb *e, struct call *c, uint32_t events);

#endif
