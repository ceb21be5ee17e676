/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fs/listcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#define WAYS 4

struct slot {
	uint64_t tag;             /* the key's hash, never 0; 0: empty */
	uint64_t ino;
	uint64_t used;            /* the cache's clock when last filed or found */
	int32_t type;
	uint32_t len;
	unsigned char bytes[FH_MAX];
};

/* Pool threads of every ring share it, a listing's parts side by side: each set is guarded by
 * one of SHARDS locks, so that two threads seldom wait for each other (one lock for all made
 * two parts of one listing take turns, a futex call each time). */
#define SHARDS 64

struct shard {
	_Alignas(64) pthread_mutex_t mu;
	uint64_t clock;           /* when its sets' slots were last filed or found */
	struct listcache_stats n; /* its sets' share of the counters */
};

struct listcache {
	struct shard shards[SHARDS];
	uint8_t key[16];
	size_t nsets;             /* a power of two, SHARDS at least */
	struct slot *slots;       /* nsets * WAYS; calloc's pages are the kernel's until touched */
};

struct listcache *listcache_new(const uint8_t key[16], unsigned slots)
{
	struct listcache *lc = aligned_alloc(_Alignof(struct listcache), sizeof *lc);
	if (!lc)
		return NULL;
	memset(lc, 0, sizeof *lc);
	memcpy(lc->key, key, sizeof lc->key);
	lc->nsets = SHARDS;
	while (lc->nsets * WAYS < slots)
		lc->nsets *= 2;
	lc->slots = calloc(lc->nsets * WAYS, sizeof *lc->slots);
	if (!lc->slots) {
		free(lc);
		return NULL;
	}
	for (int i = 0; i < SHARDS; i++)
		pthread_mutex_init(&lc->shards[i].mu, NULL);
	return lc;
}

void listcache_free(struct listcache *lc)
{
	if (!lc)
		return;
	for (int i = 0; i < SHARDS; i++)
		pthread_mutex_destroy(&lc->shards[i].mu);
	free(lc->slots);
	free(lc);
}

bool listcache_settled(const struct statx_timestamp *ctime, const struct timespec *now)
{
	int64_t grain = ctime->tv_nsec == 0 ? 3000000000 : 50000000;
	int64_t age = ((int64_t)now->tv_sec - ctime->tv_sec) * 1000000000 +
		      ((int64_t)now->tv_nsec - (int64_t)ctime->tv_nsec);
	return age > grain;
}

static uint64_t tag_of(const struct listcache *lc, const struct lc_dir *d, const char *name)
{
	unsigned char buf[8 + 8 + 8 + 4 + 1 + 256];
	size_t n = strnlen(name, 255);
	memcpy(buf, &d->dev, 8);
	memcpy(buf + 8, &d->ino, 8);
	memcpy(buf + 16, &d->ctime.tv_sec, 8);
	memcpy(buf + 24, &d->ctime.tv_nsec, 4);
	buf[28] = d->connectable;
	memcpy(buf + 29, name, n);
	uint64_t tag;
	crypto_shorthash_siphash24((unsigned char *)&tag, buf, 29 + n, lc->key);
	return tag ? tag : 1;
}

static size_t set_index(const struct listcache *lc, uint64_t tag)
{
	return (size_t)(tag & (lc->nsets - 1));
}

bool listcache_get(struct listcache *lc, const struct lc_dir *d, const char *name, uint64_t ino,
		   struct fh_kernel *kh)
{
	uint64_t tag = tag_of(lc, d, name);
	size_t set = set_index(lc, tag);
	struct shard *sh = &lc->shards[set % SHARDS];
	struct slot *s = &lc->slots[set * WAYS];
	bool found = false;
	pthread_mutex_lock(&sh->mu);
	for (int w = 0; w < WAYS && !found; w++) {
		if (s[w].tag != tag || s[w].ino != ino)
			continue;
		kh->h.handle_type = s[w].type;
		kh->h.handle_bytes = s[w].len;
		memcpy(kh->h.f_handle, s[w].bytes, s[w].len);
		s[w].used = ++sh->clock;
		found = true;
	}
	if (found)
		sh->n.hits++;
	else
		sh->n.misses++;
	pthread_mutex_unlock(&sh->mu);
	return found;
}

void listcache_put(struct listcache *lc, const struct lc_dir *d, const char *name, uint64_t ino,
		   const struct fh_kernel *kh)
{
	if (kh->h.handle_bytes > FH_MAX)
		return;
	uint64_t tag = tag_of(lc, d, name);
	size_t set = set_index(lc, tag);
	struct shard *sh = &lc->shards[set % SHARDS];
	struct slot *s = &lc->slots[set * WAYS], *pick = s;
	pthread_mutex_lock(&sh->mu);
	for (int w = 0; w < WAYS && pick->tag != tag; w++)
		if (s[w].tag == tag || s[w].used < pick->used)
			pick = &s[w];
	*pick = (struct slot){.tag = tag, .ino = ino, .used = ++sh->clock,
			      .type = kh->h.handle_type, .len = kh->h.handle_bytes};
	memcpy(pick->bytes, kh->h.f_handle, kh->h.handle_bytes);
	sh->n.filed++;
	pthread_mutex_unlock(&sh->mu);
}

void listcache_stats(struct listcache *lc, struct listcache_stats *out)
{
	*out = (struct listcache_stats){0};
	for (int i = 0; lc && i < SHARDS; i++) {
		struct shard *sh = &lc->shards[i];
		pthread_mutex_lock(&sh->mu);
		out->hits += sh->n.hits;
		out->misses += sh->n.misses;
		out->filed += sh->n.filed;
		pthread_mutex_unlock(&sh->mu);
	}
}
