/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cache in BEHIND mode against a fake disk: WRITEs answered with no device I/O, their
 * blocks adopted without a copy, 1 MiB chunks written back as one vectored write, interleaved
 * writers merged, the writer ahead held for the one behind, the dirty threshold, the bound and
 * its backpressure, READs served from the cache, 2Q's resistance to a scan, and every fault
 * path: a failed write-behind, a failed COMMIT write, a failed sync.
 *
 * This file holds the records (adopted or copied), their frames, the reservation and the
 * chunks written behind, and lists every test of the binary; flow control is in
 * test_behind_flow.c, the faults in test_behind_faults.c, READs, truncation and STABLE
 * WRITEs in test_behind_reads.c (behind_tests.h declares them). */
#include "behind_tests.h"

/* An UNSTABLE WRITE does no device I/O; a READ finds its bytes; COMMIT writes and syncs them. */
static void test_write_is_cached_not_written(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 100, 47008, 1);
	put_ok(e, 47108, 47008, 2);
	assert_int_equal(e->disk.writes, 0);
	assert_int_equal(e->disk.reads, 0);
	check_cached(e, 100, 2 * 47008);
	assert_int_equal(stats(e).read_hits, 1);
	assert_int_equal(bcache_file_size(e->f), 100 + 2 * 47008);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	/* one run for the lot, the partial first and last blocks filled (zeros: past the end) */
	assert_int_equal(e->disk.writes, 2);    /* the run, then the last block with its size */
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(stats(e).dirty, 0);
	check_cached(e, 100, 2 * 47008);        /* kept, clean */
	env_free(e);
}

/* The middle's blocks are the record's own memory: nothing copied, and the record lives until
 * the last block taken from it leaves the cache. */
static void test_record_adopted_until_evicted(void **state)
{
	struct env *e = behind_env(64 * MiB);
	atomic_int released = 0;

	(void)state;
	assert_int_equal(put_rec(e, 0, 16 * BS, 1, &released), 0);
	apply(e, 0, 16 * BS, 1);
	assert_int_equal(stats(e).adopted, 16);
	assert_int_equal(stats(e).copied, 0);
	assert_int_equal(atomic_load(&released), 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(atomic_load(&released), 0);   /* clean blocks still point into it */
	assert_int_equal(bcache_file_evict_clean(e->f), 16);
	assert_int_equal(atomic_load(&released), 1);
	check_disk(e, true);
	env_free(e);
}

/* A record's whole memory counts against the bound while any block of it is cached, and leaves
 * the count with its last block. */
static void test_record_size_counts(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct rec *r = calloc(1, sizeof(*r));

	(void)state;
	assert_non_null(r);
	r->mem = aligned_alloc(BS, 6 * BS);
	assert_non_null(r->mem);
	bcache_buf_init(&r->b, rec_release, 6 * BS);   /* 4 blocks of payload in 6 of memory */
	for (unsigned i = 0; i < 4 * BS; i++)
		r->mem[i] = pat(1, i);
	assert_int_equal(bcache_write_buf(e->f, 0, r->mem, 4 * BS, &r->b), 0);
	bcache_buf_put(&r->b);
	apply(e, 0, 4 * BS, 1);
	assert_int_equal(stats(e).bytes, 6 * BS);
	put_ok(e, BS, BS, 2);                  /* one block replaced: the record still held */
	assert_int_equal(stats(e).bytes, 6 * BS + BS);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(bcache_file_evict_clean(e->f), 4);
	assert_int_equal(stats(e).bytes, 0);
	env_free(e);
}

/* A record whose whole blocks are under half of its memory (a small WRITE in a large receive
 * buffer) is not kept for them: they are copied, the record goes back at once, and the bound
 * counts the blocks alone. */
static void test_small_record_copied_not_held(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct rec *r = calloc(1, sizeof(*r));
	atomic_int released = 0;

	(void)state;
	assert_non_null(r);
	r->mem = aligned_alloc(BS, 4 * BS);
	assert_non_null(r->mem);
	bcache_buf_init(&r->b, rec_release, 4 * BS);   /* one block of payload in 4 of memory */
	r->released = &released;
	for (unsigned i = 0; i < BS; i++)
		r->mem[i] = pat(1, BS + i);
	assert_int_equal(bcache_write_buf(e->f, BS, r->mem, BS, &r->b), 0);
	bcache_buf_put(&r->b);
	apply(e, BS, BS, 1);
	assert_int_equal(atomic_load(&released), 1);
	struct bcache_stats s = stats(e);
	assert_int_equal(s.adopted, 0);
	assert_int_equal(s.copied, 1);
	assert_int_equal(s.bytes, BS);
	char back[BS];
	assert_int_equal(read_through(e, BS, (unsigned char *)back, BS), 0);
	assert_memory_equal(back, e->expect + BS, BS);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* WRITE len bytes of writer id at off from memory the cache may not keep (it copies). */
static void put_copied(struct env *e, uint64_t off, size_t len, unsigned id)
{
	unsigned char *p = malloc(len);

	assert_non_null(p);
	for (size_t i = 0; i < len; i++)
		p[i] = pat(id, off + i);
	assert_int_equal(bcache_write(e->f, off, p, len), 0);
	free(p);
	apply(e, off, len, id);
}

/* Two writers of rec-byte records filling records [0, n) side by side, ids a and a + 1: the even
 * records, and a little behind, the odd ones. With gap, every gap-th record is left out. */
static void fill_side_by_side(struct env *e, size_t rec, uint64_t n, unsigned a, unsigned gap)
{
	for (uint64_t i = 0; i < n + 8; i += 2) {
		if (i < n && (!gap || i % gap))
			put_copied(e, i * rec, rec, a);
		if (i >= 8 && i - 7 < n && (!gap || (i - 7) % gap))
			put_copied(e, (i - 7) * rec, rec, a + 1);
	}
}

/* Writers of small records filling a file side by side: their blocks are copied (nothing of a
 * record is held), into frames laid out as the file, so that a chunk's run leaves as one piece of
 * memory, not one per block (the block layer cuts a request at 128 of them: two of ~512 KiB on a
 * loop device or NVMe drive for each 1 MiB run). Every byte still reaches the disk. */
static void test_small_records_fill_frames(void **state)
{
	struct env *e = behind_env(64 * MiB);
	const size_t rec = 6000;
	const uint64_t n = 4 * MiB / rec;

	(void)state;
	fill_side_by_side(e, rec, n, 1, 0);
	struct bcache_stats s = stats(e);
	assert_int_equal(s.adopted, 0);
	assert_true(s.frames >= 2 && s.frames <= 3);    /* 4 MiB of file: two frames, a third for
							 * the last record's block */
	drain_writeback(e);
	unsigned runs = 0;
	for (unsigned i = 0; i < e->disk.writes; i++) {
		if (e->disk.log[i].len < MiB)
			continue;
		runs++;
		/* a piece a frame (or the few blocks made before the first opened), not a block */
		assert_true((uint64_t)e->disk.log[i].pieces * 16 <= e->disk.log[i].len / BS);
	}
	assert_true(runs >= 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	char back[2 * 6000];
	assert_int_equal(read_through(e, MiB - 6000, (unsigned char *)back, sizeof back), 0);
	assert_memory_equal(back, e->expect + MiB - 6000, sizeof back);
	assert_true(bcache_file_evict_clean(e->f) > 0);
	assert_int_equal(stats(e).bytes, 0);   /* each frame's charge went with its last block */
	env_free(e);
}

/* A file filled by small records, cut in the middle of a frame and filled again by another
 * writer: the cache and the disk hold the first writer's bytes before the cut and the second's
 * after it, and once the blocks are evicted no frame is still counted. */
static void test_frames_after_truncate(void **state)
{
	struct env *e = behind_env(64 * MiB);
	const size_t rec = 6000;
	const uint64_t n = 2 * MiB / rec, cut = n / 2 * rec;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = pass ? n / 2 : 0; i < n; i++)
			put_copied(e, i * rec, rec, (unsigned)(pass + 1));
		if (pass == 0) {
			assert_true(stats(e).frames >= 1);
			assert_int_equal(bcache_truncate(e->f, cut), 0);
			set_expect_size(e, cut);
		}
	}
	check_cached(e, 0, n * rec);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_true(bcache_file_evict_clean(e->f) > 0);
	assert_int_equal(stats(e).bytes, 0);
	env_free(e);
}

/* Small records at random places open no frame (one would count whole against the bound for a
 * block or two): each block has memory of its own. */
static void test_random_small_records_no_frames(void **state)
{
	struct env *e = behind_env(64 * MiB);
	uint64_t x = 12345;

	(void)state;
	for (int i = 0; i < 64; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		put_copied(e, (x >> 20) % (EXPECT_MAX - 6000), 6000, (unsigned)i + 1);
	}
	assert_true(stats(e).copied > 0);
	assert_int_equal(stats(e).frames, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* The reserve, waited for until its thread has faulted in all it may keep. */
static void wait_reserve(struct env *e, uint64_t bytes)
{
	for (int ms = 0; stats(e).reserve_bytes < bytes; ms++) {
		assert_true(ms < 60000);
		usleep(1000);
	}
}

/* With a reserve, a file filled by small records gets frames whose memory was faulted in ahead
 * of the WRITEs, and the ready memory counts against the bound until then. */
static void test_reserve_prefaults_frames(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	assert_int_equal(bcache_set_reserve(e->c, 8 * MiB, true), 0);
	assert_int_equal(bcache_set_reserve(e->c, 8 * MiB, true), -EBUSY);
	wait_reserve(e, 8 * MiB);
	assert_int_equal(stats(e).reserve_bytes, 8 * MiB);   /* never more than asked */
	assert_int_equal(stats(e).bytes, 0);
	fill_side_by_side(e, 6000, 4 * MiB / 6000, 1, 0);
	struct bcache_stats s = stats(e);
	assert_true(s.frames >= 2);
	assert_true(s.frames_warm >= 2 && s.frames_warm <= s.frames);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A frame whose blocks are all evicted goes back to the reserve, and the next file filled takes
 * it with the old bytes still in it: none of them may reach the disk. The same file, truncated
 * and filled again with records missing, so that the old bytes lie exactly where the new file
 * must read as zeros. */
static void test_reserve_reuses_frames(void **state)
{
	struct env *e = behind_env(64 * MiB);
	const size_t rec = 6000;
	const uint64_t n = 4 * MiB / rec;

	(void)state;
	assert_int_equal(bcache_set_reserve(e->c, 8 * MiB, false), 0);
	fill_side_by_side(e, rec, n, 1, 0);
	uint64_t frames = stats(e).frames;
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_true(bcache_file_evict_clean(e->f) > 0);
	assert_int_equal(stats(e).bytes, 0);
	assert_int_equal(bcache_truncate(e->f, 0), 0);   /* the frame still open is let go */
	set_expect_size(e, 0);
	assert_int_equal(stats(e).reserve_bytes, frames * 2 * MiB);
	fill_side_by_side(e, rec, n, 3, 5);
	assert_true(stats(e).frames_warm >= 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A file filled by small records and left open (its writers done, its blocks written and let
 * go): every frame's memory is back in the reserve, the one still open at the end of the file
 * too, with no truncate or close to let it go. */
static void test_idle_frames_come_back(void **state)
{
	struct env *e = behind_env(64 * MiB);
	const size_t rec = 6000;

	(void)state;
	assert_int_equal(bcache_set_reserve(e->c, 8 * MiB, false), 0);
	fill_side_by_side(e, rec, 3 * MiB / rec, 1, 0);   /* the second frame stays half filled */
	uint64_t frames = stats(e).frames;
	assert_true(frames >= 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_true(bcache_file_evict_clean(e->f) > 0);
	assert_int_equal(stats(e).bytes, 0);
	assert_int_equal(stats(e).reserve_bytes, frames * 2 * MiB);
	check_disk(e, true);
	env_free(e);
}

/* Ready frames give way to data: WRITEs that need the room the reserve holds take it from the
 * reserve, with no data evicted and no WRITE waiting for room. */
static void test_reserve_gives_way(void **state)
{
	struct env *e = behind_env(8 * MiB);

	(void)state;
	assert_int_equal(bcache_set_reserve(e->c, 4 * MiB, true), 0);
	wait_reserve(e, 4 * MiB);
	for (uint64_t off = 0; off + 47008 <= 6 * MiB; off += 47008)
		put_ok(e, off, 47008, 1);
	struct bcache_stats s = stats(e);
	assert_true(s.bytes >= 5 * MiB);
	assert_true(s.reserve_bytes < 4 * MiB);
	assert_true(s.bytes + s.reserve_bytes <= 8 * MiB);
	assert_int_equal(s.forced, 0);
	assert_int_equal(s.bp_waits, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A whole 1 MiB chunk goes to the write-behind queue the moment it is complete and leaves in one
 * vectored write; the chunk still filling is not touched. */
static void test_complete_chunk_written_behind(void **state)
{
	struct env *e = behind_env(64 * MiB);
	uint64_t off = 0;

	(void)state;
	while (off + 47008 <= MiB) {
		put_ok(e, off, 47008, 1);
		off += 47008;
	}
	assert_false(bcache_writeback_wanted(e->c));
	put_ok(e, off, 47008, 1);          /* crosses 1 MiB: chunk 0 complete */
	off += 47008;
	assert_true(bcache_writeback_wanted(e->c));
	assert_int_equal(bcache_writeback(e->c), MiB);
	assert_int_equal(e->disk.writes, 1);
	assert_int_equal(e->disk.vectored, 1);
	assert_int_equal(e->disk.log[0].off, 0);
	assert_int_equal(e->disk.log[0].len, MiB);
	assert_int_equal(bcache_writeback(e->c), 0);   /* chunk 1 is not complete */
	assert_int_equal(stats(e).wb_hist[BCACHE_WB_HIST - 1], 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	env_free(e);
}

/* A file a caller without CAP_SYS_RESOURCE wrote to has every later device write of its cached
 * data (write-behind, COMMIT) made with restricted credentials; other files' with the server's. */
static void test_restricted_file_written_restricted(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	for (uint64_t off = 0; off < 2 * MiB; off += 47008)
		put_ok(e, off, 47008, 1);
	assert_true(bcache_writeback(e->c) > 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_true(e->disk.server_writes > 0);
	assert_int_equal(e->disk.restricted_writes, 0);
	assert_int_equal(e->disk.server_writes, e->disk.writes);

	unsigned before = e->disk.writes;
	bcache_file_restrict(e->f);
	for (uint64_t off = 2 * MiB; off < 4 * MiB; off += 47008)
		put_ok(e, off, 47008, 2);
	assert_true(bcache_writeback(e->c) > 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_true(e->disk.writes > before);
	assert_int_equal(e->disk.restricted_writes, e->disk.writes - before);
	check_disk(e, true);
	env_free(e);
}

/* The seeds' pattern: 8 writers, record i by writer i % 8, arriving out of order. Blocks two
 * records share are completed in memory; the device sees runs of 1 MiB or more, and no read. */
static void test_interleaved_writers_merge(void **state)
{
	struct env *e = behind_env(64 * MiB);
	const size_t rec = 47008;
	const unsigned n = 4 * MiB / rec;

	(void)state;
	for (unsigned w = 0; w < 8; w++)
		for (unsigned i = w; i < n; i += 8)
			put_ok(e, (uint64_t)i * rec, rec, w + 1);
	drain_writeback(e);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(stats(e).fill_reads, 0);
	/* 4 MiB: the three whole chunks as one run, the rest (short of a chunk) at COMMIT, and the
	 * block past the end with its size put back */
	assert_true(e->disk.writes <= 4);
	assert_true(e->disk.log[0].len >= MiB);
	env_free(e);
}

/* An overwrite of a cached file: a block two records share is complete after the first of them
 * (the rest comes from its clean image), yet its chunk waits for the second, so that the chunk
 * goes to disk once, whole, and no block is written twice. */
static void test_overwrite_chunk_waits_for_both_records(void **state)
{
	struct env *e = behind_env(64 * MiB);
	const size_t rec = 6000;
	const uint64_t half = 100 * rec;   /* 585.9 KiB: record 100 starts mid-block */

	(void)state;
	for (uint64_t off = 0; off < MiB + rec; off += rec)
		put_ok(e, off, rec, 1);
	drain_writeback(e);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	unsigned before = e->disk.writes;
	/* all of chunk 0 again, except record 99: the block it shares with record 100 is complete
	 * but only half covered */
	for (uint64_t off = 0; off < MiB + rec; off += rec)
		if (off != half - rec)
			put_ok(e, off, rec, 2);
	drain_writeback(e);
	assert_int_equal(e->disk.writes, before);      /* chunk 0 still waits */
	put_ok(e, half - rec, rec, 2);
	assert_true(bcache_writeback(e->c) >= (ssize_t)MiB);
	assert_int_equal(e->disk.writes, before + 1);
	assert_int_equal(fake_writes_over(&e->disk, half - BS, 2 * BS), 2);   /* once a pass */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(e->disk.reads, 0);
	env_free(e);
}

/* Interleaved writers drift apart: the oldest blocks of a busy file are the partial ones around
 * a slow writer's records, waiting for them. At the file's bound those are passed over (their
 * neighbours would otherwise be read from disk to complete them), and the look moves on to the
 * blocks that can go whole: not one device read. */
static void test_file_bound_passes_over_partial_blocks(void **state)
{
	struct env *e = env_new(64 * MiB, 256 * BS);
	const unsigned partial = 100;   /* more than the eviction's look at a file's oldest */

	(void)state;
	bcache_file_set_mode(e->f, BCACHE_BEHIND);
	/* a file that exists: completing a partial block would read the disk */
	unsigned char *old = malloc(5 * MiB);
	assert_non_null(old);
	for (uint64_t i = 0; i < 5 * MiB; i++)
		old[i] = pat(9, i);
	fake_disk_put(&e->disk, 0, old, 5 * MiB);
	apply(e, 0, 5 * MiB, 9);
	free(old);
	for (unsigned k = 0; k < partial; k++)
		put_ok(e, (uint64_t)k * 2 * BS + 100, 100, 1);
	/* then whole blocks, well past the file's bound: 1 MiB at 4 MiB */
	for (uint64_t off = 4 * MiB; off < 5 * MiB; off += 16 * BS)
		put_ok(e, off, 16 * BS, 2);
	assert_true(stats(e).bytes <= 256 * BS + 16 * BS);
	assert_int_equal(stats(e).fill_reads, 0);
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_is_cached_not_written),
		cmocka_unit_test(test_record_adopted_until_evicted),
		cmocka_unit_test(test_record_size_counts),
		cmocka_unit_test(test_small_record_copied_not_held),
		cmocka_unit_test(test_small_records_fill_frames),
		cmocka_unit_test(test_frames_after_truncate),
		cmocka_unit_test(test_random_small_records_no_frames),
		cmocka_unit_test(test_reserve_prefaults_frames),
		cmocka_unit_test(test_reserve_reuses_frames),
		cmocka_unit_test(test_idle_frames_come_back),
		cmocka_unit_test(test_reserve_gives_way),
		cmocka_unit_test(test_complete_chunk_written_behind),
		cmocka_unit_test(test_restricted_file_written_restricted),
		cmocka_unit_test(test_interleaved_writers_merge),
		cmocka_unit_test(test_overwrite_chunk_waits_for_both_records),
		cmocka_unit_test(test_file_bound_passes_over_partial_blocks),
		cmocka_unit_test(test_file_bound_frees_clean_first),
		cmocka_unit_test(test_writer_ahead_waits_for_the_one_behind),
		cmocka_unit_test(test_old_open_chunks_hold_nobody),
		cmocka_unit_test(test_random_writers_never_held),
		cmocka_unit_test(test_dirty_threshold),
		cmocka_unit_test(test_old_dirty_blocks_written_behind),
		cmocka_unit_test(test_young_dirty_blocks_wait),
		cmocka_unit_test(test_bound_holds_with_backpressure),
		cmocka_unit_test(test_file_bound_frees_clean_without_waiting),
		cmocka_unit_test(test_writeback_error_reported_by_commit),
		cmocka_unit_test(test_full_cache_on_failing_disk),
		cmocka_unit_test(test_stable_writes_on_failing_disk),
		cmocka_unit_test(test_commit_enospc_then_retry),
		cmocka_unit_test(test_commit_writes_runs_side_by_side),
		cmocka_unit_test(test_commit_side_by_side_failure),
		cmocka_unit_test(test_sync_error_redirties),
		cmocka_unit_test(test_sync_behind_as_data_goes),
		cmocka_unit_test(test_sync_behind_off_or_below),
		cmocka_unit_test(test_straight_middles_not_synced_behind),
		cmocka_unit_test(test_no_sync_behind_while_behind),
		cmocka_unit_test(test_commit_makes_sync_behind_moot),
		cmocka_unit_test(test_sync_behind_failure_reported_by_commit),
		cmocka_unit_test(test_close_waits_for_sync_behind),
		cmocka_unit_test(test_scan_does_not_flush_hot_blocks),
		cmocka_unit_test(test_stale_read_not_kept),
		cmocka_unit_test(test_read_never_writes),
		cmocka_unit_test(test_kept_read_buffer_is_never_written),
		cmocka_unit_test(test_pinned_read_is_stable),
		cmocka_unit_test(test_stable_writes_share),
		cmocka_unit_test(test_stable_writes_wait_for_round),
		cmocka_unit_test(test_truncate_cached_blocks),
		cmocka_unit_test(test_truncate_spares_pinned_block),
		cmocka_unit_test(test_overwrite_during_writeback),
		cmocka_unit_test(test_through_and_behind_share),
		cmocka_unit_test(test_read_not_kept_across_through_middle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
