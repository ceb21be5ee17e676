/* SPDX-License-Identifier: GPL-2.0-or-later */
/* When each client address last called, per ring (nfsd-uc-stat clients' "last seen"). A ring
 * notes every call it dispatches in a table of its own, so the hot path shares no line with
 * another ring; readers on any thread walk every ring's table at the moment they ask and keep
 * the latest time of each address.
 *
 * The table is bounded (SEEN_SLOTS per ring): an address hashes (keyed: a client cannot aim at
 * one set) to SEEN_PROBE slots; when all hold other addresses, the one seen longest ago is
 * replaced and counted as dropped. So a client spraying source addresses costs no memory, only
 * other addresses' "last seen" on that ring.
 *
 * Only the ring writes its table; every field is an atomic, and a slot's address changes inside
 * a sequence count (a seqlock), so a reader never sees one address with another's time. */
#ifndef NFSD_UC_SVC_SEEN_H
#define NFSD_UC_SVC_SEEN_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#define SEEN_SLOTS 1024           /* per ring, a power of two */
#define SEEN_PROBE 8

struct seen_slot {
	_Atomic uint32_t seq;         /* odd while the ring rewrites the address */
	_Atomic uint32_t family;      /* AF_INET, AF_INET6; 0: empty */
	_Atomic uint64_t a0, a1;      /* the address's 16 bytes (IPv4: the first 4) */
	_Atomic uint64_t last_ns;     /* CLOCK_MONOTONIC of its latest call on this ring */
};

struct seen_table {
	uint64_t k0, k1;              /* the hash's key, drawn at start */
	_Atomic uint64_t dropped;     /* addresses replaced for room */
	struct seen_slot slot[SEEN_SLOTS];
};

/* NULL when out of memory. */
struct seen_table *seen_new(void);
void seen_free(struct seen_table *t);

/* A call from peer at now_ns (CLOCK_MONOTONIC), on the table's ring only. */
void seen_note(struct seen_table *t, const struct sockaddr_storage *peer, uint64_t now_ns);

/* Each address of t with the time of its latest call, from any thread: a consistent copy of
 * each slot (a slot being rewritten is read again). */
void seen_walk(struct seen_table *t,
	       void (*fn)(void *ctx, const struct sockaddr_storage *addr, uint64_t last_ns),
	       void *ctx);

#endif
