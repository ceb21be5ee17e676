/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The counters program's CLIENTS procedure (3), for nfsd-uc-stat clients: one row per client
 * address, gathered when asked from the layers that own each figure, none of them copied or
 * kept here: MOUNT's list (mounts), the connection limits' table (connections open), the lock
 * manager's hosts (locks held and waiting), and each ring's table of calls (last seen).
 *
 * On the wire (XDR), after the accepted reply header:
 *   unsigned hyper seen_dropped;  addresses the rings' bounded call tables let go (svc/seen.h)
 *   unsigned hyper not_listed;    entries left out of this reply past CLIENTS_MAX rows
 *   client rows<>: { string addr<46>; unsigned mounts; unsigned connections; unsigned locks;
 *                    unsigned waiting; unsigned hyper idle_ms; }
 * idle_ms: milliseconds since the address's latest call, 2^64 - 1 when no ring remembers one. */
#ifndef NFSD_UC_OPS_CLIENTS_H
#define NFSD_UC_OPS_CLIENTS_H

#include <arpa/inet.h>
#include <rpc/rpc.h>
#include <stdint.h>

#include "svc/dispatch.h"

#define CLIENTS_MAX 4096          /* rows in one reply (about 300 KiB at most) */

struct client_row {
	char addr[INET6_ADDRSTRLEN];  /* "" : a free slot while gathering */
	uint32_t mounts, conns, locks, waiting;
	uint64_t last_ns;             /* CLOCK_MONOTONIC of its latest call; 0: none known */
};

struct clients_res {
	uint64_t seen_dropped, not_listed;
	uint32_t n;
	struct client_row *rows;      /* in the call's arena */
	uint64_t now_ns;              /* when gathered: idle_ms is measured from it */
};

bool_t xdr_clients_res(XDR *x, struct clients_res *r);
/* The handler (struct ops as the program's state); loopback callers only, as the counters. */
void clients_get(struct svc_call *rq, void *argp, void *resp);

#endif
