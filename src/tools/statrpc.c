/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "statrpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define STATS_PROGRAM 0x20004e55u
#define STATS_VERSION 1u
#define REPLY_MAX (16u << 20)
#define TIMEOUT_MS 10000

/* RFC 5531 constants */
enum { MSG_CALL = 0, MSG_REPLY = 1, MSG_ACCEPTED = 0, MSG_DENIED = 1, RPC_VERS = 2 };
static const char *const accept_names[] = {
	"SUCCESS", "PROG_UNAVAIL", "PROG_MISMATCH", "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR",
};


bool statrpc_u32(struct statrpc_cur *c, uint32_t *v)
{
	if (c->end - c->p < 4)
		return false;
	*v = (uint32_t)c->p[0] << 24 | (uint32_t)c->p[1] << 16 | (uint32_t)c->p[2] << 8 | c->p[3];
	c->p += 4;
	return true;
}

bool statrpc_u64(struct statrpc_cur *c, uint64_t *v)
{
	uint32_t hi, lo;

	if (!statrpc_u32(c, &hi) || !statrpc_u32(c, &lo))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

/* Opaque of len bytes padded to 4: *data points into the reply. */
bool statrpc_opaque(struct statrpc_cur *c, uint32_t len, const uint8_t **data)
{
	size_t padded = ((size_t)len + 3) & ~(size_t)3;

	if ((size_t)(c->end - c->p) < padded)
		return false;
	*data = c->p;
	c->p += padded;
	return true;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The whole call record: record mark, xid, CALL, rpcvers 2, prog, vers, proc, AUTH_NONE
 * credential and verifier (flavor 0, length 0 each), no arguments. */
static size_t encode_call(uint8_t *buf, uint32_t xid, uint32_t proc)
{
	const uint32_t words[] = { xid, MSG_CALL, RPC_VERS, STATS_PROGRAM, STATS_VERSION, proc,
				   0, 0, 0, 0 };
	size_t n = sizeof(words) / sizeof(words[0]);

	put_u32(buf, 0x80000000u | (uint32_t)(n * 4));   /* last fragment */
	for (size_t i = 0; i < n; i++)
		put_u32(buf + 4 + 4 * i, words[i]);
	return 4 + 4 * n;
}

int statrpc_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	int fd = -1, rc = getaddrinfo(host, port, &hints, &ai);

	if (rc != 0) {
		fprintf(stderr, "%s: %s:%s: %s\n", statrpc_prog, host, port, gai_strerror(rc));
		return -1;
	}
	for (a = ai; a != NULL && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		fprintf(stderr, "%s: connect to %s:%s: %s\n", statrpc_prog, host, port, strerror(errno));
	freeaddrinfo(ai);
	return fd;
}

static bool send_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Read exactly len bytes, waiting TIMEOUT_MS at most for each piece. */
static bool recv_all(int fd, uint8_t *p, size_t len)
{
	while (len > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, TIMEOUT_MS) == 0) {
			fprintf(stderr, "%s: no reply in %d ms\n", statrpc_prog, TIMEOUT_MS);
			return false;
		}
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "%s: %s\n", statrpc_prog, n == 0 ? "the server closed the connection"
						: strerror(errno));
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Reassemble one record (RFC 5531 record marking: fragments until the last-fragment bit).
 * The caller frees *out. Its length, or 0 on failure. */
static size_t recv_record(int fd, uint8_t **out)
{
	uint8_t *buf = NULL, mark[4];
	size_t len = 0;
	uint32_t m;

	do {
		uint8_t *nb;
		if (!recv_all(fd, mark, 4))
			goto fail;
		m = (uint32_t)mark[0] << 24 | (uint32_t)mark[1] << 16 | (uint32_t)mark[2] << 8 | mark[3];
		if (len + (m & 0x7fffffffu) > REPLY_MAX) {
			fprintf(stderr, "%s: reply larger than %u bytes\n", statrpc_prog, REPLY_MAX);
			goto fail;
		}
		nb = realloc(buf, len + (m & 0x7fffffffu) + 1);
		if (nb == NULL)
			goto fail;
		buf = nb;
		if (!recv_all(fd, buf + len, m & 0x7fffffffu))
			goto fail;
		len += m & 0x7fffffffu;
	} while (!(m & 0x80000000u));
	*out = buf;
	return len;
fail:
	free(buf);
	return 0;
}

/* Check the reply header up to the result: xid, REPLY, MSG_ACCEPTED, verifier, SUCCESS. */
static bool check_header(struct statrpc_cur *c, uint32_t xid)
{
	uint32_t v[3], flavor, vlen, stat;
	const uint8_t *body;

	if (!statrpc_u32(c, &v[0]) || !statrpc_u32(c, &v[1]) || !statrpc_u32(c, &v[2]))
		goto short_reply;
	if (v[0] != xid || v[1] != MSG_REPLY) {
		fprintf(stderr, "%s: not our reply (xid %#x, type %u)\n", statrpc_prog, v[0], v[1]);
		return false;
	}
	if (v[2] != MSG_ACCEPTED) {
		fprintf(stderr, "%s: call denied (reject_stat %s)\n", statrpc_prog,
			statrpc_u32(c, &stat) ? (stat == 0 ? "RPC_MISMATCH" : "AUTH_ERROR") : "?");
		return false;
	}
	if (!statrpc_u32(c, &flavor) || !statrpc_u32(c, &vlen) || vlen > 400 ||
	    !statrpc_opaque(c, vlen, &body) || !statrpc_u32(c, &stat))
		goto short_reply;
	if (stat != 0) {
		fprintf(stderr, "%s: %s (the server has no STATS program 0x%x v%u?)\n", statrpc_prog,
			stat < 6 ? accept_names[stat] : "unknown accept_stat", STATS_PROGRAM,
			STATS_VERSION);
		return false;
	}
	return true;
short_reply:
	fprintf(stderr, "%s: short or garbled reply header\n", statrpc_prog);
	return false;
}

int statrpc_call(int fd, uint32_t proc, uint8_t **reply, struct statrpc_cur *body)
{
	uint8_t call[64];
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	uint32_t xid = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() << 16;
	size_t len = encode_call(call, xid, proc);
	*reply = NULL;
	if (!send_all(fd, call, len)) {
		fprintf(stderr, "%s: send: %s\n", statrpc_prog, strerror(errno));
		return STATRPC_EXIT_PROTO;
	}
	len = recv_record(fd, reply);
	if (len == 0)
		return STATRPC_EXIT_PROTO;
	*body = (struct statrpc_cur){ *reply, *reply + len };
	if (!check_header(body, xid)) {
		free(*reply);
		*reply = NULL;
		return STATRPC_EXIT_PROTO;
	}
	return 0;
}
