/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "peername.h"

#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cred.h"
#include "io/fiber.h"
#include "nfsd.h"

#define NAMES 64
#define NAME_TTL_NS (60 * 1000000000ull)

struct name_entry {
	struct sockaddr_storage addr;   /* port zeroed */
	char name[NI_MAXHOST];
	uint64_t expires_ns;
};

struct peer_names {
	struct name_entry e[NAMES];
};

struct lookup {
	struct sockaddr_storage addr;
	char name[NI_MAXHOST];
};

static bool same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return a->sa_family == AF_INET6 &&
	       memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

/* On a pool thread: reverse, then forward, and the forward answer must hold the address. */
static long do_lookup(void *arg)
{
	struct lookup *l = arg;
	char name[NI_MAXHOST];
	socklen_t len = l->addr.ss_family == AF_INET ? sizeof(struct sockaddr_in)
						     : sizeof(struct sockaddr_in6);
	l->name[0] = '\0';
	if (getnameinfo((struct sockaddr *)&l->addr, len, name, sizeof name, NULL, 0,
			NI_NAMEREQD) != 0)
		return 0;
	struct addrinfo hints = {.ai_family = l->addr.ss_family, .ai_socktype = SOCK_STREAM}, *ai;
	if (getaddrinfo(name, NULL, &hints, &ai) != 0)
		return 0;
	for (struct addrinfo *a = ai; a; a = a->ai_next)
		if (same_host(a->ai_addr, (struct sockaddr *)&l->addr)) {
			strcpy(l->name, name);
			break;
		}
	freeaddrinfo(ai);
	return 0;
}

static struct name_entry *find(struct peer_names *pn, const struct sockaddr_storage *a,
			       uint64_t now)
{
	for (int i = 0; i < NAMES; i++)
		if (pn->e[i].expires_ns > now && same_host((const struct sockaddr *)&pn->e[i].addr,
							   (const struct sockaddr *)a))
			return &pn->e[i];
	return NULL;
}

static struct name_entry *slot(struct peer_names *pn)
{
	struct name_entry *best = &pn->e[0];
	for (int i = 1; i < NAMES; i++)
		if (pn->e[i].expires_ns < best->expires_ns)
			best = &pn->e[i];
	return best;
}

const char *peer_confirmed_name(void *arg)
{
	struct nfs_req *rq = arg;
	struct worker *w = rq->w;
	if (!w->names && !(w->names = calloc(1, sizeof *w->names)))
		return "";
	uint64_t now = fiber_now_ns();
	struct name_entry *e = find(w->names, &rq->peer, now);
	if (!e) {
		struct lookup l = {.addr = rq->peer};
		cred_offload_root(w, do_lookup, &l);    /* the fiber waits; the ring goes on */
		e = find(w->names, &rq->peer, fiber_now_ns());   /* another fiber may have */
		if (!e) {
			e = slot(w->names);
			e->addr = rq->peer;
			snprintf(e->name, sizeof e->name, "%s", l.name);
			e->expires_ns = fiber_now_ns() + NAME_TTL_NS;
		}
	}
	char *copy = arena_alloc(&rq->arena, strlen(e->name) + 1);
	if (!copy)
		return "";
	strcpy(copy, e->name);
	return copy;
}
