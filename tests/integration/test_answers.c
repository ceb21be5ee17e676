/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Answers where a hostile client's call is malformed or asks for more than its due, given as
 * knfsd gives them (fs/nfsd/nfs3xdr.c, nfs3proc.c, net/sunrpc/svc.c), over raw RPC:
 *   - names with a NUL byte (CREATE "a\0b", REMOVE "b\0x", ...) do not decode: GARBAGE_ARGS,
 *     and nothing is created or removed (svcxdr_decode_filename3); a MNT path with one too;
 *   - a symlink target with a NUL byte, or an empty one: NFS3ERR_INVAL, no link made
 *     (svc_fill_symlink_pathname's EINVAL; nfsd3_proc_symlink's tlen == 0);
 *   - a WRITE whose stable_how is not one of the three, or whose count is not its data's
 *     length: GARBAGE_ARGS, nothing written (nfs3svc_decode_writeargs; nfsd4_decode_write);
 *   - an EXCLUSIVE CREATE of a name whose file has the verifier's times but is no longer
 *     empty: NFS3ERR_EXIST (nfsd3_create_file);
 *   - COMMIT by a caller who may not write the file, AUTH_NULL included: NFS3ERR_ACCES; its
 *     owner may (nfsd_file_acquire with NFSD_MAY_WRITE, and the owner override). */
#include "client.h"
#include "rawnfs.h"
#include "rawrpc.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GARBAGE_ARGS 4
#define NFS3ERR_ACCES_ 13
#define NFS3ERR_EXIST_ 17
#define NFS3ERR_INVAL_ 22
#define USER 1001

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

/* WRITE of data as given, with count and stable_how as given. */
static void enc_write(struct xb *b, const struct rn_fh *fh, uint32_t count, uint32_t stable,
                      const void *data, uint32_t len)
{
	call_as(b, 100003, 3, 7, 0, 0);
	put_fh(b, fh);
	xb_u64(b, 0);
	xb_u32(b, count);
	xb_u32(b, stable);
	xb_opaque(b, data, len);
}

static void test_write_arguments(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, fh;
	struct xb b;
	char path[PATH_MAX + 64];
	assert_true(fd >= 0);
	assert_int_equal(mnt_root(t, fd, EXP_RW, &root), 0);
	assert_int_equal(rn_create(fd, &root, "writeargs", &fh), 0);
	enc_write(&b, &fh, 8, 7, "12345678", 8);
	expect_garbage(fd, &b, "WRITE with stable_how 7");
	enc_write(&b, &fh, 8, 3, "12345678", 8);
	expect_garbage(fd, &b, "WRITE with stable_how 3");
	enc_write(&b, &fh, 4, 2, "12345678", 8);
	expect_garbage(fd, &b, "WRITE of 8 bytes with count 4");
	enc_write(&b, &fh, 8, 2, "1234", 4);
	expect_garbage(fd, &b, "WRITE of 4 bytes with count 8");
	it_path(t, EXP_RW, "writeargs", path, sizeof path);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
	/* and a well-formed one still goes */
	enc_write(&b, &fh, 8, 2, "12345678", 8);
	struct raw_reply r = exchange(fd, &b);
	uint32_t count, committed;
	assert_int_equal(rn_dec_write(&r, &count, &committed), 0);
	assert_int_equal(count, 8);
	assert_int_equal(committed, 2);
	close(fd);
}

static int create_exclusive(int fd, const struct rn_fh *dir, const char *name, const char verf[8],
                            struct rn_fh *fh)
{
	struct xb b;
	call_as(&b, 100003, 3, 8, 0, 0);
	put_fh(&b, dir);
	xb_string(&b, name);
	xb_u32(&b, 2);                                   /* EXCLUSIVE */
	xb_bytes(&b, verf, 8);
	struct raw_reply r = exchange(fd, &b);
	assert_int_equal(r.accept_stat, 0);
	return rn_dec_create(&r, fh);
}

/* A retransmitted EXCLUSIVE CREATE is answered OK only while the file it made is empty. */
static void test_exclusive_create_of_written_file(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, fh, again;
	static const char verf[8] = "verifier";
	assert_true(fd >= 0);
	assert_int_equal(mnt_root(t, fd, EXP_RW, &root), 0);
	char path[PATH_MAX + 64];
	struct stat st;
	assert_int_equal(create_exclusive(fd, &root, "excl", verf, &fh), 0);
	assert_int_equal(create_exclusive(fd, &root, "excl", verf, &again), 0);   /* a retry */
	it_path(t, EXP_RW, "excl", path, sizeof path);
	assert_int_equal(stat(path, &st), 0);
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	/* an UNSTABLE WRITE (held in the cache) makes it non-empty, whatever its times */
	assert_int_equal(rn_write(fd, &fh, 0, "x", 1, RN_UNSTABLE), 0);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	assert_int_equal(create_exclusive(fd, &root, "excl", verf, &again), NFS3ERR_EXIST_);
	/* so does data written on the server */
	assert_int_equal(create_exclusive(fd, &root, "excl2", verf, &fh), 0);
	it_path(t, EXP_RW, "excl2", path, sizeof path);
	assert_int_equal(stat(path, &st), 0);
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	it_write_file(t, EXP_RW, "excl2", "y", 1, 0644);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	assert_int_equal(create_exclusive(fd, &root, "excl2", verf, &again), NFS3ERR_EXIST_);
	close(fd);
}

static int commit_status(int fd, const struct rn_fh *fh, uint32_t flavor, uint32_t uid)
{
	struct xb b, cred = {.len = 0};
	b.len = 0;
	if (flavor == RAW_AUTH_SYS)
		xb_auth_sys(&cred, uid, uid);
	xb_call(&b, next_xid++, 2, 100003, 3, 21, flavor, &cred);
	put_fh(&b, fh);
	xb_u64(&b, 0);
	xb_u32(&b, 0);
	struct raw_reply r = exchange(fd, &b);
	assert_int_equal(r.accept_stat, 0);
	return rn_dec_commit(&r);
}

/* COMMIT writes and syncs the file as the server, and gives out the verifier: only for a
 * caller who may write it. */
static void test_commit_needs_write_access(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, fh, mine;
	char path[PATH_MAX + 64];
	assert_true(fd >= 0);
	assert_int_equal(mnt_root(t, fd, EXP_RW, &root), 0);
	assert_int_equal(rn_create(fd, &root, "root-0644", &fh), 0);
	it_path(t, EXP_RW, "root-0644", path, sizeof path);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(rn_write(fd, &fh, 0, "data", 4, RN_UNSTABLE), 0);
	assert_int_equal(commit_status(fd, &fh, RAW_AUTH_SYS, USER), NFS3ERR_ACCES_);
	assert_int_equal(commit_status(fd, &fh, RAW_AUTH_NONE, 0), NFS3ERR_ACCES_);
	assert_int_equal(commit_status(fd, &fh, RAW_AUTH_SYS, 0), 0);
	/* the owner of a file it may not write (a cp -a of a read-only file) may commit it */
	assert_int_equal(rn_create(fd, &root, "user-0444", &mine), 0);
	it_path(t, EXP_RW, "user-0444", path, sizeof path);
	assert_int_equal(chown(path, USER, USER), 0);
	assert_int_equal(chmod(path, 0444), 0);
	assert_int_equal(commit_status(fd, &mine, RAW_AUTH_SYS, USER), 0);
	assert_int_equal(commit_status(fd, &mine, RAW_AUTH_SYS, USER + 1), NFS3ERR_ACCES_);
	close(fd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nul_in_names),
		cmocka_unit_test(test_nul_in_symlink_target),
		cmocka_unit_test(test_nul_in_mnt_path),
		cmocka_unit_test(test_write_arguments),
		cmocka_unit_test(test_exclusive_create_of_written_file),
		cmocka_unit_test(test_commit_needs_write_access),
	};
	return IT_MAIN("integration-answers", tests);
}
