/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fuzzed clients' host, which the lock manager calls back: a thread serving port 111 of
 * 127.0.0.1 and 127.0.0.2 (UDP and TCP) as their portmapper, lockd and statd, in the harness's
 * network namespace. Apart from fz_server.c (the server it talks to), which starts it before
 * the daemon, waits on it after each record and has it answer what it held between inputs. */
#include "fz_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fz_check.h"
#include "fz_marks.h"
#include "fz_server.h"
#include "lock/lk_table.h"
#include "pmap/pmap.h"
#include "rpc/oncrpc.h"
#include "rpc/recmark.h"
#include "rpc/rpccb.h"
#include "xdr/nlm_prot.h"
#include "xdr/nsm_prot.h"

#include <rpc/pmap_prot.h>

#define HELD_MAX 256                      /* GRANTED calls held at once; past it, answered */
#define CONN_MAX 512
#define CONN_RECORD_MAX (256 * 1024)

/* A TCP connection the lock manager made to the client host: bytes received, not yet a whole
 * record. */
struct client_conn {
	int fd;
	uint64_t gen;                     /* tells a connection from an earlier one of that slot */
	uint8_t *buf;
	size_t len, cap;
};

/* Where a call came from, to answer it later. */
struct client_origin {
	int udp;                          /* the UDP socket (0, 1) it came to; -1: TCP */
	struct sockaddr_storage from;
	socklen_t fromlen;
	int conn;                         /* TCP: the connection's slot and generation */
	uint64_t gen;
};

/* A GRANTED callback the client host has not answered. */
struct client_held {
	uint32_t xid;
	struct client_origin o;
	uint8_t cookie[LK_OH_MAX];
	uint32_t cookie_len;
};

/* The client host the lock manager calls back (portmapper, lockd, statd on port 111, UDP and
 * TCP, of both fuzzed clients' addresses), and what it has seen. Its thread owns the sockets
 * and what it holds; others ask it through wake (an eventfd) to answer what it holds. */
struct client_host {
	int udp[2], tcp[2];               /* 127.0.0.1:111, 127.0.0.2:111: answers leave from the
					   * address called (the engine's sockets are connected) */
	int wake;
	struct client_conn conn[CONN_MAX];
	uint64_t next_gen;
	pthread_t thr;
	bool running;
	atomic_bool stop;
	struct client_held held[HELD_MAX];
	size_t nheld;
	atomic_uint_fast64_t held_now;    /* nheld, for other threads */
	atomic_uint_fast64_t releases;    /* times it answered everything it held */
	pthread_mutex_t mu;               /* cookie */
	uint8_t cookie[8];                /* of the last GRANTED received */
	bool have_cookie;
};

static struct client_host client = {.udp = {-1, -1}, .tcp = {-1, -1}, .wake = -1,
				     .mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- the client host the lock manager calls back ----
 * Sockets on port 111 of each fuzzed client's address, UDP and TCP, play the client's
 * portmapper (GETPORT of NLM or NSM, UDP or TCP: 111 itself, anything else 0), its lockd and its
 * statd. A GRANTED callback is answered as its lock's svid says (fz_marks.h: FZ_GRANTED_*); the
 * _RES calls of _MSG procedures and SM_NOTIFY get an empty SUCCESS. Over TCP a call is a record
 * and so is its answer; the connection stays until the lock manager closes it. */

static size_t put_res(uint8_t *out, size_t cap, uint32_t xid, enum rpc_accept st, xdrproc_t enc,
		      void *res)
{
	size_t n = rpc_encode_accepted(out, xid, st);
	if (!enc)
		return n;
	XDR x;
	xdrmem_create(&x, (char *)out + n, (u_int)(cap - n), XDR_ENCODE);
	bool ok = enc(&x, res);
	n += xdr_getpos(&x);
	xdr_destroy(&x);
	return ok ? n : 0;
}

static bool decode_args(const struct rpc_call *c, xdrproc_t dec, void *obj)
{
	XDR x;
	xdrmem_create(&x, (char *)c->args, (u_int)c->args_len, XDR_DECODE);
	bool ok = dec(&x, obj);
	xdr_destroy(&x);
	return ok;
}

static size_t granted_reply(uint32_t xid, const netobj *cookie, nlm4_stats st, uint8_t *out,
			    size_t cap)
{
	nlm4_res r = {.cookie = *cookie, .stat.stat = st};
	return put_res(out, cap, xid, ACCEPT_SUCCESS, (xdrproc_t)xdr_nlm4_res, &r);
}

/* Keep the call unanswered: true, or false when it cannot be kept (then answer it now). A
 * retransmission of one held already stays held. */
static bool hold(struct client_host *ch, uint32_t xid, const struct client_origin *o,
		 const netobj *cookie)
{
	for (size_t i = 0; i < ch->nheld; i++)
		if (ch->held[i].xid == xid && ch->held[i].o.udp == o->udp &&
		    (o->udp >= 0 || ch->held[i].o.gen == o->gen))
			return true;
	if (ch->nheld == HELD_MAX || cookie->n_len > LK_OH_MAX)
		return false;
	struct client_held *h = &ch->held[ch->nheld++];
	h->xid = xid;
	h->o = *o;
	h->cookie_len = cookie->n_len;
	if (cookie->n_len)
		memcpy(h->cookie, cookie->n_bytes, cookie->n_len);
	atomic_store(&ch->held_now, ch->nheld);
	return true;
}

static size_t granted_answer(struct client_host *ch, const struct rpc_call *c,
			     const struct client_origin *o, uint8_t *out, size_t cap)
{
	nlm4_testargs a4;
	nlm_testargs a1;
	memset(&a4, 0, sizeof a4);
	memset(&a1, 0, sizeof a1);
	bool v4 = c->vers == NLM4_VERS;
	bool ok = v4 ? decode_args(c, (xdrproc_t)xdr_nlm4_testargs, &a4)
		     : decode_args(c, (xdrproc_t)xdr_nlm_testargs, &a1);
	netobj cookie = v4 ? a4.cookie : a1.cookie;
	int32_t svid = v4 ? a4.alock.svid : a1.alock.svid;
	size_t n = 0;
	if (!ok) {
		n = put_res(out, cap, c->xid, ACCEPT_GARBAGE_ARGS, NULL, NULL);
		goto out;
	}
	pthread_mutex_lock(&ch->mu);
	ch->have_cookie = cookie.n_len == sizeof ch->cookie;
	if (ch->have_cookie)
		memcpy(ch->cookie, cookie.n_bytes, sizeof ch->cookie);
	pthread_mutex_unlock(&ch->mu);
	switch ((uint32_t)svid % 4) {
	case FZ_GRANTED_SILENT:
		if (hold(ch, c->xid, o, &cookie))
			break;
		/* fall through: as many held as it may */
	case FZ_GRANTED_TAKE:
		n = granted_reply(c->xid, &cookie, NLM4_GRANTED, out, cap);
		break;
	case FZ_GRANTED_REFUSE:
		n = granted_reply(c->xid, &cookie, NLM4_DENIED, out, cap);
		break;
	default:
		n = put_res(out, cap, c->xid, ACCEPT_GARBAGE_ARGS, NULL, NULL);
		break;
	}
out:
	xdr_free(v4 ? (xdrproc_t)xdr_nlm4_testargs : (xdrproc_t)xdr_nlm_testargs,
		 v4 ? (char *)&a4 : (char *)&a1);
	return n;
}

/* The answer to one call (a datagram, or a TCP record) from o; 0: none (now). */
static size_t client_answer(struct client_host *ch, const uint8_t *in, size_t len,
			    const struct client_origin *o, uint8_t *out, size_t cap)
{
	struct rpc_call c;
	if (rpc_decode_call(in, len, &c) != RPC_OK)
		return 0;
	if (c.prog == PMAPPROG && c.vers == PMAPVERS && c.proc == PMAPPROC_GETPORT) {
		struct pmap pm;
		memset(&pm, 0, sizeof pm);
		if (!decode_args(&c, (xdrproc_t)xdr_pmap, &pm))
			return put_res(out, cap, c.xid, ACCEPT_GARBAGE_ARGS, NULL, NULL);
		u_int port = (pm.pm_prog == NLM_PROG || pm.pm_prog == SM_PROG) &&
			     (pm.pm_prot == IPPROTO_UDP || pm.pm_prot == IPPROTO_TCP) ? PMAP_PORT : 0;
		return put_res(out, cap, c.xid, ACCEPT_SUCCESS, (xdrproc_t)xdr_u_int, &port);
	}
	if (c.prog == NLM_PROG && c.proc == NLMPROC_GRANTED)
		return granted_answer(ch, &c, o, out, cap);
	if (c.prog == NLM_PROG || c.prog == SM_PROG)
		return put_res(out, cap, c.xid, ACCEPT_SUCCESS, NULL, NULL);
	return put_res(out, cap, c.xid, ACCEPT_PROG_UNAVAIL, NULL, NULL);
}

/* Send an answer (out[4..4 + n): room for a record mark before it) to where o's call came from. */
static void client_send(struct client_host *ch, const struct client_origin *o, uint8_t *out,
			size_t n)
{
	if (o->udp >= 0) {
		if (sendto(ch->udp[o->udp], out + 4, n, 0, (const struct sockaddr *)&o->from,
			   o->fromlen) < 0) {
			/* the engine retransmits */
		}
		return;
	}
	struct client_conn *c = &ch->conn[o->conn];
	if (c->fd < 0 || c->gen != o->gen)
		return;                   /* the lock manager gave up on it */
	recmark_put(out, (uint32_t)n);
	if (send(c->fd, out, n + 4, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)(n + 4)) {
		/* a full or closed connection: the engine calls again or gives up */
	}
}

/* Answer everything held: the client takes every lock it was granted. */
static void client_release(struct client_host *ch)
{
	uint8_t out[4 + 2048];
	for (size_t i = 0; i < ch->nheld; i++) {
		struct client_held *h = &ch->held[i];
		netobj cookie = {h->cookie_len, (char *)h->cookie};
		size_t n = granted_reply(h->xid, &cookie, NLM4_GRANTED, out + 4, sizeof out - 4);
		if (n)
			client_send(ch, &h->o, out, n);
	}
	ch->nheld = 0;
	atomic_store(&ch->held_now, 0);
	atomic_fetch_add(&ch->releases, 1);
}

static void conn_close(struct client_conn *c)
{
	close(c->fd);
	free(c->buf);
	*c = (struct client_conn){.fd = -1};
}

static void conn_accept(struct client_host *ch, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (int i = 0; i < CONN_MAX; i++)
		if (ch->conn[i].fd < 0) {
			ch->conn[i] = (struct client_conn){.fd = fd, .gen = ++ch->next_gen};
			return;
		}
	close(fd);   /* the engine connects again */
}

/* The whole records at the head of connection i's buffer, answered; false when the connection
 * is done. */
static bool conn_serve(struct client_host *ch, int i, uint8_t *rec, uint8_t *out, size_t cap)
{
	struct client_conn *c = &ch->conn[i];
	struct client_origin o = {.udp = -1, .conn = i, .gen = c->gen};
	for (;;) {
		size_t at = 0, n = 0;
		bool last = false;
		while (!last) {
			if (c->len - at < 4)
				return true;
			uint32_t m = recmark_get(c->buf + at);
			size_t fl = recmark_len(m);
			if (fl > CONN_RECORD_MAX - n)
				return false;
			if (c->len - at - 4 < fl)
				return true;
			memcpy(rec + n, c->buf + at + 4, fl);
			n += fl;
			at += 4 + fl;
			last = recmark_is_last(m);
		}
		memmove(c->buf, c->buf + at, c->len - at);
		c->len -= at;
		size_t r = client_answer(ch, rec, n, &o, out + 4, cap - 4);
		if (r)
			client_send(ch, &o, out, r);
	}
}

static bool conn_readable(struct client_host *ch, int i, uint8_t *rec, uint8_t *out, size_t cap)
{
	struct client_conn *c = &ch->conn[i];
	if (c->cap - c->len < 65536) {
		size_t want = c->cap ? 2 * c->cap : 65536;
		if (want > 2 * CONN_RECORD_MAX)
			return false;
		uint8_t *b = realloc(c->buf, want);
		if (!b)
			return false;
		c->buf = b;
		c->cap = want;
	}
	ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
	if (n <= 0)
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	c->len += (size_t)n;
	return conn_serve(ch, i, rec, out, cap);
}

static void *client_main(void *arg)
{
	struct client_host *ch = arg;
	static uint8_t in[CONN_RECORD_MAX];
	static struct pollfd p[5 + CONN_MAX];
	uint8_t out[4 + 1024];
	while (!atomic_load(&ch->stop)) {
		int np = 0;
		for (int i = 0; i < 2; i++) {
			p[np++] = (struct pollfd){.fd = ch->udp[i], .events = POLLIN};
			p[np++] = (struct pollfd){.fd = ch->tcp[i], .events = POLLIN};
		}
		p[np++] = (struct pollfd){.fd = ch->wake, .events = POLLIN};
		for (int i = 0; i < CONN_MAX; i++)
			p[np++] = (struct pollfd){.fd = ch->conn[i].fd, .events = POLLIN};   /* -1: ignored */
		if (poll(p, (nfds_t)np, 50) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (p[2 * i + 1].revents)
				conn_accept(ch, ch->tcp[i]);
			if (!p[2 * i].revents)
				continue;
			struct client_origin o = {.udp = i, .fromlen = sizeof o.from, .conn = -1};
			ssize_t n = recvfrom(ch->udp[i], in, sizeof in, MSG_DONTWAIT,
					     (struct sockaddr *)&o.from, &o.fromlen);
			if (n <= 0)
				continue;
			size_t m = client_answer(ch, in, (size_t)n, &o, out + 4, sizeof out - 4);
			if (m)
				client_send(ch, &o, out, m);
		}
		if (p[4].revents) {
			uint64_t v;
			if (read(ch->wake, &v, sizeof v) == (ssize_t)sizeof v)
				client_release(ch);
		}
		for (int i = 0; i < CONN_MAX; i++)
			if (ch->conn[i].fd >= 0 && p[5 + i].revents &&
			    !conn_readable(ch, i, in, out, sizeof out))
				conn_close(&ch->conn[i]);
	}
	return NULL;
}

static int client_socket(int type, int i)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PMAP_PORT),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (unsigned)i)};
	int one = 1, fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0))
		fz_die("the client host's port 111");
	return fd;
}

void fz_client_start(void)
{
	struct client_host *ch = &client;
	for (int i = 0; i < 2; i++) {
		ch->udp[i] = client_socket(SOCK_DGRAM, i);
		ch->tcp[i] = client_socket(SOCK_STREAM, i);
	}
	for (int i = 0; i < CONN_MAX; i++)
		ch->conn[i].fd = -1;
	ch->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ch->wake < 0)
		fz_die("eventfd");
	if (pthread_create(&ch->thr, NULL, client_main, ch) != 0)
		fz_die("the client host's thread");
	ch->running = true;
}

void fz_client_stop(void)
{
	struct client_host *ch = &client;
	if (!ch->running)
		return;
	atomic_store(&ch->stop, true);
	pthread_join(ch->thr, NULL);
	for (int i = 0; i < 2; i++) {
		close(ch->udp[i]);
		close(ch->tcp[i]);
	}
	for (int i = 0; i < CONN_MAX; i++)
		if (ch->conn[i].fd >= 0)
			conn_close(&ch->conn[i]);
	close(ch->wake);
	ch->running = false;
}

/* Until every callback in flight has been answered and its answer taken by the lock manager,
 * but those the client host holds (at most 100 ms: a lost datagram waits for its
 * retransmission): after each record, so the next one finds the GRANTED callbacks its
 * predecessors caused settled (or held, their cookie known). */
void fz_client_settle(struct rpccb *cb)
{
	if (!client.running || !cb)
		return;
	for (int i = 0; i < 2000; i++) {
		struct rpccb_counters c;
		rpccb_counters(cb, &c);
		uint64_t ended = c.ok + c.timeouts + c.errors + c.cancelled;
		if (c.started <= ended + atomic_load(&client.held_now))
			return;
		usleep(50);
	}
	if (fz_trace)
		fprintf(stderr, "fz: callbacks still in flight after 100 ms\n");
}

/* The client host answers what it held (so no call waits out its 30 s), and the lock manager
 * takes the answers. */
void fz_client_release(struct rpccb *cb)
{
	struct client_host *ch = &client;
	if (!ch->running)
		return;
	uint64_t before = atomic_load(&ch->releases), one = 1;
	if (write(ch->wake, &one, sizeof one) != (ssize_t)sizeof one)
		fz_die("eventfd");
	while (atomic_load(&ch->releases) == before)
		usleep(50);
	fz_client_settle(cb);
}

uint64_t fz_client_held(void)
{
	return atomic_load(&client.held_now);
}

bool fz_client_cookie(uint8_t cookie[8])
{
	pthread_mutex_lock(&client.mu);
	bool have = client.have_cookie;
	if (have)
		memcpy(cookie, client.cookie, sizeof client.cookie);
	pthread_mutex_unlock(&client.mu);
	return have;
}

void fz_client_forget_cookie(void)
{
	pthread_mutex_lock(&client.mu);
	client.have_cookie = false;
	pthread_mutex_unlock(&client.mu);
}
