/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cache in BEHIND mode against a fake disk: WRITEs answered with no device I/O, their
 * blocks adopted without a copy, 1 MiB chunks written back as one vectored write, interleaved
 * writers merged, the writer ahead held for the one behind, the dirty threshold, the bound and
 * its backpressure, READs served from the cache, 2Q's resistance to a scan, and every fault
 * path: a failed write-behind, a failed COMMIT write, a failed sync. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_env.h"

#define MiB (1u << 20)

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
static void test_writer_ahead_waits_for_the_one_behind(void **state)
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
static void test_old_open_chunks_hold_nobody(void **state)
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
static void test_random_writers_never_held(void **state)
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
static void test_file_bound_frees_clean_first(void **state)
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
static void test_dirty_threshold(void **state)
{
	struct env *e = behind_env(1 * MiB);   /* threshold: 64 blocks */

	(void)state;
	for (unsigned i = 0; i < 60; i++)
		put_ok(e, (uint64_t)i * 4 * BS, BS, 1);
	assert_false(bcache_writeback_wanted(e->c));
	for (unsigned i = 60; i < 80; i++)
		put_ok(e, (uint64_t)i * 4 * BS, BS, 1);
	assert_true(bcache_writeback_wanted(e->c));
	assert_int_equal(bcache_writeback(e->c), BS);
	assert_int_equal(e->disk.log[0].off, 0);   /* the oldest */
	drain_writeback(e);
	assert_true(stats(e).dirty_bytes <= MiB / 4);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* Blocks a random writer left, one per chunk: none will be completed by a neighbour. */
static void put_scattered(struct env *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		put_ok(e, (uint64_t)i * MiB / 4 + (i % 7) * BS, BS, 1);
}

/* Dirty data nobody completes goes once it is older than young_ns, far below the dirty
 * threshold: the device does not idle until the COMMIT while it waits for nothing. */
static void test_old_dirty_blocks_written_behind(void **state)
{
	struct env *e = flow_env(MINUTE_NS, 20 * 1000 * 1000);

	(void)state;
	put_scattered(e, 24);
	assert_false(bcache_writeback_wanted(e->c));   /* young: nothing is written yet */
	assert_int_equal(bcache_writeback(e->c), 0);
	usleep(60 * 1000);
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
static void test_young_dirty_blocks_wait(void **state)
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
static void test_bound_holds_with_backpressure(void **state)
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
static void test_file_bound_frees_clean_without_waiting(void **state)
{
	struct env *e = env_new(8 * MiB, 1 * MiB);

	(void)state;
	bcache_file_set_mode(e->f, BCACHE_BEHIND);
	for (unsigned i = 0; i < 4; i++) {
		put_ok(e, (uint64_t)i * MiB, MiB, i + 1);
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

/* At the bound with the disk failing, the WRITEs that fit are answered (their data waits in the
 * cache for the COMMIT that reports the failure); past it, the file's WRITEs get the error at
 * once instead of growing the cache or retrying the failing writes for every WRITE; nothing
 * answered is lost, and once the fault clears the COMMIT writes it all. */
static void test_full_cache_on_failing_disk(void **state)
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
static void test_stable_writes_on_failing_disk(void **state)
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
static void test_writeback_error_reported_by_commit(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, MiB, 1);
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
static void test_commit_enospc_then_retry(void **state)
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
static void test_commit_writes_runs_side_by_side(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	e->disk.spawn = true;
	e->disk.write_delay_us = 2000;
	for (unsigned i = 0; i < 64; i++)     /* every other block, in no order: 64 runs */
		put_ok(e, (uint64_t)(i * 7 % 64) * 2 * BS, BS, 1 + i % 8);
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
static void test_commit_side_by_side_failure(void **state)
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
static void test_sync_error_redirties(void **state)
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

/* READ misses kept clean (bcache_read_keep) serve the next READ; blocks read twice are HOT, and
 * one scan larger than the cache evicts the scan's own blocks, not them. */
static void test_scan_does_not_flush_hot_blocks(void **state)
{
	struct env *e = behind_env(256 * BS);
	unsigned char *blk = aligned_alloc(BS, 8 * BS);

	(void)state;
	assert_non_null(blk);
	for (uint64_t i = 0; i < 2048; i++) {    /* the file exists on disk already */
		memset(blk, (int)(i & 0xff), BS);
		fake_disk_put(&e->disk, i * BS, blk, BS);
	}
	struct bcache_read rd;
	for (int pass = 0; pass < 2; pass++) {   /* blocks 0..7 read twice: hot */
		bcache_read_begin(e->f, &rd, 0, 8 * BS);
		for (unsigned i = 0; i < 8; i++)
			memset(blk + i * BS, (int)i, BS);
		assert_int_equal(bcache_read_overlay(e->f, &rd, blk), 0);
		if (!read_cached(e, 0, 8 * BS, blk))
			bcache_read_keep(e->f, &rd, 0, 8 * BS, blk, NULL);
	}
	assert_true(read_cached(e, 0, 8 * BS, blk));
	for (uint64_t i = 8; i < 2048; i++) {    /* the scan: 2040 blocks through a 256-block cache */
		bcache_read_begin(e->f, &rd, i * BS, BS);
		memset(blk, (int)(i & 0xff), BS);
		assert_int_equal(bcache_read_overlay(e->f, &rd, blk), 0);
		bcache_read_keep(e->f, &rd, i * BS, BS, blk, NULL);
	}
	assert_true(stats(e).bytes <= 256 * BS);
	assert_true(read_cached(e, 0, 8 * BS, blk));
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(blk[i * BS + 17], i);
	assert_int_equal(e->disk.writes, 0);     /* reading never writes */
	free(blk);
	env_free(e);
}

/* A READ never writes, not even to make room: with the cache full of dirty data, the blocks it
 * read are not kept (or go again at once), and the dirty data waits for its own write-behind or
 * COMMIT. */
static void test_read_never_writes(void **state)
{
	struct env *e = behind_env(64 * BS);
	unsigned char *blk = aligned_alloc(BS, 8 * BS);
	struct bcache_read rd;

	(void)state;
	assert_non_null(blk);
	for (unsigned i = 0; i < 64; i++)          /* sparse dirty blocks: nothing forms a chunk */
		put_ok(e, (uint64_t)i * 2 * BS, BS, 1);
	unsigned writes = e->disk.writes;
	memset(blk, 0, 8 * BS);
	bcache_read_begin(e->f, &rd, 1024 * BS, 8 * BS);
	assert_int_equal(bcache_read_overlay(e->f, &rd, blk), 0);
	bcache_read_keep(e->f, &rd, 1024 * BS, 8 * BS, blk, NULL);
	assert_int_equal(e->disk.writes, writes);
	assert_true(stats(e).bytes <= 64 * BS);     /* what it kept went again, not the dirty data */
	assert_int_equal(stats(e).dirty, 64);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	free(blk);
	env_free(e);
}

/* A disk read that raced a write to disk is not kept: it may hold the old bytes. */
static void test_stale_read_not_kept(void **state)
{
	struct env *e = behind_env(64 * MiB);
	unsigned char *blk = aligned_alloc(BS, BS);
	struct bcache_read rd;

	(void)state;
	assert_non_null(blk);
	bcache_read_begin(e->f, &rd, 0, BS);
	memset(blk, 0, BS);                       /* what the disk had: nothing */
	put_ok(e, 0, BS, 4);                      /* a WRITE lands in the cache ... */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);   /* ... and on disk */
	assert_int_equal(bcache_file_evict_clean(e->f), 1);
	assert_int_equal(bcache_read_overlay(e->f, &rd, blk), -EAGAIN);
	bcache_read_keep(e->f, &rd, 0, BS, blk, NULL);
	assert_false(read_cached(e, 0, BS, blk));
	free(blk);
	env_free(e);
}

/* SETATTR size over cached whole blocks: the file's bytes past the cut are gone from the cache
 * and the disk alike. */
/* A truncate inside a block a READ reply still sends changes a copy, not the reply's bytes. */
static void test_truncate_spares_pinned_block(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct iovec iov[4];
	struct bcache_buf *pins[4];
	int npins;
	unsigned char want[300];

	(void)state;
	put_ok(e, 0, 300, 1);
	set_expect_size(e, 300);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);   /* filled, clean */
	memcpy(want, e->expect, sizeof want);
	assert_int_equal(bcache_read_pinned(e->f, 0, 300, iov, 4, pins, &npins), 1);
	assert_int_equal(bcache_truncate(e->f, 100), 0);
	set_expect_size(e, 100);
	assert_memory_equal(iov[0].iov_base, want, 300);
	for (int i = 0; i < npins; i++)
		bcache_buf_put(pins[i]);
	check_cached(e, 0, 100);
	check_disk(e, false);
	env_free(e);
}

static void test_truncate_cached_blocks(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 8 * BS, 1);
	assert_int_equal(bcache_truncate(e->f, 3 * BS + 100), 0);
	set_expect_size(e, 3 * BS + 100);
	assert_int_equal(bcache_file_size(e->f), 3 * BS + 100);
	check_cached(e, 0, 3 * BS + 100);
	put_ok(e, 5 * BS, 10, 2);                 /* a hole: zeros between */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* Blocks kept from a READ's buffer share it with the reply being sent: a WRITE to one of them
 * copies the block first, so the reply's bytes never change under it; the buffer goes when the
 * reply and the cache are both done with it. */
static void test_kept_read_buffer_is_never_written(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct rec *r = calloc(1, sizeof(*r));
	atomic_int released = 0;
	struct bcache_read rd;

	(void)state;
	assert_non_null(r);
	r->mem = aligned_alloc(BS, 4 * BS);
	assert_non_null(r->mem);
	bcache_buf_init(&r->b, rec_release, 0);
	r->released = &released;
	for (unsigned i = 0; i < 4 * BS; i++)
		r->mem[i] = (unsigned char)(i % 7);
	fake_disk_put(&e->disk, 0, r->mem, 4 * BS);
	memcpy(e->expect, r->mem, 4 * BS);
	e->expect_size = 4 * BS;
	bcache_read_begin(e->f, &rd, 0, 4 * BS);
	assert_int_equal(bcache_read_overlay(e->f, &rd, r->mem), 0);
	bcache_read_keep(e->f, &rd, 0, 4 * BS, r->mem, &r->b);
	assert_int_equal(stats(e).read_cached, 4);
	put_ok(e, BS + 100, 50, 5);               /* into a kept block */
	for (unsigned i = 0; i < 4 * BS; i++)     /* the "reply" still holds the disk's bytes */
		assert_int_equal(r->mem[i], (unsigned char)(i % 7));
	check_cached(e, 0, 4 * BS);
	bcache_buf_put(&r->b);                    /* the reply was sent */
	assert_int_equal(atomic_load(&released), 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	bcache_file_evict_clean(e->f);
	assert_int_equal(atomic_load(&released), 1);
	env_free(e);
}

/* A READ answered without a copy: the iovecs hold the cached bytes, and they stay as they were
 * while pinned, whatever WRITEs, COMMITs and evictions do meanwhile. */
static void test_pinned_read_is_stable(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct iovec iov[16];
	struct bcache_buf *pins[16];
	int npins;
	unsigned char want[6 * BS], got[6 * BS];

	(void)state;
	put_ok(e, 0, 4 * BS, 1);                    /* adopted from a record */
	put_ok(e, 4 * BS + 10, 2 * BS - 10, 2);     /* a partial block, then a whole one */
	put_ok(e, 4 * BS, 10, 3);                   /* the partial one completed: own image */
	memcpy(want, e->expect, 6 * BS);
	int n = bcache_read_pinned(e->f, 100, 6 * BS - 100, iov, 16, pins, &npins);
	assert_true(n > 0 && n <= 3);               /* adjacent blocks merged */
	put_ok(e, BS + 5, 100, 4);                  /* into pinned blocks: copied first */
	put_ok(e, 2 * BS, BS, 5);                   /* a pinned block replaced whole */
	put_ok(e, 4 * BS + 1, 1, 6);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	bcache_file_evict_clean(e->f);
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		memcpy(got + at, iov[i].iov_base, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	assert_int_equal(at, 6 * BS - 100);
	assert_memory_equal(got, want + 100, at);
	for (int i = 0; i < npins; i++)
		bcache_buf_put(pins[i]);
	check_disk(e, true);
	assert_int_equal(bcache_read_pinned(e->f, 0, BS, iov, 16, pins, &npins), 0);   /* evicted */
	env_free(e);
}

struct stable {
	struct env *e;
	unsigned i;
	pthread_barrier_t *go;
	int rc;
};

/* A stable WRITE as the server makes one: the bytes into the cache, then its range durable. */
static void *stable_main(void *arg)
{
	struct stable *s = arg;

	s->rc = put_rec(s->e, (uint64_t)s->i * 16 * BS, 16 * BS, s->i + 1, NULL);
	pthread_barrier_wait(s->go);   /* all eight in the cache: they arrived together */
	if (s->rc == 0)
		s->rc = bcache_commit(s->e->f, (uint64_t)s->i * 16 * BS, 16 * BS, BCACHE_SYNC_DATA);
	return NULL;
}

/* Stable WRITEs of one file that arrive together share vectored writes and syncs: the first to
 * make its range durable writes its neighbours' blocks along in one run, and the others ride on
 * the next round; eight of them cost fewer than eight writes and syncs, and each is durable when
 * answered. */
static void test_stable_writes_share(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct stable s[8];
	pthread_t t[8];
	pthread_barrier_t go;

	(void)state;
	e->disk.sync_delay_ms = 30;
	pthread_barrier_init(&go, NULL, 8);
	for (unsigned i = 0; i < 8; i++) {
		s[i] = (struct stable){ .e = e, .i = i, .go = &go };
		apply(e, (uint64_t)i * 16 * BS, 16 * BS, i + 1);
		assert_int_equal(pthread_create(&t[i], NULL, stable_main, &s[i]), 0);
	}
	for (unsigned i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(s[i].rc, 0);
	}
	pthread_barrier_destroy(&go);
	check_disk(e, true);
	assert_true(e->disk.syncs < 8);
	assert_true(e->disk.writes < 8);
	env_free(e);
}

struct round;

struct late {
	struct round *r;
	unsigned i;
	pthread_t t;
	int rc;
};

struct round {
	struct env *e;
	struct late late[7];
	atomic_uint arrived;
	unsigned writes_meanwhile;
	bool hooked;
};

static uint64_t late_off(unsigned i)
{
	return (uint64_t)i * 32 * BS;   /* apart: no run joins two of them */
}

static void *late_main(void *arg)
{
	struct late *l = arg;
	struct env *e = l->r->e;

	l->rc = put_rec(e, late_off(l->i), 16 * BS, l->i + 1, NULL);
	atomic_fetch_add(&l->r->arrived, 1);
	if (l->rc == 0)
		l->rc = bcache_commit(e->f, late_off(l->i), 16 * BS, BCACHE_SYNC_FILE);
	return NULL;
}

/* Inside the first sync: seven more stable WRITEs come, and get as far as they can. */
static void round_hook(struct fake_disk *d, void *arg)
{
	struct round *r = arg;

	if (r->hooked)
		return;
	r->hooked = true;
	pthread_mutex_lock(&d->lock);
	unsigned before = d->writes;
	pthread_mutex_unlock(&d->lock);
	for (unsigned k = 0; k < 7; k++) {
		r->late[k] = (struct late){ .r = r, .i = k + 1 };
		apply(r->e, late_off(k + 1), 16 * BS, k + 2);
		assert_int_equal(pthread_create(&r->late[k].t, NULL, late_main, &r->late[k]), 0);
	}
	while (atomic_load(&r->arrived) < 7)
		usleep(1000);
	usleep(100 * 1000);   /* time to write, if they were going to */
	pthread_mutex_lock(&d->lock);
	r->writes_meanwhile = d->writes - before;
	pthread_mutex_unlock(&d->lock);
}

/* Group commit in rounds: stable WRITEs that come while a sync runs write nothing yet; the next
 * round writes all their ranges and syncs once for them, and each is durable when answered. */
static void test_stable_writes_wait_for_round(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct round r = { .e = e };

	(void)state;
	e->disk.sync_hook = round_hook;
	e->disk.sync_hook_arg = &r;
	apply(e, 0, 16 * BS, 1);
	assert_int_equal(put_rec(e, 0, 16 * BS, 1, NULL), 0);
	assert_int_equal(bcache_commit(e->f, 0, 16 * BS, BCACHE_SYNC_FILE), 0);
	for (unsigned k = 0; k < 7; k++) {
		pthread_join(r.late[k].t, NULL);
		assert_int_equal(r.late[k].rc, 0);
	}
	assert_int_equal(r.writes_meanwhile, 0);
	assert_true(e->disk.syncs <= 3);   /* (2 unless a thread was late to queue) */
	check_disk(e, true);
	env_free(e);
}

struct overwrite {
	struct env *e;
	pthread_t t;
	bool started;
};

static void *overwrite_main(void *arg)
{
	struct overwrite *o = arg;

	assert_int_equal(put_rec(o->e, 0, 2 * BS, 9, NULL), 0);
	return NULL;
}

/* Inside the write-behind's device write, another thread overwrites blocks on their way. */
static void overwrite_hook(struct fake_disk *d, uint64_t off, uint64_t len, void *arg)
{
	struct overwrite *o = arg;

	(void)d, (void)off, (void)len;
	/* it waits for this write: the blocks are busy */
	hook_thread_once(&o->started, &o->t, overwrite_main, o, 50);
}

/* A WRITE to blocks being written back waits for that write and then wins: newest bytes on disk. */
static void test_overwrite_during_writeback(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct overwrite o = { .e = e };

	(void)state;
	put_ok(e, 0, MiB, 1);
	e->disk.write_hook = overwrite_hook;
	e->disk.hook_arg = &o;
	assert_int_equal(bcache_writeback(e->c), MiB);
	assert_int_equal(pthread_join(o.t, NULL), 0);
	e->disk.write_hook = NULL;
	apply(e, 0, 2 * BS, 9);
	check_cached(e, 0, MiB);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A BEHIND handle and a THROUGH handle of one inode stay coherent: a THROUGH WRITE's middle
 * supersedes cached blocks; the cached ones that come after it win. */
/* A READ of a cached export read the disk, then a direct export's WRITE of the same file wrote
 * its middle there: what the READ read is stale and must not stay in the cache. */
static void test_read_not_kept_across_through_middle(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct bcache_file *t;
	unsigned char *blk = aligned_alloc(BS, BS);
	struct bcache_read rd;

	(void)state;
	assert_non_null(blk);
	assert_int_equal(bcache_file_open(e->c, 1, 1, BS, &e->disk, &t), 0);
	bcache_read_begin(e->f, &rd, 0, BS);
	memset(blk, 0, BS);                                      /* what the disk had */
	assert_int_equal(put_raw(e, t, 0, BS, 5, false), 0);     /* THROUGH: on disk now */
	apply(e, 0, BS, 5);
	(void)bcache_read_overlay(e->f, &rd, blk);
	bcache_read_keep(e->f, &rd, 0, BS, blk, NULL);
	assert_false(read_cached(e, 0, BS, blk));
	free(blk);
	assert_int_equal(bcache_file_close(t), 0);
	env_free(e);
}

static void test_through_and_behind_share(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct bcache_file *t;

	(void)state;
	assert_int_equal(bcache_file_open(e->c, 1, 1, BS, &e->disk, &t), 0);
	put_ok(e, 0, 8 * BS, 1);
	assert_int_equal(put_raw(e, t, BS, 4 * BS, 2, false), 0);   /* THROUGH: on disk now */
	apply(e, BS, 4 * BS, 2);
	put_ok(e, 2 * BS, BS, 3);
	unsigned char *buf = malloc(8 * BS);
	assert_non_null(buf);
	assert_int_equal(read_through(e, 0, buf, 8 * BS), 0);
	assert_memory_equal(buf, e->expect, 8 * BS);
	free(buf);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(bcache_file_close(t), 0);
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
