/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The monotonic clock, in nanoseconds: what timeouts and ages are measured with. */
#ifndef NFSD_UC_BASE_CLOCK_H
#define NFSD_UC_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif
