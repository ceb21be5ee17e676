/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "svc/connlimit.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"

#define CLIENT_BUCKETS 1024

/* Connections open from one address, and the receive memory they hold together (recvmem.c
 * keeps it: each connection adds and takes back its own part). */
struct climit_client {
	struct climit_client *next;
	uint16_t family;
	uint8_t addr[16];
	unsigned n;
	_Atomic size_t held;
};

struct conn_limits {
	unsigned max_total, max_client;
	size_t max_mem, max_share, max_client_share;
	atomic_uint total;
	_Atomic size_t mem;
	_Atomic uint64_t events[CLE_CLIENT_WAIT + 1];
	pthread_mutex_t lock;                     /* the table below */
	struct climit_client *bucket[CLIENT_BUCKETS];
};

int climits_create(const struct config *cfg, struct conn_limits **out)
{
	struct conn_limits *cl = calloc(1, sizeof *cl);
	if (!cl)
		return -ENOMEM;
	cl->max_total = cfg->max_connections;
	cl->max_client = cfg->max_connections_per_client;
	cl->max_mem = cfg->receive_memory;
	cl->max_share = cfg->receive_memory_per_connection;
	cl->max_client_share = cfg->receive_memory_per_client;
	pthread_mutex_init(&cl->lock, NULL);
	*out = cl;
	return 0;
}

void climits_destroy(struct conn_limits *cl)
{
	if (!cl)
		return;
	for (int i = 0; i < CLIENT_BUCKETS; i++)
		for (struct climit_client *c = cl->bucket[i], *n; c; c = n) {
			n = c->next;
			free(c);
		}
	pthread_mutex_destroy(&cl->lock);
	free(cl);
}

/* The address alone (not the port): a client's connections come from many ports. */
static void addr_of(const struct sockaddr_storage *ss, uint16_t *family, uint8_t addr[16])
{
	memset(addr, 0, 16);
	*family = ss->ss_family;
	if (ss->ss_family == AF_INET)
		memcpy(addr, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	else if (ss->ss_family == AF_INET6)
		memcpy(addr, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
}

static unsigned bucket_of(const uint8_t addr[16])
{
	uint32_t h = 2166136261u;
	for (int i = 0; i < 16; i++)
		h = (h ^ addr[i]) * 16777619u;
	return h % CLIENT_BUCKETS;
}

/* Where the address's count is, or would go. Under cl->lock. */
static struct climit_client **find(struct conn_limits *cl, uint16_t family, const uint8_t addr[16])
{
	struct climit_client **pp = &cl->bucket[bucket_of(addr)];
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->family == family && memcmp((*pp)->addr, addr, 16) == 0)
			return pp;
	return pp;
}

enum climit_verdict climits_open(struct conn_limits *cl, const struct sockaddr_storage *peer)
{
	uint16_t family;
	uint8_t addr[16];
	addr_of(peer, &family, addr);
	unsigned total = atomic_fetch_add(&cl->total, 1) + 1;
	unsigned mine = 0;
	pthread_mutex_lock(&cl->lock);
	struct climit_client **pp = find(cl, family, addr);
	if (!*pp && (*pp = calloc(1, sizeof **pp))) {
		(*pp)->family = family;
		memcpy((*pp)->addr, addr, 16);
	}
	if (*pp)
		mine = ++(*pp)->n;
	pthread_mutex_unlock(&cl->lock);
	if (mine > cl->max_client)
		return CL_OVER_CLIENT;
	return total > cl->max_total ? CL_OVER_TOTAL : CL_OK;
}

struct climit_client *climits_client(struct conn_limits *cl, const struct sockaddr_storage *peer)
{
	uint16_t family;
	uint8_t addr[16];
	addr_of(peer, &family, addr);
	pthread_mutex_lock(&cl->lock);
	struct climit_client *c = *find(cl, family, addr);
	pthread_mutex_unlock(&cl->lock);
	return c;
}

size_t climits_client_held(const struct climit_client *cc)
{
	return atomic_load_explicit(&cc->held, memory_order_relaxed);
}

void climits_client_add(struct climit_client *cc, size_t n)
{
	atomic_fetch_add_explicit(&cc->held, n, memory_order_relaxed);
}

void climits_client_sub(struct climit_client *cc, size_t n)
{
	atomic_fetch_sub_explicit(&cc->held, n, memory_order_relaxed);
}

size_t climits_client_share(const struct conn_limits *cl)
{
	return cl->max_client_share;
}

void climits_close(struct conn_limits *cl, const struct sockaddr_storage *peer)
{
	uint16_t family;
	uint8_t addr[16];
	addr_of(peer, &family, addr);
	atomic_fetch_sub(&cl->total, 1);
	pthread_mutex_lock(&cl->lock);
	struct climit_client **pp = find(cl, family, addr);
	struct climit_client *c = *pp;
	if (c && --c->n == 0) {
		*pp = c->next;
		free(c);
	}
	pthread_mutex_unlock(&cl->lock);
}

bool climits_mem_take(struct conn_limits *cl, size_t n)
{
	size_t before = atomic_fetch_add(&cl->mem, n);
	if (before == 0 || before + n <= cl->max_mem)
		return true;
	atomic_fetch_sub(&cl->mem, n);
	return false;
}

void climits_mem_force(struct conn_limits *cl, size_t n)
{
	atomic_fetch_add(&cl->mem, n);
}

void climits_mem_put(struct conn_limits *cl, size_t n)
{
	atomic_fetch_sub(&cl->mem, n);
}

bool climits_mem_room(struct conn_limits *cl)
{
	return atomic_load(&cl->mem) < cl->max_mem;
}

size_t climits_mem_share(const struct conn_limits *cl)
{
	return cl->max_share;
}

void climits_count(struct conn_limits *cl, enum climit_event ev)
{
	atomic_fetch_add_explicit(&cl->events[ev], 1, memory_order_relaxed);
}

void climits_get_stats(struct conn_limits *cl, struct climit_stats *st)
{
	*st = (struct climit_stats){
		.connections = atomic_load(&cl->total),
		.evicted = atomic_load(&cl->events[CLE_EVICTED]),
		.refused = atomic_load(&cl->events[CLE_REFUSED]),
		.idle_closed = atomic_load(&cl->events[CLE_IDLE]),
		.slow_closed = atomic_load(&cl->events[CLE_SLOW]),
		.mem_waits = atomic_load(&cl->events[CLE_MEM_WAIT]),
		.mem_bytes = atomic_load(&cl->mem),
		.share_waits = atomic_load(&cl->events[CLE_SHARE_WAIT]),
		.windows_revoked = atomic_load(&cl->events[CLE_WIN_REVOKED]),
		.tokens_passed = atomic_load(&cl->events[CLE_TOKEN_PASSED]),
		.client_waits = atomic_load(&cl->events[CLE_CLIENT_WAIT]),
	};
}

/* The table's (family, bytes) back as an address (an IPv4-mapped one stays as it came: the
 * reader shows it as its IPv4 client, sockaddr.h). */
static void to_sockaddr(const struct climit_client *c, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	ss->ss_family = c->family;
	if (c->family == AF_INET)
		memcpy(&((struct sockaddr_in *)ss)->sin_addr, c->addr, 4);
	else if (c->family == AF_INET6)
		memcpy(&((struct sockaddr_in6 *)ss)->sin6_addr, c->addr, 16);
}

void climits_walk(struct conn_limits *cl,
		  void (*fn)(void *ctx, const struct sockaddr_storage *addr, unsigned n), void *ctx)
{
	pthread_mutex_lock(&cl->lock);
	for (int i = 0; i < CLIENT_BUCKETS; i++)
		for (struct climit_client *c = cl->bucket[i]; c; c = c->next) {
			struct sockaddr_storage ss;
			to_sockaddr(c, &ss);
			fn(ctx, &ss, c->n);
		}
	pthread_mutex_unlock(&cl->lock);
}
