/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gssconn: see gssconn.h. */
#include "gssconn.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A TCP connection to host:port (numeric), Nagle off (a call's mark and body go in one send
 * anyway; small replies must not wait for a delayed ACK). */
static int connect_host(const char *host, int port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST }, *ai;
	char ps[16];
	int fd;

	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(host, ps, &hints, &ai) != 0)
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	return fd;
}

static int set_blocking(int fd, bool blocking)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, blocking ? fl & ~O_NONBLOCK : fl | O_NONBLOCK);
}

static int alloc_bufs(struct gconn *c, unsigned nslots, size_t slot_cap, size_t reply_cap)
{
	c->slots = calloc(nslots, sizeof(*c->slots));
	c->sendq = calloc(nslots, sizeof(*c->sendq));
	c->rbuf = malloc(reply_cap);
	if (c->slots == NULL || c->sendq == NULL || c->rbuf == NULL)
		return -1;
	c->nslots = nslots;
	c->slot_cap = slot_cap;
	c->rcap = reply_cap;
	for (unsigned i = 0; i < nslots; i++)
		if ((c->slots[i].buf = malloc(4 + slot_cap)) == NULL)
			return -1;
	return 0;
}

int gc_open(struct gconn *c, const char *host, int port, gss_cred_id_t cred, const char *target,
            uint32_t service, unsigned nslots, size_t slot_cap, size_t reply_cap, char *err,
            size_t errlen)
{
	unsigned id = c->id;

	memset(c, 0, sizeof(*c));
	c->id = id;
	c->service = service;
	c->fd = connect_host(host, port);
	if (c->fd < 0)
		return rg_errf(err, errlen, "connecting to %s port %d: %s", host, port, strerror(errno));
	if (rg_establish(c->fd, &c->ctx, cred, target, GC_NFS_PROG, 3, err, errlen) < 0)
		return -1;
	if (nslots > c->ctx.window)
		return rg_errf(err, errlen, "%u calls in flight, but the server's sequence window is %u",
		            nslots, c->ctx.window);
	if (alloc_bufs(c, nslots, slot_cap, reply_cap) < 0)
		return rg_errf(err, errlen, "out of memory");
	if (set_blocking(c->fd, false) < 0)
		return rg_errf(err, errlen, "fcntl: %s", strerror(errno));
	return 0;
}

void gc_close(struct gconn *c)
{
	struct rg_call *call = malloc(sizeof(*call));
	struct rg_reply rep;

	if (c->fd >= 0 && c->inflight == 0 && c->ctx.gss != GSS_C_NO_CONTEXT && call != NULL &&
	    set_blocking(c->fd, true) == 0 && rg_destroy_call(&c->ctx, GC_NFS_PROG, 3, call) == 0 &&
	    rg_exchange(c->fd, &c->ctx, call, &rep) == 0)
		rg_reply_free(&rep);
	free(call);
	rg_ctx_free(&c->ctx);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	for (unsigned i = 0; c->slots != NULL && i < c->nslots; i++)
		free(c->slots[i].buf);
	free(c->slots);
	free(c->sendq);
	free(c->rbuf);
	c->slots = NULL;
	c->sendq = NULL;
	c->rbuf = NULL;
}

struct gslot *gc_free_slot(struct gconn *c)
{
	for (unsigned i = 0; i < c->nslots; i++)
		if (!c->slots[i].busy)
			return &c->slots[i];
	return NULL;
}

uint32_t gc_next_xid(struct gconn *c)
{
	return c->ctx.next_xid++;
}

uint8_t *gc_begin(struct gconn *c, struct gslot *s, uint32_t proc, size_t args_len)
{
	s->parts = (struct rg_parts){ .xid = c->ctx.next_xid++, .prog = GC_NFS_PROG, .vers = 3,
	                              .proc = proc, .gss_proc = RG_DATA, .service = c->service,
	                              .seq = c->ctx.next_seq++, .cap = c->slot_cap };
	return rg_seal_begin(&c->ctx, s->buf + 4, &s->parts, args_len);
}

/* Send what the socket takes now, oldest call first. 0, or -1 when the connection failed. */
static int send_some(struct gconn *c)
{
	while (c->sq_len > 0) {
		struct gslot *s = c->sendq[c->sq_head];
		size_t total = 4 + s->parts.len;
		ssize_t n = send(c->fd, s->buf + c->sent, total - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		c->sent += (size_t)n;
		if (c->sent == total) {
			c->sent = 0;
			c->sq_head = (c->sq_head + 1) % c->nslots;
			c->sq_len--;
		}
	}
	return 0;
}

/* The record mark before the sealed call, the slot taken, the call queued. */
static int enqueue(struct gconn *c, struct gslot *s, size_t len)
{
	if (len == 0)
		return -1;
	put_u32(s->buf, 0x80000000u | (uint32_t)len);
	s->busy = true;
	c->inflight++;
	c->sendq[(c->sq_head + c->sq_len++) % c->nslots] = s;
	return send_some(c);
}

int gc_queue(struct gconn *c, struct gslot *s)
{
	return enqueue(c, s, rg_seal_end(&c->ctx, s->buf + 4, &s->parts));
}

int gc_queue_plain(struct gconn *c, struct gslot *s, const struct xb *plain)
{
	s->parts = (struct rg_parts){ .cap = c->slot_cap };
	return enqueue(c, s, rg_seal_plain(&c->ctx, plain, c->service, c->ctx.next_seq++, s->buf + 4,
	                                   &s->parts));
}

short gc_events(const struct gconn *c)
{
	return (short)(POLLIN | (c->sq_len > 0 ? POLLOUT : 0));
}

/* A whole record is in rbuf: the reply of one of our calls, opened and handed to fn. */
static int deliver(struct gconn *c, gc_reply_fn *fn, void *arg, char *err, size_t errlen)
{
	struct rg_reply rep;
	struct gslot *s = NULL;
	uint32_t xid = c->rlen >= 4 ? get_u32(c->rbuf) : 0;

	for (unsigned i = 0; i < c->nslots && s == NULL; i++)
		if (c->slots[i].busy && c->slots[i].parts.xid == xid)
			s = &c->slots[i];
	if (s == NULL)
		return rg_errf(err, errlen, "connection %u: a reply (xid 0x%x, %zu bytes) to no call of "
		            "ours", c->id, xid, c->rlen);
	memset(&rep, 0, sizeof(rep));
	if (rg_reply_open(&c->ctx, &s->parts, c->rbuf, c->rlen, &rep) < 0)
		return rg_errf(err, errlen, "connection %u: the reply to xid 0x%x does not parse", c->id,
		            xid);
	fn(c, s, &rep, arg);
	s->busy = false;
	c->inflight--;
	return 0;
}

/* The next fragment's mark is complete: where its bytes go. */
static int begin_fragment(struct gconn *c, char *err, size_t errlen)
{
	uint32_t m = get_u32(c->mark);

	c->mark_got = 0;
	c->frag_left = m & 0x7fffffffu;
	c->last_frag = (m & 0x80000000u) != 0;
	c->in_frag = true;
	if (c->frag_left > c->rcap - c->rlen)
		return rg_errf(err, errlen, "connection %u: a reply of over %zu bytes", c->id, c->rcap);
	return 0;
}

static int recv_some(struct gconn *c, gc_reply_fn *fn, void *arg, char *err, size_t errlen)
{
	for (;;) {
		uint8_t *to = c->in_frag ? c->rbuf + c->rlen : c->mark + c->mark_got;
		size_t want = c->in_frag ? c->frag_left : 4 - c->mark_got;
		ssize_t n = want ? recv(c->fd, to, want, MSG_DONTWAIT) : 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0 || (n == 0 && want))
			return rg_errf(err, errlen, "connection %u: %s", c->id,
			            n < 0 ? strerror(errno) : "closed by the server");
		if (c->in_frag) {
			c->rlen += (size_t)n;
			c->frag_left -= (size_t)n;
		} else if ((c->mark_got += (size_t)n) == 4 && begin_fragment(c, err, errlen) < 0) {
			return -1;
		}
		if (c->in_frag && c->frag_left == 0) {
			c->in_frag = false;
			if (c->last_frag) {
				int rc = deliver(c, fn, arg, err, errlen);
				c->rlen = 0;
				if (rc < 0)
					return -1;
			}
		}
	}
}

int gc_service(struct gconn *c, gc_reply_fn *fn, void *arg, char *err, size_t errlen)
{
	if (send_some(c) < 0)
		return rg_errf(err, errlen, "connection %u: send: %s", c->id, strerror(errno));
	return recv_some(c, fn, arg, err, errlen);
}

int gc_call_sync(struct gconn *c, const struct xb *plain, struct rg_reply *rep)
{
	struct rg_call *call = malloc(sizeof(*call));
	int rc = -1;

	memset(rep, 0, sizeof(*rep));
	if (call != NULL && c->inflight == 0 && set_blocking(c->fd, true) == 0) {
		if (rg_wrap(&c->ctx, plain, c->service, call) == 0)
			rc = rg_exchange(c->fd, &c->ctx, call, rep);
		if (set_blocking(c->fd, false) < 0 && rc == 0) {
			rg_reply_free(rep);
			rc = -1;
		}
	}
	free(call);
	return rc;
}
