/* Checks shared by the test programs. See checks.h. */
#include "checks.h"

#include <sys/sysmacros.h>

int nfstime_cmp(nfstime3 a, nfstime3 b)
{
	if (a.seconds != b.seconds)
		return a.seconds < b.seconds ? -1 : 1;
	if (a.nseconds != b.nseconds)
		return a.nseconds < b.nseconds ? -1 : 1;
	return 0;
}

void check_fattr_sane(const fattr3 *a)
{
	assert_in_range(a->type, NF3REG, NF3FIFO);
	assert_int_equal(a->mode & ~07777u, 0);
	assert_true(a->nlink >= 1);
	assert_true(a->fileid != 0);
	assert_true(a->atime.nseconds < 1000000000u);
	assert_true(a->mtime.nseconds < 1000000000u);
	assert_true(a->ctime.nseconds < 1000000000u);
}

static ftype3 type_of(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return NF3REG;
	case S_IFDIR: return NF3DIR;
	case S_IFBLK: return NF3BLK;
	case S_IFCHR: return NF3CHR;
	case S_IFLNK: return NF3LNK;
	case S_IFSOCK: return NF3SOCK;
	default: return NF3FIFO;
	}
}

void check_fattr_matches_disk(const fattr3 *a, const char *path)
{
	struct stat st;

	check_fattr_sane(a);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(a->type, type_of(st.st_mode));
	assert_int_equal(a->mode, st.st_mode & 07777);
	assert_int_equal(a->nlink, st.st_nlink);
	assert_int_equal(a->uid, st.st_uid);
	assert_int_equal(a->gid, st.st_gid);
	assert_int_equal(a->size, st.st_size);
	assert_int_equal(a->mtime.seconds, st.st_mtim.tv_sec);
	assert_int_equal(a->mtime.nseconds, st.st_mtim.tv_nsec);
	if (a->type == NF3CHR || a->type == NF3BLK) {
		assert_int_equal(a->rdev.specdata1, major(st.st_rdev));
		assert_int_equal(a->rdev.specdata2, minor(st.st_rdev));
	}
}

const fattr3 *post_attr(const post_op_attr *p)
{
	assert_true(p->attributes_follow);
	return &p->post_op_attr_u.attributes;
}

void check_wcc(const wcc_data *w, long long old_size)
{
	const wcc_attr *b;
	const fattr3 *a;

	assert_true(w->before.attributes_follow);
	b = &w->before.pre_op_attr_u.attributes;
	a = post_attr(&w->after);
	check_fattr_sane(a);
	if (old_size >= 0)
		assert_int_equal(b->size, old_size);
	/* ctime only: SETATTR may move mtime back, nothing moves ctime back */
	assert_true(nfstime_cmp(b->ctime, a->ctime) <= 0);
}
