/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What rawnlm.c lends rawnlm_host.c, not for the tests: the reader of XDR words that decodes
 * both the daemon's replies and the calls it makes to the fake client host. */
#ifndef NFSD_UC_IT_RAWNLM_INT_H
#define NFSD_UC_IT_RAWNLM_INT_H

#include <stdbool.h>
#include <stdint.h>

/* Bytes to read; bad once anything was missing or malformed (every read then gives 0). */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

uint32_t rd_u32(struct rd *d);
uint64_t rd_u64(struct rd *d);
/* An opaque<>: its bytes (into the buffer) and length; NULL when malformed or longer than max. */
const uint8_t *rd_opaque(struct rd *d, uint32_t *len, uint32_t max);

#endif
