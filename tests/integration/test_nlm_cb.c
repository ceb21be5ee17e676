/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the lock manager sends clients, and the portmapper they find it with. Run in a private
 * network namespace (in_netns.sh): the daemon serves port 111 itself (rpcbind = own), and "host
 * B" at 127.0.0.2 is a fake client host with its own portmapper on 127.0.0.2:111 and a lockd
 * (rawnlm.h), so that a blocked LOCK of B is granted by a GRANTED callback the way a real client
 * gets it: GETPORT (NLM, the request's version, UDP) to B's portmapper, then GRANTED to B's lockd.
 *
 * B's lockd cannot be registered in the daemon's own portmapper instead: 100021 v4 UDP is the
 * daemon's own entry there, which PMAP SET and UNSET may not change (checked below). */
#include "rawnlm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define A_ADDR "127.0.0.1"
#define B_ADDR "127.0.0.2"

static struct rl_fakehost hostb;
static bool hostb_open;
static struct rl_incall in;

static struct rl_fakehost *fake_b(void)
{
	if (!hostb_open) {
		int rc = rl_fakehost_open(&hostb, B_ADDR);
		if (rc < 0)
			fail_msg("cannot bind the fake host's portmapper %s:111: %s (run through "
			         "in_netns.sh)", B_ADDR, strerror(-rc));
		hostb_open = true;
	}
	/* a call left over from a test that failed half-way is not this test's */
	while (rl_fakehost_wait(&hostb, 0, &in) == 1)
		;
	return &hostb;
}

static uint32_t answered_xid;        /* the last callback answered, and how */
static uint8_t answered_cookie[1024];
static uint32_t answered_cookie_len, answered_stat;
static bool answered;

/* Answer the GRANTED call in `in` (decoded into g) with stat. */
static void answer_granted(const struct rl_granted *g, uint32_t stat)
{
	assert_int_equal(rl_fakehost_reply_res(&in, g->cookie, g->cookie_len, stat), 0);
	answered = true;
	answered_xid = in.xid;
	memcpy(answered_cookie, g->cookie, g->cookie_len);
	answered_cookie_len = g->cookie_len;
	answered_stat = stat;
}

/* Wait for the GRANTED callback of l (within ms) and check what it names and where it came
 * from; *g is its arguments, `in` the call, not answered yet. */
static void recv_granted(struct rl_fakehost *h, const struct rl_lock *l, bool excl, int ms,
                         struct rl_granted *g)
{
	unsigned gp = h->getports;
	int rc = rl_fakehost_wait(h, ms, &in);
	if (rc != 1)
		fail_msg("no GRANTED callback within %d ms (%u GETPORT calls to the fake "
		         "portmapper)", ms, h->getports - gp);
	if (in.prog != RL_NLM_PROG || in.vers != RL_NLM4_VERS || in.proc != RL_NLM_GRANTED)
		fail_msg("the fake lockd got program %u v%u procedure %u, want NLM v4 GRANTED (5)",
		         in.prog, in.vers, in.proc);
	assert_int_equal(in.rpcvers, 2);
	assert_int_equal(in.cred_flavor, RAW_AUTH_SYS);
	/* from the address B locked through, on a reserved port (Linux's lockd checks both) */
	assert_int_equal(in.from.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	assert_true(ntohs(in.from.sin_port) < 1024);
	/* over TCP, as B's LOCK came, its port found by GETPORT of NLM v4 for TCP at B's own
	 * portmapper */
	assert_true(in.tcp);
	assert_true(h->getports > 0);
	assert_int_equal(h->gp_prog, RL_NLM_PROG);
	assert_int_equal(h->gp_vers, RL_NLM4_VERS);
	assert_int_equal(h->gp_prot, IPPROTO_TCP);
	assert_int_equal(rl_dec_granted(&in, g), 0);
	if (g->svid != l->svid || g->off != l->off || g->len != l->len || g->excl != excl)
		fail_msg("GRANTED names svid %d [%llu, +%llu) %s, want svid %d [%llu, +%llu) %s",
		         g->svid, (unsigned long long)g->off, (unsigned long long)g->len,
		         g->excl ? "excl" : "shared", l->svid, (unsigned long long)l->off,
		         (unsigned long long)l->len, excl ? "excl" : "shared");
	assert_int_equal(g->fh.len, l->fh.len);
	assert_memory_equal(g->fh.data, l->fh.data, l->fh.len);
	assert_int_equal(g->oh_len, strlen(l->oh));
	assert_memory_equal(g->oh, l->oh, g->oh_len);
}

static void expect_granted(struct rl_fakehost *h, const struct rl_lock *l, bool excl, int ms,
                           uint32_t stat)
{
	struct rl_granted g;
	recv_granted(h, l, excl, ms, &g);
	answer_granted(&g, stat);
}

/* No call for ms (but retransmissions of the callback answered last, answered again: one may
 * have been on its way when the answer left). */
static void expect_no_call(struct rl_fakehost *h, int ms)
{
	unsigned gp = h->getports;
	int rc;
	while ((rc = rl_fakehost_wait(h, ms, &in)) == 1) {
		if (!answered || in.xid != answered_xid)
			fail_msg("unexpected call to the fake host: program %u v%u procedure %u",
			         in.prog, in.vers, in.proc);
		assert_int_equal(rl_fakehost_reply_res(&in, answered_cookie, answered_cookie_len,
		                                       answered_stat), 0);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(h->getports, gp);
}

/* Poll a non-blocking LOCK until it gets want (the server acts on a callback's answer on its own
 * thread, after the fake lockd replied). */
static void lock_eventually(int fd, const struct rl_lock *l, bool excl, int want, int ms)
{
	int st = -1;
	for (int waited = 0; waited <= ms; waited += 50) {
		st = rl_lock(fd, l, excl, NOBLOCK, false);
		if (st == want)
			return;
		it_sleep_ms(50);
	}
	fail_msg("LOCK still %s after %d ms, want %s", rl_stat_name(st), ms, rl_stat_name(want));
}

/* ---- the portmapper: what rpcinfo -p shows ---- */

static bool dumped(const struct rl_pmap_entry *e, int n, uint32_t prog, uint32_t vers,
                   uint32_t prot, uint32_t port)
{
	for (int i = 0; i < n; i++)
		if (e[i].prog == prog && e[i].vers == vers && e[i].prot == prot &&
		    e[i].port == port)
			return true;
	return false;
}

static void test_portmapper(void **state)
{
	struct itest *t = *state;
	const uint32_t TCP = IPPROTO_TCP, UDP = IPPROTO_UDP;
	struct {
		uint32_t prog, vers, prot, port;
	} want[] = {
		{RL_NFS_PROG, 3, TCP, t->port},
		{RL_MOUNT_PROG, 3, TCP, t->mount_port}, {RL_MOUNT_PROG, 3, UDP, t->mount_port},
		{RL_NLM_PROG, 4, TCP, t->lock_port}, {RL_NLM_PROG, 4, UDP, t->lock_port},
		{RL_NLM_PROG, 3, TCP, t->lock_port}, {RL_NLM_PROG, 3, UDP, t->lock_port},
		{RL_NLM_PROG, 1, TCP, t->lock_port}, {RL_NLM_PROG, 1, UDP, t->lock_port},
		{RL_SM_PROG, 1, TCP, t->lock_port}, {RL_SM_PROG, 1, UDP, t->lock_port},
		{RL_PMAP_PROG, 2, TCP, 111}, {RL_PMAP_PROG, 2, UDP, 111},
	};
	int u = rl_udp_connect(111, NULL);
	assert_true(u >= 0);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		int port = rl_pmap_getport(u, want[i].prog, want[i].vers, want[i].prot);
		if (port != (int)want[i].port)
			fail_msg("GETPORT %u v%u %s over UDP: %d, want %u", want[i].prog,
			         want[i].vers, want[i].prot == TCP ? "tcp" : "udp", port,
			         want[i].port);
	}
	assert_int_equal(rl_pmap_getport(u, RL_NFS_PROG, 3, UDP), 0);   /* NFS is TCP only */
	assert_int_equal(rl_pmap_getport(u, 399999, 1, TCP), 0);

	int tfd = raw_connect(111, NULL);
	assert_true(tfd >= 0);
	struct rl_pmap_entry e[128];
	int n = rl_pmap_dump(tfd, e, 128);
	assert_true(n > 0 && n <= 128);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!dumped(e, n, want[i].prog, want[i].vers, want[i].prot, want[i].port))
			fail_msg("DUMP (%d entries) lacks %u v%u %s port %u", n, want[i].prog,
			         want[i].vers, want[i].prot == TCP ? "tcp" : "udp", want[i].port);
	assert_int_equal(rl_pmap_getport(tfd, RL_NLM_PROG, 4, TCP), t->lock_port);   /* over TCP */

	/* the daemon's own entries stay: SET and UNSET of them are refused */
	assert_int_equal(rl_pmap_set(u, RL_NLM_PROG, 4, UDP, 4045), 0);
	assert_int_equal(rl_pmap_unset(u, RL_NLM_PROG, 4), 0);
	assert_int_equal(rl_pmap_getport(u, RL_NLM_PROG, 4, UDP), t->lock_port);
	/* another local service registers, is found, and goes */
	assert_int_equal(rl_pmap_set(u, 300999, 1, UDP, 4242), 1);
	assert_int_equal(rl_pmap_getport(tfd, 300999, 1, UDP), 4242);
	assert_int_equal(rl_pmap_set(u, 300999, 1, UDP, 4343), 0);   /* taken */
	n = rl_pmap_dump(tfd, e, 128);
	assert_true(dumped(e, n, 300999, 1, UDP, 4242));
	assert_int_equal(rl_pmap_unset(u, 300999, 1), 1);
	assert_int_equal(rl_pmap_getport(u, 300999, 1, UDP), 0);
	close(tfd);
	close(u);
}

/* ---- GRANTED ---- */

/* B waits for A's range; A unlocks; B's lockd is told, and B holds the range. */
static void test_granted_callback(void **state)
{
	struct itest *t = *state;
	struct rl_fakehost *h = fake_b();
	struct rn_fh fh = rl_make_file(t, "granted");
	struct rl_holder hd;
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock la = lk("hostA", "ohA", fh, 1, 0, 100);
	struct rl_lock lb = lk("hostB", "ohB", fh, 2, 0, 100);

	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, BLOCK, false), RL_BLOCKED);
	/* B asks again: it still waits */
	RL_EXPECT(rl_lock(b, &lb, EXCL, BLOCK, false), RL_BLOCKED);
	expect_no_call(h, 300);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	expect_granted(h, &lb, EXCL, 2000, RL_GRANTED);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_test(a, &la, SHARED, &hd), RL_DENIED);
	assert_int_equal(hd.svid, 2);
	assert_true(hd.excl && hd.off == 0 && hd.len == 100);
	expect_no_call(h, 600);   /* answered: not sent again */
	RL_EXPECT(rl_unlock(b, &lb), RL_GRANTED);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	close(a);
	close(b);
}

/* B's lockd answers GRANTED with DENIED (its process gave up): the server lets the range go. */
static void test_granted_refused(void **state)
{
	struct itest *t = *state;
	struct rl_fakehost *h = fake_b();
	struct rn_fh fh = rl_make_file(t, "refused");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock la = lk("hostA", "ohA", fh, 1, 0, 100);
	struct rl_lock lb = lk("hostB", "ohB", fh, 2, 0, 100);

	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, SHARED, BLOCK, false), RL_BLOCKED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	expect_granted(h, &lb, SHARED, 2000, RL_DENIED);
	lock_eventually(a, &la, EXCL, RL_GRANTED, 3000);
	struct rl_lock lb_probe = lk("hostB", "ohB", fh, 2, 50, 1);
	RL_EXPECT(rl_test(b, &lb_probe, SHARED, NULL), RL_DENIED);   /* A's now */
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);

	/* B asks again while the GRANTED is on its way (as a Linux client's poll of its blocked
	 * locks may): then the range is B's whatever B's lockd answers */
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, BLOCK, false), RL_BLOCKED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	struct rl_granted g;
	recv_granted(h, &lb, EXCL, 2000, &g);
	RL_EXPECT(rl_lock(b, &lb, EXCL, BLOCK, false), RL_GRANTED);
	answer_granted(&g, RL_DENIED);
	expect_no_call(h, 500);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_unlock(b, &lb), RL_GRANTED);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	close(a);
	close(b);
}

/* B upgrades its read lock, waits, is granted, and its lockd refuses the grant (the waiting
 * process was interrupted): B must not lose the read lock it had, as a failed F_SETLKW leaves
 * it. The server keeps the grant then (as knfsd keeps every refused grant) rather than undo
 * the upgrade. A non-blocking LOCK of the range while B waits is DENIED, not BLOCKED. */
static void test_refused_upgrade_keeps_read_lock(void **state)
{
	struct itest *t = *state;
	struct rl_fakehost *h = fake_b();
	struct rn_fh fh = rl_make_file(t, "upgrade");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock la = lk("hostA", "ohA", fh, 1, 0, 100);
	struct rl_lock lb = lk("hostB", "ohB", fh, 2, 0, 100);

	RL_EXPECT(rl_lock(a, &la, SHARED, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, SHARED, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, BLOCK, false), RL_BLOCKED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	expect_granted(h, &lb, EXCL, 2000, RL_DENIED);
	expect_no_call(h, 300);
	/* B's lock over the range is there still: A cannot take it */
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_unlock(b, &lb), RL_GRANTED);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	close(a);
	close(b);
}

/* B waits for a range a local process holds: granted once it lets go (the server polls). */
static void test_local_waiter(void **state)
{
	struct itest *t = *state;
	struct rl_fakehost *h = fake_b();
	struct rn_fh fh = rl_make_file(t, "localwait");
	char path[PATH_MAX];
	rl_shared_path(t, "localwait", path, sizeof path);
	int b = rl_conn(t, B_ADDR);
	struct rl_lock lb = lk("hostB", "ohB", fh, 2, 0, 10);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	assert_int_equal(fcntl(fd, F_OFD_SETLK, &fl), 0);

	RL_EXPECT(rl_lock(b, &lb, EXCL, BLOCK, false), RL_BLOCKED);
	expect_no_call(h, 700);   /* more than two of the server's polls: still held */
	fl.l_type = F_UNLCK;
	assert_int_equal(fcntl(fd, F_OFD_SETLK, &fl), 0);
	expect_granted(h, &lb, EXCL, 3000, RL_GRANTED);
	fl.l_type = F_RDLCK;
	errno = 0;
	assert_int_equal(fcntl(fd, F_OFD_SETLK, &fl), -1);   /* B's lock is on the file */
	assert_true(errno == EAGAIN || errno == EACCES);
	RL_EXPECT(rl_unlock(b, &lb), RL_GRANTED);
	assert_int_equal(fcntl(fd, F_OFD_SETLK, &fl), 0);
	close(fd);
	close(b);
}

/* ---- the asynchronous variants ---- */

/* The _RES call answering a _MSG call of xid: its procedure and status. */
static uint32_t expect_res(struct rl_fakehost *h, uint32_t proc, uint32_t xid)
{
	uint32_t cookie, stat;
	if (rl_fakehost_wait(h, 2000, &in) != 1)
		fail_msg("no _RES call (procedure %u) within 2 s", proc);
	if (in.prog != RL_NLM_PROG || in.vers != RL_NLM4_VERS || in.proc != proc)
		fail_msg("the fake lockd got program %u v%u procedure %u, want NLM v4 procedure %u",
		         in.prog, in.vers, in.proc, proc);
	assert_int_equal(rl_dec_res_call(&in, &cookie, &stat), 0);
	assert_int_equal(cookie, xid);
	assert_int_equal(rl_fakehost_reply(&in, NULL, 0), 0);
	return stat;
}

/* LOCK_MSG and TEST_MSG: an empty reply at once, the result as LOCK_RES / TEST_RES to B. */
static void test_msg_variants(void **state)
{
	struct itest *t = *state;
	struct rl_fakehost *h = fake_b();
	struct rn_fh fh = rl_make_file(t, "msg");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock la = lk("hostA", "ohA", fh, 1, 0, 100);
	struct rl_lock lb = lk("hostB", "ohB", fh, 2, 0, 100);
	struct xb call = {0};
	uint8_t buf[4096];
	struct raw_reply r;

	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	rl_enc_test(&call, 0x7e570001, &lb, EXCL);
	rl_enc_as_msg(&call, RL_NLM_TEST_MSG);
	assert_int_equal(rl_exchange(b, &call, buf, sizeof buf, &r), 0);
	assert_int_equal(r.body_len, 0);
	assert_int_equal(expect_res(h, RL_NLM_TEST_RES, 0x7e570001), RL_DENIED);
	call.len = 0;
	rl_enc_lock(&call, 0x10c50001, &lb, EXCL, NOBLOCK, false, 0);
	rl_enc_as_msg(&call, RL_NLM_LOCK_MSG);
	assert_int_equal(rl_exchange(b, &call, buf, sizeof buf, &r), 0);
	assert_int_equal(expect_res(h, RL_NLM_LOCK_RES, 0x10c50001), RL_DENIED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	call.len = 0;
	rl_enc_lock(&call, 0x10c50002, &lb, EXCL, NOBLOCK, false, 0);
	rl_enc_as_msg(&call, RL_NLM_LOCK_MSG);
	assert_int_equal(rl_exchange(b, &call, buf, sizeof buf, &r), 0);
	assert_int_equal(expect_res(h, RL_NLM_LOCK_RES, 0x10c50002), RL_GRANTED);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_DENIED);   /* B's now */
	RL_EXPECT(rl_unlock(b, &lb), RL_GRANTED);
	close(a);
	close(b);
}

/* ---- CANCEL ---- */

static void test_cancel(void **state)
{
	struct itest *t = *state;
	struct rl_fakehost *h = fake_b();
	struct rn_fh fh = rl_make_file(t, "cancel");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock la = lk("hostA", "ohA", fh, 1, 0, 100);
	struct rl_lock lb = lk("hostB", "ohB", fh, 2, 0, 100);

	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, BLOCK, false), RL_BLOCKED);
	RL_EXPECT(rl_cancel(b, &lb, EXCL, BLOCK), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	expect_no_call(h, 1500);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, NOBLOCK, false), RL_DENIED);   /* A's, not B's */

	/* B cancels while the GRANTED is on its way: the range goes back, B's late "yes" to the
	 * callback changes nothing */
	RL_EXPECT(rl_lock(b, &lb, EXCL, BLOCK, false), RL_BLOCKED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	struct rl_granted g;
	recv_granted(h, &lb, EXCL, 2000, &g);
	RL_EXPECT(rl_cancel(b, &lb, EXCL, BLOCK), RL_GRANTED);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	answer_granted(&g, RL_GRANTED);
	expect_no_call(h, 500);
	RL_EXPECT(rl_lock(b, &lb, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(b, &lb), RL_GRANTED);
	close(a);
	close(b);
}

/* ---- a host that goes hands its ranges to the waiters; its own waiters go ---- */

static void test_notify_wakes_waiter(void **state)
{
	struct itest *t = *state;
	struct rl_fakehost *h = fake_b();
	struct rn_fh fh = rl_make_file(t, "notifywake");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock la = lk("hostA", "ohA", fh, 1, 0, 100);
	struct rl_lock lb = lk("hostB", "ohB", fh, 2, 0, 100);

	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, BLOCK, false), RL_BLOCKED);
	assert_int_equal(rl_sm_notify(a, "hostA", 13), 0);   /* A restarted: its lock goes to B */
	expect_granted(h, &lb, EXCL, 2000, RL_GRANTED);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_unlock(b, &lb), RL_GRANTED);

	/* now B waits and B goes (FREE_ALL): nothing is granted to it afterwards */
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, BLOCK, false), RL_BLOCKED);
	assert_int_equal(rl_free_all(b, "hostB", 15), 0);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	expect_no_call(h, 1500);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	close(a);
	close(b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_portmapper),
		cmocka_unit_test(test_granted_callback),
		cmocka_unit_test(test_granted_refused),
		cmocka_unit_test(test_refused_upgrade_keeps_read_lock),
		cmocka_unit_test(test_local_waiter),
		cmocka_unit_test(test_msg_variants),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_notify_wakes_waiter),
	};
	it_server_conf_extra = "rpcbind = own\n";
	int rc = RL_MAIN("nlm_cb", tests);
	if (hostb_open)
		rl_fakehost_close(&hostb);
	return rc;
}
