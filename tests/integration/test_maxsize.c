/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The export's maximum file size: FSINFO's maxfilesize is what the file system takes (ftruncate
 * to it works, to a block more fails with EFBIG); WRITE at or past it, SETATTR of a size past it
 * (2^62, 2^63, 2^64 - 1 too) and COMMIT at an offset past it answer NFS3ERR_FBIG and leave the
 * file's size and the write verifier as they were; a WRITE that crosses it is cut short there,
 * as knfsd's. Before, an UNSTABLE WRITE at 2^62 was answered OK, the size read 2^62 + 4, and each
 * COMMIT failed with FBIG and drew a new verifier for the whole server. */
#include "client.h"
#include "rawnfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NFS_PROG 100003
#define NFS3ERR_FBIG 27
#define FATTR3_LEN 84

static uint8_t buf[1 << 16];

struct rd {
	const uint8_t *p;
	size_t left;
};

static uint32_t rd_u32(struct rd *d)
{
	assert_true(d->left >= 4);
	uint32_t v = get_u32(d->p);
	d->p += 4;
	d->left -= 4;
	return v;
}

static uint64_t rd_u64(struct rd *d)
{
	uint64_t hi = rd_u32(d);
	return hi << 32 | rd_u32(d);
}

static void rd_skip(struct rd *d, size_t n)
{
	assert_true(d->left >= n);
	d->p += n;
	d->left -= n;
}

static void rd_wcc(struct rd *d)
{
	if (rd_u32(d))
		rd_skip(d, 24);
	if (rd_u32(d))
		rd_skip(d, FATTR3_LEN);
}

static void call(struct xb *b, uint32_t proc, const struct rn_fh *fh)
{
	static uint32_t xid = 0x4d580000;
	struct xb cred = {0};
	xb_auth_sys(&cred, 0, 0);
	b->len = 0;
	xb_call(b, xid++, 2, NFS_PROG, 3, proc, RAW_AUTH_SYS, &cred);
	xb_opaque(b, fh->data, fh->len);
}

static struct rd exchange(int fd, const struct xb *b)
{
	struct raw_reply r;
	assert_int_equal(rn_exchange(fd, b, buf, sizeof buf, &r), 0);
	assert_int_equal(r.reply_stat, 0);
	assert_int_equal(r.accept_stat, 0);
	return (struct rd){r.body, r.body_len};
}

static uint64_t fsinfo_maxfilesize(int fd, const struct rn_fh *root)
{
	struct xb b;
	call(&b, 19, root);
	struct rd d = exchange(fd, &b);
	assert_int_equal(rd_u32(&d), 0);
	if (rd_u32(&d))
		rd_skip(&d, FATTR3_LEN);
	rd_skip(&d, 7 * 4);       /* rtmax .. dtpref */
	return rd_u64(&d);
}

/* UNSTABLE WRITE of len bytes at off: the status; *count and verf set when OK. */
static uint32_t write_at(int fd, const struct rn_fh *fh, uint64_t off, uint32_t len,
			 uint32_t *count, uint8_t verf[8])
{
	struct xb b;
	call(&b, 7, fh);
	xb_u64(&b, off);
	xb_u32(&b, len);
	xb_u32(&b, 0);
	xb_opaque(&b, "0123456789abcdef", len);
	struct rd d = exchange(fd, &b);
	uint32_t st = rd_u32(&d);
	rd_wcc(&d);
	if (st == 0) {
		*count = rd_u32(&d);
		rd_u32(&d);
		memcpy(verf, d.p, 8);
	}
	return st;
}

static uint32_t commit_at(int fd, const struct rn_fh *fh, uint64_t off, uint32_t count,
			  uint8_t verf[8])
{
	struct xb b;
	call(&b, 21, fh);
	xb_u64(&b, off);
	xb_u32(&b, count);
	struct rd d = exchange(fd, &b);
	uint32_t st = rd_u32(&d);
	rd_wcc(&d);
	if (st == 0)
		memcpy(verf, d.p, 8);
	return st;
}

static uint32_t setattr_size(int fd, const struct rn_fh *fh, uint64_t size)
{
	struct xb b;
	call(&b, 2, fh);
	xb_u32(&b, 0);            /* mode */
	xb_u32(&b, 0);            /* uid */
	xb_u32(&b, 0);            /* gid */
	xb_u32(&b, 1);            /* size */
	xb_u64(&b, size);
	xb_u32(&b, 0);            /* atime: DONT_CHANGE */
	xb_u32(&b, 0);            /* mtime */
	xb_u32(&b, 0);            /* no guard */
	struct rd d = exchange(fd, &b);
	return rd_u32(&d);
}

static uint64_t size_of(int fd, const struct rn_fh *fh)
{
	struct xb b;
	struct raw_reply r;
	uint64_t size = 0;
	rn_enc_getattr(&b, 0x4d590000u, fh);
	assert_int_equal(rn_exchange(fd, &b, buf, sizeof buf, &r), 0);
	assert_int_equal(rn_dec_getattr(&r, &size), 0);
	return size;
}

/* What the export's file system takes, checked on a file of our own beside the daemon's. */
static void check_real_limit(const struct itest *t, uint64_t max)
{
	char path[PATH_MAX];
	it_path(t, EXP_RW, "probe-here", path, sizeof path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	struct stat sb;
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(ftruncate(fd, (off_t)max), 0);
	uint64_t past = max + (uint64_t)sb.st_blksize;
	if (past <= (uint64_t)INT64_MAX)
		assert_true(ftruncate(fd, (off_t)past) < 0 && errno == EFBIG);
	close(fd);
	unlink(path);
}

static void test_limit_enforced(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, fh;
	uint8_t verf0[8], verf[8];
	uint32_t count;
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_create(fd, &root, "maxsize", &fh), 0);
	uint64_t max = fsinfo_maxfilesize(fd, &root);
	print_message("FSINFO maxfilesize: %llu\n", (unsigned long long)max);
	assert_true(max < (uint64_t)INT64_MAX);
	check_real_limit(t, max);

	assert_int_equal(write_at(fd, &fh, 0, 11, &count, verf0), 0);
	assert_int_equal(count, 11);
	static const uint64_t past[] = {1ull << 62, (1ull << 63) - 16, 0};
	for (int i = 0; past[i]; i++)
		if (past[i] >= max)
			assert_int_equal(write_at(fd, &fh, past[i], 4, &count, verf), NFS3ERR_FBIG);
	assert_int_equal(write_at(fd, &fh, max, 1, &count, verf), NFS3ERR_FBIG);
	assert_int_equal(size_of(fd, &fh), 11);
	assert_int_equal(commit_at(fd, &fh, 0, 0, verf), 0);
	assert_memory_equal(verf, verf0, 8);

	assert_int_equal(commit_at(fd, &fh, max, 0, verf), NFS3ERR_FBIG);
	if ((1ull << 62) >= max)
		assert_int_equal(commit_at(fd, &fh, 1ull << 62, 4096, verf), NFS3ERR_FBIG);
	static const uint64_t sizes[] = {1ull << 62, 1ull << 63, UINT64_MAX, 0};
	for (int i = 0; sizes[i]; i++)
		if (sizes[i] > max)
			assert_int_equal(setattr_size(fd, &fh, sizes[i]), NFS3ERR_FBIG);
	assert_int_equal(setattr_size(fd, &fh, max + 1), NFS3ERR_FBIG);
	assert_int_equal(size_of(fd, &fh), 11);

	/* Up to the limit it works: a WRITE across it is cut short there. */
	assert_int_equal(write_at(fd, &fh, max - 4, 10, &count, verf), 0);
	assert_int_equal(count, 4);
	assert_int_equal(size_of(fd, &fh), max);
	assert_int_equal(commit_at(fd, &fh, 0, 0, verf), 0);
	assert_memory_equal(verf, verf0, 8);
	assert_int_equal(setattr_size(fd, &fh, 11), 0);
	assert_int_equal(commit_at(fd, &fh, 0, 0, verf), 0);
	assert_memory_equal(verf, verf0, 8);
	close(fd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit_enforced),
	};
	return IT_MAIN("maximum file size", tests);
}
