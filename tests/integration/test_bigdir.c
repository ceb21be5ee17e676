/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A directory of 10,000 entries listed completely by READDIR and by READDIRPLUS over many calls:
 * every name exactly once, cookies and the cookie verifier carried from call to call, replies
 * within the size the client asked for, and READDIRPLUS replies full: the server looks up only
 * the entries its reply has room for, and must not stop short of that room. */
#include "checks.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#define NENTRIES 10000
#define DIRNAME "bigdir"

struct listing {
	unsigned char seen[NENTRIES];
	int dots;           /* "." and ".." */
	int calls;
	size_t first;       /* READDIRPLUS: the encoded size of the last reply's first entry */
	cookie3 cookie;
	cookieverf3 verf;
	int eof;
};

/* Per-test setup: the entries are made on disk once, directly (the listing is under test). */
static int make_entries(void **state)
{
	struct itest *t = *state;
	char path[PATH_MAX + 128];
	int n = snprintf(path, sizeof(path), "%s/" DIRNAME, t->exports[EXP_RW]);

	if (mkdir(path, 0755) < 0)
		return errno == EEXIST ? 0 : -1;
	for (int i = 0; i < NENTRIES; i++) {
		/* lengths vary (8..47 bytes) so entries straddle reply boundaries differently */
		int fd;
		snprintf(path + n, sizeof(path) - (size_t)n, "/n%05d-%.*s", i, i % 40,
		         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			return -1;
		close(fd);
	}
	return 0;
}

static void saw(struct listing *l, const char *name, cookie3 cookie)
{
	int i;

	assert_true(cookie != 0);
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		l->dots++;
		return;
	}
	if (sscanf(name, "n%5d-", &i) != 1 || i < 0 || i >= NENTRIES)
		fail_msg("listing returned a name never created: \"%s\"", name);
	if (l->seen[i]++)
		fail_msg("\"%s\" listed twice (call %d)", name, l->calls);
}

static void all_seen(const struct listing *l)
{
	for (int i = 0; i < NENTRIES; i++)
		if (l->seen[i] != 1)
			fail_msg("entry n%05d seen %d times", i, l->seen[i]);
	assert_true(l->dots <= 2);
	assert_true(l->calls > 10);   /* the sizes asked for cannot hold it all in a few */
}

static size_t xdr_name(const char *s)
{
	return 4 + ((strlen(s) + 3) & ~(size_t)3);
}

#define FATTR3_XDR 84
#define POST_OP_ATTR_XDR(p) (4 + ((p).attributes_follow ? FATTR3_XDR : 0))

/* One READDIR call from where the listing stands; returns the size its reply took. */
static size_t readdir_step(struct nfsclient *c, struct fh *dir, struct listing *l, count3 count)
{
	READDIR3args a = { .dir = fh3(dir), .cookie = l->cookie, .count = count };
	READDIR3res r;
	size_t size;
	int n = 0;

	memcpy(a.cookieverf, l->verf, sizeof(l->verf));
	NFS_OK(c, NFS3_STATUS(c, readdir, READDIR, &a, &r));
	size = 4 + POST_OP_ATTR_XDR(r.READDIR3res_u.resok.dir_attributes) + 8 + 4 + 4;
	for (entry3 *e = r.READDIR3res_u.resok.reply.entries; e != NULL; e = e->nextentry) {
		saw(l, e->name, e->cookie);
		l->cookie = e->cookie;
		size += 4 + 8 + xdr_name(e->name) + 8;
		n++;
	}
	memcpy(l->verf, r.READDIR3res_u.resok.cookieverf, sizeof(l->verf));
	l->eof = (int)r.READDIR3res_u.resok.reply.eof;
	l->calls++;
	if (n == 0 && !l->eof)
		fail_msg("READDIR call %d returned no entry and no eof", l->calls);
	nc_release(c);
	return size;
}

static void test_readdir_10000(void **state)
{
	struct itest *t = *state;
	struct fh root, dir;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	struct listing *l = calloc(1, sizeof(*l));

	assert_non_null(l);
	NFS_OK(c, nc_lookup(c, &root, DIRNAME, &dir, NULL));
	while (!l->eof) {
		size_t size = readdir_step(c, &dir, l, 4096);
		if (size > 4096)
			fail_msg("READDIR reply of %zu bytes for count 4096 (call %d)", size, l->calls);
		assert_true(l->calls <= NENTRIES);
	}
	all_seen(l);
	free(l);
	nc_close(c);
}

/* Attributes and handle present and consistent; every 500th handle is kept in *probe to be
 * used afterwards (it must lead to the entry it came with). */
static void check_plus_entry(const entryplus3 *e, struct fh *probe, uint64_t *probe_id, int *k)
{
	const fattr3 *a;

	if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
		return;
	a = post_attr(&e->name_attributes);
	check_fattr_sane(a);
	assert_int_equal(a->type, NF3REG);
	assert_true(a->fileid == e->fileid);
	assert_true(e->name_handle.handle_follows);
	if ((*k)++ % 500 == 0) {
		fh_copy(probe, &e->name_handle.post_op_fh3_u.handle);
		*probe_id = e->fileid;
	}
}

static size_t readdirplus_step(struct nfsclient *c, struct fh *dir, struct listing *l,
                               count3 maxcount, int *k)
{
	READDIRPLUS3args a = { .dir = fh3(dir), .cookie = l->cookie, .dircount = maxcount / 4,
	                       .maxcount = maxcount };
	READDIRPLUS3res r;
	struct fh probe = { .len = 0 };
	size_t size;
	uint64_t probe_id = 0;

	memcpy(a.cookieverf, l->verf, sizeof(l->verf));
	NFS_OK(c, NFS3_STATUS(c, readdirplus, READDIRPLUS, &a, &r));
	size = 4 + POST_OP_ATTR_XDR(r.READDIRPLUS3res_u.resok.dir_attributes) + 8 + 4 + 4;
	l->first = 0;
	for (entryplus3 *e = r.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
		saw(l, e->name, e->cookie);
		check_plus_entry(e, &probe, &probe_id, k);
		l->cookie = e->cookie;
		size_t one = 4 + 8 + xdr_name(e->name) + 8 + POST_OP_ATTR_XDR(e->name_attributes) + 4 +
		             (e->name_handle.handle_follows ?
		              4 + ((e->name_handle.post_op_fh3_u.handle.data.data_len + 3) & ~3u) : 0);
		if (!l->first)
			l->first = one;
		size += one;
	}
	memcpy(l->verf, r.READDIRPLUS3res_u.resok.cookieverf, sizeof(l->verf));
	l->eof = (int)r.READDIRPLUS3res_u.resok.reply.eof;
	l->calls++;
	nc_release(c);
	if (probe.len != 0) {
		fattr3 ga;
		NFS_OK(c, nc_getattr(c, &probe, &ga));
		assert_true(ga.fileid == probe_id);
	}
	return size;
}

/* Listed at maxcount: a 16 KiB buffer of names holds more entries than a 16 KiB reply, and
 * fewer than a 64 KiB one (whose entries then come from two buffers). */
static void readdirplus_all(void **state, count3 maxcount)
{
	struct itest *t = *state;
	struct fh root, dir;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	struct listing *l = calloc(1, sizeof(*l));
	int k = 0;

	assert_non_null(l);
	NFS_OK(c, nc_lookup(c, &root, DIRNAME, &dir, NULL));
	for (size_t prev = 0; !l->eof; ) {
		size_t size = readdirplus_step(c, &dir, l, maxcount, &k);
		if (size > maxcount)
			fail_msg("READDIRPLUS reply of %zu bytes for maxcount %u (call %d)", size,
			         maxcount, l->calls);
		/* the reply before stopped where this one's first entry no longer fitted */
		if (prev && l->first && prev + l->first <= maxcount)
			fail_msg("READDIRPLUS reply %d stopped at %zu bytes of %u: the next entry (%zu "
			         "bytes) would have fitted", l->calls - 1, prev, maxcount, l->first);
		prev = size;
		assert_true(l->calls <= NENTRIES);
	}
	all_seen(l);
	free(l);
	nc_close(c);
}

static void test_readdirplus_10000(void **state)
{
	readdirplus_all(state, 16384);
}

static void test_readdirplus_10000_64k(void **state)
{
	readdirplus_all(state, 65536);
}

/* ---- handles of a directory listed again, and after its files were replaced ---- */

#define REPDIR "repdir"
#define NREP 2000
#define NREPLACED 500

struct seen_handles {
	struct fh fh[NREP];
	uint64_t ino[NREP];
};

static void rep_path(struct itest *t, int i, char *path, size_t size)
{
	if (i < 0)
		snprintf(path, size, "%s/" REPDIR, t->exports[EXP_RW]);
	else
		snprintf(path, size, "%s/" REPDIR "/r%05d", t->exports[EXP_RW], i);
}

static void make_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
}

/* List REPDIR whole with READDIRPLUS at 64 KiB: each entry's handle must lead to the entry
 * (GETATTR gives its fileid, not STALE); kept in *h. */
static void list_handles(struct nfsclient *c, struct fh *dir, struct seen_handles *h)
{
	struct listing *l = calloc(1, sizeof(*l));
	assert_non_null(l);
	memset(h, 0, sizeof(*h));
	while (!l->eof) {
		READDIRPLUS3args a = { .dir = fh3(dir), .cookie = l->cookie, .dircount = 16384,
		                       .maxcount = 65536 };
		READDIRPLUS3res r;
		int i;
		memcpy(a.cookieverf, l->verf, sizeof(l->verf));
		NFS_OK(c, NFS3_STATUS(c, readdirplus, READDIRPLUS, &a, &r));
		READDIRPLUS3resok *ok = &r.READDIRPLUS3res_u.resok;
		for (entryplus3 *e = ok->reply.entries; e; e = e->nextentry) {
			l->cookie = e->cookie;
			if (sscanf(e->name, "r%5d", &i) != 1 || i < 0 || i >= NREP)
				continue;
			assert_true(e->name_handle.handle_follows);
			fh_copy(&h->fh[i], &e->name_handle.post_op_fh3_u.handle);
			h->ino[i] = e->fileid;
		}
		memcpy(l->verf, ok->cookieverf, sizeof(l->verf));
		l->eof = (int)ok->reply.eof;
		nc_release(c);
	}
	free(l);
	for (int i = 0; i < NREP; i++) {
		fattr3 ga;
		assert_true(h->fh[i].len > 0);
		NFS_OK(c, nc_getattr(c, &h->fh[i], &ga));
		if (ga.fileid != h->ino[i])
			fail_msg("r%05d: its handle leads to fileid %llu, listed as %llu", i,
			         (unsigned long long)ga.fileid, (unsigned long long)h->ino[i]);
	}
}

struct list_counts {
	uint64_t hits, misses;
};

static struct list_counts list_counts(struct itest *t)
{
	return (struct list_counts){rn_counter_must(t->port, "listcache_hits"),
				    rn_counter_must(t->port, "listcache_misses")};
}

/* Does the server keep listings' handles on the rw export's file system? */
static bool keeps_listings(struct itest *t)
{
	struct statfs sf;
	assert_int_equal(statfs(t->exports[EXP_RW], &sf), 0);
	return sf.f_type == XFS_SUPER_MAGIC || sf.f_type == EXT4_SUPER_MAGIC ||
	       sf.f_type == BTRFS_SUPER_MAGIC || sf.f_type == TMPFS_MAGIC;
}

/* The server may keep the handles of a listed directory that has not changed since, for the next
 * listing: they must be the same handles, and once files are replaced (removed and made again
 * under their names, on the server's disk, so that their inode numbers may be taken again) every
 * handle listed must be the new file's. */
static void test_readdirplus_after_replace(void **state)
{
	struct itest *t = *state;
	struct fh root, dir;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	struct seen_handles *first = calloc(1, sizeof(*first)), *again = calloc(1, sizeof(*again));
	char path[PATH_MAX + 64];
	int reused = 0;

	assert_non_null(first);
	assert_non_null(again);
	rep_path(t, -1, path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);
	for (int i = 0; i < NREP; i++) {
		rep_path(t, i, path, sizeof(path));
		make_file(path);
	}
	NFS_OK(c, nc_lookup(c, &root, REPDIR, &dir, NULL));
	usleep(200 * 1000);    /* a directory the clock has passed: one the server may trust */
	list_handles(c, &dir, first);
	struct list_counts before = list_counts(t), after;
	list_handles(c, &dir, again);
	for (int i = 0; i < NREP; i++)
		assert_true(fh_equal(&first->fh[i], &again->fh[i]));
	/* what the metrics say of it, where the server keeps them (XFS, ext4, btrfs, tmpfs) */
	after = list_counts(t);
	bool kept = keeps_listings(t);
	if (kept && after.hits - before.hits < NREP)
		fail_msg("unchanged directory listed again: %llu of %d handles from the listing cache",
			 (unsigned long long)(after.hits - before.hits), NREP);
	for (int i = 0; i < NREPLACED; i++) {
		rep_path(t, i * (NREP / NREPLACED), path, sizeof(path));
		assert_int_equal(unlink(path), 0);
	}
	for (int i = 0; i < NREPLACED; i++) {
		rep_path(t, i * (NREP / NREPLACED), path, sizeof(path));
		make_file(path);
	}
	usleep(200 * 1000);
	before = list_counts(t);
	list_handles(c, &dir, again);
	after = list_counts(t);
	/* The directory changed: every entry is looked up again, none taken from before the
	 * change (hits here are the listing's own: entries a reply had no room for, looked up
	 * side by side with the ones it sent, are taken by the next call). */
	if (kept && after.misses - before.misses < NREP)
		fail_msg("changed directory: %llu of %d entries looked up again",
			 (unsigned long long)(after.misses - before.misses), NREP);
	for (int i = 0; i < NREP; i += NREP / NREPLACED) {
		assert_false(fh_equal(&first->fh[i], &again->fh[i]));
		reused += first->ino[i] == again->ino[i];
	}
	print_message("replaced files whose inode number was taken again: %d of %d\n", reused,
	              NREPLACED);
	free(first);
	free(again);
	nc_close(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_readdir_10000, make_entries),
		cmocka_unit_test_setup(test_readdirplus_10000, make_entries),
		cmocka_unit_test_setup(test_readdirplus_10000_64k, make_entries),
		cmocka_unit_test(test_readdirplus_after_replace),
	};
	return IT_MAIN("integration-bigdir", tests);
}
