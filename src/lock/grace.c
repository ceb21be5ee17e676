/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The grace period: a sorted array of the recorded hosts, each with a done flag, looked up by
 * binary search (every LOCK and TEST during grace asks, and there may be many clients). The
 * array goes as soon as the grace period ends: nothing needs it afterwards. */
#include "lock/grace.h"
#include "lock/lock_seam.h"

#include <errno.h>
#include <stdlib.h>

struct grace_host {
	uint64_t host;
	bool done;
};

static void *(*grace_alloc)(size_t) = malloc;

void grace_set_alloc(void *(*fn)(size_t))
{
	grace_alloc = fn ? fn : malloc;
}

static int host_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct grace_host *)a)->host, y = ((const struct grace_host *)b)->host;
	return (x > y) - (x < y);
}

/* Sorted h[0..n) without repeats: a host listed twice must not need to be done twice. */
static size_t dedupe(struct grace_host *h, size_t n)
{
	size_t k = 1;
	for (size_t i = 1; i < n; i++)
		if (h[i].host != h[k - 1].host)
			h[k++] = h[i];
	return k;
}

void grace_free(struct grace *g)
{
	free(g->hosts);
	*g = (struct grace){0};
}

int grace_start(struct grace *g, uint64_t now, uint64_t duration_ns, const uint64_t *hosts,
		size_t n)
{
	*g = (struct grace){0};
	if (n == 0 || duration_ns == 0)
		return 0;
	if (n > SIZE_MAX / sizeof *g->hosts)
		return -ENOMEM;
	struct grace_host *h = grace_alloc(n * sizeof *h);
	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		h[i] = (struct grace_host){.host = hosts[i], .done = false};
	qsort(h, n, sizeof *h, host_cmp);
	g->hosts = h;
	g->n = g->left = dedupe(h, n);
	g->end_ns = now > UINT64_MAX - duration_ns ? UINT64_MAX : now + duration_ns;
	g->active = true;
	return 0;
}

bool grace_active(struct grace *g, uint64_t now)
{
	if (g->active && now >= g->end_ns)
		grace_free(g);
	return g->active;
}

void grace_host_done(struct grace *g, uint64_t host)
{
	if (!g->active)
		return;
	struct grace_host key = {.host = host};
	struct grace_host *h = bsearch(&key, g->hosts, g->n, sizeof *h, host_cmp);
	if (!h || h->done)
		return;
	h->done = true;
	if (--g->left == 0)
		grace_free(g);
}

enum grace_verdict grace_check(struct grace *g, uint64_t now, uint64_t host, bool reclaim)
{
	/* Asked first so that a grace period past its time ends here, whatever the request. */
	if (!grace_active(g, now))
		return reclaim ? GRACE_DENY : GRACE_OK;
	if (reclaim)
		return GRACE_OK;
	grace_host_done(g, host);
	return g->active ? GRACE_DENY : GRACE_OK;
}

size_t grace_pending(const struct grace *g)
{
	return g->active ? g->left : 0;
}

uint64_t grace_remaining_ns(struct grace *g, uint64_t now)
{
	return grace_active(g, now) ? g->end_ns - now : 0;
}
