/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rings' layer made and let go, on the main thread: its limits and its duplicate request
 * cache; the rings themselves are worker.c's, the listeners listen.c's. */
#include "svc/svc.h"

#include <stdlib.h>

#include "base/log.h"
#include "conf/config.h"
#include "svc/gss_call.h"
#include "svc/seen.h"
#include "svc/worker.h"

int svc_new(const struct svc_params *p, struct svc **out)
{
	const struct config *cfg = p->cfg;
	struct svc *svc = calloc(1, sizeof *svc);
	*out = NULL;
	if (!svc)
		return -1;
	svc->cfg = p->cfg;
	svc->fs = p->fs;
	svc->place_align = fs_place_align(p->fs);
	if (climits_create(cfg, &svc->limits) < 0) {
		free(svc);
		return -1;
	}
	if (cfg->reply_cache_entries && drc_create(cfg->reply_cache_entries, cfg->reply_cache_size,
						   &svc->drc) < 0) {
		log_err("cannot create the duplicate request cache");
		svc_free(svc);
		return -1;
	}
	svc->gss = svc_gss_new(cfg);   /* NULL: GSS calls are refused, and the log says why */
	*out = svc;
	return 0;
}

void svc_free(struct svc *svc)
{
	if (!svc)
		return;
	svc_gss_free(svc->gss);
	drc_destroy(svc->drc);
	climits_destroy(svc->limits);
	free(svc);
}

void svc_set_observer(struct svc *svc, const struct svc_observer *o)
{
	svc->obs = *o;
}

bool svc_running(const struct svc *svc)
{
	return svc->workers != NULL;
}

void svc_get_stats(struct svc *svc, struct svc_stats *out)
{
	*out = (struct svc_stats){.has_drc = svc->drc != NULL, .has_gss = svc->gss != NULL};
	climits_get_stats(svc->limits, &out->limits);
	if (svc->drc)
		drc_get_stats(svc->drc, &out->drc);
	if (svc->gss)
		svc_gss_stats(svc->gss, &out->gss);
}

uint64_t svc_clients(struct svc *svc, const struct svc_client_sink *sink)
{
	uint64_t dropped = 0;
	climits_walk(svc->limits, sink->conns, sink->ctx);
	/* Each ring's own table, read with its atomics: no ring is stopped or asked. */
	for (unsigned i = 0; i < svc->nworkers; i++) {
		struct seen_table *t = svc->workers[i].seen;
		if (!t)
			continue;
		seen_walk(t, sink->seen, sink->ctx);
		dropped += atomic_load_explicit(&t->dropped, memory_order_relaxed);
	}
	return dropped;
}
