/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Large WRITEs and READs, and WRITEs that land alone, in BEHIND mode. A WRITE's middle of 512
 * KiB or more goes straight to disk as the WRITE arrives (its record is not held), its partial
 * ends wait in the cache for their neighbours; under cached blocks and frames of the same
 * stretch the newest bytes win; a failing or full disk fails the WRITE and loses nothing; and a
 * crash among stable WRITEs whose middles went straight keeps every byte that was
 * acknowledged. A stable WRITE of whole blocks goes straight whatever its size, over the
 * older cached bytes of its blocks. A random writer's whole blocks go straight too; a stream
 * of small WRITEs, or one next to cached data, stays behind. A large READ that misses is kept
 * only when its chunks were read before, a small one when its blocks were or it continues a
 * stream. */
#include "test_env.h"

#define CACHE (64 * MiB)
#define LARGE (2 * MiB + 1000)   /* a middle of 2 MiB less a block, partial ends */
#define RECORD 47008u

/* The middle is on disk when the WRITE returns, the record is freed, the ends are cached; the
 * neighbours complete the ends in the cache and the COMMIT writes them without a read. */
static void test_large_write_goes_straight(void **state)
{
	struct env *e = behind_env(CACHE);
	atomic_int released = 0;

	(void)state;
	assert_int_equal(put_rec(e, 100, LARGE, 1, &released), 0);
	apply(e, 100, LARGE, 1);
	assert_int_equal(e->disk.writes, 1);               /* the middle, at once */
	assert_int_equal(atomic_load(&released), 1);       /* not held */
	struct bcache_stats s = stats(e);
	assert_int_equal(s.direct_middles, 1);
	assert_int_equal(s.dirty, 2);                      /* the two partial blocks */
	put_ok(e, 0, 100, 2);                              /* the neighbours */
	put_ok(e, 100 + LARGE, RECORD, 3);
	check_cached(e, 0, 100);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(stats(e).fill_reads, 0);
	env_free(e);
}

/* Below the threshold a WRITE stays in the cache: no device write until write-behind. */
static void test_smaller_write_stays_behind(void **state)
{
	struct env *e = behind_env(CACHE);

	(void)state;
	put_ok(e, 0, 256 * 1024 + 1000, 1);
	assert_int_equal(e->disk.writes, 0);
	assert_int_equal(stats(e).direct_middles, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A random writer: a block at 31 MiB (a file's first WRITE says nothing yet of its writers),
 * then n whole blocks apart from each other and far below it (the cache's spread is 16 MiB),
 * ids from 2. Returns how many records were freed by then. */
static int put_random(struct env *e, unsigned n)
{
	atomic_int released = 0;

	put_ok(e, 31 * MiB, BS, 1);
	for (unsigned i = 0; i < n; i++) {
		uint64_t off = (uint64_t)(i * 37 % n + 1) * 64 * BS;

		assert_int_equal(put_rec(e, off, BS, 2 + i, &released), 0);
		apply(e, off, BS, 2 + i);
		assert_int_equal(e->disk.writes, i + 1);   /* on disk when its WRITE returns */
	}
	return atomic_load(&released);
}

/* A random writer's whole blocks go to disk as they come, their records freed, nothing held;
 * a failed one gets the error and its resend lands. */
static void test_lone_blocks_go_straight(void **state)
{
	struct env *e = behind_env(CACHE);

	(void)state;
	assert_int_equal(put_random(e, 24), 24);
	struct bcache_stats s = stats(e);
	assert_int_equal(s.lone_writes, 24);
	assert_int_equal(s.dirty, 1);                      /* the first */
	fake_fail_writes(&e->disk, EIO, 1);
	assert_int_equal(put_rec(e, 3 * BS, BS, 30, NULL), -EIO);
	assert_int_equal(stats(e).dirty, 1);
	assert_int_equal(put_rec(e, 3 * BS, BS, 30, NULL), 0);     /* the resend */
	apply(e, 3 * BS, BS, 30);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	env_free(e);
}

/* Blocks written one after another stay behind and go as one run: from the start of a file,
 * and from where a random writer's block went, each WRITE starting where the last one ended. */
static void test_block_stream_stays_behind(void **state)
{
	struct env *e = behind_env(CACHE);

	(void)state;
	for (unsigned i = 0; i < 32; i++)
		put_ok(e, (uint64_t)i * BS, BS, 1);
	assert_int_equal(e->disk.writes, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.writes, 1);
	check_disk(e, true);
	env_free(e);

	e = behind_env(CACHE);
	put_random(e, 8);
	for (unsigned i = 0; i < 32; i++)
		put_ok(e, 4 * MiB + (uint64_t)i * BS, BS, 20);
	assert_int_equal(e->disk.writes, 8 + 1);           /* the stream's first WRITE alone */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.writes, 9 + 2);           /* the first, and the rest of the stream */
	check_disk(e, true);
	env_free(e);
}

/* A random writer's whole block next to cached bytes stays behind with them. */
static void test_block_next_to_cached_stays_behind(void **state)
{
	struct env *e = behind_env(CACHE);

	(void)state;
	put_random(e, 8);
	put_ok(e, 100 * BS - 100, 100, 20);                /* the end of block 99 */
	put_ok(e, 100 * BS, BS, 21);
	put_ok(e, 200 * BS, 100, 22);                      /* and the start of block 200 */
	put_ok(e, 199 * BS, BS, 23);
	assert_int_equal(e->disk.writes, 8);
	assert_int_equal(stats(e).lone_writes, 8);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* What a READ of [off, off + len) returns (the disk's bytes, the cache's over them) is what was
 * written last. */
static void check_read(struct env *e, uint64_t off, uint64_t len)
{
	unsigned char *buf = malloc(len);

	assert_non_null(buf);
	assert_int_equal(read_through(e, off, buf, len), 0);
	assert_memory_equal(buf, e->expect + off, len);
	free(buf);
}

/* Records filling a stretch side by side (frames), a large WRITE straight over part of it, then
 * records again over part of that: the newest bytes win, in the cache and on disk, with the
 * write-behind of the older blocks in between. (The large WRITEs' ends share blocks with bytes
 * written before and maybe already let go: completing those may read, as any overwrite's.) */
static void test_straight_over_frames(void **state)
{
	struct env *e = behind_env(CACHE);

	(void)state;
	for (unsigned i = 0; i < 90; i++)
		put_ok(e, (uint64_t)i * RECORD, RECORD, 1 + i % 2);
	assert_true(stats(e).frames > 0);
	put_ok(e, 20 * RECORD + 333, LARGE, 3);
	check_read(e, 0, 20 * RECORD + LARGE + RECORD);
	bcache_writeback(e->c);
	for (unsigned i = 30; i < 40; i++)
		put_ok(e, (uint64_t)i * RECORD + 77, RECORD, 4 + i % 2);
	drain_writeback(e);
	put_ok(e, 50 * RECORD, LARGE, 6);
	check_read(e, 0, 50 * RECORD + LARGE);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* The middle's write fails (EIO, then ENOSPC): the WRITE gets the error, its cached ends and
 * the file's other dirty blocks stay for the COMMIT, and once the disk takes writes again the
 * client's resend and a COMMIT put every byte there. */
static void test_straight_write_errors(void **state)
{
	static const int errs[] = { EIO, ENOSPC };

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct env *e = behind_env(CACHE);

		put_ok(e, 0, RECORD, 1);
		fake_fail_writes(&e->disk, errs[k], 1);
		assert_int_equal(put_rec(e, RECORD, LARGE, 2, NULL), -errs[k]);
		assert_true(stats(e).dirty > 0);
		assert_int_equal(put_rec(e, RECORD, LARGE, 2, NULL), 0);   /* the resend */
		apply(e, RECORD, LARGE, 2);
		assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
		check_disk(e, true);
		env_free(e);
	}
}

/* Stable WRITEs of large records sharing blocks (each answered after its bcache_commit of its
 * range, as FILE_SYNC is), out of order, one device write failing among them: every byte of a
 * WRITE that was acknowledged is on the durable image, the one a crash right then leaves. */
static void test_straight_stable_writes_survive_a_crash(void **state)
{
	const unsigned n = 10;
	struct env *e = behind_env(CACHE);
	unsigned char *acked = calloc(1, (size_t)n * LARGE);
	unsigned failed = 0;

	(void)state;
	assert_non_null(acked);
	for (unsigned i = 0; i < n; i++) {
		uint64_t off = (uint64_t)(i % 2 ? i - 1 : i + 1) * LARGE;   /* pairs out of order */

		if (i == 5)
			fake_fail_writes(&e->disk, EIO, 1);
		int rc = put_rec(e, off, LARGE, 1, NULL);

		apply(e, off, LARGE, 1);   /* what the client will resend if it was not acknowledged */
		if (rc == 0 && bcache_commit(e->f, off, LARGE, BCACHE_SYNC_FILE) == 0)
			memset(acked + off, 1, LARGE);
		else
			failed++;
	}
	assert_true(failed >= 1);
	assert_true(stats(e).direct_middles >= n - 1);
	check_acked_durable(e, acked, (uint64_t)n * LARGE);   /* the crash: the last sync's */
	fake_fail_writes(&e->disk, 0, 0);
	for (unsigned i = 0; i < n; i++)     /* the client resends what was not acknowledged */
		if (!acked[(uint64_t)i * LARGE])
			put_ok(e, (uint64_t)i * LARGE, LARGE, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	free(acked);
	env_free(e);
}

/* bcache_write_now of writer id's bytes [off, off + len), placed aligned in memory. */
static int put_now(struct env *e, uint64_t off, size_t len, unsigned id)
{
	unsigned char *buf = aligned_alloc(BS, (len + BS - 1) / BS * BS);
	int rc;

	assert_non_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = pat(id, off + i);
	rc = bcache_write_now(e->f, off, buf, len);
	free(buf);
	return rc;
}

/* A stable WRITE of 12 whole blocks (a 49152-byte record) over blocks an UNSTABLE WRITE left
 * dirty in the cache: on disk when it returns, with no copy held; the older cached bytes never
 * reach the disk after it, not through its COMMIT nor through write-behind. */
static void test_stable_whole_blocks_go_now(void **state)
{
	unsigned char *acked = malloc(12 * BS);
	struct env *e = behind_env(CACHE);

	(void)state;
	assert_non_null(acked);
	memset(acked, 1, 12 * BS);
	for (unsigned b = 0; b < 4; b++)
		put_halves(e, (uint64_t)b * BS, 1);
	put_halves(e, 20 * BS, 1);                       /* past it: stays behind */
	assert_int_equal(stats(e).dirty, 5);
	unsigned before = e->disk.writes;
	assert_int_equal(put_now(e, 0, 12 * BS, 2), 0);
	apply(e, 0, 12 * BS, 2);
	assert_true(e->disk.writes > before);            /* the record, at once */
	struct bcache_stats s = stats(e);
	assert_int_equal(s.dirty, 1);                    /* the older 4 superseded */
	assert_int_equal(s.copied, 0);
	assert_int_equal(bcache_commit(e->f, 0, 12 * BS, BCACHE_SYNC_FILE), 0);
	check_acked_durable(e, acked, 12 * BS);
	free(acked);
	drain_writeback(e);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	env_free(e);
}

/* Its write fails: the WRITE gets the error, the older cached bytes stay for the COMMIT (the
 * client resends what was not acknowledged), and nothing is lost. */
static void test_stable_whole_blocks_failing(void **state)
{
	struct env *e = behind_env(CACHE);

	(void)state;
	for (unsigned b = 0; b < 4; b++)
		put_halves(e, (uint64_t)b * BS, 1);
	fake_fail_writes(&e->disk, EIO, 1);
	assert_int_equal(put_now(e, 0, 12 * BS, 2), -EIO);
	assert_int_equal(stats(e).dirty, 4);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);                             /* writer 1's bytes, whole */
	assert_int_equal(put_now(e, 0, 12 * BS, 2), 0);  /* the resend */
	apply(e, 0, 12 * BS, 2);
	assert_int_equal(bcache_commit(e->f, 0, 12 * BS, BCACHE_SYNC_FILE), 0);
	check_disk(e, true);
	env_free(e);
}

/* The first large READ of a stretch is not kept, the second is; small READs always are. */
static void test_large_read_kept_the_second_time(void **state)
{
	struct env *e = behind_env(CACHE);

	(void)state;
	assert_true(bcache_read_worth_keeping(e->f, 0, 64 * 1024));
	assert_false(bcache_read_worth_keeping(e->f, 0, MiB));
	assert_false(bcache_read_worth_keeping(e->f, 4 * MiB + 100, MiB));   /* two chunks */
	assert_int_equal(stats(e).read_once, 2);
	assert_true(bcache_read_worth_keeping(e->f, 0, MiB));
	assert_true(bcache_read_worth_keeping(e->f, 5 * MiB, MiB));        /* the second of those */
	assert_false(bcache_read_worth_keeping(e->f, 9 * MiB, MiB / 2));
	assert_int_equal(stats(e).read_once, 3);
	env_free(e);
}

/* A small READ's blocks are kept when it starts the file, continues the last READ or reads a
 * block a READ missed lately; a random reader's first READ of a block is not kept. */
static void test_small_random_read_kept_the_second_time(void **state)
{
	struct env *e = behind_env(CACHE);

	(void)state;
	assert_true(bcache_read_worth_keeping(e->f, 0, BS));                 /* the file's start */
	assert_false(bcache_read_worth_keeping(e->f, 40 * BS, BS));          /* random */
	assert_true(bcache_read_worth_keeping(e->f, 41 * BS, BS));           /* continues it */
	assert_false(bcache_read_worth_keeping(e->f, 900 * BS, 2 * BS));
	assert_false(bcache_read_worth_keeping(e->f, 7 * BS, BS));
	assert_true(bcache_read_worth_keeping(e->f, 900 * BS, BS));          /* read again */
	assert_int_equal(stats(e).read_once, 3);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_large_write_goes_straight),
		cmocka_unit_test(test_smaller_write_stays_behind),
		cmocka_unit_test(test_straight_over_frames),
		cmocka_unit_test(test_straight_write_errors),
		cmocka_unit_test(test_straight_stable_writes_survive_a_crash),
		cmocka_unit_test(test_stable_whole_blocks_go_now),
		cmocka_unit_test(test_stable_whole_blocks_failing),
		cmocka_unit_test(test_large_read_kept_the_second_time),
		cmocka_unit_test(test_small_random_read_kept_the_second_time),
		cmocka_unit_test(test_lone_blocks_go_straight),
		cmocka_unit_test(test_block_stream_stays_behind),
		cmocka_unit_test(test_block_next_to_cached_stays_behind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
