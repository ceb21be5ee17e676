/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPC over UDP on ring 0 (dgram.c): each datagram one call, answered from the address it came to. */
#ifndef NFSD_UC_SVC_DGRAM_H
#define NFSD_UC_SVC_DGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "svc/worker.h"

/* A UDP socket bound to addr:port (v6only as for the TCP listeners). fd or -errno. */
int dgram_open(const char *addr, uint16_t port, bool v6only);
/* Serve fd on w's ring (its thread): NULL when out of memory. */
struct dgram *dgram_start(struct worker *w, int fd);
/* Stop receiving (the ring stops); calls in flight finish, their replies are dropped. */
void dgram_stop(struct dgram *d);
/* After the ring's loop ended. The socket is the server's to close. */
void dgram_free(struct dgram *d);

#endif
