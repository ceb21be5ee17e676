/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's Prometheus endpoint read by a test. See scrape.h. */
#include "scrape.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>

char *scrape_get_from(uint16_t port, const char *src)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in from = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	if (src) {
		assert_int_equal(inet_pton(AF_INET, src, &from.sin_addr), 1);
		assert_int_equal(bind(fd, (struct sockaddr *)&from, sizeof from), 0);
	}
	struct timeval tv = {5, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	const char req[] = "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n";
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	if (send(fd, req, sizeof req - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof req - 1))
		for (ssize_t n; (n = recv(fd, buf + len, cap - len - 1, 0)) > 0;) {
			len += (size_t)n;
			if (len + 1 == cap)
				assert_non_null(buf = realloc(buf, cap *= 2));
		}
	close(fd);
	buf[len] = '\0';
	if (len == 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

bool scrape_is_ok(const char *resp)
{
	return resp && (strncmp(resp, "HTTP/1.0 200", 12) == 0 || strncmp(resp, "HTTP/1.1 200", 12) == 0);
}

char *scrape(uint16_t port)
{
	char *buf = scrape_get_from(port, NULL);
	assert_true(scrape_is_ok(buf));
	char *body = strstr(buf, "\r\n\r\n");
	assert_non_null(body);
	memmove(buf, body + 4, strlen(body + 4) + 1);
	return buf;
}

long long scrape_value(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; (p = strstr(p, series)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtoll(p + n + 1, NULL, 10);
	return -1;
}

void scrape_check_text(const char *text, const char *require)
{
	const char *py = getenv("NFSD_UC_PYTHON"), *script = getenv("NFSD_UC_METRICS_CHECK");
	if (!py || !*py || !script)
		fail_msg("no python3 with prometheus_client (scripts/install-deps.sh installs "
			 "python3-prometheus-client); meson found none");
	char path[] = "/tmp/nfsd-uc-metrics.XXXXXX", cmd[2 * PATH_MAX + 1024];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t len = strlen(text);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	int n = snprintf(cmd, sizeof cmd, "%s %s %s %s", py, script, path, require ? require : "");
	assert_true(n > 0 && (size_t)n < sizeof cmd);
	int rc = system(cmd);
	unlink(path);
	assert_int_equal(rc, 0);
}
