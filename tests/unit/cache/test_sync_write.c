/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A COMMIT (or stable WRITE) whose file has one O_DIRECT write to make and nothing else awaiting
 * a sync makes that write sync itself (ops.writev_sync: RWF_DSYNC) and no sync after:
 * a small file's COMMIT is one trip to the kernel's workers, not two. The fake disk makes such a
 * write's own bytes durable and nothing else, as a FUA write may, so each test checks the
 * durable image: data written earlier and not yet synced (by write-behind, a COMMIT without
 * sync, a handle closed before) must still be made durable by a sync of its own. */
#include "test_env.h"

/* The COMMIT made no sync and one write that synced itself (or the opposite). */
static void check_lone(struct env *e, unsigned syncs, unsigned sync_writes)
{
	assert_int_equal(e->disk.syncs, syncs);
	assert_int_equal(e->disk.sync_writes, sync_writes);
	assert_int_equal(stats(e).sync_writes, sync_writes);
	check_disk(e, true);
}

/* A new file of whole blocks, one WRITE and its COMMIT: one write, durable by itself. Then a
 * second WRITE and COMMIT: nothing else was written since the first, so again. */
static void test_new_file_one_synced_write(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 4 * BS, 1);
	assert_int_equal(e->disk.writes, 0);   /* held: the COMMIT writes it */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.writes, 1);
	check_lone(e, 0, 1);
	put_ok(e, 4 * BS, 4 * BS, 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_FILE), 0);
	check_lone(e, 0, 2);
	env_free(e);
}

/* A file smaller than a block, or a small file's blocks with its end: one write through the
 * page cache (write_eof), which does not sync itself (measured slower so); one sync after. */
static void test_file_end_synced_apart(void **state)
{
	const size_t sizes[] = { 1000, 2 * BS + 1000 };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		struct env *e = behind_env(64 * MiB);

		put_ok(e, 0, sizes[i], 1);
		assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
		assert_int_equal(e->disk.writes, 1);
		assert_int_equal(e->disk.eof_writes, 1);
		check_lone(e, 1, 0);
		env_free(e);
	}
}

/* A larger file's blocks and its end are two writes: written apart, then one sync for both. */
static void test_two_writes_sync_apart(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_cached(e, 0, 20 * BS + 1000, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.writes, 2);
	check_lone(e, 1, 0);
	env_free(e);
}

/* Blocks written without a sync (a COMMIT's flush with none, as the bound or write-behind write
 * them) and then one more block and its COMMIT: the earlier blocks need the sync as well, so
 * the lone write does not stand in for it. */
static void test_unsynced_writes_before(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 4 * BS, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_NONE), 0);
	assert_int_equal(e->disk.syncs, 0);
	put_ok(e, 8 * BS, 4 * BS, 2);
	assert_int_equal(bcache_commit(e->f, 8 * BS, 4 * BS, BCACHE_SYNC_DATA), 0);
	check_lone(e, 1, 0);
	env_free(e);
}

/* A handle closed before its data was synced (its blocks written as it went), the file opened
 * again: the new handle's first COMMIT cannot know what is unsynced, so it syncs. */
static void test_reopened_file_syncs(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 4 * BS, 1);
	assert_int_equal(bcache_file_close(e->f), 0);   /* writes, no sync */
	assert_int_equal(e->disk.writes, 1);
	assert_int_equal(bcache_file_open(e->c, 1, 1, BS, &e->disk, &e->f), 0);
	bcache_file_set_mode(e->f, BCACHE_BEHIND);
	put_ok(e, 8 * BS, 4 * BS, 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_lone(e, 1, 0);
	env_free(e);
}

/* The lone write's sync fails: the COMMIT fails, its block stays dirty, and the next COMMIT
 * makes it durable. */
static void test_synced_write_fails(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 4 * BS, 1);
	fake_fail_syncs(&e->disk, EIO, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -EIO);
	assert_int_equal(stats(e).dirty, 4);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(stats(e).dirty, 0);
	check_disk(e, true);
	env_free(e);
}

/* A failed sync leaves the file not known to be synced: after it, a lone write does not stand
 * in for the sync of what the failed round wrote. */
static void test_after_failed_sync(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_cached(e, 0, 20 * BS + 1000, 1);   /* two writes: a sync of its own */
	fake_fail_syncs(&e->disk, EIO, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -EIO);
	put_ok(e, 8 * BS, 4 * BS, 2);
	assert_int_equal(bcache_commit(e->f, 8 * BS, 4 * BS, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(stats(e).sync_writes, 0);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_file_one_synced_write),
		cmocka_unit_test(test_file_end_synced_apart),
		cmocka_unit_test(test_two_writes_sync_apart),
		cmocka_unit_test(test_unsynced_writes_before),
		cmocka_unit_test(test_reopened_file_syncs),
		cmocka_unit_test(test_synced_write_fails),
		cmocka_unit_test(test_after_failed_sync),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
