/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The run-to-completion rings (issue 8): many calls in flight on one connection, and the two
 * writers of one block on two different rings.
 *
 * The daemon runs with threads = 2 (the harness's conf). Ring 0 accepts and hands connections to
 * the rings in turn, so two connections opened one right after the other, with nothing else
 * connecting in between, are served by two different rings. */
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "rawnfs.h"

#define BS 4096

static uint8_t pattern(uint64_t off, unsigned seed)
{
	return (uint8_t)(off * 131 + (off >> 12) * 7 + seed);
}

static void fill(uint8_t *p, uint64_t off, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(off + i, seed);
}

static int connect_nfs(const struct itest *t)
{
	int fd = raw_connect(t->port, NULL);
	assert_true(fd >= 0);
	return fd;
}

/* A new file in the rw export, through fd. */
static struct rn_fh make_file(const struct itest *t, int fd, const char *name)
{
	struct rn_fh root, fh;
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_create(fd, &root, name, &fh), 0);
	return fh;
}

static long long ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The next reply on fd, parsed into *r (its body points into buf). */
static void recv_reply(int fd, uint8_t *buf, size_t cap, struct raw_reply *r)
{
	ssize_t n = raw_recv_record(fd, buf, cap, 10000);
	assert_true(n > 0);
	assert_int_equal(raw_parse_reply(buf, (size_t)n, r), 0);
}

/* r answers a READ with exactly the len bytes of want. */
static void expect_read(const struct raw_reply *r, const void *want, uint32_t len)
{
	const uint8_t *p;
	uint32_t count;
	bool eof;
	assert_int_equal(rn_dec_read(r, &p, &count, &eof), 0);
	assert_int_equal(count, len);
	assert_memory_equal(p, want, len);
}

/* ---- 256 calls in flight on one connection ---- */

#define NCALLS 256
#define WLEN 4000
#define RLEN 4096
#define SRC_SIZE (64 * RLEN)

enum kind { K_WRITE, K_READ, K_GETATTR };

static enum kind kind_of(unsigned i) { return (enum kind)(i % 3); }
static uint64_t read_off(unsigned i) { return ((uint64_t)i * 7919) % (SRC_SIZE - RLEN); }

static void check_reply(const uint8_t *rec, size_t len, uint32_t xid0, bool *seen)
{
	struct raw_reply r;
	assert_int_equal(raw_parse_reply(rec, len, &r), 0);
	unsigned i = r.xid - xid0;
	assert_true(i < NCALLS);
	assert_false(seen[i]);
	seen[i] = true;
	if (kind_of(i) == K_WRITE) {
		uint32_t count, committed;
		assert_int_equal(rn_dec_write(&r, &count, &committed), 0);
		assert_int_equal(count, WLEN);
	} else if (kind_of(i) == K_READ) {
		uint8_t want[RLEN];
		fill(want, read_off(i), RLEN, 3);
		expect_read(&r, want, RLEN);
	} else {
		uint64_t size = 0;
		assert_int_equal(rn_dec_getattr(&r, &size), 0);
		assert_int_equal(size, SRC_SIZE);
	}
}

static void test_256_calls_in_flight(void **state)
{
	const struct itest *t = *state;
	int fd = connect_nfs(t);
	struct rn_fh dst = make_file(t, fd, "inflight.dst"), src = make_file(t, fd, "inflight.src");
	uint8_t *buf = malloc(2u << 20);
	assert_non_null(buf);
	fill(buf, 0, SRC_SIZE, 3);
	assert_int_equal(rn_write(fd, &src, 0, buf, SRC_SIZE / 2, RN_FILE_SYNC), 0);
	assert_int_equal(rn_write(fd, &src, SRC_SIZE / 2, buf + SRC_SIZE / 2, SRC_SIZE / 2, RN_FILE_SYNC), 0);

	/* Every call goes out before any reply is read: the daemon has all of them at once. */
	const uint32_t xid0 = 0x7100000;
	struct xb *b = malloc(sizeof *b);
	uint8_t data[WLEN];
	assert_non_null(b);
	for (unsigned i = 0; i < NCALLS; i++) {
		if (kind_of(i) == K_WRITE) {
			fill(data, (uint64_t)i * WLEN, WLEN, 9);
			rn_enc_write(b, xid0 + i, &dst, (uint64_t)i * WLEN, data, WLEN, RN_UNSTABLE);
		} else if (kind_of(i) == K_READ) {
			rn_enc_read(b, xid0 + i, &src, read_off(i), RLEN);
		} else {
			rn_enc_getattr(b, xid0 + i, &src);
		}
		assert_int_equal(raw_send_record(fd, b->buf, b->len), 0);
	}
	bool seen[NCALLS] = {false};
	for (unsigned n = 0; n < NCALLS; n++) {
		ssize_t len = raw_recv_record(fd, buf, 2u << 20, 10000);
		assert_true(len > 0);
		check_reply(buf, (size_t)len, xid0, seen);
	}
	/* The WRITEs, read back after a COMMIT: every byte where it was written. */
	assert_int_equal(rn_commit(fd, &dst), 0);
	for (unsigned i = 0; i < NCALLS; i += 3) {
		uint8_t got[WLEN];
		fill(data, (uint64_t)i * WLEN, WLEN, 9);
		assert_int_equal(rn_read(fd, &dst, (uint64_t)i * WLEN, got, WLEN), 0);
		assert_memory_equal(got, data, WLEN);
	}
	free(b);
	free(buf);
	close(fd);
}

/* ---- one block, two writers, two rings ---- */

/* Bytes [0, SPLIT) come from writer A, [SPLIT, END) from writer B: block 1 ([4096, 8192)) is
 * shared by the two WRITEs; every other block is written whole by one of them. */
#define SPLIT 6000
#define END (3 * BS)
#define OLD_SIZE (16 * BS)

struct pair {
	int a, b, keep;               /* A and B on two rings; keep: a third connection */
	struct rn_fh fa, fb, fk;      /* the same file, as each connection resolved it */
};

/* An overwrite: the file already holds other bytes on disk, so completing block 1 before its
 * second writer came would have to read it (a counted fill read). They are written behind the
 * daemon's back: written through it, they would stay in its cache as clean blocks, and a WRITE
 * over one would find it complete at once. */
static struct pair open_pair(const struct itest *t, const char *name)
{
	struct pair p;
	p.keep = connect_nfs(t);
	uint8_t *old = malloc(OLD_SIZE);
	assert_non_null(old);
	fill(old, 0, OLD_SIZE, 77);
	it_write_file(t, EXP_RW, name, old, OLD_SIZE, 0644);
	p.fk = make_file(t, p.keep, name);
	free(old);
	/* Consecutive accepts: two rings. */
	p.a = connect_nfs(t);
	p.b = connect_nfs(t);
	p.fa = make_file(t, p.a, name);
	p.fb = make_file(t, p.b, name);
	return p;
}

static void close_pair(struct pair *p)
{
	close(p->a);
	close(p->b);
	close(p->keep);
}

static void send_write(int fd, const struct rn_fh *fh, uint64_t off, uint32_t len, int stable,
                       uint32_t xid)
{
	struct xb *b = malloc(sizeof *b);
	uint8_t *data = malloc(len);
	assert_non_null(b);
	assert_non_null(data);
	fill(data, off, len, 5);
	rn_enc_write(b, xid, fh, off, data, len, stable);
	assert_int_equal(raw_send_record(fd, b->buf, b->len), 0);
	free(data);
	free(b);
}

static void expect_write(int fd, uint32_t xid, uint32_t len, int stable)
{
	uint8_t *buf = malloc(65536);
	struct raw_reply r;
	uint32_t count, committed;
	assert_non_null(buf);
	recv_reply(fd, buf, 65536, &r);
	assert_int_equal(r.xid, xid);
	assert_int_equal(rn_dec_write(&r, &count, &committed), 0);
	assert_int_equal(count, len);
	assert_true((int)committed >= stable);
	free(buf);
}

/* A stable WRITE waits for its neighbour only while other requests run (one of them may be it).
 * The keeper makes sure one does: a COMMIT of a file holding 128 MiB of dirty page-cache data,
 * written here behind the daemon's back, whose fsync takes a while. */
#define KEEP_SIZE (128u << 20)
static void send_keeper(const struct itest *t, struct pair *p, const char *name, uint32_t xid)
{
	char rel[64], path[PATH_MAX];
	snprintf(rel, sizeof rel, "%s.keeper", name);
	it_path(t, EXP_RW, rel, path, sizeof path);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	uint8_t *chunk = calloc(1, 1u << 20);
	assert_non_null(chunk);
	for (unsigned i = 0; i < KEEP_SIZE >> 20; i++) {
		chunk[0] = (uint8_t)i;
		assert_int_equal(fwrite(chunk, 1, 1u << 20, f), 1u << 20);
	}
	assert_int_equal(fclose(f), 0);
	free(chunk);
	struct rn_fh root, fh;
	assert_int_equal(rn_mnt(p->keep, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_create(p->keep, &root, rel, &fh), 0);
	struct xb *b = malloc(sizeof *b);
	assert_non_null(b);
	rn_enc_commit(b, xid, &fh, 0, 0);
	assert_int_equal(raw_send_record(p->keep, b->buf, b->len), 0);
	free(b);
}

static void drain_keeper(struct pair *p, uint32_t xid)
{
	uint8_t buf[4096];
	struct raw_reply r;
	ssize_t n = raw_recv_record(p->keep, buf, sizeof buf, 30000);
	assert_true(n > 0);
	assert_int_equal(raw_parse_reply(buf, (size_t)n, &r), 0);
	assert_int_equal(r.xid, xid);
	assert_int_equal(rn_dec_commit(&r), 0);
}

static void check_file(struct pair *p)
{
	uint8_t *got = malloc(OLD_SIZE), *want = malloc(OLD_SIZE);
	assert_non_null(got);
	assert_non_null(want);
	fill(want, 0, OLD_SIZE, 77);
	fill(want, 0, END, 5);
	assert_int_equal(rn_read(p->keep, &p->fk, 0, got, OLD_SIZE), 0);
	assert_memory_equal(got, want, OLD_SIZE);
	free(got);
	free(want);
}

/* Block 1 written by two WRITEs from two rings: the device reads it took (0: completed by the
 * two, nothing read); any read is a stable WRITE's (cache_fill_reads_commit). */
static uint64_t shared_block_once(const struct itest *t, const char *name, int stable,
				  bool b_first)
{
	struct pair p = open_pair(t, name);
	uint64_t reads0 = rn_counter_must(t->port, "cache_fill_reads");
	uint64_t commit0 = rn_counter_must(t->port, "cache_fill_reads_commit");
	uint64_t done0 = rn_counter_must(t->port, "cache_blocks_completed");
	if (stable != RN_UNSTABLE)
		send_keeper(t, &p, name, 0x7300000);
	if (b_first) {
		send_write(p.b, &p.fb, SPLIT, END - SPLIT, stable, 0x7200002);
		send_write(p.a, &p.fa, 0, SPLIT, stable, 0x7200001);
	} else {
		send_write(p.a, &p.fa, 0, SPLIT, stable, 0x7200001);
		send_write(p.b, &p.fb, SPLIT, END - SPLIT, stable, 0x7200002);
	}
	expect_write(p.a, 0x7200001, SPLIT, stable);
	expect_write(p.b, 0x7200002, END - SPLIT, stable);
	if (stable != RN_UNSTABLE)
		drain_keeper(&p, 0x7300000);
	else
		assert_int_equal(rn_commit(p.a, &p.fa), 0);
	uint64_t reads = rn_counter_must(t->port, "cache_fill_reads") - reads0;
	assert_int_equal(rn_counter_must(t->port, "cache_fill_reads_commit") - commit0, reads);
	if (reads == 0)
		assert_true(rn_counter_must(t->port, "cache_blocks_completed") > done0);
	check_file(&p);
	close_pair(&p);
	return reads;
}

/* UNSTABLE: the block waits in the cache for its neighbour, whatever the timing. A stable
 * WRITE waits parked only while its ring has other calls to run (test_parked_* below): on a
 * busy machine the neighbour can come after the first gave up and read the block, so that case
 * has three tries (a server that always reads fails all three). */
static void shared_block(const struct itest *t, const char *name, int stable, bool b_first)
{
	char n[64];
	for (int try = 0; try < (stable == RN_UNSTABLE ? 1 : 3); try++) {
		snprintf(n, sizeof n, "%s.%d", name, try);
		uint64_t reads = shared_block_once(t, n, stable, b_first);
		if (reads == 0)
			return;
		print_message("try %d: the block was read %llu time(s)\n", try,
			      (unsigned long long)reads);
	}
	fail_msg("%s: the shared block was read from disk in every try", name);
}

static void test_shared_block_unstable_a_first(void **state)
{
	shared_block(*state, "ring.u.ab", RN_UNSTABLE, false);
}

static void test_shared_block_unstable_b_first(void **state)
{
	shared_block(*state, "ring.u.ba", RN_UNSTABLE, true);
}

static void test_shared_block_file_sync_a_first(void **state)
{
	shared_block(*state, "ring.s.ab", RN_FILE_SYNC, false);
}

static void test_shared_block_file_sync_b_first(void **state)
{
	shared_block(*state, "ring.s.ba", RN_FILE_SYNC, true);
}

/* ---- a parked WRITE gives up as soon as nothing else runs ---- */

/* A FILE_SYNC WRITE whose end block nobody completes parks while another request runs (a
 * READDIR held on the pool by the fault seam, touching no disk: READDIR_DELAY_MS per getdents,
 * two of them); when that ends, nothing runs any more and the WRITE must be answered at once
 * (completing its block with a read), not at the end of its longest wait (1 s after it came). */
#define READDIR_DELAY_MS 300

static void test_parked_write_gives_up_when_idle(void **state)
{
	const struct itest *t = *state;
	struct pair p = open_pair(t, "parked.gives.up");
	struct rn_fh root;
	assert_int_equal(rn_mnt(p.keep, t->exports[EXP_RW], &root), 0);
	struct xb *b = malloc(sizeof *b);
	uint8_t *buf = malloc(65536);
	assert_non_null(b);
	assert_non_null(buf);
	rn_enc_readdir(b, 0x7900000, &root, 4096);
	assert_int_equal(raw_send_record(p.keep, b->buf, b->len), 0);
	long long t0 = ms_now();
	usleep(50 * 1000);            /* the READDIR is held on the pool */
	send_write(p.a, &p.fa, 0, SPLIT, RN_FILE_SYNC, 0x7900001);
	assert_true(raw_recv_record(p.keep, buf, 65536, 10000) > 0);
	long long t_keeper = ms_now();
	expect_write(p.a, 0x7900001, SPLIT, RN_FILE_SYNC);
	long long t_write = ms_now();
	assert_true(t_keeper - t0 >= 2 * READDIR_DELAY_MS - 50);
	assert_true(t_keeper - t0 < 900);     /* it ended before the WRITE's longest wait */
	assert_true(t_write - t_keeper < 200);
	free(buf);
	free(b);
	close_pair(&p);
}

/* ---- a parked WRITE waits while calls keep arriving ---- */

/* Behind a slow writer every WRITE in flight may be parked at one moment while the clients go on
 * sending: the neighbour may be among the next calls. A FILE_SYNC WRITE parks for its neighbour
 * while the keeper's COMMIT runs; when that ends, GETATTRs from another connection keep arriving
 * (each ending at once: from then on nothing is ever running for long) for STREAM_MS, several
 * times the park's quiet time; then the neighbour comes and completes the block: no read. */
#define STREAM_MS 60
#define STREAM_GAP_MS 2

static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	return poll(&pfd, 1, 0) == 1;
}

/* GETATTRs on fd, one at a time, until the keeper's reply is in and STREAM_MS more have passed.
 * The time of the last reply in *last; the longest pause between two of them, in ms. */
static long long stream_getattrs(struct pair *p, int fd, uint32_t keeper_xid, long long *last_out)
{
	struct xb *b = malloc(sizeof *b);
	uint8_t *buf = malloc(65536);
	assert_non_null(b);
	assert_non_null(buf);
	long long keeper_done = 0, last = ms_now(), gap = 0;
	for (uint32_t xid = keeper_xid + 0x100; !keeper_done || ms_now() - keeper_done < STREAM_MS;
	     xid++) {
		if (!keeper_done && readable(p->keep)) {
			drain_keeper(p, keeper_xid);
			keeper_done = ms_now();
		}
		rn_enc_getattr(b, xid, &p->fk);
		assert_int_equal(raw_send_record(fd, b->buf, b->len), 0);
		assert_true(raw_recv_record(fd, buf, 65536, 10000) > 0);
		long long now = ms_now();
		if (keeper_done && now - last > gap)
			gap = now - last;
		last = now;
		usleep(STREAM_GAP_MS * 1000);
	}
	free(buf);
	free(b);
	*last_out = last;
	return gap;
}

/* One try: device reads of the block's completion, and in *gap the longest pause in the calls
 * the parked WRITE saw arrive, up to the neighbour's send. */
static uint64_t parked_while_arriving(const struct itest *t, unsigned n, long long *gap)
{
	char name[32];
	snprintf(name, sizeof name, "parked.arrivals.%u", n);
	uint32_t xid = 0x7a00000 + n * 0x10000;
	struct pair p = open_pair(t, name);
	int other = connect_nfs(t);
	uint64_t reads0 = rn_counter_must(t->port, "cache_fill_reads");
	send_keeper(t, &p, name, xid);
	send_write(p.a, &p.fa, 0, SPLIT, RN_FILE_SYNC, xid + 1);
	long long last;
	*gap = stream_getattrs(&p, other, xid, &last);
	send_write(p.b, &p.fb, SPLIT, END - SPLIT, RN_FILE_SYNC, xid + 2);
	if (ms_now() - last > *gap)
		*gap = ms_now() - last;
	expect_write(p.a, xid + 1, SPLIT, RN_FILE_SYNC);
	expect_write(p.b, xid + 2, END - SPLIT, RN_FILE_SYNC);
	check_file(&p);
	uint64_t reads = rn_counter_must(t->port, "cache_fill_reads") - reads0;
	close(other);
	close_pair(&p);
	return reads;
}

/* A pause in the calls as long as the park's quiet time lets the WRITE give up, rightly; so does
 * the daemon itself not running for that long on a machine busy elsewhere, which the client
 * cannot see. Neither is the case this test is about: up to three tries, one without a read
 * passes. A WRITE that does not wait for arriving calls reads every time. */
static void test_parked_write_waits_while_calls_arrive(void **state)
{
	const struct itest *t = *state;
	bool quiet_pause = true;
	for (unsigned n = 0; n < 3; n++) {
		long long gap;
		if (parked_while_arriving(t, n, &gap) == 0)
			return;
		print_message("try %u: the block was read (longest pause in the calls %lld ms)\n", n,
			      gap);
		quiet_pause = quiet_pause && gap >= 8;
	}
	if (quiet_pause)
		skip();
	fail_msg("a parked FILE_SYNC WRITE gave up while calls kept arriving, three times");
}

/* ---- a blocking call held on the pool while the ring serves its connection ---- */

static void test_stuck_readdir_blocks_no_ring(void **state)
{
	const struct itest *t = *state;
	int fd = connect_nfs(t);
	struct rn_fh root, f;
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	f = make_file(t, fd, "beside.readdir");
	uint8_t data[WLEN];
	fill(data, 0, WLEN, 11);
	assert_int_equal(rn_write(fd, &f, 0, data, WLEN, RN_FILE_SYNC), 0);

	/* READDIR first (its getdents waits READDIR_DELAY_MS on a pool thread), then a WRITE and a
	 * READ on the same connection, so the same ring: they must not wait for it. */
	struct xb *b = malloc(sizeof *b);
	assert_non_null(b);
	long long t0 = ms_now();
	rn_enc_readdir(b, 0x7400001, &root, 4096);
	assert_int_equal(raw_send_record(fd, b->buf, b->len), 0);
	usleep(50 * 1000);            /* the READDIR is on the pool by now */
	rn_enc_write(b, 0x7400002, &f, WLEN, data, WLEN, RN_UNSTABLE);
	assert_int_equal(raw_send_record(fd, b->buf, b->len), 0);
	rn_enc_read(b, 0x7400003, &f, 0, WLEN);
	assert_int_equal(raw_send_record(fd, b->buf, b->len), 0);
	uint8_t *buf = malloc(65536);
	assert_non_null(buf);
	for (uint32_t want = 0x7400002; want <= 0x7400004; want++) {
		struct raw_reply r;
		recv_reply(fd, buf, 65536, &r);
		long long dt = ms_now() - t0;
		if (want < 0x7400004) {
			/* The WRITE and the READ, answered while the READDIR is still held: before its
			 * reply (the order says it; a bound on dt would only add a timing flake under
			 * ASan on a busy machine). */
			assert_true(r.xid == 0x7400002 || r.xid == 0x7400003);
			if (r.xid == 0x7400003) {
				expect_read(&r, data, WLEN);
			} else {
				uint32_t count, committed;
				assert_int_equal(rn_dec_write(&r, &count, &committed), 0);
			}
		} else {
			assert_int_equal(r.xid, 0x7400001);
			assert_int_equal(rn_dec_status(&r), 0);
			assert_true(dt >= READDIR_DELAY_MS);
		}
	}
	free(buf);
	free(b);
	close(fd);
}

/* ---- MOUNT as the server, whatever the ring's previous request was ---- */

static int exchange_status(int fd, struct xb *b, int (*dec)(const struct raw_reply *, struct rn_fh *),
                           struct rn_fh *out)
{
	uint8_t buf[4096];
	struct raw_reply r;
	assert_int_equal(rn_exchange(fd, b, buf, sizeof buf, &r), 0);
	return dec ? dec(&r, out) : rn_dec_status(&r);
}

static void test_mount_acts_as_the_server(void **state)
{
	const struct itest *t = *state;
	char dir[PATH_MAX], sub[PATH_MAX + 16];
	/* root's 0700 directory, a subdirectory in it, and root's 0600 file there */
	it_path(t, EXP_RW, "locked", dir, sizeof dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(sub, sizeof sub, "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	it_write_file(t, EXP_RW, "locked/sub/secret", "top secret", 10, 0600);

	int fd = connect_nfs(t);
	struct xb *b = malloc(sizeof *b);
	struct rn_fh root, subfh, secret;
	assert_non_null(b);
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	/* A user's request leaves the ring thread with the user's identity ... */
	rn_enc_getattr_as(b, 0x7500001, &root, 1000, 1000);
	assert_int_equal(exchange_status(fd, b, NULL, NULL), 0);
	/* ... and root's MNT of a path only root can reach still works. */
	rn_enc_mnt_as(b, 0x7500002, sub, 0, 0);
	assert_int_equal(exchange_status(fd, b, rn_dec_mnt, &subfh), 0);
	/* A user may MNT it too (as rpc.mountd allows), but gets no further than the modes let it:
	 * root's 0600 file there is not the user's to read. */
	rn_enc_mnt_as(b, 0x7500003, sub, 1000, 1000);
	assert_int_equal(exchange_status(fd, b, rn_dec_mnt, &subfh), 0);
	rn_enc_lookup_as(b, 0x7500004, &subfh, "secret", 1000, 1000);
	assert_int_equal(exchange_status(fd, b, rn_dec_lookup, &secret), 0);
	rn_enc_read_as(b, 0x7500005, &secret, 0, 10, 1000, 1000);
	assert_int_equal(exchange_status(fd, b, NULL, NULL), 13);   /* NFS3ERR_ACCES */
	/* root reads it */
	uint8_t got[10];
	assert_int_equal(rn_read(fd, &secret, 0, got, 10), 0);
	assert_memory_equal(got, "top secret", 10);
	free(b);
	close(fd);
}

/* ---- more callers than a ring keeps personalities for ---- */

#define MANY_USERS 100

/* READs of a world-readable file from 100 uids at once on one connection: the ring registers
 * a personality per credential set and keeps 64, so some are replaced while SQEs of the same
 * loop turn still carry them. Every READ must succeed. */
static void test_more_users_than_personalities(void **state)
{
	const struct itest *t = *state;
	it_write_file(t, EXP_RW, "for.everyone", "anyone may read this", 20, 0644);
	int fd = connect_nfs(t);
	struct rn_fh root, f;
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	struct xb *b = malloc(sizeof *b);
	uint8_t *buf = malloc(65536);
	assert_non_null(b);
	assert_non_null(buf);
	rn_enc_lookup_as(b, 0x7800000, &root, "for.everyone", 0, 0);
	assert_int_equal(exchange_status(fd, b, rn_dec_lookup, &f), 0);
	for (unsigned i = 0; i < MANY_USERS; i++) {
		rn_enc_read_as(b, 0x7810000 + i, &f, 0, 20, 2000 + i, 2000 + i);
		assert_int_equal(raw_send_record(fd, b->buf, b->len), 0);
	}
	for (unsigned n = 0; n < MANY_USERS; n++) {
		struct raw_reply r;
		recv_reply(fd, buf, 65536, &r);
		expect_read(&r, "anyone may read this", 20);
	}
	free(buf);
	free(b);
	close(fd);
}

/* ---- REMOVE on one ring while WRITEs of the file run on another ---- */

#define REMOVE_WRITES 64
#define REMOVE_REC 6000

static uint64_t cache_entries(const struct itest *t)
{
	uint64_t v = rn_counter_must(t->port, "cache_entries");
	assert_true(v != UINT64_MAX);
	return v;
}

static void test_remove_during_writes_leaves_nothing(void **state)
{
	const struct itest *t = *state;
	int a = connect_nfs(t), b = connect_nfs(t);     /* consecutive accepts: two rings */
	struct rn_fh root, f;
	assert_int_equal(rn_mnt(b, t->exports[EXP_RW], &root), 0);
	f = make_file(t, a, "removed.while.written");
	uint64_t before = cache_entries(t);
	/* Misaligned UNSTABLE WRITEs: every one leaves partial blocks in the cache. */
	struct xb *x = malloc(sizeof *x);
	uint8_t data[REMOVE_REC];
	assert_non_null(x);
	uint8_t *buf = malloc(65536);
	assert_non_null(buf);
	struct raw_reply r;
	for (unsigned i = 0; i < REMOVE_WRITES; i++) {
		fill(data, (uint64_t)i * REMOVE_REC, REMOVE_REC, 21);
		rn_enc_write(x, 0x7700000 + i, &f, (uint64_t)i * REMOVE_REC * 2, data, REMOVE_REC,
			     RN_UNSTABLE);
		assert_int_equal(raw_send_record(a, x->buf, x->len), 0);
		if (i + 1 == REMOVE_WRITES / 2) {
			/* The first half answered: the file's partial blocks are in the cache. */
			for (unsigned k = 0; k <= i; k++)
				assert_true(raw_recv_record(a, buf, 65536, 10000) > 0);
			assert_true(cache_entries(t) > before);
			rn_enc_remove_as(x, 0x7700fff, &root, "removed.while.written", 0, 0);
			assert_int_equal(raw_send_record(b, x->buf, x->len), 0);
		}
	}
	ssize_t n = raw_recv_record(b, buf, 65536, 10000);
	assert_true(n > 0);
	assert_int_equal(raw_parse_reply(buf, (size_t)n, &r), 0);
	assert_int_equal(rn_dec_status(&r), 0);
	for (unsigned i = REMOVE_WRITES / 2; i < REMOVE_WRITES; i++)   /* answered, whatever the file's fate */
		assert_true(raw_recv_record(a, buf, 65536, 10000) > 0);
	/* The file is gone: within a moment nothing of it is left in the cache. */
	uint64_t now = cache_entries(t);
	for (int tries = 0; tries < 100 && now > before; tries++) {
		usleep(20 * 1000);
		now = cache_entries(t);
	}
	assert_true(now <= before);
	/* A new file of that name starts empty: no size hint carried over. */
	struct rn_fh g = make_file(t, a, "removed.while.written");
	rn_enc_getattr(x, 0x7701000, &g);
	uint64_t size = 1;
	assert_int_equal(rn_exchange(a, x, buf, 65536, &r), 0);
	assert_int_equal(rn_dec_getattr(&r, &size), 0);
	assert_int_equal(size, 0);
	free(buf);
	free(x);
	close(a);
	close(b);
}

/* ---- credentials stay each fiber's own while they interleave on one ring ---- */

#define CRED_CALLS 96

/* uid 1000 READs its own 0600 file while uid 1001 tries to REMOVE files of uid 1000's directory,
 * all in flight at once on one connection: one ring thread runs both users' fibers, switching
 * between them at every wait. A REMOVE waits (it stats its victim) before it unlinks: should the
 * unlink run as the other user, the file would go. */
static void test_interleaved_users_keep_their_credentials(void **state)
{
	const struct itest *t = *state;
	char path[PATH_MAX];
	it_path(t, EXP_RW, "dir.of.1000", path, sizeof path);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(chown(path, 1000, 1000), 0);
	it_write_file(t, EXP_RW, "dir.of.1000/mine", "for 1000 only", 13, 0600);
	it_path(t, EXP_RW, "dir.of.1000/mine", path, sizeof path);
	assert_int_equal(chown(path, 1000, 1000), 0);
	for (unsigned i = 1; i < CRED_CALLS; i += 2) {
		char rel[64];
		snprintf(rel, sizeof rel, "dir.of.1000/keep%u", i);
		it_write_file(t, EXP_RW, rel, "x", 1, 0644);
	}
	int fd = connect_nfs(t);
	struct rn_fh root, dir, f;
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	struct xb *b = malloc(sizeof *b);
	uint8_t *buf = malloc(65536);
	assert_non_null(b);
	assert_non_null(buf);
	rn_enc_lookup_as(b, 0x7600000, &root, "dir.of.1000", 1000, 1000);
	assert_int_equal(exchange_status(fd, b, rn_dec_lookup, &dir), 0);
	rn_enc_lookup_as(b, 0x7600001, &dir, "mine", 1000, 1000);
	assert_int_equal(exchange_status(fd, b, rn_dec_lookup, &f), 0);
	for (unsigned i = 0; i < CRED_CALLS; i++) {
		if (i % 2) {
			char name[32];
			snprintf(name, sizeof name, "keep%u", i);
			rn_enc_remove_as(b, 0x7610000 + i, &dir, name, 1001, 1001);
		} else {
			rn_enc_read_as(b, 0x7610000 + i, &f, 0, 13, 1000, 1000);
		}
		assert_int_equal(raw_send_record(fd, b->buf, b->len), 0);
	}
	for (unsigned n = 0; n < CRED_CALLS; n++) {
		struct raw_reply r;
		recv_reply(fd, buf, 65536, &r);
		unsigned i = r.xid - 0x7610000;
		assert_true(i < CRED_CALLS);
		if (i % 2) {
			assert_int_equal(rn_dec_status(&r), 13);     /* NFS3ERR_ACCES */
		} else {
			expect_read(&r, "for 1000 only", 13);
		}
	}
	for (unsigned i = 1; i < CRED_CALLS; i += 2) {
		char rel[64];
		snprintf(rel, sizeof rel, "dir.of.1000/keep%u", i);
		it_path(t, EXP_RW, rel, path, sizeof path);
		assert_int_equal(access(path, F_OK), 0);     /* still there */
	}
	free(buf);
	free(b);
	close(fd);
}

int main(int argc, char **argv)
{
	/* The fault seam for the READDIR test: every getdents of the daemon waits this long. No
	 * other test of this program lists a directory. */
	char delay[16];
	snprintf(delay, sizeof delay, "%d", READDIR_DELAY_MS);
	setenv("NFSD_UC_FAULT_READDIR_DELAY_MS", delay, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_256_calls_in_flight),
		cmocka_unit_test(test_shared_block_unstable_a_first),
		cmocka_unit_test(test_shared_block_unstable_b_first),
		cmocka_unit_test(test_shared_block_file_sync_a_first),
		cmocka_unit_test(test_shared_block_file_sync_b_first),
		cmocka_unit_test(test_stuck_readdir_blocks_no_ring),
		cmocka_unit_test(test_mount_acts_as_the_server),
		cmocka_unit_test(test_interleaved_users_keep_their_credentials),
		cmocka_unit_test(test_remove_during_writes_leaves_nothing),
		cmocka_unit_test(test_more_users_than_personalities),
		cmocka_unit_test(test_parked_write_gives_up_when_idle),
		cmocka_unit_test(test_parked_write_waits_while_calls_arrive),
	};
	return IT_MAIN("rings", tests);
}
