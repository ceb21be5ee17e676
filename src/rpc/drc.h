/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The duplicate request cache (knfsd's nfscache.c): the replies of non-idempotent calls, kept for
 * a while so that a client's retransmission (after a timeout, or on a new connection from the
 * same port after a reconnect) gets the original reply instead of running the call again: a
 * REMOVE run twice answers NOENT, a MKDIR EXIST. A retransmission that arrives while the original
 * still runs is dropped; the original's reply answers it. Shared by every ring (sharded locks). */
#ifndef NFSD_UC_DRC_H
#define NFSD_UC_DRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* What identifies a call, as knfsd keys it: xid, the client's address and port, program, version
 * and procedure, and the length and a checksum of the call's first argument bytes (so a client
 * that reuses an xid after a reboot is not answered from the cache). */
struct drc_key {
	uint32_t xid, prog, vers, proc;
	const struct sockaddr_storage *peer;
	const uint8_t *args;
	size_t args_len;
};

enum drc_verdict {
	DRC_MISS,      /* new: run it, then drc_done() with its reply */
	DRC_INPROG,    /* the same call is running: drop this one */
	DRC_HIT,       /* answered before: *reply is a copy of that reply (malloc'd, the caller's) */
};

struct drc;
struct drc_entry;

struct drc_stats {
	uint64_t hits, inprog_drops, misses, entries, bytes;
};

/* A cache of at most max_entries replies and max_bytes of them. 0 or -errno. */
int drc_create(size_t max_entries, size_t max_bytes, struct drc **out);
void drc_destroy(struct drc *d);

/* Look the call up. DRC_MISS: *slot is its new in-progress entry. DRC_HIT: *reply, *len. */
enum drc_verdict drc_lookup(struct drc *d, const struct drc_key *k, struct drc_entry **slot,
			    uint8_t **reply, size_t *len);
/* The call of slot is done: keep its encoded reply (record mark included), or forget the call
 * when reply is NULL (no reply was sent: a retransmission must run it). */
void drc_done(struct drc *d, struct drc_entry *slot, const uint8_t *reply, size_t len);

void drc_get_stats(struct drc *d, struct drc_stats *st);

#endif
