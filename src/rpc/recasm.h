/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One RPC record put together from its fragments (RFC 5531 section 11) in a buffer of its own:
 * no sockets and no rings here, so that the fuzzer runs the daemon's own code (fuzz_recmark).
 *
 * The buffer may be placed: allocated aligned, with the record starting shift bytes in (a WRITE's
 * payload then lands aligned for O_DIRECT), and growing keeps that placement. It grows when the
 * caller needs room (recasm_reserve: before a receive into it, before a copy), to at least twice
 * its size up to the record's bound: a record of n bytes costs O(n) copying however it is cut,
 * where growing to the end of each fragment cost O(n^2) (a 1 MiB WRITE in 1-byte fragments: 9 s
 * of CPU). */
#ifndef NFSD_UC_RECASM_H
#define NFSD_UC_RECASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct recasm {
	uint8_t *mem;             /* the allocation; NULL: no record begun */
	uint8_t *rec;             /* where the record starts in it */
	size_t len;               /* bytes of the record so far */
	size_t cap;               /* room from rec */
	size_t align, shift;      /* mem aligned to align (0: plain malloc), rec = mem + shift */
	uint32_t frag_left;       /* bytes of the current fragment still to come */
	bool last;                /* the current fragment is the record's last */
	uint64_t moved;           /* bytes copied by growing, over every record (linear: checked) */
};

/* Begin a record with a fragment of frag_len bytes (last: the record's only one), with room for
 * cap bytes (at least 1) placed as align and shift say. 0, or -ENOMEM (nothing begun). */
int recasm_begin(struct recasm *ra, uint32_t frag_len, bool last, size_t cap, size_t align,
		 size_t shift);
/* The current fragment is done: the next one has frag_len bytes. */
void recasm_next(struct recasm *ra, uint32_t frag_len, bool last);
/* Room for the record's first need bytes (need <= max, the record's bound). 0, or -ENOMEM (the
 * record stays as it was). */
int recasm_reserve(struct recasm *ra, size_t need, size_t max);
/* n bytes of the current fragment arrived at recasm_tail() (received there), or are copied
 * there from p; room for them was reserved. */
void recasm_got(struct recasm *ra, size_t n);
void recasm_put(struct recasm *ra, const void *p, size_t n);
/* Every fragment came and the last one ended. */
bool recasm_whole(const struct recasm *ra);
/* Hand the whole record over: its allocation (the caller frees it), the record in it and its
 * length. ra is empty again (moved kept). */
uint8_t *recasm_take(struct recasm *ra, uint8_t **rec, size_t *len);
void recasm_free(struct recasm *ra);

static inline uint8_t *recasm_tail(const struct recasm *ra)
{
	return ra->rec + ra->len;
}

#endif
