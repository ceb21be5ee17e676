/* SPDX-License-Identifier: GPL-2.0-or-later */
/* New files as tar x and cp -r make them through a Linux client: CREATE, one WRITE, COMMIT.
 *   - A small file takes the disk its bytes need while the daemon holds it open, in the default
 *     (cached) mode: no 1 MiB extent size hint, which XFS honours by allocating a whole aligned
 *     megabyte per file until the last close (measured before the fix: 1024 KiB each). Once
 *     committed, it leaves the cache but for a partial last block, and reads back whole.
 *   - A file written by interleaved WRITEs still gets the hint (its allocation stays in few
 *     extents, which an overwrite after a cache drop reads back from disk).
 *   - CREATE's reply gives the handle LOOKUP gives for the name, attributes GETATTR agrees with,
 *     and the handle does everything a looked-up one does, to the NFS3ERR_STALE after REMOVE, after
 *     which the daemon holds no descriptor of the file (its blocks are free); on an export with
 *     subtree_check (handles made from the name) as well.
 *   - LOOKUP gives the same handle and attributes from the kernel's dentry cache (in place) as
 *     from the disk (through the ring), on both exports.
 * Run on XFS by on_xfs.sh, the file system that keeps extent size hints; elsewhere skipped. */
#include "checks.h"
#include "rawnfs.h"

#include <dirent.h>
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

/* CREATE, one UNSTABLE WRITE of len bytes, COMMIT: a file as tar leaves it. Its handle in *f. */
static void small_file(struct nfsclient *c, struct fh *dir, const char *name, uint32_t len,
		       unsigned seed, struct fh *f)
{
	unsigned char buf[16 * KIB];
	WRITE3resok ok = {0};
	char verf[8];
	fill(buf, len, seed);
	NFS_OK(c, nc_create(c, dir, name, 0644, f));
	NFS_OK(c, nc_write(c, f, 0, buf, len, UNSTABLE, &ok));
	NFS_OK(c, nc_commit(c, f, 0, 0, verf));
}

static uint32_t small_len(unsigned i)
{
	return i % 2 ? 16 * KIB : 5000 + i;   /* aligned, and with a partial last block (most) */
}

static void test_small_files_take_their_size(void **state)
{
	struct itest *t = *state;
	need_xfs(t, EXP_RW);
	struct fh root, dir;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	it_workdir(c, &root, "small", &dir);
	struct fh files[FILES];
	for (unsigned i = 0; i < FILES; i++) {
		char name[32];
		snprintf(name, sizeof name, "f%u", i);
		small_file(c, &dir, name, small_len(i), i, &files[i]);
	}
	/* Committed whole, they leave the cache (their client keeps its own copy) but for each
	 * partial last block, which an append would complete; and read back whole from the disk. */
	uint64_t held = rn_counter_must(t->port, "cache_entries");
	if (held > FILES / 2)
		fail_msg("%llu blocks still cached after %u small files were committed",
			 (unsigned long long)held, FILES);
	for (unsigned i = 0; i < FILES; i++) {
		unsigned char want[16 * KIB], got[16 * KIB];
		uint32_t n;
		int eof;
		fill(want, small_len(i), i);
		NFS_OK(c, nc_read(c, &files[i], 0, sizeof got, got, &n, &eof));
		assert_int_equal(n, small_len(i));
		assert_true(eof);
		assert_memory_equal(got, want, n);
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

/* Does the daemon still hold a descriptor of a removed file whose path ends in tail? Its blocks
 * stay allocated until it lets go. */
static bool holds_deleted(pid_t pid, const char *tail)
{
	char dir[64], want[PATH_MAX];
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	snprintf(want, sizeof want, "%s (deleted)", tail);
	DIR *d = opendir(dir);
	assert_non_null(d);
	bool found = false;
	for (struct dirent *de; !found && (de = readdir(d));) {
		char link[PATH_MAX + 80], target[PATH_MAX];
		snprintf(link, sizeof link, "%s/%s", dir, de->d_name);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		size_t lt = strlen(target), lw = strlen(want);
		found = lt >= lw && strcmp(target + lt - lw, want) == 0;
	}
	closedir(d);
	return found;
}

static void create_matches_lookup(struct itest *t, enum it_export e, const char *dirname)
{
	struct fh root, dir, made, found;
	struct nfsclient *c = it_client(t, e, 0, 0, &root);
	it_workdir(c, &root, dirname, &dir);
	CREATE3args a = {.where = {.dir = fh3(&dir), .name = "new"}};
	a.how.mode = GUARDED;
	a.how.createhow3_u.obj_attributes.mode.set_it = TRUE;
	a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0640;
	CREATE3res r;
	NFS_OK(c, NFS3_STATUS(c, create, CREATE, &a, &r));
	CREATE3resok *ok = &r.CREATE3res_u.resok;
	assert_true(ok->obj.handle_follows);
	assert_true(ok->obj_attributes.attributes_follow);
	fh_copy(&made, &ok->obj.post_op_fh3_u.handle);
	fattr3 said = ok->obj_attributes.post_op_attr_u.attributes, looked, now;
	NFS_OK(c, nc_lookup(c, &dir, "new", &found, &looked));
	assert_true(fh_equal(&made, &found));
	NFS_OK(c, nc_getattr(c, &made, &now));
	assert_int_equal(said.type, NF3REG);
	assert_int_equal(said.mode & 07777, 0640);
	assert_int_equal(said.size, 0);
	assert_int_equal(said.fileid, now.fileid);
	assert_int_equal(said.nlink, now.nlink);
	assert_int_equal(nfstime_cmp(said.mtime, now.mtime), 0);
	assert_int_equal(nfstime_cmp(said.ctime, now.ctime), 0);

	unsigned char buf[6000], back[6000];
	uint32_t got;
	int eof;
	WRITE3resok w = {0};
	char verf[8];
	fill(buf, sizeof buf, 5);
	NFS_OK(c, nc_write(c, &made, 0, buf, sizeof buf, UNSTABLE, &w));
	NFS_OK(c, nc_commit(c, &made, 0, 0, verf));
	NFS_OK(c, nc_read(c, &found, 0, sizeof back, back, &got, &eof));
	assert_int_equal(got, sizeof buf);
	assert_memory_equal(back, buf, sizeof buf);
	NFS_OK(c, nc_remove(c, &dir, "new"));
	assert_int_equal(nc_getattr(c, &made, &now), NFS3ERR_STALE);
	/* and lets the file go (the handle cache closes a removed file's descriptors) */
	char tail[64];
	snprintf(tail, sizeof tail, "/%s/new", dirname);
	for (int i = 0; i < 200 && holds_deleted(t->pid, tail); i++)
		it_sleep_ms(10);
	if (holds_deleted(t->pid, tail))
		fail_msg("%s: removed, and still open in the daemon 2 s later", tail);
	nc_close(c);
}

static void test_create_reply_is_the_files(void **state)
{
	create_matches_lookup(*state, EXP_RW, "made");
}

static void test_create_reply_subtree_check(void **state)
{
	create_matches_lookup(*state, EXP_SUBTREE, "made_sub");
}

/* Evict unused dentries and inodes (root only): the next LOOKUP of a name nobody holds open goes
 * to the file system, not to the dentry cache. false where not allowed. */
static bool drop_dentries(void)
{
	sync();
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	bool ok = fd >= 0 && write(fd, "2", 1) == 1;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* LOOKUP answers from the kernel's dentry cache in place and goes to the ring where the name is
 * not there: both give the same handle and attributes, the ones the disk has, and NOENT for a
 * name that is not. Files made by the test itself, which the daemon never opened. */
static void cold_and_warm_lookups(struct itest *t, enum it_export e, const char *dirname)
{
	struct fh root, dir, cold, warm;
	fattr3 ca, wa;
	char path[512];
	struct nfsclient *c = it_client(t, e, 0, 0, &root);
	it_workdir(c, &root, dirname, &dir);
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "disk%d", i);
		snprintf(path, sizeof path, "%s/%s/%s", t->exports[e], dirname, name);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "abc", 3), 3);
		close(fd);
	}
	if (!drop_dentries())
		print_message("cannot drop the dentry cache: the cold LOOKUPs may be warm\n");
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "disk%d", i);
		snprintf(path, sizeof path, "%s/%s/%s", t->exports[e], dirname, name);
		NFS_OK(c, nc_lookup(c, &dir, name, &cold, &ca));
		NFS_OK(c, nc_lookup(c, &dir, name, &warm, &wa));
		assert_true(fh_equal(&cold, &warm));
		check_fattr_matches_disk(&ca, path);
		check_fattr_matches_disk(&wa, path);
		assert_int_equal(ca.fileid, wa.fileid);
		assert_int_equal(nfstime_cmp(ca.mtime, wa.mtime), 0);
	}
	drop_dentries();
	assert_int_equal(nc_lookup(c, &dir, "absent", &cold, &ca), NFS3ERR_NOENT);
	assert_int_equal(nc_lookup(c, &dir, "absent", &cold, &ca), NFS3ERR_NOENT);
	nc_close(c);
}

static void test_lookup_cold_and_warm(void **state)
{
	cold_and_warm_lookups(*state, EXP_RW, "cold");
}

static void test_lookup_cold_and_warm_subtree_check(void **state)
{
	cold_and_warm_lookups(*state, EXP_SUBTREE, "cold_sub");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_files_take_their_size),
		cmocka_unit_test(test_interleaved_file_keeps_hint),
		cmocka_unit_test(test_create_reply_is_the_files),
		cmocka_unit_test(test_create_reply_subtree_check),
		cmocka_unit_test(test_lookup_cold_and_warm),
		cmocka_unit_test(test_lookup_cold_and_warm_subtree_check),
	};
	return IT_MAIN("newfiles", tests);
}
