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
 * The call engine is three files (rpccb_int.h): this one, rpccb_msg.c, rpccb_tcp.c.
 *
 * PMAP v2 is what rpcbind answers over IPv4; it serves it over IPv4 transports only, so an IPv6
 * target should come with its port (statd's and lockd's callers know it from the client's
 * SM_MON/lock call, or ask over IPv4). */
#include "rpc/rpccb.h"
#include "rpc/rpccb_int.h"
#include "rpc/uaddr.h"

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
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

uint64_t cb_now_ms(void)
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

void cb_tl_insert(struct rpccb *e, struct tnode *n, uint64_t when_ms)
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

socklen_t cb_sa_len(int family)
{
	return family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

void cb_sa_set_port(struct sockaddr_storage *a, uint16_t port)
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

/* ---- a call's life */

static void call_fire(struct rpccb *e, struct tnode *n);

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
void cb_finish(struct rpccb *e, struct call *c, int status, const uint8_t *res, size_t len)
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

void cb_schedule(struct rpccb *e, struct call *c, uint64_t now)
{
	uint64_t next = now + c->rto_ms;
	cb_tl_insert(e, &c->tn, next < c->deadline_ms ? next : c->deadline_ms);
}

/* Send a stage's first datagram to host:port, from a socket connect()ed there so only that
 * peer's datagrams (and ICMP errors) reach it. */
static int begin_stage(struct rpccb *e, struct call *c, enum stage st, uint16_t port)
{
	c->peer = c->t.host;
	cb_sa_set_port(&c->peer, port);
	if (connect(c->fd, (struct sockaddr *)&c->peer, cb_sa_len(c->peer.ss_family)) < 0)
		return -errno;
	c->st = st;
	c->xid = e->xid++;
	int err = st == ST_GETPORT ? cb_encode_getport(e, c) :
		  cb_encode_call(e, c, c->t.prog, c->t.vers, c->t.proc, c->args, c->args_len, false);
	if (err)
		return err;
	c->refused = false;
	c->rto_ms = RTO_FIRST_MS;
	send_pkt(c);
	cb_schedule(e, c, cb_now_ms());
	return 0;
}

/* Retransmission, reconnection (TCP) or deadline. */
static void call_fire(struct rpccb *e, struct tnode *n)
{
	struct call *c = container_of(n, struct call, tn);
	uint64_t now = cb_now_ms();
	bool tcp = tcp_stage(c);
	if (now >= c->deadline_ms) {
		cb_finish(e, c, tcp ? c->tfail : c->refused ? -ECONNREFUSED : -ETIMEDOUT, NULL, 0);
		return;
	}
	if (tcp) {                             /* a live connection's timer is the deadline */
		cb_tcp_reconnect(e, c);
		return;
	}
	send_pkt(c);
	c->rto_ms = c->rto_ms * 2 < RTO_MAX_MS ? c->rto_ms * 2 : RTO_MAX_MS;
	cb_schedule(e, c, now);
}

/* A reserved port, probed from a random start as bindresvport does (whose own state is a
 * process-wide static). 0, -EADDRINUSE when the range is full, or the error that says this
 * process may not have one (EACCES). */
static int bind_reserved(struct rpccb *e, int fd, struct sockaddr_storage *a)
{
	unsigned n = RESV_HIGH - RESV_LOW + 1, first = rng_next(e) % n;
	for (unsigned i = 0; i < n; i++) {
		cb_sa_set_port(a, (uint16_t)(RESV_LOW + (first + i) % n));
		if (bind(fd, (struct sockaddr *)a, cb_sa_len(a->ss_family)) == 0)
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
int cb_bind_src(struct rpccb *e, int fd, const struct rpccb_target *t)
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
	cb_sa_set_port(&a, 0);
	return bind(fd, (struct sockaddr *)&a, cb_sa_len(a.ss_family)) < 0 ? -errno : 0;
}

static int open_socket(struct rpccb *e, struct call *c)
{
	c->fd = socket(c->t.host.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (c->fd < 0)
		return -errno;
	int err = cb_bind_src(e, c->fd, &c->t);
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
		err = cb_begin_tcp(e, c, c->t.port);
	} else {
		err = open_socket(e, c);
		if (!err)
			err = c->t.port ? begin_stage(e, c, ST_CALL, c->t.port) :
			      begin_stage(e, c, ST_GETPORT,
					  c->t.pmap_port ? c->t.pmap_port : PMAP_PORT);
	}
	if (err)
		cb_finish(e, c, err, NULL, 0);
}

/* A reply in e->rx[0..n): a datagram from the current stage's peer, or (TCP) a whole record.
 * false when the call ended or changed stage (stop reading for now: the socket stays readable
 * if more is queued; after GETPORT over TCP it is not the same socket). */
bool cb_on_datagram(struct rpccb *e, struct call *c, size_t n)
{
	uint32_t xid;
	if (n < 8)
		return true;
	memcpy(&xid, e->rx, 4);
	if (ntohl(xid) != c->xid)
		return true;                   /* an earlier stage's, or a stray */
	size_t off;
	int st = cb_decode_reply(e->rx, n, &off);
	if (st == 0 && c->st == ST_GETPORT) {
		int port = cb_getport_answer(c, e->rx + off, n - off);
		st = port < 0 ? port :
		     c->t.proto == IPPROTO_TCP ? cb_begin_tcp(e, c, (uint16_t)port) :
		     begin_stage(e, c, ST_CALL, (uint16_t)port);
		if (st == 0)
			return false;
	}
	cb_finish(e, c, st, st == 0 ? e->rx + off : NULL, st == 0 ? n - off : 0);
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
		if (sa_same(&from, &c->peer) && !cb_on_datagram(e, c, (size_t)n))
			return;
	}
}

static void call_event(struct rpccb *e, struct call *c, uint32_t events)
{
	if (tcp_stage(c))
		cb_tcp_event(e, c, events);
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
	uint64_t now = cb_now_ms();
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
		cb_tl_insert(e, &u->tn, u->tn.when_ms);
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
		cb_finish(e, c, -ECANCELED, NULL, 0);
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
			cb_finish(e, container_of(n, struct call, tn), -ECANCELED, NULL, 0);
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
	c->deadline_ms = cb_now_ms() + (t->timeout_ms ? t->timeout_ms : RPCCB_TIMEOUT_DEFAULT_MS);
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
	u->tn.when_ms = cb_now_ms() + ms;
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
		s[0] = cb_now_ms() ^ ((uint64_t)getpid() << 32);
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
