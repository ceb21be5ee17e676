/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Connection limits, with short settings so that the test need not wait long (the conf's
 * record_timeout, idle_timeout and connections_per_client below): a client trickling a record
 * byte by byte is closed at the deadline; a silent connection is closed once idle; past the
 * per-client limit the longest idle connection of that client makes room for the new one, which
 * is served; out of descriptors (EMFILE), accepting backs off instead of spinning, and files are
 * still written and read: the handle caches close what they hold. */
#include "client.h"
#include "rawnfs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define PER_CLIENT 40

/* Did the server close fd (EOF or reset) within ms? Reads and drops what comes meanwhile. */
static bool closed_within(int fd, int ms)
{
	return raw_wait_closed(fd, ms) == 1;
}

static void null_call_ok(int fd)
{
	struct xb b = {0}, cred = {0};
	struct raw_reply r;
	static uint8_t buf[4096];
	xb_auth_sys(&cred, 0, 0);
	xb_call(&b, 0x11110000u + (uint32_t)fd, 2, 100003, 3, 0, RAW_AUTH_SYS, &cred);
	assert_int_equal(raw_call(fd, &b, buf, sizeof buf, &r), 0);
	assert_int_equal(r.reply_stat, 0);
	assert_int_equal(r.accept_stat, 0);
}

/* One byte of a 200-byte record every 300 ms: closed after record_timeout (2 s), long before
 * the record would be complete (60 s), and counted. */
static void test_trickling_client_closed(void **state)
{
	struct itest *t = *state;
	uint64_t before = rn_counter_must(t->port, "connections_slow_closed");
	int fd = raw_connect(t->port, NULL);
	assert_true(fd >= 0);
	uint32_t mark = htonl(0x80000000u | 200);
	assert_int_equal(raw_send_all(fd, &mark, 4), 0);
	bool closed = false;
	for (int i = 0; i < 20 && !closed; i++) {
		if (send(fd, "x", 1, MSG_NOSIGNAL) != 1)
			break;
		closed = closed_within(fd, 300);
	}
	assert_true(closed || closed_within(fd, 100));
	close(fd);
	assert_int_equal(rn_counter_must(t->port, "connections_slow_closed"), before + 1);
}

/* A busy client whose stream never ends on a record boundary (each segment ends inside the
 * next record, every record whole within 20 ms) is not a slow one: 3.5 s of it, past the 2 s
 * record_timeout, and the connection is still served. */
static void test_pipelined_records_not_timed_out(void **state)
{
	struct itest *t = *state;
	struct xb b = {0}, cred = {0};
	uint8_t rec[4 + 256], junk[4096];
	xb_auth_sys(&cred, 0, 0);
	xb_call(&b, 0x7e110000u, 2, 100003, 3, 0, RAW_AUTH_SYS, &cred);
	assert_true(4 + b.len <= sizeof rec);
	uint32_t mark = htonl(0x80000000u | (uint32_t)b.len);
	memcpy(rec, &mark, 4);
	memcpy(rec + 4, b.buf, b.len);
	size_t n = 4 + b.len;
	int fd = raw_connect(t->port, NULL);
	assert_true(fd >= 0);
	assert_int_equal(raw_send_all(fd, rec, n / 2), 0);        /* half a record first */
	for (int i = 0; i < 175; i++) {                           /* 3.5 s */
		uint8_t two[sizeof rec];
		memcpy(two, rec + n / 2, n - n / 2);              /* the rest of one ... */
		memcpy(two + (n - n / 2), rec, n / 2);            /* ... half of the next */
		assert_int_equal(raw_send_all(fd, two, n), 0);
		while (recv(fd, junk, sizeof junk, MSG_DONTWAIT) > 0)
			;
		it_sleep_ms(20);
	}
	assert_false(closed_within(fd, 0));
	close(fd);
}

static int connect_read_call(const struct itest *t, struct rn_fh *file)
{
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root;
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_lookup(fd, &root, "limits-big", file), 0);
	return fd;
}

/* A client that sends READs and never reads the replies, then begins a WRITE: its connection
 * holds a record buffer and the replies, and must go at the deadline, whatever holds our
 * reading back. Counted before the test reads anything (reading would let it go on). */
static void test_client_not_reading_replies_closed(void **state)
{
	struct itest *t = *state;
	static uint8_t mib[1 << 20];
	it_write_file(t, EXP_RW, "limits-big", mib, sizeof mib, 0644);
	struct rn_fh file;
	int fd = connect_read_call(t, &file);
	int sz = 64 << 10;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	uint64_t before = rn_counter_must(t->port, "connections_slow_closed");
	for (int i = 0; i < 120; i++) {
		struct xb b;
		rn_enc_read(&b, 0x7e130000u + (uint32_t)i, &file, 0, 1u << 20);
		if (raw_send_record(fd, b.buf, b.len) < 0)
			break;
	}
	it_sleep_ms(500);                                 /* the replies pile up */
	uint32_t mark = htonl(0x80000000u | (1u << 20));
	uint8_t start[4 + 4096] = {0};
	memcpy(start, &mark, 4);
	(void)send(fd, start, sizeof start, MSG_NOSIGNAL | MSG_DONTWAIT);
	it_sleep_ms(500);
	(void)send(fd, start + 4, 100, MSG_NOSIGNAL | MSG_DONTWAIT);
	bool closed = false;
	for (int i = 0; i < 60 && !closed; i++) {         /* record_timeout 2 s, checked each s */
		it_sleep_ms(100);
		closed = rn_counter_must(t->port, "connections_slow_closed") > before;
	}
	close(fd);
	assert_true(closed);
}

/* Nothing sent, or one call and then silence: closed after idle_timeout (3 s). */
static void test_idle_connection_closed(void **state)
{
	struct itest *t = *state;
	uint64_t before = rn_counter_must(t->port, "connections_idle_closed");
	int quiet = raw_connect(t->port, NULL), used = raw_connect(t->port, NULL);
	assert_true(quiet >= 0 && used >= 0);
	null_call_ok(used);
	assert_false(closed_within(quiet, 1500));   /* not before its time */
	assert_true(closed_within(quiet, 4000));
	assert_true(closed_within(used, 2000));
	close(quiet);
	close(used);
	assert_true(rn_counter_must(t->port, "connections_idle_closed") >= before + 2);
}

/* PER_CLIENT idle connections, then one more that calls: it is served, and exactly the oldest
 * idle one was closed for it. */
static void test_per_client_limit_evicts_idlest(void **state)
{
	struct itest *t = *state;
	int fds[PER_CLIENT];
	uint64_t before = rn_counter_must(t->port, "connections_evicted");
	it_sleep_ms(100);              /* the counters' own connection is gone */
	for (int i = 0; i < PER_CLIENT; i++) {
		fds[i] = raw_connect(t->port, NULL);
		assert_true(fds[i] >= 0);
		if (i == 0)
			it_sleep_ms(50);    /* the first is the longest idle */
	}
	it_sleep_ms(100);
	int extra = raw_connect(t->port, NULL);
	assert_true(extra >= 0);
	null_call_ok(extra);
	assert_true(closed_within(fds[0], 1000));
	for (int i = 1; i < PER_CLIENT; i++)
		assert_false(closed_within(fds[i], 0));
	assert_true(rn_counter_must(t->port, "connections_evicted") >= before + 1);
	for (int i = 0; i < PER_CLIENT; i++)
		close(fds[i]);
	close(extra);
}

static long cpu_ticks(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	long ut = -1, st = -1;
	if (f) {
		/* fields 14 and 15: utime, stime (after "pid (comm) state", comm has no spaces) */
		if (fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &ut, &st) != 2)
			ut = st = -1;
		fclose(f);
	}
	return ut < 0 ? -1 : ut + st;
}

/* The daemon out of descriptors: connections wait in the backlog, the accept loop backs off
 * (little CPU over a second), and once descriptors are back they are served. */
static void test_emfile_backs_off(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	null_call_ok(fd);                      /* rings and caches warmed up */
	struct rlimit old, low;
	assert_int_equal(prlimit(t->pid, RLIMIT_NOFILE, NULL, &old), 0);
	/* As many descriptors as it has open now: the next accept fails with EMFILE. */
	int open_now = it_open_fds(t->pid);
	assert_true(open_now > 0);
	low = (struct rlimit){(rlim_t)open_now, old.rlim_max};
	assert_int_equal(prlimit(t->pid, RLIMIT_NOFILE, &low, NULL), 0);
	int waiting[4];
	for (int i = 0; i < 4; i++)
		waiting[i] = raw_connect(t->port, NULL);   /* the kernel completes the handshake */
	long c0 = cpu_ticks(t->pid);
	it_sleep_ms(1000);
	long c1 = cpu_ticks(t->pid);
	long hz = sysconf(_SC_CLK_TCK);
	print_message("daemon CPU over 1 s out of descriptors: %ld ticks of %ld\n", c1 - c0, hz);
	assert_true(c1 - c0 < hz / 4);         /* a spinning accept would take the whole core */
	assert_int_equal(prlimit(t->pid, RLIMIT_NOFILE, &old, NULL), 0);
	for (int i = 0; i < 4; i++) {
		assert_true(waiting[i] >= 0);
		null_call_ok(waiting[i]);          /* accepted after the back-off */
		close(waiting[i]);
	}
	close(fd);
}

#define NFILES 400

/* More files than the daemon has descriptors for: each written (UNSTABLE), committed and read
 * back through one connection must succeed. The rings' handle caches hold up to five descriptors
 * a file, and were sized at start for a larger limit: READs failed with NFS3ERR_IO (EMFILE)
 * until a ring out of descriptors closed the handles no request held. */
static void test_files_beyond_descriptors(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	it_workdir(c, &root, "manyfiles", &dir);
	struct rlimit old, low;
	assert_int_equal(prlimit(t->pid, RLIMIT_NOFILE, NULL, &old), 0);
	low = (struct rlimit){(rlim_t)it_open_fds(t->pid) + 64, old.rlim_max};
	assert_int_equal(prlimit(t->pid, RLIMIT_NOFILE, &low, NULL), 0);
	static uint8_t data[8192], back[8192];
	char name[32], verf[8];
	for (int i = 0; i < NFILES; i++) {
		snprintf(name, sizeof name, "f%04d", i);
		memset(data, 'a' + i % 26, sizeof data);
		NFS_OK(c, nc_create(c, &dir, name, 0644, &f));
		NFS_OK(c, nc_write(c, &f, 0, data, sizeof data, UNSTABLE, NULL));
		NFS_OK(c, nc_commit(c, &f, 0, 0, verf));
	}
	for (int i = 0; i < NFILES; i++) {
		uint32_t got = 0;
		int eof = 0;
		snprintf(name, sizeof name, "f%04d", i);
		memset(data, 'a' + i % 26, sizeof data);
		NFS_OK(c, nc_lookup(c, &dir, name, &f, NULL));
		NFS_OK(c, nc_read(c, &f, 0, sizeof back, back, &got, &eof));
		assert_int_equal(got, sizeof back);
		assert_memory_equal(back, data, sizeof back);
	}
	print_message("daemon descriptors at the end: %d of %llu\n", it_open_fds(t->pid),
		      (unsigned long long)low.rlim_cur);
	assert_int_equal(prlimit(t->pid, RLIMIT_NOFILE, &old, NULL), 0);
	nc_close(c);
}

int main(int argc, char **argv)
{
	static char extra[256];
	snprintf(extra, sizeof extra,
		 "record_timeout = 2\nidle_timeout = 3\nconnections_per_client = %d\n", PER_CLIENT);
	it_server_conf_extra = extra;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trickling_client_closed),
		cmocka_unit_test(test_pipelined_records_not_timed_out),
		cmocka_unit_test(test_client_not_reading_replies_closed),
		cmocka_unit_test(test_idle_connection_closed),
		cmocka_unit_test(test_per_client_limit_evicts_idlest),
		cmocka_unit_test(test_emfile_backs_off),
		cmocka_unit_test(test_files_beyond_descriptors),
	};
	return IT_MAIN("connection limits", tests);
}
