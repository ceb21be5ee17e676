/* The 22 NFSv3 procedures on success, with their results checked against the file system.
 * This file holds those on one object (NULL, GETATTR, SETATTR, LOOKUP, ACCESS, READLINK, READ,
 * WRITE, COMMIT) and the file system's (FSSTAT, FSINFO, PATHCONF), and lists every test;
 * test_nfs3_dirs.c those on names, nfs3_ctx.c the tests' working directory. */
#include "nfs3_ctx.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

static void pattern(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131 + seed * 7 + (i >> 8)) & 0xff);
}

static void test_null(void **state)
{
	struct itest *t = *state;
	struct nfsclient *c = nc_connect(t->port, NFS_PROGRAM, NFS_V3, 0, 0, 0, NULL);

	assert_non_null(c);
	assert_int_equal(NC_VOID0(c, rpc_nfs3_null_async), 0);
	nc_close(c);
}

static void test_getattr(void **state)
{
	struct ctx x;
	struct fh f;
	fattr3 a, r;

	ctx_open(state, "getattr", &x);
	put_file(&x, "f", "0123456789", 10);
	assert_int_equal(chown(disk(&x, "f"), 1234, 5678), 0);
	assert_int_equal(chmod(disk(&x, "f"), 0604), 0);
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "f", &f, NULL));
	NFS_OK(x.c, nc_getattr(x.c, &f, &a));
	check_fattr_matches_disk(&a, disk(&x, "f"));
	assert_int_equal(a.uid, 1234);
	assert_int_equal(a.size, 10);
	NFS_OK(x.c, nc_getattr(x.c, &x.root, &r));
	check_fattr_matches_disk(&r, x.t->exports[EXP_RW]);
	assert_true(a.fsid == r.fsid);            /* one export, one file system */
	assert_true(a.fileid != r.fileid);
	nc_close(x.c);
}

static sattr3 no_change(void)
{
	sattr3 s;
	memset(&s, 0, sizeof(s));
	return s;
}

static void test_setattr(void **state)
{
	struct ctx x;
	struct fh f;
	SETATTR3args a;
	SETATTR3res r;
	uint8_t data[100] = { 1 };

	ctx_open(state, "setattr", &x);
	put_file(&x, "f", data, sizeof(data));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "f", &f, NULL));
	memset(&a, 0, sizeof(a));
	a.object = fh3(&f);
	a.new_attributes = no_change();
	a.new_attributes.mode.set_it = 1;
	a.new_attributes.mode.set_mode3_u.mode = 0600;
	a.new_attributes.uid.set_it = 1;
	a.new_attributes.uid.set_uid3_u.uid = 1000;
	a.new_attributes.gid.set_it = 1;
	a.new_attributes.gid.set_gid3_u.gid = 2000;
	a.new_attributes.size.set_it = 1;
	a.new_attributes.size.set_size3_u.size = 10;
	a.new_attributes.atime.set_it = SET_TO_CLIENT_TIME;
	a.new_attributes.atime.set_atime_u.atime = (nfstime3){ 1000000000, 7 };
	a.new_attributes.mtime.set_it = SET_TO_CLIENT_TIME;
	a.new_attributes.mtime.set_mtime_u.mtime = (nfstime3){ 1234567890, 5 };
	NFS_OK(x.c, NFS3_STATUS(x.c, setattr, SETATTR, &a, &r));
	check_wcc(&r.SETATTR3res_u.resok.obj_wcc, 100);
	{
		const fattr3 *after = post_attr(&r.SETATTR3res_u.resok.obj_wcc.after);
		check_fattr_matches_disk(after, disk(&x, "f"));
		assert_int_equal(after->mode, 0600);
		assert_int_equal(after->uid, 1000);
		assert_int_equal(after->gid, 2000);
		assert_int_equal(after->size, 10);
		assert_int_equal(after->mtime.seconds, 1234567890);
		assert_int_equal(after->mtime.nseconds, 5);
		assert_int_equal(after->atime.seconds, 1000000000);
	}
	/* mtime to the server's clock */
	a.new_attributes = no_change();
	a.new_attributes.mtime.set_it = SET_TO_SERVER_TIME;
	NFS_OK(x.c, NFS3_STATUS(x.c, setattr, SETATTR, &a, &r));
	assert_true(labs((long)post_attr(&r.SETATTR3res_u.resok.obj_wcc.after)->mtime.seconds -
	                 (long)time(NULL)) <= 5);
	nc_close(x.c);
}

static void test_lookup(void **state)
{
	struct ctx x;
	struct fh f, dot, dotdot;
	fattr3 fa, ga, da, ra;
	LOOKUP3args a;
	LOOKUP3res r;

	ctx_open(state, "lookup", &x);
	put_file(&x, "f", "x", 1);
	a = (LOOKUP3args){ .what = { .dir = fh3(&x.dir), .name = "f" } };
	NFS_OK(x.c, NFS3_STATUS(x.c, lookup, LOOKUP, &a, &r));
	fh_copy(&f, &r.LOOKUP3res_u.resok.object);
	assert_in_range(f.len, 1, NFS3_FHSIZE);
	fa = *post_attr(&r.LOOKUP3res_u.resok.obj_attributes);
	check_fattr_matches_disk(&fa, disk(&x, "f"));
	check_fattr_matches_disk(post_attr(&r.LOOKUP3res_u.resok.dir_attributes), x.path);
	NFS_OK(x.c, nc_getattr(x.c, &f, &ga));
	assert_true(ga.fileid == fa.fileid);

	/* ".." is how clients walk up; "." names the directory itself */
	NFS_OK(x.c, nc_getattr(x.c, &x.root, &ra));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "..", &dotdot, &fa));
	assert_true(fa.fileid == ra.fileid);
	NFS_OK(x.c, nc_getattr(x.c, &x.dir, &da));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, ".", &dot, &fa));
	assert_true(fa.fileid == da.fileid);
	nc_close(x.c);
}

static uint32_t access_of(struct nfsclient *c, struct fh *f, uint32_t want)
{
	ACCESS3args a = { .object = fh3(f), .access = want };
	ACCESS3res r;

	NFS_OK(c, NFS3_STATUS(c, access, ACCESS, &a, &r));
	check_fattr_sane(post_attr(&r.ACCESS3res_u.resok.obj_attributes));
	/* never more than was asked */
	assert_int_equal(r.ACCESS3res_u.resok.access & ~want, 0);
	return r.ACCESS3res_u.resok.access;
}

#define ACC_ALL (ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | \
                 ACCESS3_DELETE | ACCESS3_EXECUTE)
#define ACC_FILE_RW (ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND)

static void test_access(void **state)
{
	struct ctx x;
	struct fh f, g;

	ctx_open(state, "access", &x);
	put_file(&x, "plain", "x", 1);      /* 0644 root */
	put_file(&x, "tool", "x", 1);
	assert_int_equal(chmod(disk(&x, "tool"), 0755), 0);
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "plain", &f, NULL));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "tool", &g, NULL));
	assert_int_equal(access_of(x.c, &f, ACC_ALL) & (ACC_FILE_RW | ACCESS3_EXECUTE), ACC_FILE_RW);
	assert_true(access_of(x.c, &g, ACC_ALL) & ACCESS3_EXECUTE);
	assert_int_equal(access_of(x.c, &f, ACCESS3_READ), ACCESS3_READ);
	assert_int_equal(access_of(x.c, &x.dir, ACC_ALL) & (ACCESS3_READ | ACCESS3_LOOKUP |
	                 ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE),
	                 ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND |
	                 ACCESS3_DELETE);
	nc_close(x.c);

	/* another user may read the 0644 file, not change it */
	x.c = nc_connect(x.t->port, NFS_PROGRAM, NFS_V3, 1000, 1000, 0, NULL);
	assert_non_null(x.c);
	assert_int_equal(access_of(x.c, &f, ACC_ALL) & ACC_FILE_RW, ACCESS3_READ);
	nc_close(x.c);
}

static int symlink_to(struct nfsclient *c, struct fh *dir, const char *name, const char *target,
                      SYMLINK3res *r)
{
	SYMLINK3args a;

	memset(&a, 0, sizeof(a));
	a.where.dir = fh3(dir);
	a.where.name = (char *)name;
	a.symlink.symlink_data = (char *)target;
	if (NFS3(c, symlink, SYMLINK, &a, r) < 0)
		return -1;
	return (int)r->status;
}

static void test_symlink_readlink(void **state)
{
	static const char target[] = "../some/where/else";
	struct ctx x;
	SYMLINK3res s;
	READLINK3args a;
	READLINK3res r;
	struct fh l;
	char back[256];

	ctx_open(state, "symlink", &x);
	NFS_OK(x.c, symlink_to(x.c, &x.dir, "l", target, &s));
	check_wcc(&s.SYMLINK3res_u.resok.dir_wcc, -1);
	assert_int_equal(readlink(disk(&x, "l"), back, sizeof(back)), (ssize_t)strlen(target));
	assert_memory_equal(back, target, strlen(target));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "l", &l, NULL));
	if (s.SYMLINK3res_u.resok.obj.handle_follows)
		fh_copy(&l, &s.SYMLINK3res_u.resok.obj.post_op_fh3_u.handle);

	a = (READLINK3args){ .symlink = fh3(&l) };
	NFS_OK(x.c, NFS3_STATUS(x.c, readlink, READLINK, &a, &r));
	assert_string_equal(r.READLINK3res_u.resok.data, target);
	{
		const fattr3 *la = post_attr(&r.READLINK3res_u.resok.symlink_attributes);
		check_fattr_matches_disk(la, disk(&x, "l"));
		assert_int_equal(la->type, NF3LNK);
		assert_int_equal(la->size, strlen(target));
	}
	nc_close(x.c);
}

static void read_expect(struct ctx *x, struct fh *f, uint64_t off, uint32_t count,
                        const uint8_t *want, uint32_t want_len, int want_eof)
{
	static uint8_t buf[16384];
	uint32_t got;
	int eof;

	NFS_OK(x->c, nc_read(x->c, f, off, count, buf, &got, &eof));
	assert_int_equal(got, want_len);
	assert_memory_equal(buf, want, want_len);
	assert_int_equal(eof != 0, want_eof);
}

static void test_read(void **state)
{
	static uint8_t data[10000];
	struct ctx x;
	struct fh f;
	READ3args a;
	READ3res r;

	ctx_open(state, "read", &x);
	pattern(data, sizeof(data), 1);
	put_file(&x, "f", data, sizeof(data));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "f", &f, NULL));
	read_expect(&x, &f, 0, 4096, data, 4096, 0);
	read_expect(&x, &f, 8192, 4096, data + 8192, 10000 - 8192, 1);   /* short, at eof */
	read_expect(&x, &f, 777, 1000, data + 777, 1000, 0);             /* unaligned */
	read_expect(&x, &f, 10000, 100, data, 0, 1);                      /* at the end */
	read_expect(&x, &f, 50000, 100, data, 0, 1);                      /* past the end */
	read_expect(&x, &f, 0, 0, data, 0, 0);                            /* nothing asked */

	a = (READ3args){ .file = fh3(&f), .offset = 0, .count = 10 };
	NFS_OK(x.c, NFS3_STATUS(x.c, read, READ, &a, &r));
	check_fattr_matches_disk(post_attr(&r.READ3res_u.resok.file_attributes), disk(&x, "f"));
	nc_close(x.c);
}

static void test_write(void **state)
{
	static const uint8_t zeros[4096];
	struct ctx x;
	struct fh f;
	WRITE3resok ok;
	fattr3 ga;

	ctx_open(state, "write", &x);
	NFS_OK(x.c, nc_create(x.c, &x.dir, "f", 0644, &f));

	NFS_OK(x.c, nc_write(x.c, &f, 0, "hello", 5, FILE_SYNC, &ok));
	assert_int_equal(ok.count, 5);
	assert_int_equal(ok.committed, FILE_SYNC);
	check_wcc(&ok.file_wcc, 0);
	assert_int_equal(post_attr(&ok.file_wcc.after)->size, 5);
	disk_expect(&x, "f", 0, "hello", 5);

	/* past the end, leaving a hole that reads as zeros */
	NFS_OK(x.c, nc_write(x.c, &f, 1048576 + 3, "world", 5, DATA_SYNC, &ok));
	assert_true(ok.committed == DATA_SYNC || ok.committed == FILE_SYNC);
	check_wcc(&ok.file_wcc, 5);
	assert_int_equal(post_attr(&ok.file_wcc.after)->size, 1048576 + 8);
	disk_expect(&x, "f", 1048576 + 3, "world", 5);
	disk_expect(&x, "f", 4096, zeros, sizeof(zeros));

	/* unstable: not yet on disk perhaps, but visible to READ and in the size at once */
	NFS_OK(x.c, nc_write(x.c, &f, 2097152 + 100, "later", 5, UNSTABLE, &ok));
	assert_int_equal(ok.count, 5);
	assert_int_equal(post_attr(&ok.file_wcc.after)->size, 2097152 + 105);
	NFS_OK(x.c, nc_getattr(x.c, &f, &ga));
	assert_int_equal(ga.size, 2097152 + 105);
	read_expect(&x, &f, 2097152 + 100, 100, (const uint8_t *)"later", 5, 1);
	nc_close(x.c);
}

static void test_fsstat(void **state)
{
	struct ctx x;
	FSSTAT3args a;
	FSSTAT3res r;
	FSSTAT3resok *ok = &r.FSSTAT3res_u.resok;
	struct statvfs vfs;

	ctx_open(state, "fsstat", &x);
	a = (FSSTAT3args){ .fsroot = fh3(&x.root) };
	NFS_OK(x.c, NFS3_STATUS(x.c, fsstat, FSSTAT, &a, &r));
	check_fattr_sane(post_attr(&ok->obj_attributes));
	assert_true(ok->tbytes > 0 && ok->tfiles > 0);
	assert_true(ok->fbytes > 0 && ok->ffiles > 0);
	assert_true(ok->abytes <= ok->fbytes && ok->fbytes <= ok->tbytes);
	assert_true(ok->afiles <= ok->ffiles && ok->ffiles <= ok->tfiles);
	assert_int_equal(statvfs(x.t->exports[EXP_RW], &vfs), 0);
	assert_true(ok->tbytes == (uint64_t)vfs.f_blocks * vfs.f_frsize);
	assert_true(ok->tfiles == (uint64_t)vfs.f_files);
	nc_close(x.c);
}

static void test_fsinfo(void **state)
{
	struct ctx x;
	FSINFO3args a;
	FSINFO3res r;
	FSINFO3resok *ok = &r.FSINFO3res_u.resok;
	const uint32_t props = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;

	ctx_open(state, "fsinfo", &x);
	a = (FSINFO3args){ .fsroot = fh3(&x.root) };
	NFS_OK(x.c, NFS3_STATUS(x.c, fsinfo, FSINFO, &a, &r));
	check_fattr_sane(post_attr(&ok->obj_attributes));
	assert_int_equal(ok->rtmax, 1048576);
	assert_int_equal(ok->wtmax, 1048576);
	assert_in_range(ok->rtpref, 4096, ok->rtmax);
	assert_in_range(ok->wtpref, 4096, ok->wtmax);
	assert_true(ok->rtmult > 0 && ok->wtmult > 0);
	assert_true(ok->dtpref >= 512);
	assert_true(ok->maxfilesize >= (1ull << 40));
	assert_int_equal(ok->time_delta.seconds, 0);
	assert_in_range(ok->time_delta.nseconds, 1, 1000000000u - 1);
	assert_int_equal(ok->properties & props, props);
	nc_close(x.c);
}

static void test_pathconf(void **state)
{
	struct ctx x;
	PATHCONF3args a;
	PATHCONF3res r;
	PATHCONF3resok *ok = &r.PATHCONF3res_u.resok;

	ctx_open(state, "pathconf", &x);
	a = (PATHCONF3args){ .object = fh3(&x.dir) };
	NFS_OK(x.c, NFS3_STATUS(x.c, pathconf, PATHCONF, &a, &r));
	check_fattr_matches_disk(post_attr(&ok->obj_attributes), x.path);
	assert_int_equal(ok->name_max, 255);
	assert_true(ok->linkmax > 1);
	assert_true(ok->no_trunc);
	assert_true(ok->chown_restricted);
	assert_false(ok->case_insensitive);
	assert_true(ok->case_preserving);
	nc_close(x.c);
}

static void test_commit(void **state)
{
	static uint8_t data[3][65536];
	static const uint64_t offs[3] = { 0, 65536 + 100, 300000 };
	struct ctx x;
	struct fh f;
	WRITE3resok ok;
	char wverf[8], cverf[8];
	COMMIT3args a;
	COMMIT3res r;

	ctx_open(state, "commit", &x);
	NFS_OK(x.c, nc_create(x.c, &x.dir, "f", 0644, &f));
	for (int i = 0; i < 3; i++) {
		pattern(data[i], sizeof(data[i]), (unsigned)i + 10);
		NFS_OK(x.c, nc_write(x.c, &f, offs[i], data[i], sizeof(data[i]), UNSTABLE, &ok));
		if (i > 0)
			assert_memory_equal(ok.verf, wverf, 8);   /* one verifier while it runs */
		memcpy(wverf, ok.verf, 8);
	}
	a = (COMMIT3args){ .file = fh3(&f), .offset = 0, .count = 0 };
	NFS_OK(x.c, NFS3_STATUS(x.c, commit, COMMIT, &a, &r));
	check_wcc(&r.COMMIT3res_u.resok.file_wcc, -1);
	assert_int_equal(post_attr(&r.COMMIT3res_u.resok.file_wcc.after)->size, 300000 + 65536);
	memcpy(cverf, r.COMMIT3res_u.resok.verf, 8);
	assert_memory_equal(cverf, wverf, 8);
	/* committed means on disk */
	for (int i = 0; i < 3; i++)
		for (int part = 0; part < 4; part++)
			disk_expect(&x, "f", (off_t)offs[i] + part * 16384, data[i] + part * 16384, 16384);
	/* a ranged COMMIT answers with the same verifier */
	NFS_OK(x.c, nc_commit(x.c, &f, 65536, 1000, cverf));
	assert_memory_equal(cverf, wverf, 8);
	nc_close(x.c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_getattr),
		cmocka_unit_test(test_setattr),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_access),
		cmocka_unit_test(test_symlink_readlink),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_mkdir),
		cmocka_unit_test(test_mknod),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_rmdir),
		cmocka_unit_test(test_rename),
		cmocka_unit_test(test_link),
		cmocka_unit_test(test_readdir),
		cmocka_unit_test(test_readdirplus),
		cmocka_unit_test(test_fsstat),
		cmocka_unit_test(test_fsinfo),
		cmocka_unit_test(test_pathconf),
		cmocka_unit_test(test_commit),
	};
	return IT_MAIN("integration-nfs3", tests);
}
