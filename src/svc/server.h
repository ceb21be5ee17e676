/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Listeners and connections: RPC record reassembly, the request fiber of each record, replies.
 * Ring 0 accepts on both ports and hands each connection to a ring in turn; the ring owns it from
 * then on (worker.h). */
#ifndef NFSD_UC_SVC_SERVER_H
#define NFSD_UC_SVC_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "svc/worker.h"

/* A socket of type (SOCK_STREAM or SOCK_DGRAM, with SOCK_* flags) bound to the IPv4 or IPv6
 * literal addr and port, IPV6_V6ONLY when asked. fd or -errno. */
int server_bind(const char *addr, uint16_t port, int type, bool v6only);

/* On a ring's own thread. */
void server_ring_start(struct worker *w);        /* ring 0: start accepting */
void server_ring_stop(struct worker *w);         /* stop accepting and reading; owed replies go out */
bool server_ring_closed(const struct worker *w); /* no connection left */
void server_ring_free(struct worker *w);         /* after the loop: free what is left */
void server_ring_unstall(struct worker *w);      /* room on the ring: read held-back connections */

#endif
