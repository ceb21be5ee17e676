/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The duplicate request cache: a hash table of calls in 16 shards (a mutex each: every WRITE
 * looks up and stores once, on whichever ring it runs), each with an LRU list of the answered
 * ones. Entries in progress are not on the list and are never evicted: the fiber that runs the
 * call finishes its entry. Answered entries go after 120 s (knfsd's RC_EXPIRE) or when the shard
 * is over its share of the bounds, oldest first. */
#include "rpc/drc.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DRC_SHARDS 16
#define SHARD_OF(hash) ((hash) >> 60)          /* the top bits: buckets take the low ones */
#define DRC_CSUM_LEN 256                       /* argument bytes checksummed, as knfsd */
#define DRC_EXPIRE_NS (120 * 1000000000ull)

/* A call's identity, hashed and compared as one block. */
struct drc_id {
	uint32_t xid, prog, vers, proc;
	uint32_t args_len;
	uint16_t family, port;
	uint8_t addr[16];
	uint64_t csum;
};

struct drc_entry {
	struct drc_entry *hnext;                 /* bucket chain */
	struct drc_entry *older, *newer;         /* LRU, answered entries only */
	struct drc_id id;
	uint64_t hash;
	uint64_t when_ns;                        /* answered at */
	bool done;
	uint8_t *reply;
	size_t len;
};

struct drc_shard {
	pthread_mutex_t lock;
	struct drc_entry **buckets;
	size_t mask;
	struct drc_entry *oldest, *newest;          /* the answered ones */
	size_t entries, bytes;                       /* all, running ones too */
	size_t answered, answered_bytes;             /* on the list: what the bounds hold */
	size_t max_entries, max_bytes;
};

struct drc {
	struct drc_shard shard[DRC_SHARDS];
	unsigned char key[crypto_shorthash_KEYBYTES];
	_Atomic uint64_t hits, inprog_drops, misses;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static size_t entry_bytes(const struct drc_entry *e)
{
	return sizeof *e + e->len;
}

int drc_create(size_t max_entries, size_t max_bytes, struct drc **out)
{
	struct drc *d = calloc(1, sizeof *d);
	if (!d)
		return -ENOMEM;
	randombytes_buf(d->key, sizeof d->key);
	size_t per = max_entries / DRC_SHARDS ? max_entries / DRC_SHARDS : 1;
	size_t nb = 16;
	while (nb < per)
		nb <<= 1;
	for (int i = 0; i < DRC_SHARDS; i++) {
		struct drc_shard *s = &d->shard[i];
		pthread_mutex_init(&s->lock, NULL);
		s->buckets = calloc(nb, sizeof *s->buckets);
		s->mask = nb - 1;
		s->max_entries = per;
		s->max_bytes = max_bytes / DRC_SHARDS;
		if (!s->buckets) {
			drc_destroy(d);
			return -ENOMEM;
		}
	}
	*out = d;
	return 0;
}

void drc_destroy(struct drc *d)
{
	if (!d)
		return;
	for (int i = 0; i < DRC_SHARDS; i++) {
		struct drc_shard *s = &d->shard[i];
		for (size_t b = 0; s->buckets && b <= s->mask; b++)
			for (struct drc_entry *e = s->buckets[b], *n; e; e = n) {
				n = e->hnext;
				free(e->reply);
				free(e);
			}
		free(s->buckets);
		pthread_mutex_destroy(&s->lock);
	}
	free(d);
}

static void make_id(const struct drc *d, const struct drc_key *k, struct drc_id *id, uint64_t *hash)
{
	memset(id, 0, sizeof *id);    /* padding too: the id is hashed and compared whole */
	id->xid = k->xid;
	id->prog = k->prog;
	id->vers = k->vers;
	id->proc = k->proc;
	id->args_len = (uint32_t)k->args_len;
	id->family = k->peer->ss_family;
	if (k->peer->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)k->peer;
		id->port = a->sin_port;
		memcpy(id->addr, &a->sin_addr, 4);
	} else if (k->peer->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)k->peer;
		id->port = a->sin6_port;
		memcpy(id->addr, &a->sin6_addr, 16);
	}
	size_t n = k->args_len < DRC_CSUM_LEN ? k->args_len : DRC_CSUM_LEN;
	crypto_shorthash((unsigned char *)&id->csum, k->args, n, d->key);
	crypto_shorthash((unsigned char *)hash, (const unsigned char *)id, sizeof *id, d->key);
}

/* ---- one shard, under its lock ---- */

static void lru_unlink(struct drc_shard *s, struct drc_entry *e)
{
	if (e->older) e->older->newer = e->newer; else s->oldest = e->newer;
	if (e->newer) e->newer->older = e->older; else s->newest = e->older;
	e->older = e->newer = NULL;
	s->answered--;
	s->answered_bytes -= entry_bytes(e);
}

static void lru_append(struct drc_shard *s, struct drc_entry *e)
{
	e->older = s->newest;
	e->newer = NULL;
	if (s->newest) s->newest->newer = e; else s->oldest = e;
	s->newest = e;
	s->answered++;
	s->answered_bytes += entry_bytes(e);
}

static void entry_remove(struct drc_shard *s, struct drc_entry *e)
{
	struct drc_entry **pp = &s->buckets[e->hash & s->mask];
	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	if (e->done)
		lru_unlink(s, e);
	s->entries--;
	s->bytes -= entry_bytes(e);
	free(e->reply);
	free(e);
}

/* Expired entries go; then, to keep an answer of adding bytes (0: none), the oldest answered
 * ones while the answers are at a bound. Calls still running do not count: they are bounded by
 * the requests in flight, and cannot be pushed out (counting them would empty the answered list
 * whenever many calls run at once). */
static void shard_trim(struct drc_shard *s, size_t adding)
{
	uint64_t now = now_ns();
	while (s->oldest && (now - s->oldest->when_ns > DRC_EXPIRE_NS ||
			     (adding && (s->answered >= s->max_entries ||
					 s->answered_bytes + adding > s->max_bytes))))
		entry_remove(s, s->oldest);
}

static struct drc_entry *shard_find(struct drc_shard *s, const struct drc_id *id, uint64_t hash)
{
	for (struct drc_entry *e = s->buckets[hash & s->mask]; e; e = e->hnext)
		if (e->hash == hash && memcmp(&e->id, id, sizeof *id) == 0)
			return e;
	return NULL;
}

static enum drc_verdict shard_hit(struct drc *d, struct drc_shard *s, struct drc_entry *e,
				  uint8_t **reply, size_t *len)
{
	if (!e->done) {
		atomic_fetch_add_explicit(&d->inprog_drops, 1, memory_order_relaxed);
		return DRC_INPROG;
	}
	uint8_t *copy = malloc(e->len);
	if (!copy)
		return DRC_INPROG;    /* no memory to answer: drop it, the client will ask again */
	memcpy(copy, e->reply, e->len);
	*reply = copy;
	*len = e->len;
	lru_unlink(s, e);
	lru_append(s, e);
	atomic_fetch_add_explicit(&d->hits, 1, memory_order_relaxed);
	return DRC_HIT;
}

enum drc_verdict drc_lookup(struct drc *d, const struct drc_key *k, struct drc_entry **slot,
			    uint8_t **reply, size_t *len)
{
	struct drc_id id;
	uint64_t hash;
	make_id(d, k, &id, &hash);
	struct drc_shard *s = &d->shard[SHARD_OF(hash)];
	*slot = NULL;
	pthread_mutex_lock(&s->lock);
	struct drc_entry *e = shard_find(s, &id, hash);
	if (e) {
		enum drc_verdict v = shard_hit(d, s, e, reply, len);
		pthread_mutex_unlock(&s->lock);
		return v;
	}
	shard_trim(s, 0);             /* expired ones only: a running call takes no answer's room */
	e = calloc(1, sizeof *e);
	if (e) {
		e->id = id;
		e->hash = hash;
		e->hnext = s->buckets[hash & s->mask];
		s->buckets[hash & s->mask] = e;
		s->entries++;
		s->bytes += entry_bytes(e);
	}
	pthread_mutex_unlock(&s->lock);
	*slot = e;    /* NULL without memory: the call runs uncached */
	atomic_fetch_add_explicit(&d->misses, 1, memory_order_relaxed);
	return DRC_MISS;
}

void drc_done(struct drc *d, struct drc_entry *e, const uint8_t *reply, size_t len)
{
	if (!e)
		return;
	struct drc_shard *s = &d->shard[SHARD_OF(e->hash)];
	uint8_t *copy = reply ? malloc(len) : NULL;
	if (copy)
		memcpy(copy, reply, len);
	pthread_mutex_lock(&s->lock);
	if (!copy) {
		entry_remove(s, e);    /* nothing to answer a retransmission with: let it run */
	} else {
		shard_trim(s, sizeof *e + len);
		e->reply = copy;
		e->len = len;
		e->done = true;
		e->when_ns = now_ns();
		s->bytes += len;
		lru_append(s, e);
	}
	pthread_mutex_unlock(&s->lock);
}

void drc_get_stats(struct drc *d, struct drc_stats *st)
{
	*st = (struct drc_stats){
		.hits = atomic_load_explicit(&d->hits, memory_order_relaxed),
		.inprog_drops = atomic_load_explicit(&d->inprog_drops, memory_order_relaxed),
		.misses = atomic_load_explicit(&d->misses, memory_order_relaxed),
	};
	for (int i = 0; i < DRC_SHARDS; i++) {
		struct drc_shard *s = &d->shard[i];
		pthread_mutex_lock(&s->lock);
		st->entries += s->entries;
		st->bytes += s->bytes;
		pthread_mutex_unlock(&s->lock);
	}
}
