/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a client sends cannot forge or flood the daemon's log: SM_NOTIFY's mon_name (over UDP,
 * from anyone), FREE_ALL's name and a MNT path carrying a newline and a journal priority
 * ("\n<0>...") show up quoted and escaped inside the one line about the call, and a flood of
 * each call makes about a line a second, not a line a call. Counted against the seconds the
 * flood took, so that a slow machine is not a failure. */
#include "rawnlm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FLOOD 300

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Lines of the daemon's log holding what (after from, the log's size before the flood). */
static int count_lines(const struct itest *t, long from, const char *what)
{
	FILE *f = fopen(t->log, "r");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;
	assert_non_null(f);
	assert_int_equal(fseek(f, from, SEEK_SET), 0);
	while (getline(&line, &cap, f) >= 0)
		n += strstr(line, what) != NULL;
	free(line);
	fclose(f);
	return n;
}

/* No line of the log begins with a forged one's text, and each forged string appears only
 * escaped, inside the quotes of the line about its call. */
static void expect_no_forgery(const struct itest *t, const char *tag)
{
	FILE *f = fopen(t->log, "r");
	char *line = NULL, escaped[64];
	size_t cap = 0;
	assert_non_null(f);
	snprintf(escaped, sizeof escaped, "\\x0a<0>%s", tag);
	while (getline(&line, &cap, f) >= 0) {
		if (line[0] == '<' || (strstr(line, tag) && !strstr(line, escaped)))
			fail_msg("a forged line in the log: %s", line);
	}
	free(line);
	fclose(f);
}

/* A flood of one call makes at most a line per second it took, and one more. */
static void expect_rate_limited(const struct itest *t, long from, double t0, const char *what)
{
	int lines = count_lines(t, from, what), allowed = (int)(now_s() - t0) + 2;
	if (lines < 1 || lines > allowed)
		fail_msg("%d lines \"%s\" for %d calls in %.1f s; want 1..%d", lines, what, FLOOD,
		         now_s() - t0, allowed);
}

static void test_sm_notify(void **state)
{
	struct itest *t = *state;
	int fd = rl_udp_connect(t->lock_port, "127.0.0.5");
	assert_true(fd >= 0);
	long from = it_log_size(t);
	double t0 = now_s();
	for (int i = 0; i < FLOOD; i++)
		assert_int_equal(rl_sm_notify(fd, "evil\n<0>forged-notify", i), 0);
	close(fd);
	expect_no_forgery(t, "forged-notify");
	expect_rate_limited(t, from, t0, "SM_NOTIFY from");
}

static void test_free_all(void **state)
{
	struct itest *t = *state;
	int fd = rl_conn(t, "127.0.0.6");
	long from = it_log_size(t);
	double t0 = now_s();
	for (int i = 0; i < FLOOD; i++)
		assert_int_equal(rl_free_all(fd, "evil\n<0>forged-freeall", i), 0);
	close(fd);
	expect_no_forgery(t, "forged-freeall");
	expect_rate_limited(t, from, t0, "FREE_ALL");
}

static void test_mnt(void **state)
{
	struct itest *t = *state;
	int fd = rl_udp_connect(t->mount_port, "127.0.0.7");
	struct xb *b = calloc(1, sizeof *b);
	static uint8_t buf[4096];
	struct raw_reply r;
	struct rn_fh fh;
	assert_true(fd >= 0 && b != NULL);
	long from = it_log_size(t);
	double t0 = now_s();
	for (int i = 0; i < FLOOD; i++) {
		rn_enc_mnt(b, 0x4c4f0000u + (uint32_t)i, "/nowhere\n<0>forged-mnt");
		assert_int_equal(rl_exchange(fd, b, buf, sizeof buf, &r), 0);
		assert_int_equal(rn_dec_mnt(&r, &fh), 2);   /* MNT3ERR_NOENT */
		b->len = 0;
	}
	char shared[512];
	snprintf(shared, sizeof shared, "%s/%s", t->dir, RL_SHARED);
	for (int i = 0; i < FLOOD; i++) {
		rn_enc_mnt(b, 0x4c4f1000u + (uint32_t)i, shared);
		assert_int_equal(rl_exchange(fd, b, buf, sizeof buf, &r), 0);
		assert_int_equal(rn_dec_mnt(&r, &fh), 0);
		b->len = 0;
	}
	free(b);
	close(fd);
	expect_no_forgery(t, "forged-mnt");
	expect_rate_limited(t, from, t0, "refused (MNT3ERR_NOENT: no such export or directory)");
	expect_rate_limited(t, from, t0, "\" from 127.0.0.7\n");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sm_notify),
		cmocka_unit_test(test_free_all),
		cmocka_unit_test(test_mnt),
	};
	return RL_MAIN("integration-logs", tests);
}
