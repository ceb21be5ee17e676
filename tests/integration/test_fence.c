/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc as a pNFS flexfiles data server (RFC 8435, loosely coupled): the contract a metadata
 * server relies on. The MDS (root) creates a data file and gives it to a synthetic uid; the
 * client writes as that uid; the MDS fences the client out by changing the owner (or the mode),
 * and the very next READ, WRITE and COMMIT of the fenced uid answer NFS3ERR_ACCES on each ring,
 * whatever the daemon holds open, while the new owner goes on and finds every byte acknowledged
 * before the fence. Across a restart the handles stay valid and the write verifier changes, so
 * a client's COMMIT tells it to send its unstable data again. */
#include "checks.h"
#include "rawnfs.h"

#include <unistd.h>

#include <stdio.h>
#include <string.h>

#define UID_A 20001
#define UID_B 20002
#define CHUNK 65536

static void set_owner(struct nfsclient *c, struct fh *f, uint32_t uid, uint32_t gid)
{
	SETATTR3args a;
	SETATTR3res r;
	memset(&a, 0, sizeof a);
	a.object = fh3(f);
	a.new_attributes.uid.set_it = 1;
	a.new_attributes.uid.set_uid3_u.uid = uid;
	a.new_attributes.gid.set_it = 1;
	a.new_attributes.gid.set_gid3_u.gid = gid;
	NFS_OK(c, NFS3_STATUS(c, setattr, SETATTR, &a, &r));
}

static struct nfsclient *as_user(struct itest *t, int uid)
{
	struct nfsclient *c = nc_connect(t->port, NFS_PROGRAM, NFS_V3, uid, uid, 0, NULL);
	assert_non_null(c);
	return c;
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 9));
}

/* The MDS's part: a data file given to uid A, mode 0640, as a layout names it. */
static struct nfsclient *mds_file(struct itest *t, const char *name, struct fh *f)
{
	struct fh root, dir;
	struct nfsclient *mds = it_client(t, EXP_RW, 0, 0, &root);
	if (nc_lookup(mds, &root, "ds", &dir, NULL) != NFS3_OK)
		it_workdir(mds, &root, "ds", &dir);
	NFS_OK(mds, nc_create(mds, &dir, name, 0640, f));
	set_owner(mds, f, UID_A, UID_A);
	return mds;
}

static void expect_fenced(struct nfsclient *c, struct fh *f)
{
	uint8_t buf[64];
	NFS_EXPECT(c, NFS3ERR_ACCES, nc_read(c, f, 0, sizeof buf, buf, NULL, NULL));
	NFS_EXPECT(c, NFS3ERR_ACCES, nc_write(c, f, 0, "late", 4, UNSTABLE, NULL));
	NFS_EXPECT(c, NFS3ERR_ACCES, nc_write(c, f, 0, "late", 4, FILE_SYNC, NULL));
	NFS_EXPECT(c, NFS3ERR_ACCES, nc_commit(c, f, 0, 0, NULL));
}

static void expect_bytes(struct nfsclient *c, struct fh *f, uint64_t off, const uint8_t *want,
			 uint32_t len)
{
	static uint8_t got[3 * CHUNK];
	uint32_t n = 0;
	NFS_OK(c, nc_read(c, f, off, len, got, &n, NULL));
	assert_int_equal(n, len);
	assert_memory_equal(got, want, len);
}

static void test_owner_change_fences_at_once(void **state)
{
	struct itest *t = *state;
	struct fh f;
	static uint8_t data[3 * CHUNK];
	fill(data, sizeof data, 1);
	struct nfsclient *mds = mds_file(t, "owner-fence", &f);
	/* consecutive connections: one on each ring of the harness's two */
	struct nfsclient *a[2] = {as_user(t, UID_A), as_user(t, UID_A)};
	NFS_OK(a[0], nc_write(a[0], &f, 0, data, CHUNK, UNSTABLE, NULL));
	NFS_OK(a[1], nc_write(a[1], &f, CHUNK, data + CHUNK, CHUNK, UNSTABLE, NULL));
	NFS_OK(a[0], nc_commit(a[0], &f, 0, 0, NULL));
	/* acknowledged, not committed: still the client's, whatever comes */
	NFS_OK(a[1], nc_write(a[1], &f, 2 * CHUNK, data + 2 * CHUNK, CHUNK, UNSTABLE, NULL));
	expect_bytes(a[0], &f, 0, data, sizeof data);   /* open for A on both rings */
	expect_bytes(a[1], &f, 0, data, sizeof data);

	set_owner(mds, &f, UID_B, UID_B);
	for (int i = 0; i < 2; i++)
		expect_fenced(a[i], &f);

	struct nfsclient *b = as_user(t, UID_B);
	expect_bytes(b, &f, 0, data, sizeof data);
	NFS_OK(b, nc_write(b, &f, 3 * CHUNK, "new owner", 9, UNSTABLE, NULL));
	NFS_OK(b, nc_commit(b, &f, 0, 0, NULL));
	expect_bytes(mds, &f, 0, data, sizeof data);
	nc_close(b);
	nc_close(a[0]);
	nc_close(a[1]);
	nc_close(mds);
}

/* A mode change fences the group and others, not the owner: as knfsd, a file's owner reads and
 * writes it whatever its mode (the client checked the mode when it opened it). */
static void test_mode_change_fences_others(void **state)
{
	struct itest *t = *state;
	struct fh f;
	struct nfsclient *mds = mds_file(t, "mode-fence", &f);
	set_owner(mds, &f, UID_A, UID_B);   /* owner A, group B */
	struct nfsclient *a = as_user(t, UID_A), *b = as_user(t, UID_B);
	NFS_OK(a, nc_write(a, &f, 0, "by A", 4, UNSTABLE, NULL));
	uint8_t buf[8];
	NFS_OK(b, nc_read(b, &f, 0, 4, buf, NULL, NULL));   /* group may read at 0640 */
	NFS_OK(mds, nc_setattr_mode(mds, &f, 0600));
	NFS_EXPECT(b, NFS3ERR_ACCES, nc_read(b, &f, 0, 4, buf, NULL, NULL));
	NFS_OK(mds, nc_setattr_mode(mds, &f, 0000));
	NFS_OK(a, nc_write(a, &f, 4, " too", 4, UNSTABLE, NULL));
	NFS_OK(a, nc_commit(a, &f, 0, 0, NULL));
	expect_bytes(a, &f, 0, (const uint8_t *)"by A too", 8);
	nc_close(a);
	nc_close(b);
	nc_close(mds);
}

/* The daemon restarted between a client's WRITEs and its COMMIT: the handle still works, the
 * COMMIT's verifier differs from the WRITEs', and the data the client then sends again lands. */
static void test_restart_changes_verifier(void **state)
{
	struct itest *t = *state;
	struct fh f;
	static uint8_t data[2 * CHUNK];
	fill(data, sizeof data, 2);
	struct nfsclient *mds = mds_file(t, "restart", &f);
	nc_close(mds);
	struct nfsclient *a = as_user(t, UID_A);
	WRITE3resok ok;
	NFS_OK(a, nc_write(a, &f, 0, data, sizeof data, UNSTABLE, &ok));
	char before[NFS3_WRITEVERFSIZE], after[NFS3_WRITEVERFSIZE];
	memcpy(before, ok.verf, sizeof before);
	nc_close(a);
	assert_int_equal(it_stop(t), 0);
	assert_int_equal(it_start(t), 0);
	a = as_user(t, UID_A);
	NFS_OK(a, nc_commit(a, &f, 0, 0, after));
	if (memcmp(before, after, sizeof before) == 0)
		fail_msg("the write verifier did not change across a restart");
	/* what a client does then: send its unstable data again, and COMMIT */
	NFS_OK(a, nc_write(a, &f, 0, data, sizeof data, UNSTABLE, &ok));
	NFS_OK(a, nc_commit(a, &f, 0, 0, after));
	assert_memory_equal(ok.verf, after, sizeof after);
	expect_bytes(a, &f, 0, data, sizeof data);
	nc_close(a);
}

static int create_guarded(struct nfsclient *c, struct fh *dir, const char *name, struct fh *out)
{
	CREATE3args a;
	CREATE3res r;
	memset(&a, 0, sizeof a);
	a.where.dir = fh3(dir);
	a.where.name = (char *)name;
	a.how.mode = GUARDED;
	a.how.createhow3_u.obj_attributes.mode.set_it = 1;
	a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0640;
	int st = NFS3_STATUS(c, create, CREATE, &a, &r);
	if (st == NFS3_OK && out) {
		if (!r.CREATE3res_u.resok.obj.handle_follows)
			return nc_lookup(c, dir, name, out, NULL);
		fh_copy(out, &r.CREATE3res_u.resok.obj.post_op_fh3_u.handle);
	}
	return st;
}

/* SETATTR size = n, guarded by the ctime the MDS last saw (RFC 1813 sattrguard3). */
static int truncate_guarded(struct nfsclient *c, struct fh *f, uint64_t n, nfstime3 ctime)
{
	SETATTR3args a;
	SETATTR3res r;
	memset(&a, 0, sizeof a);
	a.object = fh3(f);
	a.new_attributes.size.set_it = 1;
	a.new_attributes.size.set_size3_u.size = n;
	a.guard.check = 1;
	a.guard.sattrguard3_u.obj_ctime = ctime;
	return NFS3_STATUS(c, setattr, SETATTR, &a, &r);
}

/* The MDS's own calls: many data files made GUARDED in one directory (a second time: EXIST),
 * GETATTR sizes that count bytes still in the cache, a truncate refused on a ctime from before
 * another change and done on the current one, the bytes below the new size kept. */
static void test_mds_calls(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, f;
	struct nfsclient *mds = it_client(t, EXP_RW, 0, 0, &root);
	it_workdir(mds, &root, "mds-many", &dir);
	char name[32];
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "stripe-%03d", i);
		NFS_OK(mds, create_guarded(mds, &dir, name, i == 7 ? &f : NULL));
	}
	NFS_EXPECT(mds, NFS3ERR_EXIST, create_guarded(mds, &dir, "stripe-007", NULL));
	set_owner(mds, &f, UID_A, UID_A);
	struct nfsclient *a = as_user(t, UID_A);
	static uint8_t data[CHUNK];
	fill(data, sizeof data, 3);
	NFS_OK(a, nc_write(a, &f, 1000000, data, 4097, UNSTABLE, NULL));   /* not on disk yet */
	fattr3 at;
	NFS_OK(mds, nc_getattr(mds, &f, &at));
	assert_int_equal(at.size, 1000000 + 4097);
	nfstime3 seen = at.ctime;
	NFS_OK(a, nc_write(a, &f, 0, "moved ctime", 11, UNSTABLE, NULL));
	NFS_OK(mds, nc_setattr_mode(mds, &f, 0660));   /* another change since the MDS looked */
	NFS_OK(mds, nc_getattr(mds, &f, &at));
	if (at.ctime.seconds == seen.seconds && at.ctime.nseconds == seen.nseconds)
		skip();   /* a ctime too coarse to see the change: nothing to guard against */
	NFS_EXPECT(mds, NFS3ERR_NOT_SYNC, truncate_guarded(mds, &f, 4096, seen));
	NFS_OK(mds, truncate_guarded(mds, &f, 4096, at.ctime));
	NFS_OK(mds, nc_getattr(mds, &f, &at));
	assert_int_equal(at.size, 4096);
	expect_bytes(a, &f, 0, (const uint8_t *)"moved ctime", 11);
	nc_close(a);
	nc_close(mds);
}

/* The MDS removes a data file while a client has WRITEs to it in flight: every WRITE gets its
 * answer (OK, or STALE once the file is gone), the name is free again at once, and the server
 * goes on serving. */
static void test_remove_with_writes_in_flight(void **state)
{
	struct itest *t = *state;
	enum { N = 200 };
	int fd = raw_connect(t->port, NULL);
	assert_true(fd >= 0);
	struct rn_fh root, file;
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_create(fd, &root, "doomed", &file), 0);
	static uint8_t data[4096];
	fill(data, sizeof data, 4);
	static struct xb b;
	for (uint32_t i = 0; i < N; i++) {
		b.len = 0;
		rn_enc_write(&b, 0x52000000u + i, &file, (uint64_t)i * sizeof data, data, sizeof data,
			     RN_UNSTABLE);
		assert_int_equal(raw_send_record(fd, b.buf, b.len), 0);
		if (i == N / 2) {   /* half sent: the MDS removes it */
			struct fh mroot, none;
			struct nfsclient *mds = it_client(t, EXP_RW, 0, 0, &mroot);
			NFS_OK(mds, nc_remove(mds, &mroot, "doomed"));
			NFS_EXPECT(mds, NFS3ERR_NOENT, nc_lookup(mds, &mroot, "doomed", &none, NULL));
			nc_close(mds);
		}
	}
	static uint8_t rec[65536];
	for (int i = 0; i < N; i++) {
		ssize_t n = raw_recv_record(fd, rec, sizeof rec, 30000);
		struct raw_reply r;
		if (n < 0 || raw_parse_reply(rec, (size_t)n, &r) < 0)
			fail_msg("WRITE reply %d of %d: none (%zd)", i + 1, N, n);
		uint32_t count, committed;
		int st = rn_dec_write(&r, &count, &committed);
		if (st != NFS3_OK && st != NFS3ERR_STALE)
			fail_msg("WRITE %d answered %d", i + 1, st);
	}
	close(fd);
	struct fh r2, again;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &r2);
	NFS_OK(c, nc_create(c, &r2, "doomed", 0644, &again));
	NFS_OK(c, nc_write(c, &again, 0, "fresh", 5, FILE_SYNC, NULL));
	expect_bytes(c, &again, 0, (const uint8_t *)"fresh", 5);
	nc_close(c);
	it_assert_served(t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_change_fences_at_once),
		cmocka_unit_test(test_mode_change_fences_others),
		cmocka_unit_test(test_restart_changes_verifier),
		cmocka_unit_test(test_mds_calls),
		cmocka_unit_test(test_remove_with_writes_in_flight),
	};
	return IT_MAIN("integration-fence", tests);
}
