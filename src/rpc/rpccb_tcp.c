/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The call stage over TCP (rpccb_int.h): a socket of its own, connecting -> sending the record
 * -> reading the reply record, as far as the socket lets each go, resumed on EPOLLIN / EPOLLOUT;
 * a connection that fails is closed and tried again on the retransmission schedule. */
#include <assert.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "rpc/rpccb_int.h"

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
	cb_schedule(e, c, cb_now_ms());
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
	int err = cb_bind_src(e, c->fd, &c->t);
	if (err)
		return err;
	int one = 1;                           /* the rest of a partial write goes at once */
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->tx_off = 0;
	c->mark_got = 0;
	c->frag_last = false;
	c->frag_left = 0;
	c->rlen = 0;
	if (connect(c->fd, (struct sockaddr *)&c->peer, cb_sa_len(c->peer.ss_family)) == 0) {
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
	cb_tl_insert(e, &c->tn, c->deadline_ms);
	return 0;
}

/* The call stage over TCP, to host:port: GETPORT's socket, if any, is done with. */
int cb_begin_tcp(struct rpccb *e, struct call *c, uint16_t port)
{
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
	c->peer = c->t.host;
	cb_sa_set_port(&c->peer, port);
	c->st = ST_CALL;
	c->xid = e->xid++;
	int err = cb_encode_call(e, c, c->t.prog, c->t.vers, c->t.proc, c->args, c->args_len, true);
	if (err)
		return err;
	c->rto_ms = RTO_FIRST_MS;
	c->tfail = -ETIMEDOUT;
	return tcp_connect(e, c);
}

/* The backoff after a failed connection is over: the same record (same xid) on a new one. */
void cb_tcp_reconnect(struct rpccb *e, struct call *c)
{
	int err = tcp_connect(e, c);
	if (err)
		cb_finish(e, c, err, NULL, 0);
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
	bool going = cb_on_datagram(e, c, c->rlen);
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
				cb_finish(e, c, err, NULL, 0);
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
void cb_tcp_event(struct rpccb *e, struct call *c, uint32_t events)
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
				cb_finish(e, c, -errno, NULL, 0);
				return;
			}
			c->tp = TP_AWAITING;
		}
	}
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		tcp_readable(e, c);
}
