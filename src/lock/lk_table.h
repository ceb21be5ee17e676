/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The POSIX byte-range locks of one file, as the NLM server keeps them: a list sorted by start,
 * with fcntl(F_SETLK) semantics for one owner's own locks (a new lock replaces what the owner
 * held over its range, and merges with the owner's locks of the same type that overlap or
 * touch). Pure data: no I/O, no threads, no locking inside (the caller serialises), every
 * operation either succeeds or changes nothing.
 *
 * Ranges are inclusive [start, end] over the whole uint64 space: end may be UINT64_MAX, which
 * is also what NLM's len 0 ("to the end of the file, however long it gets") turns into. */
#ifndef NFSD_UC_LOCK_LK_TABLE_H
#define NFSD_UC_LOCK_LK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest owner handle kept: NLM's netobj bound (MAXNETOBJ_SZ). */
#define LK_OH_MAX 1024u

/* Who holds a lock: the client (host, an id the caller gives each client) and the process on
 * it (NLM's svid). Two owners are the same when both fields are. */
struct lk_owner {
	uint64_t host;
	int32_t svid;
};

static inline bool lk_owner_eq(struct lk_owner a, struct lk_owner b)
{
	return a.host == b.host && a.svid == b.svid;
}

struct lk_lock {
	struct lk_lock *next;          /* the file's list, by start (equal: the newer after) */
	struct lk_owner owner;
	uint64_t start, end;           /* inclusive */
	bool excl;
	uint8_t *oh;                   /* the owner handle (NLM oh), oh_len bytes: points at oh_buf */
	uint32_t oh_len;
	uint8_t oh_buf[];              /* one allocation per lock: a split needs only one malloc */
};

/* The locks of one file. count is the number of lock records, which every operation keeps:
 * a caller that tracks per-client or total counts diffs it around an operation. */
struct lk_file {
	struct lk_lock *head;
	size_t count;
};

/* NLM's (offset, len) as an inclusive range. len 0 means up to UINT64_MAX. When off + len - 1
 * overflows, end is clamped to UINT64_MAX (what the lock would cover on a file that could be
 * that long) and the result is false, so a caller that prefers to refuse such a range can;
 * true otherwise. */
bool lk_range(uint64_t off, uint64_t len, uint64_t *start, uint64_t *end);
/* The inverse, for replies (TEST's holder): end UINT64_MAX gives len 0. */
void lk_span(uint64_t start, uint64_t end, uint64_t *off, uint64_t *len);

void lk_file_init(struct lk_file *f);
/* Frees every lock; the file is empty (and initialised) afterwards. */
void lk_file_clear(struct lk_file *f);

/* The first lock, in order of start, that another owner holds over [start, end] and that
 * conflicts with a lock of type excl (one of the two is exclusive); NULL if none. An owner
 * never conflicts with itself: its new lock replaces its old ones. */
const struct lk_lock *lk_conflict(const struct lk_file *f, struct lk_owner o, uint64_t start,
				  uint64_t end, bool excl);

/* Lock [start, end] for o, who has no conflict there (the caller checked lk_conflict). The
 * range replaces o's locks over it, splitting one of the other type that straddles it (an
 * upgrade or downgrade in the middle), and merges with o's locks of the same type that overlap
 * or touch it; the merged lock takes the new oh (oh_len bytes, copied, at most LK_OH_MAX).
 * *delta (when not NULL) gets the net change of f->count: from -n (a merge of n + 1 locks)
 * to +2 (a split: the new lock and the straddler's tail). 0, -EINVAL (start > end, oh too long)
 * or -ENOMEM; on error nothing changed and *delta is 0. */
int lk_add(struct lk_file *f, struct lk_owner o, const void *oh, uint32_t oh_len,
	   uint64_t start, uint64_t end, bool excl, int *delta);

/* Unlock [start, end] for o: its locks there go, those that stick out are trimmed, one that
 * straddles the range is split in two (the one allocation: -ENOMEM then, nothing changed).
 * Unlocking what o does not hold is 0. -EINVAL when start > end. The caller diffs f->count. */
int lk_remove(struct lk_file *f, struct lk_owner o, uint64_t start, uint64_t end);

/* Drop every lock of the owner (its process went) or of the host (it rebooted, FREE_ALL);
 * the number of records dropped. */
size_t lk_remove_owner(struct lk_file *f, struct lk_owner o);
size_t lk_remove_host(struct lk_file *f, uint64_t host);

bool lk_owner_holds(const struct lk_file *f, struct lk_owner o);
size_t lk_host_count(const struct lk_file *f, uint64_t host);

/* Walking the locks in order of start (to report or re-apply them). The file must not change
 * during the walk. */
static inline const struct lk_lock *lk_first(const struct lk_file *f)
{
	return f->head;
}

static inline const struct lk_lock *lk_next(const struct lk_lock *l)
{
	return l->next;
}

#define LK_FOREACH(l, f) for (const struct lk_lock *l = lk_first(f); l; l = lk_next(l))

#endif
