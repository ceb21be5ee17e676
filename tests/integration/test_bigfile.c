/* Large data: 64 MiB in 1 MiB UNSTABLE WRITEs and a COMMIT, read back byte-identical; and
 * unaligned, out-of-order writes that leave partly written blocks for their neighbours to
 * complete (the boundary-block cache), checked through READ before and after COMMIT and on
 * disk. */
#include "checks.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1024u * 1024u)

/* A byte pattern that depends on the absolute offset, so a misplaced block shows. */
static void fill(uint8_t *p, uint64_t off, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t x = (off + i) * 0x9e3779b97f4a7c15ull + seed;
		p[i] = (uint8_t)(x >> 56 ^ x >> 29);
	}
}

struct ctx {
	struct itest *t;
	struct nfsclient *c;
	struct fh root, f;
	char path[PATH_MAX + 64];
};

static void ctx_open(void **state, const char *name, struct ctx *x)
{
	x->t = *state;
	x->c = it_client(x->t, EXP_RW, 0, 0, &x->root);
	NFS_OK(x->c, nc_create(x->c, &x->root, name, 0644, &x->f));
	it_path(x->t, EXP_RW, name, x->path, sizeof(x->path));
}

/* WRITE [off, off+len) of pattern seed, UNSTABLE, checking the verifier stays the same. */
static void write_range(struct ctx *x, uint64_t off, uint32_t len, unsigned seed, char verf[8],
                        int *have_verf)
{
	uint8_t *buf = malloc(len);
	WRITE3resok ok;

	assert_non_null(buf);
	fill(buf, off, len, seed);
	NFS_OK(x->c, nc_write(x->c, &x->f, off, buf, len, UNSTABLE, &ok));
	assert_int_equal(ok.count, len);
	if (*have_verf)
		assert_memory_equal(ok.verf, verf, 8);
	memcpy(verf, ok.verf, 8);
	*have_verf = 1;
	nc_release(x->c);
	free(buf);
}

/* READ the whole file in chunks of chunk bytes and compare with expect(). */
static void read_back(struct ctx *x, uint64_t size, uint32_t chunk,
                      void (*expect)(uint8_t *, uint64_t, size_t))
{
	uint8_t *got = malloc(chunk), *want = malloc(chunk);
	uint64_t off = 0;

	assert_true(got != NULL && want != NULL);
	while (off < size) {
		uint32_t n;
		int eof;

		NFS_OK(x->c, nc_read(x->c, &x->f, off, chunk, got, &n, &eof));
		nc_release(x->c);
		assert_true(n > 0);
		expect(want, off, n);
		if (memcmp(got, want, n) != 0)
			fail_msg("READ at %llu (+%u) differs from what was written", (unsigned long long)off, n);
		off += n;
		assert_int_equal(eof != 0, off >= size);
	}
	assert_true(off == size);
	free(got);
	free(want);
}

/* The file's bytes on disk, read with pread(2), compared with expect(). */
static void disk_back(const struct ctx *x, uint64_t size, void (*expect)(uint8_t *, uint64_t, size_t))
{
	uint8_t *got = malloc(MIB), *want = malloc(MIB);
	int fd = open(x->path, O_RDONLY);
	struct stat st;

	assert_true(got != NULL && want != NULL && fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true((uint64_t)st.st_size == size);
	for (uint64_t off = 0; off < size; off += MIB) {
		size_t n = size - off < MIB ? (size_t)(size - off) : MIB;
		assert_int_equal(pread(fd, got, n, (off_t)off), (ssize_t)n);
		expect(want, off, n);
		if (memcmp(got, want, n) != 0)
			fail_msg("on disk at %llu (+%zu) differs after COMMIT", (unsigned long long)off, n);
	}
	close(fd);
	free(got);
	free(want);
}

static void expect_seed1(uint8_t *p, uint64_t off, size_t len)
{
	fill(p, off, len, 1);
}

static void commit_all(struct ctx *x, const char verf[8], uint64_t size)
{
	COMMIT3args a = { .file = fh3(&x->f), .offset = 0, .count = 0 };
	COMMIT3res r;

	NFS_OK(x->c, NFS3_STATUS(x->c, commit, COMMIT, &a, &r));
	assert_memory_equal(r.COMMIT3res_u.resok.verf, verf, 8);
	assert_true(post_attr(&r.COMMIT3res_u.resok.file_wcc.after)->size == size);
}

static void test_64mib(void **state)
{
	const uint64_t size = 64ull * MIB;
	struct ctx x;
	char verf[8];
	int have = 0;
	fattr3 a;

	ctx_open(state, "big-64mib", &x);
	for (uint64_t off = 0; off < size; off += MIB)
		write_range(&x, off, MIB, 1, verf, &have);
	NFS_OK(x.c, nc_getattr(x.c, &x.f, &a));
	assert_true(a.size == size);
	commit_all(&x, verf, size);
	read_back(&x, size, MIB, expect_seed1);
	disk_back(&x, size, expect_seed1);
	NFS_OK(x.c, nc_remove(x.c, &x.root, "big-64mib"));
	nc_close(x.c);
}

#define ODD_SIZE (8ull * MIB + 12345)
#define ODD_CHUNK 1000003u          /* prime: every boundary lands mid-block */
#define REWRITE_OFF (3ull * MIB + 777)
#define REWRITE_LEN 70001u

/* seed 1 everywhere, seed 2 over the rewritten range */
static void expect_rewritten(uint8_t *p, uint64_t off, size_t len)
{
	fill(p, off, len, 1);
	for (size_t i = 0; i < len; i++) {
		uint64_t o = off + i;
		if (o >= REWRITE_OFF && o < REWRITE_OFF + REWRITE_LEN)
			fill(p + i, o, 1, 2);
	}
}

static void write_chunk(struct ctx *x, unsigned k, char verf[8], int *have)
{
	uint64_t off = (uint64_t)k * ODD_CHUNK;
	uint64_t len = ODD_SIZE - off < ODD_CHUNK ? ODD_SIZE - off : ODD_CHUNK;

	write_range(x, off, (uint32_t)len, 1, verf, have);
}

/* Unaligned chunks written even ones first, odd ones after (so the blocks they share wait for
 * their second half), then a range overwritten: READ sees the newest bytes before COMMIT and
 * the disk holds them after. */
static void test_unaligned_out_of_order(void **state)
{
	struct ctx x;
	char verf[8];
	int have = 0;
	unsigned chunks = (unsigned)((ODD_SIZE + ODD_CHUNK - 1) / ODD_CHUNK);

	ctx_open(state, "big-unaligned", &x);
	for (unsigned k = 0; k < chunks; k += 2)
		write_chunk(&x, k, verf, &have);
	for (unsigned k = 1; k < chunks; k += 2)
		write_chunk(&x, k, verf, &have);
	write_range(&x, REWRITE_OFF, REWRITE_LEN, 2, verf, &have);
	read_back(&x, ODD_SIZE, 65536 + 17, expect_rewritten);
	commit_all(&x, verf, ODD_SIZE);
	read_back(&x, ODD_SIZE, MIB, expect_rewritten);
	disk_back(&x, ODD_SIZE, expect_rewritten);
	nc_close(x.c);
}

/* Small writes inside one block, the partial tail of a file and a truncate over cached bytes:
 * sizes and contents as a client would see them. */
static void test_small_and_truncate(void **state)
{
	struct ctx x;
	char verf[8];
	int have = 0;
	uint8_t buf[8192], want[8192];
	uint32_t got;
	fattr3 a;

	ctx_open(state, "small-trunc", &x);
	write_range(&x, 100, 10, 1, verf, &have);            /* inside block 0 */
	write_range(&x, 5000, 3000, 1, verf, &have);         /* crosses into block 1 */
	NFS_OK(x.c, nc_getattr(x.c, &x.f, &a));
	assert_true(a.size == 8000);
	NFS_OK(x.c, nc_read(x.c, &x.f, 0, sizeof(buf), buf, &got, NULL));
	assert_int_equal(got, 8000);
	memset(want, 0, sizeof(want));                       /* never written: zeros */
	fill(want + 100, 100, 10, 1);
	fill(want + 5000, 5000, 3000, 1);
	assert_memory_equal(buf, want, 8000);
	{
		SETATTR3args s;
		SETATTR3res r;
		memset(&s, 0, sizeof(s));
		s.object = fh3(&x.f);
		s.new_attributes.size.set_it = 1;
		s.new_attributes.size.set_size3_u.size = 6000;
		NFS_OK(x.c, NFS3_STATUS(x.c, setattr, SETATTR, &s, &r));
		assert_true(post_attr(&r.SETATTR3res_u.resok.obj_wcc.after)->size == 6000);
	}
	NFS_OK(x.c, nc_read(x.c, &x.f, 0, sizeof(buf), buf, &got, NULL));
	assert_int_equal(got, 6000);
	assert_memory_equal(buf, want, 6000);
	commit_all(&x, verf, 6000);
	{
		int fd = open(x.path, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, buf, sizeof(buf), 0), 6000);
		assert_memory_equal(buf, want, 6000);
		close(fd);
	}
	nc_close(x.c);
}

/* A WRITE that only reaches the cache (inside one block, no neighbour yet) still moves the
 * file's mtime and size at once, as a client judging its cache by them expects. */
static void test_cached_write_moves_mtime(void **state)
{
	struct ctx x;
	char verf[8];
	int have = 0;
	fattr3 before, after;

	ctx_open(state, "cached-mtime", &x);
	NFS_OK(x.c, nc_getattr(x.c, &x.f, &before));
	usleep(50 * 1000);                  /* beyond the file system's timestamp granularity */
	write_range(&x, 100, 10, 3, verf, &have);
	NFS_OK(x.c, nc_getattr(x.c, &x.f, &after));
	assert_true(after.size == 110);
	assert_true(nfstime_cmp(after.mtime, before.mtime) > 0);
	assert_true(nfstime_cmp(after.ctime, before.ctime) > 0);
	commit_all(&x, verf, 110);
	nc_close(x.c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_64mib),
		cmocka_unit_test(test_unaligned_out_of_order),
		cmocka_unit_test(test_small_and_truncate),
		cmocka_unit_test(test_cached_write_moves_mtime),
	};
	return IT_MAIN("integration-bigfile", tests);
}
