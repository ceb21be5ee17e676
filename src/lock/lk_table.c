/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One file's lock list. Two invariants make every operation a single pass: an owner's locks
 * never overlap each other (a new one replaces what it covers), and its locks of one type
 * never touch (they would have merged). So at most one of an owner's locks covers a range
 * (the only one that may need splitting), and at most one starts inside it and ends beyond.
 * Every allocation an operation needs is made before the list is touched: after that nothing
 * can fail, which is what makes ENOMEM leave the file as it was. */
#include "lock/lk_table.h"
#include "lock/lock_seam.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void *(*lk_alloc)(size_t) = malloc;

void lk_table_set_alloc(void *(*fn)(size_t))
{
	lk_alloc = fn ? fn : malloc;
}

bool lk_range(uint64_t off, uint64_t len, uint64_t *start, uint64_t *end)
{
	*start = off;
	if (len == 0) {
		*end = UINT64_MAX;
		return true;
	}
	/* off + len - 1 > UINT64_MAX, written so that it cannot wrap itself */
	if (len - 1 > UINT64_MAX - off) {
		*end = UINT64_MAX;
		return false;
	}
	*end = off + len - 1;
	return true;
}

void lk_span(uint64_t start, uint64_t end, uint64_t *off, uint64_t *len)
{
	*off = start;
	*len = end == UINT64_MAX ? 0 : end - start + 1;
}

void lk_file_init(struct lk_file *f)
{
	f->head = NULL;
	f->count = 0;
}

void lk_file_clear(struct lk_file *f)
{
	for (struct lk_lock *l = f->head, *next; l; l = next) {
		next = l->next;
		free(l);
	}
	lk_file_init(f);
}

static bool overlaps(const struct lk_lock *l, uint64_t start, uint64_t end)
{
	return l->start <= end && start <= l->end;
}

/* Overlapping or adjacent; each +1 is taken only where it cannot wrap past UINT64_MAX. */
static bool touches(const struct lk_lock *l, uint64_t start, uint64_t end)
{
	return overlaps(l, start, end) || (l->end != UINT64_MAX && l->end + 1 == start) ||
	       (end != UINT64_MAX && end + 1 == l->start);
}

static struct lk_lock *lock_new(struct lk_owner o, const void *oh, uint32_t oh_len,
				uint64_t start, uint64_t end, bool excl)
{
	struct lk_lock *l = lk_alloc(sizeof *l + oh_len);
	if (!l)
		return NULL;
	l->next = NULL;
	l->owner = o;
	l->start = start;
	l->end = end;
	l->excl = excl;
	l->oh = l->oh_buf;
	l->oh_len = oh_len;
	if (oh_len)
		memcpy(l->oh_buf, oh, oh_len);
	return l;
}

/* The part of l after end, as a lock of its own (l ends after end). */
static struct lk_lock *tail_of(const struct lk_lock *l, uint64_t end)
{
	return lock_new(l->owner, l->oh, l->oh_len, end + 1, l->end, l->excl);
}

static void insert(struct lk_file *f, struct lk_lock *l)
{
	struct lk_lock **pp = &f->head;
	while (*pp && (*pp)->start <= l->start)
		pp = &(*pp)->next;
	l->next = *pp;
	*pp = l;
	f->count++;
}

static void unlink_free(struct lk_file *f, struct lk_lock **pp)
{
	struct lk_lock *l = *pp;
	*pp = l->next;
	free(l);
	f->count--;
}

/* The owner's lock that covers all of [start, end], if any (there is at most one). */
static const struct lk_lock *find_cover(const struct lk_file *f, struct lk_owner o,
					uint64_t start, uint64_t end)
{
	for (const struct lk_lock *l = f->head; l && l->start <= start; l = l->next)
		if (lk_owner_eq(l->owner, o) && l->end >= end)
			return l;
	return NULL;
}

static bool straddles(const struct lk_lock *l, uint64_t start, uint64_t end)
{
	return l->start < start && l->end > end;
}

static bool same_oh(const struct lk_lock *l, const void *oh, uint32_t oh_len)
{
	return l->oh_len == oh_len && (oh_len == 0 || memcmp(l->oh, oh, oh_len) == 0);
}

/* Take o's coverage of [start, end] away. spare is the tail of the lock that straddles the
 * range (NULL when none does): the caller allocated it, so nothing here can fail. */
static void carve(struct lk_file *f, struct lk_owner o, uint64_t start, uint64_t end,
		  struct lk_lock *spare)
{
	struct lk_lock *moved = NULL;
	struct lk_lock **pp = &f->head;
	while (*pp && (*pp)->start <= end) {
		struct lk_lock *l = *pp;
		if (!lk_owner_eq(l->owner, o) || l->end < start) {
			pp = &l->next;
		} else if (l->start >= start && l->end <= end) {
			unlink_free(f, pp);
		} else if (l->start < start) {
			l->end = start - 1;        /* a straddler's tail is spare */
			pp = &l->next;
		} else {
			/* Its head goes: it now starts later, past locks of others maybe, so it is
			 * taken out and put back in order (after the walk, not to meet it again). */
			*pp = l->next;
			f->count--;
			l->start = end + 1;
			moved = l;
		}
	}
	if (moved)
		insert(f, moved);
	if (spare)
		insert(f, spare);
}

/* Fold o's locks of n's type that overlap or touch [start, end] into n (not on the list). */
static void merge(struct lk_file *f, struct lk_lock *n, uint64_t start, uint64_t end)
{
	struct lk_lock **pp = &f->head;
	while (*pp) {
		struct lk_lock *l = *pp;
		if (lk_owner_eq(l->owner, n->owner) && l->excl == n->excl && touches(l, start, end)) {
			n->start = l->start < n->start ? l->start : n->start;
			n->end = l->end > n->end ? l->end : n->end;
			unlink_free(f, pp);
		} else {
			pp = &l->next;
		}
	}
}

const struct lk_lock *lk_conflict(const struct lk_file *f, struct lk_owner o, uint64_t start,
				  uint64_t end, bool excl)
{
	for (const struct lk_lock *l = f->head; l && l->start <= end; l = l->next)
		if (!lk_owner_eq(l->owner, o) && l->end >= start && (excl || l->excl))
			return l;
	return NULL;
}

int lk_add(struct lk_file *f, struct lk_owner o, const void *oh, uint32_t oh_len,
	   uint64_t start, uint64_t end, bool excl, int *delta)
{
	if (delta)
		*delta = 0;
	if (start > end || oh_len > LK_OH_MAX || (oh_len && !oh))
		return -EINVAL;
	/* Already held as asked (a retransmitted LOCK, typically): nothing to allocate. */
	const struct lk_lock *cover = find_cover(f, o, start, end);
	if (cover && cover->excl == excl && same_oh(cover, oh, oh_len))
		return 0;
	struct lk_lock *n = lock_new(o, oh, oh_len, start, end, excl), *spare = NULL;
	if (!n)
		return -ENOMEM;
	/* A cover of the same type merges into n; one of the other type is split around it. */
	if (cover && cover->excl != excl && straddles(cover, start, end) &&
	    !(spare = tail_of(cover, end))) {
		free(n);
		return -ENOMEM;
	}
	size_t before = f->count;
	merge(f, n, start, end);
	carve(f, o, start, end, spare);
	insert(f, n);
	if (delta)
		*delta = (int)((long long)f->count - (long long)before);
	return 0;
}

int lk_remove(struct lk_file *f, struct lk_owner o, uint64_t start, uint64_t end)
{
	if (start > end)
		return -EINVAL;
	const struct lk_lock *cover = find_cover(f, o, start, end);
	struct lk_lock *spare = NULL;
	if (cover && straddles(cover, start, end) && !(spare = tail_of(cover, end)))
		return -ENOMEM;
	carve(f, o, start, end, spare);
	return 0;
}

/* Drop the locks of host, of every svid when svid is NULL. */
static size_t drop(struct lk_file *f, uint64_t host, const int32_t *svid)
{
	size_t n = 0;
	struct lk_lock **pp = &f->head;
	while (*pp) {
		const struct lk_lock *l = *pp;
		if (l->owner.host == host && (!svid || l->owner.svid == *svid)) {
			unlink_free(f, pp);
			n++;
		} else {
			pp = &(*pp)->next;
		}
	}
	return n;
}

size_t lk_remove_owner(struct lk_file *f, struct lk_owner o)
{
	return drop(f, o.host, &o.svid);
}

size_t lk_remove_host(struct lk_file *f, uint64_t host)
{
	return drop(f, host, NULL);
}

bool lk_owner_holds(const struct lk_file *f, struct lk_owner o)
{
	LK_FOREACH(l, f)
		if (lk_owner_eq(l->owner, o))
			return true;
	return false;
}

size_t lk_host_count(const struct lk_file *f, uint64_t host)
{
	size_t n = 0;
	LK_FOREACH(l, f)
		n += l->owner.host == host;
	return n;
}
