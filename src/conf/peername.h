/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The name of a request's client, for wildcard client rules (*.example.com): its address looked
 * up in reverse, then forward to confirm it (a PTR record alone is the client's to choose), on
 * threads of their own (resolver: DNS can be slow, and that pool is only for this); kept, found
 * or not, per ring for a minute. Asked only when a request reaches a wildcard rule. */
#ifndef NFSD_UC_CONF_PEERNAME_H
#define NFSD_UC_CONF_PEERNAME_H

#include <sys/socket.h>

struct arena;
struct peer_names;
struct pool;

/* The confirmed name of peer ("" when there is none), in arena a. *names is the calling ring's
 * cache of them (made on first use; the caller frees it with free()). */
const char *peer_confirmed_name(struct peer_names **names, struct pool *resolver,
				const struct sockaddr_storage *peer, struct arena *a);

#endif
