/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Each ring's table of when its clients last called (seen.h). */
#include "svc/seen.h"

#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/sockaddr.h"

#define READ_TRIES 64

struct seen_table *seen_new(void)
{
	struct seen_table *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	uint64_t k[2];
	/* A key the client cannot learn: it cannot pick addresses that share one probe set. */
	if (getrandom(k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		k[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)t;
		k[1] = (uint64_t)ts.tv_sec ^ k[0] << 1;
	}
	t->k0 = k[0];
	t->k1 = k[1];
	return t;
}

void seen_free(struct seen_table *t)
{
	free(t);
}

/* The address of peer as the key: an IPv4-mapped one is its IPv4 client (sockaddr.h). */
static bool key_of(const struct sockaddr_storage *peer, uint32_t *family, uint64_t a[2])
{
	uint8_t b[16] = {0};
	int f = sa_addr((const struct sockaddr *)peer, b);
	if (f == AF_UNSPEC)
		return false;
	*family = (uint32_t)f;
	memcpy(a, b, 16);
	return true;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static size_t home_of(const struct seen_table *t, uint32_t family, const uint64_t a[2])
{
	return (size_t)(mix(a[0] ^ t->k0) ^ mix(a[1] ^ t->k1 ^ family));
}

#define LOAD(p) atomic_load_explicit((p), memory_order_relaxed)
#define STORE(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)

static bool holds(struct seen_slot *s, uint32_t family, const uint64_t a[2])
{
	return LOAD(&s->family) == family && LOAD(&s->a0) == a[0] && LOAD(&s->a1) == a[1];
}

/* Release stores and acquire loads of the fields order them after the odd count (a reader that
 * sees a new field sees the count move), with no fence: TSan does not model fences. Each is a
 * plain move on x86. */
#define STORE_REL(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define LOAD_ACQ(p) atomic_load_explicit((p), memory_order_acquire)

/* A new address in s: inside an odd sequence count, so a reader never mixes two. */
static void rewrite(struct seen_slot *s, uint32_t family, const uint64_t a[2], uint64_t now)
{
	uint32_t q = LOAD(&s->seq);
	STORE(&s->seq, q + 1);
	STORE_REL(&s->a0, a[0]);
	STORE_REL(&s->a1, a[1]);
	STORE_REL(&s->family, family);
	STORE_REL(&s->last_ns, now);
	STORE_REL(&s->seq, q + 2);
}

void seen_note(struct seen_table *t, const struct sockaddr_storage *peer, uint64_t now_ns)
{
	uint32_t family;
	uint64_t a[2];
	if (!key_of(peer, &family, a))
		return;
	size_t home = home_of(t, family, a);
	struct seen_slot *oldest = NULL;
	for (unsigned i = 0; i < SEEN_PROBE; i++) {
		struct seen_slot *s = &t->slot[(home + i) & (SEEN_SLOTS - 1)];
		if (LOAD(&s->family) == 0) {
			/* Slots are never emptied: an address past an empty one was never put there. */
			rewrite(s, family, a, now_ns);
			return;
		}
		if (holds(s, family, a)) {
			STORE(&s->last_ns, now_ns);
			return;
		}
		if (!oldest || LOAD(&s->last_ns) < LOAD(&oldest->last_ns))
			oldest = s;
	}
	/* Only this ring writes the count: no locked instruction. */
	STORE(&t->dropped, LOAD(&t->dropped) + 1);
	rewrite(oldest, family, a, now_ns);
}

/* A consistent copy of s: false when empty, or still being rewritten after READ_TRIES looks
 * (its ring was preempted in the middle: that address is left out this time). */
static bool read_slot(struct seen_slot *s, uint32_t *family, uint64_t a[2], uint64_t *last)
{
	for (int i = 0; i < READ_TRIES; i++) {
		uint32_t q = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (q & 1) {
			sched_yield();
			continue;
		}
		*family = LOAD_ACQ(&s->family);
		a[0] = LOAD_ACQ(&s->a0);
		a[1] = LOAD_ACQ(&s->a1);
		*last = LOAD_ACQ(&s->last_ns);
		if (LOAD(&s->seq) == q)
			return *family != 0;
	}
	return false;
}

static void to_sockaddr(uint32_t family, const uint64_t a[2], struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, a, 4);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, a, 16);
	}
}

void seen_walk(struct seen_table *t,
	       void (*fn)(void *ctx, const struct sockaddr_storage *addr, uint64_t last_ns),
	       void *ctx)
{
	for (size_t i = 0; i < SEEN_SLOTS; i++) {
		uint32_t family;
		uint64_t a[2], last;
		struct sockaddr_storage ss;
		if (!read_slot(&t->slot[i], &family, a, &last))
			continue;
		to_sockaddr(family, a, &ss);
		fn(ctx, &ss, last);
	}
}
