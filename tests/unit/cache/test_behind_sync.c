/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sync behind: once the cache wrote sync_behind bytes of a file in BEHIND mode that no sync
 * covered, write-behind syncs it; no WRITE does, and middles written straight do not count; a
 * COMMIT's sync makes the queued one moot; a failed one is reported by the next COMMIT and loses
 * nothing; a handle closed meanwhile waits for it. One binary with test_behind.c, which lists
 * the tests. */

#include "behind_tests.h"

#define LARGE (2 * MiB)   /* a WRITE whose middle goes straight to disk */

/* Data written behind, 1 MiB between syncs: write-behind syncs as the data goes, the WRITEs
 * themselves never do, and what it synced is on the durable image before any COMMIT. */
void test_sync_behind_as_data_goes(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	bcache_set_sync_behind(e->c, MiB);
	for (unsigned i = 0; i < 4; i++) {   /* a chunk at a time, each written behind */
		put_cached(e, (uint64_t)i * MiB, MiB, 1 + i);
		assert_int_equal(e->disk.syncs, i);
		drain_writeback(e);
		assert_int_equal(e->disk.syncs, i + 1);
	}
	assert_int_equal(stats(e).syncs_behind, e->disk.syncs);
	assert_int_equal(stats(e).dirty, 0);
	check_disk(e, true);              /* durable, with no COMMIT yet */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* Off (0), or below the amount: only COMMIT syncs. */
void test_sync_behind_off_or_below(void **state)
{
	size_t every[] = { 0, 64 * MiB };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		struct env *e = behind_env(64 * MiB);

		bcache_set_sync_behind(e->c, every[i]);
		put_cached(e, 0, 4 * MiB, 1);
		drain_writeback(e);
		assert_int_equal(e->disk.syncs, 0);
		assert_int_equal(stats(e).syncs_behind, 0);
		assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
		assert_int_equal(e->disk.syncs, 1);
		check_disk(e, true);
		env_free(e);
	}
}

/* No sync behind while write-behind falls behind (dirty data past half the dirty threshold):
 * the device is what limits the writers then, and a flush would only hold its queue still. The
 * same WRITEs in a cache eight times as large leave it keeping up, and get their sync. */
void test_no_sync_behind_while_behind(void **state)
{
	size_t limits[] = { 16 * MiB, 128 * MiB };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		struct env *e = behind_env(limits[i]);

		bcache_set_sync_behind(e->c, MiB);
		for (unsigned b = 0; b < 640; b++)   /* 2.5 MiB of partial blocks: dirty, not ready */
			put_ok(e, 8 * MiB + (uint64_t)b * 2 * BS, BS / 2, 1);
		put_cached(e, 0, MiB, 2);
		drain_writeback(e);
		assert_int_equal(e->disk.syncs, i == 0 ? 0 : 1);
		assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
		check_disk(e, true);
		env_free(e);
	}
}

/* Middles written straight by their WRITEs do not count: a stream of large WRITEs keeps the
 * device busy, and a flush among them would only delay them. */
void test_straight_middles_not_synced_behind(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	bcache_set_sync_behind(e->c, MiB);
	for (unsigned i = 0; i < 4; i++)
		put_ok(e, (uint64_t)i * LARGE, LARGE, 1 + i);
	drain_writeback(e);
	assert_int_equal(stats(e).direct_middles, 4);
	assert_int_equal(e->disk.syncs, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A COMMIT that synced after the sync behind was queued leaves it nothing to do. */
void test_commit_makes_sync_behind_moot(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	bcache_set_sync_behind(e->c, MiB);
	put_cached(e, 0, MiB, 1);
	assert_true(bcache_writeback(e->c) > 0);   /* the chunk: a sync behind is queued */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.syncs, 1);
	drain_writeback(e);
	assert_int_equal(e->disk.syncs, 1);
	assert_int_equal(stats(e).syncs_behind, 0);
	check_disk(e, true);
	env_free(e);
}

/* A failed sync behind: write-behind reports it, the next COMMIT fails with it (the server then
 * changes the write verifier and clients send their data again), and nothing is lost: the
 * COMMIT after that makes the file durable and whole. */
void test_sync_behind_failure_reported_by_commit(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	bcache_set_sync_behind(e->c, MiB);
	put_cached(e, 0, MiB, 1);
	fake_fail_syncs(&e->disk, EIO, 1);
	assert_true(bcache_writeback(e->c) > 0);
	assert_int_equal(bcache_writeback(e->c), -EIO);
	assert_int_equal(stats(e).wb_failures, 1);
	assert_int_equal(e->disk.syncs, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -EIO);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

struct sync_arg {
	struct env *e;
	atomic_bool syncing;
};

static void note_sync(struct fake_disk *d, void *arg)
{
	(void)d;
	atomic_store(&((struct sync_arg *)arg)->syncing, true);
}

static void *writeback_thread(void *arg)
{
	struct sync_arg *a = arg;

	drain_writeback(a->e);
	return NULL;
}

/* The file's last handle closed while write-behind syncs through it: the close waits for the
 * sync to end (the handle's I/O is still in use), then writes what is left. */
void test_close_waits_for_sync_behind(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct sync_arg a = { e, false };
	pthread_t t;

	(void)state;
	bcache_set_sync_behind(e->c, MiB);
	e->disk.sync_delay_ms = 100;
	e->disk.sync_hook = note_sync;
	e->disk.sync_hook_arg = &a;
	put_cached(e, 0, MiB, 1);
	put_ok(e, MiB, 100, 2);           /* a partial block: written by the close */
	assert_int_equal(pthread_create(&t, NULL, writeback_thread, &a), 0);
	while (!atomic_load(&a.syncing))
		usleep(1000);
	assert_int_equal(bcache_file_close(e->f), 0);
	e->f = NULL;
	pthread_mutex_lock(&e->disk.lock);
	assert_int_equal(e->disk.syncs, 1);   /* ended before the close returned */
	pthread_mutex_unlock(&e->disk.lock);
	pthread_join(t, NULL);
	check_disk(e, false);
	env_free(e);
}
