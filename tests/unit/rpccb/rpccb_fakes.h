/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fakes the call engine's tests run against (a portmapper and servers on loopback, UDP and
 * TCP) and the calls' bookkeeping, shared by the test_rpccb binary's sources (rpccb_fakes.c
 * defines them). */
#ifndef RPCCB_FAKES_H
#define RPCCB_FAKES_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "rpc/rpccb.h"

#define NLM_PROG 100021u
#define NLM_VERS 4u
#define NLM_GRANTED_MSG 10u

/* ---- the UDP fakes */

enum fake_kind { FAKE_ECHO, FAKE_PMAP, FAKE_SILENT };
enum fake_answer { ANS_ACCEPT, ANS_DENY_AUTH, ANS_DENY_RPCVERS };

/* One call as the fake decoded it. */
struct seen {
	uint32_t xid, prog, vers, proc, flavor, uid, gid, ngids, verf_flavor;
	bool cred_whole;                        /* the AUTH_SYS body was exactly its length */
	char machname[MAX_MACHINE_NAME + 1];
	uint8_t args[256];
	size_t args_len;
	struct sockaddr_in from;
};

struct fake {
	/* behaviour, set before fake_start */
	enum fake_kind kind;
	enum fake_answer answer;
	uint32_t accept_stat;
	unsigned drop_first;                    /* datagrams dropped before answering */
	uint16_t pmap_answer;                   /* FAKE_PMAP: the port it gives */
	/* running */
	int fd;
	uint16_t port;
	pthread_t thr;
	atomic_bool stop;
	/* what it saw, under mu */
	pthread_mutex_t mu;
	unsigned received, bad;
	uint32_t xids[16];
	struct seen last;
};

/* ---- the TCP fake */

enum tcp_kind { TF_ECHO, TF_CLOSE, TF_SILENT, TF_HUGE };

#define TCP_CONNS_MAX 128

struct tcpfake {
	enum tcp_kind kind;                     /* set before tcpfake_start */
	int lfd;
	uint16_t port;
	pthread_t thr;                          /* accepts; one thread per connection */
	atomic_bool stop;
	pthread_t conns[TCP_CONNS_MAX];         /* the accepting thread's, then tcpfake_stop's */
	unsigned nconns;
	/* what it saw, under mu */
	pthread_mutex_t mu;
	unsigned accepted, received, bad, active, max_active;
	unsigned frags;                         /* of the last call's record */
	uint32_t xids[16];
	struct seen last;
};

/* ---- calls and what their done saw */

struct waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned total;
};

struct job {
	struct waiter *w;
	uint8_t args[16];
	size_t args_len;
	int status;
	unsigned dones;
	bool res_ok;                            /* res was exactly "RES!" and args */
	size_t res_len;
	pthread_t thread;
	/* for the re-entrancy test: how many more calls done makes */
	struct rpccb *e;
	struct rpccb_target t;
	unsigned chain;
	int chain_err;                          /* what rpccb_call from done returned */
};

/* ---- helpers, fakes and calls (rpccb_fakes.c) */

/* libtirpc's xdr_opaque reads a string's padding into one static scratch buffer: the fakes
 * decode credentials one at a time, or ThreadSanitizer sees them race on it. */
extern pthread_mutex_t xdr_scratch;
uint64_t mono_ms(void);
struct sockaddr_storage addr4(const char *ip, uint16_t port);
/* A UDP socket on 127.0.0.1 and an ephemeral port. */
int udp_bound(uint16_t *port);
bool decode_call(const uint8_t *b, size_t n, struct seen *s);
/* The reply header by hand too. ECHO's results are "RES!" and the arguments. */
size_t encode_reply(const struct fake *f, const struct seen *s, uint8_t *buf, size_t cap);
void fake_start(struct fake *f);
void fake_stop(struct fake *f);
unsigned fake_received(struct fake *f);
/* A TCP socket on 127.0.0.1 and an ephemeral port; listening when listen_too. */
int tcp_bound(uint16_t *port, bool listen_too);
void tcpfake_start(struct tcpfake *f);
void tcpfake_stop(struct tcpfake *f);
unsigned tcpfake_received(struct tcpfake *f);
void waiter_init(struct waiter *w);
void waiter_fini(struct waiter *w);
bool wait_total(struct waiter *w, unsigned n, unsigned ms);
void job_done(void *ctx, int status, const uint8_t *res, size_t len);
void job_init(struct job *j, struct waiter *w, uint32_t tag);
/* What most tests begin with: an engine, a waiter and one call of the given tag. */
struct rpccb *engine_and_job(struct waiter *w, struct job *j, uint32_t tag);
struct rpccb_target target(uint16_t port, uint16_t pmap_port, unsigned timeout_ms);
/* One call, waited for: done's status. */
int call_once(struct rpccb *e, const struct rpccb_target *t, struct job *j, struct waiter *w);

/* ---- the tests, listed by test_rpccb.c */

/* test_rpccb_udp.c */
void test_getport_then_call(void **state);
void test_retransmit_same_xid(void **state);
void test_no_server_refused(void **state);
void test_black_hole_timeout(void **state);
void test_getport_zero(void **state);
void test_rpc_errors(void **state);
void test_many_concurrent(void **state);
void test_stop_cancels(void **state);
void test_after(void **state);
void test_reentrant_done(void **state);
void test_bad_calls(void **state);
void test_ipv6_getaddr(void **state);

/* test_rpccb_tcp.c */
void test_tcp_getport_then_call(void **state);
void test_tcp_closed_retried(void **state);
void test_tcp_refused(void **state);
void test_tcp_reply_too_long(void **state);
void test_tcp_many_concurrent(void **state);
void test_tcp_stop_cancels(void **state);

#endif
