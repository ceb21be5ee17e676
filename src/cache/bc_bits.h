/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The bytes-written bitmap of an entry: one bit per byte of the block. Block sizes are powers of
 * two >= 512, so the map is a whole number of 64-bit words. */
#ifndef NFSD_UC_BC_BITS_H
#define NFSD_UC_BC_BITS_H

#include <stdbool.h>
#include <stdint.h>

/* Bits [lo, hi) of one word, 0 <= lo < hi <= 64. */
static inline uint64_t bc_bits_mask(uint32_t lo, uint32_t hi)
{
	uint64_t upto = hi == 64 ? ~(uint64_t)0 : (((uint64_t)1 << hi) - 1);
	return upto & ~(((uint64_t)1 << lo) - 1);
}

/* Set or clear bits [a, b); returns how many changed. */
static inline uint32_t bc_bits_change(uint64_t *w, uint32_t a, uint32_t b, bool set)
{
	uint32_t changed = 0;

	while (a < b) {
		uint32_t wi = a / 64, base = wi * 64;
		uint32_t hi = b - base < 64 ? b - base : 64;
		uint64_t m = bc_bits_mask(a - base, hi);

		if (set) {
			changed += (uint32_t)__builtin_popcountll(m & ~w[wi]);
			w[wi] |= m;
		} else {
			changed += (uint32_t)__builtin_popcountll(m & w[wi]);
			w[wi] &= ~m;
		}
		a = base + hi;
	}
	return changed;
}

/* First bit >= from (and < n) whose value is `set`, or n. */
static inline uint32_t bc_bits_find(const uint64_t *w, uint32_t from, uint32_t n, bool set)
{
	while (from < n) {
		uint32_t wi = from / 64;
		uint64_t x = set ? w[wi] : ~w[wi];

		x &= ~(uint64_t)0 << (from % 64);
		if (x) {
			uint32_t r = wi * 64 + (uint32_t)__builtin_ctzll(x);
			return r < n ? r : n;
		}
		from = (wi + 1) * 64;
	}
	return n;
}

#endif
