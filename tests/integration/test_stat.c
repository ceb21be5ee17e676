/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc-stat ($NFSD_UC_STAT) as an administrator uses it: `clients` lists 127.0.0.1 with the
 * mount, the connections and the lock it holds, and the counts drop after UMNT and UNLOCK; a
 * word it does not know prints the usage and exits 2 (-h prints it and exits 0); one call in a
 * 2 s interval shows as a rate of 0.5, not 0; the report has a lock line. Calls are raw RPC
 * (rawnlm.h) on the export every 127.0.0.0/8 address may use. */
#include "rawnlm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ME "127.0.0.1"

/* One client line of `nfsd-uc-stat clients`. */
struct row {
	unsigned mounts, conns, locks, blocked;
	char seen[32];
};

/* Run nfsd-uc-stat with args and redirect (a shell fragment: "2>&1 >/dev/null" to read its
 * stderr): its output in out, its exit status. */
static int run_stat(const struct itest *t, const char *args, const char *redirect, char *out,
                    size_t cap)
{
	const char *exe = getenv("NFSD_UC_STAT");
	if (!exe)
		skip();
	char cmd[PATH_MAX + 256];
	snprintf(cmd, sizeof cmd, "%s -p %u %s %s", exe, t->port, args, redirect);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* ME's line of the client list; false when it has none. */
static bool my_row(const struct itest *t, struct row *r)
{
	static char out[1 << 16];
	assert_int_equal(run_stat(t, "clients", "", out, sizeof out), 0);
	assert_non_null(strstr(out, "address"));
	for (char *save, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char addr[64];
		if (sscanf(l, "%63s %u %u %u %u %31[^\n]", addr, &r->mounts, &r->conns, &r->locks,
		           &r->blocked, r->seen) == 6 && strcmp(addr, ME) == 0)
			return true;
	}
	return false;
}

/* UMNT of SHARED from ME. */
static void umnt(const struct itest *t)
{
	char path[PATH_MAX];
	static uint8_t buf[4096];
	struct raw_reply r;
	struct xb *b = calloc(1, sizeof *b), cred = {0};
	assert_non_null(b);
	snprintf(path, sizeof path, "%s/%s", t->dir, RL_SHARED);
	xb_auth_sys(&cred, 0, 0);
	xb_call(b, 0x53540001, 2, RL_MOUNT_PROG, 3, 3, RAW_AUTH_SYS, &cred);
	xb_string(b, path);
	int fd = raw_connect(t->mount_port, ME);
	assert_true(fd >= 0);
	assert_int_equal(rl_exchange(fd, b, buf, sizeof buf, &r), 0);
	assert_int_equal(r.accept_stat, 0);
	close(fd);
	free(b);
}

/* After MNT and LOCK from 127.0.0.1: 1 mount, its connections, 1 lock, a recent call; after
 * UNLOCK and UMNT: no mount, no lock. */
static void test_clients(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "stat-lock");   /* MNT SHARED from ME, CREATE */
	int fd = rl_conn(t, ME);
	struct rl_lock l = lk("stat-host", "stat-oh", fh, 7, 0, 100);
	RL_EXPECT(rl_lock(fd, &l, EXCL, NOBLOCK, false), RL_GRANTED);
	struct row r;
	assert_true(my_row(t, &r));
	assert_int_equal(r.mounts, 1);
	assert_true(r.conns >= 1);      /* the lock's connection (and nfsd-uc-stat's own) */
	assert_int_equal(r.locks, 1);
	assert_int_equal(r.blocked, 0);
	if (!strstr(r.seen, "ago"))
		fail_msg("last seen \"%s\", want a time", r.seen);
	RL_EXPECT(rl_unlock(fd, &l), RL_GRANTED);
	umnt(t);
	assert_true(my_row(t, &r));     /* still connected and calling */
	assert_int_equal(r.mounts, 0);
	assert_int_equal(r.locks, 0);
	unsigned before = r.conns;
	close(fd);
	/* the lock connection's close reaches the server's ring a moment later */
	for (int i = 0; i < 50 && my_row(t, &r) && r.conns >= before; i++)
		it_sleep_ms(20);
	assert_true(r.conns < before);
}

/* An unknown word: the usage on stderr, exit 2, nothing on stdout; -h: usage on stdout, 0. */
static void test_usage(void **state)
{
	struct itest *t = *state;
	char out[4096];
	assert_int_equal(run_stat(t, "x", "2>/dev/null", out, sizeof out), 2);
	assert_string_equal(out, "");
	assert_int_equal(run_stat(t, "x", "2>&1 >/dev/null", out, sizeof out), 2);
	assert_non_null(strstr(out, "usage: nfsd-uc-stat"));
	assert_int_equal(run_stat(t, "clients extra", "2>&1 >/dev/null", out, sizeof out), 2);
	assert_int_equal(run_stat(t, "2 0", "2>&1 >/dev/null", out, sizeof out), 2);
	assert_int_equal(run_stat(t, "--bogus", "2>&1 >/dev/null", out, sizeof out), 2);
	assert_int_equal(run_stat(t, "-h", "2>/dev/null", out, sizeof out), 0);
	assert_non_null(strstr(out, "usage: nfsd-uc-stat"));
}

/* Read the report on p up to its lock line (its last); false at the end of the output. */
static bool read_report(FILE *p, char *row, size_t cap, const char *prog, const char *proc)
{
	char line[512];
	while (fgets(line, sizeof line, p)) {
		char g[16], n[32];
		if (row && sscanf(line, "%15s %31s", g, n) == 2 && strcmp(g, prog) == 0 &&
		    strcmp(n, proc) == 0)
			snprintf(row, cap, "%s", line);
		if (strncmp(line, "lock ", 5) == 0) {
			assert_non_null(strstr(line, "grace"));
			return true;
		}
	}
	return false;
}

/* `nfsd-uc-stat 2 2` with one NFS NULL call between its reports: the second shows it at 0.5/s. */
static void test_rate(void **state)
{
	struct itest *t = *state;
	const char *exe = getenv("NFSD_UC_STAT");
	if (!exe)
		skip();
	char cmd[PATH_MAX + 64], row[512] = "";
	snprintf(cmd, sizeof cmd, "%s -p %u 2 2", exe, t->port);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	assert_true(read_report(p, NULL, 0, NULL, NULL));
	int fd = raw_connect(t->port, ME);
	assert_true(fd >= 0);
	assert_int_equal(rl_null(fd, RL_NFS_PROG, 3), 0);
	close(fd);
	assert_true(read_report(p, row, sizeof row, "nfs", "null"));
	assert_int_equal(pclose(p), 0);
	char g[16], n[32], rate[16];
	unsigned long long calls;
	if (sscanf(row, "%15s %31s %llu %15s", g, n, &calls, rate) != 4)
		fail_msg("no nfs null row in the interval's report");
	assert_int_equal(calls, 1);
	if (strtod(rate, NULL) <= 0)
		fail_msg("1 call in 2 s shown at \"%s\"/s", rate);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_clients),
		cmocka_unit_test(test_rate),
	};
	return RL_MAIN("stat", tests);
}
