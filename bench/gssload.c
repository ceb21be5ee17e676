/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gss-load: bench/run's load generator for RPCSEC_GSS (sec=krb5, krb5i, krb5p), where libnfs, the
 * other load generators' client, has no Kerberos. Two workloads over NFSv3, each writer on a TCP
 * connection and a GSS context of its own (lib/gssconn.c, on tests/integration/rawgss.c), --qd
 * calls in flight on each (pipelined, replies matched by xid):
 *
 *   interleave  the seeds' records, as nfs-interleave writes them: record i covers [i*R, (i+1)*R),
 *               writer t of W writes records t, t+W, t+2W, ...; UNSTABLE and one COMMIT of the
 *               file when every writer is done (records whose WRITE verifier differs from
 *               COMMIT's are written again), or FILE_SYNC; a fresh file
 *   seq         one large file in --record-sized WRITEs (1 MiB) in order, the writers taking the
 *               next one as a call of theirs is answered; UNSTABLE + COMMIT, or FILE_SYNC
 *
 * then the read phase: the whole file read in --rsize READs (1 MiB, at most the server's rtmax),
 * --passes times over, every byte checked against what was written (the data is a function of
 * the offset and --seed: lib/nfsclient.c's pattern). --write-only and --read-only split the two
 * phases into runs of their own (the same --seed, sizes and records), as bench/run measures them.
 *
 * Every call carries the chosen service: krb5 (none: the header's MIC only), krb5i (integrity:
 * arguments and results checksummed) or krb5p (privacy: encrypted). A WRITE's data is made where
 * it is sent from and checksummed or encrypted there; a READ's reply is checked or decrypted
 * where it was received: the client's crypto is the GSS-API's and nothing more. MNT is made with
 * AUTH_SYS, as Linux makes it whatever it mounts with.
 *
 * Exit status: 0 all verified, 1 a byte read back differs, 2 usage, 3 server, protocol or
 * Kerberos error. */
#include "gssload.h"

#include <inttypes.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define MAX_COMMIT_ROUNDS 8

/* ---- set-up, COMMIT and checks: one call at a time on writer 0 ---- */

/* plain sealed with the run's service on writer 0, which must go through: 0 with *rep (free
 * it), or -1 with the failure recorded. */
static int sync_call(struct run *r, const struct xb *plain, const char *what,
                     struct rg_reply *rep)
{
	if (gc_call_sync(&r->w[0].c, plain, rep) < 0) {
		fail(r, NB_EXIT_SERVER, "%s: no reply", what);
		return -1;
	}
	if (!rg_reply_good(rep)) {
		fail(r, NB_EXIT_SERVER, "%s (%s): %s", what, service_names[r->o->service],
		     rg_describe(rep));
		rg_reply_free(rep);
		return -1;
	}
	return 0;
}

/* The file: made anew (REMOVE, whatever it answers, then CREATE) for a write phase, looked up
 * for a read-only run; then the server's largest READ and WRITE. */
static int open_file(struct run *r, const struct rn_fh *root)
{
	struct gconn *c = &r->w[0].c;
	struct xb plain;
	struct rg_reply rep;
	uint32_t rtmax = 0, wtmax = 0;
	int st;

	if (r->o->phases != PH_READ) {
		rn_enc_remove_as(&plain, gc_next_xid(c), root, r->o->file, 0, 0);
		if (sync_call(r, &plain, "REMOVE", &rep) < 0)
			return -1;
		rg_reply_free(&rep);
		rn_enc_create(&plain, gc_next_xid(c), root, r->o->file);
	} else {
		rn_enc_lookup_as(&plain, gc_next_xid(c), root, r->o->file, 0, 0);
	}
	if (sync_call(r, &plain, r->o->phases != PH_READ ? "CREATE" : "LOOKUP", &rep) < 0)
		return -1;
	st = r->o->phases != PH_READ ? rn_dec_create(&rep.r, &r->fh) : rn_dec_lookup(&rep.r, &r->fh);
	rg_reply_free(&rep);
	if (st != 0) {
		fail(r, NB_EXIT_SERVER, "%s %s: status %d", r->o->phases != PH_READ ? "CREATE" : "LOOKUP",
		     r->o->file, st);
		return -1;
	}
	rn_enc_fsinfo(&plain, gc_next_xid(c), &r->fh);
	if (sync_call(r, &plain, "FSINFO", &rep) < 0)
		return -1;
	st = rn_dec_fsinfo(&rep.r, &rtmax, &wtmax);
	rg_reply_free(&rep);
	if (st != 0 || (wtmax && r->o->record > wtmax)) {
		fail(r, NB_EXIT_SERVER, "FSINFO: status %d, wtmax %u for %" PRIu64 "-byte WRITEs", st,
		     wtmax, r->o->record);
		return -1;
	}
	r->rsize = r->o->rsize ? r->o->rsize : 1u << 20;
	if (rtmax && r->rsize > rtmax)
		r->rsize = rtmax;
	return 0;
}

/* Units whose verifier differs from COMMIT's (or among their pieces) go back to a writer. */
static uint64_t requeue_mismatched(struct run *r, const uint8_t verf[8])
{
	uint64_t n = 0;

	for (uint64_t u = 0; u < r->nunits && !failed(r); u++) {
		struct unit *x = &r->units[u];

		if (!(x->flags & U_VERF) || (!(x->flags & U_MIXED) && memcmp(x->verf, verf, 8) == 0))
			continue;
		x->flags = 0;
		if (nb_pieces_push(&r->w[u % r->o->writers].todo, u * r->o->record,
		                   (uint32_t)unit_len(r, u)) < 0)
			fail(r, NB_EXIT_SERVER, "out of memory");
		n++;
	}
	r->resends += n;
	return n;
}

/* One COMMIT of the whole file: the units to write again (0: done), or -1. */
static int64_t commit(struct run *r)
{
	struct xb plain;
	struct rg_reply rep;
	uint8_t verf[8];
	int st;

	rn_enc_commit(&plain, gc_next_xid(&r->w[0].c), &r->fh, 0, 0);
	if (sync_call(r, &plain, "COMMIT", &rep) < 0)
		return -1;
	st = rn_dec_commit_verf(&rep.r, verf);
	rg_reply_free(&rep);
	r->commits++;
	if (st != 0) {
		fail(r, NB_EXIT_SERVER, "COMMIT: status %d", st);
		return -1;
	}
	return (int64_t)requeue_mismatched(r, verf);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static uint64_t sum(const struct run *r, size_t field)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < r->o->writers; i++)
		n += *(const uint64_t *)((const char *)&r->w[i] + field);
	return n;
}

static void clear_counts(struct run *r)
{
	for (unsigned i = 0; i < r->o->writers; i++)
		r->w[i].calls = r->w[i].bytes = r->w[i].short_ops = 0;
}

static void print_common(const struct run *r, const char *phase, double secs, double cpu)
{
	const struct opts *o = r->o;
	uint64_t bytes = sum(r, offsetof(struct writer, bytes));

	printf("phase=%s workload=%s service=%s bytes=%" PRIu64 " seconds=%.3f MiB/s=%.1f "
	       "client_cpu_s=%.3f writers=%u qd=%u threads=%u record=%" PRIu64 " seed=%" PRIu64,
	       phase, o->wl == WL_SEQ ? "seq" : "interleave", service_names[o->service], bytes,
	       secs, secs > 0 ? (double)bytes / 1048576.0 / secs : 0.0, cpu, o->writers, o->qd,
	       o->threads, o->record, o->seed);
}

/* Every unit written (UNSTABLE and COMMITs until the verifiers agree, or FILE_SYNC), timed. */
static int write_phase(struct run *r)
{
	double t0 = nb_now_s(), c0 = cpu_seconds();
	int64_t again = 1;

	r->phase = K_WRITE;
	atomic_store(&r->next, 0);
	for (unsigned i = 0; i < r->o->writers; i++)
		r->w[i].next_rec = i;
	clear_counts(r);
	for (unsigned round = 0; again > 0; round++) {
		if (round == MAX_COMMIT_ROUNDS) {
			fail(r, NB_EXIT_SERVER, "the write verifier changed at %d COMMITs in a row",
			     MAX_COMMIT_ROUNDS);
			break;
		}
		if (run_threads(r) != 0)
			break;
		again = r->o->file_sync ? 0 : commit(r);
	}
	if (failed(r))
		return atomic_load(&r->failed);
	print_common(r, "write", nb_now_s() - t0, cpu_seconds() - c0);
	printf(" records=%" PRIu64 " writes=%" PRIu64 " resends=%" PRIu64 " short_writes=%" PRIu64
	       " commits=%" PRIu64 " sync=%s\n", r->nunits, sum(r, offsetof(struct writer, calls)),
	       r->resends, sum(r, offsetof(struct writer, short_ops)), r->commits,
	       r->o->file_sync ? "file" : "unstable");
	fflush(stdout);
	return 0;
}

/* The file's size: exactly ours after a write phase, at least ours for a read-only run. */
static int check_size(struct run *r)
{
	struct xb plain;
	struct rg_reply rep;
	uint64_t size = 0;
	int st;

	rn_enc_getattr(&plain, gc_next_xid(&r->w[0].c), &r->fh);
	if (sync_call(r, &plain, "GETATTR", &rep) < 0)
		return atomic_load(&r->failed);
	st = rn_dec_getattr(&rep.r, &size);
	rg_reply_free(&rep);
	if (st != 0 || size < r->size || (r->o->phases != PH_READ && size != r->size)) {
		fail(r, NB_EXIT_MISMATCH, "the file is %" PRIu64 " bytes (GETATTR status %d), "
		     "expected %s%" PRIu64, size, st, r->o->phases != PH_READ ? "" : "at least ",
		     r->size);
		return atomic_load(&r->failed);
	}
	return 0;
}

/* The whole file read --passes times, every byte checked, timed. */
static int read_phase(struct run *r)
{
	double t0 = nb_now_s(), c0 = cpu_seconds();
	uint64_t want;

	r->phase = K_READ;
	r->nchunks = (r->size + r->rsize - 1) / r->rsize;
	r->nreads = r->nchunks * r->o->passes;
	atomic_store(&r->next, 0);
	clear_counts(r);
	if (run_threads(r) != 0)
		return atomic_load(&r->failed);
	want = r->size * r->o->passes;
	if (sum(r, offsetof(struct writer, bytes)) != want) {
		fail(r, NB_EXIT_MISMATCH, "verified %" PRIu64 " bytes of %" PRIu64,
		     sum(r, offsetof(struct writer, bytes)), want);
		return NB_EXIT_MISMATCH;
	}
	print_common(r, "read", nb_now_s() - t0, cpu_seconds() - c0);
	printf(" reads=%" PRIu64 " verified=%" PRIu64 " passes=%u rsize=%u short_reads=%" PRIu64
	       "\n", sum(r, offsetof(struct writer, calls)), want, r->o->passes, r->rsize,
	       sum(r, offsetof(struct writer, short_ops)));
	fflush(stdout);
	return 0;
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fputs("usage: gss-load [options] HOST NFS_PORT MOUNT_PORT EXPORT FILE\n"
	      "  -w, --writers N      connections, one GSS context and one writer each (32)\n"
	      "  -q, --qd N           calls in flight per connection (4; at most the server's window)\n"
	      "  -W, --workload WL    interleave (the seeds' records, default) | seq (1 MiB in order)\n"
	      "  -r, --record SIZE    interleave: record size (47008); seq: WRITE size (1M)\n"
	      "  -t, --total SIZE     about SIZE bytes: total/record records (64M)\n"
	      "  -n, --records N      exactly N records (interleave; overrides --total)\n"
	      "  -s, --sync MODE      unstable (WRITE UNSTABLE, then one COMMIT) | file (FILE_SYNC)\n"
	      "  -S, --service SEC    krb5 | krb5i | krb5p (none, integrity, privacy) (krb5p)\n"
	      "      --write-only     the write phase only\n"
	      "      --read-only      the read phase only (the same --seed, sizes and records)\n"
	      "      --passes N       reads of the whole file in the read phase (1)\n"
	      "      --rsize SIZE     READ size (1M, at most the server's rtmax)\n"
	      "      --seed N         data seed (default: from the clock; printed)\n"
	      "      --threads N      client threads, the connections shared among them (1)\n"
	      "      --principal P    the client's principal ($NFSDUC_USER)\n"
	      "      --password PW    its password ($NFSDUC_PASSWORD), or\n"
	      "      --keytab FILE    a client keytab holding P's key\n"
	      "      --target NAME    the server's service name (nfs@localhost)\n"
	      "      --crypto C       who seals and checks each token once a context is made:\n"
	      "                       gssapi (MIT's GSS-API, the default) or openssl (nfsd-uc's\n"
	      "                       rpc/gss_krb5.c, AES and SHA instructions, as a kernel client)\n"
	      "The Kerberos configuration is the environment's (KRB5_CONFIG: tests/with_kdc.sh, or\n"
	      "bench/run's KDC). Prints per phase: phase= bytes= seconds= MiB/s= client_cpu_s=\n"
	      "(and writes= commits= | reads= verified=), the COMMITs in the write phase's time.\n"
	      "Exit 0 verified, 1 data differ, 2 usage, 3 server, protocol or Kerberos error.\n", f);
}

enum { OPT_WONLY = 256, OPT_RONLY, OPT_PASSES, OPT_RSIZE, OPT_SEED, OPT_THREADS, OPT_PRINCIPAL,
       OPT_PASSWORD, OPT_KEYTAB, OPT_TARGET, OPT_CRYPTO };

static const struct option long_opts[] = {
	{ "writers", required_argument, NULL, 'w' }, { "qd", required_argument, NULL, 'q' },
	{ "workload", required_argument, NULL, 'W' }, { "record", required_argument, NULL, 'r' },
	{ "total", required_argument, NULL, 't' }, { "records", required_argument, NULL, 'n' },
	{ "sync", required_argument, NULL, 's' }, { "service", required_argument, NULL, 'S' },
	{ "write-only", no_argument, NULL, OPT_WONLY }, { "read-only", no_argument, NULL, OPT_RONLY },
	{ "passes", required_argument, NULL, OPT_PASSES },
	{ "rsize", required_argument, NULL, OPT_RSIZE }, { "seed", required_argument, NULL, OPT_SEED },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "principal", required_argument, NULL, OPT_PRINCIPAL },
	{ "password", required_argument, NULL, OPT_PASSWORD },
	{ "keytab", required_argument, NULL, OPT_KEYTAB },
	{ "target", required_argument, NULL, OPT_TARGET }, { "help", no_argument, NULL, 'h' },
	{ "crypto", required_argument, NULL, OPT_CRYPTO },
	{ NULL, 0, NULL, 0 },
};

static int parse_service(const char *s)
{
	static const char *const alt[] = { "?", "none", "integrity", "privacy" };

	for (int i = 1; i <= 3; i++)
		if (strcmp(s, service_names[i]) == 0 || strcmp(s, alt[i]) == 0)
			return i;
	return -1;
}

static int parse_opt(void *p, int c, const char *arg)
{
	struct opts *o = p;
	uint64_t v = 0;
	bool num = (c < 256 && c > 0 && strchr("wqrtn", c) != NULL) || c == OPT_PASSES || c == OPT_RSIZE ||
		   c == OPT_SEED || c == OPT_THREADS;

	if (num && nb_parse_size(arg, &v) < 0)
		return -1;
	switch (c) {
	case 'w': o->writers = (unsigned)v; return v >= 1 && v <= 1024 ? 0 : -1;
	case 'q': o->qd = (unsigned)v; return v >= 1 && v <= 128 ? 0 : -1;
	case 'W': o->wl = strcmp(arg, "seq") == 0 ? WL_SEQ : WL_INTERLEAVE;
		return strcmp(arg, "seq") == 0 || strcmp(arg, "interleave") == 0 ? 0 : -1;
	case 'r': o->record = v; return v >= 4 && v <= (16u << 20) ? 0 : -1;
	case 't': o->total = v; return 0;
	case 'n': o->records = v; return v >= 1 ? 0 : -1;
	case 's': o->file_sync = strcmp(arg, "file") == 0;
		return o->file_sync || strcmp(arg, "unstable") == 0 ? 0 : -1;
	case 'S': o->service = (uint32_t)parse_service(arg); return o->service <= 3 ? 0 : -1;
	case OPT_WONLY: o->phases = PH_WRITE; return 0;
	case OPT_RONLY: o->phases = PH_READ; return 0;
	case OPT_PASSES: o->passes = (unsigned)v; return v >= 1 && v <= 100000 ? 0 : -1;
	case OPT_RSIZE: o->rsize = (uint32_t)v; return v >= 4096 && v <= (16u << 20) ? 0 : -1;
	case OPT_SEED: o->seed = v; o->seed_set = true; return 0;
	case OPT_THREADS: o->threads = (unsigned)v; return v >= 1 && v <= 64 ? 0 : -1;
	case OPT_PRINCIPAL: o->principal = arg; return 0;
	case OPT_PASSWORD: o->password = arg; return 0;
	case OPT_KEYTAB: o->keytab = arg; return 0;
	case OPT_TARGET: o->target = arg; return 0;
	case OPT_CRYPTO: o->own_crypto = strcmp(arg, "openssl") == 0;
		return o->own_crypto || strcmp(arg, "gssapi") == 0 ? 0 : -1;
	default: return -1;
	}
}

/* The defaults the workload and the environment give, and the checks between options. */
static int finish_opts(struct opts *o)
{
	if (o->record == 0)
		o->record = o->wl == WL_SEQ ? 1u << 20 : 47008;
	if (o->records == 0 || o->wl == WL_SEQ)
		o->records = o->wl == WL_SEQ ? (o->total + o->record - 1) / o->record
					     : o->total / o->record;
	if (o->principal == NULL)
		o->principal = getenv("NFSDUC_USER");
	if (o->password == NULL)
		o->password = getenv("NFSDUC_PASSWORD");
	if (o->principal == NULL || (o->password == NULL && o->keytab == NULL)) {
		fputs("gss-load: no principal, or neither password nor keytab\n", stderr);
		return -1;
	}
	if (o->phases == PH_READ && !o->seed_set) {
		fputs("gss-load: --read-only needs the --seed of the run that wrote\n", stderr);
		return -1;
	}
	if (!o->seed_set)
		o->seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid() << 32;
	if (o->threads > o->writers)
		o->threads = o->writers;
	if (o->record % 4 != 0 && o->wl == WL_SEQ) {
		fputs("gss-load: seq WRITEs must be a multiple of 4 bytes\n", stderr);
		return -1;
	}
	return o->records == 0 || o->srv.nfs_port <= 0 || o->srv.mount_port <= 0 ? -1 : 0;
}

static int parse_args(struct opts *o, int argc, char **argv)
{
	*o = (struct opts){ .writers = 32, .qd = 4, .threads = 1, .passes = 1, .total = 64u << 20,
			    .service = RG_PRIVACY, .target = "nfs@localhost" };
	if (nb_cmdline(argc, argv, "w:q:W:r:t:n:s:S:h", long_opts, parse_opt, o, usage, 5,
		       &o->srv) < 0)
		return -1;
	o->file = o->srv.rest[0];
	return finish_opts(o);
}

/* ---- main ---- */

/* Writer i's connection, with a context of its own made with cred. 0, or -1 (said why). */
static int open_writer(struct run *r, unsigned i, gss_cred_id_t cred)
{
	const struct opts *o = r->o;
	struct writer *w = &r->w[i];
	size_t slot_cap = (o->record > 4096 ? o->record : 4096) + 4096;   /* WRITE's, or READ's */
	char err[512];

	w->r = r;
	w->id = w->c.id = i;
	w->c.fd = -1;
	w->scratch = malloc(r->rsize);
	if (w->scratch == NULL)
		return -1;
	if (gc_open(&w->c, o->srv.host, o->srv.nfs_port, cred, o->target, o->service, o->qd,
	            slot_cap, r->rsize + 65536, err, sizeof(err)) < 0) {
		fprintf(stderr, "gss-load: connection %u: %s\n", i, err);
		return -1;
	}
	if (o->own_crypto && rg_ctx_own(&w->c.ctx) < 0) {
		fprintf(stderr, "gss-load: connection %u: --crypto openssl: the context's enctype is "
		        "not one rpc/gss_krb5.c does\n", i);
		return -1;
	}
	return 0;
}

/* The credential, the export's root by MNT (AUTH_SYS, as Linux mounts), every writer's
 * connection. */
static int open_all(struct run *r, struct rn_fh *root)
{
	const struct opts *o = r->o;
	gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
	struct nb_fh mroot;
	char err[512];
	int rc = o->keytab ? rg_cred_keytab(o->principal, o->keytab, &cred, err, sizeof(err))
			   : rg_cred_password(o->principal, o->password, &cred, err, sizeof(err));
	OM_uint32 minor;

	if (rc < 0)
		fprintf(stderr, "gss-load: %s\n", err);
	else if (nb_mount_root(o->srv.host, o->srv.mount_port, o->srv.export, &mroot) < 0)
		rc = -1;
	if (rc == 0) {
		root->len = mroot.len;
		memcpy(root->data, mroot.data, mroot.len);
	}
	for (unsigned i = 0; i < o->writers && rc == 0; i++)
		rc = open_writer(r, i, cred);
	gss_release_cred(&minor, &cred);
	return rc;
}

static void close_all(struct run *r)
{
	for (unsigned i = 0; r->w != NULL && i < r->o->writers; i++) {
		if (r->w[i].r != NULL)
			gc_close(&r->w[i].c);
		free(r->w[i].scratch);
		free(r->w[i].todo.v);
	}
	free(r->w);
	free(r->units);
}

int main(int argc, char **argv)
{
	static struct opts o;
	static struct run r = { .o = &o, .fail_lock = PTHREAD_MUTEX_INITIALIZER };
	struct rn_fh root;
	int rc;

	nb_keep_heap_warm();

	if (parse_args(&o, argc, argv) < 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	r.nunits = o.records;
	r.size = o.wl == WL_SEQ ? o.total : o.records * o.record;
	r.rsize = o.rsize ? o.rsize : 1u << 20;
	r.units = calloc(r.nunits, sizeof(*r.units));
	r.w = calloc(o.writers, sizeof(*r.w));
	if (r.units == NULL || r.w == NULL)
		return NB_EXIT_SERVER;
	rc = open_all(&r, &root) < 0 || open_file(&r, &root) < 0 ? NB_EXIT_SERVER : 0;
	if (rc == 0 && o.phases != PH_READ)
		rc = write_phase(&r);
	if (rc == 0)
		rc = check_size(&r);
	if (rc == 0 && o.phases != PH_WRITE)
		rc = read_phase(&r);
	close_all(&r);
	return rc ? rc : atomic_load(&r.failed);
}
