/* RFC 5531 section 11 record marking: each fragment is led by a 4-byte big-endian word whose top
 * bit marks the last fragment of a record and whose other 31 bits give the fragment length. */
#ifndef NFSD_UC_RECMARK_H
#define NFSD_UC_RECMARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECMARK_LAST 0x80000000u

static inline uint32_t recmark_len(uint32_t mark_be_decoded) { return mark_be_decoded & ~RECMARK_LAST; }
static inline bool recmark_is_last(uint32_t mark) { return (mark & RECMARK_LAST) != 0; }
/* Read the (unaligned, big-endian) mark at p. */
uint32_t recmark_get(const uint8_t *p);
/* Write a single-fragment mark for a record of len bytes. */
void recmark_put(uint8_t *p, uint32_t len);

#endif
