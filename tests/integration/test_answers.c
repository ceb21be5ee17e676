/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Answers where a hostile client's call is malformed or asks for more than its due, given as
 * knfsd gives them (fs/nfsd/nfs3xdr.c, nfs3proc.c, net/sunrpc/svc.c), over raw RPC:
 *   - names with a NUL byte (CREATE "a\0b", REMOVE "b\0x", ...) do not decode: GARBAGE_ARGS,
 *     and nothing is created or removed (svcxdr_decode_filename3); a MNT path with one too;
 *   - a symlink target with a NUL byte, or an empty one: NFS3ERR_INVAL, no link made
 *     (svc_fill_symlink_pathname's EINVAL; nfsd3_proc_symlink's tlen == 0). */
#include "client.h"
#include "rawnfs.h"
#include "rawrpc.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define GARBAGE_ARGS 4
#define NFS3ERR_INVAL_ 22

static uint8_t rbuf[1 << 16];
static uint32_t next_xid = 0x414e0000;

static void call_as(struct xb *b, uint32_t prog, uint32_t vers, uint32_t proc, uint32_t uid,
                    uint32_t gid)
{
	struct xb cred = {.len = 0};
	xb_auth_sys(&cred, uid, gid);
	b->len = 0;
	xb_call(b, next_xid++, 2, prog, vers, proc, RAW_AUTH_SYS, &cred);
}

static void put_fh(struct xb *b, const struct rn_fh *fh)
{
	xb_opaque(b, fh->data, fh->len);
}

static struct raw_reply exchange(int fd, const struct xb *b)
{
	struct raw_reply r;
	if (rn_exchange(fd, b, rbuf, sizeof rbuf, &r) != 0)
		fail_msg("no reply to xid %08x", get_u32(b->buf));
	assert_int_equal(r.reply_stat, 0);
	return r;
}

static void expect_garbage(int fd, const struct xb *b, const char *what)
{
	struct raw_reply r = exchange(fd, b);
	if (r.accept_stat != GARBAGE_ARGS)
		fail_msg("%s: accept_stat %u, want GARBAGE_ARGS", what, r.accept_stat);
}

static int mnt_root(const struct itest *t, int fd, enum it_export e, struct rn_fh *root)
{
	return rn_mnt(fd, t->exports[e], root);
}

static bool on_disk(const struct itest *t, const char *name)
{
	char path[PATH_MAX + 64];
	it_path(t, EXP_RW, name, path, sizeof path);
	return access(path, F_OK) == 0;
}

/* CREATE, MKDIR, LOOKUP, REMOVE and RENAME with a NUL inside a name: GARBAGE_ARGS, and nothing
 * happens to the name's part before the NUL. */
static void test_nul_in_names(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, fh;
	struct xb b;
	assert_true(fd >= 0);
	assert_int_equal(mnt_root(t, fd, EXP_RW, &root), 0);

	call_as(&b, 100003, 3, 8, 0, 0);                 /* CREATE "a\0b" UNCHECKED */
	put_fh(&b, &root);
	xb_opaque(&b, "nul-a\0b", 7);
	xb_u32(&b, 0);
	for (int i = 0; i < 6; i++)
		xb_u32(&b, 0);
	expect_garbage(fd, &b, "CREATE \"nul-a\\0b\"");
	assert_false(on_disk(t, "nul-a"));

	call_as(&b, 100003, 3, 9, 0, 0);                 /* MKDIR "d\0x" */
	put_fh(&b, &root);
	xb_opaque(&b, "nul-d\0x", 7);
	for (int i = 0; i < 6; i++)
		xb_u32(&b, 0);
	expect_garbage(fd, &b, "MKDIR \"nul-d\\0x\"");
	assert_false(on_disk(t, "nul-d"));

	assert_int_equal(rn_create(fd, &root, "nul-b", &fh), 0);
	call_as(&b, 100003, 3, 12, 0, 0);                /* REMOVE "b\0x" */
	put_fh(&b, &root);
	xb_opaque(&b, "nul-b\0x", 7);
	expect_garbage(fd, &b, "REMOVE \"nul-b\\0x\"");
	assert_true(on_disk(t, "nul-b"));

	call_as(&b, 100003, 3, 3, 0, 0);                 /* LOOKUP "b\0x" */
	put_fh(&b, &root);
	xb_opaque(&b, "nul-b\0x", 7);
	expect_garbage(fd, &b, "LOOKUP \"nul-b\\0x\"");

	call_as(&b, 100003, 3, 14, 0, 0);                /* RENAME "nul-b" -> "c\0x" */
	put_fh(&b, &root);
	xb_string(&b, "nul-b");
	put_fh(&b, &root);
	xb_opaque(&b, "nul-c\0x", 7);
	expect_garbage(fd, &b, "RENAME to \"nul-c\\0x\"");
	assert_true(on_disk(t, "nul-b"));
	assert_false(on_disk(t, "nul-c"));
	close(fd);
}

static int symlink_status(int fd, const struct rn_fh *root, const char *name, const char *target,
                          size_t tlen)
{
	struct xb b;
	call_as(&b, 100003, 3, 10, 0, 0);                /* SYMLINK */
	put_fh(&b, root);
	xb_string(&b, name);
	for (int i = 0; i < 6; i++)
		xb_u32(&b, 0);
	xb_opaque(&b, target, tlen);
	struct raw_reply r = exchange(fd, &b);
	assert_int_equal(r.accept_stat, 0);
	return rn_dec_status(&r);
}

static void test_nul_in_symlink_target(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root;
	char path[PATH_MAX + 64], got[64];
	assert_true(fd >= 0);
	assert_int_equal(mnt_root(t, fd, EXP_RW, &root), 0);
	assert_int_equal(symlink_status(fd, &root, "nul-lnk", "/etc/passwd\0junk", 16), NFS3ERR_INVAL_);
	assert_false(on_disk(t, "nul-lnk"));
	assert_int_equal(symlink_status(fd, &root, "empty-lnk", "", 0), NFS3ERR_INVAL_);
	it_path(t, EXP_RW, "empty-lnk", path, sizeof path);
	assert_true(readlink(path, got, sizeof got) < 0);
	/* a target without one is made as it is */
	assert_int_equal(symlink_status(fd, &root, "good-lnk", "/etc/passwd", 11), 0);
	it_path(t, EXP_RW, "good-lnk", path, sizeof path);
	ssize_t n = readlink(path, got, sizeof got);
	assert_int_equal(n, 11);
	assert_memory_equal(got, "/etc/passwd", 11);
	close(fd);
}

static void test_nul_in_mnt_path(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->mount_port, NULL);
	char path[PATH_MAX + 16];
	struct xb b;
	assert_true(fd >= 0);
	int n = snprintf(path, sizeof path, "%s%cjunk", t->exports[EXP_RW], '\0');
	call_as(&b, 100005, 3, 1, 0, 0);                 /* MNT "<export>\0junk" */
	xb_opaque(&b, path, (size_t)n);
	expect_garbage(fd, &b, "MNT of a path with a NUL");
	close(fd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nul_in_names),
		cmocka_unit_test(test_nul_in_symlink_target),
		cmocka_unit_test(test_nul_in_mnt_path),
	};
	return IT_MAIN("integration-answers", tests);
}
