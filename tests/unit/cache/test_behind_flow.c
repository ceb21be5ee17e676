/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cache in BEHIND mode, flow control: the writer ahead held for the one behind (and only
 * it), the file bound, the dirty threshold, young and old dirty blocks, and the bound's
 * backpressure. One binary with test_behind.c, which lists the tests. */

#include "behind_tests.h"

/* Flow control's scene: writer 1 has written every 64 KiB record of chunks 0..4 but record 8 of
 * each, which is writer 2's and late: five chunks open, more than the four a 16 MiB file bound
 * lets a file's writers spread over. */
#define REC (16 * BS)
#define MINUTE_NS (60ull * 1000 * 1000 * 1000)   /* longer than any test: a hold would show */
static struct env *flow_env(uint64_t hold_ns, uint64_t young_ns)
{
	struct env *e = env_new(64 * MiB, 16 * MiB);   /* spread_chunks: 4 */

	bcache_file_set_mode(e->f, BCACHE_BEHIND);
	bcache_set_flow(e->c, hold_ns, young_ns);
	return e;
}

static struct env *spread_env(uint64_t hold_ns, uint64_t young_ns)
{
	struct env *e = flow_env(hold_ns, young_ns);

	for (unsigned k = 0; k < 5; k++)
		for (unsigned r = 0; r < 16; r++)
			if (r != 8)
				put_ok(e, (uint64_t)k * MiB + r * REC, REC, 1);
	assert_int_equal(stats(e).spread_holds, 0);   /* each landed next to the one before */
	return e;
}

struct ahead {
	struct env *e;
	uint64_t off;
	atomic_bool done;
	int rc;
};

static void *ahead_main(void *arg)
{
	struct ahead *a = arg;

	a->rc = put_rec(a->e, a->off, REC, 3, NULL);
	atomic_store(&a->done, true);
	return NULL;
}

/* The writer ahead, whose WRITE begins chunk 6 with nothing next to it, is not answered until
 * the writer behind closes a chunk; that chunk then goes to disk whole, as one write. */
void test_writer_ahead_waits_for_the_one_behind(void **state)
{
	struct env *e = spread_env(MINUTE_NS, MINUTE_NS);
	struct ahead a = { .e = e, .off = 6 * MiB + 8 * REC };
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, ahead_main, &a), 0);
	for (int i = 0; i < 10000 && stats(e).spread_holds == 0; i++)
		usleep(1000);
	assert_int_equal(stats(e).spread_holds, 1);
	usleep(20 * 1000);
	assert_false(atomic_load(&a.done));    /* held: its data is cached, its answer waits */
	unsigned before = e->disk.writes;
	put_ok(e, 8 * REC, REC, 2);            /* the writer behind: chunk 0 is whole */
	pthread_join(t, NULL);
	assert_int_equal(a.rc, 0);
	apply(e, a.off, REC, 3);
	drain_writeback(e);
	assert_int_equal(e->disk.writes, before + 1);
	assert_int_equal(e->disk.log[before].off, 0);
	assert_int_equal(e->disk.log[before].len, MiB);
	for (unsigned k = 1; k < 5; k++)
		put_ok(e, (uint64_t)k * MiB + 8 * REC, REC, 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(stats(e).spread_holds, 1);   /* the writer behind is never held */
	env_free(e);
}

/* A chunk open for longer than young_ns has a hole nobody is filling now: it holds nobody back. */
void test_old_open_chunks_hold_nobody(void **state)
{
	struct env *e = spread_env(MINUTE_NS, 1000 * 1000);

	(void)state;
	usleep(20 * 1000);
	put_ok(e, 6 * MiB + 8 * REC, REC, 3);
	assert_int_equal(stats(e).spread_holds, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* Random writers begin chunks all over the file, none next to another's data: never held. */
void test_random_writers_never_held(void **state)
{
	struct env *e = flow_env(MINUTE_NS, MINUTE_NS);

	(void)state;
	for (unsigned k = 0; k < 8; k++)   /* 8 chunks begun: past the 4 writers may spread over */
		put_ok(e, (uint64_t)((k * 5) % 8) * MiB + (k + 3) * REC, BS, 1);
	assert_int_equal(stats(e).spread_holds, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* At a file's bound its clean blocks go first, wherever they are in its age: a dirty chunk still
 * filling is not cut into short writes while written data could be dropped at no cost. */
void test_file_bound_frees_clean_first(void **state)
{
	struct env *e = env_new(64 * MiB, 512 * BS);

	(void)state;
	bcache_file_set_mode(e->f, BCACHE_BEHIND);
	for (uint64_t off = MiB; off < 2 * MiB - BS; off += BS)
		put_ok(e, off, BS, 1);          /* chunk 1 but its last block: the oldest, dirty */
	for (uint64_t off = 0; off < MiB; off += 16 * BS)
		put_ok(e, off, 16 * BS, 2);     /* chunk 0, whole: written behind, then clean */
	drain_writeback(e);
	unsigned written = e->disk.writes;
	assert_int_equal(written, 1);
	for (uint64_t off = 2 * MiB; off < 3 * MiB - BS; off += BS)
		put_ok(e, off, BS, 3);          /* chunk 2 but its last block: past the bound */
	assert_int_equal(e->disk.writes, written);
	assert_int_equal(stats(e).dirty_bytes, 510 * BS);
	assert_true(stats(e).bytes <= 512 * BS);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	env_free(e);
}

/* Data that will never fill a chunk (sparse blocks) goes once dirty memory passes a quarter of
 * the bound, oldest first. */
void test_dirty_threshold(void **state)
{
	struct env *e = behind_env(1 * MiB);   /* threshold: 64 blocks */

	(void)state;
	for (unsigned i = 0; i < 60; i++)
		put_halves(e, (uint64_t)i * 4 * BS, 1);
	assert_false(bcache_writeback_wanted(e->c));
	for (unsigned i = 60; i < 80; i++)
		put_halves(e, (uint64_t)i * 4 * BS, 1);
	assert_true(bcache_writeback_wanted(e->c));
	assert_int_equal(bcache_writeback(e->c), BS);
	assert_int_equal(e->disk.log[0].off, 0);   /* the oldest */
	drain_writeback(e);
	assert_true(stats(e).dirty_bytes <= MiB / 4);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* Blocks a writer of small records left, one per chunk: none will be completed by a neighbour.
 * (Each is written in halves: a random writer's whole blocks go straight to disk.) */
static void put_scattered(struct env *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		put_halves(e, (uint64_t)i * MiB / 4 + (i % 7) * BS, 1);
}

/* Dirty data nobody completes goes once it is older than young_ns, far below the dirty
 * threshold: the device does not idle until the COMMIT while it waits for nothing. (Here five
 * times young_ns: the halves land next to each other, as a file filled side by side, whose
 * chunks get that long to close.) */
void test_old_dirty_blocks_written_behind(void **state)
{
	struct env *e = flow_env(MINUTE_NS, 20 * 1000 * 1000);

	(void)state;
	put_scattered(e, 24);
	assert_false(bcache_writeback_wanted(e->c));   /* young: nothing is written yet */
	assert_int_equal(bcache_writeback(e->c), 0);
	usleep(120 * 1000);
	assert_true(bcache_writeback_wanted(e->c));
	drain_writeback(e);
	assert_int_equal(e->disk.writes, 24);
	assert_int_equal(stats(e).ready, 0);
	put_scattered(e, 1);                          /* written again: young once more */
	assert_false(bcache_writeback_wanted(e->c));
	assert_int_equal(bcache_writeback(e->c), 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	env_free(e);
}

/* Below the threshold, dirty data younger than young_ns waits for its neighbours or COMMIT. */
void test_young_dirty_blocks_wait(void **state)
{
	struct env *e = flow_env(MINUTE_NS, MINUTE_NS);

	(void)state;
	put_scattered(e, 24);
	for (int i = 0; i < 3; i++) {
		assert_false(bcache_writeback_wanted(e->c));
		usleep(20 * 1000);
	}
	drain_writeback(e);
	assert_int_equal(e->disk.writes, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* Writers faster than the disk: at the bound each WRITE writes back or frees room itself before
 * it returns; the cache never holds more than its bound (plus one WRITE's blocks). */
void test_bound_holds_with_backpressure(void **state)
{
	struct env *e = behind_env(1 * MiB);

	(void)state;
	for (uint64_t off = 0; off + 47008 <= 6 * MiB; off += 47008)
		put_ok(e, off, 47008, 3);
	struct bcache_stats s = stats(e);
	assert_true(s.bytes_peak <= MiB + 47008 + 2 * BS);
	assert_true(s.bp_waits > 0);
	assert_true(s.wb_writes > 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	env_free(e);
}

/* A file past its own bound with only clean blocks to spare frees them: no WRITE waits, nothing is
 * written, and the counter of backpressure waits says so. */
void test_file_bound_frees_clean_without_waiting(void **state)
{
	struct env *e = env_new(8 * MiB, 1 * MiB);

	(void)state;
	bcache_file_set_mode(e->f, BCACHE_BEHIND);
	for (unsigned i = 0; i < 4; i++) {
		put_cached(e, (uint64_t)i * MiB, MiB, i + 1);
		assert_int_equal(bcache_commit(e->f, (uint64_t)i * MiB, MiB, BCACHE_SYNC_DATA), 0);
	}
	struct bcache_stats s = stats(e);
	assert_true(s.bytes_peak <= 2 * MiB);   /* the file's bound and one WRITE */
	assert_int_equal(s.bp_waits, 0);
	uint64_t written = 0;
	for (unsigned i = 0; i < e->disk.writes; i++)
		written += e->disk.log[i].len;
	assert_int_equal(written, 4 * MiB);   /* each byte once, by its COMMIT */
	check_disk(e, true);
	env_free(e);
}
