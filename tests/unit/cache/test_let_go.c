/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bcache_file_let_go, what a small file committed whole does (fs/write.c): its clean blocks go,
 * and with them the WRITE's record they lay in (so it is received into again, warm), but for the
 * block that holds the end of file inside it (a copy of its own, not the record's), which stays:
 * an append completes it without reading it back. Dirty blocks are never let go. */
#include "test_env.h"

/* A 16 KiB file, one WRITE, committed: nothing stays, the record is freed. */
static void test_whole_blocks_go(void **state)
{
	struct env *e = behind_env(64 * MiB);
	atomic_int released = 0;

	(void)state;
	assert_int_equal(put_rec(e, 0, 4 * BS, 1, &released), 0);
	apply(e, 0, 4 * BS, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(atomic_load(&released), 0);   /* kept for READs until now */
	bcache_file_let_go(e->f);
	assert_int_equal(bcache_file_entries(e->f), 0);
	assert_int_equal(atomic_load(&released), 1);
	check_disk(e, true);
	env_free(e);
}

/* A 10000-byte file: its last block stays, the record is freed, and the append that completes
 * the block reads nothing. */
static void test_tail_stays_for_an_append(void **state)
{
	struct env *e = behind_env(64 * MiB);
	atomic_int released = 0;

	(void)state;
	assert_int_equal(put_rec(e, 0, 10000, 1, &released), 0);
	apply(e, 0, 10000, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	bcache_file_let_go(e->f);
	assert_int_equal(bcache_file_entries(e->f), 1);
	assert_int_equal(atomic_load(&released), 1);
	put_ok(e, 10000, 3 * BS - 10000 + 100, 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.reads, 0);
	check_disk(e, true);
	unsigned char buf[3 * BS + 100];
	assert_int_equal(read_through(e, 0, buf, sizeof buf), 0);
	for (uint64_t i = 0; i < sizeof buf; i++)
		assert_int_equal(buf[i], e->expect[i]);
	env_free(e);
}

/* Blocks not yet written (no COMMIT since the WRITE) stay, and the COMMIT after writes them. */
static void test_dirty_blocks_stay(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 4 * BS, 1);
	bcache_file_let_go(e->f);
	assert_int_equal(bcache_file_entries(e->f), 4);
	assert_int_equal(e->disk.writes, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_blocks_go),
		cmocka_unit_test(test_tail_stays_for_an_append),
		cmocka_unit_test(test_dirty_blocks_stay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
