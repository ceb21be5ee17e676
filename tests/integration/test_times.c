/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A cached WRITE sets the file's mtime and ctime when it is answered, as if its bytes were on
 * disk then; write-behind and COMMIT, which put them there later, change neither. A client that
 * sees the times move without a WRITE of its own takes the file for changed by someone else and
 * drops its cache of it. Write-behind can keep the times only on XFS (src/nocmtime.c): run on
 * XFS by on_xfs.sh; elsewhere the test is skipped. */
#include "checks.h"
#include "rawnfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#define MIB (1024u * 1024u)
#define REC 47008u
#define XFS_MAGIC 0x58465342

/* ctime too unless only the mtime is promised (see the COMMIT below) */
static void assert_times(const char *when, const fattr3 *got, const fattr3 *want, bool ctime)
{
	if (nfstime_cmp(got->mtime, want->mtime) || (ctime && nfstime_cmp(got->ctime, want->ctime)))
		fail_msg("%s: mtime %u.%09u ctime %u.%09u, the last WRITE said %u.%09u / %u.%09u", when,
			 got->mtime.seconds, got->mtime.nseconds, got->ctime.seconds,
			 got->ctime.nseconds, want->mtime.seconds, want->mtime.nseconds,
			 want->ctime.seconds, want->ctime.nseconds);
}

/* Misaligned UNSTABLE records over size bytes (whole chunks go to write-behind at once, the
 * partial tail waits for COMMIT); the attributes the last WRITE returned. */
static fattr3 write_file(struct nfsclient *c, struct fh *f, uint64_t size)
{
	unsigned char *buf = malloc(REC);
	WRITE3resok ok = {0};

	assert_non_null(buf);
	for (uint64_t off = 0; off < size; off += REC) {
		uint32_t len = (uint32_t)(size - off < REC ? size - off : REC);
		memset(buf, (int)(off / REC), len);
		NFS_OK(c, nc_write(c, f, off, buf, len, UNSTABLE, &ok));
	}
	free(buf);
	return *post_attr(&ok.file_wcc.after);
}

static void test_times_kept_by_writeback(void **state)
{
	struct itest *t = *state;
	struct statfs sf;

	if (statfs(t->exports[EXP_RW], &sf) == 0 && sf.f_type != XFS_MAGIC) {
		print_message("not XFS: write-behind moves the times here (see src/nocmtime.c)\n");
		skip();
	}
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	it_workdir(c, &root, "times", &dir);
	NFS_OK(c, nc_create(c, &dir, "f", 0644, &f));
	fattr3 last = write_file(c, &f, 4 * MIB + 1234), now;

	it_sleep_ms(300);   /* write-behind runs meanwhile, clocks move on */
	NFS_OK(c, nc_getattr(c, &f, &now));
	assert_times("after write-behind", &now, &last, true);
	assert_int_equal(now.size, 4 * MIB + 1234);
	/* COMMIT writes the partial tail block up to the end of file through a buffered descriptor
	 * that keeps the times too: neither moves. Where that write is refused, the block is
	 * written whole, zeros past the end, and the size put back: the mtime stays, the ctime
	 * moves with the truncate (no call sets it), which a client sees as its own COMMIT's
	 * change by the reply's wcc_data. */
	COMMIT3res cr;
	COMMIT3args ca = {.file = fh3(&f)};
	assert_int_equal(NFS3(c, commit, COMMIT, &ca, &cr), 0);
	assert_int_equal(cr.status, NFS3_OK);
	const wcc_data *w = &cr.COMMIT3res_u.resok.file_wcc;
	assert_true(w->before.attributes_follow);
	assert_int_equal(nfstime_cmp(w->before.pre_op_attr_u.attributes.ctime, last.ctime), 0);
	assert_int_equal(rn_counter_must(t->port, "cache_dirty_bytes"), 0);
	NFS_OK(c, nc_getattr(c, &f, &now));
	bool trimmed = rn_counter_must(t->port, "cache_eof_trims") > 0;
	assert_true(trimmed || rn_counter_must(t->port, "cache_eof_writes") > 0);
	assert_times("after COMMIT", &now, &last, !trimmed);

	/* and as the file system itself has them */
	char path[PATH_MAX];
	it_path(t, EXP_RW, "times/f", path, sizeof path);
	check_fattr_matches_disk(&now, path);

	/* a later WRITE moves them again, as it should */
	it_sleep_ms(20);
	fattr3 again = write_file(c, &f, REC);
	assert_int_not_equal(nfstime_cmp(again.mtime, last.mtime), 0);
	nc_close(c);
}

static void assert_same_attrs(const char *when, const fattr3 *got, const fattr3 *want)
{
	assert_times(when, got, want, true);
	if (got->size != want->size)
		fail_msg("%s: size %llu, the reply said %llu", when, (unsigned long long)got->size,
			 (unsigned long long)want->size);
}

/* The attributes a WRITE or READ returns are the file's as a GETATTR right after it finds them,
 * though most cached WRITEs (times already moved within the last milliseconds) and every READ
 * answer them without asking the file system a second time. Back-to-back WRITEs, each extending
 * the file, one of them from another connection (another ring). */
static void test_reply_attrs_are_the_files(void **state)
{
	struct itest *t = *state;
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	struct nfsclient *c2 = it_client(t, EXP_RW, 0, 0, &root);
	it_workdir(c, &root, "reply", &dir);
	NFS_OK(c, nc_create(c, &dir, "f", 0644, &f));
	char buf[700];
	for (unsigned i = 0; i < 200; i++) {
		struct nfsclient *w = i % 7 == 3 ? c2 : c;
		WRITE3resok ok = {0};
		fattr3 now;
		memset(buf, 'a' + (int)(i % 26), sizeof buf);
		NFS_OK(w, nc_write(w, &f, (uint64_t)i * sizeof buf, buf, sizeof buf, UNSTABLE, &ok));
		const fattr3 *after = post_attr(&ok.file_wcc.after);
		assert_int_equal(after->size, (uint64_t)(i + 1) * sizeof buf);
		assert_true(ok.file_wcc.before.attributes_follow);
		assert_int_equal(ok.file_wcc.before.pre_op_attr_u.attributes.size,
				 (uint64_t)i * sizeof buf);
		NFS_OK(c, nc_getattr(c, &f, &now));
		assert_same_attrs("GETATTR after a WRITE", &now, after);
		if (i % 50 == 49) {
			READ3args ra = {.file = fh3(&f), .offset = 0, .count = 4096};
			READ3res rr;
			NFS_OK(c, NFS3_STATUS(c, read, READ, &ra, &rr));
			assert_same_attrs("READ after a WRITE",
					  post_attr(&rr.READ3res_u.resok.file_attributes), &now);
		}
	}
	nc_close(c2);
	nc_close(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_times_kept_by_writeback),
		cmocka_unit_test(test_reply_attrs_are_the_files),
	};
	return IT_MAIN("times", tests);
}
