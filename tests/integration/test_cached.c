/* SPDX-License-Identifier: GPL-2.0-or-later */
/* write_mode = cached (the default) as a client sees it: READs of just-written data answered by
 * the cache, byte-exact; the cache's bound holding while much more than it is written; and a
 * daemon killed with dirty data in its cache, after which a client that resends what the
 * changed verifier says was lost ends up with every byte. The harness's cache is 64M. */
#include "checks.h"
#include "rawnfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024u * 1024u)
#define REC 47008u
#define CACHE (64u * MIB)      /* the harness's [cache] size */

static unsigned char byte_at(uint64_t off, unsigned seed)
{
	return (unsigned char)((off * 2654435761u >> 13) + seed);
}

static void fill(unsigned char *buf, uint64_t off, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = byte_at(off + i, seed);
}


/* Misaligned records, as the seeds' writers send them, UNSTABLE. */
static void write_records(struct nfsclient *c, struct fh *f, uint64_t size, unsigned seed,
			  char verf[8])
{
	unsigned char *buf = malloc(REC);
	WRITE3resok ok;

	assert_non_null(buf);
	for (uint64_t off = 0; off < size; off += REC) {
		uint32_t len = (uint32_t)(size - off < REC ? size - off : REC);
		fill(buf, off, len, seed);
		NFS_OK(c, nc_write(c, f, off, buf, len, UNSTABLE, &ok));
		if (off == 0 && verf)
			memcpy(verf, ok.verf, 8);
	}
	free(buf);
}

/* got holds [off, off + n) of the file written with seed. */
static void check_bytes(const char *where, const unsigned char *got, uint64_t off, uint64_t n,
			unsigned seed)
{
	for (uint64_t i = 0; i < n; i++)
		if (got[i] != byte_at(off + i, seed))
			fail_msg("%s, byte %llu differs from what was written", where,
				 (unsigned long long)(off + i));
}

static void check_file(struct nfsclient *c, struct fh *f, uint64_t size, unsigned seed)
{
	unsigned char *got = malloc(MIB);
	uint32_t n;
	int eof;

	assert_non_null(got);
	for (uint64_t off = 0; off < size; off += n) {
		NFS_OK(c, nc_read(c, f, off, MIB, got, &n, &eof));
		assert_true(n > 0);
		check_bytes("read back", got, off, n, seed);
	}
	free(got);
}

/* What was just written is read back from the cache: every READ a hit, no device read. */
static void test_read_back_from_cache(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	const uint64_t size = 8 * MIB + 1234;

	it_workdir(c, &root, "readback", &dir);
	NFS_OK(c, nc_create(c, &dir, "f", 0644, &f));
	write_records(c, &f, size, 1, NULL);
	uint64_t hits = rn_counter_must(t->port, "cache_read_hits"), misses = rn_counter_must(t->port, "cache_read_misses");
	check_file(c, &f, size, 1);                         /* dirty, not yet on disk */
	assert_true(rn_counter_must(t->port, "cache_read_hits") >= hits + size / MIB);
	assert_int_equal(rn_counter_must(t->port, "cache_read_misses"), misses);
	NFS_OK(c, nc_commit(c, &f, 0, 0, NULL));
	assert_int_equal(rn_counter_must(t->port, "cache_dirty"), 0);
	hits = rn_counter_must(t->port, "cache_read_hits");
	check_file(c, &f, size, 1);                         /* clean now, still cached */
	assert_true(rn_counter_must(t->port, "cache_read_hits") >= hits + size / MIB);
	assert_int_equal(rn_counter_must(t->port, "cache_read_misses"), misses);
	/* and on disk: the file as a local reader sees it */
	char path[PATH_MAX];
	it_path(t, EXP_RW, "readback/f", path, sizeof path);
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	unsigned char *buf = malloc(size);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, size, fp), size);
	fclose(fp);
	check_bytes("on disk", buf, 0, size, 1);
	free(buf);
	nc_close(c);
}

/* Four times the cache, UNSTABLE with one COMMIT at the end: the cache never holds more than
 * its bound (plus the WRITEs in flight), write-behind wrote in large runs, and every byte is
 * right. */
static void test_bound_holds(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	const uint64_t size = 4ull * CACHE;

	it_workdir(c, &root, "bound", &dir);
	NFS_OK(c, nc_create(c, &dir, "f", 0644, &f));
	uint64_t big0 = rn_counter_must(t->port, "cache_wb_ge_1m");
	write_records(c, &f, size, 2, NULL);
	NFS_OK(c, nc_commit(c, &f, 0, 0, NULL));
	uint64_t peak = rn_counter_must(t->port, "cache_bytes_peak");
	if (peak > CACHE + 4 * MIB)
		fail_msg("cache peaked at %llu bytes, bound %u", (unsigned long long)peak, CACHE);
	assert_true(rn_counter_must(t->port, "cache_wb_ge_1m") > big0 + size / (4 * MIB));
	assert_int_equal(rn_counter_must(t->port, "cache_dirty"), 0);
	check_file(c, &f, size, 2);
	nc_close(c);
}

/* 3000 4 KiB WRITEs at random blocks of a 64 MiB file, then one COMMIT: the COMMIT writes the
 * scattered dirty blocks in parallel parts (helper fibers) and everything, holes included, reads
 * back right. */
static void test_scattered_writes_one_commit(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	const unsigned nblocks = 64 * MIB / 4096, nwrites = 3000;
	unsigned char *written = calloc(nblocks, 1), *buf = malloc(MIB);
	uint32_t x = 12345;
	WRITE3resok ok;

	assert_non_null(written);
	assert_non_null(buf);
	it_workdir(c, &root, "scattered", &dir);
	NFS_OK(c, nc_create(c, &dir, "f", 0644, &f));
	for (unsigned i = 0; i < nwrites; i++) {
		x = x * 1103515245u + 12345u;
		unsigned b = (x >> 8) % nblocks;
		fill(buf, (uint64_t)b * 4096, 4096, 4);
		NFS_OK(c, nc_write(c, &f, (uint64_t)b * 4096, buf, 4096, UNSTABLE, &ok));
		written[b] = 1;
	}
	unsigned last = nblocks;
	while (last && !written[last - 1])
		last--;
	NFS_OK(c, nc_commit(c, &f, 0, 0, NULL));
	assert_int_equal(rn_counter_must(t->port, "cache_dirty"), 0);
	uint32_t n;
	int eof;
	for (uint64_t off = 0; off < (uint64_t)last * 4096; off += n) {
		NFS_OK(c, nc_read(c, &f, off, MIB, buf, &n, &eof));
		assert_true(n > 0);
		for (uint32_t k = 0; k < n; k += 4096) {
			uint64_t at = off + k;
			if (written[at / 4096])
				check_bytes("scattered block", buf + k, at, 4096, 4);
			else
				for (uint32_t z = 0; z < 4096; z++)
					if (buf[k + z])
						fail_msg("byte %llu of a hole is not zero", (unsigned long long)(at + z));
		}
	}
	free(written);
	free(buf);
	nc_close(c);
}

/* SIGKILL with most of the data dirty in the cache. The client learns from the changed verifier
 * that its UNSTABLE data may be lost, resends it, commits, and the file is byte-identical. */
static void test_sigkill_with_dirty_data(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	const uint64_t size = 24 * MIB + 999;
	char before[8], after[8];

	it_workdir(c, &root, "killed", &dir);
	NFS_OK(c, nc_create(c, &dir, "f", 0644, &f));
	write_records(c, &f, size, 3, before);
	if (rn_counter_must(t->port, "cache_dirty_bytes") == 0)
		fail_msg("nothing dirty in the cache before the kill: the test shows nothing");
	nc_close(c);
	it_kill(t);
	if (it_start(t) != 0)
		fail_msg("daemon did not start after SIGKILL");
	c = it_client(t, EXP_RW, 0, 0, &root);
	NFS_OK(c, nc_commit(c, &f, 0, 0, after));
	if (memcmp(before, after, 8) == 0)
		fail_msg("write verifier unchanged across a crash: the client would not resend");
	write_records(c, &f, size, 3, NULL);                /* what the client does */
	NFS_OK(c, nc_commit(c, &f, 0, 0, NULL));
	check_file(c, &f, size, 3);
	nc_close(c);
}

static void test_served_after(void **state)
{
	it_assert_served(*state);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_back_from_cache),
		cmocka_unit_test(test_bound_holds),
		cmocka_unit_test(test_scattered_writes_one_commit),
		cmocka_unit_test(test_sigkill_with_dirty_data),
		cmocka_unit_test(test_served_after),
	};
	return IT_MAIN("cached", tests);
}
