/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the metrics (metrics*.c): the pieces of the Prometheus text each file renders, and what
 * they share. Every family gets its # HELP and # TYPE lines from met_family(). */
#ifndef NFSD_UC_OPS_METRICS_INT_H
#define NFSD_UC_OPS_METRICS_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "ops/metrics.h"

struct ops;

/* Only the ring that owns c writes it: a plain load and store, no locked instruction. */
static inline void met_bump(_Atomic uint64_t *c, uint64_t by)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by,
			      memory_order_relaxed);
}

static inline uint64_t met_load(_Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* A family's header: "# HELP name help" and "# TYPE name type". */
void met_family(FILE *f, const char *name, const char *type, const char *help);
/* A label value, escaped as the text format wants (\\, \", \n). */
void met_label_value(FILE *f, const char *v);

/* The server's flat counters (stats.c), each with its meaning (metrics_flat.c). 0 or -ENOMEM. */
int metrics_render_flat(struct ops *o, FILE *f);
/* nfsd_uc_build_info and the process_* families of the client libraries (metrics_proc.c). */
void metrics_render_process(FILE *f);
/* Per export: a ring's call counted, and every export in force rendered (metrics_export.c). */
void metrics_export_count(struct ring_metrics *m, const struct svc_call *rq, const void *res);
void metrics_render_exports(struct ops *o, FILE *f);

#endif
