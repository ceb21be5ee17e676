/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside ops/: the sources of the counters, each ring's metrics, the endpoint's refusals. */
#ifndef NFSD_UC_OPS_OPS_INT_H
#define NFSD_UC_OPS_OPS_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ops/ops.h"

struct sockaddr_storage;

struct ring_metrics;

/* The metrics endpoint's refusals (metrics_http.c): written by its thread, read by any. */
struct metrics_http_counters {
	_Atomic uint64_t refused, timed_out;
};

struct ops {
	struct ops_sources src;
	struct ring_metrics **rings;  /* each ring's figures (metrics.h): written by that ring only */
	unsigned nrings;
	struct metrics_http_counters mhttp;
};

/* The counters program answers these callers only (stats.c): its figures say how busy each
 * export is and who its clients are. */
bool ops_loopback(const struct sockaddr_storage *ss);

#endif
