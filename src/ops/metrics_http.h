/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Prometheus endpoint ([metrics] listen), on a thread of its own. */
#ifndef NFSD_UC_METRICS_HTTP_H
#define NFSD_UC_METRICS_HTTP_H

struct ops;
struct metrics_http;

/* Start serving GET /metrics if the conf asks for it (*out NULL when it does not). Call once
 * the rings run; stop it before they are stopped (it reads their counters). 0 or -1 (logged). */
int metrics_http_start(struct ops *o, struct metrics_http **out);
void metrics_http_stop(struct metrics_http *h);

#endif
