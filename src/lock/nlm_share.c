/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SHARE and UNSHARE: DOS-style share reservations (a whole-file access mode and the modes it
 * denies others), as PC clients use them. Kept in the table only, as knfsd does: the kernel has
 * no share reservations for local processes to see. */
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "lock/nlm_int.h"

struct nlm_resv {
	struct nlm_resv *next;
	uint64_t host;
	fsh_mode mode;
	fsh_access access;
	uint32_t oh_len;
	uint8_t oh[];
};

void nlm_shares_clear(struct nlm_file *f)
{
	for (struct nlm_resv *s = f->shares, *next; s; s = next) {
		next = s->next;
		free(s);
	}
	f->shares = NULL;
}

void nlm_shares_drop_host(struct nlm_file *f, uint64_t host)
{
	for (struct nlm_resv **pp = &f->shares; *pp;) {
		struct nlm_resv *s = *pp;
		if (s->host == host) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

static bool same_owner(const struct nlm_resv *s, uint64_t host, const struct nlm_lockreq *r)
{
	/* an empty owner handle decodes as NULL: no memcmp of it */
	return s->host == host && s->oh_len == r->oh_len &&
	       (r->oh_len == 0 || memcmp(s->oh, r->oh, r->oh_len) == 0);
}

/* The access bits (R = 1, W = 2) and the deny bits line up: fsa_R against fsm_DR, and so on. */
static bool share_conflict(const struct nlm_file *f, uint64_t host, const struct nlm_lockreq *r,
			   fsh_mode mode, fsh_access access)
{
	for (const struct nlm_resv *s = f->shares; s; s = s->next)
		if (!same_owner(s, host, r) && (((unsigned)access & (unsigned)s->mode) ||
						((unsigned)mode & (unsigned)s->access)))
			return true;
	return false;
}

/* Take or change the owner's reservation of f (no conflict: the caller checked). */
static enum nlm4_stats share_take(struct nlm *m, struct nlm_file *f, struct nlm_host *h,
				  const struct nlm_lockreq *r, fsh_mode mode, fsh_access access)
{
	struct nlm_resv *s = f->shares;
	while (s && !same_owner(s, h->id, r))
		s = s->next;
	if (!s) {
		/* a reservation counts against the client's lock bound, as a lock would */
		if (h->nshares + h->nlocks >= m->cfg->max_locks_per_client ||
		    !(s = calloc(1, sizeof *s + r->oh_len)))
			return NLM4_DENIED_NOLOCKS;
		s->host = h->id;
		s->oh_len = r->oh_len;
		if (r->oh_len)
			memcpy(s->oh, r->oh, r->oh_len);
		s->next = f->shares;
		f->shares = s;
		h->nshares++;
	}
	s->mode = mode;
	s->access = access;
	return NLM4_GRANTED;
}

enum nlm4_stats nlm_req_share(struct nlm *m, const struct nlm_lockreq *r, fsh_mode mode,
			      fsh_access access, bool reclaim)
{
	enum nlm4_stats st = NLM4_DENIED_NOLOCKS;
	pthread_mutex_lock(&m->mu);
	struct nlm_host *h = nlm_host_get(m, &r->cl.addr, r->cl.name);
	struct nlm_file *f = h ? nlm_file_get(m, r->dev, r->ino) : NULL;
	if (f) {
		st = nlm_grace_verdict(m, h, reclaim);
		if (st == NLM4_GRANTED)
			st = share_conflict(f, h->id, r, mode, access)
			     ? NLM4_DENIED : share_take(m, f, h, r, mode, access);
		nlm_file_put(m, f);
	}
	pthread_mutex_unlock(&m->mu);
	return st;
}

enum nlm4_stats nlm_req_unshare(struct nlm *m, const struct nlm_lockreq *r)
{
	pthread_mutex_lock(&m->mu);
	struct nlm_host *h = nlm_host_get(m, &r->cl.addr, r->cl.name);
	struct nlm_file *f = h ? nlm_file_find(m, r->dev, r->ino) : NULL;
	for (struct nlm_resv **pp = f ? &f->shares : NULL; pp && *pp; pp = &(*pp)->next) {
		if (same_owner(*pp, h->id, r)) {
			struct nlm_resv *s = *pp;
			*pp = s->next;
			free(s);
			h->nshares--;
			break;
		}
	}
	if (f)
		nlm_file_put(m, f);
	pthread_mutex_unlock(&m->mu);
	return NLM4_GRANTED;
}
