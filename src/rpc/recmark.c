/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "rpc/recmark.h"

uint32_t recmark_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void recmark_put(uint8_t *p, uint32_t len)
{
	uint32_t m = len | RECMARK_LAST;
	p[0] = (uint8_t)(m >> 24);
	p[1] = (uint8_t)(m >> 16);
	p[2] = (uint8_t)(m >> 8);
	p[3] = (uint8_t)m;
}
