/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The built-in lock manager (NLM v4 on [lock] port, TCP and UDP) as client hosts see it: host A
 * calls from 127.0.0.1, B from 127.0.0.2, C from 127.0.0.3 and D from 127.0.0.4 (the lock
 * manager tells owners apart by client address and svid), on files of the export every
 * 127.0.0.0/8 address may use (rawnlm.h). Contention between hosts and between processes of one
 * host, shared locks, split unlocks, ranges past 2^63, locks of local processes on the server's
 * file (both ways), who may lock (read access or ownership, as knfsd), hosts told apart by
 * address and caller name, FREE_ALL, SM_NOTIFY, NLM over UDP. Callbacks (blocked locks), the portmapper
 * and the grace period after a restart are in test_nlm_cb.c and test_nlm_grace.c. */
#include "rawnlm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define A_ADDR "127.0.0.1"
#define B_ADDR "127.0.0.2"
#define C_ADDR "127.0.0.3"
#define D_ADDR "127.0.0.4"

static void expect_holder(const struct rl_holder *h, bool excl, const char *oh, uint64_t off,
                          uint64_t len)
{
	if (h->excl != excl || h->off != off || h->len != len ||
	    (oh && (h->oh_len != strlen(oh) || memcmp(h->oh, oh, h->oh_len) != 0)))
		fail_msg("holder %s svid %d oh '%.*s' [%llu, +%llu), want %s oh '%s' [%llu, +%llu)",
		         h->excl ? "excl" : "shared", h->svid, (int)h->oh_len, (const char *)h->oh,
		         (unsigned long long)h->off, (unsigned long long)h->len,
		         excl ? "excl" : "shared", oh ? oh : "*", (unsigned long long)off,
		         (unsigned long long)len);
}

/* ---- the lock port answers ---- */

static void test_null(void **state)
{
	struct itest *t = *state;
	int fd = rl_conn(t, A_ADDR);
	assert_int_equal(rl_null(fd, RL_NLM_PROG, RL_NLM4_VERS), 0);
	assert_int_equal(rl_null(fd, RL_NLM_PROG, 1), 0);
	assert_int_equal(rl_null(fd, RL_NLM_PROG, 3), 0);
	assert_int_equal(rl_null(fd, RL_SM_PROG, RL_SM_VERS), 0);
	close(fd);
	fd = rl_udp_connect(t->lock_port, A_ADDR);
	assert_true(fd >= 0);
	assert_int_equal(rl_null(fd, RL_NLM_PROG, RL_NLM4_VERS), 0);
	assert_int_equal(rl_null(fd, RL_SM_PROG, RL_SM_VERS), 0);
	assert_int_equal(rl_null(fd, RL_MOUNT_PROG, 3), 0);   /* MOUNT over UDP too */
	/* but not NFS itself: over UDP its calls are PROG_UNAVAIL, on every UDP port */
	struct xb call = {0};
	uint8_t buf[512];
	struct raw_reply r;
	rl_enc_null(&call, 0x7dd00001, RL_NFS_PROG, 3);
	assert_int_equal(rl_exchange(fd, &call, buf, sizeof buf, &r), 0);
	assert_int_equal(r.reply_stat, 0);
	assert_int_equal(r.accept_stat, 1);   /* PROG_UNAVAIL */
	close(fd);
	fd = rl_udp_connect(t->mount_port, A_ADDR);
	assert_true(fd >= 0);
	assert_int_equal(rl_exchange(fd, &call, buf, sizeof buf, &r), 0);
	assert_int_equal(r.accept_stat, 1);
	assert_int_equal(rl_null(fd, RL_MOUNT_PROG, 3), 0);
	close(fd);
}

/* A handle the server never gave: STALE_FH, and nothing is locked. */
static void test_stale_handle(void **state)
{
	struct itest *t = *state;
	struct rn_fh bogus = {.len = 32};
	memset(bogus.data, 0x5a, sizeof bogus.data);
	int a = rl_conn(t, A_ADDR);
	struct rl_lock l = lk("hostA", "ohA", bogus, 1, 0, 10);
	RL_EXPECT(rl_lock(a, &l, EXCL, NOBLOCK, false), RL_STALE_FH);
	RL_EXPECT(rl_test(a, &l, EXCL, NULL), RL_STALE_FH);
	close(a);
}

/* ---- two hosts, one range ---- */

static void test_contention(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "contend");
	struct rl_holder h;
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	/* B uses the same svid as A: owners differ by host */
	struct rl_lock la = lk("hostA", "ohA", fh, 1, 0, 100);
	struct rl_lock lb = lk("hostB", "ohB", fh, 1, 0, 100);

	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_test(b, &lb, EXCL, &h), RL_DENIED);
	assert_int_equal(h.svid, 1);
	expect_holder(&h, true, "ohA", 0, 100);
	/* a shared lock of B conflicts too; a part of the range too */
	RL_EXPECT(rl_lock(b, &lb, SHARED, NOBLOCK, false), RL_DENIED);
	struct rl_lock lb_part = lk("hostB", "ohB", fh, 1, 99, 1);
	RL_EXPECT(rl_test(b, &lb_part, SHARED, NULL), RL_DENIED);
	struct rl_lock lb_after = lk("hostB", "ohB", fh, 1, 100, 1);
	RL_EXPECT(rl_test(b, &lb_after, EXCL, NULL), RL_GRANTED);   /* [100, 101) is free */

	/* another process of host A (svid 2) is another owner */
	struct rl_lock la2 = lk("hostA", "ohA2", fh, 2, 50, 10);
	RL_EXPECT(rl_lock(a, &la2, EXCL, NOBLOCK, false), RL_DENIED);
	/* the owner itself: TEST finds nothing, LOCK again is granted */
	RL_EXPECT(rl_test(a, &la, EXCL, NULL), RL_GRANTED);
	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);

	/* shared locks of both hosts on [200, 300) */
	struct rl_lock sa = lk("hostA", "ohA", fh, 1, 200, 100);
	struct rl_lock sb = lk("hostB", "ohB", fh, 1, 200, 100);
	RL_EXPECT(rl_lock(a, &sa, SHARED, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &sb, SHARED, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_test(a, &sa, EXCL, &h), RL_DENIED);          /* B's shared lock */
	expect_holder(&h, false, "ohB", 200, 100);
	RL_EXPECT(rl_lock(b, &sb, EXCL, NOBLOCK, false), RL_DENIED);   /* A's shared lock */

	/* A unlocks: B gets [0, 100) */
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_test(a, &la, SHARED, &h), RL_DENIED);
	expect_holder(&h, true, "ohB", 0, 100);

	RL_EXPECT(rl_unlock(b, &lb), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &sa), RL_GRANTED);
	RL_EXPECT(rl_unlock(b, &sb), RL_GRANTED);
	struct rl_lock whole = lk("hostA", "ohA", fh, 1, 0, 0);
	RL_EXPECT(rl_test(a, &whole, EXCL, NULL), RL_GRANTED);   /* nothing left */
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);                /* unlocking nothing is fine */
	close(a);
	close(b);
}

/* Unlocking the middle of a range leaves both ends locked. */
static void test_unlock_splits(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "split");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock la = lk("hostA", "ohA", fh, 1, 0, 100);
	struct rl_lock mid = lk("hostA", "ohA", fh, 1, 40, 20);
	struct rl_lock b_mid = lk("hostB", "ohB", fh, 7, 40, 20);
	struct rl_lock b_low = lk("hostB", "ohB", fh, 7, 39, 1);
	struct rl_lock b_high = lk("hostB", "ohB", fh, 7, 60, 1);
	struct rl_holder h;

	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &mid), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &b_mid, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_test(b, &b_low, EXCL, &h), RL_DENIED);
	expect_holder(&h, true, "ohA", 0, 40);
	RL_EXPECT(rl_test(b, &b_high, EXCL, &h), RL_DENIED);
	expect_holder(&h, true, "ohA", 60, 40);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	RL_EXPECT(rl_unlock(b, &b_mid), RL_GRANTED);
	close(a);
	close(b);
}

/* 64-bit ranges: past 2^63 (which no local process can name) and to the end of the file. */
static void test_64bit_ranges(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "far");
	const uint64_t far = (1ull << 63) + 10;
	struct rl_holder h;
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock la = lk("hostA", "ohA", fh, 1, far, 0);
	struct rl_lock b_end = lk("hostB", "ohB", fh, 2, UINT64_MAX - 5, 1);
	struct rl_lock b_below = lk("hostB", "ohB", fh, 2, 1ull << 63, 10);   /* ends at far - 1 */
	struct rl_lock b_touch = lk("hostB", "ohB", fh, 2, 1ull << 63, 11);   /* ends at far */
	struct rl_lock b_whole = lk("hostB", "ohB", fh, 2, 0, 0);

	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_test(b, &b_end, EXCL, &h), RL_DENIED);
	assert_int_equal(h.svid, 1);
	expect_holder(&h, true, "ohA", far, 0);
	RL_EXPECT(rl_test(b, &b_touch, SHARED, NULL), RL_DENIED);
	RL_EXPECT(rl_test(b, &b_whole, SHARED, NULL), RL_DENIED);
	RL_EXPECT(rl_test(b, &b_below, EXCL, NULL), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &b_below, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &b_end, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(b, &b_whole), RL_GRANTED);   /* the whole file: both go */
	RL_EXPECT(rl_test(a, &la, EXCL, NULL), RL_GRANTED);
	struct rl_lock a_below = lk("hostA", "ohA", fh, 1, 1ull << 63, 10);
	RL_EXPECT(rl_test(a, &a_below, EXCL, NULL), RL_GRANTED);
	close(a);
	close(b);
}

/* ---- local processes on the server's file ---- */

static int setlk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	return fcntl(fd, cmd, &fl);
}

static void test_local_locks(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "local");
	char path[PATH_MAX];
	struct rl_holder h;
	rl_shared_path(t, "local", path, sizeof path);
	int a = rl_conn(t, A_ADDR);

	/* a local process holds [0, 10): the client cannot have any of it */
	int ofd = open(path, O_RDWR);
	assert_true(ofd >= 0);
	assert_int_equal(setlk(ofd, F_OFD_SETLK, F_WRLCK, 0, 10), 0);
	struct rl_lock l56 = lk("hostA", "ohA", fh, 1, 5, 1);
	RL_EXPECT(rl_lock(a, &l56, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_lock(a, &l56, SHARED, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_test(a, &l56, EXCL, &h), RL_DENIED);
	expect_holder(&h, true, NULL, 0, 10);
	struct rl_lock l20 = lk("hostA", "ohA", fh, 1, 20, 10);
	RL_EXPECT(rl_lock(a, &l20, EXCL, NOBLOCK, false), RL_GRANTED);   /* outside it: fine */
	assert_int_equal(setlk(ofd, F_OFD_SETLK, F_UNLCK, 0, 10), 0);
	RL_EXPECT(rl_lock(a, &l56, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &l56), RL_GRANTED);
	/* and the client's [20, 30) is a real lock on the file */
	errno = 0;
	assert_int_equal(setlk(ofd, F_OFD_SETLK, F_RDLCK, 25, 1), -1);
	assert_true(errno == EAGAIN || errno == EACCES);
	RL_EXPECT(rl_unlock(a, &l20), RL_GRANTED);
	assert_int_equal(setlk(ofd, F_OFD_SETLK, F_WRLCK, 25, 1), 0);
	assert_int_equal(setlk(ofd, F_OFD_SETLK, F_UNLCK, 25, 1), 0);
	close(ofd);

	/* the client holds [0, 10): a local process's POSIX lock fails, then works after UNLOCK */
	struct rl_lock l010 = lk("hostA", "ohA", fh, 1, 0, 10);
	RL_EXPECT(rl_lock(a, &l010, EXCL, NOBLOCK, false), RL_GRANTED);
	int pfd = open(path, O_RDWR);
	assert_true(pfd >= 0);
	errno = 0;
	assert_int_equal(setlk(pfd, F_SETLK, F_WRLCK, 0, 10), -1);
	assert_true(errno == EAGAIN || errno == EACCES);
	struct flock probe = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 9, .l_len = 1};
	assert_int_equal(fcntl(pfd, F_GETLK, &probe), 0);
	assert_int_equal(probe.l_type, F_WRLCK);
	assert_int_equal(probe.l_start, 0);
	assert_int_equal(probe.l_len, 10);
	/* a shared client lock lets local readers in, not writers */
	struct rl_lock l100 = lk("hostA", "ohA", fh, 1, 100, 10);
	RL_EXPECT(rl_lock(a, &l100, SHARED, NOBLOCK, false), RL_GRANTED);
	assert_int_equal(setlk(pfd, F_SETLK, F_RDLCK, 100, 10), 0);
	assert_int_equal(setlk(pfd, F_SETLK, F_UNLCK, 100, 10), 0);
	assert_int_equal(setlk(pfd, F_SETLK, F_WRLCK, 100, 10), -1);
	RL_EXPECT(rl_unlock(a, &l100), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &l010), RL_GRANTED);
	assert_int_equal(setlk(pfd, F_SETLK, F_WRLCK, 0, 10), 0);
	assert_int_equal(setlk(pfd, F_SETLK, F_WRLCK, 100, 10), 0);
	/* and now the client is the one refused */
	RL_EXPECT(rl_lock(a, &l010, EXCL, NOBLOCK, false), RL_DENIED);
	assert_int_equal(setlk(pfd, F_SETLK, F_UNLCK, 0, 0), 0);
	close(pfd);
	RL_EXPECT(rl_lock(a, &l010, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &l010), RL_GRANTED);
	close(a);
}

/* ---- who may lock: read access or ownership, as knfsd ---- */

#define USER 1001

static void test_lock_needs_read_access(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "rootonly");
	char path[PATH_MAX + 64];
	int a = rl_conn(t, A_ADDR);
	struct rl_lock l = lk("hostA", "ohA", fh, 1, 0, 100);
	rl_shared_path(t, "rootonly", path, sizeof path);
	assert_int_equal(chmod(path, 0600), 0);
	/* uid 1001 on root's 0600 file: FAILED (knfsd's nlm_fopen), nothing taken */
	rl_set_cred(USER, USER);
	RL_EXPECT(rl_lock(a, &l, EXCL, NOBLOCK, false), RL_FAILED);
	RL_EXPECT(rl_lock(a, &l, SHARED, BLOCK, false), RL_FAILED);
	RL_EXPECT(rl_test(a, &l, EXCL, NULL), RL_FAILED);
	rl_set_cred(0, 0);
	int pfd = open(path, O_RDWR);
	assert_true(pfd >= 0);
	assert_int_equal(setlk(pfd, F_SETLK, F_WRLCK, 0, 0), 0);   /* root's own lock goes */
	assert_int_equal(setlk(pfd, F_SETLK, F_UNLCK, 0, 0), 0);
	/* read access is enough, for an exclusive lock too */
	assert_int_equal(chmod(path, 0644), 0);
	rl_set_cred(USER, USER);
	RL_EXPECT(rl_lock(a, &l, EXCL, NOBLOCK, false), RL_GRANTED);
	/* the right lost since, the lock can still be let go */
	assert_int_equal(chmod(path, 0600), 0);
	RL_EXPECT(rl_unlock(a, &l), RL_GRANTED);
	rl_set_cred(0, 0);
	assert_int_equal(setlk(pfd, F_SETLK, F_WRLCK, 0, 0), 0);
	assert_int_equal(setlk(pfd, F_SETLK, F_UNLCK, 0, 0), 0);
	close(pfd);
	/* the owner may lock a file it may not read */
	assert_int_equal(chown(path, USER, USER), 0);
	assert_int_equal(chmod(path, 0), 0);
	rl_set_cred(USER, USER);
	RL_EXPECT(rl_lock(a, &l, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &l), RL_GRANTED);
	rl_set_cred(USER + 1, USER + 1);
	RL_EXPECT(rl_lock(a, &l, SHARED, NOBLOCK, false), RL_FAILED);
	rl_set_cred(0, 0);
	close(a);
}

/* ---- a host is an address and a caller name ---- */

/* Another caller name from A's address, with A's svid and owner handle, is another host: it
 * cannot unlock, cancel or free A's lock, and conflicts with it. */
static void test_host_is_address_and_name(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "bynames");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock la = lk("hostA", "ohA", fh, 1, 0, 100);
	struct rl_lock lx = lk("intruder", "ohA", fh, 1, 0, 100);
	struct rl_lock lb = lk("hostB", "ohB", fh, 2, 0, 100);

	RL_EXPECT(rl_lock(a, &la, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(a, &lx), RL_GRANTED);      /* nothing of its own to unlock */
	RL_EXPECT(rl_cancel(a, &lx, EXCL, false), RL_GRANTED);
	assert_int_equal(rl_free_all(a, "intruder", 3), 0);
	RL_EXPECT(rl_lock(b, &lb, EXCL, NOBLOCK, false), RL_DENIED);   /* A still holds it */
	RL_EXPECT(rl_lock(a, &lx, EXCL, NOBLOCK, false), RL_DENIED);   /* and not for "intruder" */
	RL_EXPECT(rl_test(a, &lx, SHARED, NULL), RL_DENIED);
	RL_EXPECT(rl_unlock(a, &la), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(b, &lb), RL_GRANTED);
	close(a);
	close(b);
}

/* ---- a client host goes: FREE_ALL, SM_NOTIFY ---- */

static void test_free_all(void **state)
{
	struct itest *t = *state;
	struct rn_fh f1 = rl_make_file(t, "freeall1"), f2 = rl_make_file(t, "freeall2");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock a1 = lk("hostA", "ohA", f1, 1, 0, 100);
	struct rl_lock a2 = lk("hostA", "ohA2", f2, 2, 0, 100);
	struct rl_lock b1 = lk("hostB", "ohB", f1, 3, 0, 100);
	struct rl_lock b2 = lk("hostB", "ohB", f2, 3, 0, 100);

	RL_EXPECT(rl_lock(a, &a1, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(a, &a2, EXCL, NOBLOCK, false), RL_GRANTED);
	/* another name frees nothing of A's, and nor does A's name from another host */
	assert_int_equal(rl_free_all(b, "hostZ", 3), 0);
	assert_int_equal(rl_free_all(b, "hostA", 4), 0);
	assert_int_equal(rl_free_all(a, "hostZ", 4), 0);
	RL_EXPECT(rl_lock(b, &b1, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_lock(b, &b2, EXCL, NOBLOCK, false), RL_DENIED);
	/* FREE_ALL "hostA" (a void procedure: an empty result) frees both files' locks */
	assert_int_equal(rl_free_all(a, "hostA", 5), 0);
	RL_EXPECT(rl_lock(b, &b1, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &b2, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_test(a, &a1, SHARED, NULL), RL_DENIED);
	RL_EXPECT(rl_unlock(b, &b1), RL_GRANTED);
	RL_EXPECT(rl_unlock(b, &b2), RL_GRANTED);
	close(a);
	close(b);
}

static void test_sm_notify(void **state)
{
	struct itest *t = *state;
	struct rn_fh f1 = rl_make_file(t, "notify1"), f2 = rl_make_file(t, "notify2");
	int a = rl_conn(t, A_ADDR), b = rl_conn(t, B_ADDR), cu, au;
	struct rl_lock a1 = lk("hostA", "ohA", f1, 1, 0, 100);
	struct rl_lock a2 = lk("hostA", "ohA", f2, 1, 0, 100);
	struct rl_lock b1 = lk("hostB", "ohB", f1, 3, 0, 100);
	struct rl_lock b2 = lk("hostB", "ohB", f2, 3, 0, 100);

	RL_EXPECT(rl_lock(a, &a1, EXCL, NOBLOCK, false), RL_GRANTED);
	/* host C restarted: A's lock stays */
	cu = rl_udp_connect(t->lock_port, C_ADDR);
	assert_true(cu >= 0);
	assert_int_equal(rl_sm_notify(cu, "hostC", 7), 0);
	/* nor does a notify naming A from C's address: only A itself can say it restarted */
	assert_int_equal(rl_sm_notify(cu, "hostA", 8), 0);
	close(cu);
	RL_EXPECT(rl_lock(b, &b1, EXCL, NOBLOCK, false), RL_DENIED);
	/* host A restarted (SM_NOTIFY over UDP from its address, naming it): B gets the range */
	uint64_t before = rn_counter(t->port, "lock_notifies_received");
	au = rl_udp_connect(t->lock_port, A_ADDR);
	assert_true(au >= 0);
	assert_int_equal(rl_sm_notify(au, "hostA", 9), 0);
	close(au);
	RL_EXPECT(rl_lock(b, &b1, EXCL, NOBLOCK, false), RL_GRANTED);
	if (before != UINT64_MAX)
		assert_true(rn_counter(t->port, "lock_notifies_received") > before);

	/* over TCP, from A's address, under a name A never used: matched by the address */
	RL_EXPECT(rl_lock(a, &a2, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &b2, EXCL, NOBLOCK, false), RL_DENIED);
	int at = rl_conn(t, A_ADDR);
	assert_int_equal(rl_sm_notify(at, "a-new-name", 11), 0);
	close(at);
	RL_EXPECT(rl_lock(b, &b2, EXCL, NOBLOCK, false), RL_GRANTED);

	RL_EXPECT(rl_unlock(b, &b1), RL_GRANTED);
	RL_EXPECT(rl_unlock(b, &b2), RL_GRANTED);
	close(a);
	close(b);
}

/* ---- NLM over UDP ---- */

/* One call as a datagram to 127.0.0.1 from an unconnected socket: the reply must come from the
 * address and port the call went to (a client's connect()ed socket would drop anything else). */
static void udp_call(int fd, uint16_t port, const struct xb *b, uint8_t *buf, size_t cap,
                     struct raw_reply *r)
{
	struct sockaddr_in from;
	if (rl_udp_call_to(fd, A_ADDR, port, b, buf, cap, r, &from) < 0)
		fail_msg("no UDP reply from the lock port to xid %08x", get_u32(b->buf));
	assert_int_equal(from.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(ntohs(from.sin_port), port);
}

/* Host D (127.0.0.4) locks over UDP only, its first lock ever: recorded for restarts like a TCP
 * client, and the same owner as its TCP calls. */
static void test_udp(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = rl_make_file(t, "udp");
	static uint8_t buf[65536];
	struct xb xb;
	struct raw_reply r;
	struct rl_holder h;
	char rec[PATH_MAX + 64];
	struct sockaddr_in src = {.sin_family = AF_INET};
	assert_int_equal(inet_pton(AF_INET, D_ADDR, &src.sin_addr), 1);
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(u >= 0);
	assert_int_equal(bind(u, (struct sockaddr *)&src, sizeof src), 0);
	int d = rl_conn(t, D_ADDR), b = rl_conn(t, B_ADDR);
	struct rl_lock ld = lk("hostD", "ohD", fh, 1, 0, 100);
	struct rl_lock ld2 = lk("hostD", "ohD2", fh, 2, 0, 100);
	struct rl_lock lb = lk("hostB", "ohB", fh, 3, 0, 100);

	snprintf(rec, sizeof rec, "%s/state/nsm/hosts/%s", t->dir, D_ADDR);
	assert_int_equal(access(rec, F_OK), -1);
	rl_enc_lock(&xb, 0x75640001, &ld, EXCL, NOBLOCK, false, 3);
	udp_call(u, t->lock_port, &xb, buf, sizeof buf, &r);
	RL_EXPECT(rl_dec_res(&r, 0x75640001), RL_GRANTED);
	assert_int_equal(access(rec, F_OK), 0);   /* recorded before it was granted */
	/* D over TCP: another svid is another owner, the same one is not */
	RL_EXPECT(rl_lock(d, &ld2, EXCL, NOBLOCK, false), RL_DENIED);
	RL_EXPECT(rl_test(d, &ld, EXCL, NULL), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, NOBLOCK, false), RL_DENIED);
	rl_enc_test(&xb, 0x75640002, &ld2, EXCL);
	udp_call(u, t->lock_port, &xb, buf, sizeof buf, &r);
	RL_EXPECT(rl_dec_testres(&r, 0x75640002, &h), RL_DENIED);
	assert_int_equal(h.svid, 1);
	expect_holder(&h, true, "ohD", 0, 100);
	rl_enc_unlock(&xb, 0x75640003, &ld);
	udp_call(u, t->lock_port, &xb, buf, sizeof buf, &r);
	RL_EXPECT(rl_dec_res(&r, 0x75640003), RL_GRANTED);
	RL_EXPECT(rl_lock(b, &lb, EXCL, NOBLOCK, false), RL_GRANTED);
	RL_EXPECT(rl_unlock(b, &lb), RL_GRANTED);
	close(u);
	close(d);
	close(b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_stale_handle),
		cmocka_unit_test(test_contention),
		cmocka_unit_test(test_unlock_splits),
		cmocka_unit_test(test_64bit_ranges),
		cmocka_unit_test(test_local_locks),
		cmocka_unit_test(test_lock_needs_read_access),
		cmocka_unit_test(test_host_is_address_and_name),
		cmocka_unit_test(test_free_all),
		cmocka_unit_test(test_sm_notify),
		cmocka_unit_test(test_udp),
	};
	return RL_MAIN("nlm", tests);
}
