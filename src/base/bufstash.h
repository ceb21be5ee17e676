/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bufstash: a thread's buffers of a page and more, kept warm between a free and the next
 * allocation.
 *
 * A 1 MiB WRITE's record, a READ's buffer or a sealed reply is allocated and freed a thousand
 * times a second on each ring. The allocator gives freed pages back to the kernel within 100 ms
 * (main.c: a memory-capped daemon must not hold what the cache's bound never sees), so each new
 * buffer was fresh memory that faulted in and was cleared page by page: with 32 clients writing
 * 1 MiB units, the faults under the receive copy were half of the daemon's CPU. A ring now keeps
 * the last buffers it freed, up to a bound in bytes it is given (svc/worker.c: an eighth of its
 * share of receive_memory), and hands them out again.
 *
 * Everything here is the calling thread's own (thread-local): no lock, and nothing a second
 * thread can see. A buffer may be freed on any thread: it joins that thread's stash, or goes
 * back to the allocator where the thread keeps none. Under ASan a stashed buffer is poisoned,
 * so a use after its free is still caught. */
#ifndef NFSD_UC_BASE_BUFSTASH_H
#define NFSD_UC_BASE_BUFSTASH_H

#include <stddef.h>

/* Buffers smaller than this go straight to and from the allocator (its thread cache keeps
 * them warm already). Page-sized and larger ones are kept: a record of a few kilobytes held by
 * the cache until written behind was fresh memory each time otherwise (the allocator's purge
 * and the faults after it were a tenth of the daemon's time on 6000-byte records). */
#define BUFSTASH_MIN (4u << 10)

/* A buffer of BUFSTASH_HUGE_MIN or more (a 1 MiB WRITE's record, a READ's readahead, a sealed
 * 1 MiB reply) is whole huge pages, aligned to one and advised as such (MADV_HUGEPAGE), so that
 * the kernel backs it with physically contiguous memory: an O_DIRECT write or read of it then
 * reaches the device as requests of the queue's largest size, where scattered 4 KiB pages make
 * one of max_segments pages (128 on a loop device, about as many on virtio and NVMe: 512 KiB),
 * and it faults in once, not a page at a time. A record of 1 MiB and a header takes 2 MiB: the
 * receiving side charges what it holds (svc/recvmem.c). 1 MiB WRITEs in order, 4 x 8 in flight, on
 * XFS on a loop device: requests of 1 MiB instead of 580-730 KiB, the device busy 20-55% less
 * for the same bytes. */
#define BUFSTASH_HUGE_MIN (1u << 20)
#define BUFSTASH_HUGE_PAGE (2u << 20)

/* This thread keeps up to `bytes` of freed buffers from now on (0: none, the default); what it
 * held beyond the new bound is freed. */
void bufstash_keep(size_t bytes);

/* posix_memalign(align, size) with a stashed buffer when one fits: at least `size` usable bytes
 * (rounded up to whole pages when align is a page or more), about a quarter more at most (whole
 * huge pages from BUFSTASH_HUGE_MIN), aligned to `align` (a power of two). NULL when out of
 * memory. */
void *bufstash_alloc(size_t align, size_t size);

/* free(p), or keep p warm in this thread's stash. p is any pointer the C allocator returned. */
void bufstash_free(void *p);

/* What this thread holds: buffers, and bytes in *bytes when given. */
size_t bufstash_held(size_t *bytes);

#endif
