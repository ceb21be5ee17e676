/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "conf/peername.h"

#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/arena.h"
#include "base/sockaddr.h"
#include "io/fiber.h"
#include "io/pool.h"

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
	struct sockaddr_storage addr;   /* an IPv4 client on a dual-stack socket made AF_INET */
	char name[NI_MAXHOST];
};

/* ::ffff:a.b.c.d, as a dual-stack listener sees an IPv4 client, is looked up as a.b.c.d: its
 * forward records are A records, which an AF_INET6 query would not return. */
static void unmap(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr))
		return;
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = a6->sin6_port};
	memcpy(&a4.sin_addr, a6->sin6_addr.s6_addr + 12, 4);
	memset(ss, 0, sizeof *ss);
	memcpy(ss, &a4, sizeof a4);
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
		if (sa_same_host(a->ai_addr, (struct sockaddr *)&l->addr)) {
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
		if (pn->e[i].expires_ns > now && sa_same_host((const struct sockaddr *)&pn->e[i].addr,
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

const char *peer_confirmed_name(struct peer_names **names, struct pool *resolver,
				const struct sockaddr_storage *peer, struct arena *a)
{
	if (!resolver || (!*names && !(*names = calloc(1, sizeof **names))))
		return "";
	uint64_t now = fiber_now_ns();
	struct name_entry *e = find(*names, peer, now);
	if (!e) {
		struct lookup l = {.addr = *peer};
		unmap(&l.addr);
		/* On the resolver's own threads: a slow DNS server holds those, never the pool
		 * that opens handles and reads directories for every client. */
		pool_run(resolver, do_lookup, &l);   /* the fiber waits; the ring goes on */
		e = find(*names, peer, fiber_now_ns());   /* another fiber may have */
		if (!e) {
			e = slot(*names);
			e->addr = *peer;
			snprintf(e->name, sizeof e->name, "%s", l.name);
			e->expires_ns = fiber_now_ns() + NAME_TTL_NS;
		}
	}
	char *copy = arena_alloc(a, strlen(e->name) + 1);
	if (!copy)
		return "";
	strcpy(copy, e->name);
	return copy;
}
