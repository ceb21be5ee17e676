/* Every error a client can cause with well-formed calls, and the status it must get back. */
#include "checks.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

struct ctx {
	struct itest *t;
	struct nfsclient *c;
	struct fh root, dir, file, sub;   /* dir holds "file" (10 bytes) and "sub/" (with "inner") */
	char path[PATH_MAX];
};

static void ctx_open(void **state, const char *name, struct ctx *x)
{
	x->t = *state;
	x->c = it_client(x->t, EXP_RW, 0, 0, &x->root);
	it_workdir(x->c, &x->root, name, &x->dir);
	it_path(x->t, EXP_RW, name, x->path, sizeof(x->path));
	NFS_OK(x->c, nc_create(x->c, &x->dir, "file", 0644, &x->file));
	NFS_OK(x->c, nc_write(x->c, &x->file, 0, "0123456789", 10, FILE_SYNC, NULL));
	NFS_OK(x->c, nc_mkdir(x->c, &x->dir, "sub", 0755, &x->sub));
	NFS_OK(x->c, nc_create(x->c, &x->sub, "inner", 0644, NULL));
}

/* Either of two statuses (servers differ where RFC 1813 leaves room). */
static void expect_either(struct nfsclient *c, int got, int a, int b, const char *what)
{
	if (got != a && got != b)
		fail_msg("%s: got %s (%d), want %s or %s", what,
		         got < 0 ? c->call.err : nc_status_name(got), got, nc_status_name(a),
		         nc_status_name(b));
}

static int lookup_status(struct nfsclient *c, struct fh *dir, const char *name, LOOKUP3res *r)
{
	LOOKUP3args a = { .what = { .dir = fh3(dir), .name = (char *)name } };
	return NFS3_STATUS(c, lookup, LOOKUP, &a, r);
}

static int rmdir_of(struct nfsclient *c, struct fh *dir, const char *name)
{
	RMDIR3args a = { .object = { .dir = fh3(dir), .name = (char *)name } };
	RMDIR3res r;
	return NFS3_STATUS(c, rmdir, RMDIR, &a, &r);
}

static int rename_of(struct nfsclient *c, struct fh *from, const char *fname, struct fh *to,
                     const char *tname)
{
	RENAME3args a = { .from = { .dir = fh3(from), .name = (char *)fname },
	                  .to = { .dir = fh3(to), .name = (char *)tname } };
	RENAME3res r;
	return NFS3_STATUS(c, rename, RENAME, &a, &r);
}

static int link_of(struct nfsclient *c, struct fh *f, struct fh *dir, const char *name)
{
	LINK3args a = { .file = fh3(f), .link = { .dir = fh3(dir), .name = (char *)name } };
	LINK3res r;
	return NFS3_STATUS(c, link, LINK, &a, &r);
}

static int symlink_of(struct nfsclient *c, struct fh *dir, const char *name)
{
	SYMLINK3args a;
	SYMLINK3res r;

	memset(&a, 0, sizeof(a));
	a.where = (diropargs3){ .dir = fh3(dir), .name = (char *)name };
	a.symlink.symlink_data = "target";
	return NFS3_STATUS(c, symlink, SYMLINK, &a, &r);
}

static int create_guarded(struct nfsclient *c, struct fh *dir, const char *name)
{
	CREATE3args a;
	CREATE3res r;

	memset(&a, 0, sizeof(a));
	a.where = (diropargs3){ .dir = fh3(dir), .name = (char *)name };
	a.how.mode = GUARDED;
	return NFS3_STATUS(c, create, CREATE, &a, &r);
}

static int mknod_type(struct nfsclient *c, struct fh *dir, const char *name, ftype3 type)
{
	MKNOD3args a;
	MKNOD3res r;

	memset(&a, 0, sizeof(a));
	a.where = (diropargs3){ .dir = fh3(dir), .name = (char *)name };
	a.what.type = type;
	return NFS3_STATUS(c, mknod, MKNOD, &a, &r);
}

static int readdir_of(struct nfsclient *c, struct fh *dir, cookie3 cookie, const char *verf,
                      uint32_t count, READDIR3res *r)
{
	READDIR3args a;

	memset(&a, 0, sizeof(a));
	a.dir = fh3(dir);
	a.cookie = cookie;
	if (verf != NULL)
		memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
	a.count = count;
	return NFS3_STATUS(c, readdir, READDIR, &a, r);
}

static void test_noent(void **state)
{
	struct ctx x;
	LOOKUP3res r;
	REMOVE3args ra;
	REMOVE3res rr;

	ctx_open(state, "noent", &x);
	NFS_EXPECT(x.c, NFS3ERR_NOENT, lookup_status(x.c, &x.dir, "missing", &r));
	ra = (REMOVE3args){ .object = { .dir = fh3(&x.dir), .name = "missing" } };
	NFS_EXPECT(x.c, NFS3ERR_NOENT, NFS3_STATUS(x.c, remove, REMOVE, &ra, &rr));
	NFS_EXPECT(x.c, NFS3ERR_NOENT, rmdir_of(x.c, &x.dir, "missing"));
	NFS_EXPECT(x.c, NFS3ERR_NOENT, rename_of(x.c, &x.dir, "missing", &x.dir, "other"));
	NFS_EXPECT(x.c, NFS3ERR_NOENT, nc_lookup(x.c, &x.sub, "missing", NULL, NULL));
	nc_close(x.c);
}

/* A handle of something removed is stale, even though the server may still hold it open. */
static void test_stale_after_remove(void **state)
{
	struct ctx x;
	uint8_t buf[16];
	struct fh gone_dir;

	ctx_open(state, "stale", &x);
	NFS_OK(x.c, nc_read(x.c, &x.file, 0, 10, buf, NULL, NULL));   /* the server opened it */
	NFS_OK(x.c, nc_remove(x.c, &x.dir, "file"));
	NFS_EXPECT(x.c, NFS3ERR_STALE, nc_getattr(x.c, &x.file, NULL));
	NFS_EXPECT(x.c, NFS3ERR_STALE, nc_read(x.c, &x.file, 0, 10, buf, NULL, NULL));
	NFS_EXPECT(x.c, NFS3ERR_STALE, nc_write(x.c, &x.file, 0, "x", 1, FILE_SYNC, NULL));
	NFS_EXPECT(x.c, NFS3ERR_STALE, nc_setattr_mode(x.c, &x.file, 0600));
	NFS_EXPECT(x.c, NFS3ERR_STALE, nc_commit(x.c, &x.file, 0, 0, NULL));

	NFS_OK(x.c, nc_mkdir(x.c, &x.dir, "d", 0755, &gone_dir));
	NFS_OK(x.c, rmdir_of(x.c, &x.dir, "d"));
	NFS_EXPECT(x.c, NFS3ERR_STALE, nc_getattr(x.c, &gone_dir, NULL));
	NFS_EXPECT(x.c, NFS3ERR_STALE, nc_lookup(x.c, &gone_dir, "x", NULL, NULL));
	NFS_EXPECT(x.c, NFS3ERR_STALE, nc_create(x.c, &gone_dir, "x", 0644, NULL));
	nc_close(x.c);
}

static void test_exist(void **state)
{
	struct ctx x;

	ctx_open(state, "exist", &x);
	NFS_EXPECT(x.c, NFS3ERR_EXIST, create_guarded(x.c, &x.dir, "file"));
	NFS_EXPECT(x.c, NFS3ERR_EXIST, create_guarded(x.c, &x.dir, "sub"));
	NFS_EXPECT(x.c, NFS3ERR_EXIST, nc_mkdir(x.c, &x.dir, "sub", 0755, NULL));
	NFS_EXPECT(x.c, NFS3ERR_EXIST, nc_mkdir(x.c, &x.dir, "file", 0755, NULL));
	NFS_EXPECT(x.c, NFS3ERR_EXIST, symlink_of(x.c, &x.dir, "file"));
	NFS_EXPECT(x.c, NFS3ERR_EXIST, link_of(x.c, &x.file, &x.dir, "sub"));
	NFS_EXPECT(x.c, NFS3ERR_EXIST, mknod_type(x.c, &x.dir, "file", NF3FIFO));
	nc_close(x.c);
}

static void test_notdir(void **state)
{
	struct ctx x;
	LOOKUP3res lr;
	READDIR3res rr;

	ctx_open(state, "notdir", &x);
	NFS_EXPECT(x.c, NFS3ERR_NOTDIR, lookup_status(x.c, &x.file, "x", &lr));
	NFS_EXPECT(x.c, NFS3ERR_NOTDIR, nc_create(x.c, &x.file, "x", 0644, NULL));
	NFS_EXPECT(x.c, NFS3ERR_NOTDIR, nc_mkdir(x.c, &x.file, "x", 0755, NULL));
	NFS_EXPECT(x.c, NFS3ERR_NOTDIR, nc_remove(x.c, &x.file, "x"));
	NFS_EXPECT(x.c, NFS3ERR_NOTDIR, readdir_of(x.c, &x.file, 0, NULL, 4096, &rr));
	NFS_EXPECT(x.c, NFS3ERR_NOTDIR, rmdir_of(x.c, &x.dir, "file"));
	NFS_EXPECT(x.c, NFS3ERR_NOTDIR, rename_of(x.c, &x.dir, "sub", &x.dir, "file"));
	nc_close(x.c);
}

static void test_isdir(void **state)
{
	struct ctx x;
	uint8_t buf[16];

	ctx_open(state, "isdir", &x);
	expect_either(x.c, nc_read(x.c, &x.sub, 0, 10, buf, NULL, NULL), NFS3ERR_ISDIR,
	              NFS3ERR_INVAL, "READ of a directory");
	expect_either(x.c, nc_write(x.c, &x.sub, 0, "x", 1, FILE_SYNC, NULL), NFS3ERR_ISDIR,
	              NFS3ERR_INVAL, "WRITE to a directory");
	expect_either(x.c, nc_remove(x.c, &x.dir, "sub"), NFS3ERR_ISDIR, NFS3ERR_PERM,
	              "REMOVE of a directory");
	expect_either(x.c, link_of(x.c, &x.sub, &x.dir, "hard"), NFS3ERR_ISDIR, NFS3ERR_PERM,
	              "LINK to a directory");
	NFS_EXPECT(x.c, NFS3ERR_ISDIR, rename_of(x.c, &x.dir, "file", &x.dir, "sub"));
	nc_close(x.c);
}

static void test_notempty(void **state)
{
	struct ctx x;

	ctx_open(state, "notempty", &x);
	NFS_EXPECT(x.c, NFS3ERR_NOTEMPTY, rmdir_of(x.c, &x.dir, "sub"));
	NFS_OK(x.c, nc_mkdir(x.c, &x.dir, "empty", 0755, NULL));
	expect_either(x.c, rename_of(x.c, &x.dir, "empty", &x.dir, "sub"), NFS3ERR_NOTEMPTY,
	              NFS3ERR_EXIST, "RENAME of a directory over a non-empty one");
	NFS_OK(x.c, nc_lookup(x.c, &x.sub, "inner", NULL, NULL));   /* nothing was lost */
	nc_close(x.c);
}

static void test_nametoolong(void **state)
{
	struct ctx x;
	char name[257];
	LOOKUP3res r;

	ctx_open(state, "nametoolong", &x);
	memset(name, 'n', 256);
	name[256] = '\0';
	NFS_EXPECT(x.c, NFS3ERR_NAMETOOLONG, lookup_status(x.c, &x.dir, name, &r));
	NFS_EXPECT(x.c, NFS3ERR_NAMETOOLONG, nc_create(x.c, &x.dir, name, 0644, NULL));
	NFS_EXPECT(x.c, NFS3ERR_NAMETOOLONG, nc_mkdir(x.c, &x.dir, name, 0755, NULL));
	NFS_EXPECT(x.c, NFS3ERR_NAMETOOLONG, symlink_of(x.c, &x.dir, name));
	NFS_EXPECT(x.c, NFS3ERR_NAMETOOLONG, rename_of(x.c, &x.dir, "file", &x.dir, name));
	NFS_EXPECT(x.c, NFS3ERR_NAMETOOLONG, link_of(x.c, &x.file, &x.dir, name));
	name[255] = '\0';                             /* 255 bytes is the limit, not past it */
	NFS_OK(x.c, nc_create(x.c, &x.dir, name, 0644, NULL));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, name, NULL, NULL));
	nc_close(x.c);
}

static void test_inval_badtype(void **state)
{
	struct ctx x;
	READLINK3args a;
	READLINK3res r;

	ctx_open(state, "inval", &x);
	a = (READLINK3args){ .symlink = fh3(&x.file) };
	NFS_EXPECT(x.c, NFS3ERR_INVAL, NFS3_STATUS(x.c, readlink, READLINK, &a, &r));
	/* MKNOD makes devices, sockets and fifos, not files, directories or links */
	NFS_EXPECT(x.c, NFS3ERR_BADTYPE, mknod_type(x.c, &x.dir, "r", NF3REG));
	NFS_EXPECT(x.c, NFS3ERR_BADTYPE, mknod_type(x.c, &x.dir, "d", NF3DIR));
	NFS_EXPECT(x.c, NFS3ERR_BADTYPE, mknod_type(x.c, &x.dir, "l", NF3LNK));
	NFS_EXPECT(x.c, NFS3ERR_NOENT, nc_lookup(x.c, &x.dir, "r", NULL, NULL));
	nc_close(x.c);
}

/* Two exports are two file systems to a client: RENAME and LINK between them are XDEV. */
static void test_xdev(void **state)
{
	struct ctx x;
	struct fh other_root;
	struct nfsclient *m;

	ctx_open(state, "xdev", &x);
	m = nc_connect(x.t->mount_port, MOUNT_PROGRAM, MOUNT_V3, 0, 0, 0, NULL);
	assert_non_null(m);
	NFS_EXPECT(m, MNT3_OK, nc_mnt(m, x.t->exports[EXP_ROOTSQ], &other_root));
	nc_close(m);
	NFS_EXPECT(x.c, NFS3ERR_XDEV, rename_of(x.c, &x.dir, "file", &other_root, "moved"));
	NFS_EXPECT(x.c, NFS3ERR_XDEV, link_of(x.c, &x.file, &other_root, "linked"));
	NFS_OK(x.c, nc_lookup(x.c, &x.dir, "file", NULL, NULL));
	nc_close(x.c);
}

static void test_not_sync(void **state)
{
	struct ctx x;
	fattr3 a;
	SETATTR3args sa;
	SETATTR3res r;

	ctx_open(state, "notsync", &x);
	NFS_OK(x.c, nc_getattr(x.c, &x.file, &a));
	memset(&sa, 0, sizeof(sa));
	sa.object = fh3(&x.file);
	sa.new_attributes.mode.set_it = 1;
	sa.new_attributes.mode.set_mode3_u.mode = 0600;
	sa.guard.check = 1;
	sa.guard.sattrguard3_u.obj_ctime = a.ctime;
	sa.guard.sattrguard3_u.obj_ctime.seconds -= 1;     /* someone changed it since */
	NFS_EXPECT(x.c, NFS3ERR_NOT_SYNC, NFS3_STATUS(x.c, setattr, SETATTR, &sa, &r));
	NFS_OK(x.c, nc_getattr(x.c, &x.file, &a));
	assert_int_equal(a.mode, 0644);                    /* and nothing was changed */
	sa.guard.sattrguard3_u.obj_ctime = a.ctime;
	NFS_OK(x.c, NFS3_STATUS(x.c, setattr, SETATTR, &sa, &r));
	assert_int_equal(post_attr(&r.SETATTR3res_u.resok.obj_wcc.after)->mode, 0600);
	nc_close(x.c);
}

static void make_entries(const struct ctx *x, int n)
{
	char p[PATH_MAX + 64];
	for (int i = 0; i < n; i++) {
		int fd;
		snprintf(p, sizeof(p), "%s/sub/entry-with-a-longish-name-%04d", x->path, i);
		fd = open(p, O_WRONLY | O_CREAT, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
}

static cookie3 last_cookie(const READDIR3res *r)
{
	cookie3 c = 0;
	for (const entry3 *e = r->READDIR3res_u.resok.reply.entries; e != NULL; e = e->nextentry)
		c = e->cookie;
	return c;
}

/* A cookie presented with a verifier the server never issued for it is refused. */
static void test_bad_cookie(void **state)
{
	struct ctx x;
	READDIR3res r;
	char verf[NFS3_COOKIEVERFSIZE], wrong[NFS3_COOKIEVERFSIZE];
	cookie3 cookie;

	ctx_open(state, "badcookie", &x);
	make_entries(&x, 200);
	NFS_OK(x.c, readdir_of(x.c, &x.sub, 0, NULL, 1024, &r));
	assert_false(r.READDIR3res_u.resok.reply.eof);
	memcpy(verf, r.READDIR3res_u.resok.cookieverf, sizeof(verf));
	cookie = last_cookie(&r);
	assert_true(cookie != 0);
	NFS_OK(x.c, readdir_of(x.c, &x.sub, cookie, verf, 1024, &r));     /* the right one */
	for (size_t i = 0; i < sizeof(wrong); i++)
		wrong[i] = (char)~verf[i];
	NFS_EXPECT(x.c, NFS3ERR_BAD_COOKIE, readdir_of(x.c, &x.sub, cookie, wrong, 1024, &r));
	nc_close(x.c);
}

static void test_toosmall(void **state)
{
	struct ctx x;
	READDIR3res r;

	ctx_open(state, "toosmall", &x);
	/* 16 bytes cannot hold the reply's fixed part, let alone an entry */
	NFS_EXPECT(x.c, NFS3ERR_TOOSMALL, readdir_of(x.c, &x.sub, 0, NULL, 16, &r));
	nc_close(x.c);
}

static void test_fbig(void **state)
{
	struct ctx x;

	ctx_open(state, "fbig", &x);
	/* past any Linux file system's largest file (ext4: 16 TiB) */
	NFS_EXPECT(x.c, NFS3ERR_FBIG,
	           nc_write(x.c, &x.file, (1ull << 62), "x", 1, FILE_SYNC, NULL));
	nc_close(x.c);
}

/* Handles the server never issued: a forged one, every one-byte corruption of a real one,
 * truncated and empty ones. None may reach a file. */
static void test_bad_handles(void **state)
{
	struct ctx x;
	struct fh h;

	ctx_open(state, "badhandle", &x);
	memset(h.data, 0x5a, sizeof(h.data));
	h.len = NFS3_FHSIZE;
	expect_either(x.c, nc_getattr(x.c, &h, NULL), NFS3ERR_BADHANDLE, NFS3ERR_STALE, "forged");
	for (u_int i = 0; i < x.file.len; i++) {
		char what[64];
		h = x.file;
		h.data[i] ^= 0x01;
		snprintf(what, sizeof(what), "handle with byte %u flipped", i);
		expect_either(x.c, nc_getattr(x.c, &h, NULL), NFS3ERR_BADHANDLE, NFS3ERR_STALE, what);
		expect_either(x.c, nc_write(x.c, &h, 0, "X", 1, FILE_SYNC, NULL), NFS3ERR_BADHANDLE,
		              NFS3ERR_STALE, what);
	}
	h = x.file;
	h.len--;
	expect_either(x.c, nc_getattr(x.c, &h, NULL), NFS3ERR_BADHANDLE, NFS3ERR_STALE, "truncated");
	h.len = 0;
	expect_either(x.c, nc_getattr(x.c, &h, NULL), NFS3ERR_BADHANDLE, NFS3ERR_STALE, "empty");
	/* and the file is untouched */
	{
		uint8_t buf[16];
		uint32_t got;
		NFS_OK(x.c, nc_read(x.c, &x.file, 0, 16, buf, &got, NULL));
		assert_int_equal(got, 10);
		assert_memory_equal(buf, "0123456789", 10);
	}
	nc_close(x.c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_noent),
		cmocka_unit_test(test_stale_after_remove),
		cmocka_unit_test(test_exist),
		cmocka_unit_test(test_notdir),
		cmocka_unit_test(test_isdir),
		cmocka_unit_test(test_notempty),
		cmocka_unit_test(test_nametoolong),
		cmocka_unit_test(test_inval_badtype),
		cmocka_unit_test(test_xdev),
		cmocka_unit_test(test_not_sync),
		cmocka_unit_test(test_bad_cookie),
		cmocka_unit_test(test_toosmall),
		cmocka_unit_test(test_fbig),
		cmocka_unit_test(test_bad_handles),
	};
	return IT_MAIN("integration-errors", tests);
}
