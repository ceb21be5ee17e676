/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A reading call never changes a file: GETATTR, LOOKUP, ACCESS, READ, READDIR, READDIRPLUS,
 * READLINK, FSSTAT, FSINFO and PATHCONF on files of 0, 5000 and 1 MiB bytes (never opened by the
 * daemon before), on a rw and a ro export, leave their size, mtime and ctime, and their
 * directory's, exactly as they were. Run on the tree's own file system (ext4 here) and on XFS
 * (on_xfs.sh). Before, the first use of an empty file's handle set an extent size hint, which
 * ext4 takes, drops and pays for with a new ctime each time. */
#include "client.h"
#include "rawnfs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { P_GETATTR = 1, P_LOOKUP = 3, P_ACCESS = 4, P_READLINK = 5, P_READ = 6, P_READDIR = 16,
       P_READDIRPLUS = 17, P_FSSTAT = 18, P_FSINFO = 19, P_PATHCONF = 20 };

static uint8_t rbuf[2 << 20];
static uint32_t next_xid = 0x7eadc000;

struct times {
	off_t size;
	struct timespec mtime, ctime;
};

static struct times times_of(const char *path)
{
	struct stat sb;
	assert_int_equal(lstat(path, &sb), 0);
	return (struct times){sb.st_size, sb.st_mtim, sb.st_ctim};
}

static void expect_same(const char *path, const struct times *before)
{
	struct times now = times_of(path);
	if (now.size != before->size || now.mtime.tv_sec != before->mtime.tv_sec ||
	    now.mtime.tv_nsec != before->mtime.tv_nsec || now.ctime.tv_sec != before->ctime.tv_sec ||
	    now.ctime.tv_nsec != before->ctime.tv_nsec)
		fail_msg("%s changed: size %lld -> %lld, mtime %ld.%09ld -> %ld.%09ld, ctime %ld.%09ld "
			 "-> %ld.%09ld", path, (long long)before->size, (long long)now.size,
			 (long)before->mtime.tv_sec, before->mtime.tv_nsec, (long)now.mtime.tv_sec,
			 now.mtime.tv_nsec, (long)before->ctime.tv_sec, before->ctime.tv_nsec,
			 (long)now.ctime.tv_sec, now.ctime.tv_nsec);
}

static void hdr(struct xb *b, uint32_t proc)
{
	struct xb cred = {0};
	xb_auth_sys(&cred, 0, 0);
	b->len = 0;
	xb_call(b, next_xid++, 2, 100003, 3, proc, RAW_AUTH_SYS, &cred);
}

/* Send b; the reply must be accepted with the NFS status want. */
static void expect_status(int fd, const struct xb *b, uint32_t want, const char *what)
{
	struct raw_reply r;
	assert_int_equal(rn_exchange(fd, b, rbuf, sizeof rbuf, &r), 0);
	int st = rn_dec_status(&r);
	if (st != (int)want)
		fail_msg("%s: status %d, want %u", what, st, want);
}

static void fh_call(int fd, uint32_t proc, const struct rn_fh *fh, const char *what)
{
	struct xb b;
	hdr(&b, proc);
	xb_opaque(&b, fh->data, fh->len);
	expect_status(fd, &b, NFS3_OK, what);
}

static void read_all(int fd, const struct rn_fh *fh, uint32_t size)
{
	struct xb b;
	hdr(&b, P_READ);
	xb_opaque(&b, fh->data, fh->len);
	xb_u64(&b, 0);
	xb_u32(&b, size + 4096);
	expect_status(fd, &b, NFS3_OK, "READ");
}

static void list_dir(int fd, const struct rn_fh *dir)
{
	static const uint8_t verf[8];
	struct xb b;
	hdr(&b, P_READDIR);
	xb_opaque(&b, dir->data, dir->len);
	xb_u64(&b, 0);
	xb_bytes(&b, verf, 8);
	xb_u32(&b, 8192);
	expect_status(fd, &b, NFS3_OK, "READDIR");
	hdr(&b, P_READDIRPLUS);
	xb_opaque(&b, dir->data, dir->len);
	xb_u64(&b, 0);
	xb_bytes(&b, verf, 8);
	xb_u32(&b, 8192);
	xb_u32(&b, 65536);
	expect_status(fd, &b, NFS3_OK, "READDIRPLUS");
}

/* Every reading procedure on export e's file NAME (and its directory, the export root). */
static void read_everything(const struct itest *t, enum it_export e, const char *name,
			    uint32_t size, bool symlink)
{
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, fh;
	struct xb b;
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[e], &root), 0);
	assert_int_equal(rn_lookup(fd, &root, name, &fh), 0);
	fh_call(fd, P_GETATTR, &fh, "GETATTR");
	hdr(&b, P_ACCESS);
	xb_opaque(&b, fh.data, fh.len);
	xb_u32(&b, 0x3f);
	expect_status(fd, &b, NFS3_OK, "ACCESS");
	if (symlink)
		fh_call(fd, P_READLINK, &fh, "READLINK");
	else
		read_all(fd, &fh, size);
	list_dir(fd, &root);
	fh_call(fd, P_FSSTAT, &fh, "FSSTAT");
	fh_call(fd, P_FSINFO, &fh, "FSINFO");
	fh_call(fd, P_PATHCONF, &fh, "PATHCONF");
	fh_call(fd, P_GETATTR, &root, "GETATTR of the directory");
	close(fd);
}

static void check_export(const struct itest *t, enum it_export e)
{
	static const struct { const char *name; uint32_t size; } files[] = {
		{"rc-empty", 0}, {"rc-5000", 5000}, {"rc-1m", 1u << 20}};
	char path[PATH_MAX + 64], dir[PATH_MAX + 64];
	char *data = calloc(1, 1u << 20);
	assert_non_null(data);
	memset(data, 'r', 1u << 20);
	it_path(t, e, "", dir, sizeof dir);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		it_write_file(t, e, files[i].name, data, files[i].size, 0644);
		it_path(t, e, files[i].name, path, sizeof path);
	}
	it_path(t, e, "rc-link", path, sizeof path);
	assert_int_equal(symlink("rc-5000", path), 0);
	sync();
	usleep(30 * 1000);       /* a change now would show in the times */
	struct times before[4], dir_before = times_of(dir);
	for (size_t i = 0; i < 3; i++) {
		it_path(t, e, files[i].name, path, sizeof path);
		before[i] = times_of(path);
	}
	it_path(t, e, "rc-link", path, sizeof path);
	before[3] = times_of(path);
	for (int round = 0; round < 2; round++) {   /* a first use, and one from the handle cache */
		for (size_t i = 0; i < 3; i++)
			read_everything(t, e, files[i].name, files[i].size, false);
		read_everything(t, e, "rc-link", 0, true);
	}
	for (size_t i = 0; i < 3; i++) {
		it_path(t, e, files[i].name, path, sizeof path);
		expect_same(path, &before[i]);
	}
	it_path(t, e, "rc-link", path, sizeof path);
	expect_same(path, &before[3]);
	expect_same(dir, &dir_before);
	free(data);
}

static void test_rw_export(void **state)
{
	check_export(*state, EXP_RW);
}

static void test_ro_export(void **state)
{
	check_export(*state, EXP_RO);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rw_export),
		cmocka_unit_test(test_ro_export),
	};
	return IT_MAIN("reading calls change nothing", tests);
}
