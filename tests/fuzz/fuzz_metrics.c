/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metrics endpoint (metrics_http.c) as a client reaches it: the input is a byte stream sent
 * on a new TCP connection to GET /metrics's port (one request, several pipelined, or garbage, cut
 * anywhere), the sending side is then shut, and everything the endpoint answers until it closes
 * is checked.
 *
 * The HTTP parsing is libmicrohttpd's own; what is nfsd-uc's is fuzzed around it: the daemon that
 * nfsd-uc starts (its poller, limits, timeouts, logger, accept policy and connection
 * notifications), the request handler (method, URL and body as libmicrohttpd hands them over)
 * and the text it renders (metrics_render over the running server of fz_server.c, whose counters
 * the fuzzed NFS harnesses move). The answer must be a well-formed HTTP/1.x status line with a
 * code libmicrohttpd or the handler gives, and the answer to a request that begins "GET
 * /metrics " with 200 must be the whole Prometheus text: every line "# HELP", "# TYPE" or
 * NAME{LABELS} VALUE, as Content-Length says. Only the first answer (after a 100 Continue) is
 * parsed: libmicrohttpd 0.9.75 sends the headers of some of its own error answers twice (a
 * request with a malformed Content-Length), which is its parser's business, not nfsd-uc's. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fz_check.h"
#include "fz_server.h"
#include "io/fiber.h"
#include "ops/metrics_http.h"
#include "conf/config.h"
#include "daemon.h"

#define INPUT_MAX (64 << 10)
/* After the input is sent: how long to wait for an answer to a request whose headers ended, and
 * for one to a request cut short (libmicrohttpd waits for the rest of it until its timeout); and
 * for the endpoint to close after answering. */
#define ANSWER_MS 5000
#define CUT_MS 50
#define CLOSE_MS 2000

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint16_t port;

static uint16_t free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t n = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	FZ_CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
		 getsockname(fd, (struct sockaddr *)&a, &n) == 0, "free port: %s", strerror(errno));
	close(fd);
	return ntohs(a.sin_port);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_server_init(argc, argv);
	struct daemon *d = fz_daemon();
	char listen[32];
	port = free_port();
	snprintf(listen, sizeof listen, "127.0.0.1:%u", port);
	free(d->cfg->metrics_listen);
	d->cfg->metrics_listen = strdup(listen);
	/* Inputs cut short linger until the timeout; no input is refused for those before it. */
	d->cfg->metrics_connections = d->cfg->metrics_connections_per_client = 4096;
	d->cfg->metrics_timeout = 2;
	static struct metrics_http *h;      /* runs until the process ends */
	FZ_CHECK(d->cfg->metrics_listen && metrics_http_start(d->ops, &h) == 0 && h,
		 "metrics endpoint on %s", listen);
	return 0;
}

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

/* Send it all while reading, shut our side, read until the endpoint closes, or stays silent
 * (answered, or waiting for the rest of a request cut short). */
static char *exchange(const uint8_t *s, size_t len, size_t *got)
{
	bool whole = memmem(s, len, "\r\n\r\n", 4) != NULL;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FZ_CHECK(fd >= 0, "socket: %s", strerror(errno));
	int rc;
	while ((rc = connect(fd, (struct sockaddr *)&a, sizeof a)) < 0 && errno == EINTR)
		;
	FZ_CHECK(rc == 0 || errno == EISCONN, "connect: %s", strerror(errno));
	size_t cap = 1 << 16, n = 0, sent = 0;
	char *buf = malloc(cap + 1);
	FZ_CHECK(buf, "out of memory");
	for (bool shut = false;;) {
		if (sent == len && !shut) {
			shutdown(fd, SHUT_WR);
			shut = true;
		}
		struct pollfd p = {fd, POLLIN | (shut ? 0 : POLLOUT), 0};
		int wait = !shut ? ANSWER_MS : n ? CLOSE_MS : whole ? ANSWER_MS : CUT_MS;
		int r = poll_one(&p, wait);
		FZ_CHECK(r > 0 || (shut && (n || !whole)),
			 "the endpoint neither read, answered nor closed the connection in %d ms", wait);
		if (r == 0)
			break;
		if (p.revents & POLLOUT) {
			ssize_t k = send(fd, s + sent, len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (k < 0 && errno != EAGAIN)
				sent = len;        /* it closed on us: read what it said */
			else if (k > 0)
				sent += (size_t)k;
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			if (n == cap) {
				buf = realloc(buf, (cap *= 2) + 1);
				FZ_CHECK(buf, "out of memory");
			}
			ssize_t k = recv(fd, buf + n, cap - n, MSG_DONTWAIT);
			if (k == 0 || (k < 0 && errno != EAGAIN))
				break;
			if (k > 0)
				n += (size_t)k;
		}
	}
	close(fd);
	buf[n] = '\0';
	*got = n;
	return buf;
}

/* Every line "# HELP ...", "# TYPE ..." or NAME[{LABELS}] VALUE, each ended by a newline. */
static void check_text(const char *t, size_t len)
{
	size_t samples = 0;
	for (size_t i = 0; i < len;) {
		const char *line = t + i, *end = memchr(line, '\n', len - i);
		FZ_CHECK(end, "metrics text: a line without its newline at byte %zu", i);
		i = (size_t)(end - t) + 1;
		if (*line == '#') {
			FZ_CHECK(end - line > 7 && (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7)),
				 "metrics text: bad comment line at byte %zu", (size_t)(line - t));
			continue;
		}
		const char *p = line;
		FZ_CHECK(isalpha((unsigned char)*p) || *p == '_', "metrics text: bad name at %zu",
			 (size_t)(line - t));
		while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == ':'))
			p++;
		if (p < end && *p == '{') {
			p = memchr(p, '}', (size_t)(end - p));
			FZ_CHECK(p, "metrics text: labels not closed at %zu", (size_t)(line - t));
			p++;
		}
		FZ_CHECK(p < end && *p == ' ', "metrics text: no value at %zu", (size_t)(line - t));
		char *num_end;
		strtod(p + 1, &num_end);
		FZ_CHECK(num_end == end && num_end > p + 1, "metrics text: bad value at %zu",
			 (size_t)(line - t));
		samples++;
	}
	FZ_CHECK(samples > 100, "metrics text: %zu samples", samples);
}

static bool known_status(unsigned code)
{
	/* the handler's, then libmicrohttpd's own */
	static const unsigned codes[] = {200, 400, 404, 405, 500, 100, 413, 414, 417, 431, 501, 505};
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (code == codes[i])
			return true;
	return false;
}

/* The response at r (left bytes): its length, or 0 when it cannot be delimited (no
 * Content-Length, or cut where we stopped reading). check_body: the request was GET /metrics. */
static size_t check_response(const char *r, size_t left, bool check_body)
{
	static const char pat[] = "HTTP/1.? ### ";
	for (size_t i = 0; i < left && i < sizeof pat - 1; i++)
		FZ_CHECK(pat[i] == '?' ? (r[i] == '0' || r[i] == '1') :
			 pat[i] == '#' ? isdigit((unsigned char)r[i]) : r[i] == pat[i],
			 "not an HTTP status line: %.40s", r);
	const char *hend = memmem(r, left, "\r\n\r\n", 4);
	if (left < sizeof pat - 1 || !hend)
		return 0;
	unsigned code = (unsigned)atoi(r + 9);
	FZ_CHECK(known_status(code), "status %u", code);
	size_t hlen = (size_t)(hend - r) + 4;
	long long clen = -1;
	for (const char *h = memchr(r, '\n', hlen); h && h < hend; h = memchr(h + 1, '\n', (size_t)(hend - h)))
		if (!strncasecmp(h + 1, "Content-Length:", 15))
			clen = atoll(h + 16);
	if (code == 200 && check_body) {
		FZ_CHECK(memmem(r, hlen, "text/plain; version=0.0.4", 25), "200 without the metrics type");
		FZ_CHECK(clen >= 0, "200 without Content-Length");
		if (hlen + (size_t)clen > left)
			return 0;
		check_text(r + hlen, (size_t)clen);
	}
	if (code == 100 || clen < 0 || hlen + (size_t)clen > left)
		return code == 100 ? hlen : 0;
	return hlen + (size_t)clen;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > INPUT_MAX)
		return 0;
	size_t n;
	char *r = exchange(data, size, &n);
	bool get = size >= 13 && !memcmp(data, "GET /metrics ", 13);
	for (size_t i = 0, k; i < n; i += k) {
		bool interim = n - i >= 12 && !memcmp(r + i + 9, "100", 3);
		k = check_response(r + i, n - i, get);
		if (!k || !interim)
			break;
	}
	free(r);
	return 0;
}
