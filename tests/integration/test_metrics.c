/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The figures an administrator reads: GET /metrics on the [metrics] endpoint, scraped before and
 * after a known workload (GETATTRs, WRITEs, a LOOKUP of a missing name), moves by exactly that
 * workload per procedure, with the error counted by status and each latency histogram's count
 * equal to its calls; every line is in Prometheus's text format; nfsd-uc-stat ($NFSD_UC_STAT)
 * prints the same per-procedure calls. The endpoint keeps answering with over 4096 descriptors
 * open in the daemon, and beside slow clients (slowloris) of another address. */
#include "client.h"
#include "rawbig.h"
#include "rawnfs.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define N_GETATTR 37
#define N_WRITE 23

static uint16_t metrics_port;
static uint8_t rbuf[1 << 16];

/* GET /metrics over HTTP/1.0 from address src (NULL: any): the whole response, malloc'd, or NULL
 * when the connection was refused or reset before a response came. */
static char *get_from(const char *src)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(metrics_port),
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

static bool is_ok(const char *resp)
{
	return resp && (strncmp(resp, "HTTP/1.0 200", 12) == 0 || strncmp(resp, "HTTP/1.1 200", 12) == 0);
}

/* GET /metrics over HTTP/1.0: the body, malloc'd. */
static char *scrape(void)
{
	char *buf = get_from(NULL);
	assert_true(is_ok(buf));
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

static int open_fds(pid_t pid)
{
	char dir[64];
	int n = 0;
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	assert_non_null(d);
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

#define MANY 4250
static int many[MANY];

static int close_many(void **state)
{
	(void)state;
	for (int i = 0; i < MANY; i++)
		if (many[i] > 0)
			close(many[i]);
	memset(many, 0, sizeof many);
	it_sleep_ms(500);
	return 0;
}

/* The daemon holding over 4096 descriptors (NFS connections from five addresses) still answers
 * scrapes: the endpoint does not use select(), whose sets end at descriptor 1023. */
static void test_scrape_with_4096_descriptors(void **state)
{
	struct itest *t = *state;
	for (int i = 0; i < MANY; i++) {
		char src[16];
		snprintf(src, sizeof src, "127.0.0.%d", 11 + i % 5);
		many[i] = raw_connect(t->port, src);
		assert_true(many[i] >= 0);
	}
	it_sleep_ms(500);
	int n = open_fds(t->pid);
	print_message("daemon descriptors open: %d\n", n);
	assert_true(n >= 4096);
	for (int i = 0; i < 3; i++) {
		char *body = scrape();
		check_format(body);
		free(body);
	}
}

/* Lines of the daemon's log so far that contain what. */
static int log_lines(const struct itest *t, const char *what)
{
	FILE *f = fopen(t->log, "r");
	char line[2048];
	int n = 0;
	assert_non_null(f);
	while (fgets(line, sizeof line, f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

#define SLOW 20
#define FLOOD 60

/* 20 connections from one address that send a header line now and then and never finish their
 * request (slowloris), then 60 more from it: that address holds its share (4), the others are
 * refused with one log line a second, another address is served at once, and the slow ones are
 * closed at the endpoint's timeout (10 s: then their address is served too). Before, they held
 * every connection (16) and no scrape was answered for as long as they went on. */
static void test_slow_clients_bounded(void **state)
{
	struct itest *t = *state;
	int slow[SLOW];
	int lines0 = log_lines(t, "metrics");
	uint64_t refused0 = rn_counter(t->port, "metrics_connections_refused");
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(metrics_port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in from = {.sin_family = AF_INET};
	inet_pton(AF_INET, "127.0.0.2", &from.sin_addr);
	for (int i = 0; i < SLOW + FLOOD; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		assert_true(fd >= 0);
		assert_int_equal(bind(fd, (struct sockaddr *)&from, sizeof from), 0);
		assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
		(void)send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
		if (i < SLOW)
			slow[i] = fd;
		else
			close(fd);
	}
	it_sleep_ms(200);
	long long t0 = rb_now_ms();
	char *r = get_from("127.0.0.1");
	print_message("scrape beside %d slow connections: %s after %lld ms\n", SLOW,
		      is_ok(r) ? "200" : "refused", rb_now_ms() - t0);
	assert_true(is_ok(r));
	free(r);
	/* Their address gets in once the slow ones are timed out, though they keep trickling. */
	bool served = false;
	for (int k = 0; k < 60 && !served; k++) {
		for (int i = 0; i < SLOW; i++)
			(void)send(slow[i], "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		it_sleep_ms(300);
		if (k % 5 == 4) {
			r = get_from("127.0.0.2");
			served = is_ok(r);
			free(r);
		}
	}
	print_message("their address served again after %lld ms\n", rb_now_ms() - t0);
	assert_true(served);
	for (int i = 0; i < SLOW; i++)
		close(slow[i]);
	int lines = log_lines(t, "metrics") - lines0;
	print_message("metrics log lines for %d refused connections: %d\n", SLOW + FLOOD - 4, lines);
	assert_true(lines <= 2 + (int)((rb_now_ms() - t0) / 1000) * 2);
	assert_true(rn_counter_must(t->port, "metrics_connections_refused") >= refused0 + SLOW + FLOOD - 4);
	assert_true(rn_counter_must(t->port, "metrics_connections_timed_out") >= 1);
}

int main(int argc, char **argv)
{
	static char extra[160];
	/* The daemon inherits this: a descriptor per connection, as we need one per socket. */
	struct rlimit rl = {16384, 16384};
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		perror("setrlimit");
	metrics_port = free_port();
	snprintf(extra, sizeof extra, "connections = 8192\n\n[metrics]\nlisten = 127.0.0.1:%u\n",
		 metrics_port);
	it_server_conf_extra = extra;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrape_deltas),
		cmocka_unit_test(test_stat_tool),
		cmocka_unit_test_teardown(test_scrape_with_4096_descriptors, close_many),
		cmocka_unit_test(test_slow_clients_bounded),
	};
	return IT_MAIN("metrics", tests);
}
