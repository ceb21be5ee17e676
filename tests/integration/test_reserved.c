/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reserved blocks (run by on_ext4_reserved.sh: a small ext4 with half its blocks reserved for
 * root): an NFS user other than root fills only what an ordinary user may (statvfs f_bavail)
 * and then gets NFS3ERR_NOSPC, whether its data reaches the disk from write-behind, the
 * bound or COMMIT; root can go on into the reserved blocks, as knfsd lets it. Before, users
 * kept the daemon's CAP_SYS_RESOURCE and wrote into the reserve too. */
#include "client.h"
#include "rawnfs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define CHUNK 4096
#define COMMIT_EVERY 256          /* 1 MiB */
#define USER 1000

static uint8_t rbuf[65536];
static uint32_t next_xid = 0x7e5e0000;

static void call_as(struct xb *b, uint32_t proc, uint32_t uid)
{
	struct xb cred = {0};
	xb_auth_sys(&cred, uid, uid);
	b->len = 0;
	xb_call(b, next_xid++, 2, 100003, 3, proc, RAW_AUTH_SYS, &cred);
}

static int status(int fd, const struct xb *b)
{
	struct raw_reply r;
	assert_int_equal(rn_exchange(fd, b, rbuf, sizeof rbuf, &r), 0);
	return rn_dec_status(&r);
}

static struct rn_fh create_as(int fd, const struct rn_fh *dir, const char *name, uint32_t uid)
{
	struct xb b;
	struct raw_reply r;
	struct rn_fh fh;
	call_as(&b, 8, uid);
	xb_opaque(&b, dir->data, dir->len);
	xb_string(&b, name);
	xb_u32(&b, 0);                 /* UNCHECKED */
	for (int i = 0; i < 6; i++)
		xb_u32(&b, 0);
	assert_int_equal(rn_exchange(fd, &b, rbuf, sizeof rbuf, &r), 0);
	assert_int_equal(rn_dec_create(&r, &fh), 0);
	return fh;
}

/* UNSTABLE WRITEs and a COMMIT every MiB as uid, until a reply says no (or limit bytes went
 * in): the bytes the last good COMMIT made durable, and the status that stopped it. */
static uint64_t fill_as(int fd, const struct rn_fh *fh, uint32_t uid, uint64_t limit, int *stop)
{
	static uint8_t data[CHUNK];
	uint64_t off = 0, durable = 0;
	struct xb b;
	memset(data, 0x6b, sizeof data);
	*stop = 0;
	while (off < limit && *stop == 0) {
		call_as(&b, 7, uid);
		xb_opaque(&b, fh->data, fh->len);
		xb_u64(&b, off);
		xb_u32(&b, CHUNK);
		xb_u32(&b, 0);
		xb_opaque(&b, data, CHUNK);
		*stop = status(fd, &b);
		if (*stop)
			break;
		off += CHUNK;
		if (off % (COMMIT_EVERY * CHUNK) == 0) {
			call_as(&b, 21, uid);
			xb_opaque(&b, fh->data, fh->len);
			xb_u64(&b, 0);
			xb_u32(&b, 0);
			*stop = status(fd, &b);
			if (*stop == 0)
				durable = off;
		}
	}
	return durable;
}

static void test_reserved_blocks_for_root_only(void **state)
{
	struct itest *t = *state;
	char udir[PATH_MAX + 64];
	struct statvfs sv;
	it_path(t, EXP_RW, "user", udir, sizeof udir);
	assert_int_equal(mkdir(udir, 0755), 0);
	assert_int_equal(chown(udir, USER, USER), 0);
	assert_int_equal(statvfs(udir, &sv), 0);
	uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	uint64_t reserved = (uint64_t)(sv.f_bfree - sv.f_bavail) * sv.f_frsize;
	print_message("free for users %llu KiB, reserved for root %llu KiB\n",
		      (unsigned long long)(avail >> 10), (unsigned long long)(reserved >> 10));
	assert_true(reserved > 8u << 20);

	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, dir, ufile, rfile;
	struct xb b;
	struct raw_reply r;
	assert_true(fd >= 0);
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	rn_enc_lookup_as(&b, next_xid++, &root, "user", USER, USER);
	assert_int_equal(rn_exchange(fd, &b, rbuf, sizeof rbuf, &r), 0);
	assert_int_equal(rn_dec_lookup(&r, &dir), 0);

	int stop;
	ufile = create_as(fd, &dir, "fill", USER);
	uint64_t user = fill_as(fd, &ufile, USER, avail + reserved, &stop);
	print_message("uid %d: %llu KiB made durable, then status %d\n", USER,
		      (unsigned long long)(user >> 10), stop);
	assert_int_equal(stop, NFS3ERR_NOSPC);
	assert_true(user <= avail);

	rfile = create_as(fd, &root, "rootfill", 0);
	uint64_t rootb = fill_as(fd, &rfile, 0, reserved, &stop);
	print_message("root: %llu KiB more made durable, then status %d\n",
		      (unsigned long long)(rootb >> 10), stop);
	assert_true(rootb >= reserved / 2);     /* into the reserve: the user had left no more */
	close(fd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserved_blocks_for_root_only),
	};
	return IT_MAIN("reserved blocks", tests);
}
