/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Export boundaries with subtree_check (exports(5)): a handle whose file or directory is no
 * longer under the exported directory (moved out on the server, or reached through another path
 * of the same file system) gets NFS3ERR_STALE, while without subtree_check (the default, as
 * knfsd's) such a handle keeps working. Handles of files still inside keep working across a
 * restart and a dentry-cache drop (the kernel reconnects them). A same-device bind mount inside
 * an export is never crossed. */
#include "client.h"
#include "rawnfs.h"

#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint8_t rbuf[65536];
static uint32_t next_xid = 0x5b700000;

static uint32_t getattr_status(const struct itest *t, const struct rn_fh *fh)
{
	int fd = raw_connect(t->port, NULL);
	struct xb b;
	struct raw_reply r;
	uint64_t size;
	assert_true(fd >= 0);
	rn_enc_getattr(&b, next_xid++, fh);
	assert_int_equal(rn_exchange(fd, &b, rbuf, sizeof rbuf, &r), 0);
	close(fd);
	return (uint32_t)rn_dec_getattr(&r, &size);
}

static struct rn_fh make_file(const struct itest *t, enum it_export e, const char *name)
{
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, fh;
	assert_int_equal(rn_mnt(fd, t->exports[e], &root), 0);
	assert_int_equal(rn_create(fd, &root, name, &fh), 0);
	close(fd);
	return fh;
}

static struct rn_fh make_dir(const struct itest *t, enum it_export e, const char *name)
{
	char path[PATH_MAX + 64];
	it_path(t, e, name, path, sizeof path);
	assert_int_equal(mkdir(path, 0755), 0);
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, fh;
	assert_int_equal(rn_mnt(fd, t->exports[e], &root), 0);
	assert_int_equal(rn_lookup(fd, &root, name, &fh), 0);
	close(fd);
	return fh;
}

/* Move export e's NAME to the tree's "outside" directory, beside the exports. */
static void move_out(const struct itest *t, enum it_export e, const char *name)
{
	char from[PATH_MAX + 64], to[PATH_MAX + 64];
	snprintf(to, sizeof to, "%s/outside", t->dir);
	mkdir(to, 0755);
	it_path(t, e, name, from, sizeof from);
	snprintf(to, sizeof to, "%s/outside/%s", t->dir, name);
	assert_int_equal(rename(from, to), 0);
}

static void move_back(const struct itest *t, enum it_export e, const char *name)
{
	char from[PATH_MAX + 64], to[PATH_MAX + 64];
	snprintf(from, sizeof from, "%s/outside/%s", t->dir, name);
	it_path(t, e, name, to, sizeof to);
	assert_int_equal(rename(from, to), 0);
}

static void test_file_moved_out_is_stale(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = make_file(t, EXP_SUBTREE, "leaves");
	assert_int_equal(getattr_status(t, &fh), NFS3_OK);
	move_out(t, EXP_SUBTREE, "leaves");
	assert_int_equal(getattr_status(t, &fh), NFS3ERR_STALE);
	move_back(t, EXP_SUBTREE, "leaves");
	assert_int_equal(getattr_status(t, &fh), NFS3_OK);
}

static void test_dir_moved_out_is_stale(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = make_dir(t, EXP_SUBTREE, "dir-leaves");
	assert_int_equal(getattr_status(t, &fh), NFS3_OK);
	move_out(t, EXP_SUBTREE, "dir-leaves");
	assert_int_equal(getattr_status(t, &fh), NFS3ERR_STALE);
}

/* no_subtree_check, the default: the handle names the inode, wherever it went on the device. */
static void test_without_subtree_check_handle_follows(void **state)
{
	struct itest *t = *state;
	struct rn_fh fh = make_file(t, EXP_RW, "wanders");
	move_out(t, EXP_RW, "wanders");
	assert_int_equal(getattr_status(t, &fh), NFS3_OK);
}

/* A restart empties the daemon's handle cache and a drop the kernel's dentries: the file's
 * handle must still open to its real path, inside, not be taken for one outside. */
static void test_inside_survives_restart_and_cache_drop(void **state)
{
	struct itest *t = *state;
	struct rn_fh file = make_file(t, EXP_SUBTREE, "stays");
	struct rn_fh dir = make_dir(t, EXP_SUBTREE, "dir-stays");
	assert_int_equal(it_stop(t), 0);
	sync();
	FILE *f = fopen("/proc/sys/vm/drop_caches", "w");
	if (f) {
		fputs("2\n", f);
		fclose(f);
	}
	assert_int_equal(it_start(t), 0);
	assert_int_equal(getattr_status(t, &file), NFS3_OK);
	assert_int_equal(getattr_status(t, &dir), NFS3_OK);
}

static struct rn_fh lookup_in(int fd, const struct rn_fh *dir, const char *name)
{
	struct rn_fh fh;
	assert_int_equal(rn_lookup(fd, dir, name, &fh), 0);
	return fh;
}

/* One file, two links in two directories: its two handles (each names its directory) must
 * still be one file to the cache. Half a block through each, then COMMIT: both halves on disk,
 * and no block completed from the disk. */
static void test_two_links_one_cache(void **state)
{
	struct itest *t = *state;
	char a[PATH_MAX + 64], b[PATH_MAX + 64], fa[PATH_MAX + 80], fb[PATH_MAX + 80];
	it_path(t, EXP_SUBTREE, "la", a, sizeof a);
	it_path(t, EXP_SUBTREE, "lb", b, sizeof b);
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	snprintf(fa, sizeof fa, "%s/f", a);
	snprintf(fb, sizeof fb, "%s/f", b);
	it_write_file(t, EXP_SUBTREE, "la/f", "", 0, 0644);
	assert_int_equal(link(fa, fb), 0);
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, da, db, ha, hb;
	assert_int_equal(rn_mnt(fd, t->exports[EXP_SUBTREE], &root), 0);
	da = lookup_in(fd, &root, "la");
	db = lookup_in(fd, &root, "lb");
	ha = lookup_in(fd, &da, "f");
	hb = lookup_in(fd, &db, "f");
	uint64_t fills = rn_counter_must(t->port, "cache_fill_reads");
	static uint8_t half[2][2048];
	memset(half[0], 'A', sizeof half[0]);
	memset(half[1], 'B', sizeof half[1]);
	assert_int_equal(rn_write(fd, &ha, 0, half[0], 2048, RN_UNSTABLE), 0);
	assert_int_equal(rn_write(fd, &hb, 2048, half[1], 2048, RN_UNSTABLE), 0);
	assert_int_equal(rn_commit(fd, &ha), 0);
	assert_int_equal(rn_commit(fd, &hb), 0);
	close(fd);
	FILE *f = fopen(fa, "rb");
	assert_non_null(f);
	uint8_t got[4096];
	assert_int_equal(fread(got, 1, sizeof got, f), 4096);
	fclose(f);
	assert_memory_equal(got, half[0], 2048);
	assert_memory_equal(got + 2048, half[1], 2048);
	assert_int_equal(rn_counter_must(t->port, "cache_fill_reads"), fills);
}

static uint32_t lookup_status(const struct itest *t, enum it_export e, const char *name)
{
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, fh;
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[e], &root), 0);
	int st = rn_lookup(fd, &root, name, &fh);
	close(fd);
	return (uint32_t)st;
}

/* A bind mount inside an export of a directory outside it, on the same device (so st_dev does
 * not tell): LOOKUP does not cross it, whatever subtree_check says. */
static void test_same_device_bind_mount_not_crossed(void **state)
{
	struct itest *t = *state;
	char src[PATH_MAX + 64], dst[PATH_MAX + 64];
	snprintf(src, sizeof src, "%s/outside-bind", t->dir);
	assert_int_equal(mkdir(src, 0755), 0);
	it_path(t, EXP_RW, "bindpoint", dst, sizeof dst);
	assert_int_equal(mkdir(dst, 0755), 0);
	assert_int_equal(lookup_status(t, EXP_RW, "bindpoint"), NFS3_OK);   /* a plain directory */
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0) {
		print_message("no bind mount here (%s): skipped\n", strerror(errno));
		return;
	}
	uint32_t st = lookup_status(t, EXP_RW, "bindpoint");
	umount2(dst, MNT_DETACH);
	assert_int_equal(st, NFS3ERR_ACCES);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_moved_out_is_stale),
		cmocka_unit_test(test_dir_moved_out_is_stale),
		cmocka_unit_test(test_without_subtree_check_handle_follows),
		cmocka_unit_test(test_inside_survives_restart_and_cache_drop),
		cmocka_unit_test(test_same_device_bind_mount_not_crossed),
		cmocka_unit_test(test_two_links_one_cache),
	};
	return IT_MAIN("subtree_check", tests);
}
