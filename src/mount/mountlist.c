/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MOUNT's list (mountlist.h): a chained hash table of the entries, and a list of them in the
 * order of their last MNT, whose tail goes first when the list is full. */
#include "mount/mountlist.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

struct mount_ent {
	struct mount_ent *hnext;            /* its bucket's */
	struct mount_ent *newer, *older;    /* by last MNT */
	uint64_t hash;
	char host[INET6_ADDRSTRLEN];
	char *dir;
};

struct mount_list {
	pthread_mutex_t mu;
	unsigned char key[crypto_shorthash_KEYBYTES];
	struct mount_ent **buckets;
	size_t mask;                        /* buckets - 1, a power of two minus one */
	struct mount_ent *newest, *oldest;
	size_t n, max;
	uint64_t dropped;
};

struct mount_list *mount_list_new(unsigned max)
{
	if (sodium_init() < 0)
		return NULL;
	struct mount_list *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->max = max ? max : 1;
	size_t nb = 16;
	while (nb < l->max)
		nb <<= 1;
	l->buckets = calloc(nb, sizeof *l->buckets);
	if (!l->buckets) {
		free(l);
		return NULL;
	}
	l->mask = nb - 1;
	randombytes_buf(l->key, sizeof l->key);
	pthread_mutex_init(&l->mu, NULL);
	return l;
}

void mount_list_free(struct mount_list *l)
{
	if (!l)
		return;
	for (struct mount_ent *e = l->newest, *next; e; e = next) {
		next = e->older;
		free(e->dir);
		free(e);
	}
	pthread_mutex_destroy(&l->mu);
	free(l->buckets);
	free(l);
}

/* Keyed, so that a client cannot pick host/path pairs that all land in one bucket. */
static uint64_t ent_hash(const struct mount_list *l, const char *host, const char *dir)
{
	unsigned char buf[INET6_ADDRSTRLEN + crypto_shorthash_BYTES];
	size_t hn = strnlen(host, INET6_ADDRSTRLEN - 1);
	memcpy(buf, host, hn);
	crypto_shorthash(buf + hn, (const unsigned char *)dir, strlen(dir), l->key);
	unsigned char out[crypto_shorthash_BYTES];
	crypto_shorthash(out, buf, hn + crypto_shorthash_BYTES, l->key);
	uint64_t h;
	memcpy(&h, out, sizeof h);
	return h;
}

static struct mount_ent **slot_of(struct mount_list *l, uint64_t hash, const char *host,
				  const char *dir)
{
	struct mount_ent **pp = &l->buckets[hash & l->mask];
	while (*pp && ((*pp)->hash != hash || strcmp((*pp)->host, host) != 0 ||
		       strcmp((*pp)->dir, dir) != 0))
		pp = &(*pp)->hnext;
	return pp;
}

static void order_unlink(struct mount_list *l, struct mount_ent *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		l->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		l->oldest = e->newer;
	e->newer = e->older = NULL;
}

static void order_push(struct mount_list *l, struct mount_ent *e)
{
	e->older = l->newest;
	if (l->newest)
		l->newest->newer = e;
	else
		l->oldest = e;
	l->newest = e;
}

/* Take e out of the table and the order, and free it. */
static void ent_drop(struct mount_list *l, struct mount_ent *e)
{
	struct mount_ent **pp = slot_of(l, e->hash, e->host, e->dir);
	*pp = e->hnext;
	order_unlink(l, e);
	l->n--;
	free(e->dir);
	free(e);
}

int mount_list_add(struct mount_list *l, const char *host, const char *dir)
{
	uint64_t h = ent_hash(l, host, dir);
	int rc = 0;
	pthread_mutex_lock(&l->mu);
	struct mount_ent **pp = slot_of(l, h, host, dir);
	if (*pp) {
		order_unlink(l, *pp);
		order_push(l, *pp);
		goto out;
	}
	struct mount_ent *e = calloc(1, sizeof *e);
	if (!e || !(e->dir = strdup(dir))) {
		free(e);
		rc = -1;
		goto out;
	}
	e->hash = h;
	snprintf(e->host, sizeof e->host, "%s", host);
	if (l->n == l->max) {
		ent_drop(l, l->oldest);
		l->dropped++;
		rc = 1;
		pp = slot_of(l, h, host, dir);   /* the dropped entry may have been before it */
	}
	*pp = e;
	order_push(l, e);
	l->n++;
out:
	pthread_mutex_unlock(&l->mu);
	return rc;
}

void mount_list_remove(struct mount_list *l, const char *host, const char *dir)
{
	pthread_mutex_lock(&l->mu);
	if (dir) {
		struct mount_ent *e = *slot_of(l, ent_hash(l, host, dir), host, dir);
		if (e)
			ent_drop(l, e);
	} else {
		/* UMNTALL: rare, and the list is bounded */
		for (struct mount_ent *e = l->newest, *next; e; e = next) {
			next = e->older;
			if (strcmp(e->host, host) == 0)
				ent_drop(l, e);
		}
	}
	pthread_mutex_unlock(&l->mu);
}

void mount_list_walk(struct mount_list *l, bool (*fn)(void *ctx, const char *host, const char *dir),
		     void *ctx)
{
	pthread_mutex_lock(&l->mu);
	for (struct mount_ent *e = l->newest; e && fn(ctx, e->host, e->dir); e = e->older)
		;
	pthread_mutex_unlock(&l->mu);
}

void mount_list_stats(struct mount_list *l, struct mount_list_stats *out)
{
	pthread_mutex_lock(&l->mu);
	*out = (struct mount_list_stats){.entries = l->n, .dropped = l->dropped};
	pthread_mutex_unlock(&l->mu);
}
