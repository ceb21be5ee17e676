/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's Prometheus endpoint ([metrics] listen) read by a test: GET /metrics over HTTP/1.0,
 * a sample's value, and the whole text through the official Python client's parser
 * (check_metrics.py, run as $NFSD_UC_PYTHON $NFSD_UC_METRICS_CHECK). Used by it-metrics and
 * it-gss. Failures abort the test through cmocka. */
#ifndef NFSD_UC_IT_SCRAPE_H
#define NFSD_UC_IT_SCRAPE_H

#include <stdbool.h>
#include <stdint.h>

/* GET /metrics from 127.0.0.1:port over HTTP/1.0, from address src (NULL: any): the whole
 * response, malloc'd, or NULL when the connection was refused or reset before a response came. */
char *scrape_get_from(uint16_t port, const char *src);
/* A response of status 200. */
bool scrape_is_ok(const char *resp);
/* GET /metrics, which must answer 200: the body, malloc'd. */
char *scrape(uint16_t port);
/* The value of the sample whose name and labels are exactly series; -1 when absent. */
long long scrape_value(const char *text, const char *series);
/* text through check_metrics.py, which must find no problem; require: more families it must
 * hold, as its arguments NAME:TYPE separated by spaces (NULL: none). */
void scrape_check_text(const char *text, const char *require);

#endif
