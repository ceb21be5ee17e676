/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A pNFS flexfiles data server's files are sparse: under 16-way sparse striping a DS holds one
 * 1 MiB stripe unit in every 16 MiB and holes for the other DSs' units (docs/data-server.md).
 * Such a file (units at 0, 16 MiB and 32 MiB, UNSTABLE + COMMIT) has its 30 MiB of holes READ in
 * 64 KiB READs, then in 1 MiB READs twice (the second pass is the one the cache keeps large READs
 * of), with write_mode = cached (the default) and again with write_mode = direct (a daemon
 * restarted on that conf), read_mode direct in both. Each pass must cost what a hole costs:
 *   - every byte reads as zero, and the units read back as written;
 *   - no device read: O_DIRECT over a hole issues no bio (the kernel zero-fills the buffer), and
 *     the file's three extents are in its inode, in memory while the daemon holds it open; what
 *     could be read is metadata evicted under memory pressure (an inode cluster, a directory
 *     block, AG headers), at most META_SLACK, 0.2% of a pass. Counted as the daemon's own
 *     (/proc/PID/io read_bytes) and on the loop device (/sys/dev/block/M:m/stat), which also
 *     sees other programs' reads of it: PROBE_SLACK more there. With write_mode = cached a
 *     sequential reader nearing a hole's end gets the unit after it read ahead: data, read and
 *     kept once, DATA_AHEAD (a unit per hole) more for it in both counts and in the cache's;
 *   - no block allocated: the file's st_blocks do not grow (a reading call never changes a file);
 *   - no cache memory: the cache's bytes grow by at most CACHE_SLACK (blocks of zeros kept from a
 *     hole are memory a hole should not take; measured before the fix: the whole hole).
 * Then bytes written into a hole, still in the cache, read back in a READ of the hole around
 * them. Both counters are shown to see reads: a local O_DIRECT read of a unit moves the loop device's,
 * and in direct mode the daemon's READs of the units move its own. Needs a loop device (run
 * through on_xfs.sh): skipped otherwise. The daemon's CPU per pass is printed, not checked. */
#include "client.h"
#include "rawnfs.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define KIB 1024u
#define MIB (1024u * 1024u)
#define STRIPE (16u * MIB)         /* 16 DSs, 1 MiB stripe units: one unit in every 16 MiB */
#define UNITS 3u
#define HOLE_BYTES ((uint64_t)(UNITS - 1) * (STRIPE - MIB))
#define META_SLACK (64u * KIB)
#define CACHE_SLACK (64u * KIB)
/* A probe of the new device by another program (udev's blkid, after mkfs): blkid -p of this
 * 1 GiB XFS read 1044 KiB. */
#define PROBE_SLACK (2u * MIB)
#define DATA_AHEAD ((uint64_t)(UNITS - 1) * MIB)

static const unsigned char zeros[MIB];

static unsigned char byte_at(uint64_t off)
{
	return (unsigned char)((off * 2654435761u >> 13) + 7);
}

/* What a pass costs, read before and after it. */
struct sample {
	uint64_t dev;      /* bytes the file system's device read */
	uint64_t own;      /* bytes the daemon's threads read from devices */
	uint64_t cache;    /* bytes of block images the cache holds */
	uint64_t kept;     /* blocks READs kept in the cache, ever */
	uint64_t blocks;   /* the file's st_blocks */
	uint64_t cpu;      /* the daemon's user + system clock ticks */
};

/* The stat file of the loop device holding path (malloc'd), or NULL when it is not one. */
static char *loop_stat_of(const char *path)
{
	struct stat sb;
	char probe[96], *out = malloc(96);
	assert_non_null(out);
	assert_int_equal(stat(path, &sb), 0);
	snprintf(probe, sizeof probe, "/sys/dev/block/%u:%u/loop", major(sb.st_dev),
		 minor(sb.st_dev));
	if (access(probe, F_OK) != 0) {
		free(out);
		return NULL;
	}
	snprintf(out, 96, "/sys/dev/block/%u:%u/stat", major(sb.st_dev), minor(sb.st_dev));
	return out;
}

/* Sectors read (the third field, 512-byte units whatever the device's sector size), in bytes. */
static uint64_t dev_read_bytes(const char *statfile)
{
	unsigned long long f[3];
	FILE *fp = fopen(statfile, "r");
	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%llu %llu %llu", &f[0], &f[1], &f[2]), 3);
	fclose(fp);
	return f[2] * 512;
}

static uint64_t own_read_bytes(pid_t pid)
{
	char p[64], line[128];
	uint64_t v = UINT64_MAX;
	snprintf(p, sizeof p, "/proc/%d/io", (int)pid);
	FILE *fp = fopen(p, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof line, fp))
		if (strncmp(line, "read_bytes:", 11) == 0)
			v = strtoull(line + 11, NULL, 10);
	fclose(fp);
	assert_true(v != UINT64_MAX);
	return v;
}

static uint64_t cpu_ticks(pid_t pid)
{
	char p[64], buf[1024];
	unsigned long long ut, st;
	snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
	FILE *fp = fopen(p, "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof buf, fp));
	fclose(fp);
	const char *s = strrchr(buf, ')');
	assert_non_null(s);
	/* after the name: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime */
	assert_int_equal(sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&ut, &st), 2);
	return ut + st;
}

static struct sample take(const struct itest *t, const char *path, const char *statfile)
{
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	return (struct sample){
		.dev = dev_read_bytes(statfile),
		.own = own_read_bytes(t->pid),
		.cache = rn_counter_must(t->port, "cache_bytes"),
		.kept = rn_counter_must(t->port, "cache_read_kept_blocks"),
		.blocks = (uint64_t)sb.st_blocks,
		.cpu = cpu_ticks(t->pid),
	};
}

/* The units at 0, STRIPE, 2 * STRIPE, 1 MiB each in one UNSTABLE WRITE, then a COMMIT. */
static void write_units(struct nfsclient *c, struct fh *f)
{
	unsigned char *buf = malloc(MIB);
	assert_non_null(buf);
	for (unsigned u = 0; u < UNITS; u++) {
		for (uint32_t i = 0; i < MIB; i++)
			buf[i] = byte_at((uint64_t)u * STRIPE + i);
		NFS_OK(c, nc_write(c, f, (uint64_t)u * STRIPE, buf, MIB, UNSTABLE, NULL));
		nc_release(c);
	}
	NFS_OK(c, nc_commit(c, f, 0, 0, NULL));
	nc_release(c);
	free(buf);
}

/* Every hole, in READs of rsize bytes: each answered whole, and zeros. */
static void read_holes(struct nfsclient *c, struct fh *f, uint32_t rsize)
{
	unsigned char *buf = malloc(rsize);
	assert_non_null(buf);
	for (unsigned u = 0; u + 1 < UNITS; u++) {
		uint64_t end = (uint64_t)(u + 1) * STRIPE;
		for (uint64_t off = (uint64_t)u * STRIPE + MIB; off < end; off += rsize) {
			uint32_t n, want = end - off < rsize ? (uint32_t)(end - off) : rsize;
			int eof;
			NFS_OK(c, nc_read(c, f, off, want, buf, &n, &eof));
			nc_release(c);
			if (n != want || eof)
				fail_msg("READ of %u bytes of a hole at %" PRIu64 ": %u bytes, eof %d",
					 want, off, n, eof);
			for (uint32_t i = 0; i < n; i += MIB)
				if (memcmp(buf + i, zeros, n - i < MIB ? n - i : MIB) != 0)
					fail_msg("a hole's bytes at %" PRIu64 " are not zeros", off + i);
		}
	}
	free(buf);
}

static void read_units(struct nfsclient *c, struct fh *f)
{
	unsigned char *buf = malloc(MIB);
	assert_non_null(buf);
	for (unsigned u = 0; u < UNITS; u++) {
		uint32_t n;
		int eof;
		NFS_OK(c, nc_read(c, f, (uint64_t)u * STRIPE, MIB, buf, &n, &eof));
		nc_release(c);
		assert_int_equal(n, MIB);
		for (uint32_t i = 0; i < MIB; i++)
			if (buf[i] != byte_at((uint64_t)u * STRIPE + i))
				fail_msg("unit %u: byte %u differs from what was written", u, i);
	}
	free(buf);
}

/* Bytes written into a hole and not on disk yet (UNSTABLE, part of a block: held by the cache in
 * either mode) are read back by a READ of the hole around them, zeros elsewhere; and a READ of
 * another hole, while the file has bytes in the cache, is all zeros. */
static void cached_bytes_in_hole(struct nfsclient *c, struct fh *f)
{
	uint64_t base = STRIPE + 5 * MIB, at = base + 10;
	unsigned char small[100], *buf = malloc(MIB);
	uint32_t n;
	int eof;
	assert_non_null(buf);
	for (unsigned i = 0; i < sizeof small; i++)
		small[i] = (unsigned char)(0xa5 ^ i);
	NFS_OK(c, nc_write(c, f, at, small, sizeof small, UNSTABLE, NULL));
	nc_release(c);
	NFS_OK(c, nc_read(c, f, base, MIB, buf, &n, &eof));
	nc_release(c);
	assert_int_equal(n, MIB);
	for (uint32_t i = 0; i < MIB; i++) {
		unsigned char want = i >= 10 && i < 10 + sizeof small ? small[i - 10] : 0;
		if (buf[i] != want)
			fail_msg("a hole with cached bytes: byte %u is %#x, not %#x", i, buf[i], want);
	}
	NFS_OK(c, nc_read(c, f, 4 * MIB, MIB, buf, &n, &eof));
	nc_release(c);
	assert_int_equal(n, MIB);
	if (memcmp(buf, zeros, MIB) != 0)
		fail_msg("a hole read while the file has cached bytes is not zeros");
	free(buf);
}

/* One pass over the holes in READs of rsize bytes, and what it cost; ahead: the data readahead
 * may bring besides. */
static void hole_pass(const struct itest *t, struct nfsclient *c, struct fh *f, const char *path,
		      const char *statfile, uint32_t rsize, uint64_t ahead, const char *what)
{
	struct sample a = take(t, path, statfile);
	read_holes(c, f, rsize);
	struct sample b = take(t, path, statfile);
	long hz = sysconf(_SC_CLK_TCK);
	print_message("%s, %" PRIu64 " MiB of holes: device reads %" PRIu64 " B, the daemon's %"
		      PRIu64 " B, cache %+" PRId64 " B (%" PRIu64 " blocks kept), st_blocks %+"
		      PRId64 ", daemon CPU %" PRIu64 " ms\n", what, HOLE_BYTES / MIB, b.dev - a.dev,
		      b.own - a.own, (int64_t)(b.cache - a.cache), b.kept - a.kept,
		      (int64_t)(b.blocks - a.blocks), (b.cpu - a.cpu) * 1000 / (uint64_t)hz);
	if (b.own - a.own > META_SLACK + ahead || b.dev - a.dev > META_SLACK + ahead + PROBE_SLACK)
		fail_msg("%s: READs of holes read %" PRIu64 " B from devices (the loop device %" PRIu64
			 " B), at most %" PRIu64 " (%" PRIu64 ")", what, b.own - a.own, b.dev - a.dev,
			 META_SLACK + ahead, META_SLACK + ahead + PROBE_SLACK);
	if (b.blocks > a.blocks)
		fail_msg("%s: READs of holes allocated blocks: st_blocks %" PRIu64 " -> %" PRIu64,
			 what, a.blocks, b.blocks);
	if (b.cache > a.cache + CACHE_SLACK + ahead)
		fail_msg("%s: the cache grew by %" PRIu64 " B (%" PRIu64 " blocks kept) reading "
			 "%" PRIu64 " B of holes, at most %" PRIu64, what, b.cache - a.cache,
			 b.kept - a.kept, HOLE_BYTES, CACHE_SLACK + ahead);
}

/* A local O_DIRECT read of the unit at STRIPE moves the loop device's counter: it sees reads. */
static void counter_sees_reads(const char *path, const char *statfile)
{
	void *buf = NULL;
	assert_int_equal(posix_memalign(&buf, 4096, MIB), 0);
	int fd = open(path, O_RDONLY | O_DIRECT);
	assert_true(fd >= 0);
	uint64_t before = dev_read_bytes(statfile);
	assert_int_equal(pread(fd, buf, MIB, STRIPE), (ssize_t)MIB);
	uint64_t got = dev_read_bytes(statfile) - before;
	close(fd);
	for (uint32_t i = 0; i < MIB; i++)
		if (((unsigned char *)buf)[i] != byte_at(STRIPE + i))
			fail_msg("on disk, unit 1's byte %u differs from what was written", i);
	if (got < MIB)
		fail_msg("an O_DIRECT read of 1 MiB of data moved the device's counter by %" PRIu64
			 " B: it cannot show what READs of holes cost", got);
	free(buf);
}

/* A DS's file in directory name of the rw export, its holes read three times, then its units;
 * direct (write_mode = direct: nothing is cached): their READs must move the daemon's own read
 * counter. */
static void ds_file(struct itest *t, const char *name, bool direct)
{
	struct fh root, dir, f;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	char path[PATH_MAX], rel[64];
	snprintf(rel, sizeof rel, "%s/ds-file", name);
	it_workdir(c, &root, name, &dir);
	NFS_OK(c, nc_create(c, &dir, "ds-file", 0644, &f));
	it_path(t, EXP_RW, rel, path, sizeof path);
	char *statfile = loop_stat_of(path);
	if (!statfile) {
		nc_close(c);
		print_message("the tree is not on a loop device (run through on_xfs.sh)\n");
		skip();
	}
	write_units(c, &f);
	assert_int_equal(rn_counter_must(t->port, "cache_dirty"), 0);
	uint64_t ahead = direct ? 0 : DATA_AHEAD;
	hole_pass(t, c, &f, path, statfile, 64 * KIB, ahead, "64 KiB READs");
	hole_pass(t, c, &f, path, statfile, MIB, ahead, "1 MiB READs");
	hole_pass(t, c, &f, path, statfile, MIB, ahead, "1 MiB READs again");
	uint64_t own = own_read_bytes(t->pid);
	read_units(c, &f);
	if (direct && own_read_bytes(t->pid) - own < UNITS * MIB)
		fail_msg("READs of %u MiB of data, not cached, moved the daemon's read counter by %"
			 PRIu64 " B", UNITS, own_read_bytes(t->pid) - own);
	cached_bytes_in_hole(c, &f);
	counter_sees_reads(path, statfile);
	free(statfile);
	nc_close(c);
}

/* The rw export's write_mode set to mode in the conf, and the daemon restarted on it. */
static void restart_with_write_mode(struct itest *t, const char *mode)
{
	char head[PATH_MAX + 16];
	FILE *fp = fopen(t->conf, "r");
	assert_non_null(fp);
	char *conf = calloc(1, 1 << 16);
	assert_non_null(conf);
	size_t len = fread(conf, 1, (1 << 16) - 1, fp);
	fclose(fp);
	snprintf(head, sizeof head, "[export %s]\n", t->exports[EXP_RW]);
	char *at = strstr(conf, head);
	assert_non_null(at);
	char *eol = strchr(at + strlen(head), '\n');   /* the end of its clients line */
	assert_non_null(eol);
	assert_int_equal(it_stop(t), 0);
	fp = fopen(t->conf, "w");
	assert_non_null(fp);
	size_t first = (size_t)(eol + 1 - conf);
	assert_int_equal(fwrite(conf, 1, first, fp), first);
	fprintf(fp, "write_mode = %s\n", mode);
	assert_int_equal(fwrite(eol + 1, 1, len - first, fp), len - first);
	assert_int_equal(fclose(fp), 0);
	free(conf);
	if (it_start(t) != 0)
		fail_msg("the daemon did not start with write_mode = %s", mode);
}

static void test_holes_cached(void **state)
{
	ds_file(*state, "cached", false);
}

static void test_holes_direct(void **state)
{
	struct itest *t = *state;
	restart_with_write_mode(t, "direct");
	ds_file(t, "direct", true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holes_cached),
		cmocka_unit_test(test_holes_direct),
	};
	return IT_MAIN("holes", tests);
}
