/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ilcommon: see ilcommon.h. */
#include "ilcommon.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nfsclient.h"

#define PROG program_invocation_short_name

/* ---- options ---- */

void il_usage_options(FILE *f)
{
	fputs("  -r, --record SIZE   record size in bytes, K/M/G suffixes (47008)\n"
	      "  -t, --total SIZE    write about SIZE bytes: total/record records (64M)\n"
	      "  -n, --records N     write exactly N records (overrides --total)\n"
	      "  -s, --sync MODE     unstable (WRITE UNSTABLE, then COMMIT) | file (FILE_SYNC)\n"
	      "      --commit WHEN   once (one COMMIT when every writer is done, default) |\n"
	      "                      each (every writer COMMITs when it is done) |\n"
	      "                      none (the data stays UNSTABLE: what a server holds uncommitted)\n"
	      "      --fresh         create or truncate the file first (default)\n"
	      "      --overwrite     write over the existing file, no truncation\n"
	      "      --write-only    skip the read-back\n"
	      "      --verify-only   only read back and check (same --seed, sizes and records)\n"
	      "      --commit-only   only send one COMMIT of the whole file (say what it answered)\n"
	      "      --seed N        data seed (default: from the clock; printed)\n"
	      "      --rsize SIZE    READ size of the read-back (1M, at most the server's rtmax)\n"
	      "      --csv           print a CSV line (with a header line) instead\n"
	      "      --interval SECS print \"t= bytes= MiB/s= commit=\" every SECS of the write phase\n"
	      "                      (commit=1: every WRITE answered, waiting for COMMIT)\n"
	      "Prints: records= bytes= seconds= MiB/s= writes= (seconds and MiB/s of the write\n"
	      "phase, final COMMIT included). Exit 0 verified, 1 data differ, 2 usage, 3 error.\n",
	      f);
}

enum { OPT_COMMIT = 256, OPT_FRESH, OPT_OVERWRITE, OPT_WONLY, OPT_VONLY, OPT_CONLY, OPT_SEED,
       OPT_RSIZE, OPT_CSV, OPT_INTERVAL };

static const struct option long_opts[] = {
	{ "writers", required_argument, NULL, 'w' }, { "qd", required_argument, NULL, 'q' },
	{ "record", required_argument, NULL, 'r' }, { "total", required_argument, NULL, 't' },
	{ "records", required_argument, NULL, 'n' }, { "sync", required_argument, NULL, 's' },
	{ "commit", required_argument, NULL, OPT_COMMIT },
	{ "fresh", no_argument, NULL, OPT_FRESH }, { "overwrite", no_argument, NULL, OPT_OVERWRITE },
	{ "write-only", no_argument, NULL, OPT_WONLY },
	{ "verify-only", no_argument, NULL, OPT_VONLY },
	{ "commit-only", no_argument, NULL, OPT_CONLY },
	{ "seed", required_argument, NULL, OPT_SEED }, { "rsize", required_argument, NULL, OPT_RSIZE },
	{ "csv", no_argument, NULL, OPT_CSV }, { "help", no_argument, NULL, 'h' },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ NULL, 0, NULL, 0 },
};

static int parse_opt(void *p, int c, const char *arg)
{
	struct il_opts *o = p;
	uint64_t v = 0;
	bool num = c == 'w' || c == 'q' || c == 'r' || c == 't' || c == 'n' || c == OPT_SEED ||
		   c == OPT_RSIZE;

	if (num && nb_parse_size(arg, &v) < 0)
		return -1;
	switch (c) {
	case 'w': o->writers = (unsigned)v; return v >= 1 && v <= 1024 ? 0 : -1;
	case 'q': o->qd = (unsigned)v; return v >= 1 && v <= 256 ? 0 : -1;
	case 'r': o->record = v; return v >= 1 && v <= (64u << 20) ? 0 : -1;
	case 't': o->total = v; return 0;
	case 'n': o->records = v; return v >= 1 ? 0 : -1;
	case 's': o->sync = strcmp(arg, "file") == 0 ? SYNC_FILE : SYNC_UNSTABLE;
		return strcmp(arg, "file") == 0 || strcmp(arg, "unstable") == 0 ? 0 : -1;
	case OPT_COMMIT: o->commit = strcmp(arg, "each") == 0 ? COMMIT_EACH
				  : strcmp(arg, "none") == 0 ? COMMIT_NONE : COMMIT_ONCE;
		return strcmp(arg, "each") == 0 || strcmp(arg, "once") == 0 ||
		       strcmp(arg, "none") == 0 ? 0 : -1;
	case OPT_FRESH: o->fresh = true; return 0;
	case OPT_OVERWRITE: o->fresh = false; return 0;
	case OPT_WONLY: o->phases = PH_WRITE; return 0;
	case OPT_VONLY: o->phases = PH_VERIFY; return 0;
	case OPT_CONLY: o->phases = PH_COMMIT; return 0;
	case OPT_SEED: o->seed = v; o->seed_set = true; return 0;
	case OPT_RSIZE: o->rsize = (uint32_t)v; return v >= 4096 && v <= (64u << 20) ? 0 : -1;
	case OPT_CSV: o->csv = true; return 0;
	case OPT_INTERVAL: {
		char *end;
		o->interval = strtod(arg, &end);
		return *end == '\0' && o->interval > 0 && o->interval <= 3600 ? 0 : -1;
	}
	default: return -1;
	}
}

int il_parse_args(struct il_opts *o, int argc, char **argv, void (*usage)(FILE *))
{
	struct nb_args a;

	*o = (struct il_opts){ .writers = 32, .qd = 4, .record = 47008, .total = 64u << 20,
			       .sync = SYNC_UNSTABLE, .commit = COMMIT_ONCE, .fresh = true };
	if (nb_cmdline(argc, argv, "w:q:r:t:n:s:h", long_opts, parse_opt, o, usage, 5, &a) < 0)
		return -1;
	o->host = a.host;
	o->nfs_port = a.nfs_port;
	o->mount_port = a.mount_port;
	o->export = a.export;
	o->file = a.rest[0];
	if (o->records == 0)
		o->records = o->total / o->record;
	if (o->records == 0 || o->nfs_port <= 0 || o->mount_port <= 0)
		return -1;
	if (o->phases == PH_VERIFY && !o->seed_set) {
		fprintf(stderr, "%s: --verify-only needs the --seed of the run that wrote\n", PROG);
		return -1;
	}
	if (o->phases == PH_COMMIT) {   /* the file as it is: no truncation, no WRITE */
		o->fresh = false;
		o->sync = SYNC_UNSTABLE;
		o->commit = COMMIT_ONCE;
	}
	if (!o->seed_set)
		o->seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid() << 32;
	return 0;
}

/* ---- output ---- */

void il_print_result(const struct il_opts *o, const struct il_result *r)
{
	double mib = (double)r->size / (1024.0 * 1024.0), secs = r->secs;
	const char *sync = o->sync == SYNC_FILE ? "file" : "unstable";

	if (o->csv) {
		printf("record,writers,qd,sync,mode,records,bytes,seconds,MiB/s,writes,resends,"
		       "short_writes,commits,verified_bytes,seed\n");
		printf("%" PRIu64 ",%u,%u,%s,%s,%" PRIu64 ",%" PRIu64 ",%.3f,%.1f,%" PRIu64 ",%" PRIu64
		       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
		       o->record, o->writers, o->qd, sync, o->fresh ? "fresh" : "overwrite", r->nrec,
		       r->size, secs, secs > 0 ? mib / secs : 0.0, r->writes, r->resends,
		       r->short_writes, r->commits, r->verified, o->seed);
		return;
	}
	printf("records=%" PRIu64 " bytes=%" PRIu64 " seconds=%.3f MiB/s=%.1f writes=%" PRIu64
	       " resends=%" PRIu64 " short_writes=%" PRIu64 " commits=%" PRIu64
	       " verified=%" PRIu64 " record=%" PRIu64 " writers=%u qd=%u sync=%s mode=%s seed=%" PRIu64
	       "\n", r->nrec, r->size, secs, secs > 0 ? mib / secs : 0.0, r->writes, r->resends,
	       r->short_writes, r->commits, r->verified, o->record, o->writers, o->qd, sync,
	       o->fresh ? "fresh" : "overwrite", o->seed);
}

void il_print_tick(double t, uint64_t bytes, double mib_s, bool committing)
{
	printf("t=%.3f bytes=%" PRIu64 " MiB/s=%.1f commit=%d\n", t, bytes, mib_s, committing);
	fflush(stdout);
}

/* ---- verdicts ---- */

void il_report_mismatch(int *failed, const struct il_opts *o, uint64_t off, const uint8_t *got,
			const uint8_t *want, size_t len)
{
	bool zeros;
	size_t i = nb_first_diff(got, want, len, &zeros);
	uint64_t rec = (off + i) / o->record;

	nb_fail_first(failed, NB_EXIT_MISMATCH,
		      "MISMATCH at offset %" PRIu64 " (record %" PRIu64 ", byte %" PRIu64 " of it, "
		      "writer %" PRIu64 "): expected 0x%02x, got 0x%02x%s",
		      off + i, rec, (off + i) % o->record, rec % o->writers, want[i], got[i],
		      zeros ? " (zeros follow: bytes never written?)" : "");
}

int il_check_size(const struct il_opts *o, uint64_t size, uint64_t want)
{
	if (size < want || (o->fresh && size != want)) {
		fprintf(stderr, "%s: the file is %" PRIu64 " bytes, expected %s%" PRIu64 "\n", PROG,
			size, o->fresh ? "" : "at least ", want);
		return NB_EXIT_MISMATCH;
	}
	return 0;
}
