/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The boundary cache against a fake disk: every arrival order of the WRITEs sharing a block,
 * COMMIT between two halves, sizes at end of file, eviction, injected errors, truncate, drop,
 * READ overlay, and the orderings that must hold while a middle or an entry write is in flight
 * (those in test_bcache_inflight.c; this file lists every test of the binary). */
#include "bcache_tests.h"

static const int perms3[6][3] = {
	{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
};

struct w {
	uint64_t off;
	size_t len;
};

/* Two WRITEs share block 1, one ending, one starting in it: in either order the second completes
 * the block, which goes to disk once, whole, with no read. */
static void test_two_writers_both_orders(void **state)
{
	const struct w ws[2] = { { 0, BS + 1000 }, { BS + 1000, BS - 1000 } };

	(void)state;
	for (int first = 0; first < 2; first++) {
		struct env *e = env_new(64 * MiB, 0);
		struct bcache_stats s;

		put(e, ws[first].off, ws[first].len, 1 + first);
		put(e, ws[!first].off, ws[!first].len, 1 + !first);
		s = stats(e);
		assert_int_equal(e->disk.reads, 0);
		assert_int_equal(s.completed, 1);
		assert_int_equal(s.entries, 0);
		assert_int_equal(fake_writes_over(&e->disk, BS, BS), 1);
		check_disk(e, false);  /* no COMMIT needed */
		assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
		assert_int_equal(e->disk.reads, 0);
		check_disk(e, true);
		env_free(e);
	}
}

/* Three WRITEs end in, lie inside, and start in block 1: in every order the last one completes
 * it with no read. */
static void test_three_writers_all_orders(void **state)
{
	const struct w ws[3] = {
		{ BS - 500, 1500 }, { BS + 1000, 1000 }, { BS + 2000, BS - 2000 + 300 },
	};

	(void)state;
	for (int p = 0; p < 6; p++) {
		struct env *e = env_new(64 * MiB, 0);
		struct bcache_stats s;

		for (int i = 0; i < 3; i++)
			put(e, ws[perms3[p][i]].off, ws[perms3[p][i]].len, 1 + perms3[p][i]);
		s = stats(e);
		assert_int_equal(e->disk.reads, 0);
		assert_int_equal(fake_writes_over(&e->disk, BS, BS), 1);
		assert_int_equal(s.completed, 1);
		assert_int_equal(s.entries, 2);  /* the outer ends of blocks 0 and 2 */
		/* Block 0 has disk data under its hole now (block 1 extended the file): one read;
		 * block 2's hole is past the end of file: zeros. */
		assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
		s = stats(e);
		assert_int_equal(s.fill_reads, 1);
		assert_int_equal(s.fill_zeros, 1);
		assert_int_equal(s.dirty, 0);
		check_disk(e, true);
		env_free(e);
	}
}

struct size_probe {
	struct env *e;
	pthread_t t;
	bool started;
	int64_t seen;
};

static void *size_main(void *arg)
{
	struct size_probe *p = arg;

	p->seen = bcache_file_size(p->e->f);
	return NULL;
}

/* Inside the write that pads the file to its last block's end: another thread asks the size. */
static void size_hook(struct fake_disk *d, uint64_t off, uint64_t len, void *arg)
{
	struct size_probe *p = arg;

	(void)d, (void)off, (void)len;
	/* it answers in these 50 ms, unless it waits for the padding to go */
	hook_thread_once(&p->started, &p->t, size_main, p, 50);
}

/* Writing the last block whole pads the file to the block's end for a moment; the size asked
 * meanwhile, from another thread (bcache_file_size takes no lock unless the file is padded), is
 * still the data's end. */
static void test_size_never_padded(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct size_probe p = { .e = e };

	(void)state;
	put(e, 0, 100, 1);
	e->disk.write_hook = size_hook;
	e->disk.hook_arg = &p;
	e->disk.hook_after = true;
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_FILE), 0);
	assert_true(p.started);
	assert_int_equal(pthread_join(p.t, NULL), 0);
	assert_int_equal(p.seen, 100);
	e->disk.write_hook = NULL;
	check_disk(e, true);
	env_free(e);
}

/* A prefix, a suffix and a middle of three overlapping WRITEs on block 1, in every order: each
 * byte ends up from the WRITE acknowledged last. */
static void test_three_writes_with_middle_all_orders(void **state)
{
	const struct w ws[3] = { { 1000, 4000 }, { 7000, 2000 }, { 3000, 6500 } };

	(void)state;
	for (int p = 0; p < 6; p++) {
		struct env *e = env_new(64 * MiB, 0);
		unsigned char buf[3 * BS];

		for (int i = 0; i < 3; i++)
			put(e, ws[perms3[p][i]].off, ws[perms3[p][i]].len, 1 + perms3[p][i]);
		assert_int_equal(read_through(e, 0, buf, sizeof(buf)), 0);
		assert_memory_equal(buf, e->expect, sizeof(buf));
		assert_int_equal(bcache_file_size(e->f), 9500);
		assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_FILE), 0);
		assert_int_equal(stats(e).dirty, 0);
		assert_int_equal(e->disk.misaligned, 0);
		check_disk(e, true);
		env_free(e);
	}
}

static void test_overlapping_rewrites(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	unsigned char buf[BS];

	(void)state;
	put(e, BS + 100, 100, 1);
	put(e, BS + 150, 150, 2);
	put(e, BS + 120, 40, 3);
	assert_int_equal(read_through(e, BS, buf, BS), 0);
	assert_memory_equal(buf, e->expect + BS, BS);
	put(e, BS, 130, 4);
	put(e, BS + 300, BS - 300, 5);  /* completes the block */
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(stats(e).entries, 0);
	check_disk(e, false);
	env_free(e);
}

/* A COMMIT of the first half's range arrives before the second half of block 1 (a stable WRITE):
 * the block is zero-filled past the end of file and written, the size stays exact, and the
 * second half completes the kept image: no read. */
static void test_commit_between_halves(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct bcache_stats s;

	(void)state;
	put(e, 0, BS + 1000, 1);
	assert_int_equal(bcache_commit(e->f, 0, BS + 1000, BCACHE_SYNC_DATA), 0);
	s = stats(e);
	assert_int_equal(s.fill_zeros, 1);
	assert_int_equal(s.entries, 1);
	assert_int_equal(s.dirty, 0);
	check_disk(e, true);  /* 5096 bytes, not 8192 */
	put(e, BS + 1000, BS - 1000, 2);
	s = stats(e);
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(s.entries, 0);
	check_disk(e, false);
	env_free(e);
}

/* A COMMIT of the whole file holds nothing afterwards, not even the last block's image; an append
 * into that block then reads the block back once, and the file is right. */
static void test_whole_commit_holds_nothing(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct bcache_stats s;

	(void)state;
	put(e, 0, BS + 1000, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	s = stats(e);
	assert_int_equal(s.entries, 0);
	assert_int_equal(s.dirty, 0);
	check_disk(e, true);
	put(e, BS + 1000, BS - 1000, 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.reads, 1);
	check_disk(e, true);
	env_free(e);
}

/* What a stable WRITE asks before it waits for its neighbour: a range is partial while one of its
 * blocks misses bytes, and no longer once the neighbour wrote them (or a COMMIT filled them). */
static void test_range_partial(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	put(e, 100, BS + 1000, 1);                       /* blocks 0 and 1 both partial */
	assert_true(bcache_range_partial(e->f, 100, BS + 1000));
	assert_true(bcache_range_partial(e->f, 0, 10));  /* block 0 alone */
	assert_false(bcache_range_partial(e->f, 3 * BS, BS));
	put(e, 0, 100, 2);                               /* block 0 complete: written, freed */
	assert_true(bcache_range_partial(e->f, 100, BS + 1000));
	assert_false(bcache_range_partial(e->f, 0, BS));
	put(e, BS + 1100, BS - 1100, 3);                 /* block 1 complete */
	assert_false(bcache_range_partial(e->f, 0, 0));  /* count 0: to end of file */
	assert_int_equal(e->disk.reads, 0);
	put(e, 5 * BS + 7, 10, 4);
	assert_true(bcache_range_partial(e->f, 0, 0));
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_false(bcache_range_partial(e->f, 0, 0));  /* filled: clean, complete */
	check_disk(e, true);
	env_free(e);
}

/* The same over bytes that were on disk before: the COMMIT reads the block once, the rest of
 * the block then arrives in two WRITEs and needs no more reads. */
static void test_commit_between_halves_existing_file(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	unsigned char old[3 * BS];

	(void)state;
	for (size_t i = 0; i < sizeof(old); i++)
		old[i] = pat(9, i);
	fake_disk_put(&e->disk, 0, old, sizeof(old));
	apply(e, 0, sizeof(old), 9);
	put(e, BS + 100, 1000, 1);
	assert_int_equal(bcache_commit(e->f, BS, 1, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.reads, 1);
	check_disk(e, true);
	put(e, BS + 1100, 1000, 2);
	assert_int_equal(stats(e).dirty, 1);  /* filled image, not all from WRITEs: waits */
	put(e, BS, 100, 3);
	put(e, BS + 2100, BS - 2100, 4);
	assert_int_equal(e->disk.reads, 1);
	assert_int_equal(stats(e).entries, 0);
	check_disk(e, false);
	env_free(e);
}

/* A file written 0..47008 and committed is 47008 bytes long on disk, not a block more. */
static void test_exact_size_after_commit(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	const unsigned order[4] = { 3, 1, 0, 2 };

	(void)state;
	put(e, 0, 47008, 1);
	assert_int_equal(bcache_file_size(e->f), 47008);
	assert_int_equal(bcache_file_size_hint(e->f), 47008);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.size, 47008);
	assert_int_equal(e->disk.reads, 0);
	check_disk(e, true);
	env_free(e);

	e = env_new(64 * MiB, 0);
	for (int i = 0; i < 4; i++)
		put(e, order[i] * 47008u, 47008, 1 + order[i]);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.size, 4 * 47008);
	assert_int_equal(e->disk.reads, 0);
	check_disk(e, true);
	env_free(e);
}

/* A bound of two blocks: a clean entry goes first and costs no I/O, then the oldest dirty one is
 * completed and written; the bound holds after every WRITE and no byte is lost. */
static void test_eviction_tiny_bound(void **state)
{
	struct env *e = env_new(2 * BS, 64 * MiB);  /* the cache's bound, not the file's */
	unsigned char old[16 * BS];
	unsigned writes;

	(void)state;
	for (size_t i = 0; i < sizeof(old); i++)
		old[i] = pat(9, i);
	fake_disk_put(&e->disk, 0, old, sizeof(old));
	apply(e, 0, sizeof(old), 9);
	put(e, 10, 10, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_NONE), 0);  /* block 0 clean */
	put(e, BS + 10, 10, 2);
	writes = e->disk.writes;
	put(e, 2 * BS + 10, 10, 3);
	assert_int_equal(stats(e).forced, 0);
	assert_int_equal(e->disk.writes, writes);
	assert_int_equal(stats(e).entries, 2);
	put(e, 3 * BS + 10, 10, 4);  /* now the oldest dirty one, block 1 */
	assert_int_equal(stats(e).forced, 1);
	assert_int_equal(fake_writes_over(&e->disk, BS, BS), 1);
	for (unsigned b = 4; b < 12; b++) {
		put(e, b * BS + 10, 10, b + 1);
		assert_true(stats(e).bytes <= 2 * BS);
	}
	assert_int_equal(stats(e).forced, 9);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_true(stats(e).bytes_peak <= 4 * BS);  /* over by a WRITE's two ends at most */
	env_free(e);
}

/* The per-file bound evicts within the file; another file keeps its entries. */
static void test_per_file_bound(void **state)
{
	struct env *e = env_new(64 * MiB, 2 * BS);
	struct fake_disk d2;
	struct bcache_file *f2;

	(void)state;
	fake_disk_init(&d2, BS);
	assert_int_equal(bcache_file_open(e->c, 1, 2, BS, &d2, &f2), 0);
	assert_int_equal(put_raw(e, f2, 10, 10, 1, false), 0);
	assert_int_equal(put_raw(e, f2, BS + 10, 10, 1, false), 0);
	for (unsigned b = 0; b < 5; b++)
		put(e, b * BS + 100, 10, 2);
	assert_int_equal(stats(e).entries, 4);
	assert_int_equal(stats(e).forced, 3);
	assert_int_equal(d2.writes, 0);
	assert_int_equal(bcache_file_close(f2), 0);  /* last handle: written, then freed */
	assert_int_equal(d2.size, BS + 20);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	fake_disk_fini(&d2);
	env_free(e);
}

/* The write of a completed block fails: the WRITE gets the error, the bytes stay dirty in the
 * cache, and the next COMMIT writes them. */
static void test_write_error_keeps_entry(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct bcache_stats s;

	(void)state;
	put(e, BS, 100, 1);
	fake_fail_writes(&e->disk, EIO, 1);
	assert_int_equal(put_raw(e, NULL, BS + 100, BS - 100, 2, false), -EIO);
	apply(e, BS + 100, BS - 100, 2);
	s = stats(e);
	assert_int_equal(s.dirty, 1);
	assert_int_equal(s.io_errors, 1);
	assert_int_equal(e->disk.size, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	s = stats(e);
	assert_int_equal(s.entries, 0);
	assert_int_equal(e->disk.reads, 0);
	check_disk(e, true);
	env_free(e);
}

/* ENOSPC on a middle: the WRITE fails, its cached end stays; the client's retry succeeds. */
static void test_middle_enospc_then_retry(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	fake_fail_writes(&e->disk, ENOSPC, 1);
	assert_int_equal(put_raw(e, NULL, 0, 2 * BS + 50, 1, false), -ENOSPC);
	assert_int_equal(stats(e).dirty, 1);
	put(e, 0, 2 * BS + 50, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A failed sync leaves the COMMIT's entries dirty: a retried COMMIT writes and syncs them. (Two
 * blocks apart, two writes: a lone write would sync itself, test_sync_write.c.) */
static void test_sync_error_keeps_dirty(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	put(e, BS + 10, 100, 1);
	put(e, 3 * BS + 10, 100, 2);
	fake_fail_syncs(&e->disk, EIO, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -EIO);
	assert_int_equal(e->disk.sync_writes, 0);
	assert_int_equal(stats(e).dirty, 2);
	assert_int_equal(e->disk.durable_size, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(stats(e).dirty, 0);
	check_disk(e, true);
	env_free(e);
}

static void test_commit_write_error_retry(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	put(e, 3 * BS + 10, 100, 1);
	put(e, BS + 10, 100, 2);
	fake_fail_writes(&e->disk, ENOSPC, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -ENOSPC);
	/* the first failure ends the COMMIT's walk (a full disk fails every write, slowly): both
	 * stay dirty, for the retry */
	assert_int_equal(stats(e).dirty, 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(stats(e).dirty, 0);
	check_disk(e, true);
	env_free(e);
}

/* An entry whose write failed is superseded by a later middle over its block: nothing ever
 * writes the older bytes over the middle's. */
static void test_no_stale_overwrite_after_failed_flush(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	unsigned writes;

	(void)state;
	put(e, BS, 100, 1);
	fake_fail_writes(&e->disk, EIO, 1);
	assert_int_equal(put_raw(e, NULL, BS + 100, BS - 100, 2, false), -EIO);
	put(e, 0, 3 * BS, 3);
	assert_int_equal(stats(e).entries, 0);
	writes = fake_writes_over(&e->disk, BS, BS);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(fake_writes_over(&e->disk, BS, BS), writes);
	check_disk(e, true);
	env_free(e);
}

/* A middle over a cached block supersedes it; a piece written after the middle is newer and
 * kept, completed at COMMIT from the middle's bytes on disk. */
static void test_middle_supersedes_cached(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	put(e, BS + 100, 100, 1);
	put(e, 0, 3 * BS, 2);
	assert_int_equal(stats(e).entries, 0);
	put(e, BS + 200, 100, 3);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.reads, 1);
	check_disk(e, true);
	env_free(e);
}

static void test_bounced_middle(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct bcache_stats s;

	(void)state;
	assert_int_equal(put_raw(e, NULL, 100, 5 * BS, 1, true), 0);
	apply(e, 100, 5 * BS, 1);
	put(e, 5 * BS + 100, BS - 100, 2);
	s = stats(e);
	assert_int_equal(s.bounced_middles, 1);
	assert_int_equal(s.direct_middles, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.misaligned, 0);
	check_disk(e, true);
	env_free(e);
}

/* SETATTR size drops the entries past the new size and trims the one it cuts; the disk ends at
 * the new size with the right bytes. */
static void test_truncate_trims(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	put(e, 0, 10000, 1);
	assert_int_equal(put_raw(e, NULL, 20000, 100, 2, false), 0);
	assert_int_equal(bcache_truncate(e->f, 9000), 0);
	set_expect_size(e, 9000);
	assert_int_equal(stats(e).entries, 1);
	assert_int_equal(bcache_file_size_hint(e->f), 9000);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.reads, 0);
	check_disk(e, true);
	env_free(e);
}

/* Truncating through a clean kept image zeroes its tail like the disk's: a WRITE past the new
 * end leaves a hole there that must read as zeros, and the WRITE that later fills the hole
 * completes the block without a read. */
static void test_truncate_clean_image(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	put(e, 0, 5000, 1);
	assert_int_equal(bcache_commit(e->f, 0, 5000, BCACHE_SYNC_DATA), 0);
	assert_int_equal(bcache_truncate(e->f, 4500), 0);
	set_expect_size(e, 4500);
	assert_int_equal(e->disk.size, 4500);
	put(e, 6000, 2 * BS - 6000, 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	put(e, 4500, 1500, 3);
	assert_int_equal(stats(e).entries, 0);
	assert_int_equal(e->disk.reads, 0);
	check_disk(e, false);
	env_free(e);
}

static void test_drop(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	unsigned writes;

	(void)state;
	assert_int_equal(put_raw(e, NULL, BS + 10, 100, 1, false), 0);
	assert_int_equal(put_raw(e, NULL, 3 * BS + 10, 100, 1, false), 0);
	bcache_file_drop(e->f);
	assert_int_equal(stats(e).entries, 0);
	assert_int_equal(stats(e).dirty, 0);
	assert_int_equal(bcache_file_size_hint(e->f), 0);
	writes = e->disk.writes;
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.writes, writes);
	env_free(e);
}

static void test_read_overlay(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	unsigned char old[2 * BS], buf[3 * BS];

	(void)state;
	for (size_t i = 0; i < sizeof(old); i++)
		old[i] = pat(9, i);
	fake_disk_put(&e->disk, 0, old, sizeof(old));
	apply(e, 0, sizeof(old), 9);
	put(e, 100, 50, 1);
	put(e, 2 * BS - 96, 200, 2);
	assert_int_equal(read_through(e, 0, buf, sizeof(buf)), 0);
	assert_memory_equal(buf, e->expect, sizeof(buf));
	assert_int_equal(read_through(e, 120, buf, 2 * BS), 0);  /* unaligned slice */
	assert_memory_equal(buf, e->expect + 120, 2 * BS);
	assert_int_equal(bcache_file_size(e->f), 2 * BS + 104);
	env_free(e);
}

/* An entry leaves the cache between the READ's disk read and its overlay: the READ is told to
 * read again, and then finds the bytes on disk. */
static void test_read_overlay_stale(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	unsigned char buf[BS];
	struct bcache_read rd;

	(void)state;
	put(e, BS, 100, 1);
	bcache_read_begin(e->f, &rd, BS, BS);
	memset(buf, 0, BS);  /* the disk has nothing there yet */
	put(e, BS + 100, BS - 100, 2);
	assert_int_equal(bcache_read_overlay(e->f, &rd, buf), -EAGAIN);
	assert_int_equal(read_through(e, BS, buf, BS), 0);
	assert_memory_equal(buf, e->expect + BS, BS);
	env_free(e);
}

/* Two handles on one inode share its entries; a different block size is refused. */
static void test_two_handles_share(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct bcache_file *f2, *f3;

	(void)state;
	assert_int_equal(bcache_file_open(e->c, 1, 1, BS, &e->disk, &f2), 0);
	assert_int_equal(bcache_file_open(e->c, 1, 1, 2 * BS, &e->disk, &f3), -EINVAL);
	assert_int_equal(bcache_file_open(e->c, 1, 1, 3000, &e->disk, &f3), -EINVAL);
	put(e, 0, BS + 10, 1);
	assert_int_equal(put_raw(e, f2, BS + 10, BS - 10, 2, false), 0);
	apply(e, BS + 10, BS - 10, 2);
	assert_int_equal(stats(e).completed, 1);
	assert_int_equal(e->disk.reads, 0);
	put(e, 2 * BS, 10, 3);
	assert_int_equal(bcache_file_close(f2), 0);  /* not the last: entries stay */
	assert_int_equal(stats(e).entries, 1);
	assert_int_equal(bcache_file_close(e->f), 0);  /* the last: written, freed */
	e->f = NULL;
	assert_int_equal(stats(e).entries, 0);
	check_disk(e, false);
	env_free(e);
}

/* Writers that complete each other's blocks, with the ones ahead leaving more than half the
 * file's bound waiting for the ones behind: crowded (their WRITEs are to be held back). A writer
 * whose partial blocks nobody completes is never held back, however full the cache. */
static void test_crowded_only_when_writers_interleave(void **state)
{
	struct env *sparse = env_new(64 * MiB, 16 * BS), *e = env_new(64 * MiB, 64 * BS);
	unsigned i;

	(void)state;
	for (i = 0; i < 24; i++)                     /* lone partial blocks, the bound reached */
		put(sparse, (uint64_t)(100 + 2 * i) * BS + 10, 100, 1);
	assert_true(stats(sparse).bytes > 8 * BS);
	assert_false(bcache_file_crowded(sparse->f));
	env_free(sparse);
	for (i = 0; i < 48; i += 2)                  /* interleaved: the even records run ahead */
		put(e, (uint64_t)i * 6000, 6000, 2 + i);
	assert_int_equal(stats(e).entries, 47);
	assert_false(bcache_file_crowded(e->f));    /* nobody completes anybody's blocks yet */
	for (i = 1; i < 12; i += 2)                  /* the odd ones catch up a little */
		put(e, (uint64_t)i * 6000, 6000, 2 + i);
	assert_int_equal(stats(e).entries, 35);
	assert_true(bcache_file_crowded(e->f));
	for (i = 13; i < 48; i += 2)                 /* and all the way */
		put(e, (uint64_t)i * 6000, 6000, 2 + i);
	assert_false(bcache_file_crowded(e->f));
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* After a final COMMIT of everything nothing is dirty, and freeing the clean images leaves the
 * cache empty: the analogue of BdiDontcacheDirty back to 0. */
static void test_final_commit_empties(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	put(e, 100, 3 * BS, 1);
	put(e, 5 * BS + 7, 1000, 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(stats(e).dirty, 0);
	assert_int_equal(bcache_file_evict_clean(e->f), 3);
	assert_int_equal(stats(e).entries, 0);
	assert_int_equal(stats(e).bytes, 0);
	check_disk(e, true);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_writers_both_orders),
		cmocka_unit_test(test_three_writers_all_orders),
		cmocka_unit_test(test_three_writes_with_middle_all_orders),
		cmocka_unit_test(test_size_never_padded),
		cmocka_unit_test(test_overlapping_rewrites),
		cmocka_unit_test(test_commit_between_halves),
		cmocka_unit_test(test_whole_commit_holds_nothing),
		cmocka_unit_test(test_commit_between_halves_existing_file),
		cmocka_unit_test(test_exact_size_after_commit),
		cmocka_unit_test(test_eviction_tiny_bound),
		cmocka_unit_test(test_per_file_bound),
		cmocka_unit_test(test_write_error_keeps_entry),
		cmocka_unit_test(test_middle_enospc_then_retry),
		cmocka_unit_test(test_sync_error_keeps_dirty),
		cmocka_unit_test(test_commit_write_error_retry),
		cmocka_unit_test(test_no_stale_overwrite_after_failed_flush),
		cmocka_unit_test(test_middle_supersedes_cached),
		cmocka_unit_test(test_bounced_middle),
		cmocka_unit_test(test_truncate_trims),
		cmocka_unit_test(test_truncate_clean_image),
		cmocka_unit_test(test_drop),
		cmocka_unit_test(test_read_overlay),
		cmocka_unit_test(test_read_overlay_stale),
		cmocka_unit_test(test_two_handles_share),
		cmocka_unit_test(test_crowded_only_when_writers_interleave),
		cmocka_unit_test(test_final_commit_empties),
		cmocka_unit_test(test_piece_during_middle),
		cmocka_unit_test(test_middle_waits_for_entry_write),
		cmocka_unit_test(test_commit_waits_for_middle),
		cmocka_unit_test(test_piece_waits_for_entry_write),
		cmocka_unit_test(test_failed_middle_keeps_entries),
		cmocka_unit_test(test_overlapping_middles_ack_order),
		cmocka_unit_test(test_completion_under_landed_middle),
		cmocka_unit_test(test_range_partial),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
