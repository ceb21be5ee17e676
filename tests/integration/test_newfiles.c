/* SPDX-License-Identifier: GPL-2.0-or-later */
/* New files as tar x and cp -r make them through a Linux client: CREATE, one WRITE, COMMIT.
 *   - A small file takes the disk its bytes need while the daemon holds it open, in the default
 *     (cached) mode: no 1 MiB extent size hint, which XFS honours by allocating a whole aligned
 *     megabyte per file until the last close (measured before the fix: 1024 KiB each).
 *   - A file written by interleaved WRITEs still gets the hint (its allocation stays in few
 *     extents, which an overwrite after a cache drop reads back from disk).
 * Run on XFS by on_xfs.sh, the file system that keeps extent size hints; elsewhere skipped. */
#include "checks.h"
#include "rawnfs.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define KIB 1024u
#define XFS_MAGIC 0x58465342
#define FILES 24
#define REC 47008u
#define RECS 48u

static void need_xfs(struct itest *t, enum it_export e)
{
	struct statfs sf;
	if (statfs(t->exports[e], &sf) == 0 && sf.f_type != XFS_MAGIC) {
		print_message("not XFS: no extent size hints here\n");
		skip();
	}
}

static void fill(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 131 + seed * 7 + 1);
}

/* CREATE, one UNSTABLE WRITE of len bytes, COMMIT: a file as tar leaves it. */
static void small_file(struct nfsclient *c, struct fh *dir, const char *name, uint32_t len,
		       unsigned seed)
{
	unsigned char buf[16 * KIB];
	struct fh f;
	WRITE3resok ok = {0};
	char verf[8];
	fill(buf, len, seed);
	NFS_OK(c, nc_create(c, dir, name, 0644, &f));
	NFS_OK(c, nc_write(c, &f, 0, buf, len, UNSTABLE, &ok));
	NFS_OK(c, nc_commit(c, &f, 0, 0, verf));
}

static void test_small_files_take_their_size(void **state)
{
	struct itest *t = *state;
	need_xfs(t, EXP_RW);
	struct fh root, dir;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	it_workdir(c, &root, "small", &dir);
	for (unsigned i = 0; i < FILES; i++) {
		char name[32];
		snprintf(name, sizeof name, "f%u", i);
		/* aligned ones, and ones whose last block is partial (most of tar's) */
		small_file(c, &dir, name, i % 2 ? 16 * KIB : 5000 + i, i);
	}
	/* The daemon still holds every one open: what they take now is what they take. */
	for (unsigned i = 0; i < FILES; i++) {
		char rel[48], path[PATH_MAX];
		struct stat sb;
		snprintf(rel, sizeof rel, "small/f%u", i);
		it_path(t, EXP_RW, rel, path, sizeof path);
		assert_int_equal(stat(path, &sb), 0);
		uint64_t want = ((uint64_t)sb.st_size + 4 * KIB - 1) / (4 * KIB) * (4 * KIB);
		if ((uint64_t)sb.st_blocks * 512 > want)
			fail_msg("%s: %llu bytes take %llu KiB of disk (%llu KiB would do)", rel,
				 (unsigned long long)sb.st_size,
				 (unsigned long long)sb.st_blocks / 2,
				 (unsigned long long)want / KIB);
	}
	nc_close(c);
}

/* Records in the order 32 writers' first WRITEs reach the server: any but the first first. */
static void test_interleaved_file_keeps_hint(void **state)
{
	struct itest *t = *state;
	need_xfs(t, EXP_RW);
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	it_workdir(c, &root, "inter", &dir);
	NFS_OK(c, nc_create(c, &dir, "f", 0644, &f));
	unsigned char *buf = malloc(REC);
	assert_non_null(buf);
	WRITE3resok ok = {0};
	char verf[8];
	for (unsigned k = 0; k < RECS; k++) {
		unsigned r = (k * 7 + 3) % RECS;   /* 7 is prime to 48: every record once */
		fill(buf, REC, r);
		NFS_OK(c, nc_write(c, &f, (uint64_t)r * REC, buf, REC, UNSTABLE, &ok));
	}
	NFS_OK(c, nc_commit(c, &f, 0, 0, verf));
	free(buf);
	char path[PATH_MAX];
	it_path(t, EXP_RW, "inter/f", path, sizeof path);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	struct fsxattr fa;
	assert_int_equal(ioctl(fd, FS_IOC_FSGETXATTR, &fa), 0);
	close(fd);
	if (!(fa.fsx_xflags & FS_XFLAG_EXTSIZE) || fa.fsx_extsize != 1024 * KIB)
		fail_msg("interleaved file: extent size hint %u (flags %#x), want 1 MiB",
			 fa.fsx_extsize, fa.fsx_xflags);
	nc_close(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_files_take_their_size),
		cmocka_unit_test(test_interleaved_file_keeps_hint),
	};
	return IT_MAIN("newfiles", tests);
}
