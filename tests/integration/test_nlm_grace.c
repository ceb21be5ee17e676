/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The lock manager across restarts: the hosts that held locks are recorded (state/nsm/hosts),
 * told of the restart (SM_NOTIFY to their status monitor, found through their portmapper), and
 * during the grace period only their reclaims are granted; it ends when each recorded host made
 * a normal request, or when its time is up. Run in a private network namespace (in_netns.sh):
 * "host A" (127.0.0.2) is a fake client host with a portmapper on 127.0.0.2:111 and a statd
 * (rawnlm.h); "host B" (127.0.0.3) has neither. The daemon listens on 0.0.0.0 (only the
 * namespace's loopback is there), so calls may go to any 127.0.0.x. */
#include "rawnlm.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GRACE_S 8
#define A_ADDR "127.0.0.2"
#define B_ADDR "127.0.0.3"

static struct rl_fakehost hosta;
static bool hosta_open;
static struct rl_incall in;
static struct rn_fh fh;
static int32_t last_state;

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A lock of this program's one file. */
static struct rl_lock lk_fh(const char *caller, const char *oh, int32_t svid, uint64_t off,
                            uint64_t len)
{
	return lk(caller, oh, fh, svid, off, len);
}

/* The record of a client host, as the daemon keeps it for the next start. */
static void expect_record(const struct itest *t, const char *addr, const char *name)
{
	char path[PATH_MAX + 64], buf[512] = "";
	snprintf(path, sizeof path, "%s/state/nsm/hosts/%s", t->dir, addr);
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("no record %s of a client holding a lock", path);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (strncmp(buf, name, strlen(name)) != 0 || buf[strlen(name)] != '\n')
		fail_msg("record %s holds '%s', want the caller name %s first", path, buf, name);
}

/* Host A's statd is told of the restart: SM_NOTIFY naming the address A locked through, with
 * the new state number (odd: up, and above the last one). */
static void expect_notify(int ms)
{
	int rc = rl_fakehost_wait(&hosta, ms, &in);
	if (rc != 1)
		fail_msg("host A's statd got no SM_NOTIFY within %d ms of the restart (%u GETPORT "
		         "calls to its portmapper)", ms, hosta.getports);
	if (in.prog != RL_SM_PROG || in.vers != RL_SM_VERS || in.proc != RL_SM_NOTIFY)
		fail_msg("host A got program %u v%u procedure %u, want NSM v1 SM_NOTIFY (6)",
		         in.prog, in.vers, in.proc);
	assert_int_equal(hosta.gp_prog, RL_SM_PROG);
	assert_int_equal(hosta.gp_vers, RL_SM_VERS);
	assert_int_equal(hosta.gp_prot, IPPROTO_UDP);
	char mon[256];
	int32_t st;
	assert_int_equal(rl_dec_stat_chge(&in, mon, sizeof mon, &st), 0);
	assert_string_equal(mon, "127.0.0.1");
	if (!(st & 1) || st <= last_state)
		fail_msg("SM_NOTIFY state %d: want an odd number above %d", st, last_state);
	last_state = st;
	assert_int_equal(in.from.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(rl_fakehost_reply(&in, NULL, 0), 0);
}

static void restart(struct itest *t, bool crash)
{
	if (crash) {
		assert_int_equal(it_kill(t), 0);
	} else {
		int st = it_stop(t);
		if (st != 0)
			fail_msg("daemon exit status after SIGTERM: %d, want 0", st);
	}
	if (it_start(t) != 0)
		fail_msg("daemon did not start again");
}

/* A holds a lock, the daemon restarts; during grace only A's reclaim is granted, B is told to
 * wait; A's first normal request ends the grace period early (A was the only one to wait for). */
static void test_reclaim_in_grace(void **state)
{
	struct itest *t = *state;
	int rc = rl_fakehost_open(&hosta, A_ADDR);
	if (rc < 0)
		fail_msg("cannot bind the fake host's portmapper %s:111: %s (run through "
		         "in_netns.sh)", A_ADDR, strerror(-rc));
	hosta_open = true;
	fh = rl_make_file(t, "grace");
	int a = rl_conn(t, A_ADDR);
	struct rl_lock la = lk_fh("hostA", "ohA", 1, 0, 100);
	assert_int_equal(rl_sm_stat(a, "hostA", &last_state), 1);   /* stat_fail: no monitoring */
	assert_true(last_state & 1);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	expect_record(t, A_ADDR, "hostA");
	close(a);

	restart(t, false);
	long long started = now_ms();
	a = rl_conn(t, A_ADDR);
	int b = rl_conn(t, B_ADDR);
	struct rl_lock lb_free = lk_fh("hostB", "ohB", 2, 200, 100);
	struct rl_lock lb_a = lk_fh("hostB", "ohB", 2, 0, 100);
	RL_EXPECT(rl_lock(b, &lb_free, EXCL, NOBLOCK, false), RL_DENIED_GRACE_PERIOD);
	RL_EXPECT(rl_test(b, &lb_free, EXCL, NULL), RL_DENIED_GRACE_PERIOD);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, RECLAIM), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb_a, EXCL, NOBLOCK, false), RL_DENIED_GRACE_PERIOD);
	int32_t st;
	assert_int_equal(rl_sm_stat(b, "hostB", &st), 1);
	expect_notify(3000);
	assert_int_equal(st, last_state);   /* SM_STAT gives the new state too */
	if (now_ms() - started > (GRACE_S - 2) * 1000)
		fail_msg("too slow: the grace period may have ended on its own");
	/* A's first normal request: A is done reclaiming, and the grace period is over for all */
	struct rl_lock la_probe = lk_fh("hostA", "ohA", 1, 500, 10);
	RL_EXPECT(rl_test(a, &la_probe, EXCL, NULL), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb_free, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb_a, EXCL, NOBLOCK, false), RL_DENIED);   /* A reclaimed it */
	expect_record(t, B_ADDR, "hostB");
	close(a);
	close(b);
}

/* After a crash both A and B are waited for; B asks normally at once, A never does: the grace
 * period lasts its whole time, then B's LOCK is granted. A's reclaims work meanwhile. */
static void test_grace_times_out(void **state)
{
	struct itest *t = *state;
	if (!hosta_open)
		fail_msg("needs test_reclaim_in_grace first");
	restart(t, true);
	long long started = now_ms();
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock la = lk_fh("hostA", "ohA", 1, 0, 100);
	struct rl_lock lb_free = lk_fh("hostB", "ohB", 2, 200, 100);
	struct rl_lock lb_a = lk_fh("hostB", "ohB", 2, 0, 100);
	RL_EXPECT(rl_lock(b, &lb_free, EXCL, NOBLOCK, false), RL_DENIED_GRACE_PERIOD);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, RECLAIM), RL_GRANTED);
	expect_notify(3000);
	int st = -1;
	while (now_ms() - started < (GRACE_S + 5) * 1000) {
		st = rl_lock(b, &lb_free, EXCL, NOBLOCK, false);
		if (st != RL_DENIED_GRACE_PERIOD)
			break;
		it_sleep_ms(250);
	}
	long long took = now_ms() - started;
	if (st != RL_GRANTED)
		fail_msg("B's LOCK after %lld ms: %s, want GRANTED once the %d s grace period is "
		         "over", took, rl_stat_name(st), GRACE_S);
	if (took < (GRACE_S - 2) * 1000)
		fail_msg("the grace period ended after %lld ms, before its %d s, while host A had "
		         "not made a normal request", took, GRACE_S);
	RL_EXPECT(rl_lock(b, &lb_a, EXCL, NOBLOCK, false), RL_DENIED);    /* A's reclaim holds */
	struct rl_lock lb_late = lk_fh("hostB", "ohB", 2, 1000, 10);
	/* a reclaim after the grace period is refused, as knfsd does: the range may have been
	 * someone else's meanwhile; the same range asked for normally is granted */
	RL_EXPECT(rl_lock(b, &lb_late, EXCL, NOBLOCK, RECLAIM), RL_DENIED_GRACE_PERIOD);
	RL_EXPECT(rl_lock(b, &lb_late, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(b, &lb_late), RL_GRANTED);
	RL_EXPECT(rl_unlock(b, &lb_free), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	close(a);
	close(b);
}

/* The daemon listens on the wildcard here: a UDP reply leaves from the address its call came to
 * (else a client's connect()ed socket drops it), and the record of a host that locked over UDP
 * names that address as the one to notify it from. */
static void test_udp_reply_address(void **state)
{
	struct itest *t = *state;
	static uint8_t buf[65536];
	struct xb xb;
	struct raw_reply r;
	struct sockaddr_in src = {.sin_family = AF_INET}, from;
	assert_int_equal(inet_pton(AF_INET, "127.0.0.6", &src.sin_addr), 1);
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(u >= 0);
	assert_int_equal(bind(u, (struct sockaddr *)&src, sizeof src), 0);
	struct rl_lock le = lk_fh("hostE", "ohE", 1, 0, 10);
	const char *to[] = {"127.0.0.7", "127.0.0.8"};
	for (int i = 0; i < 2; i++) {
		rl_enc_lock(&xb, 0x67720010 + (uint32_t)i, &le, EXCL, NOBLOCK, false, 3);
		if (rl_udp_call_to(u, to[i], t->lock_port, &xb, buf, sizeof buf, &r, &from) < 0)
			fail_msg("no UDP reply to a LOCK sent to %s:%u", to[i], t->lock_port);
		char got[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &from.sin_addr, got, sizeof got);
		if (strcmp(got, to[i]) != 0 || ntohs(from.sin_port) != t->lock_port)
			fail_msg("the reply to a call sent to %s:%u came from %s:%u", to[i],
			         t->lock_port, got, ntohs(from.sin_port));
		RL_EXPECT(rl_dec_res(&r, 0x67720010 + (uint32_t)i), RL_GRANTED);
	}
	/* recorded with the address it first locked through */
	char path[PATH_MAX + 64], text[256] = "";
	snprintf(path, sizeof path, "%s/state/nsm/hosts/127.0.0.6", t->dir);
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("no record %s", path);
	text[fread(text, 1, sizeof text - 1, f)] = '\0';
	fclose(f);
	assert_string_equal(text, "hostE\n127.0.0.7\n");
	rl_enc_unlock(&xb, 0x67720020, &le);
	assert_int_equal(rl_udp_call_to(u, "127.0.0.7", t->lock_port, &xb, buf, sizeof buf, &r,
	                                &from), 0);
	RL_EXPECT(rl_dec_res(&r, 0x67720020), RL_GRANTED);
	close(u);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reclaim_in_grace),
		cmocka_unit_test(test_grace_times_out),
		cmocka_unit_test(test_udp_reply_address),
	};
	/* the wildcard: only this namespace's loopback is behind it */
	it_server_conf_extra = "listen = 0.0.0.0\n";
	static char lock_extra[64];
	snprintf(lock_extra, sizeof lock_extra, "grace_period = %d\n", GRACE_S);
	it_lock_conf_extra = lock_extra;
	int rc = RL_MAIN("nlm_grace", tests);
	if (hosta_open)
		rl_fakehost_close(&hosta);
	return rc;
}
