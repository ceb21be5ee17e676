/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hand-encoded ONC RPC over TCP. See rawrpc.h. */
#include "rawrpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void xb_room(struct xb *b, size_t n)
{
	if (b->len + n > sizeof(b->buf)) {
		fprintf(stderr, "rawrpc: call buffer overflow\n");
		abort();   /* a bug in the test, not in the daemon */
	}
}

void xb_u32(struct xb *b, uint32_t v)
{
	xb_room(b, 4);
	put_u32(b->buf + b->len, v);
	b->len += 4;
}

void xb_u64(struct xb *b, uint64_t v)
{
	xb_u32(b, (uint32_t)(v >> 32));
	xb_u32(b, (uint32_t)v);
}

void xb_bytes(struct xb *b, const void *p, size_t n)
{
	if (n == 0)
		return;     /* an empty opaque: p may be NULL, which memcpy must not get */
	xb_room(b, n);
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

void xb_opaque(struct xb *b, const void *p, size_t n)
{
	static const uint8_t zeros[4];

	xb_u32(b, (uint32_t)n);
	xb_bytes(b, p, n);
	xb_bytes(b, zeros, (4 - n % 4) % 4);
}

void xb_string(struct xb *b, const char *s)
{
	xb_opaque(b, s, strlen(s));
}

uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void xb_call(struct xb *b, uint32_t xid, uint32_t rpcvers, uint32_t prog, uint32_t vers,
             uint32_t proc, uint32_t flavor, const struct xb *cred)
{
	xb_u32(b, xid);
	xb_u32(b, 0);              /* CALL */
	xb_u32(b, rpcvers);
	xb_u32(b, prog);
	xb_u32(b, vers);
	xb_u32(b, proc);
	xb_u32(b, flavor);
	xb_opaque(b, cred != NULL ? cred->buf : NULL, cred != NULL ? cred->len : 0);
	xb_u32(b, RAW_AUTH_NONE);  /* verifier */
	xb_u32(b, 0);
}

void xb_auth_sys(struct xb *cred, uint32_t uid, uint32_t gid)
{
	xb_u32(cred, (uint32_t)time(NULL));
	xb_string(cred, "rawrpc");
	xb_u32(cred, uid);
	xb_u32(cred, gid);
	xb_u32(cred, 0);           /* no extra groups */
}

int raw_connect(uint16_t port, const char *src)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port),
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in from = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (src != NULL && (inet_pton(AF_INET, src, &from.sin_addr) != 1 ||
	                    bind(fd, (struct sockaddr *)&from, sizeof(from)) < 0)) {
		close(fd);
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		close(fd);
		return -1;
	}
	/* The record mark and the record go in two sends: without this, Nagle holds the second
	 * until the server's delayed ACK (40 ms a call). */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
	return fd;
}

int raw_send_all(int fd, const void *p, size_t len)
{
	const uint8_t *q = p;

	while (len > 0) {
		ssize_t n = send(fd, q, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		q += n;
		len -= (size_t)n;
	}
	return 0;
}

int raw_send_record(int fd, const void *rec, size_t len)
{
	uint8_t mark[4];

	put_u32(mark, 0x80000000u | (uint32_t)len);
	if (raw_send_all(fd, mark, 4) < 0)
		return -1;
	return raw_send_all(fd, rec, len);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly n bytes before the deadline: 0, -1 (closed/error), -2 (timeout). */
static int recv_exact(int fd, uint8_t *p, size_t n, long long deadline)
{
	while (n > 0) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t r;

		if (left <= 0)
			return -2;
		if (poll(&pf, 1, (int)left) == 0)
			return -2;
		r = recv(fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

ssize_t raw_recv_record(int fd, uint8_t *buf, size_t cap, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	size_t len = 0;
	int last = 0;

	while (!last) {
		uint8_t mark[4];
		uint32_t frag;
		int rc = recv_exact(fd, mark, 4, deadline);

		if (rc < 0)
			return rc;
		frag = get_u32(mark) & 0x7fffffffu;
		last = (get_u32(mark) & 0x80000000u) != 0;
		if (frag > cap - len)
			return -1;
		rc = recv_exact(fd, buf + len, frag, deadline);
		if (rc < 0)
			return rc;
		len += frag;
	}
	return (ssize_t)len;
}

int raw_wait_closed(int fd, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	uint8_t sink[65536];

	for (;;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t r;

		if (left <= 0 || poll(&pf, 1, (int)left) == 0)
			return 0;
		r = recv(fd, sink, sizeof(sink), 0);
		if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
			return 1;
	}
}

static int parse_accepted(const uint8_t *p, const uint8_t *end, struct raw_reply *r)
{
	uint32_t verf_len;

	if (end - p < 8)
		return -1;
	verf_len = get_u32(p + 4);   /* skip the verifier's flavor and body */
	if (verf_len > 400 || (size_t)(end - p) < 8 + ((verf_len + 3) & ~3u) + 4)
		return -1;
	p += 8 + ((verf_len + 3) & ~3u);
	r->accept_stat = get_u32(p);
	p += 4;
	if (r->accept_stat == 2) {   /* PROG_MISMATCH */
		if (end - p < 8)
			return -1;
		r->low = get_u32(p);
		r->high = get_u32(p + 4);
		p += 8;
	}
	r->body = p;
	r->body_len = (size_t)(end - p);
	return 0;
}

static int parse_denied(const uint8_t *p, const uint8_t *end, struct raw_reply *r)
{
	if (end - p < 8)
		return -1;
	r->reject_stat = get_u32(p);
	if (r->reject_stat == 0) {   /* RPC_MISMATCH */
		if (end - p < 12)
			return -1;
		r->low = get_u32(p + 4);
		r->high = get_u32(p + 8);
	} else {
		r->auth_stat = get_u32(p + 4);
	}
	return 0;
}

int raw_parse_reply(const uint8_t *rec, size_t len, struct raw_reply *r)
{
	memset(r, 0, sizeof(*r));
	if (len < 12 || get_u32(rec + 4) != 1)   /* xid, REPLY, reply_stat */
		return -1;
	r->xid = get_u32(rec);
	r->reply_stat = get_u32(rec + 8);
	if (r->reply_stat == 0)
		return parse_accepted(rec + 12, rec + len, r);
	if (r->reply_stat == 1)
		return parse_denied(rec + 12, rec + len, r);
	return -1;
}

int raw_call(int fd, const struct xb *call, uint8_t *buf, size_t cap, struct raw_reply *reply)
{
	ssize_t n;

	if (raw_send_record(fd, call->buf, call->len) < 0)
		return -1;
	n = raw_recv_record(fd, buf, cap, 10000);
	if (n < 0)
		return -1;
	if (raw_parse_reply(buf, (size_t)n, reply) < 0)
		return -1;
	return reply->xid == get_u32(call->buf) ? 0 : -1;
}
