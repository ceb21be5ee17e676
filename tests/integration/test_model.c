/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A file-system exerciser in the manner of fsx: seeded random WRITEs (every stable_how, any
 * offset and length, most of them misaligned), READs, truncations up and down (SETATTR size),
 * COMMITs, GETATTRs, REMOVE and CREATE again, and RENAME of a new file over an old one, on a
 * few files, each checked against a model of what the files must hold. The calls come over
 * two connections (the harness's two rings) one at a time, so the model is exact; the files
 * together outgrow the harness's 64M cache, so write-behind, eviction, clean re-reads and the
 * per-file bound all take turns with truncation. After every whole-file COMMIT the file on
 * disk, read by the host, must be the model too.
 *
 * NFSD_UC_MODEL_MODE sets the export's write_mode and read_mode (cached when unset: the
 * default). NFSD_UC_MODEL_SEED and NFSD_UC_MODEL_OPS change the seed (the default is fixed)
 * and the number of operations; a failure prints the seed and the last operations. */
#include "checks.h"
#include "rawnfs.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIB 1024u
#define MIB (1024u * 1024u)
#define NFILES 3
#define MAX_SIZE (28u * MIB)   /* each; three of them outgrow the 64M cache */
#define MAX_IO (256u * KIB)
#define HISTORY 24

struct mfile {
	struct fh fh;
	char name[16];
	unsigned char *data;   /* MAX_SIZE bytes: what the file holds, zeros past size */
	uint64_t size;
};

struct model {
	struct itest *t;
	struct nfsclient *c[2];
	struct fh dir;
	struct mfile f[NFILES];
	uint64_t rng;
	unsigned long op;
	char history[HISTORY][96];
	unsigned char *buf;
};

static uint64_t rnd(struct model *m)
{
	/* splitmix64: reproducible from the seed alone */
	uint64_t z = (m->rng += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static uint64_t below(struct model *m, uint64_t n)
{
	return n ? rnd(m) % n : 0;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);
	return s && *s ? strtoull(s, NULL, 0) : dflt;
}

static void note(struct model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct model *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->history[m->op % HISTORY], sizeof m->history[0], fmt, ap);
	va_end(ap);
}

static void show_history(const struct model *m)
{
	unsigned long first = m->op >= HISTORY ? m->op - HISTORY + 1 : 0;
	fprintf(stderr, "model: the last operations (seed %" PRIu64 "):\n",
		env_u64("NFSD_UC_MODEL_SEED", 1));
	for (unsigned long i = first; i <= m->op; i++)
		fprintf(stderr, "  #%lu %s\n", i, m->history[i % HISTORY]);
}

#define MFAIL(m, ...) do { show_history(m); fail_msg(__VA_ARGS__); } while (0)

/* An offset that lands on, just before or just after a block boundary as often as anywhere:
 * the ends of WRITEs are where the cache's partial blocks live. */
static uint64_t pick_offset(struct model *m, uint64_t limit)
{
	uint64_t off = below(m, limit);
	switch (below(m, 4)) {
	case 0: off &= ~(uint64_t)4095; break;
	case 1: off = (off & ~(uint64_t)4095) + 4096 - 1 - below(m, 64); break;
	case 2: off = (off & ~(uint64_t)4095) + below(m, 64); break;
	default: break;
	}
	return off < limit ? off : limit - 1;
}

static uint32_t pick_length(struct model *m)
{
	switch (below(m, 4)) {
	case 0: return 1 + (uint32_t)below(m, 600);
	case 1: return 4096 * (1 + (uint32_t)below(m, 16));
	case 2: return 47008;
	default: return 1 + (uint32_t)below(m, MAX_IO);
	}
}

static void check_size(struct model *m, struct mfile *f, uint64_t got, const char *what)
{
	if (got != f->size)
		MFAIL(m, "%s: %s says size %" PRIu64 ", the model %" PRIu64, f->name, what, got,
		      f->size);
}

static void do_write(struct model *m, struct nfsclient *c, struct mfile *f)
{
	uint64_t off = pick_offset(m, MAX_SIZE);
	uint32_t len = pick_length(m);
	if (off + len > MAX_SIZE)
		len = (uint32_t)(MAX_SIZE - off);
	static const stable_how hows[] = { UNSTABLE, UNSTABLE, UNSTABLE, DATA_SYNC, FILE_SYNC };
	stable_how how = hows[below(m, 5)];
	for (uint32_t i = 0; i < len; i++)
		m->buf[i] = (unsigned char)rnd(m);
	note(m, "%s WRITE %" PRIu64 "+%u how %d", f->name, off, len, (int)how);
	WRITE3resok ok;
	NFS_OK(c, nc_write(c, &f->fh, off, m->buf, len, how, &ok));
	if (ok.count != len)
		MFAIL(m, "%s: WRITE of %u bytes answered count %u", f->name, len, ok.count);
	if (how != UNSTABLE && ok.committed == UNSTABLE)
		MFAIL(m, "%s: a stable WRITE was answered UNSTABLE", f->name);
	memcpy(f->data + off, m->buf, len);
	if (off + len > f->size)
		f->size = off + len;
	check_size(m, f, post_attr(&ok.file_wcc.after)->size, "WRITE's post-op attributes");
}

/* READ [off, off + count) and hold the reply (length, eof, bytes) against the model. */
static void read_and_check(struct model *m, struct nfsclient *c, struct mfile *f, uint64_t off,
			   uint32_t count)
{
	uint32_t got;
	int eof;
	note(m, "%s READ %" PRIu64 "+%u (size %" PRIu64 ")", f->name, off, count, f->size);
	NFS_OK(c, nc_read(c, &f->fh, off, count, m->buf, &got, &eof));
	uint64_t want = off >= f->size ? 0 : f->size - off < count ? f->size - off : count;
	if (got != want)
		MFAIL(m, "%s: READ %" PRIu64 "+%u got %u bytes, the model has %" PRIu64, f->name, off,
		      count, got, want);
	if (!eof != (off + got < f->size))
		MFAIL(m, "%s: READ %" PRIu64 "+%u eof %d at size %" PRIu64, f->name, off, count, eof,
		      f->size);
	if (got && memcmp(m->buf, f->data + off, got) != 0) {
		uint32_t i = 0;
		while (m->buf[i] == f->data[off + i])
			i++;
		MFAIL(m, "%s: READ %" PRIu64 "+%u: byte %" PRIu64 " is %u, the model's %u", f->name, off,
		      count, off + i, m->buf[i], f->data[off + i]);
	}
}

static void do_read(struct model *m, struct nfsclient *c, struct mfile *f)
{
	uint64_t off = below(m, 8) == 0 ? f->size + below(m, 3) * 1000 : pick_offset(m, f->size + 1);
	read_and_check(m, c, f, off, below(m, 3) == 0 ? MIB : pick_length(m));
}

static void do_truncate(struct model *m, struct nfsclient *c, struct mfile *f)
{
	uint64_t size = below(m, 3) == 0 ? pick_offset(m, MAX_SIZE) : pick_offset(m, f->size + 1);
	SETATTR3args a;
	SETATTR3res r;
	memset(&a, 0, sizeof a);
	a.object = fh3(&f->fh);
	a.new_attributes.size.set_it = 1;
	a.new_attributes.size.set_size3_u.size = size;
	note(m, "%s SETATTR size %" PRIu64 " (was %" PRIu64 ")", f->name, size, f->size);
	NFS_OK(c, NFS3_STATUS(c, setattr, SETATTR, &a, &r));
	if (size < f->size)
		memset(f->data + size, 0, f->size - size);
	f->size = size;
	check_size(m, f, post_attr(&r.SETATTR3res_u.resok.obj_wcc.after)->size, "SETATTR's reply");
}

/* What the host reads of the file is the model: what a COMMIT made durable is on disk. */
static void check_on_disk(struct model *m, struct mfile *f)
{
	char rel[64], path[PATH_MAX];
	snprintf(rel, sizeof rel, "model/%s", f->name);
	it_path(m->t, EXP_RW, rel, path, sizeof path);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	if ((uint64_t)st.st_size != f->size)
		MFAIL(m, "%s: %" PRIu64 " bytes on disk after COMMIT, the model %" PRIu64, f->name,
		      (uint64_t)st.st_size, f->size);
	for (uint64_t off = 0; off < f->size; off += MAX_IO) {
		size_t n = f->size - off < MAX_IO ? f->size - off : MAX_IO;
		assert_int_equal(pread(fd, m->buf, n, (off_t)off), (ssize_t)n);
		if (memcmp(m->buf, f->data + off, n) != 0)
			MFAIL(m, "%s: on disk after COMMIT, bytes near %" PRIu64 " differ", f->name, off);
	}
	close(fd);
}

static void do_commit(struct model *m, struct nfsclient *c, struct mfile *f)
{
	bool whole = below(m, 2) == 0;
	uint64_t off = whole ? 0 : pick_offset(m, f->size + 1);
	uint32_t count = whole ? 0 : pick_length(m);
	note(m, "%s COMMIT %" PRIu64 "+%u", f->name, off, count);
	NFS_OK(c, nc_commit(c, &f->fh, off, count, NULL));
	if (whole)
		check_on_disk(m, f);
}

static void do_getattr(struct model *m, struct nfsclient *c, struct mfile *f)
{
	fattr3 a;
	note(m, "%s GETATTR", f->name);
	NFS_OK(c, nc_getattr(c, &f->fh, &a));
	check_size(m, f, a.size, "GETATTR");
}

/* REMOVE and CREATE again: nothing the cache held for the old file shows in the new one. */
static void do_recreate(struct model *m, struct nfsclient *c, struct mfile *f)
{
	note(m, "%s REMOVE, CREATE", f->name);
	NFS_OK(c, nc_remove(c, &m->dir, f->name));
	NFS_OK(c, nc_create(c, &m->dir, f->name, 0644, &f->fh));
	memset(f->data, 0, f->size);
	f->size = 0;
}

/* A new file written UNSTABLE (nothing committed) and RENAMEd over the old one, as editors
 * save: the name now reads the new file's bytes, none of the old one's cached blocks. */
static void do_replace(struct model *m, struct nfsclient *c, struct mfile *f)
{
	uint64_t size = below(m, 4 * MIB);
	struct fh t;
	note(m, "%s replaced by a new file of %" PRIu64 " bytes", f->name, size);
	NFS_OK(c, nc_create(c, &m->dir, "new", 0644, &t));
	memset(f->data, 0, f->size);
	for (uint64_t off = 0; off < size; off += MAX_IO) {
		uint32_t len = (uint32_t)(size - off < MAX_IO ? size - off : MAX_IO);
		for (uint32_t i = 0; i < len; i++)
			f->data[off + i] = (unsigned char)rnd(m);
		NFS_OK(c, nc_write(c, &t, off, f->data + off, len, UNSTABLE, NULL));
	}
	RENAME3args a = { .from = { .dir = fh3(&m->dir), .name = "new" },
			  .to = { .dir = fh3(&m->dir), .name = f->name } };
	RENAME3res r;
	NFS_OK(c, NFS3_STATUS(c, rename, RENAME, &a, &r));
	f->fh = t;
	f->size = size;
}

static void step(struct model *m)
{
	struct nfsclient *c = m->c[below(m, 2)];
	struct mfile *f = &m->f[below(m, NFILES)];
	uint64_t r = below(m, 100);
	if (r < 45)
		do_write(m, c, f);
	else if (r < 80)
		do_read(m, c, f);
	else if (r < 86)
		do_truncate(m, c, f);
	else if (r < 93)
		do_commit(m, c, f);
	else if (r < 98)
		do_getattr(m, c, f);
	else if (r < 99)
		do_recreate(m, c, f);
	else
		do_replace(m, c, f);
	nc_release(c);
}

static void test_random_operations(void **state)
{
	struct model m = { .t = *state, .rng = env_u64("NFSD_UC_MODEL_SEED", 1) };
	unsigned long ops = (unsigned long)env_u64("NFSD_UC_MODEL_OPS", 6000);
	struct fh root;

	m.c[0] = it_client(m.t, EXP_RW, 0, 0, &root);
	m.c[1] = it_client(m.t, EXP_RW, 0, 0, &root);
	it_workdir(m.c[0], &root, "model", &m.dir);
	m.buf = malloc(MIB);
	assert_non_null(m.buf);
	for (int i = 0; i < NFILES; i++) {
		struct mfile *f = &m.f[i];
		snprintf(f->name, sizeof f->name, "f%d", i);
		f->data = calloc(1, MAX_SIZE);
		assert_non_null(f->data);
		NFS_OK(m.c[0], nc_create(m.c[0], &m.dir, f->name, 0644, &f->fh));
	}
	uint64_t wb = rn_counter_must(m.t->port, "cache_wb_writes");
	uint64_t kept = rn_counter_must(m.t->port, "cache_read_kept_blocks");
	uint64_t hits = rn_counter_must(m.t->port, "cache_read_hits");
	for (m.op = 0; m.op < ops; m.op++)
		step(&m);
	/* the last word: every file whole, through the server and on disk */
	for (int i = 0; i < NFILES; i++) {
		struct mfile *f = &m.f[i];
		for (uint64_t off = 0; off <= f->size; off += MIB) {
			read_and_check(&m, m.c[0], f, off, MIB);
			nc_release(m.c[0]);
		}
		NFS_OK(m.c[0], nc_commit(m.c[0], &f->fh, 0, 0, NULL));
		check_on_disk(&m, f);
	}
	/* The default run goes where it is meant to: the cache half full or more, write-behind
	 * writing, READs kept and hit. (A third of its READs are of 1 MiB, and the first of a
	 * stretch is not kept, as a stream read once: 41 MiB at the peak, 48 when they were.)
	 * Another seed or fewer operations (a failure being chased) need not. */
	const char *mode = getenv("NFSD_UC_MODEL_MODE");
	bool cached = !mode || !*mode || strcmp(mode, "cached") == 0;
	if (cached && !getenv("NFSD_UC_MODEL_SEED") && !getenv("NFSD_UC_MODEL_OPS")) {
		assert_true(rn_counter_must(m.t->port, "cache_bytes_peak") >= 32 * MIB);
		assert_true(rn_counter_must(m.t->port, "cache_wb_writes") > wb);
		assert_true(rn_counter_must(m.t->port, "cache_read_kept_blocks") > kept);
		assert_true(rn_counter_must(m.t->port, "cache_read_hits") > hits);
	}
	for (int i = 0; i < NFILES; i++)
		free(m.f[i].data);
	free(m.buf);
	nc_close(m.c[0]);
	nc_close(m.c[1]);
}

static void test_served_after(void **state)
{
	it_assert_served(*state);
}

int main(int argc, char **argv)
{
	static char modes[96];
	const char *mode = getenv("NFSD_UC_MODEL_MODE");
	if (mode && *mode) {
		snprintf(modes, sizeof modes, "write_mode = %s\nread_mode = %s\n", mode, mode);
		it_rw_export_extra = modes;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_operations),
		cmocka_unit_test(test_served_after),
	};
	return IT_MAIN("model", tests);
}
