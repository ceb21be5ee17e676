/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The figures an administrator reads: GET /metrics on the [metrics] endpoint, scraped before and
 * after a known workload (GETATTRs, WRITEs, a LOOKUP of a missing name, an NLM TEST), moves by
 * exactly that workload per procedure and per export, with the error counted by status and each
 * latency histogram's count equal to its calls, and no call in flight at rest; every line is in
 * Prometheus's text format, and the whole text passes the official Python client's parser with a
 * HELP and a TYPE for every family (check_metrics.py: $NFSD_UC_PYTHON $NFSD_UC_METRICS_CHECK);
 * nfsd-uc-stat ($NFSD_UC_STAT) prints the same per-procedure calls. The endpoint keeps answering
 * with over 4096 descriptors open in the daemon, and beside slow clients (slowloris) of another
 * address. */
#include "client.h"
#include "rawbig.h"
#include "rawnfs.h"
#include "rawnlm.h"
#include "scrape.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define N_GETATTR 37
#define N_WRITE 23

static uint16_t metrics_port;
static uint8_t rbuf[1 << 16];

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
	struct rn_fh root, file, none;
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
	assert_int_equal(rn_lookup(fd, &root, "no-such-name", &none), NFS3ERR_NOENT);
	close(fd);
	/* One call of the lock manager: whatever its answer (the grace period may refuse it). */
	int lfd = rl_conn(t, NULL);
	struct rl_lock l = lk("metrics-client", "metrics-owner", file, 1, 0, 0);
	assert_true(rl_test(lfd, &l, EXCL, NULL) >= 0);
	close(lfd);
}

#define REQ(proc) "nfsd_uc_requests_total{program=\"nfs\",procedure=\"" proc "\"}"

/* How much series moved between two scrapes. */
static long long delta(const char *before, const char *after, const char *series)
{
	return scrape_value(after, series) - scrape_value(before, series);
}

/* How much family{export="path"} moved between two scrapes. */
static long long export_delta(const char *before, const char *after, const char *family,
			      const char *path)
{
	char series[PATH_MAX + 128];
	snprintf(series, sizeof series, "%s{export=\"%s\"}", family, path);
	long long a = scrape_value(after, series), b = scrape_value(before, series);
	assert_true(a >= 0 && b >= 0);
	return a - b;
}

/* The workload's calls on the rw export, per export: all but the MNT (MOUNT's) and the NLM
 * TEST; the other exports saw none. */
static void check_exports(const struct itest *t, const char *before, const char *after)
{
	const char *rw = t->exports[EXP_RW], *ro = t->exports[EXP_RO];
	assert_int_equal(export_delta(before, after, "nfsd_uc_export_requests_total", rw),
			 1 + N_GETATTR + N_WRITE + 1);
	assert_int_equal(export_delta(before, after, "nfsd_uc_export_writes_total", rw), N_WRITE);
	assert_int_equal(export_delta(before, after, "nfsd_uc_export_written_bytes_total", rw),
			 N_WRITE * 10);
	assert_int_equal(export_delta(before, after, "nfsd_uc_export_read_bytes_total", rw), 0);
	assert_int_equal(export_delta(before, after, "nfsd_uc_export_requests_total", ro), 0);
}

static void test_scrape_deltas(void **state)
{
	struct itest *t = *state;
	char *before = scrape(metrics_port);
	check_format(before);
	workload(t);
	char *after = scrape(metrics_port);
	check_format(after);
	assert_int_equal(delta(before, after, REQ("getattr")), N_GETATTR);
	assert_int_equal(delta(before, after, REQ("write")), N_WRITE);
	assert_int_equal(delta(before, after, REQ("create")), 1);
	assert_int_equal(delta(before, after, REQ("lookup")), 1);
	const char *noent = "nfsd_uc_errors_total{program=\"nfs\",procedure=\"lookup\","
			    "status=\"NFS3ERR_NOENT\"}";
	long long e0 = scrape_value(before, noent);
	assert_int_equal(scrape_value(after, noent) - (e0 < 0 ? 0 : e0), 1);
	assert_int_equal(scrape_value(after, "nfsd_uc_request_duration_seconds_count{program=\"nfs\","
				      "procedure=\"write\"}"), scrape_value(after, REQ("write")));
	assert_true(delta(before, after, "nfsd_uc_bytes_written_total") == N_WRITE * 10);
	assert_true(scrape_value(after, "nfsd_uc_cache_dirty_bytes") >= 0);
	assert_true(scrape_value(after, "nfsd_uc_cache_bytes") >= 0);
	const char *nlm_test = "nfsd_uc_requests_total{program=\"nlm\",procedure=\"test\"}";
	assert_int_equal(delta(before, after, nlm_test), 1);
	check_exports(t, before, after);
	/* Every call answered before its reply reached us, and an HTTP scrape is no call. */
	assert_int_equal(scrape_value(after, "nfsd_uc_requests_in_flight"), 0);
	assert_int_equal(scrape_value(after, "nfsd_uc_build_info{version=\"" NFSD_UC_VERSION "\"}"), 1);
	scrape_check_text(after, NULL);
	free(before);
	free(after);
}

/* nfsd-uc-stat's table has the write row with every WRITE so far (this program's only), and
 * its write-behind line the writes the histogram counts (after a COMMIT of the workload's file,
 * at rest: no write-behind runs between the two reads). */
static void test_stat_tool(void **state)
{
	struct itest *t = *state;
	const char *exe = getenv("NFSD_UC_STAT");
	if (!exe)
		skip();
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, file;
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_lookup(fd, &root, "metrics-file", &file), 0);
	assert_int_equal(rn_commit(fd, &file), 0);
	close(fd);
	char cmd[PATH_MAX + 64], line[512];
	snprintf(cmd, sizeof cmd, "%s -p %u", exe, t->port);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	long long writes = -1, wb = -1;
	bool cache = false;
	while (fgets(line, sizeof line, p)) {
		char prog[16], proc[32];
		long long calls;
		sscanf(line, " write-behind %lld writes", &wb);
		if (sscanf(line, "%15s %31s %lld", prog, proc, &calls) == 3 &&
		    strcmp(prog, "nfs") == 0 && strcmp(proc, "write") == 0)
			writes = calls;
		cache |= strncmp(line, "cache ", 6) == 0;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(writes, N_WRITE);
	assert_true(cache);
	char *text = scrape(metrics_port);
	long long count = scrape_value(text, "nfsd_uc_cache_writeback_size_bytes_count");
	free(text);
	if (wb != count || count <= 0)
		fail_msg("nfsd-uc-stat: %lld writes behind; the histogram: %lld", wb, count);
}

/* The whole of path, malloc'd. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *buf = calloc(1, 1 << 20);
	assert_non_null(buf);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static int occurrences(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* SIGHUP with conf as the file, scraping all along until the log says it is reloaded: each
 * scrape has one series per export of the old or of the new file. */
static void reload_scraping(struct itest *t, const char *conf, int old_n, int new_n)
{
	char *log = slurp(t->log);
	int before = occurrences(log, "reloaded ");
	free(log);
	FILE *f = fopen(t->conf, "w");
	assert_non_null(f);
	assert_true(fputs(conf, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(kill(t->pid, SIGHUP), 0);
	for (int i = 0; i < 500; i++) {
		char *body = scrape(metrics_port);
		int n = occurrences(body, "\nnfsd_uc_export_requests_total{");
		free(body);
		assert_true(n == old_n || n == new_n);
		log = slurp(t->log);
		int now = occurrences(log, "reloaded ");
		free(log);
		if (now > before)
			return;
		it_sleep_ms(10);
	}
	fail_msg("no end of reload in the log after 5 s");
}

/* The per-export series are those of the exports in force: a reload that drops one drops its
 * series, the others keep their figures; one that brings it back brings its series back. */
static void test_exports_follow_reload(void **state)
{
	struct itest *t = *state;
	char *conf = slurp(t->conf), head[PATH_MAX + 16], rw[PATH_MAX + 64];
	snprintf(head, sizeof head, "[export %s]", t->exports[EXP_SUBTREE]);
	char *cut = strstr(conf, head);
	assert_non_null(cut);
	snprintf(rw, sizeof rw, "nfsd_uc_export_requests_total{export=\"%s\"}",
		 t->exports[EXP_RW]);
	char *body = scrape(metrics_port);
	long long calls = scrape_value(body, rw);
	free(body);
	assert_true(calls > 0);
	char *fewer = strndup(conf, (size_t)(cut - conf));
	assert_non_null(fewer);
	reload_scraping(t, fewer, EXP_COUNT, EXP_COUNT - 1);
	body = scrape(metrics_port);
	assert_int_equal(occurrences(body, "\nnfsd_uc_export_requests_total{"), EXP_COUNT - 1);
	assert_null(strstr(body, t->exports[EXP_SUBTREE]));
	assert_true(scrape_value(body, rw) >= calls);
	free(body);
	reload_scraping(t, conf, EXP_COUNT - 1, EXP_COUNT);
	body = scrape(metrics_port);
	assert_int_equal(occurrences(body, "\nnfsd_uc_export_requests_total{"), EXP_COUNT);
	scrape_check_text(body, NULL);
	free(body);
	free(fewer);
	free(conf);
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
	/* until the daemon has accepted them all: seconds on a busy machine (CI beside other
	 * work, an ASan build), a fraction of one on an idle one */
	int n = 0;
	for (int waited = 0; (n = it_open_fds(t->pid)) < 4096 && waited < 60000; waited += 100)
		it_sleep_ms(100);
	print_message("daemon descriptors open: %d\n", n);
	assert_true(n >= 4096);
	for (int i = 0; i < 3; i++) {
		char *body = scrape(metrics_port);
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
	char *r = scrape_get_from(metrics_port, "127.0.0.1");
	print_message("scrape beside %d slow connections: %s after %lld ms\n", SLOW,
		      scrape_is_ok(r) ? "200" : "refused", rb_now_ms() - t0);
	assert_true(scrape_is_ok(r));
	free(r);
	/* Their address gets in once the slow ones are timed out, though they keep trickling. */
	bool served = false;
	for (int k = 0; k < 60 && !served; k++) {
		for (int i = 0; i < SLOW; i++)
			(void)send(slow[i], "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		it_sleep_ms(300);
		if (k % 5 == 4) {
			r = scrape_get_from(metrics_port, "127.0.0.2");
			served = scrape_is_ok(r);
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
	int keep, port = it_free_port(&keep);
	if (port < 0)
		return 1;
	close(keep);
	metrics_port = (uint16_t)port;
	snprintf(extra, sizeof extra, "connections = 8192\n\n[metrics]\nlisten = 127.0.0.1:%u\n",
		 metrics_port);
	it_server_conf_extra = extra;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrape_deltas),
		cmocka_unit_test(test_stat_tool),
		cmocka_unit_test(test_exports_follow_reload),
		cmocka_unit_test_teardown(test_scrape_with_4096_descriptors, close_many),
		cmocka_unit_test(test_slow_clients_bounded),
	};
	return IT_MAIN("metrics", tests);
}
