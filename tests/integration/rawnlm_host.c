/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fake client host of rawnlm.h: its portmapper, lockd and statd sockets, the calls the
 * daemon makes to them (GRANTED, the _RES callbacks, SM_NOTIFY's status change) read and
 * answered. Apart from rawnlm.c, which holds the calls the tests make to the daemon. */
#include "rawnlm.h"
#include "rawnlm_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rawbig.h"

/* ---- the fake client host ---- */

static int udp_bound(const char *addr, uint16_t port, uint16_t *got)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
		close(fd);
		return -EINVAL;
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (got)
		*got = ntohs(a.sin_port);
	return fd;
}

static int tcp_listening(const char *addr, uint16_t *got)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1 ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		int e = errno ? -errno : -EINVAL;
		close(fd);
		return e;
	}
	*got = ntohs(a.sin_port);
	return fd;
}

int rl_fakehost_open(struct rl_fakehost *h, const char *addr)
{
	memset(h, 0, sizeof *h);
	h->pmap_fd = h->lockd_fd = h->statd_fd = h->lockd_tcp_fd = h->conn_fd = -1;
	snprintf(h->addr, sizeof h->addr, "%s", addr);
	int fd = udp_bound(addr, 111, NULL);
	if (fd < 0)
		return fd;
	h->pmap_fd = fd;
	if ((fd = udp_bound(addr, 0, &h->lockd_port)) < 0) {
		rl_fakehost_close(h);
		return fd;
	}
	h->lockd_fd = fd;
	if ((fd = udp_bound(addr, 0, &h->statd_port)) < 0) {
		rl_fakehost_close(h);
		return fd;
	}
	h->statd_fd = fd;
	if ((fd = tcp_listening(addr, &h->lockd_tcp_port)) < 0) {
		rl_fakehost_close(h);
		return fd;
	}
	h->lockd_tcp_fd = fd;
	return 0;
}

void rl_fakehost_close(struct rl_fakehost *h)
{
	int *fds[] = {&h->pmap_fd, &h->lockd_fd, &h->statd_fd, &h->lockd_tcp_fd, &h->conn_fd};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

/* A call's header in c->rec[0..len): 0, or -1 when it is no call. */
static int parse_call(struct rl_incall *c)
{
	struct rd d = {c->rec, c->rec + c->len, false};
	uint32_t len;
	c->xid = rd_u32(&d);
	if (rd_u32(&d) != 0)       /* CALL */
		return -1;
	c->rpcvers = rd_u32(&d);
	c->prog = rd_u32(&d);
	c->vers = rd_u32(&d);
	c->proc = rd_u32(&d);
	c->cred_flavor = rd_u32(&d);
	rd_opaque(&d, &len, 400);
	rd_u32(&d);                /* verifier */
	rd_opaque(&d, &len, 400);
	if (d.bad)
		return -1;
	c->args = d.p;
	c->args_len = (size_t)(d.end - d.p);
	return 0;
}

/* An accepted reply (accept_stat) with body, in a new buffer (NULL when out of memory). */
static struct xb *reply_msg(uint32_t xid, uint32_t accept_stat, const void *body, size_t len)
{
	struct xb *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	xb_u32(b, xid);
	xb_u32(b, 1);              /* REPLY */
	xb_u32(b, 0);              /* MSG_ACCEPTED */
	xb_u32(b, RAW_AUTH_NONE);
	xb_u32(b, 0);
	xb_u32(b, accept_stat);
	xb_bytes(b, body, len);
	return b;
}

static int reply(int fd, const struct sockaddr_in *to, uint32_t xid, uint32_t accept_stat,
                 const void *body, size_t len)
{
	struct xb *b = reply_msg(xid, accept_stat, body, len);
	if (!b)
		return -1;
	ssize_t n = sendto(fd, b->buf, b->len, 0, (const struct sockaddr *)to, sizeof *to);
	int rc = n == (ssize_t)b->len ? 0 : -1;
	free(b);
	return rc;
}

/* An accepted SUCCESS reply with body as one record on the TCP connection fd. */
static int reply_record(int fd, uint32_t xid, const void *body, size_t len)
{
	struct xb *b = reply_msg(xid, 0, body, len);
	int rc = b ? raw_send_record(fd, b->buf, b->len) : -1;
	free(b);
	return rc;
}

/* The fake portmapper: GETPORT of the fake lockd (NLM, any version) or statd (NSM v1), 0 for
 * anything else; NULL; PROC_UNAVAIL for the rest. */
static void serve_pmap(struct rl_fakehost *h, struct rl_incall *c)
{
	if (parse_call(c) < 0 || c->prog != RL_PMAP_PROG)
		return;
	if (c->proc == 0) {
		reply(h->pmap_fd, &c->from, c->xid, 0, NULL, 0);
		return;
	}
	if (c->proc != RL_PMAP_GETPORT || c->vers != RL_PMAP_VERS) {
		reply(h->pmap_fd, &c->from, c->xid, 3, NULL, 0);   /* PROC_UNAVAIL */
		return;
	}
	struct rd d = {c->args, c->args + c->args_len, false};
	uint32_t prog = rd_u32(&d), vers = rd_u32(&d), prot = rd_u32(&d);
	uint32_t port = 0;
	if (prog == RL_NLM_PROG && prot == IPPROTO_UDP)
		port = h->lockd_port;
	else if (prog == RL_NLM_PROG && prot == IPPROTO_TCP)
		port = h->lockd_tcp_port;
	else if (prog == RL_SM_PROG && vers == RL_SM_VERS && prot == IPPROTO_UDP)
		port = h->statd_port;
	h->getports++;
	h->gp_prog = prog;
	h->gp_vers = vers;
	h->gp_prot = prot;
	h->gp_from = c->from;
	uint8_t out[4] = {0, 0, (uint8_t)(port >> 8), (uint8_t)port};
	reply(h->pmap_fd, &c->from, c->xid, 0, out, 4);
}

/* A call over TCP: accept the server's connection and read its one record. 1, or 0 when it
 * was no call (the connection is then closed). */
static int tcp_call(struct rl_fakehost *h, struct rl_incall *c)
{
	socklen_t fl = sizeof c->from;
	int fd = accept4(h->lockd_tcp_fd, (struct sockaddr *)&c->from, &fl, SOCK_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t got = raw_recv_record(fd, c->rec, sizeof c->rec, 2000);
	if (got < 0) {
		close(fd);
		return 0;
	}
	c->len = (size_t)got;
	c->fd = h->conn_fd = fd;
	c->tcp = true;
	if (parse_call(c) == 0)
		return 1;
	close(fd);
	h->conn_fd = -1;
	return 0;
}

int rl_fakehost_wait(struct rl_fakehost *h, int timeout_ms, struct rl_incall *c)
{
	long long deadline = rb_now_ms() + timeout_ms;
	if (h->conn_fd >= 0) {
		close(h->conn_fd);   /* the previous call's, answered or not */
		h->conn_fd = -1;
	}
	for (;;) {
		struct pollfd pf[4] = {{.fd = h->pmap_fd, .events = POLLIN},
		                       {.fd = h->lockd_fd, .events = POLLIN},
		                       {.fd = h->statd_fd, .events = POLLIN},
		                       {.fd = h->lockd_tcp_fd, .events = POLLIN}};
		long long left = deadline - rb_now_ms();
		if (left < 0)
			left = 0;
		int n = poll(pf, 4, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		if ((pf[3].revents & POLLIN) && tcp_call(h, c))
			return 1;
		for (int i = 0; i < 3; i++) {
			if (!(pf[i].revents & POLLIN))
				continue;
			c->tcp = false;
			socklen_t fl = sizeof c->from;
			ssize_t got = recvfrom(pf[i].fd, c->rec, sizeof c->rec, 0,
			                       (struct sockaddr *)&c->from, &fl);
			if (got < 0)
				continue;
			c->len = (size_t)got;
			c->fd = pf[i].fd;
			if (i == 0) {
				serve_pmap(h, c);
				continue;
			}
			if (parse_call(c) == 0)
				return 1;
		}
	}
}

int rl_fakehost_reply(const struct rl_incall *c, const void *body, size_t len)
{
	if (c->tcp)
		return reply_record(c->fd, c->xid, body, len);
	return reply(c->fd, &c->from, c->xid, 0, body, len);
}

int rl_fakehost_reply_res(const struct rl_incall *c, const uint8_t *cookie, uint32_t cookie_len,
                          uint32_t stat)
{
	struct xb *b = calloc(1, sizeof *b);
	if (!b)
		return -1;
	xb_opaque(b, cookie, cookie_len);
	xb_u32(b, stat);
	int rc = rl_fakehost_reply(c, b->buf, b->len);
	free(b);
	return rc;
}

int rl_dec_granted(const struct rl_incall *c, struct rl_granted *g)
{
	struct rd d = {c->args, c->args + c->args_len, false};
	uint32_t len;
	const uint8_t *p;
	memset(g, 0, sizeof *g);
	if ((p = rd_opaque(&d, &g->cookie_len, sizeof g->cookie)))
		memcpy(g->cookie, p, g->cookie_len);
	g->excl = rd_u32(&d) != 0;
	if ((p = rd_opaque(&d, &len, sizeof g->caller - 1)))
		memcpy(g->caller, p, len);
	if ((p = rd_opaque(&d, &g->fh.len, sizeof g->fh.data)))
		memcpy(g->fh.data, p, g->fh.len);
	if ((p = rd_opaque(&d, &g->oh_len, RL_OH_MAX)))
		memcpy(g->oh, p, g->oh_len);
	g->svid = (int32_t)rd_u32(&d);
	g->off = rd_u64(&d);
	g->len = rd_u64(&d);
	return d.bad || d.p != d.end ? -1 : 0;
}

int rl_dec_stat_chge(const struct rl_incall *c, char *mon_name, size_t cap, int32_t *state)
{
	struct rd d = {c->args, c->args + c->args_len, false};
	uint32_t len;
	const uint8_t *p = rd_opaque(&d, &len, (uint32_t)cap - 1);
	if (p) {
		memcpy(mon_name, p, len);
		mon_name[len] = '\0';
	}
	*state = (int32_t)rd_u32(&d);
	return d.bad || d.p != d.end ? -1 : 0;
}
