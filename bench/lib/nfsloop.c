/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsloop: see nfsloop.h. */
#include "nfsloop.h"

#include <stdlib.h>

int nl_open(struct nl_loop *l, unsigned n, unsigned qd, size_t buf_size)
{
	l->n = n;
	l->qd = qd;
	l->c = calloc(n, sizeof(*l->c));
	l->rpcs = calloc(n, sizeof(*l->rpcs));
	l->pfd = calloc(n, sizeof(*l->pfd));
	if (l->c == NULL || l->rpcs == NULL || l->pfd == NULL)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		struct nl_conn *c = &l->c[i];

		c->l = l;
		c->idx = i;
		if ((c->slots = calloc(qd, sizeof(*c->slots))) == NULL)
			return -1;
		for (unsigned k = 0; k < qd; k++) {
			c->slots[k].c = c;
			if (buf_size && (c->slots[k].buf = malloc(buf_size)) == NULL)
				return -1;
		}
	}
	return 0;
}

void nl_close(struct nl_loop *l)
{
	for (unsigned i = 0; l->c != NULL && i < l->n; i++) {
		struct nl_conn *c = &l->c[i];

		if (c->rpc != NULL)
			rpc_destroy_context(c->rpc);
		for (unsigned k = 0; c->slots != NULL && k < l->qd; k++)
			free(c->slots[k].buf);
		free(c->slots);
		free(c->todo.v);
	}
	free(l->c);
	free(l->rpcs);
	free(l->pfd);
	l->c = NULL;
	l->rpcs = NULL;
	l->pfd = NULL;
}

bool nl_reply_begin(struct nl_slot *s, int status, void *data, const char *what)
{
	struct nl_loop *l = s->c->l;

	s->busy = false;
	s->c->inflight--;
	l->last_progress = nb_now_ms();
	if (status == RPC_STATUS_SUCCESS)
		return true;
	nb_fail_first(&l->failed, NB_EXIT_SERVER, "%s: %s", what,
		      status == RPC_STATUS_ERROR && data ? (const char *)data : "cancelled");
	return false;
}

bool nl_take_todo(struct nl_conn *c, struct nl_slot *s)
{
	if (c->todo.n == 0)
		return false;
	s->p = c->todo.v[--c->todo.n];
	return true;
}

static struct nl_slot *free_slot(struct nl_conn *c)
{
	for (unsigned i = 0; i < c->l->qd; i++)
		if (!c->slots[i].busy)
			return &c->slots[i];
	return NULL;
}

static void pump(struct nl_loop *l, const struct nl_step *st)
{
	for (unsigned i = 0; i < l->n && !l->failed; i++) {
		struct nl_conn *c = &l->c[i];
		struct nl_slot *s;

		while (!l->failed && (s = free_slot(c)) != NULL && st->next(c, s)) {
			if (st->send(s) != 0) {
				nb_fail_first(&l->failed, NB_EXIT_SERVER, "%s: not queued: %s",
					      st->name, rpc_get_error(c->rpc));
				return;
			}
			s->busy = true;
			c->inflight++;
			l->sent++;
		}
	}
}

static bool busy(struct nl_loop *l)
{
	for (unsigned i = 0; i < l->n; i++)
		if (l->c[i].inflight > 0 || l->c[i].todo.n > 0)
			return true;
	return l->more(l);
}

int nl_run(struct nl_loop *l, const struct nl_step *st)
{
	unsigned bad;

	l->last_progress = nb_now_ms();
	pump(l, st);
	while (!l->failed && busy(l)) {
		if (nb_service(l->rpcs, l->pfd, l->n, 100, &bad) < 0) {
			nb_fail_first(&l->failed, NB_EXIT_SERVER, "%s: connection %u lost: %s",
				      st->name, bad, rpc_get_error(l->rpcs[bad]));
			break;
		}
		if (nb_now_ms() - l->last_progress > NB_STALL_MS)
			nb_fail_first(&l->failed, NB_EXIT_SERVER, "%s: no reply for %d s", st->name,
				      NB_STALL_MS / 1000);
		pump(l, st);
	}
	return l->failed;
}
