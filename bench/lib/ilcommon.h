/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ilcommon: what the two load generators of the interleaved-record workload share: nfs-interleave
 * (bench/interleave.c, one event loop over libnfs's raw RPC layer) and nfs-interleave-threads
 * (bench/interleave_threads.c, a thread per connection on libnfs's synchronous API). One command
 * line, one result line and one wording of their verdicts, so that bench/run can run either with
 * the same arguments and read either's output. Messages go to stderr prefixed with the program's
 * name. */
#ifndef NFSBENCH_ILCOMMON_H
#define NFSBENCH_ILCOMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define IL_EXIT_USAGE 2
#define IL_DEFAULT_RSIZE (1u << 20)

enum sync_mode { SYNC_UNSTABLE, SYNC_FILE };
enum commit_mode { COMMIT_ONCE, COMMIT_EACH, COMMIT_NONE };
enum phases { PH_BOTH, PH_WRITE, PH_VERIFY, PH_COMMIT };

struct il_opts {
	const char *host, *export, *file;
	int nfs_port, mount_port;
	unsigned writers, qd;
	uint64_t record, total, records;
	enum sync_mode sync;
	enum commit_mode commit;
	bool fresh, csv, quiet;
	enum phases phases;
	uint64_t seed;
	bool seed_set;
	uint32_t rsize;
	double interval;        /* --interval: seconds between progress lines, 0 for none */
};

/* What a run did, for the result line. */
struct il_result {
	uint64_t nrec, size, writes, resends, short_writes, commits, verified;
	double secs;            /* the write phase's, final COMMIT included */
};

/* The command line into o, defaults first (-h: usage(stdout), exit 0). 0, or -1 for a usage
 * error: the caller prints usage(stderr) and exits IL_EXIT_USAGE. */
int il_parse_args(struct il_opts *o, int argc, char **argv, void (*usage)(FILE *));

/* The usage text's lines after -w and -q (whose meaning is each tool's own), to the end. */
void il_usage_options(FILE *f);

/* The result line (with --csv, a header line and a CSV line). */
void il_print_result(const struct il_opts *o, const struct il_result *r);

/* One --interval line: seconds since the start, bytes acknowledged so far, MiB/s over the
 * interval, and whether every WRITE was answered and only COMMIT is awaited. */
void il_print_tick(double t, uint64_t bytes, double mib_s, bool committing);

/* Record (nb_fail_first) that got differs from want, len bytes read at file offset off: where,
 * in which record and whose (writer), and whether zeros follow (bytes never written). */
void il_report_mismatch(int *failed, const struct il_opts *o, uint64_t off, const uint8_t *got,
			const uint8_t *want, size_t len);

/* The size the file must have after the run's records, `want`: exactly that after --fresh, at
 * least that otherwise. 0, or NB_EXIT_MISMATCH (message printed). */
int il_check_size(const struct il_opts *o, uint64_t size, uint64_t want);

#endif
