/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server->client call engine (rpccb.h). One thread owns every call and timer; other
 * threads only push onto an inbox under a mutex and poke an eventfd. The thread sleeps in
 * epoll_wait on that eventfd, one timerfd (armed at the earliest deadline) and the socket of
 * each call in flight, so nothing blocks on a peer: a call is a record moved from stage to stage
 * by its socket's readiness and its deadlines. A call has one socket at a time.
 *
 * A call's life: its socket is created and bound on the engine thread; GETPORT (unless the
 * target names a port) goes to the portmapper, then the socket is connect()ed anew to the port
 * it gave and the call itself goes out. Each stage has its own xid and is retransmitted with
 * that xid at 500 ms, 1 s, 2 s, 4 s, 4 s, ... until the call's total deadline. A live call is
 * always on the timer list (its next retransmission, or its deadline), which is also how
 * rpccb_stop() finds the calls to cancel.
 *
 * Over TCP the call stage has a socket of its own (GETPORT's UDP socket is closed once it has
 * answered), which goes through connecting -> sending the record -> reading the reply record,
 * with the deadline on the timer list; a connection that fails is closed and the timer set for
 * the next attempt (down), which opens a new socket and sends the same record again. Reads and
 * writes go as far as the socket lets them and resume on EPOLLIN / EPOLLOUT; the reply's
 * fragments are gathered in a buffer of the call's own, grown as their marks announce them.
 *
 * PMAP v2 is what rpcbind answers over IPv4; it serves it over IPv4 transports only, so an IPv6
 * target should come with its port (statd's and lockd's callers know it from the client's
 * SM_MON/lock call, or ask over IPv4). */
#include "rpc/rpccb.h"
#include "rpc/uaddr.h"

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>
#include <rpc/pmap_prot.h>

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

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* xorshift64*: the reserved-port probe only needs to spread calls over the range. */
static uint32_t rng_next(struct rpccb *e)
{
	e->rng ^= e->rng >> 12;
	e->rng ^= e->rng << 25;
	e->rng ^= e->rng >> 27;
	return (uint32_t)((e->rng * 0x2545F4914F6CDD1Dull) >> 32);
}

/* ---- the timer list: sorted by deadline. New deadlines are mostly the latest (now + a
 * retransmission interval), so inserting from the tail is O(1) in the common case, and the list
 * needs no allocation: a timer can always be queued. */

static struct tnode *tl_first(struct rpccb *e)
{
	return e->timers.next == &e->timers ? NULL : e->timers.next;
}

static void tl_remove(struct tnode *n)
{
	if (!n->queued)
		return;
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->queued = false;
}

static void tl_insert(struct rpccb *e, struct tnode *n, uint64_t when_ms)
{
	tl_remove(n);
	struct tnode *at = e->timers.prev;
	while (at != &e->timers && at->when_ms > when_ms)
		at = at->prev;
	n->when_ms = when_ms;
	n->prev = at;
	n->next = at->next;
	at->next->prev = n;
	at->next = n;
	n->queued = true;
}

/* Point the timerfd at the earliest deadline (absolute, so a late wakeup cannot push it back). */
static void arm_timer(struct rpccb *e)
{
	struct tnode *n = tl_first(e);
	uint64_t want = n ? n->when_ms : 0;
	if (want == e->armed_ms)
		return;
	struct itimerspec its = {0};
	its.it_value.tv_sec = (time_t)(want / 1000u);
	its.it_value.tv_nsec = (long)(want % 1000u) * 1000000L;
	if (timerfd_settime(e->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		e->armed_ms = want;
}

/* ---- addresses */

static socklen_t sa_len(int family)
{
	return family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

static void sa_set_port(struct sockaddr_storage *a, uint16_t port)
{
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
}

static bool sa_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
	return x->sin6_port == y->sin6_port &&
	       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
}

/* ---- encoding */

/* The whole call datagram: header by xdr_callmsg (AUTH_SYS root credential encoded by
 * xdr_authunix_parms, AUTH_NONE verifier), then the arguments as given. With rm, as one TCP
 * record: the mark of its only (last) fragment first. */
static int encode_call(struct rpccb *e, struct call *c, uint32_t prog, uint32_t vers,
		       uint32_t proc, const void *args, size_t args_len, bool rm)
{
	char cred[MAX_AUTH_BYTES], verf[4];
	struct authunix_parms aup = {.aup_time = (u_long)time(NULL), .aup_machname = e->host};
	XDR x;
	xdrmem_create(&x, cred, sizeof cred, XDR_ENCODE);
	bool ok = xdr_authunix_parms(&x, &aup);
	u_int cred_len = xdr_getpos(&x);
	xdr_destroy(&x);
	if (!ok)
		return -EINVAL;
	size_t lead = rm ? 4 : 0, cap = lead + HDR_MAX + args_len;
	uint8_t *p = malloc(cap);
	if (!p)
		return -ENOMEM;
	struct rpc_msg m = {
		.rm_xid = c->xid, .rm_direction = CALL,
		.rm_call = {.cb_rpcvers = RPC_MSG_VERSION, .cb_prog = prog, .cb_vers = vers,
			    .cb_proc = proc,
			    .cb_cred = {.oa_flavor = AUTH_SYS, .oa_base = cred, .oa_length = cred_len},
			    .cb_verf = {.oa_flavor = AUTH_NONE, .oa_base = verf, .oa_length = 0}},
	};
	xdrmem_create(&x, (char *)p + lead, (u_int)(cap - lead), XDR_ENCODE);
	ok = xdr_callmsg(&x, &m);
	size_t hdr = xdr_getpos(&x);
	xdr_destroy(&x);
	if (!ok) {
		free(p);
		return -EINVAL;
	}
	if (args_len)
		memcpy(p + lead + hdr, args, args_len);
	if (rm) {
		uint32_t mark = htonl(RM_LAST | (uint32_t)(hdr + args_len));
		memcpy(p, &mark, 4);
	}
	free(c->pkt);
	c->pkt = p;
	c->pkt_len = lead + hdr + args_len;
	return 0;
}

/* PMAP v2 (GETPORT) is IPv4's protocol: an IPv6 client's portmapper is asked RPCBIND v4's
 * GETADDR instead (RFC 1833), for the udp6 or tcp6 address. */
static bool wants_getaddr(const struct call *c)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&c->t.host;
	return c->t.host.ss_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr);
}

/* RPCBPROC_GETADDR {prog, vers, "udp6" or "tcp6", "", ""}. */
static int encode_getaddr(struct rpccb *e, struct call *c)
{
	char a[64], empty[] = "";
	RPCB r = {.r_prog = c->t.prog, .r_vers = c->t.vers,
		  .r_netid = c->t.proto == IPPROTO_TCP ? "tcp6" : "udp6", .r_addr = empty,
		  .r_owner = empty};
	XDR x;
	xdrmem_create(&x, a, sizeof a, XDR_ENCODE);
	bool ok = xdr_rpcb(&x, &r);
	u_int len = xdr_getpos(&x);
	xdr_destroy(&x);
	if (!ok)
		return -EINVAL;
	return encode_call(e, c, RPCBPROG, RPCBVERS4, RPCBPROC_GETADDR, a, len, false);
}

/* PMAPPROC_GETPORT {prog, vers, UDP or TCP, 0}. */
static int encode_getport(struct rpccb *e, struct call *c)
{
	if (wants_getaddr(c))
		return encode_getaddr(e, c);
	char a[16];
	struct pmap pm = {.pm_prog = c->t.prog, .pm_vers = c->t.vers,
			  .pm_prot = (u_long)c->t.proto};
	XDR x;
	xdrmem_create(&x, a, sizeof a, XDR_ENCODE);
	bool ok = xdr_pmap(&x, &pm);
	xdr_destroy(&x);
	if (!ok)
		return -EINVAL;
	return encode_call(e, c, PMAPPROG, PMAPVERS, PMAPPROC_GETPORT, a, sizeof a, false);
}

/* ---- decoding */

/* Stands in for the results' XDR routine: leaves them undecoded, so the position after
 * xdr_replymsg is where they start. */
static bool_t results_stay(XDR *x, ...)
{
	(void)x;
	return TRUE;
}

/* The status of a reply whose header decoded (the mapping documented in rpccb.h). */
static int reply_status(const struct rpc_msg *m)
{
	if (m->rm_reply.rp_stat == MSG_DENIED)
		return m->rjcted_rply.rj_stat == AUTH_ERROR ? -EACCES :
		       m->rjcted_rply.rj_stat == RPC_MISMATCH ? -EPROTO : -EBADMSG;
	if (m->rm_reply.rp_stat != MSG_ACCEPTED)
		return -EBADMSG;
	switch (m->acpted_rply.ar_stat) {
	case SUCCESS: return 0;
	case PROG_UNAVAIL: return -EPFNOSUPPORT;
	case PROG_MISMATCH: return -EPROTONOSUPPORT;
	case PROC_UNAVAIL: return -EOPNOTSUPP;
	case GARBAGE_ARGS: return -EIO;
	case SYSTEM_ERR: return -EREMOTEIO;
	}
	return -EBADMSG;
}

/* Decode the reply header in rx[0..n). Its status, and *off where the results start. */
static int decode_reply(uint8_t *rx, size_t n, size_t *off)
{
	char verf[MAX_AUTH_BYTES];             /* so xdr_opaque_auth does not allocate */
	struct rpc_msg m;
	memset(&m, 0, sizeof m);
	m.acpted_rply.ar_verf.oa_base = verf;
	m.acpted_rply.ar_results.where = NULL;
	m.acpted_rply.ar_results.proc = results_stay;
	XDR x;
	xdrmem_create(&x, (char *)rx, (u_int)n, XDR_DECODE);
	bool ok = xdr_replymsg(&x, &m);
	*off = xdr_getpos(&x);
	xdr_destroy(&x);
	return ok ? reply_status(&m) : -EBADMSG;
}

/* The port of GETADDR's universal address "x:...:y.p1.p2" ("" when not registered). */
static int getaddr_answer(const uint8_t *res, size_t len)
{
	/* By hand, not xdr_string: libtirpc reads a string's padding into one static buffer, which
	 * other threads' decoders share (a race ThreadSanitizer reports, harmless but noisy). */
	char buf[128], *uaddr = buf;
	u_int n = 0;
	XDR x;
	xdrmem_create(&x, (char *)(uintptr_t)res, (u_int)len, XDR_DECODE);
	bool ok = xdr_u_int(&x, &n) && n < sizeof buf && 4 + (size_t)n <= len;
	xdr_destroy(&x);
	if (!ok)
		return -EBADMSG;
	memcpy(buf, res + 4, n);
	buf[n] = '\0';
	if (!*uaddr)
		return -ENOENT;
	struct sockaddr_storage ss;
	if (!uaddr_parse(uaddr, &ss))
		return -EBADMSG;
	uint16_t port = ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port;
	return port ? ntohs(port) : -EBADMSG;
}

/* The port in a GETPORT answer, or -errno. */
static int getport_answer(const struct call *c, const uint8_t *res, size_t len)
{
	if (wants_getaddr(c))
		return getaddr_answer(res, len);
	u_int port = 0;
	XDR x;
	xdrmem_create(&x, (char *)(uintptr_t)res, (u_int)len, XDR_DECODE);
	bool ok = xdr_u_int(&x, &port);
	xdr_destroy(&x);
	if (!ok || port > 65535)
		return -EBADMSG;
	return port ? (int)port : -ENOENT;
}

/* ---- a call's life */

static void call_fire(struct rpccb *e, struct tnode *n);
static int begin_tcp(struct rpccb *e, struct call *c, uint16_t port);
static void tcp_reconnect(struct rpccb *e, struct call *c);

/* The call itself goes over TCP (GETPORT always goes over UDP). */
static bool tcp_stage(const struct call *c)
{
	return c->t.proto == IPPROTO_TCP && c->st == ST_CALL;
}

static void count_end(struct rpccb *e, int status)
{
	_Atomic uint64_t *ctr = status == 0 ? &e->ok :
				status == -ETIMEDOUT || status == -ECONNREFUSED ||
				status == -ECONNRESET ? &e->timeouts :
				status == -ECANCELED ? &e->cancelled : &e->errors;
	atomic_fetch_add_explicit(ctr, 1, memory_order_relaxed);
}

/* End the call: free it first, so that done may queue new calls (or be the last user of ctx),
 * then tell the caller. res, if any, points into the engine's receive buffer, not the call. */
static void finish(struct rpccb *e, struct call *c, int status, const uint8_t *res, size_t len)
{
	rpccb_done_fn *done = c->done;
	void *ctx = c->ctx;
	tl_remove(&c->tn);
	if (c->fd >= 0)
		close(c->fd);                  /* which also takes it out of the epoll set */
	free(c->pkt);
	free(c->rbuf);
	free(c);
	count_end(e, status);
	done(ctx, status, res, len);
}

/* A send that fails is not fatal: the retransmission timer tries again. A pending ICMP error is
 * reported (and cleared) by the send itself, which then sent nothing: note it and send again. */
static void send_pkt(struct call *c)
{
	for (int i = 0; i < 2; i++) {
		if (send(c->fd, c->pkt, c->pkt_len, 0) >= 0 || errno != ECONNREFUSED)
			return;
		c->refused = true;
	}
}

static void schedule(struct rpccb *e, struct call *c, uint64_t now)
{
	uint64_t next = now + c->rto_ms;
	tl_insert(e, &c->tn, next < c->deadline_ms ? next : c->deadline_ms);
}

/* Send a stage's first datagram to host:port, from a socket connect()ed there so only that
 * peer's datagrams (and ICMP errors) reach it. */
static int begin_stage(struct rpccb *e, struct call *c, enum stage st, uint16_t port)
{
	c->peer = c->t.host;
	sa_set_port(&c->peer, port);
	if (connect(c->fd, (struct sockaddr *)&c->peer, sa_len(c->peer.ss_family)) < 0)
		return -errno;
	c->st = st;
	c->xid = e->xid++;
	int err = st == ST_GETPORT ? encode_getport(e, c) :
		  encode_call(e, c, c->t.prog, c->t.vers, c->t.proc, c->args, c->args_len, false);
	if (err)
		return err;
	c->refused = false;
	c->rto_ms = RTO_FIRST_MS;
	send_pkt(c);
	schedule(e, c, now_ms());
	return 0;
}

/* Retransmission, reconnection (TCP) or deadline. */
static void call_fire(struct rpccb *e, struct tnode *n)
{
	struct call *c = container_of(n, struct call, tn);
	uint64_t now = now_ms();
	bool tcp = tcp_stage(c);
	if (now >= c->deadline_ms) {
		finish(e, c, tcp ? c->tfail : c->refused ? -ECONNREFUSED : -ETIMEDOUT, NULL, 0);
		return;
	}
	if (tcp) {                             /* a live connection's timer is the deadline */
		tcp_reconnect(e, c);
		return;
	}
	send_pkt(c);
	c->rto_ms = c->rto_ms * 2 < RTO_MAX_MS ? c->rto_ms * 2 : RTO_MAX_MS;
	schedule(e, c, now);
}

/* A reserved port, probed from a random start as bindresvport does (whose own state is a
 * process-wide static). 0, -EADDRINUSE when the range is full, or the error that says this
 * process may not have one (EACCES). */
static int bind_reserved(struct rpccb *e, int fd, struct sockaddr_storage *a)
{
	unsigned n = RESV_HIGH - RESV_LOW + 1, first = rng_next(e) % n;
	for (unsigned i = 0; i < n; i++) {
		sa_set_port(a, (uint16_t)(RESV_LOW + (first + i) % n));
		if (bind(fd, (struct sockaddr *)a, sa_len(a->ss_family)) == 0)
			return 0;
		if (errno != EADDRINUSE)
			return -errno;
	}
	return -EADDRINUSE;
}

/* Bind to the target's source address (Linux's lockd matches a GRANTED callback's source with
 * the server it locked with), on a reserved port when this process may have one (root, or
 * CAP_NET_BIND_SERVICE: rather than guessing from the euid, the first EACCES says no), else on
 * any port. */
static int bind_src(struct rpccb *e, int fd, const struct rpccb_target *t)
{
	struct sockaddr_storage a;
	if (t->src.ss_family == AF_UNSPEC) {
		memset(&a, 0, sizeof a);       /* INADDR_ANY and in6addr_any are all zeros */
		a.ss_family = t->host.ss_family;
	} else {
		a = t->src;
	}
	if (bind_reserved(e, fd, &a) == 0)
		return 0;
	sa_set_port(&a, 0);
	return bind(fd, (struct sockaddr *)&a, sa_len(a.ss_family)) < 0 ? -errno : 0;
}

static int open_socket(struct rpccb *e, struct call *c)
{
	c->fd = socket(c->t.host.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (c->fd < 0)
		return -errno;
	int err = bind_src(e, c->fd, &c->t);
	if (err)
		return err;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
	return epoll_ctl(e->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0 ? -errno : 0;
}

static void start_call(struct rpccb *e, struct call *c)
{
	c->tn.fire = call_fire;
	int err;
	if (c->t.proto == IPPROTO_TCP && c->t.port) {
		err = begin_tcp(e, c, c->t.port);
	} else {
		err = open_socket(e, c);
		if (!err)
			err = c->t.port ? begin_stage(e, c, ST_CALL, c->t.port) :
			      begin_stage(e, c, ST_GETPORT,
					  c->t.pmap_port ? c->t.pmap_port : PMAP_PORT);
	}
	if (err)
		finish(e, c, err, NULL, 0);
}

/* A reply in e->rx[0..n): a datagram from the current stage's peer, or (TCP) a whole record.
 * false when the call ended or changed stage (stop reading for now: the socket stays readable
 * if more is queued; after GETPORT over TCP it is not the same socket). */
static bool on_datagram(struct rpccb *e, struct call *c, size_t n)
{
	uint32_t xid;
	if (n < 8)
		return true;
	memcpy(&xid, e->rx, 4);
	if (ntohl(xid) != c->xid)
		return true;                   /* an earlier stage's, or a stray */
	size_t off;
	int st = decode_reply(e->rx, n, &off);
	if (st == 0 && c->st == ST_GETPORT) {
		int port = getport_answer(c, e->rx + off, n - off);
		st = port < 0 ? port :
		     c->t.proto == IPPROTO_TCP ? begin_tcp(e, c, (uint16_t)port) :
		     begin_stage(e, c, ST_CALL, (uint16_t)port);
		if (st == 0)
			return false;
	}
	finish(e, c, st, st == 0 ? e->rx + off : NULL, st == 0 ? n - off : 0);
	return false;
}

static void call_readable(struct rpccb *e, struct call *c)
{
	for (int i = 0; i < RECV_BURST; i++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof from;
		ssize_t n = recvfrom(c->fd, e->rx, sizeof e->rx, 0, (struct sockaddr *)&from, &fl);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/* ICMP errors are reported once each (and cleared): keep reading. */
			if (errno == ECONNREFUSED)
				c->refused = true;
			continue;
		}
		if (sa_same(&from, &c->peer) && !on_datagram(e, c, (size_t)n))
			return;
	}
}

/* ---- TCP: the call stage over a connection */

/* How a failed connection ends the call if the deadline passes before a reply. */
static int tcp_fail_status(int err)
{
	switch (err) {
	case ECONNREFUSED:
		return -ECONNREFUSED;
	case ECONNRESET:
	case ECONNABORTED:
	case EPIPE:
		return -ECONNRESET;
	}
	return -ETIMEDOUT;                     /* EHOSTUNREACH, ENETUNREACH, ETIMEDOUT, ... */
}

/* The connection failed (err; 0: the peer closed it before the reply): close it and try again
 * after the backoff, which the deadline may cut short. */
static void tcp_down(struct rpccb *e, struct call *c, int err)
{
	close(c->fd);
	c->fd = -1;
	c->tp = TP_DOWN;
	c->tfail = tcp_fail_status(err ? err : ECONNRESET);
	schedule(e, c, now_ms());
	c->rto_ms = c->rto_ms * 2 < RTO_MAX_MS ? c->rto_ms * 2 : RTO_MAX_MS;
}

/* A new connection to c->peer from the source address; the record goes out once it is up, and
 * the deadline is the call's timer meanwhile. 0 (connecting, or down again at once: refused),
 * or -errno when the socket could not be set up. */
static int tcp_connect(struct rpccb *e, struct call *c)
{
	c->fd = socket(c->peer.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (c->fd < 0)
		return -errno;
	int err = bind_src(e, c->fd, &c->t);
	if (err)
		return err;
	int one = 1;                           /* the rest of a partial write goes at once */
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->tx_off = 0;
	c->mark_got = 0;
	c->frag_last = false;
	c->frag_left = 0;
	c->rlen = 0;
	if (connect(c->fd, (struct sockaddr *)&c->peer, sa_len(c->peer.ss_family)) == 0) {
		c->tp = TP_SENDING;
	} else if (errno == EINPROGRESS) {
		c->tp = TP_CONNECTING;
	} else if (errno == ECONNREFUSED) {
		tcp_down(e, c, errno);
		return 0;
	} else {
		return -errno;
	}
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.ptr = c};
	if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0)
		return -errno;
	tl_insert(e, &c->tn, c->deadline_ms);
	return 0;
}

/* The call stage over TCP, to host:port: GETPORT's socket, if any, is done with. */
static int begin_tcp(struct rpccb *e, struct call *c, uint16_t port)
{
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
	c->peer = c->t.host;
	sa_set_port(&c->peer, port);
	c->st = ST_CALL;
	c->xid = e->xid++;
	int err = encode_call(e, c, c->t.prog, c->t.vers, c->t.proc, c->args, c->args_len, true);
	if (err)
		return err;
	c->rto_ms = RTO_FIRST_MS;
	c->tfail = -ETIMEDOUT;
	return tcp_connect(e, c);
}

/* The backoff after a failed connection is over: the same record (same xid) on a new one. */
static void tcp_reconnect(struct rpccb *e, struct call *c)
{
	int err = tcp_connect(e, c);
	if (err)
		finish(e, c, err, NULL, 0);
}

/* A fragment's mark has been read: room for its bytes. 0, -EBADMSG when the record would be
 * longer than RPCCB_TCP_REPLY_MAX, or -ENOMEM. */
static int tcp_fragment(struct call *c)
{
	uint32_t m;
	memcpy(&m, c->mark, 4);
	m = ntohl(m);
	c->frag_last = (m & RM_LAST) != 0;
	c->frag_left = m & ~RM_LAST;
	if (c->frag_left > RPCCB_TCP_REPLY_MAX - c->rlen)
		return -EBADMSG;
	size_t need = c->rlen + c->frag_left;
	if (need <= c->rcap)
		return 0;
	size_t cap = c->rcap * 2 > need ? c->rcap * 2 : need;
	if (cap > RPCCB_TCP_REPLY_MAX)
		cap = RPCCB_TCP_REPLY_MAX;
	uint8_t *p = realloc(c->rbuf, cap);
	if (!p)
		return -ENOMEM;
	c->rbuf = p;
	c->rcap = cap;
	return 0;
}

/* A whole record: the reply if it has the call's xid (the call ends), else a stray, skipped.
 * true when the call ended. */
static bool tcp_record(struct rpccb *e, struct call *c)
{
	uint32_t xid = 0;
	if (c->rlen >= 8)
		memcpy(&xid, c->rbuf, 4);
	if (c->rlen < 8 || ntohl(xid) != c->xid) {
		c->rlen = 0;
		c->frag_last = false;
		return false;
	}
	memcpy(e->rx, c->rbuf, c->rlen);       /* where done's res points, as over UDP */
	bool going = on_datagram(e, c, c->rlen);
	assert(!going);                        /* this stage's xid: it ended the call */
	(void)going;
	return true;
}

/* Read as far as the socket lets: each fragment's mark, then its bytes into rbuf. Returns when
 * nothing more is there (EPOLLIN will say when there is), the call ended, or the connection
 * went down. */
static void tcp_readable(struct rpccb *e, struct call *c)
{
	for (int i = 0; i < RECV_BURST; i++) {
		bool in_mark = c->mark_got < 4;
		uint8_t *dst = in_mark ? c->mark + c->mark_got : c->rbuf + c->rlen;
		size_t want = in_mark ? 4 - c->mark_got : c->frag_left;
		ssize_t n = recv(c->fd, dst, want, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			tcp_down(e, c, n == 0 ? 0 : errno);
			return;
		}
		if (in_mark) {
			c->mark_got += (unsigned)n;
			if (c->mark_got < 4)
				continue;
			int err = tcp_fragment(c);
			if (err) {
				finish(e, c, err, NULL, 0);
				return;
			}
		} else {
			c->rlen += (size_t)n;
			c->frag_left -= (size_t)n;
		}
		if (c->frag_left)
			continue;
		c->mark_got = 0;               /* the next fragment's mark, if any */
		if (c->frag_last && tcp_record(e, c))
			return;
	}
}

/* Readiness of the call's connection: connected (or not), more of the record sent, reply bytes
 * read. */
static void tcp_event(struct rpccb *e, struct call *c, uint32_t events)
{
	if (c->tp == TP_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof err;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err) {
			tcp_down(e, c, err);
			return;
		}
		if (!(events & EPOLLOUT))
			return;
		c->tp = TP_SENDING;
	}
	if (c->tp == TP_SENDING) {
		while (c->tx_off < c->pkt_len) {
			ssize_t n = send(c->fd, c->pkt + c->tx_off, c->pkt_len - c->tx_off,
					 MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;                 /* EPOLLOUT says when to go on */
			if (n < 0) {
				tcp_down(e, c, errno);
				return;
			}
			c->tx_off += (size_t)n;
		}
		if (c->tx_off == c->pkt_len) {
			struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
			if (epoll_ctl(e->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) {
				finish(e, c, -errno, NULL, 0);
				return;
			}
			c->tp = TP_AWAITING;
		}
	}
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		tcp_readable(e, c);
}

static void call_event(struct rpccb *e, struct call *c, uint32_t events)
{
	if (tcp_stage(c))
		tcp_event(e, c, events);
	else
		call_readable(e, c);
}

/* ---- the engine thread */

static void utimer_fire(struct rpccb *e, struct tnode *n)
{
	(void)e;
	struct utimer *u = container_of(n, struct utimer, tn);
	void (*fn)(void *) = u->fn;
	void *ctx = u->ctx;
	free(u);
	fn(ctx);
}

static void run_timers(struct rpccb *e)
{
	uint64_t now = now_ms();
	struct tnode *n;
	while ((n = tl_first(e)) && n->when_ms <= now) {
		tl_remove(n);
		n->fire(e, n);                 /* a call that goes on is queued later than now */
	}
}

/* Oldest first, so calls start in the order they were made. */
static struct call *reverse_calls(struct call *c)
{
	struct call *r = NULL;
	while (c) {
		struct call *next = c->next;
		c->next = r;
		r = c;
		c = next;
	}
	return r;
}

/* Take the inbox, unless stopping (then shutdown_all takes it). true when stopping. */
static bool drain_inbox(struct rpccb *e)
{
	uint64_t v;
	if (read(e->evfd, &v, sizeof v) < 0) {
		/* EAGAIN: already read; the lists are what counts */
	}
	pthread_mutex_lock(&e->mu);
	bool stopping = e->stopping;
	struct call *calls = stopping ? NULL : e->in_calls;
	struct utimer *timers = stopping ? NULL : e->in_timers;
	if (!stopping) {
		e->in_calls = NULL;
		e->in_timers = NULL;
	}
	pthread_mutex_unlock(&e->mu);
	for (calls = reverse_calls(calls); calls;) {
		struct call *c = calls;
		calls = c->next;
		start_call(e, c);
	}
	while (timers) {
		struct utimer *u = timers;
		timers = u->next;
		tl_insert(e, &u->tn, u->tn.when_ms);
	}
	return stopping;
}

/* Every call not ended gets done(-ECANCELED); timers are dropped. stopping is set, so what the
 * callbacks try to queue is refused. */
static void shutdown_all(struct rpccb *e)
{
	pthread_mutex_lock(&e->mu);
	e->stopping = true;
	struct call *calls = reverse_calls(e->in_calls);
	struct utimer *timers = e->in_timers;
	e->in_calls = NULL;
	e->in_timers = NULL;
	pthread_mutex_unlock(&e->mu);
	while (calls) {
		struct call *c = calls;
		calls = c->next;
		finish(e, c, -ECANCELED, NULL, 0);
	}
	while (timers) {
		struct utimer *u = timers;
		timers = u->next;
		free(u);
	}
	struct tnode *n;
	while ((n = tl_first(e))) {
		tl_remove(n);
		if (n->fire == call_fire)
			finish(e, container_of(n, struct call, tn), -ECANCELED, NULL, 0);
		else
			free(container_of(n, struct utimer, tn));
	}
}

/* Timers and the inbox after the whole batch: a call that ends frees itself, and only its own
 * socket's event (which appears once per batch) refers to it. */
static bool handle_events(struct rpccb *e, const struct epoll_event *ev, int n)
{
	bool wake = false;
	for (int i = 0; i < n; i++) {
		void *p = ev[i].data.ptr;
		if (p == &e->evfd) {
			wake = true;
		} else if (p == &e->tfd) {
			uint64_t v;
			if (read(e->tfd, &v, sizeof v) < 0) {
				/* EAGAIN: re-armed since it fired */
			}
		} else {
			call_event(e, p, ev[i].events);
		}
	}
	run_timers(e);
	return wake && drain_inbox(e);
}

static void *engine_main(void *arg)
{
	struct rpccb *e = arg;
	struct epoll_event ev[EVENTS_MAX];
	for (;;) {
		arm_timer(e);
		int n = epoll_wait(e->epfd, ev, EVENTS_MAX, -1);
		if (n < 0 && errno != EINTR)
			break;                 /* cannot happen with valid fds; end rather than spin */
		if (handle_events(e, ev, n < 0 ? 0 : n))
			break;
	}
	shutdown_all(e);
	return NULL;
}

/* ---- the API */

/* Queue a call or a timer; the eventfd is written under the mutex so that rpccb_stop, which
 * sets stopping under it, knows no one touches the fd once it has. */
static int post(struct rpccb *e, struct call *c, struct utimer *u)
{
	pthread_mutex_lock(&e->mu);
	if (e->stopping) {
		pthread_mutex_unlock(&e->mu);
		return -ESHUTDOWN;
	}
	bool was_empty = !e->in_calls && !e->in_timers;
	if (c) {
		c->next = e->in_calls;
		e->in_calls = c;
		atomic_fetch_add_explicit(&e->started, 1, memory_order_relaxed);
	} else {
		u->next = e->in_timers;
		e->in_timers = u;
	}
	if (was_empty) {
		uint64_t one = 1;
		if (write(e->evfd, &one, sizeof one) < 0) {
			/* EAGAIN: the counter is far from empty, so the engine wakes anyway */
		}
	}
	pthread_mutex_unlock(&e->mu);
	return 0;
}

static int check_target(const struct rpccb_target *t)
{
	int fam = t->host.ss_family;
	if (fam != AF_INET && fam != AF_INET6)
		return -EAFNOSUPPORT;
	if (t->src.ss_family != AF_UNSPEC && t->src.ss_family != fam)
		return -EAFNOSUPPORT;
	if (t->proto != 0 && t->proto != IPPROTO_UDP && t->proto != IPPROTO_TCP)
		return -EPROTONOSUPPORT;
	return 0;
}

int rpccb_call(struct rpccb *e, const struct rpccb_target *t, const void *args, size_t args_len,
	       rpccb_done_fn *done, void *ctx)
{
	if (!e || !t || !done || (args_len && !args) || args_len % 4)
		return -EINVAL;
	if (args_len > RPCCB_ARGS_MAX)
		return -EMSGSIZE;
	int err = check_target(t);
	if (err)
		return err;
	struct call *c = calloc(1, sizeof *c + args_len);
	if (!c)
		return -ENOMEM;
	c->t = *t;
	if (!c->t.proto)
		c->t.proto = IPPROTO_UDP;
	c->done = done;
	c->ctx = ctx;
	c->fd = -1;
	c->args_len = args_len;
	if (args_len)
		memcpy(c->args, args, args_len);
	/* The deadline counts from now, not from when the engine gets to it. */
	c->deadline_ms = now_ms() + (t->timeout_ms ? t->timeout_ms : RPCCB_TIMEOUT_DEFAULT_MS);
	err = post(e, c, NULL);
	if (err)
		free(c);
	return err;
}

int rpccb_after(struct rpccb *e, unsigned ms, void (*fn)(void *ctx), void *ctx)
{
	if (!e || !fn)
		return -EINVAL;
	struct utimer *u = calloc(1, sizeof *u);
	if (!u)
		return -ENOMEM;
	u->fn = fn;
	u->ctx = ctx;
	u->tn.fire = utimer_fire;
	u->tn.when_ms = now_ms() + ms;
	int err = post(e, NULL, u);
	if (err)
		free(u);
	return err;
}

void rpccb_counters(const struct rpccb *e, struct rpccb_counters *out)
{
	out->started = atomic_load_explicit(&e->started, memory_order_relaxed);
	out->ok = atomic_load_explicit(&e->ok, memory_order_relaxed);
	out->timeouts = atomic_load_explicit(&e->timeouts, memory_order_relaxed);
	out->errors = atomic_load_explicit(&e->errors, memory_order_relaxed);
	out->cancelled = atomic_load_explicit(&e->cancelled, memory_order_relaxed);
}

static void seed(struct rpccb *e)
{
	uint64_t s[2];
	if (getrandom(s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
		/* no entropy yet (early boot): xids need only differ from a previous run's */
		s[0] = now_ms() ^ ((uint64_t)getpid() << 32);
		s[1] = (uint64_t)(uintptr_t)e ^ (uint64_t)time(NULL);
	}
	e->xid = (uint32_t)s[0];
	e->rng = s[1] | 1;                     /* xorshift's state must not be 0 */
}

static void close_fds(struct rpccb *e)
{
	if (e->epfd >= 0)
		close(e->epfd);
	if (e->evfd >= 0)
		close(e->evfd);
	if (e->tfd >= 0)
		close(e->tfd);
}

static int open_fds(struct rpccb *e)
{
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	e->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (e->epfd < 0 || e->evfd < 0 || e->tfd < 0)
		return -1;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &e->evfd};
	if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->evfd, &ev) < 0)
		return -1;
	ev.data.ptr = &e->tfd;
	return epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->tfd, &ev);
}

/* The thread starts with every signal blocked, so the daemon's signals go to the threads that
 * handle them, never interrupt the engine. */
static int spawn(struct rpccb *e)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&e->thr, NULL, engine_main, e);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

struct rpccb *rpccb_start(void)
{
	struct rpccb *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->timers.next = e->timers.prev = &e->timers;
	seed(e);
	if (gethostname(e->host, sizeof e->host - 1) < 0 || !e->host[0])
		strcpy(e->host, "localhost");
	pthread_mutex_init(&e->mu, NULL);
	int err = open_fds(e) < 0 ? errno : spawn(e);
	if (err) {
		close_fds(e);
		pthread_mutex_destroy(&e->mu);
		free(e);
		errno = err;
		return NULL;
	}
	return e;
}

void rpccb_stop(struct rpccb *e)
{
	if (!e)
		return;
	/* From a done or timer callback this would join its own thread: fail loudly instead. */
	assert(!pthread_equal(pthread_self(), e->thr));
	pthread_mutex_lock(&e->mu);
	e->stopping = true;
	uint64_t one = 1;
	if (write(e->evfd, &one, sizeof one) < 0) {
		/* EAGAIN: the engine has a wakeup pending anyway */
	}
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->thr, NULL);
	close_fds(e);
	pthread_mutex_destroy(&e->mu);
	free(e);
}
