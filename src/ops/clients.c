/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CLIENTS (clients.h): each owner's walk feeds one table of this call's own, keyed by the
 * address as text (IPv4-mapped addresses as IPv4, as every layer shows them), bounded by
 * CLIENTS_MAX rows; it lives in the call's arena and goes with the reply. */
#include "ops/clients.h"

#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/sockaddr.h"
#include "lock/nlm.h"
#include "mount/mount.h"
#include "mount/mountlist.h"
#include "ops/ops_int.h"
#include "svc/svc.h"

#define SLOTS (2 * CLIENTS_MAX)   /* open addressing at most half full: probes stay short */
#define IDLE_NONE UINT64_MAX

struct gather {
	struct client_row *slot;      /* SLOTS of them */
	uint32_t n;
	uint64_t not_listed;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;   /* FNV-1a: the table is ours, its keys few */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

/* addr's row, new if need be; NULL past CLIENTS_MAX (counted). */
static struct client_row *row_of(struct gather *g, const char *addr)
{
	for (size_t i = str_hash(addr) & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
		struct client_row *r = &g->slot[i];
		if (r->addr[0] == '\0') {
			if (g->n == CLIENTS_MAX) {
				g->not_listed++;
				return NULL;
			}
			snprintf(r->addr, sizeof r->addr, "%s", addr);
			g->n++;
			return r;
		}
		if (strcmp(r->addr, addr) == 0)
			return r;
	}
}

static struct client_row *row_at(struct gather *g, const struct sockaddr_storage *ss)
{
	char a[INET6_ADDRSTRLEN];
	return row_of(g, sa_str(ss, a));
}

/* MOUNT's list keeps the address as text, an IPv4-mapped one as such: shown as IPv4 here. */
static bool on_mount(void *ctx, const char *host, const char *dir)
{
	(void)dir;
	struct sockaddr_storage ss;
	struct client_row *r = sa_parse(host, 0, &ss) ? row_at(ctx, &ss) : row_of(ctx, host);
	if (r)
		r->mounts++;
	return true;
}

static void on_conns(void *ctx, const struct sockaddr_storage *addr, unsigned n)
{
	struct client_row *r = row_at(ctx, addr);
	if (r)
		r->conns += n;
}

static void on_seen(void *ctx, const struct sockaddr_storage *addr, uint64_t last_ns)
{
	struct client_row *r = row_at(ctx, addr);
	if (r && last_ns > r->last_ns)
		r->last_ns = last_ns;   /* the latest of the rings it called on */
}

static void on_host(void *ctx, const struct nlm_host_view *h)
{
	struct client_row *r = row_at(ctx, h->addr);
	if (r) {
		r->locks += (uint32_t)h->locks;
		r->waiting += (uint32_t)h->waiters;
	}
}

/* The rows to the front of the table: the reply encodes n of them. */
static void compact(struct gather *g)
{
	uint32_t k = 0;
	for (size_t i = 0; i < SLOTS && k < g->n; i++)
		if (g->slot[i].addr[0] != '\0')
			g->slot[k++] = g->slot[i];
}

/* Who holds something first (mounts, locks, connections), then who only called: past the
 * bound, an address spraying calls is the one left out. */
static void gather(struct ops *o, struct gather *g, struct clients_res *r)
{
	if (o->src.mount)
		mount_list_walk(o->src.mount->list, on_mount, g);
	if (o->src.nlm)
		nlm_walk_hosts(o->src.nlm, on_host, g);
	if (o->src.svc)
		r->seen_dropped = svc_clients(o->src.svc, &(struct svc_client_sink){on_conns,
									     on_seen, g});
}

void clients_get(struct svc_call *rq, void *argp, void *resp)
{
	(void)argp;
	struct clients_res *r = resp;
	if (!ops_loopback(&rq->peer))
		return;     /* no rows */
	struct gather g = {.slot = arena_alloc(&rq->arena, SLOTS * sizeof *g.slot)};
	if (!g.slot)
		return;
	memset(g.slot, 0, SLOTS * sizeof *g.slot);
	gather(rq->prog, &g, r);
	compact(&g);
	r->rows = g.slot;
	r->n = g.n;
	r->not_listed = g.not_listed;
	r->now_ns = clock_ns();
	rq->reply_hint = 64 + (size_t)g.n * (4 + INET6_ADDRSTRLEN + 2 + 4 * 4 + 8);
}

bool_t xdr_clients_res(XDR *x, struct clients_res *r)
{
	if (!xdr_u_int64_t(x, &r->seen_dropped) || !xdr_u_int64_t(x, &r->not_listed) ||
	    !xdr_u_int(x, &r->n))
		return FALSE;
	for (uint32_t i = 0; i < r->n; i++) {
		struct client_row *c = &r->rows[i];
		char *a = c->addr;
		uint64_t idle = !c->last_ns ? IDLE_NONE
			: r->now_ns > c->last_ns ? (r->now_ns - c->last_ns) / 1000000 : 0;
		if (!xdr_string(x, &a, INET6_ADDRSTRLEN) || !xdr_u_int(x, &c->mounts) ||
		    !xdr_u_int(x, &c->conns) || !xdr_u_int(x, &c->locks) ||
		    !xdr_u_int(x, &c->waiting) || !xdr_u_int64_t(x, &idle))
			return FALSE;
	}
	return TRUE;
}
