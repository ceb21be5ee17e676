/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cache in BEHIND mode when the disk fails: the bound on a failing disk, a failed
 * write-behind reported by COMMIT, ENOSPC, COMMIT's side-by-side writes failing, a failed sync.
 * One binary with test_behind.c, which lists the tests. */

#include "behind_tests.h"

/* At the bound with the disk failing, the WRITEs that fit are answered (their data waits in the
 * cache for the COMMIT that reports the failure); past it, the file's WRITEs get the error at
 * once instead of growing the cache or retrying the failing writes for every WRITE; nothing
 * answered is lost, and once the fault clears the COMMIT writes it all. */
void test_full_cache_on_failing_disk(void **state)
{
	struct env *e = behind_env(1 * MiB);
	const unsigned tries = 1000000;
	unsigned refused = 0;

	(void)state;
	fake_fail_writes(&e->disk, EIO, tries);
	for (uint64_t off = 0; off + 47008 <= 3 * MiB; off += 47008) {
		int rc = put_rec(e, off, 47008, 4, NULL);

		if (rc == 0)
			apply(e, off, 47008, 4);
		else
			assert_int_equal(rc, -EIO), refused++;
	}
	assert_true(refused > 0);
	assert_int_equal(stats(e).wb_refused, refused);
	assert_true(stats(e).wb_failures > 0);
	assert_true(stats(e).bytes <= 1 * MiB + 47008 + 2 * BS);   /* the bound, and one WRITE */
	assert_true(tries - e->disk.write_fail_n <= 8);             /* no storm of failing writes */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -EIO);
	fake_fail_writes(&e->disk, 0, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	/* reported, the failure is behind it: the refused WRITEs, sent again, are taken */
	for (uint64_t off = 0; off + 47008 <= 3 * MiB; off += 47008)
		put_ok(e, off, 47008, 5);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* FILE_SYNC writers on a failing disk: each stable WRITE's COMMIT fails, and its bytes stay
 * cached for the retry; past the bound the next ones are refused, so the cache does not grow a
 * WRITE at a time (the COMMIT that reported the failure must leave the file stuck). */
void test_stable_writes_on_failing_disk(void **state)
{
	struct env *e = behind_env(1 * MiB);
	unsigned refused = 0;

	(void)state;
	fake_fail_writes(&e->disk, EIO, 1000000);
	for (uint64_t off = 0; off + 47008 <= 3 * MiB; off += 47008) {
		int rc = put_rec(e, off, 47008, 6, NULL);

		if (rc == 0) {
			apply(e, off, 47008, 6);
			assert_int_equal(bcache_commit(e->f, off, 47008, BCACHE_SYNC_DATA), -EIO);
		} else {
			assert_int_equal(rc, -EIO);
			refused++;
		}
	}
	assert_true(refused > 0);
	assert_true(stats(e).bytes <= 1 * MiB + 47008 + 2 * BS);
	fake_fail_writes(&e->disk, 0, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A failed write-behind loses nothing: the blocks stay dirty, the next COMMIT reports the error
 * (the server then changes the write verifier) and writes them again; the next one succeeds. */
void test_writeback_error_reported_by_commit(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_cached(e, 0, MiB, 1);
	fake_fail_writes(&e->disk, EIO, 1);
	assert_int_equal(bcache_writeback(e->c), -EIO);
	assert_int_equal(stats(e).wb_failures, 1);
	assert_int_equal(stats(e).dirty_bytes, MiB);
	check_cached(e, 0, MiB);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -EIO);
	check_disk(e, true);                  /* the COMMIT's own retry did write them */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* ENOSPC on the COMMIT's own write: it fails, the data stays; once room is back the retry
 * succeeds and the file is byte-identical. */
void test_commit_enospc_then_retry(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 10, 3 * BS, 1);
	fake_fail_writes(&e->disk, ENOSPC, 8);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -ENOSPC);
	assert_true(stats(e).dirty > 0);
	assert_int_equal(e->disk.durable_size, 0);
	fake_fail_writes(&e->disk, 0, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* The runs random WRITEs leave go to the device several at a time at COMMIT (ops.spawn's
 * helpers beside the caller), each block once, and the COMMIT answers once all are durable. */
void test_commit_writes_runs_side_by_side(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	e->disk.spawn = true;
	e->disk.write_delay_us = 2000;
	for (unsigned i = 0; i < 64; i++)     /* every other block, in no order: 64 runs */
		put_halves(e, (uint64_t)(i * 7 % 64) * 2 * BS, 1 + i % 8);
	assert_int_equal(e->disk.writes, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.writes, 64);
	assert_int_equal(e->disk.syncs, 1);
	assert_true(e->disk.spawned > 0);
	assert_true(e->disk.max_writing > 1);
	assert_int_equal(stats(e).dirty, 0);
	env_free(e);
}

/* One of the runs written side by side fails: the COMMIT fails with it, what was not written
 * stays dirty in the cache (READs still see it), and the retry makes the file whole. */
void test_commit_side_by_side_failure(void **state)
{
	struct env *e = behind_env(64 * MiB);
	unsigned char *buf = malloc(128 * BS);

	(void)state;
	assert_non_null(buf);
	e->disk.spawn = true;
	e->disk.write_delay_us = 1000;
	for (unsigned i = 0; i < 64; i++)
		put_ok(e, (uint64_t)i * 2 * BS, BS, 2);
	fake_fail_writes(&e->disk, EIO, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -EIO);
	assert_true(stats(e).dirty > 0);
	assert_int_equal(read_through(e, 0, buf, 128 * BS), 0);
	assert_memory_equal(buf, e->expect, 128 * BS);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(stats(e).dirty, 0);
	free(buf);
	env_free(e);
}

/* A failed sync: what the COMMIT wrote is dirty again, and the retry writes it again. */
void test_sync_error_redirties(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 8 * BS, 1);
	fake_fail_syncs(&e->disk, EIO, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -EIO);
	assert_int_equal(stats(e).dirty, 8);
	unsigned writes = e->disk.writes;
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_true(e->disk.writes > writes);
	check_disk(e, true);
	env_free(e);
}
