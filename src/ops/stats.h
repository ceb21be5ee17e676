/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The counters program (see stats.c), and the list of the server's counters it and the metrics
 * text (metrics.h) are made from. */
#ifndef NFSD_UC_STATS_H
#define NFSD_UC_STATS_H

#include <stdbool.h>
#include <stdint.h>

#define STATS_PROGRAM 0x20004e55u
#define STATS_V1 1
#define STATS_PROC_STATS 1        /* name/value pairs */
#define STATS_PROC_METRICS 2      /* the Prometheus text, one opaque */
#define STATS_PROC_CLIENTS 3      /* one row per client address (clients.h) */

struct ops;
struct prog_desc;

/* Where stats_collect() puts each figure: a counter (only grows) or a gauge (held now). */
struct stats_sink {
	void (*emit)(void *ctx, const char *name, uint64_t value, bool gauge);
	void *ctx;
};

/* Every counter of the server, the cache, the duplicate request cache and the limits. */
void stats_collect(struct ops *o, const struct stats_sink *sink);

/* The counters program, registered with its struct ops as its state (ops_attach). */
extern const struct prog_desc stats_program;

#endif
