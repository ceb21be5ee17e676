/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Memory the cache already has, used again: a stream of WRITEs into a file filled side by side
 * goes into frames (the records go back at once), data written and never read is held to its
 * share of the bound and its frames come back for the WRITEs that follow, data read is kept; a
 * block completed over a hole in the file reads nothing, each device read counted by its cause;
 * and the frames' write path under overlapping WRITEs, failing writes, a full disk, and a crash
 * among stable WRITEs. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_env.h"

#define CACHE (64 * MiB)          /* written_limit: an eighth, 8 MiB */
#define RECORD 47008u

/* One writer's records in order from off, n of them, write-behind keeping up (as the server's
 * fibers do); *released (if given, alive until the cache is gone) counts the records whose
 * memory was freed. */
static void stream(struct env *e, uint64_t off, unsigned n, unsigned id, atomic_int *released)
{
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(put_rec(e, off + (uint64_t)i * RECORD, RECORD, id, released), 0);
		apply(e, off + (uint64_t)i * RECORD, RECORD, id);
		drain_writeback(e);
	}
}

/* 28 MiB written through a 64 MiB cache: the records are not kept (their blocks went into
 * frames), the cache holds little more than its share of written data, and most frames reuse
 * the memory of frames whose blocks were let go. */
static void test_stream_runs_in_recycled_frames(void **state)
{
	struct env *e = behind_env(CACHE);
	unsigned n = 28 * MiB / RECORD;
	atomic_int released = 0;

	(void)state;
	assert_int_equal(bcache_set_reserve(e->c, 2 * MiB, false), 0);   /* no thread: reuse only */
	stream(e, 0, n, 1, &released);
	struct bcache_stats s = stats(e);

	assert_true(atomic_load(&released) >= (int)n - 8);   /* a file's first WRITEs: adopted */
	assert_true(s.copied > s.adopted * 8);
	assert_true(s.written_trimmed > 0);
	assert_true(s.bytes_peak <= 20 * MiB);         /* share 8 MiB + open frames + slack */
	assert_true(s.frames >= 14);
	assert_true(s.frames_warm + 8 >= s.frames);    /* all but the first few came back */
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A reserve whose thread never ran (a machine busy with other work never gives an idle-priority
 * thread a core) is not short of frames while it has mapped fewer than it keeps: written data
 * stays up to its share, for a READ of what was just written to find. */
static void test_unfilled_reserve_keeps_written(void **state)
{
	struct env *e = behind_env(CACHE);
	const uint64_t len = 64 * RECORD;              /* 2.9 MiB: over the floor, under the share */

	(void)state;
	assert_int_equal(bcache_set_reserve(e->c, 16 * MiB, false), 0);
	stream(e, 0, 64, 1, NULL);
	struct bcache_stats s = stats(e);
	assert_int_equal(s.written_trimmed, 0);
	assert_true(s.frames < 8);
	check_cached(e, 0, len / BS * BS);
	env_free(e);
}

/* Blocks a READ kept are not written data: the written share never takes them. */
static void test_read_blocks_not_trimmed(void **state)
{
	struct env *e = behind_env(CACHE);
	unsigned char *buf = aligned_alloc(BS, MiB);

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < MiB; i++)
		buf[i] = pat(7, i);
	fake_disk_put(&e->disk, 0, buf, MiB);         /* a file that was there before */
	apply(e, 0, MiB, 7);
	struct bcache_read rd;
	bcache_read_begin(e->f, &rd, 0, MiB);
	assert_int_equal(bcache_read_overlay(e->f, &rd, buf), 0);
	bcache_read_keep(e->f, &rd, 0, MiB, buf, NULL);
	stream(e, MiB, 24 * MiB / RECORD, 2, NULL);
	assert_true(stats(e).written_trimmed > 0);
	check_cached(e, 0, MiB);                      /* (a block each: 256 iovecs) */
	free(buf);
	env_free(e);
}

/* Written data a READ came back to is promoted (2Q's HOT) and stays while later writes recycle
 * the rest. */
static void test_written_then_read_is_kept(void **state)
{
	struct env *e = behind_env(CACHE);
	uint64_t first = 22 * RECORD;                  /* a stretch written behind, clean */
	unsigned char *buf = malloc(first);

	(void)state;
	assert_non_null(buf);
	stream(e, 0, 24, 1, NULL);
	assert_true(read_cached(e, 0, first, buf));
	stream(e, 24 * RECORD, 24 * MiB / RECORD, 2, NULL);
	assert_true(stats(e).written_trimmed > 0);
	check_cached(e, 0, first);
	free(buf);
	env_free(e);
}

/* A COMMIT completes a partial block whose neighbour never came: over a hole the missing bytes
 * are zeros with no device read; over data, one read counted as the COMMIT's. */
static void test_fill_over_hole_reads_nothing(void **state)
{
	(void)state;
	for (int hole = 0; hole < 2; hole++) {
		struct env *e = env_new(CACHE, 0);

		e->disk.holes = true;
		if (!hole) {   /* block 2 held data before */
			unsigned char old[BS];
			for (unsigned i = 0; i < BS; i++)
				old[i] = pat(9, 2 * BS + i);
			fake_disk_put(&e->disk, 2 * BS, old, BS);
			apply(e, 2 * BS, BS, 9);
		}
		put(e, 8 * BS, BS, 1);                 /* the file's data reaches past block 2 */
		put(e, 2 * BS + 100, 1000, 2);         /* block 2 in part */
		assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
		struct bcache_stats s = stats(e);
		assert_int_equal(e->disk.reads, hole ? 0 : 1);
		assert_int_equal(s.fill_holes, hole ? 1 : 0);
		assert_int_equal(s.fill_reads_commit, hole ? 0 : 1);
		assert_int_equal(s.fill_reads_bound, 0);
		check_disk(e, true);
		env_free(e);
	}
}

/* A partial block the bound forces out is completed with a read counted as the bound's. */
static void test_bound_fill_counted_apart(void **state)
{
	struct env *e = env_new(2 * BS, 64 * MiB);
	unsigned char old[8 * BS];

	(void)state;
	for (size_t i = 0; i < sizeof(old); i++)
		old[i] = pat(9, i);
	fake_disk_put(&e->disk, 0, old, sizeof(old));
	apply(e, 0, sizeof(old), 9);
	for (unsigned b = 0; b < 4; b++)
		put(e, b * BS + 10, 10, b + 1);        /* the first two go for the bound */
	struct bcache_stats s = stats(e);
	assert_true(s.fill_reads_bound >= 2);
	assert_int_equal(s.fill_reads_commit, 0);
	assert_int_equal(s.fill_reads, s.fill_reads_bound);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* ---- the frames' write path: ordering, errors, ENOSPC, a crash ---- */

/* Records of a file filled side by side, two writers interleaved, the second pass over part of
 * the file rewriting it (overlapping the first records at other offsets): the newest bytes win
 * on disk and in the cache, and the records went into frames. */
static void test_frames_newest_bytes_win(void **state)
{
	struct env *e = behind_env(CACHE);
	const unsigned n = 120;

	(void)state;
	for (unsigned i = 0; i < n; i++)
		put_ok(e, (uint64_t)i * RECORD, RECORD, 1 + i % 2);
	for (unsigned i = 10; i < 40; i++)   /* a rewrite, shifted by 1000 bytes */
		put_ok(e, (uint64_t)i * RECORD + 1000, RECORD, 3 + i % 2);
	assert_true(stats(e).frames > 0);
	check_cached(e, 10 * RECORD, 20 * RECORD);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A READ served from a frame pins its blocks: a WRITE over them meanwhile, while the frame is
 * still being filled, puts its bytes elsewhere, and the reply holds the bytes of when it was
 * read. */
static void test_frames_pinned_read_keeps_old_bytes(void **state)
{
	struct env *e = behind_env(CACHE);
	uint64_t at = 50 * RECORD, len = 2 * RECORD;
	unsigned char *old = malloc(len);
	struct iovec iov[64];
	struct bcache_buf *pins[64];
	int npins;

	(void)state;
	assert_non_null(old);
	stream(e, 0, 60, 1, NULL);                       /* frame 1 is open, not full */
	memcpy(old, e->expect + at, len);
	int n = bcache_read_pinned(e->f, at, len, iov, 64, pins, &npins);
	assert_true(n > 0);
	put_ok(e, at + 100, RECORD, 2);                  /* over the pinned blocks */
	size_t got = 0;
	for (int i = 0; i < n; got += iov[i].iov_len, i++)
		assert_memory_equal(iov[i].iov_base, old + got, iov[i].iov_len);
	assert_int_equal(got, len);
	for (int i = 0; i < npins; i++)
		bcache_buf_put(pins[i]);
	check_cached(e, at, len);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	free(old);
	env_free(e);
}

/* A write-behind of frames' blocks that fails leaves them dirty and the failure to the file's
 * COMMIT; once the disk takes writes again a COMMIT puts every byte there. The same with the
 * disk full at COMMIT. */
static void test_frames_write_errors(void **state)
{
	static const int errs[] = { EIO, ENOSPC };

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct env *e = behind_env(CACHE);

		stream(e, 0, 30, 1, NULL);              /* written behind: fine */
		fake_fail_writes(&e->disk, errs[k], 1000000);
		stream(e, 30 * RECORD, 60, 2, NULL);    /* its write-behind fails */
		assert_true(stats(e).dirty > 0);
		assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -errs[k]);
		assert_true(stats(e).dirty > 0);
		fake_fail_writes(&e->disk, 0, 0);
		assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
		assert_int_equal(stats(e).dirty, 0);
		check_disk(e, true);
		env_free(e);
	}
}

/* Stable WRITEs of records that share blocks (each its own bcache_commit of its range, as a
 * FILE_SYNC WRITE is answered), the disk failing one write in the middle of them: the WRITE
 * whose commit failed was not acknowledged; every one that was is on the durable image, the
 * image a crash right then would leave. */
static void test_frames_stable_writes_survive_a_crash(void **state)
{
	struct env *e = behind_env(CACHE);
	unsigned char *acked = calloc(1, 80 * RECORD);
	unsigned failed = 0;

	(void)state;
	assert_non_null(acked);
	for (unsigned i = 0; i < 80; i++) {
		uint64_t off = (uint64_t)(i % 2 ? i - 1 : i + 1) * RECORD;   /* pairs out of order */
		if (i == 41)
			fake_fail_writes(&e->disk, EIO, 1);   /* one device write fails now */
		assert_int_equal(put_rec(e, off, RECORD, 1, NULL), 0);
		apply(e, off, RECORD, 1);
		if (bcache_commit(e->f, off, RECORD, BCACHE_SYNC_FILE) == 0)
			memset(acked + off, 1, RECORD);
		else
			failed++;
	}
	assert_true(failed >= 1);
	assert_true(stats(e).frames > 0);
	check_acked_durable(e, acked, 80 * RECORD);   /* the crash: what the last sync kept */
	fake_fail_writes(&e->disk, 0, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);   /* the client resends */
	check_disk(e, true);
	free(acked);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_runs_in_recycled_frames),
		cmocka_unit_test(test_unfilled_reserve_keeps_written),
		cmocka_unit_test(test_read_blocks_not_trimmed),
		cmocka_unit_test(test_written_then_read_is_kept),
		cmocka_unit_test(test_fill_over_hole_reads_nothing),
		cmocka_unit_test(test_bound_fill_counted_apart),
		cmocka_unit_test(test_frames_newest_bytes_win),
		cmocka_unit_test(test_frames_pinned_read_keeps_old_bytes),
		cmocka_unit_test(test_frames_write_errors),
		cmocka_unit_test(test_frames_stable_writes_survive_a_crash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
