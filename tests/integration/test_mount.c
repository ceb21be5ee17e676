/* MOUNT v3: the six procedures on success, MNT refusals, and both programs on both ports. */
#include "client.h"

#include <string.h>
#include <sys/stat.h>

static struct nfsclient *mount_client(uint16_t port)
{
	struct nfsclient *m = nc_connect(port, MOUNT_PROGRAM, MOUNT_V3, 0, 0, 0, NULL);
	assert_non_null(m);
	return m;
}

static void test_null(void **state)
{
	struct itest *t = *state;
	struct nfsclient *m = mount_client(t->mount_port);

	assert_int_equal(NC_VOID0(m, rpc_mount3_null_async), 0);
	nc_close(m);
}

/* MNT hands out a handle of at most 64 bytes, the same one each time, naming the export's
 * root directory, and offers AUTH_SYS. */
static void test_mnt(void **state)
{
	struct itest *t = *state;
	struct nfsclient *m = mount_client(t->mount_port);
	mountres3 r;
	struct fh first, again;
	int has_sys = 0;

	assert_int_equal(NC_CALL(m, rpc_mount3_mnt_async, t->exports[EXP_RW], zdr_mountres3, &r), 0);
	assert_int_equal(r.fhs_status, MNT3_OK);
	assert_in_range(r.mountres3_u.mountinfo.fhandle.fhandle3_len, 1, NFS3_FHSIZE);
	for (u_int i = 0; i < r.mountres3_u.mountinfo.auth_flavors.auth_flavors_len; i++)
		has_sys |= r.mountres3_u.mountinfo.auth_flavors.auth_flavors_val[i] == AUTH_UNIX;
	assert_true(has_sys);

	NFS_EXPECT(m, MNT3_OK, nc_mnt(m, t->exports[EXP_RW], &first));
	NFS_EXPECT(m, MNT3_OK, nc_mnt(m, t->exports[EXP_RW], &again));
	assert_true(fh_equal(&first, &again));
	nc_close(m);
}

/* The handle MNT gave is the export's root: GETATTR over NFS matches stat(2). */
static void test_mnt_handle_is_root(void **state)
{
	struct itest *t = *state;
	struct fh root;
	struct nfsclient *c = it_client(t, EXP_RO, 0, 0, &root);
	struct stat st;
	fattr3 a;

	NFS_OK(c, nc_getattr(c, &root, &a));
	assert_int_equal(stat(t->exports[EXP_RO], &st), 0);
	assert_int_equal(a.type, NF3DIR);
	assert_int_equal(a.mode & 07777, st.st_mode & 07777);
	assert_int_equal(a.uid, st.st_uid);
	assert_int_equal(a.nlink, st.st_nlink);
	NFS_OK(c, nc_lookup(c, &root, IT_HELLO_NAME, NULL, &a));
	assert_int_equal(a.type, NF3REG);
	assert_int_equal(a.size, strlen(IT_HELLO_TEXT));
	nc_close(c);
}

static int dump_has(mountlist ml, const char *dir)
{
	int n = 0;
	for (; ml != NULL; ml = ml->ml_next)
		n += strcmp(ml->ml_directory, dir) == 0;
	return n;
}

/* DUMP lists what was mounted (as showmount -a shows), UMNT and UMNTALL take it away. */
static void test_dump_umnt_umntall(void **state)
{
	struct itest *t = *state;
	struct nfsclient *m = mount_client(t->mount_port);
	mountlist ml;

	NFS_EXPECT(m, MNT3_OK, nc_mnt(m, t->exports[EXP_RW], NULL));
	NFS_EXPECT(m, MNT3_OK, nc_mnt(m, t->exports[EXP_RO], NULL));
	assert_int_equal(NC_CALL0(m, rpc_mount3_dump_async, zdr_mountlist, &ml), 0);
	assert_true(dump_has(ml, t->exports[EXP_RW]) >= 1);
	assert_true(dump_has(ml, t->exports[EXP_RO]) >= 1);
	for (mountlist p = ml; p != NULL; p = p->ml_next)
		assert_true(p->ml_hostname != NULL && p->ml_hostname[0] != '\0');

	assert_int_equal(NC_VOID(m, rpc_mount3_umnt_async, t->exports[EXP_RW]), 0);
	assert_int_equal(NC_CALL0(m, rpc_mount3_dump_async, zdr_mountlist, &ml), 0);
	assert_int_equal(dump_has(ml, t->exports[EXP_RW]), 0);
	assert_true(dump_has(ml, t->exports[EXP_RO]) >= 1);

	assert_int_equal(NC_VOID0(m, rpc_mount3_umntall_async), 0);
	assert_int_equal(NC_CALL0(m, rpc_mount3_dump_async, zdr_mountlist, &ml), 0);
	assert_int_equal(dump_has(ml, t->exports[EXP_RO]), 0);
	nc_close(m);
}

/* EXPORT lists every export once (as showmount -e shows), each with its clients. */
static void test_export(void **state)
{
	struct itest *t = *state;
	struct nfsclient *m = mount_client(t->mount_port);
	exports ex;
	int seen[EXP_COUNT] = { 0 };

	assert_int_equal(NC_CALL0(m, rpc_mount3_export_async, zdr_exports, &ex), 0);
	for (exports e = ex; e != NULL; e = e->ex_next) {
		for (int i = 0; i < EXP_COUNT; i++)
			seen[i] += strcmp(e->ex_dir, t->exports[i]) == 0;
		assert_non_null(e->ex_groups);
	}
	for (int i = 0; i < EXP_COUNT; i++) {
		if (seen[i] != 1)
			fail_msg("EXPORT lists %s %d times", t->exports[i], seen[i]);
	}
	nc_close(m);
}

static void expect_mnt_refused(struct nfsclient *m, const char *path)
{
	int st = nc_mnt(m, path, NULL);

	if (st != MNT3ERR_ACCES && st != MNT3ERR_NOENT)
		fail_msg("MNT %s: got %d (%s), want MNT3ERR_ACCES or MNT3ERR_NOENT", path, st,
		         st < 0 ? m->call.err : mountstat3_to_str(st));
}

static void test_mnt_refused(void **state)
{
	struct itest *t = *state;
	struct nfsclient *m = mount_client(t->mount_port);
	char path[PATH_MAX + 32];

	expect_mnt_refused(m, "/nonexistent/nfsd-uc-it");
	expect_mnt_refused(m, t->dir);                 /* parent of the exports, not exported */
	snprintf(path, sizeof(path), "%s/state", t->dir);
	expect_mnt_refused(m, path);                   /* exists, not exported */
	expect_mnt_refused(m, "export");               /* relative */
	/* exported, but not to 127.0.0.1 */
	NFS_EXPECT(m, MNT3ERR_ACCES, nc_mnt(m, t->exports[EXP_PRIVATE], NULL));
	nc_close(m);
}

/* Dispatch is by program number: MOUNT is served on the NFS port and NFS on the MOUNT port. */
static void test_both_programs_on_both_ports(void **state)
{
	struct itest *t = *state;
	struct nfsclient *m = mount_client(t->port);
	struct nfsclient *c;
	struct fh root;
	fattr3 a;

	NFS_EXPECT(m, MNT3_OK, nc_mnt(m, t->exports[EXP_RW], &root));
	nc_close(m);
	c = nc_connect(t->mount_port, NFS_PROGRAM, NFS_V3, 0, 0, 0, NULL);
	assert_non_null(c);
	NFS_OK(c, nc_getattr(c, &root, &a));
	assert_int_equal(a.type, NF3DIR);
	nc_close(c);
}

static void test_highlevel_client(void **state)
{
	it_assert_served(*state);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_mnt),
		cmocka_unit_test(test_mnt_handle_is_root),
		cmocka_unit_test(test_dump_umnt_umntall),
		cmocka_unit_test(test_export),
		cmocka_unit_test(test_mnt_refused),
		cmocka_unit_test(test_both_programs_on_both_ports),
		cmocka_unit_test(test_highlevel_client),
	};
	return IT_MAIN("integration-mount", tests);
}
