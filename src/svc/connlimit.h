/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a client may make the server hold, across every ring: connections in all and per client
 * address (conf connections, connections_per_client), and the memory of the records being
 * received or run and of READ replies (receive_memory, and the shares of it of a connection,
 * receive_memory_per_connection, and of a client address, receive_memory_per_client).
 * Connections are counted by the accepting ring and uncounted by the ring that closes them; the
 * counters are atomics and the per-address table has a mutex, touched only at open and close. */
#ifndef NFSD_UC_CONNLIMIT_H
#define NFSD_UC_CONNLIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct config;
struct conn_limits;

enum climit_verdict {
	CL_OK,
	CL_OVER_TOTAL,     /* more connections than `connections` */
	CL_OVER_CLIENT,    /* more from this address than `connections_per_client` */
};

struct climit_stats {
	uint64_t connections, evicted, refused, idle_closed, slow_closed, mem_waits, mem_bytes;
	uint64_t share_waits, windows_revoked, tokens_passed, client_waits;
};

int climits_create(const struct config *cfg, struct conn_limits **out);
void climits_destroy(struct conn_limits *cl);

/* A new connection from peer, counted whatever the verdict: each open is matched by a close. */
enum climit_verdict climits_open(struct conn_limits *cl, const struct sockaddr_storage *peer);
void climits_close(struct conn_limits *cl, const struct sockaddr_storage *peer);

/* Charge n bytes of record memory: false (nothing charged) when that would pass the bound and
 * something is charged already; the caller stops reading until climits_mem_put() makes room. */
bool climits_mem_take(struct conn_limits *cl, size_t n);
/* Charge without asking (bytes already received, a whole small call). */
void climits_mem_force(struct conn_limits *cl, size_t n);
void climits_mem_put(struct conn_limits *cl, size_t n);
/* Is anything of the bound left? */
bool climits_mem_room(struct conn_limits *cl);
/* A connection's share of the bound. */
size_t climits_mem_share(const struct conn_limits *cl);

/* One client address: its connections' count, and what of the bound they hold together. */
struct climit_client;
/* peer's entry, which climits_open() counted (NULL: none could be made); it lives until the
 * climits_close() of the last connection from that address. */
struct climit_client *climits_client(struct conn_limits *cl, const struct sockaddr_storage *peer);
size_t climits_client_held(const struct climit_client *cc);
void climits_client_add(struct climit_client *cc, size_t n);
void climits_client_sub(struct climit_client *cc, size_t n);
/* A client's share of the bound (receive_memory_per_client). */
size_t climits_client_share(const struct conn_limits *cl);


enum climit_event { CLE_EVICTED, CLE_REFUSED, CLE_IDLE, CLE_SLOW, CLE_MEM_WAIT, CLE_SHARE_WAIT,
		    CLE_WIN_REVOKED, CLE_TOKEN_PASSED, CLE_CLIENT_WAIT };
void climits_count(struct conn_limits *cl, enum climit_event ev);
void climits_get_stats(struct conn_limits *cl, struct climit_stats *st);
/* Each address with connections open and how many, under the table's mutex (fn must not call
 * back into the limits). */
void climits_walk(struct conn_limits *cl,
		  void (*fn)(void *ctx, const struct sockaddr_storage *addr, unsigned n), void *ctx);

#endif
