/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The NFSv3 procedures that make, remove, rename and list names (CREATE in its three modes,
 * MKDIR, MKNOD, REMOVE, RMDIR, RENAME, LINK, READDIR, READDIRPLUS) on success, their results
 * checked against the file system. Part of it-nfs3: test_nfs3.c lists the tests. */
#include "nfs3_ctx.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int create_how(struct nfsclient *c, struct fh *dir, const char *name, createmode3 how,
                      const char *verf, CREATE3res *r)
{
	CREATE3args a;

	memset(&a, 0, sizeof(a));
	a.where.dir = fh3(dir);
	a.where.name = (char *)name;
	a.how.mode = how;
	if (how == EXCLUSIVE) {
		memcpy(a.how.createhow3_u.verf, verf, NFS3_CREATEVERFSIZE);
	} else {
		a.how.createhow3_u.obj_attributes.mode.set_it = 1;
		a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0664;
	}
	if (NFS3(c, create, CREATE, &a, r) < 0)
		return -1;
	return (int)r->status;
}

void test_create(void **state)
{
	struct ctx x;
	CREATE3res r;
	fattr3 first, again;

	ctx_open(state, "create", &x);
	NFS_OK(x.c, create_how(x.c, &x.dir, "u", UNCHECKED, NULL, &r));
	check_wcc(&r.CREATE3res_u.resok.dir_wcc, -1);
	first = *post_attr(&r.CREATE3res_u.resok.obj_attributes);
	check_fattr_matches_disk(&first, disk(&x, "u"));
	assert_int_equal(first.type, NF3REG);
	assert_int_equal(first.mode, 0664);   /* exactly: no umask of the daemon's */
	assert_int_equal(first.size, 0);
	NFS_OK(x.c, create_how(x.c, &x.dir, "u", UNCHECKED, NULL, &r));   /* exists: fine */

	NFS_OK(x.c, create_how(x.c, &x.dir, "g", GUARDED, NULL, &r));
	NFS_EXPECT(x.c, NFS3ERR_EXIST, create_how(x.c, &x.dir, "g", GUARDED, NULL, &r));

	/* EXCLUSIVE: a retransmission (same verifier) succeeds on the same file, another
	 * client's create (other verifier) finds it taken */
	NFS_OK(x.c, create_how(x.c, &x.dir, "e", EXCLUSIVE, "verf-one", &r));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "e", NULL, &first));
	NFS_OK(x.c, create_how(x.c, &x.dir, "e", EXCLUSIVE, "verf-one", &r));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "e", NULL, &again));
	assert_true(first.fileid == again.fileid);
	NFS_EXPECT(x.c, NFS3ERR_EXIST, create_how(x.c, &x.dir, "e", EXCLUSIVE, "verf-two", &r));
	nc_close(x.c);
}

void test_mkdir(void **state)
{
	struct ctx x;
	MKDIR3args a;
	MKDIR3res r;
	struct fh d;
	fattr3 da;

	ctx_open(state, "mkdir", &x);
	memset(&a, 0, sizeof(a));
	a.where = (diropargs3){ .dir = fh3(&x.dir), .name = "sub" };
	a.attributes.mode.set_it = 1;
	a.attributes.mode.set_mode3_u.mode = 0775;
	NFS_OK(x.c, NFS3_STATUS(x.c, mkdir, MKDIR, &a, &r));
	check_wcc(&r.MKDIR3res_u.resok.dir_wcc, -1);
	check_fattr_matches_disk(post_attr(&r.MKDIR3res_u.resok.dir_wcc.after), x.path);
	da = *post_attr(&r.MKDIR3res_u.resok.obj_attributes);
	check_fattr_matches_disk(&da, disk(&x, "sub"));
	assert_int_equal(da.type, NF3DIR);
	assert_int_equal(da.mode, 0775);      /* exactly: no umask of the daemon's */
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "sub", &d, NULL));
	NFS_OK(x.c, nc_create(x.c, &d, "inside", 0644, NULL));   /* usable as a directory */
	nc_close(x.c);
}

static int mknod_of(struct nfsclient *c, struct fh *dir, const char *name, ftype3 type,
                    MKNOD3res *r)
{
	MKNOD3args a;
	sattr3 *s;

	memset(&a, 0, sizeof(a));
	a.where = (diropargs3){ .dir = fh3(dir), .name = (char *)name };
	a.what.type = type;
	if (type == NF3CHR || type == NF3BLK) {
		a.what.mknoddata3_u.chr_device.spec = (specdata3){ 1, 3 };
		s = &a.what.mknoddata3_u.chr_device.dev_attributes;
	} else {
		s = &a.what.mknoddata3_u.pipe_attributes;
	}
	s->mode.set_it = 1;
	s->mode.set_mode3_u.mode = 0622;
	if (NFS3(c, mknod, MKNOD, &a, r) < 0)
		return -1;
	return (int)r->status;
}

void test_mknod(void **state)
{
	struct ctx x;
	MKNOD3res r;
	struct { const char *name; ftype3 type; } kinds[] = {
		{ "fifo", NF3FIFO }, { "sock", NF3SOCK }, { "chr", NF3CHR },
	};

	ctx_open(state, "mknod", &x);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const fattr3 *a;

		NFS_OK(x.c, mknod_of(x.c, &x.dir, kinds[i].name, kinds[i].type, &r));
		check_wcc(&r.MKNOD3res_u.resok.dir_wcc, -1);
		a = post_attr(&r.MKNOD3res_u.resok.obj_attributes);
		check_fattr_matches_disk(a, disk(&x, kinds[i].name));
		assert_int_equal(a->type, kinds[i].type);
		assert_int_equal(a->mode, 0622);   /* exactly: no umask of the daemon's */
	}
	/* the character device is /dev/null's numbers */
	{
		struct stat st;
		assert_int_equal(lstat(disk(&x, "chr"), &st), 0);
		assert_int_equal(major(st.st_rdev), 1);
		assert_int_equal(minor(st.st_rdev), 3);
	}
	nc_close(x.c);
}

void test_remove(void **state)
{
	struct ctx x;
	REMOVE3args a;
	REMOVE3res r;
	fattr3 before;

	ctx_open(state, "remove", &x);
	put_file(&x, "f", "x", 1);
	NFS_OK(x.c, nc_getattr(x.c, &x.dir, &before));
	a = (REMOVE3args){ .object = { .dir = fh3(&x.dir), .name = "f" } };
	NFS_OK(x.c, NFS3_STATUS(x.c, remove, REMOVE, &a, &r));
	check_wcc(&r.REMOVE3res_u.resok.dir_wcc, (long long)before.size);
	check_fattr_matches_disk(post_attr(&r.REMOVE3res_u.resok.dir_wcc.after), x.path);
	assert_int_equal(access(disk(&x, "f"), F_OK), -1);
	NFS_EXPECT(x.c, NFS3ERR_NOENT, nc_lookup(x.c, &x.dir, "f", NULL, NULL));
	nc_close(x.c);
}

void test_rmdir(void **state)
{
	struct ctx x;
	RMDIR3args a;
	RMDIR3res r;

	ctx_open(state, "rmdir", &x);
	NFS_OK(x.c, nc_mkdir(x.c, &x.dir, "d", 0755, NULL));
	a = (RMDIR3args){ .object = { .dir = fh3(&x.dir), .name = "d" } };
	NFS_OK(x.c, NFS3_STATUS(x.c, rmdir, RMDIR, &a, &r));
	check_wcc(&r.RMDIR3res_u.resok.dir_wcc, -1);
	check_fattr_matches_disk(post_attr(&r.RMDIR3res_u.resok.dir_wcc.after), x.path);
	assert_int_equal(access(disk(&x, "d"), F_OK), -1);
	NFS_EXPECT(x.c, NFS3ERR_NOENT, nc_lookup(x.c, &x.dir, "d", NULL, NULL));
	nc_close(x.c);
}

static int rename_of(struct nfsclient *c, struct fh *from, const char *fname, struct fh *to,
                     const char *tname, RENAME3res *r)
{
	RENAME3args a = { .from = { .dir = fh3(from), .name = (char *)fname },
	                  .to = { .dir = fh3(to), .name = (char *)tname } };

	if (NFS3(c, rename, RENAME, &a, r) < 0)
		return -1;
	return (int)r->status;
}

void test_rename(void **state)
{
	struct ctx x;
	struct fh sub;
	RENAME3res r;
	fattr3 a, b, moved;

	ctx_open(state, "rename", &x);
	put_file(&x, "a", "aaa", 3);
	put_file(&x, "b", "b", 1);
	NFS_OK(x.c, nc_mkdir(x.c, &x.dir, "sub", 0755, &sub));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "a", NULL, &a));

	NFS_OK(x.c, rename_of(x.c, &x.dir, "a", &x.dir, "a2", &r));       /* same directory */
	check_wcc(&r.RENAME3res_u.resok.fromdir_wcc, -1);
	check_wcc(&r.RENAME3res_u.resok.todir_wcc, -1);
	NFS_EXPECT(x.c, NFS3ERR_NOENT, nc_lookup(x.c, &x.dir, "a", NULL, NULL));
	NFS_OK(x.c, rename_of(x.c, &x.dir, "a2", &sub, "a3", &r));         /* across directories */
	check_wcc(&r.RENAME3res_u.resok.fromdir_wcc, -1);
	check_fattr_matches_disk(post_attr(&r.RENAME3res_u.resok.todir_wcc.after), disk(&x, "sub"));
	NFS_OK(x.c, nc_lookup(x.c, &sub, "a3", NULL, &moved));
	assert_true(moved.fileid == a.fileid);
	assert_int_equal(moved.size, 3);

	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "b", NULL, &b));
	NFS_OK(x.c, rename_of(x.c, &sub, "a3", &x.dir, "b", &r));          /* over a file */
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "b", NULL, &moved));
	assert_true(moved.fileid == a.fileid);
	assert_int_equal(moved.size, 3);
	disk_expect(&x, "b", 0, "aaa", 3);
	nc_close(x.c);
}

void test_link(void **state)
{
	struct ctx x;
	struct fh f;
	LINK3args a;
	LINK3res r;
	fattr3 other;
	struct stat st;

	ctx_open(state, "link", &x);
	put_file(&x, "f", "x", 1);
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "f", &f, NULL));
	a = (LINK3args){ .file = fh3(&f), .link = { .dir = fh3(&x.dir), .name = "g" } };
	NFS_OK(x.c, NFS3_STATUS(x.c, link, LINK, &a, &r));
	check_wcc(&r.LINK3res_u.resok.linkdir_wcc, -1);
	assert_int_equal(post_attr(&r.LINK3res_u.resok.file_attributes)->nlink, 2);
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "g", NULL, &other));
	assert_true(other.fileid == post_attr(&r.LINK3res_u.resok.file_attributes)->fileid);
	assert_int_equal(stat(disk(&x, "g"), &st), 0);
	assert_int_equal(st.st_nlink, 2);
	nc_close(x.c);
}

#define NSMALL 20

/* Index of "e%02d" names, -1 for "." and "..", fails on anything else. */
static int small_index(const char *name)
{
	int i;

	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -1;
	if (sscanf(name, "e%d", &i) != 1 || i < 0 || i >= NSMALL)
		fail_msg("READDIR returned a name never created: \"%s\"", name);
	return i;
}

static void make_small_dir(struct ctx *x)
{
	char name[16];
	for (int i = 0; i < NSMALL; i++) {
		snprintf(name, sizeof(name), "e%02d", i);
		put_file(x, name, "x", 1);
	}
}

void test_readdir(void **state)
{
	struct ctx x;
	READDIR3args a;
	READDIR3res r;
	int seen[NSMALL] = { 0 }, n = 0, k;
	cookie3 cookies[NSMALL + 2];
	char names[NSMALL + 2][8];

	ctx_open(state, "readdir", &x);
	make_small_dir(&x);
	memset(&a, 0, sizeof(a));
	a.dir = fh3(&x.dir);
	a.count = 8192;
	NFS_OK(x.c, NFS3_STATUS(x.c, readdir, READDIR, &a, &r));
	check_fattr_matches_disk(post_attr(&r.READDIR3res_u.resok.dir_attributes), x.path);
	assert_true(r.READDIR3res_u.resok.reply.eof);
	for (entry3 *e = r.READDIR3res_u.resok.reply.entries; e != NULL; e = e->nextentry) {
		int i = small_index(e->name);
		assert_true(e->cookie != 0);
		assert_true(e->fileid != 0);
		if (i >= 0)
			seen[i]++;
		assert_true(n < NSMALL + 2);
		cookies[n] = e->cookie;
		snprintf(names[n++], sizeof(names[0]), "%s", e->name);
	}
	for (int i = 0; i < NSMALL; i++)
		assert_int_equal(seen[i], 1);

	/* resuming after the k-th entry gives exactly the entries after it */
	k = n / 2;
	memcpy(a.cookieverf, r.READDIR3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
	a.cookie = cookies[k];
	NFS_OK(x.c, NFS3_STATUS(x.c, readdir, READDIR, &a, &r));
	assert_true(r.READDIR3res_u.resok.reply.eof);
	for (entry3 *e = r.READDIR3res_u.resok.reply.entries; e != NULL; e = e->nextentry) {
		assert_true(++k < n);
		assert_string_equal(e->name, names[k]);
	}
	assert_int_equal(k, n - 1);
	nc_close(x.c);
}

void test_readdirplus(void **state)
{
	struct ctx x;
	READDIRPLUS3args a;
	READDIRPLUS3res r;
	int seen[NSMALL] = { 0 };

	ctx_open(state, "readdirplus", &x);
	make_small_dir(&x);
	memset(&a, 0, sizeof(a));
	a.dir = fh3(&x.dir);
	a.dircount = 8192;
	a.maxcount = 65536;
	NFS_OK(x.c, NFS3_STATUS(x.c, readdirplus, READDIRPLUS, &a, &r));
	check_fattr_matches_disk(post_attr(&r.READDIRPLUS3res_u.resok.dir_attributes), x.path);
	assert_true(r.READDIRPLUS3res_u.resok.reply.eof);
	for (entryplus3 *e = r.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
		int i = small_index(e->name);
		const fattr3 *ea;
		struct fh h;
		fattr3 ga;

		assert_true(e->cookie != 0);
		if (i < 0)
			continue;
		seen[i]++;
		ea = post_attr(&e->name_attributes);
		check_fattr_matches_disk(ea, disk(&x, e->name));
		assert_true(ea->fileid == e->fileid);
		assert_true(e->name_handle.handle_follows);
		fh_copy(&h, &e->name_handle.post_op_fh3_u.handle);
		NFS_OK(x.c, nc_getattr(x.c, &h, &ga));
		assert_true(ga.fileid == e->fileid);
	}
	for (int i = 0; i < NSMALL; i++)
		assert_int_equal(seen[i], 1);
	nc_close(x.c);
}
