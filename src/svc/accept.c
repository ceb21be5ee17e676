/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Accepting (ring 0): each new connection goes to the rings in turn, counted against the
 * connection limits (connlimit.h); the ring that gets it opens it, making room first when a
 * limit is passed, as knfsd does. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svc/conn.h"
#include "base/sockaddr.h"
#include "io/fiber.h"
#include "io/ring.h"
#include "base/log.h"
#include "svc/worker.h"

#define ACCEPT_BACKOFF_NS (100 * 1000 * 1000ull)   /* out of descriptors: try again after this */

/* Ring 0's accept on one listener. */
struct listener {
	struct io_op op;
	struct worker *w;
	int fd;
	struct sockaddr_storage addr;
	socklen_t alen;
	struct fiber_timer backoff;
};

/* A connection accepted by ring 0 for another ring. */
struct handoff {
	struct fiber_msg msg;
	struct worker *w;
	int fd;
	struct sockaddr_storage peer;
	enum climit_verdict verdict;
};

/* Nothing in flight, owed or half received: the connection only waits for the client. */
bool conn_idle(const struct conn *c)
{
	return !c->inflight && !c->sq_head && !conn_in_rec(c) && c->head == c->tail;
}

/* The connection of this ring to close for a new one (of peer's address, when given): one with
 * nothing in flight or owed, preferring one with nothing half received either, and among those
 * the one silent longest (a record begun long ago and never finished goes before an active
 * sender's). NULL if every one is busy. */
static struct conn *conn_victim(struct worker *w, const struct sockaddr_storage *peer)
{
	struct conn *best = NULL;
	for (struct conn *c = w->conns; c; c = c->next) {
		if (c->dead || c->inflight || c->sq_head ||
		    (peer && !sa_same_host((const struct sockaddr *)&c->peer,
					       (const struct sockaddr *)peer)))
			continue;
		bool idle = conn_idle(c), best_idle = best && conn_idle(best);
		if (!best || (idle && !best_idle) ||
		    (idle == best_idle && c->last_rx_ns < best->last_rx_ns))
			best = c;
	}
	return best;
}

/* Over a connection limit: as knfsd does, the longest idle connection goes to let the new one
 * in (a client reconnecting is served; one that opens connections without end only churns its
 * own). If none is idle, the new one is refused. */
static bool make_room(struct worker *w, const struct sockaddr_storage *peer, enum climit_verdict v)
{
	const struct config *cfg = w->srv->cfg;
	const char *what = v == CL_OVER_CLIENT ? "connections_per_client" : "connections";
	unsigned limit = v == CL_OVER_CLIENT ? cfg->max_connections_per_client : cfg->max_connections;
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	struct conn *victim = conn_victim(w, v == CL_OVER_CLIENT ? peer : NULL);
	if (!victim) {
		climits_count(w->srv->limits, CLE_REFUSED);
		log_ratelimited(&w->srv->limit_log, LOG_WARNING,
				"%s = %u reached and none idle: refusing a connection from %s", what,
				limit, conn_peer_str(peer, a));
		return false;
	}
	climits_count(w->srv->limits, CLE_EVICTED);
	log_ratelimited(&w->srv->limit_log, LOG_WARNING,
			"%s = %u reached: closing the longest idle connection (from %s) for one from %s",
			what, limit, conn_peer_str(&victim->peer, b), conn_peer_str(peer, a));
	conn_kill(victim);
	conn_settle(victim);
	return true;
}

/* On the connection's own ring: from here on only this ring touches it. It was counted by
 * climits_open() (verdict), and is uncounted when freed, or here if it never opens. */
void conn_open(struct worker *w, int fd, const struct sockaddr_storage *peer,
		      enum climit_verdict verdict)
{
	struct conn *c = NULL;
	uint8_t *sbuf = NULL;
	if (!w->stopping && (verdict == CL_OK || make_room(w, peer, verdict))) {
		c = calloc(1, sizeof *c);
		sbuf = malloc(SBUF_SIZE);
		if (!c || !sbuf)
			log_err("out of memory for a connection: closing it");
	}
	if (!c || !sbuf) {
		free(c);
		free(sbuf);
		climits_close(w->srv->limits, peer);
		close(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->w = w;
	c->fd = fd;
	c->sbuf = sbuf;
	c->peer = *peer;
	c->client = climits_client(w->srv->limits, peer);
	socklen_t llen = sizeof c->local;
	if (getsockname(fd, (struct sockaddr *)&c->local, &llen) < 0)
		c->local.ss_family = AF_UNSPEC;
	c->last_rx_ns = fiber_now_ns();
	c->recv_op.cb = conn_on_recv;
	c->send_op.cb = conn_on_send;
	c->next = w->conns;
	if (w->conns)
		w->conns->prev = c;
	w->conns = c;
	conn_post_recv(c);
}

static void on_handoff(struct fiber_msg *m)
{
	struct handoff *h = (struct handoff *)m;
	conn_open(h->w, h->fd, &h->peer, h->verdict);
	free(h);
}

/* Connections go to the rings in turn: each ring then owns its share from accept to close. */
static void place_conn(struct worker *acceptor, int fd, const struct sockaddr_storage *peer)
{
	struct svc *srv = acceptor->srv;
	struct worker *w = &srv->workers[srv->next_ring++ % srv->nworkers];
	enum climit_verdict v = climits_open(srv->limits, peer);
	if (w == acceptor) {
		conn_open(w, fd, peer, v);
		return;
	}
	struct handoff *h = malloc(sizeof *h);
	if (!h) {
		log_err("out of memory for a connection: closing it");
		climits_close(srv->limits, peer);
		close(fd);
		return;
	}
	*h = (struct handoff){.msg = {.fn = on_handoff}, .w = w, .fd = fd, .peer = *peer,
			      .verdict = v};
	fiber_sched_post(w->sched, &h->msg);
}

static void accept_again(struct listener *l)
{
	l->alen = sizeof l->addr;
	io_ring_accept(l->w->ring, &l->op, l->fd, (struct sockaddr *)&l->addr, &l->alen);
}

static void on_backoff(struct fiber_timer *t)
{
	struct listener *l = (struct listener *)((char *)t - offsetof(struct listener, backoff));
	if (!l->w->stopping)
		accept_again(l);
}

static void on_accept(struct io_op *op, int res)
{
	struct listener *l = (struct listener *)op;
	struct worker *w = l->w;
	if (res >= 0) {
		if (w->stopping)
			close(res);
		else
			place_conn(w, res, &l->addr);
	} else if (res != -ECANCELED) {
		log_ratelimited(&w->srv->accept_errors, LOG_WARNING, "accept: %s", strerror(-res));
		if (!w->stopping && (res == -EMFILE || res == -ENFILE || res == -ENOMEM ||
				     res == -ENOBUFS)) {
			/* Out of descriptors or memory: the next accept would fail the same way at
			 * once. Try again later instead of spinning. */
			l->backoff.fire = on_backoff;
			fiber_timer_arm(&l->backoff, fiber_now_ns() + ACCEPT_BACKOFF_NS);
			return;
		}
	}
	if (!w->stopping)
		accept_again(l);     /* stopping: the listener is freed with the ring (server_ring_free) */
}

void accept_start(struct worker *w)
{
	for (size_t i = 0; i < w->srv->nlisten_fds; i++) {
		struct listener *l = calloc(1, sizeof *l);
		if (!l) {
			log_err("out of memory for a listener");
			continue;
		}
		l->op.cb = on_accept;
		l->w = w;
		l->fd = w->srv->listen_fd[i];
		w->listeners[i] = l;
		accept_again(l);
	}
}

void accept_stop(struct worker *w)
{
	for (size_t i = 0; i < w->srv->nlisten_fds; i++)
		if (w->listeners[i]) {
			fiber_timer_disarm(&w->listeners[i]->backoff);   /* backing off: no accept to cancel */
			io_ring_cancel_fd(w->ring, w->srv->listen_fd[i]);
		}
}
