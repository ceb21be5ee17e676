/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "rpc/recasm.h"

#include "base/bufstash.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define GROW_MIN 4096

static uint8_t *alloc_placed(size_t align, size_t shift, size_t cap)
{
	return bufstash_alloc(align ? align : _Alignof(max_align_t), shift + cap);
}

int recasm_begin(struct recasm *ra, uint32_t frag_len, bool last, size_t cap, size_t align,
		 size_t shift)
{
	if (cap == 0)
		cap = 1;
	uint8_t *m = alloc_placed(align, align ? shift : 0, cap);
	if (!m)
		return -ENOMEM;
	uint64_t moved = ra->moved;
	*ra = (struct recasm){.mem = m, .rec = m + (align ? shift : 0), .cap = cap, .align = align,
			      .shift = align ? shift : 0, .frag_left = frag_len, .last = last,
			      .moved = moved};
	return 0;
}

void recasm_next(struct recasm *ra, uint32_t frag_len, bool last)
{
	ra->frag_left = frag_len;
	ra->last = last;
}

int recasm_reserve(struct recasm *ra, size_t need, size_t max)
{
	if (need <= ra->cap)
		return 0;
	size_t cap = ra->cap < max / 2 ? 2 * ra->cap : max;
	if (cap < GROW_MIN && max >= GROW_MIN)
		cap = GROW_MIN;
	if (cap < need)
		cap = need;
	uint8_t *m = alloc_placed(ra->align, ra->shift, cap);
	if (!m)
		return -ENOMEM;
	memcpy(m + ra->shift, ra->rec, ra->len);
	ra->moved += ra->len;
	bufstash_free(ra->mem);
	ra->mem = m;
	ra->rec = m + ra->shift;
	ra->cap = cap;
	return 0;
}

void recasm_got(struct recasm *ra, size_t n)
{
	ra->len += n;
	ra->frag_left -= (uint32_t)n;
}

void recasm_put(struct recasm *ra, const void *p, size_t n)
{
	memcpy(ra->rec + ra->len, p, n);
	recasm_got(ra, n);
}

bool recasm_whole(const struct recasm *ra)
{
	return ra->mem && ra->frag_left == 0 && ra->last;
}

uint8_t *recasm_take(struct recasm *ra, uint8_t **rec, size_t *len)
{
	uint8_t *m = ra->mem;
	*rec = ra->rec;
	*len = ra->len;
	*ra = (struct recasm){.moved = ra->moved};
	return m;
}

void recasm_free(struct recasm *ra)
{
	bufstash_free(ra->mem);
	*ra = (struct recasm){.moved = ra->moved};
}
