/* nfst: small static helper run inside the Linux-client test guest.
 *
 * The guest has only busybox, coreutils dd/cp/stat and fio; these few operations need system
 * calls no shell tool makes (setuid without a password, pwrite from several processes at once,
 * mmap + msync, sync_file_range). Every data pattern is a pure function of (seed, offset), so
 * running the same subcommand on tmpfs gives the reference the NFS copy is compared with.
 *
 *   nfst asuser UID GID CMD [ARG...]        exec CMD as UID:GID (supplementary groups = {GID})
 *   nfst mktree DIR NDIRS NFILES SEED       NFILES files spread over NDIRS dirs, sizes 0..20000
 *   nfst stripes FILE NPROC CHUNK NCHUNKS SEED [direct]
 *                                           NPROC processes pwrite interleaved CHUNK-byte pieces
 *   nfst mmapw FILE SIZE SEED               ftruncate, mmap, store at unaligned ranges, msync
 *   nfst stride FILE FIRST SECOND SEED [KILLREQ KILLACK STARTREQ STARTACK]
 *                                           crash writer: a partial piece in each of FIRST
 *                                           pages; KILLREQ created (the host kills the server)
 *                                           while they go out as UNSTABLE WRITEs; KILLACK
 *                                           awaited; STARTREQ (the host starts the server
 *                                           again), STARTACK awaited; a piece in each of
 *                                           SECOND more pages, fsync, close. Prints the
 *                                           WRITE/COMMIT counts at start, kill and end.
 * Exit status 0 only when every system call succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static int fail(const char *what, const char *arg)
{
	fprintf(stderr, "nfst: %s %s: %s\n", what, arg ? arg : "", strerror(errno));
	return 1;
}

/* Byte at absolute file offset OFF of the stream named SEED: position-dependent so that a
 * piece written at the wrong offset, or a stale block, shows up as a checksum difference. */
static unsigned char pat(uint64_t seed, uint64_t off)
{
	uint64_t x = (off >> 3) * 0x9E3779B97F4A7C15ull ^ seed * 0xBF58476D1CE4E5B9ull;
	x ^= x >> 31;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 29;
	return (unsigned char)(x >> (8 * (off & 7)));
}

static void fill(unsigned char *buf, size_t len, uint64_t seed, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pat(seed, off + i);
}

static int pwrite_all(int fd, const unsigned char *buf, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Writes [off, off+len) of stream SEED at the same offset of FD. */
static int put(int fd, uint64_t seed, off_t off, size_t len)
{
	unsigned char *buf;
	/* aligned so that the same buffer also serves O_DIRECT opens */
	if (posix_memalign((void **)&buf, PAGE, len ? len : 1) != 0)
		return -1;
	fill(buf, len, seed, (uint64_t)off);
	int rc = pwrite_all(fd, buf, len, off);
	free(buf);
	return rc;
}

static int cmd_asuser(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	uid_t uid = (uid_t)strtoul(argv[2], NULL, 10);
	gid_t gid = (gid_t)strtoul(argv[3], NULL, 10);
	if (setgroups(1, &gid) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
		return fail("set ids", argv[2]);
	execvp(argv[4], argv + 4);
	return fail("exec", argv[4]);
}

static int cmd_mktree(int argc, char **argv)
{
	if (argc != 6)
		return 2;
	const char *dir = argv[2];
	unsigned ndirs = (unsigned)atoi(argv[3]), nfiles = (unsigned)atoi(argv[4]);
	uint64_t seed = strtoull(argv[5], NULL, 10);
	char path[4096];

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return fail("mkdir", dir);
	for (unsigned d = 0; d < ndirs; d++) {
		snprintf(path, sizeof(path), "%s/d%03u", dir, d);
		/* a few modes other than the umask default, for cp -a to carry over */
		if (mkdir(path, d % 5 == 0 ? 0700 : 0755) != 0 && errno != EEXIST)
			return fail("mkdir", path);
	}
	for (unsigned f = 0; f < nfiles; f++) {
		uint64_t id = seed * 1000003u + f;
		size_t size = (size_t)(pat(id, 0) | pat(id, 1) << 8) % 20001u;
		snprintf(path, sizeof(path), "%s/d%03u/f%05u", dir, f % ndirs, f);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, f % 7 == 0 ? 0600 : 0644);
		if (fd < 0)
			return fail("open", path);
		if (put(fd, id, 0, size) != 0 || close(fd) != 0)
			return fail("write", path);
		if (f % 50 == 0) {
			char link[4096], target[64];
			snprintf(link, sizeof(link), "%s/d%03u/l%05u", dir, f % ndirs, f);
			snprintf(target, sizeof(target), "../d%03u/f%05u", f % ndirs, f);
			if (symlink(target, link) != 0)
				return fail("symlink", link);
		}
	}
	return 0;
}

/* Child I writes the pieces J with J % NPROC == I; all children start together so their
 * writes to shared pages and server blocks overlap in time. */
static int stripes_child(const char *file, unsigned i, unsigned nproc, size_t chunk,
			 unsigned nchunks, uint64_t seed, int direct, int go)
{
	char c;
	int fd = open(file, O_WRONLY | O_CREAT | (direct ? O_DIRECT : 0), 0644);
	if (fd < 0)
		return fail("open", file);
	if (read(go, &c, 1) < 0)
		return fail("read", "go pipe");
	for (unsigned j = i; j < nchunks; j += nproc)
		if (put(fd, seed, (off_t)j * (off_t)chunk, chunk) != 0)
			return fail("pwrite", file);
	if (close(fd) != 0)
		return fail("close", file);
	return 0;
}

static int cmd_stripes(int argc, char **argv)
{
	if (argc != 7 && argc != 8)
		return 2;
	const char *file = argv[2];
	unsigned nproc = (unsigned)atoi(argv[3]);
	size_t chunk = strtoul(argv[4], NULL, 10);
	unsigned nchunks = (unsigned)atoi(argv[5]);
	uint64_t seed = strtoull(argv[6], NULL, 10);
	int direct = argc == 8 && strcmp(argv[7], "direct") == 0;
	int go[2], rc = 0;

	if (pipe(go) != 0)
		return fail("pipe", NULL);
	for (unsigned i = 0; i < nproc; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return fail("fork", NULL);
		if (pid == 0) {
			close(go[1]);
			_exit(stripes_child(file, i, nproc, chunk, nchunks, seed, direct, go[0]));
		}
	}
	close(go[0]);
	close(go[1]); /* EOF on the pipe releases every child at once */
	for (unsigned i = 0; i < nproc; i++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = 1;
	}
	return rc;
}

static int cmd_mmapw(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	const char *file = argv[2];
	size_t size = strtoul(argv[3], NULL, 10);
	uint64_t seed = strtoull(argv[4], NULL, 10);
	/* ranges that start and end off page and block boundaries, one spanning many pages */
	const size_t r[][2] = {{1, 5000}, {4095, 4097}, {10000, 70001}, {123457, 131073}};

	if (size < 131073 + 4096)
		return 2;
	int fd = open(file, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		return fail("open", file);
	if (ftruncate(fd, (off_t)size) != 0)
		return fail("ftruncate", file);
	unsigned char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return fail("mmap", file);
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		fill(m + r[i][0], r[i][1] - r[i][0], seed, r[i][0]);
	fill(m + size - 777, 777, seed, size - 777); /* the partial last page */
	if (msync(m, size, MS_SYNC) != 0)
		return fail("msync", file);
	if (munmap(m, size) != 0 || close(fd) != 0)
		return fail("munmap/close", file);
	return 0;
}

static int touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	return fd < 0 ? -1 : close(fd);
}

/* The host answers a request file X.req with X.ack (see run.sh). */
static int wait_for(const char *path, int seconds)
{
	struct timespec ts = {0, 50 * 1000 * 1000};
	for (int i = 0; i < seconds * 20; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	errno = ETIMEDOUT;
	return -1;
}

/* WRITE and COMMIT calls completed on the NFS mounts so far (/proc/self/mountstats). */
static void rpc_counts(unsigned long *writes, unsigned long *commits)
{
	char line[512], op[32];
	unsigned long n;
	FILE *f = fopen("/proc/self/mountstats", "r");

	*writes = *commits = 0;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, " %31[A-Z]: %lu", op, &n) != 2)
			continue;
		if (strcmp(op, "WRITE") == 0)
			*writes += n;
		else if (strcmp(op, "COMMIT") == 0)
			*commits += n;
	}
	fclose(f);
}

/* Prints "nfst stride: WHEN: WRITE n COMMIT m": compared with the counts at the kill, they
 * show whether the client sent the WRITEs again after the restart (tests.sh checks it). */
static void print_rpc_counts(const char *when)
{
	unsigned long w, c;
	rpc_counts(&w, &c);
	fprintf(stderr, "nfst stride: %s: WRITE %lu COMMIT %lu\n", when, w, c);
}

/* One piece [page*4096+100, page*4096+3000) in each page: every WRITE the client sends is a
 * partial block the server has to hold until COMMIT, which makes a lost verifier visible. */
static int stride_pass(int fd, unsigned from, unsigned to, uint64_t seed)
{
	for (unsigned p = from; p < to; p++)
		if (put(fd, seed, (off_t)p * PAGE + 100, 2900) != 0)
			return -1;
	return 0;
}

static int cmd_stride(int argc, char **argv)
{
	if (argc != 6 && argc != 10)
		return 2;
	const char *file = argv[2];
	unsigned first = (unsigned)atoi(argv[3]), second = (unsigned)atoi(argv[4]);
	uint64_t seed = strtoull(argv[5], NULL, 10);
	int crash = argc == 10;
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return fail("open", file);
	if (stride_pass(fd, 0, first, seed) != 0)
		return fail("pwrite (first part)", file);
	/* Start sending the first part as UNSTABLE WRITEs (a WB_SYNC_NONE writeback; waiting in
	 * the same call would make it WB_SYNC_ALL, which goes FILE_SYNC) while the host kills the
	 * server. The client sends COMMIT only once every WRITE of the burst has its reply, so the
	 * WRITEs answered before the kill are committed, if at all, by the restarted server: with
	 * a new verifier, which must make the client send them again. */
	unsigned long w0, c0, w, c;
	rpc_counts(&w0, &c0);
	if (crash)
		print_rpc_counts("at-start");
	if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) != 0)
		return fail("sync_file_range", file);
	if (crash) {
		/* the WRITEs go out asynchronously: ask for the kill once some have their reply */
		struct timespec ts = {0, 10 * 1000 * 1000};
		for (int i = 0; i < 6000; i++) {
			rpc_counts(&w, &c);
			if (w >= w0 + first / 30)
				break;
			nanosleep(&ts, NULL);
		}
		if (touch(argv[6]) != 0)
			return fail("create", argv[6]);
		/* the server is dead now: the counts are those of the replies it sent */
		if (wait_for(argv[7], 120) != 0)
			return fail("wait for", argv[7]);
		print_rpc_counts("at-kill");
		if (touch(argv[8]) != 0)
			return fail("create", argv[8]);
		if (wait_for(argv[9], 120) != 0)
			return fail("wait for", argv[9]);
	}
	if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_AFTER) != 0)
		return fail("sync_file_range", file);
	if (stride_pass(fd, first, first + second, seed) != 0)
		return fail("pwrite (second part)", file);
	if (fsync(fd) != 0)
		return fail("fsync", file);
	if (close(fd) != 0)
		return fail("close", file);
	if (crash)
		print_rpc_counts("at-end");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{"asuser", cmd_asuser}, {"mktree", cmd_mktree}, {"stripes", cmd_stripes},
		{"mmapw", cmd_mmapw},   {"stride", cmd_stride},
	};
	for (size_t i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name) == 0) {
			int rc = cmds[i].fn(argc, argv);
			if (rc == 2)
				fprintf(stderr, "nfst %s: bad arguments (see the comment in nfst.c)\n",
					argv[1]);
			return rc;
		}
	}
	fprintf(stderr, "usage: nfst asuser|mktree|stripes|mmapw|stride ...\n");
	return 2;
}
