/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The figures an administrator reads: GET /metrics on the [metrics] endpoint, scraped before and
 * after a known workload (GETATTRs, WRITEs, a LOOKUP of a missing name), moves by exactly that
 * workload per procedure, with the error counted by status and each latency histogram's count
 * equal to its calls; every line is in Prometheus's text format; nfsd-uc-stat ($NFSD_UC_STAT)
 * prints the same per-procedure calls. */
#include "client.h"
#include "rawnfs.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define N_GETATTR 37
#define N_WRITE 23

static uint16_t metrics_port;
static uint8_t rbuf[1 << 16];

/* GET /metrics over HTTP/1.0: the body, malloc'd. */
static char *scrape(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(metrics_port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	const char req[] = "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n";
	assert_int_equal(raw_send_all(fd, req, sizeof req - 1), 0);
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	for (ssize_t n; (n = recv(fd, buf + len, cap - len - 1, 0)) > 0;) {
		len += (size_t)n;
		if (len + 1 == cap)
			assert_non_null(buf = realloc(buf, cap *= 2));
	}
	close(fd);
	buf[len] = '\0';
	assert_true(strncmp(buf, "HTTP/1.0 200", 12) == 0 || strncmp(buf, "HTTP/1.1 200", 12) == 0);
	char *body = strstr(buf, "\r\n\r\n");
	assert_non_null(body);
	memmove(buf, body + 4, strlen(body + 4) + 1);
	return buf;
}

/* The value of the sample whose name and labels are exactly series; -1 when absent. */
static long long value(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; (p = strstr(p, series)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtoll(p + n + 1, NULL, 10);
	return -1;
}

/* Every line a comment (# HELP / # TYPE) or NAME[{LABELS}] VALUE. */
static void check_format(const char *text)
{
	int samples = 0;
	for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
		const char *end = strchr(line, '\n');
		assert_non_null(end);                      /* ends with a newline */
		if (*line == '#') {
			assert_true(strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0);
			continue;
		}
		const char *p = line;
		assert_true(isalpha((unsigned char)*p) || *p == '_');
		while (isalnum((unsigned char)*p) || *p == '_' || *p == ':')
			p++;
		if (*p == '{') {
			p = strchr(p, '}');
			assert_true(p && p < end);
			p++;
		}
		assert_int_equal(*p, ' ');
		char *num_end;
		strtod(p + 1, &num_end);
		assert_true(num_end == end && num_end > p + 1);
		samples++;
	}
	assert_true(samples > 100);
}

static void workload(const struct itest *t)
{
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, file;
	struct xb b;
	struct raw_reply r;
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_create(fd, &root, "metrics-file", &file), 0);
	for (int i = 0; i < N_GETATTR; i++) {
		rn_enc_getattr(&b, 0x6e700000u + (uint32_t)i, &file);
		assert_int_equal(rn_exchange(fd, &b, rbuf, sizeof rbuf, &r), 0);
	}
	for (int i = 0; i < N_WRITE; i++)
		assert_int_equal(rn_write(fd, &file, (uint64_t)i * 1000, "0123456789", 10, RN_UNSTABLE),
				 0);
	assert_int_equal(rn_lookup(fd, &root, "no-such-name", &file), NFS3ERR_NOENT);
	close(fd);
}

#define REQ(proc) "nfsd_uc_requests_total{program=\"nfs\",procedure=\"" proc "\"}"

static void test_scrape_deltas(void **state)
{
	struct itest *t = *state;
	char *before = scrape();
	check_format(before);
	workload(t);
	char *after = scrape();
	check_format(after);
	assert_int_equal(value(after, REQ("getattr")) - value(before, REQ("getattr")), N_GETATTR);
	assert_int_equal(value(after, REQ("write")) - value(before, REQ("write")), N_WRITE);
	assert_int_equal(value(after, REQ("create")) - value(before, REQ("create")), 1);
	assert_int_equal(value(after, REQ("lookup")) - value(before, REQ("lookup")), 1);
	const char *noent = "nfsd_uc_errors_total{program=\"nfs\",procedure=\"lookup\","
			    "status=\"NFS3ERR_NOENT\"}";
	long long e0 = value(before, noent);
	assert_int_equal(value(after, noent) - (e0 < 0 ? 0 : e0), 1);
	assert_int_equal(value(after, "nfsd_uc_request_duration_seconds_count{program=\"nfs\","
				      "procedure=\"write\"}"), value(after, REQ("write")));
	assert_true(value(after, "nfsd_uc_bytes_written_total") -
		    value(before, "nfsd_uc_bytes_written_total") == N_WRITE * 10);
	assert_true(value(after, "nfsd_uc_cache_dirty_bytes") >= 0);
	assert_true(value(after, "nfsd_uc_cache_bytes") >= 0);
	free(before);
	free(after);
}

/* nfsd-uc-stat's table has the write row with every WRITE so far (this program's only). */
static void test_stat_tool(void **state)
{
	struct itest *t = *state;
	const char *exe = getenv("NFSD_UC_STAT");
	if (!exe)
		skip();
	char cmd[PATH_MAX + 64], line[512];
	snprintf(cmd, sizeof cmd, "%s -p %u", exe, t->port);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	long long writes = -1;
	bool cache = false;
	while (fgets(line, sizeof line, p)) {
		char prog[16], proc[32];
		long long calls;
		if (sscanf(line, "%15s %31s %lld", prog, proc, &calls) == 3 &&
		    strcmp(prog, "nfs") == 0 && strcmp(proc, "write") == 0)
			writes = calls;
		cache |= strncmp(line, "cache ", 6) == 0;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(writes, N_WRITE);
	assert_true(cache);
}

static uint16_t free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t n = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &n) < 0)
		return 0;
	close(fd);
	return ntohs(a.sin_port);
}

int main(int argc, char **argv)
{
	static char extra[128];
	metrics_port = free_port();
	snprintf(extra, sizeof extra, "\n[metrics]\nlisten = 127.0.0.1:%u\n", metrics_port);
	it_server_conf_extra = extra;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrape_deltas),
		cmocka_unit_test(test_stat_tool),
	};
	return IT_MAIN("metrics", tests);
}
