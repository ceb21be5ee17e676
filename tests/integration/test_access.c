/* Access control: AUTH_SYS credentials honoured per request, read-only exports, squashing,
 * AUTH_NONE, and exports that admit other hosts only. */
#include "checks.h"
#include "rawrpc.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define ACC_ALL (ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | \
                 ACCESS3_DELETE | ACCESS3_EXECUTE)
#define ACC_CHANGE (ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE)

static struct nfsclient *as_user(struct itest *t, int uid, int gid, uint32_t ngids,
                                 const uint32_t *gids)
{
	struct nfsclient *c = nc_connect(t->port, NFS_PROGRAM, NFS_V3, uid, gid, ngids, gids);
	assert_non_null(c);
	return c;
}

static uint32_t access_of(struct nfsclient *c, struct fh *f, uint32_t want)
{
	ACCESS3args a = { .object = fh3(f), .access = want };
	ACCESS3res r;

	NFS_OK(c, NFS3_STATUS(c, access, ACCESS, &a, &r));
	return r.ACCESS3res_u.resok.access;
}

static void expect_owner(const char *path, uid_t uid, gid_t gid)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	if (st.st_uid != uid || st.st_gid != gid)
		fail_msg("%s is owned by %u:%u, want %u:%u", path, (unsigned)st.st_uid,
		         (unsigned)st.st_gid, (unsigned)uid, (unsigned)gid);
}

/* The point of setfsuid per request: another user cannot read root's 0600 file. */
static void test_other_user_denied(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root), *u;
	uint8_t buf[32];

	it_workdir(c, &root, "other-user", &dir);
	NFS_OK(c, nc_create(c, &dir, "secret", 0600, &f));
	NFS_OK(c, nc_write(c, &f, 0, "top secret", 10, FILE_SYNC, NULL));
	u = as_user(t, 1000, 1000, 0, NULL);
	NFS_EXPECT(u, NFS3ERR_ACCES, nc_read(u, &f, 0, sizeof(buf), buf, NULL, NULL));
	NFS_EXPECT(u, NFS3ERR_ACCES, nc_write(u, &f, 0, "mine", 4, FILE_SYNC, NULL));
	NFS_EXPECT(u, NFS3ERR_PERM, nc_setattr_mode(u, &f, 0644));   /* chmod: owner only */
	assert_int_equal(access_of(u, &f, ACC_ALL) & (ACCESS3_READ | ACCESS3_MODIFY), 0);
	/* root still can, and nothing changed */
	NFS_OK(c, nc_read(c, &f, 0, sizeof(buf), buf, NULL, NULL));
	assert_memory_equal(buf, "top secret", 10);
	nc_close(u);
	nc_close(c);
}

static void test_user_owns_what_it_creates(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root), *u, *v;
	char path[PATH_MAX + 64];
	uint8_t buf[8];

	it_workdir(c, &root, "owner", &dir);
	u = as_user(t, 1000, 1000, 0, NULL);
	NFS_OK(u, nc_create(u, &dir, "mine", 0600, &f));
	NFS_OK(u, nc_mkdir(u, &dir, "mydir", 0700, NULL));
	it_path(t, EXP_RW, "owner/mine", path, sizeof(path));
	expect_owner(path, 1000, 1000);
	it_path(t, EXP_RW, "owner/mydir", path, sizeof(path));
	expect_owner(path, 1000, 1000);
	NFS_OK(u, nc_write(u, &f, 0, "data", 4, FILE_SYNC, NULL));
	NFS_OK(u, nc_read(u, &f, 0, 4, buf, NULL, NULL));
	NFS_OK(u, nc_setattr_mode(u, &f, 0640));
	v = as_user(t, 1001, 1001, 0, NULL);
	NFS_EXPECT(v, NFS3ERR_ACCES, nc_read(v, &f, 0, 4, buf, NULL, NULL));
	nc_close(v);
	nc_close(u);
	nc_close(c);
}

/* Group access through the primary gid and through the supplementary groups. */
static void test_groups(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root), *u;
	char path[PATH_MAX + 64];
	uint8_t buf[8];
	const uint32_t extra[] = { 2500, 3000 };

	it_workdir(c, &root, "groups", &dir);
	it_write_file(t, EXP_RW, "groups/team", "team", 4, 0640);
	it_path(t, EXP_RW, "groups/team", path, sizeof(path));
	assert_int_equal(chown(path, 0, 3000), 0);
	NFS_OK(c, nc_lookup(c, &dir, "team", &f, NULL));

	u = as_user(t, 2000, 3000, 0, NULL);
	NFS_OK(u, nc_read(u, &f, 0, 4, buf, NULL, NULL));
	NFS_EXPECT(u, NFS3ERR_ACCES, nc_write(u, &f, 0, "x", 1, FILE_SYNC, NULL));   /* 0640 */
	nc_close(u);
	u = as_user(t, 2000, 2000, 0, NULL);
	NFS_EXPECT(u, NFS3ERR_ACCES, nc_read(u, &f, 0, 4, buf, NULL, NULL));
	nc_close(u);
	u = as_user(t, 2000, 2000, 2, extra);
	NFS_OK(u, nc_read(u, &f, 0, 4, buf, NULL, NULL));
	nc_close(u);
	nc_close(c);
}

static void test_directory_permissions(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, closed, open_ro;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root), *u;

	it_workdir(c, &root, "dirperm", &dir);
	NFS_OK(c, nc_mkdir(c, &dir, "closed", 0700, &closed));
	NFS_OK(c, nc_setattr_mode(c, &closed, 0700));
	NFS_OK(c, nc_create(c, &closed, "inside", 0644, NULL));
	NFS_OK(c, nc_mkdir(c, &dir, "open-ro", 0755, &open_ro));
	NFS_OK(c, nc_setattr_mode(c, &open_ro, 0755));
	u = as_user(t, 1000, 1000, 0, NULL);
	NFS_EXPECT(u, NFS3ERR_ACCES, nc_lookup(u, &closed, "inside", NULL, NULL));
	NFS_EXPECT(u, NFS3ERR_ACCES, nc_create(u, &open_ro, "nope", 0644, NULL));
	NFS_EXPECT(u, NFS3ERR_ACCES, nc_mkdir(u, &open_ro, "nope", 0755, NULL));
	NFS_OK(c, nc_create(c, &open_ro, "roots", 0666, NULL));
	NFS_EXPECT(u, NFS3ERR_ACCES, nc_remove(u, &open_ro, "roots"));
	nc_close(u);
	nc_close(c);
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

static int rename_of(struct nfsclient *c, struct fh *dir, const char *from, const char *to)
{
	RENAME3args a = { .from = { .dir = fh3(dir), .name = (char *)from },
	                  .to = { .dir = fh3(dir), .name = (char *)to } };
	RENAME3res r;
	return NFS3_STATUS(c, rename, RENAME, &a, &r);
}

static int link_of(struct nfsclient *c, struct fh *f, struct fh *dir, const char *name)
{
	LINK3args a = { .file = fh3(f), .link = { .dir = fh3(dir), .name = (char *)name } };
	LINK3res r;
	return NFS3_STATUS(c, link, LINK, &a, &r);
}

static int rmdir_of(struct nfsclient *c, struct fh *dir, const char *name)
{
	RMDIR3args a = { .object = { .dir = fh3(dir), .name = (char *)name } };
	RMDIR3res r;
	return NFS3_STATUS(c, rmdir, RMDIR, &a, &r);
}

/* Root on a read-only export reads, and every change is refused with ROFS. */
static void test_read_only_export(void **state)
{
	struct itest *t = *state;
	struct fh root, hello;
	struct nfsclient *c;
	char path[PATH_MAX + 64];
	uint8_t buf[64];
	uint32_t got;

	mkdir(strcat(strcpy(path, t->exports[EXP_RO]), "/subdir"), 0755);
	c = it_client(t, EXP_RO, 0, 0, &root);
	NFS_OK(c, nc_lookup(c, &root, IT_HELLO_NAME, &hello, NULL));
	NFS_OK(c, nc_read(c, &hello, 0, sizeof(buf), buf, &got, NULL));
	assert_int_equal(got, strlen(IT_HELLO_TEXT));
	assert_memory_equal(buf, IT_HELLO_TEXT, got);

	NFS_EXPECT(c, NFS3ERR_ROFS, nc_write(c, &hello, 0, "X", 1, FILE_SYNC, NULL));
	NFS_EXPECT(c, NFS3ERR_ROFS, nc_write(c, &hello, 0, "X", 1, UNSTABLE, NULL));
	NFS_EXPECT(c, NFS3ERR_ROFS, nc_setattr_mode(c, &hello, 0600));
	NFS_EXPECT(c, NFS3ERR_ROFS, nc_create(c, &root, "new", 0644, NULL));
	NFS_EXPECT(c, NFS3ERR_ROFS, nc_mkdir(c, &root, "newdir", 0755, NULL));
	NFS_EXPECT(c, NFS3ERR_ROFS, symlink_of(c, &root, "newlink"));
	NFS_EXPECT(c, NFS3ERR_ROFS, nc_remove(c, &root, IT_HELLO_NAME));
	NFS_EXPECT(c, NFS3ERR_ROFS, rmdir_of(c, &root, "subdir"));
	NFS_EXPECT(c, NFS3ERR_ROFS, rename_of(c, &root, IT_HELLO_NAME, "renamed"));
	NFS_EXPECT(c, NFS3ERR_ROFS, link_of(c, &hello, &root, "hard"));
	/* ACCESS does not promise what the export will refuse */
	assert_int_equal(access_of(c, &hello, ACC_ALL) & (ACCESS3_MODIFY | ACCESS3_EXTEND), 0);
	assert_int_equal(access_of(c, &root, ACC_ALL) & ACC_CHANGE, 0);
	assert_true(access_of(c, &root, ACC_ALL) & ACCESS3_LOOKUP);

	it_path(t, EXP_RO, IT_HELLO_NAME, path, sizeof(path));
	{
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_size, strlen(IT_HELLO_TEXT));
		assert_int_equal(st.st_mode & 07777, 0644);
	}
	nc_close(c);
}

static void test_root_squash(void **state)
{
	struct itest *t = *state;
	struct fh root, f;
	struct nfsclient *c, *u;
	char path[PATH_MAX + 64];
	uint8_t buf[8];

	it_write_file(t, EXP_ROOTSQ, "roots-secret", "secret", 6, 0600);
	c = it_client(t, EXP_ROOTSQ, 0, 0, &root);
	NFS_OK(c, nc_create(c, &root, "by-root", 0644, NULL));
	it_path(t, EXP_ROOTSQ, "by-root", path, sizeof(path));
	expect_owner(path, 65534, 65534);
	NFS_OK(c, nc_lookup(c, &root, "roots-secret", &f, NULL));
	NFS_EXPECT(c, NFS3ERR_ACCES, nc_read(c, &f, 0, sizeof(buf), buf, NULL, NULL));
	u = as_user(t, 1000, 1000, 0, NULL);          /* other users are left as they are */
	NFS_OK(u, nc_create(u, &root, "by-user", 0644, NULL));
	it_path(t, EXP_ROOTSQ, "by-user", path, sizeof(path));
	expect_owner(path, 1000, 1000);
	nc_close(u);
	nc_close(c);
}

static void test_all_squash(void **state)
{
	struct itest *t = *state;
	struct fh root;
	struct nfsclient *c = it_client(t, EXP_ALLSQ, 1000, 1000, &root), *r;
	char path[PATH_MAX + 64];

	NFS_OK(c, nc_create(c, &root, "by-user", 0644, NULL));
	it_path(t, EXP_ALLSQ, "by-user", path, sizeof(path));
	expect_owner(path, 65534, 65534);
	r = as_user(t, 0, 0, 0, NULL);
	NFS_OK(r, nc_create(r, &root, "by-root", 0644, NULL));
	it_path(t, EXP_ALLSQ, "by-root", path, sizeof(path));
	expect_owner(path, 65534, 65534);
	nc_close(r);
	nc_close(c);
}

/* AUTH_NONE is the anonymous user: no more than "other" may. */
static void test_auth_none(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, closed;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root), *anon;
	char path[PATH_MAX + 64];

	it_workdir(c, &root, "authnone", &dir);
	NFS_OK(c, nc_mkdir(c, &dir, "closed", 0755, &closed));
	NFS_OK(c, nc_setattr_mode(c, &closed, 0755));
	anon = nc_connect_authnone(t->port, NFS_PROGRAM, NFS_V3);
	assert_non_null(anon);
	NFS_EXPECT(anon, NFS3ERR_ACCES, nc_create(anon, &closed, "x", 0644, NULL));
	NFS_OK(anon, nc_create(anon, &dir, "anon-file", 0644, NULL));
	it_path(t, EXP_RW, "authnone/anon-file", path, sizeof(path));
	expect_owner(path, 65534, 65534);
	nc_close(anon);
	nc_close(c);
}

/* MNT over a raw socket whose source is 127.0.0.2, the one host the private export admits. */
static void raw_mnt_private(struct itest *t, struct fh *out)
{
	struct xb call = { .len = 0 }, cred = { .len = 0 };
	uint8_t buf[4096];
	struct raw_reply r;
	int fd = raw_connect(t->mount_port, IT_PRIVATE_CLIENT);

	assert_true(fd >= 0);
	xb_auth_sys(&cred, 0, 0);
	xb_call(&call, 0x1234, 2, MOUNT_PROGRAM, MOUNT_V3, MOUNT3_MNT, RAW_AUTH_SYS, &cred);
	xb_string(&call, t->exports[EXP_PRIVATE]);
	assert_int_equal(raw_call(fd, &call, buf, sizeof(buf), &r), 0);
	assert_int_equal(r.reply_stat, 0);
	assert_int_equal(r.accept_stat, 0);
	assert_true(r.body_len >= 8);
	assert_int_equal(get_u32(r.body), MNT3_OK);
	out->len = get_u32(r.body + 4);
	assert_in_range(out->len, 1, NFS3_FHSIZE);
	assert_true(r.body_len >= 8 + out->len);
	memcpy(out->data, r.body + 8, out->len);
	close(fd);
}

static uint32_t raw_getattr_status(uint16_t port, const char *src, const struct fh *f)
{
	struct xb call = { .len = 0 }, cred = { .len = 0 };
	uint8_t buf[4096];
	struct raw_reply r;
	int fd = raw_connect(port, src);

	assert_true(fd >= 0);
	xb_auth_sys(&cred, 0, 0);
	xb_call(&call, 0x4321, 2, NFS_PROGRAM, NFS_V3, NFS3_GETATTR, RAW_AUTH_SYS, &cred);
	xb_opaque(&call, f->data, f->len);
	assert_int_equal(raw_call(fd, &call, buf, sizeof(buf), &r), 0);
	assert_int_equal(r.reply_stat, 0);
	assert_int_equal(r.accept_stat, 0);
	assert_true(r.body_len >= 4);
	close(fd);
	return get_u32(r.body);
}

/* A handle of an export this host may not use gets it nothing, though it is a real handle. */
static void test_private_export(void **state)
{
	struct itest *t = *state;
	struct fh priv, root;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	int st;

	raw_mnt_private(t, &priv);
	assert_int_equal(raw_getattr_status(t->port, IT_PRIVATE_CLIENT, &priv), NFS3_OK);
	assert_int_equal(raw_getattr_status(t->port, NULL, &priv) == NFS3_OK, 0);
	st = nc_getattr(c, &priv, NULL);
	if (st != NFS3ERR_ACCES && st != NFS3ERR_STALE && st != NFS3ERR_PERM &&
	    st != NFS3ERR_BADHANDLE)
		fail_msg("GETATTR from 127.0.0.1 with the private export's root handle: got %s (%d), "
		         "want ACCES, PERM, STALE or BADHANDLE", nc_status_name(st), st);
	NFS_EXPECT(c, st, nc_create(c, &priv, "intruder", 0644, NULL));
	{
		char path[PATH_MAX + 64];
		it_path(t, EXP_PRIVATE, "intruder", path, sizeof(path));
		assert_int_equal(access(path, F_OK), -1);
	}
	nc_close(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_user_denied),
		cmocka_unit_test(test_user_owns_what_it_creates),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_directory_permissions),
		cmocka_unit_test(test_read_only_export),
		cmocka_unit_test(test_root_squash),
		cmocka_unit_test(test_all_squash),
		cmocka_unit_test(test_auth_none),
		cmocka_unit_test(test_private_export),
	};
	return IT_MAIN("integration-access", tests);
}
