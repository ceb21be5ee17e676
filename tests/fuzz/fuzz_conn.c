/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The real record reassembly and connection handling of server.c (conn_pump, take_mark,
 * place_record, rec_grow, the direct receives, sending), on the server of fz_server.c: the input
 * is a byte stream sent on a new TCP connection to ring 0, then the sending side is shut and
 * every reply is read until the server closes the connection.
 *
 * Each complete fragment of the input gets its placeholders replaced (fz_marks.h) and its record
 * mark rewritten to the new length; what follows the first incomplete fragment goes as it is.
 * Replies must be records of a well-formed RPC reply (fz_check_reply_shape), each to the xid of
 * a call the stream held whole (reassembled here from the same bytes); the last one may be cut
 * short, as the server stops sending when it sees the end of the stream. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fz_check.h"
#include "fz_server.h"
#include "io/fiber.h"
#include "rpc/recmark.h"

#define MAX_XIDS 65536
#define CLOSE_TIMEOUT_MS 20000

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_server_init(argc, argv);
	return 0;
}

/* Placeholders replaced fragment by fragment. */
static size_t subst_stream(const uint8_t *in, size_t len, uint8_t *out)
{
	size_t i = 0, o = 0;
	while (len - i >= 4) {
		uint32_t m = recmark_get(in + i);
		if (recmark_len(m) > len - i - 4)
			break;
		size_t n = fz_subst(in + i + 4, recmark_len(m), out + o + 4);
		recmark_put(out + o, (uint32_t)n);
		if (!recmark_is_last(m))
			out[o] &= 0x7f;
		o += 4 + n;
		i += 4 + recmark_len(m);
	}
	memcpy(out + o, in + i, len - i);
	return o + len - i;
}

/* The xids of the records the stream holds whole, up to one that passes max_record; MAX_XIDS
 * + 1 when there are more than that. */
static size_t stream_xids(const uint8_t *s, size_t len, uint32_t *xids)
{
	uint8_t rec[4];
	size_t i = 0, total = 0, n = 0, max = fz_server_max_record();
	while (len - i >= 4) {
		uint32_t m = recmark_get(s + i);
		size_t fl = recmark_len(m);
		if (n == MAX_XIDS)
			return MAX_XIDS + 1;
		if (total + fl > max || fl > len - i - 4)
			break;
		/* the xid is the record's first 4 bytes, whichever fragments hold them */
		for (size_t k = 0; k < fl && total + k < 4; k++)
			rec[total + k] = s[i + 4 + k];
		total += fl;
		i += 4 + fl;
		if (recmark_is_last(m)) {
			if (total >= 4)
				xids[n++] = recmark_get(rec);
			total = 0;
		}
	}
	return n;
}

/* poll() that a signal does not cut short (libFuzzer's -timeout ticks with SIGALRM): 0 on
 * timeout. */
static int poll_one(struct pollfd *p, int timeout_ms)
{
	uint64_t end = fiber_now_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		int r = poll(p, 1, timeout_ms);
		if (r >= 0 || errno != EINTR)
			return r;
		uint64_t now = fiber_now_ns();
		if (now >= end)
			return 0;
		timeout_ms = (int)((end - now) / 1000000u);
	}
}

static int connect_server(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(fz_server_port()),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FZ_CHECK(fd >= 0, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
		return fd;
	/* interrupted: the connection goes on being made; wait for it */
	FZ_CHECK(errno == EINTR, "connect: %s", strerror(errno));
	struct pollfd p = {fd, POLLOUT, 0};
	int err = 0;
	socklen_t len = sizeof err;
	FZ_CHECK(poll_one(&p, CLOSE_TIMEOUT_MS) > 0 &&
		 getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0,
		 "connect: %s", strerror(err ? err : errno));
	return fd;
}

/* Send all of it while reading what comes back (the server stops reading while its replies
 * wait), then shut our side and read until the server closes. */
static uint8_t *exchange(int fd, const uint8_t *s, size_t len, size_t *got)
{
	size_t cap = 65536, n = 0, sent = 0;
	uint8_t *buf = malloc(cap);
	FZ_CHECK(buf, "out of memory");
	bool shut = false;
	for (;;) {
		if (sent == len && !shut) {
			shutdown(fd, SHUT_WR);
			shut = true;
		}
		struct pollfd p = {fd, POLLIN | (shut ? 0 : POLLOUT), 0};
		int r = poll_one(&p, CLOSE_TIMEOUT_MS);
		if (r <= 0)
			fz_server_dump();
		FZ_CHECK(r > 0, "the server neither read nor closed the connection in %d ms (%s)",
			 CLOSE_TIMEOUT_MS, r < 0 ? strerror(errno) : "timed out");
		if (p.revents & POLLOUT) {
			ssize_t k = send(fd, s + sent, len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (k < 0 && errno != EAGAIN)
				sent = len;        /* closed on us (an oversized record): read the rest */
			else if (k > 0)
				sent += (size_t)k;
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			if (n == cap) {
				buf = realloc(buf, cap *= 2);
				FZ_CHECK(buf, "out of memory");
			}
			ssize_t k = recv(fd, buf + n, cap - n, MSG_DONTWAIT);
			if (k == 0 || (k < 0 && errno != EAGAIN))
				break;
			if (k > 0)
				n += (size_t)k;
		}
	}
	*got = n;
	return buf;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void check_replies(const uint8_t *r, size_t n, uint32_t *xids, size_t nx)
{
	size_t i = 0, replies = 0;
	bool all = nx <= MAX_XIDS;
	if (!all)
		nx = MAX_XIDS;
	qsort(xids, nx, sizeof *xids, cmp_u32);
	while (n - i >= 4) {
		uint32_t m = recmark_get(r + i);
		if (recmark_len(m) > n - i - 4)
			break;         /* the last reply, cut short */
		fz_check_reply_shape(r + i, 4 + recmark_len(m));
		uint32_t xid = recmark_get(r + i + 4);
		bool known = bsearch(&xid, xids, nx, sizeof *xids, cmp_u32) != NULL;
		FZ_CHECK(known || !all, "reply to xid %08x, which no whole record of the stream has", xid);
		replies++;
		i += 4 + recmark_len(m);
	}
	FZ_CHECK(replies <= nx || !all, "%zu replies to %zu calls", replies, nx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint32_t xids[MAX_XIDS];
	uint8_t *s = malloc(fz_subst_cap(size));
	FZ_CHECK(s, "out of memory");
	fz_input_begin();
	size_t len = subst_stream(data, size, s);
	size_t nx = stream_xids(s, len, xids);
	int fd = connect_server();
	size_t n;
	uint8_t *r = exchange(fd, s, len, &n);
	close(fd);
	check_replies(r, n, xids, nx);
	fz_input_end();
	free(r);
	free(s);
	return 0;
}
