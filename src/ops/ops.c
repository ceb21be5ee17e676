/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The operators' side made, attached to the rings and let go (main thread). */
#include "ops/ops.h"

#include <stdlib.h>

#include "base/log.h"
#include "ops/metrics.h"
#include "ops/ops_int.h"
#include "ops/stats.h"
#include "svc/svc.h"

int ops_new(const struct ops_sources *src, unsigned rings, struct ops **out)
{
	struct ops *o = calloc(1, sizeof *o);
	*out = NULL;
	if (o)
		o->rings = calloc(rings ? rings : 1, sizeof *o->rings);
	if (!o || !o->rings) {
		free(o);
		log_err("out of memory for the metrics");
		return -1;
	}
	o->src = *src;
	o->nrings = rings;
	*out = o;
	return 0;
}

/* A ring's figures, made before it starts; kept here for the renderer to sum. */
static void *ring_new(void *ctx, unsigned ring)
{
	struct ops *o = ctx;
	if (ring >= o->nrings)
		return NULL;
	if (!o->rings[ring])
		o->rings[ring] = calloc(1, sizeof *o->rings[ring]);
	return o->rings[ring];
}

int ops_attach(struct ops *o)
{
	const struct svc_observer obs = {.ring_new = ring_new, .call_begin = metrics_call_begin,
					 .call_handled = metrics_call_handled,
					 .call_done = metrics_call_done, .ctx = o};
	svc_set_observer(o->src.svc, &obs);
	return dispatch_add(o->src.svc, &stats_program, o) < 0 ? -1 : 0;
}

void ops_free(struct ops *o)
{
	if (!o)
		return;
	for (unsigned i = 0; i < o->nrings; i++)
		free(o->rings[i]);
	free(o->rings);
	free(o);
}
