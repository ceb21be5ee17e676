/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfs-interleave-threads: nfs-interleave's workload (the interleaved records of the seeds,
 * shared/seeds/000 and 002, over NFSv3, then every byte read back and checked) driven the way
 * applications drive it: one POSIX thread per connection, each making blocking calls through
 * libnfs's high-level synchronous API (nfs_mount, nfs_open, nfs_pwrite, nfs_fsync, nfs_pread).
 *
 * Why a second load generator: a user's report showed figures that move with the client's shape
 * ("32 application threads doing synchronous writes", each with one WRITE in flight), and
 * nfs-interleave (bench/interleave.c) is one client implementation: one event loop over libnfs's
 * raw RPC layer. This one is independent of it: libnfs splits a call larger than the server's
 * wtmax (or rtmax) into WRITEs (READs) of its own and reissues the rest of a short WRITE itself,
 * its READ path is its own, and every reply wakes the thread that waits for it.
 *
 * Same command line, result line and exit statuses as nfs-interleave (bench/lib/ilcommon.c), so
 * that bench/run can run either (--interleave-client), and the same data (nb_pattern_fill of
 * offset and seed), so that either can --verify-only what the other wrote. Record i covers
 * [i*R, (i+1)*R); writer t of W writes records t, t+W, t+2W, ... in order, one nfs_pwrite at a
 * time. --qd Q gives each writer Q threads, each with its own nfs_context and so its own TCP
 * connection, taking the writer's records round-robin (thread k the k-th, (k+Q)-th, ... of
 * them): W*Q threads and connections with one call in flight each, where nfs-interleave keeps
 * Q WRITEs in flight on each of W connections. Every thread connects and mounts before the
 * clock starts; the read-back runs on W of them.
 *
 * --sync file opens the file O_SYNC, which libnfs 4.0 sends as FILE_SYNC WRITEs (its nfsfh's
 * is_sync, lib/nfs_v3.c); unstable ends with nfs_fsync, a COMMIT: one on connection 0 once
 * every thread is done (--commit once, timed), or one per thread after its last record (each).
 * The high-level API shows neither a WRITE's verifier nor what it committed: records are not
 * resent when the verifier changes (the bench restarts no server within a case), a server that
 * answers a FILE_SYNC WRITE with less is not caught, and resends= and short_writes= are always
 * 0. writes= counts the WRITEs libnfs first sends for the records (a record larger than the
 * server's wtmax, which nfs-interleave refuses, as several; a remainder it reissues is not seen).
 *
 * Exit status: 0 all verified, 1 a byte read back differs, 2 usage, 3 server or protocol error. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/ilcommon.h"
#include "lib/nfsclient.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#define PROG program_invocation_short_name
#define EXIT_MISMATCH NB_EXIT_MISMATCH
#define EXIT_SERVER NB_EXIT_SERVER

#define MAX_CONNS 4096          /* W*Q threads and sockets */
/* libnfs's synchronous calls need little stack; 512 threads of glibc's default 8 MiB would
 * reserve 4 GiB of address space for nothing */
#define THREAD_STACK (1u << 20)

struct run;

/* One connection: its thread, its nfs_context, and what it did. */
struct conn {
	struct run *r;
	unsigned id;                /* t + k*W for writer t's thread k: see write_records */
	struct nfs_context *nfs;
	struct nfs_url *url;
	struct nfsfh *fh;           /* what it writes through (the control handle on conn 0) */
	bool mounted, wrote;
	pthread_t tid;
	uint8_t *buf;               /* one record */
	uint64_t writes, commits;   /* its own counts, summed once it was joined */
};

struct run {
	const struct il_opts *o;
	struct conn *c;
	unsigned nconn;             /* W*Q */
	unsigned ninit;             /* contexts made: nconn, or what the phases need */
	unsigned started;           /* threads of the current phase */
	char *url, *path;
	uint64_t nrec, size, writemax;
	uint32_t rsize;
	pthread_mutex_t lock;       /* the fields down to `failed` */
	pthread_cond_t cond;        /* one of them changed; waited on against CLOCK_MONOTONIC */
	unsigned ready, writes_done, finished;
	bool go;
	int failed;                 /* exit status of the first failure, 0 while none */
	atomic_bool stop;           /* failed: read between calls, without the lock */
	atomic_uint_fast64_t acked;         /* bytes nfs_pwrite wrote, for --interval */
	atomic_uint_fast64_t next_chunk;    /* the read-back's next --rsize chunk */
	atomic_uint_fast64_t verified;
};

/* ---- failures and counts shared by the threads ---- */

/* The first failure is the one worth reading: nb_fail_first, under the lock, and every thread
 * stops at its next call. */
__attribute__((format(printf, 3, 4)))
static void fail(struct run *r, int status, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&r->lock);
	va_start(ap, fmt);
	nb_vfail_first(&r->failed, status, fmt, ap);
	va_end(ap);
	atomic_store(&r->stop, true);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static bool stopped(struct run *r)
{
	return atomic_load_explicit(&r->stop, memory_order_relaxed);
}

static void mismatch(struct run *r, uint64_t off, const uint8_t *got, const uint8_t *want,
		     size_t len)
{
	pthread_mutex_lock(&r->lock);
	il_report_mismatch(&r->failed, r->o, off, got, want, len);
	atomic_store(&r->stop, true);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* One more thread ready, done writing, or finished: tell whoever waits for them all. */
static void count(struct run *r, unsigned *n)
{
	pthread_mutex_lock(&r->lock);
	(*n)++;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* Until *n counts every thread of the phase, or the run failed. */
static void wait_all(struct run *r, const unsigned *n)
{
	pthread_mutex_lock(&r->lock);
	while (*n < r->started && !stopped(r))
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
}

/* ---- connections ---- */

/* A context with the URL's ports and version, in the main thread one after the other: libnfs
 * 4.0's rpc_init_context derives each context's first xid from a static counter it increments
 * without a lock, and two connections starting from one xid could meet in a reply cache. */
static int conn_init(struct run *r, struct conn *c)
{
	c->r = r;
	c->nfs = nfs_init_context();
	if (c->nfs == NULL) {
		fprintf(stderr, "%s: nfs_init_context failed\n", PROG);
		return -1;
	}
	c->url = nfs_parse_url_dir(c->nfs, r->url);
	if (c->url == NULL) {
		fprintf(stderr, "%s: %s: %s\n", PROG, r->url, nfs_get_error(c->nfs));
		return -1;
	}
	/* Both are off by default in 4.0; said here so that no client cache stands between the
	 * bench and the server (0 keeps pagecache at its default: 4.0 only lets it grow). */
	nfs_set_pagecache(c->nfs, 0);
	nfs_set_readahead(c->nfs, 0);
	/* A lost connection fails the run, as nfs-interleave's does, rather than being redone;
	 * a call unanswered for NB_STALL_MS fails it too. */
	nfs_set_autoreconnect(c->nfs, 0);
	nfs_set_timeout(c->nfs, NB_STALL_MS);
	return 0;
}

static int conn_mount(struct conn *c)
{
	if (c->mounted)
		return 0;
	if (nfs_mount(c->nfs, c->url->server, c->url->path) < 0) {
		fail(c->r, EXIT_SERVER, "mount %s:%s (connection %u): %s", c->url->server,
		     c->url->path, c->id, nfs_get_error(c->nfs));
		return -1;
	}
	c->mounted = true;
	return 0;
}

static int conn_open(struct conn *c, int flags, struct nfsfh **fh)
{
	if (nfs_open2(c->nfs, c->r->path, flags, 0644, fh) < 0) {
		fail(c->r, EXIT_SERVER, "open %s (connection %u): %s", c->r->path, c->id,
		     nfs_get_error(c->nfs));
		*fh = NULL;
		return -1;
	}
	return 0;
}

/* How the writers open the file: O_SYNC makes libnfs send FILE_SYNC. */
static int write_flags(const struct il_opts *o)
{
	return O_WRONLY | (o->sync == SYNC_FILE ? O_SYNC : 0);
}

/* Connection 0, set up by the main thread before the others start: it makes the file (with
 * --fresh, before any writer opens it), and learns the transfer sizes. Its handle also serves
 * the size check, --commit once and --commit-only. */
static int control_open(struct run *r)
{
	const struct il_opts *o = r->o;
	struct conn *c = &r->c[0];
	bool writing = o->phases == PH_BOTH || o->phases == PH_WRITE;
	int flags = o->phases == PH_VERIFY ? O_RDONLY : write_flags(o);
	uint64_t rtmax;

	if (writing && o->fresh)
		flags |= O_CREAT | O_TRUNC;
	if (conn_mount(c) < 0 || conn_open(c, flags, &c->fh) < 0)
		return -1;
	r->writemax = nfs_get_writemax(c->nfs);
	rtmax = nfs_get_readmax(c->nfs);
	r->rsize = o->rsize ? o->rsize : IL_DEFAULT_RSIZE;
	if (rtmax > 0 && r->rsize > rtmax)
		r->rsize = (uint32_t)rtmax;
	if (r->writemax == 0)
		r->writemax = o->record;
	return 0;
}

/* ---- threads ---- */

static void start_threads(struct run *r, unsigned n, void *(*fn)(void *))
{
	pthread_attr_t attr;

	r->started = 0;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	for (unsigned i = 0; i < n; i++) {
		int e = pthread_create(&r->c[i].tid, &attr, fn, &r->c[i]);

		if (e != 0) {
			fail(r, EXIT_SERVER, "thread %u of %u: %s", i, n, strerror(e));
			break;
		}
		r->started++;
	}
	pthread_attr_destroy(&attr);
}

static void join_threads(struct run *r)
{
	for (unsigned i = 0; i < r->started; i++)
		pthread_join(r->c[i].tid, NULL);
}

/* A thread: ready (connected, mounted, file open), then held until main starts the clock. */
static void gate_pass(struct run *r)
{
	pthread_mutex_lock(&r->lock);
	r->ready++;
	pthread_cond_broadcast(&r->cond);
	while (!r->go)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
}

/* Main: once every thread started is ready, the clock starts and they are let go. */
static double gate_open(struct run *r)
{
	double t0;

	pthread_mutex_lock(&r->lock);
	while (r->ready < r->started)
		pthread_cond_wait(&r->cond, &r->lock);
	t0 = nb_now_s();
	r->go = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return t0;
}

/* ---- the write phase ---- */

/* Connection c = t + k*W is writer t's thread k. Writer t's j-th record is t + j*W, and thread
 * k takes j = k, k+Q, k+2Q, ...: records c, c + W*Q, c + 2*W*Q, ... */
static void write_records(struct conn *c)
{
	struct run *r = c->r;
	uint64_t len = r->o->record;

	for (uint64_t rec = c->id; rec < r->nrec && !stopped(r); rec += r->nconn) {
		uint64_t off = rec * len;
		int n;

		nb_pattern_fill(r->o->seed, off, c->buf, len);
		c->wrote = true;
		n = nfs_pwrite(c->nfs, c->fh, off, len, c->buf);
		if (n < 0 || (uint64_t)n != len) {
			fail(r, EXIT_SERVER, "WRITE offset %" PRIu64 " count %" PRIu64 ": %s", off, len,
			     n < 0 ? nfs_get_error(c->nfs) : "written in part");
			return;
		}
		c->writes += (len + r->writemax - 1) / r->writemax;
		atomic_fetch_add_explicit(&r->acked, len, memory_order_relaxed);
	}
}

static void commit(struct conn *c)
{
	c->commits++;
	if (nfs_fsync(c->nfs, c->fh) < 0)
		fail(c->r, EXIT_SERVER, "COMMIT: %s", nfs_get_error(c->nfs));
}

/* --commit each: every thread after its last record; once: connection 0, once every thread
 * is done writing. */
static void commit_mine(struct conn *c)
{
	const struct il_opts *o = c->r->o;

	if (o->sync == SYNC_FILE || o->commit == COMMIT_NONE)
		return;
	if (o->commit == COMMIT_ONCE) {
		if (c->id != 0)
			return;
		wait_all(c->r, &c->r->writes_done);
		if (stopped(c->r))
			return;
	}
	commit(c);
}

/* Connecting and opening are each thread's own (in parallel), before the clock starts;
 * connection 0 was set up by main. */
static int writer_setup(struct conn *c)
{
	c->buf = malloc(c->r->o->record);
	if (c->buf == NULL) {
		fail(c->r, EXIT_SERVER, "out of memory");
		return -1;
	}
	if (c->fh != NULL)
		return 0;
	if (conn_mount(c) < 0)
		return -1;
	return conn_open(c, write_flags(c->r->o), &c->fh);
}

static void *writer_main(void *arg)
{
	struct conn *c = arg;
	struct run *r = c->r;
	bool ok = writer_setup(c) == 0;

	gate_pass(r);
	if (ok && !stopped(r))
		write_records(c);
	count(r, &r->writes_done);
	if (ok && !stopped(r))
		commit_mine(c);
	count(r, &r->finished);
	return NULL;
}

/* --interval: one line per interval with the MiB/s acknowledged in it (the same lines as
 * nfs-interleave's). commit=1 once every thread is done writing and COMMIT is awaited. */
struct ticker {
	double t0, last_t, next;
	uint64_t last_bytes;
};

static void tick(struct run *r, struct ticker *k)
{
	double now = nb_now_s(), every = r->o->interval;
	uint64_t bytes = atomic_load(&r->acked);

	if (now < k->next)
		return;
	il_print_tick(now - k->t0, bytes, (double)(bytes - k->last_bytes) / 1048576.0 /
		      (now - k->last_t), r->writes_done >= r->started);
	k->last_bytes = bytes;
	k->last_t = now;
	k->next += every;
	if (k->next < now)
		k->next = now + every;
}

static int wait_until(struct run *r, double t)
{
	struct timespec ts = { .tv_sec = (time_t)t };

	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	return pthread_cond_timedwait(&r->cond, &r->lock, &ts);
}

/* Main, while the threads write: until every one finished (its COMMIT included), printing
 * the --interval lines (under the lock: the counts they read change a few times a run). */
static void wait_finished(struct run *r, double t0)
{
	struct ticker k = { .t0 = t0, .last_t = t0, .next = t0 + r->o->interval };

	pthread_mutex_lock(&r->lock);
	while (r->finished < r->started) {
		if (r->o->interval <= 0)
			pthread_cond_wait(&r->cond, &r->lock);
		else if (wait_until(r, k.next) == ETIMEDOUT)
			tick(r, &k);
	}
	pthread_mutex_unlock(&r->lock);
}

/* The seconds run from the release of the connected threads to the last one's end, the final
 * COMMIT included. */
static int write_phase(struct run *r, double *secs)
{
	double t0;

	start_threads(r, r->nconn, writer_main);
	t0 = gate_open(r);
	wait_finished(r, t0);
	*secs = nb_now_s() - t0;
	join_threads(r);
	return r->failed;
}

/* ---- the read-back ---- */

/* All len bytes at off into buf: nfs_pread returns fewer at the end of the file. */
static int read_full(struct conn *c, struct nfsfh *fh, uint64_t off, uint32_t len, uint8_t *buf)
{
	for (uint32_t done = 0; done < len;) {
		int n = nfs_pread(c->nfs, fh, off + done, len - done, buf + done);

		if (n < 0) {
			fail(c->r, EXIT_SERVER, "READ offset %" PRIu64 ": %s", off + done,
			     nfs_get_error(c->nfs));
			return -1;
		}
		if (n == 0) {
			fail(c->r, EXIT_MISMATCH, "READ offset %" PRIu64 ": no data: the file is short",
			     off + done);
			return -1;
		}
		done += (uint32_t)n;
	}
	return 0;
}

/* The threads take the file's --rsize chunks in turn until none is left. */
static void read_chunks(struct conn *c, struct nfsfh *fh, uint8_t *got, uint8_t *want)
{
	struct run *r = c->r;
	uint64_t i;

	while (!stopped(r) && (i = atomic_fetch_add(&r->next_chunk, 1)) * r->rsize < r->size) {
		uint64_t off = i * r->rsize;
		uint32_t len = (uint32_t)(r->size - off < r->rsize ? r->size - off : r->rsize);

		if (read_full(c, fh, off, len, got) < 0)
			return;
		nb_pattern_fill(r->o->seed, off, want, len);
		if (memcmp(got, want, len) != 0) {
			mismatch(r, off, got, want, len);
			return;
		}
		atomic_fetch_add(&r->verified, len);
	}
}

/* A handle of its own, read-only: nfs_close frees it without a COMMIT. */
static void *reader_main(void *arg)
{
	struct conn *c = arg;
	struct run *r = c->r;
	uint8_t *got = malloc(r->rsize), *want = malloc(r->rsize);
	struct nfsfh *fh = NULL;

	if (got == NULL || want == NULL)
		fail(r, EXIT_SERVER, "out of memory");
	else if (conn_mount(c) == 0 && conn_open(c, O_RDONLY, &fh) == 0)
		read_chunks(c, fh, got, want);
	if (fh != NULL)
		nfs_close(c->nfs, fh);
	free(got);
	free(want);
	return NULL;
}

/* One thread per writer (not per connection): W reads in flight, and W buffers of --rsize. */
static int verify_phase(struct run *r)
{
	uint64_t verified;

	start_threads(r, r->o->writers, reader_main);
	join_threads(r);
	if (r->failed)
		return r->failed;
	verified = atomic_load(&r->verified);
	if (verified != r->size) {
		fprintf(stderr, "%s: verified %" PRIu64 " bytes of %" PRIu64 "\n", PROG, verified,
			r->size);
		return EXIT_MISMATCH;
	}
	return 0;
}

/* ---- set-up and tear-down ---- */

static int run_init(struct run *r)
{
	const struct il_opts *o = r->o;
	pthread_condattr_t ca;

	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);   /* nb_now_s's clock */
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	r->nconn = o->writers * o->qd;
	r->ninit = o->phases == PH_COMMIT ? 1 : o->phases == PH_VERIFY ? o->writers : r->nconn;
	r->nrec = o->records;
	r->size = o->records * o->record;
	r->c = calloc(r->nconn, sizeof(*r->c));
	if (r->c == NULL ||
	    asprintf(&r->url, "nfs://%s%s%s?nfsport=%d&mountport=%d&version=3", o->host,
		     o->export[0] == '/' ? "" : "/", o->export, o->nfs_port, o->mount_port) < 0 ||
	    asprintf(&r->path, "/%s", o->file) < 0) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		return -1;
	}
	for (unsigned i = 0; i < r->ninit; i++) {
		r->c[i].id = i;
		if (conn_init(r, &r->c[i]) < 0)
			return -1;
	}
	return 0;
}

/* A handle written through is not closed: libnfs 4.0's nfs_close COMMITs every such handle (its
 * is_dirty, which even nfs_fsync leaves set), a COMMIT that --commit none and FILE_SYNC runs
 * must not send. Its few bytes go with the process; the leak checker of a sanitized build is
 * told so, or it would fail the run at exit. */
static void keep_unclosed(struct nfsfh *fh)
{
#ifdef __SANITIZE_ADDRESS__
	__lsan_ignore_object(fh);
#else
	(void)fh;
#endif
}

static void run_free(struct run *r)
{
	for (unsigned i = 0; r->c != NULL && i < r->ninit; i++) {
		struct conn *c = &r->c[i];

		if (c->fh != NULL && !c->wrote)
			nfs_close(c->nfs, c->fh);
		else if (c->fh != NULL)
			keep_unclosed(c->fh);
		if (c->url != NULL)
			nfs_destroy_url(c->url);
		if (c->nfs != NULL)
			nfs_destroy_context(c->nfs);
		free(c->buf);
	}
	free(r->c);
	free(r->url);
	free(r->path);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fputs("usage: nfs-interleave-threads [options] HOST NFS_PORT MOUNT_PORT EXPORT FILE\n"
	      "  -w, --writers N     writers (32), each writing its records in order\n"
	      "  -q, --qd N          threads per writer, each with its own connection and one\n"
	      "                      call in flight, taking the writer's records in turn (4):\n"
	      "                      W*Q threads and connections, at most 4096\n", f);
	il_usage_options(f);
}

static int commit_only(struct run *r)
{
	commit(&r->c[0]);
	if (r->failed)
		return r->failed;
	printf("commit=ok commits=%" PRIu64 "\n", r->c[0].commits);
	return 0;
}

static int check_size(struct run *r)
{
	struct nfs_stat_64 st;

	if (nfs_fstat64(r->c[0].nfs, r->c[0].fh, &st) < 0) {
		fprintf(stderr, "%s: GETATTR: %s\n", PROG, nfs_get_error(r->c[0].nfs));
		return EXIT_SERVER;
	}
	return il_check_size(r->o, st.nfs_size, r->size);
}

static int run_all(struct run *r)
{
	struct il_result res = { .nrec = r->nrec, .size = r->size };
	int rc;

	if (control_open(r) < 0)
		return r->failed;
	if (r->o->phases == PH_COMMIT)
		return commit_only(r);
	if (r->o->phases != PH_VERIFY && (rc = write_phase(r, &res.secs)) != 0)
		return rc;
	if ((rc = check_size(r)) != 0)
		return rc;
	if (r->o->phases != PH_WRITE && (rc = verify_phase(r)) != 0)
		return rc;
	for (unsigned i = 0; i < r->ninit; i++) {
		res.writes += r->c[i].writes;
		res.commits += r->c[i].commits;
	}
	res.verified = atomic_load(&r->verified);
	il_print_result(r->o, &res);
	return 0;
}

/* W*Q threads, each with a socket: a bound on both. */
static bool shape_ok(const struct il_opts *o)
{
	if (o->writers * o->qd <= MAX_CONNS)
		return true;
	fprintf(stderr, "%s: %u writers x %u threads: at most %u connections\n", PROG, o->writers,
		o->qd, MAX_CONNS);
	return false;
}

int main(int argc, char **argv)
{
	struct il_opts o;
	struct run r = { .o = &o };
	int rc = EXIT_SERVER;

	nb_keep_heap_warm();

	if (il_parse_args(&o, argc, argv, usage) < 0 || !shape_ok(&o)) {
		usage(stderr);
		return IL_EXIT_USAGE;
	}
	if (run_init(&r) == 0)
		rc = run_all(&r);
	run_free(&r);
	return rc;
}
