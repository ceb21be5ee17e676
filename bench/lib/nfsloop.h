/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsloop: the asynchronous loop of the load generators that keep many RPCs in flight
 * (nfs-workload, nfs-stripes): n connections, each with up to qd RPCs in flight in its slots,
 * fed by a step (next() fills a free slot, send() queues its RPC) until every slot is free, no
 * remainder of a short WRITE or READ is left, and the tool's more() says the step has nothing
 * more to issue. A tool embeds struct nl_loop first in its own state and finds that state from
 * a slot's connection (c->l). */
#ifndef NFSBENCH_NFSLOOP_H
#define NFSBENCH_NFSLOOP_H

#include "nfsclient.h"

struct nl_loop;
struct nl_conn;

struct nl_slot {
	struct nl_conn *c;
	bool busy;
	uint64_t idx;           /* what the tool numbers its RPCs by (nfs-workload's meta: a file) */
	struct piece p;         /* I/O: the range */
	uint8_t *buf;           /* WRITE data, kept until the reply */
};

struct nl_conn {
	struct nl_loop *l;
	unsigned idx;           /* its index in l->c */
	struct rpc_context *rpc;
	struct nl_slot *slots;
	unsigned inflight;
	struct pieces todo;     /* remainders of short WRITEs and READs */
};

struct nl_step {
	const char *name;
	bool (*next)(struct nl_conn *c, struct nl_slot *s);
	int (*send)(struct nl_slot *s);
};

struct nl_loop {
	unsigned n, qd;
	struct nl_conn *c;
	struct rpc_context **rpcs;      /* each connection's, as nb_service() takes them */
	struct pollfd *pfd;
	bool (*more)(struct nl_loop *l);   /* the step has more to issue than the remainders */
	long long last_progress;
	uint64_t sent;                  /* RPCs queued, every step */
	int failed;                     /* the first failure's exit status (nb_fail_first) */
};

/* n connections with qd slots each, and a WRITE buffer of buf_size bytes in each slot when
 * buf_size is not 0; their rpc contexts are the tool's to make (c[i].rpc and rpcs[i], the same).
 * 0, or -1 out of memory (nl_close() frees what was made). */
int nl_open(struct nl_loop *l, unsigned n, unsigned qd, size_t buf_size);
/* Everything nl_open() made, and the rpc contexts. */
void nl_close(struct nl_loop *l);
/* Run st to its end: 0, or the failure's exit status (l->failed). */
int nl_run(struct nl_loop *l, const struct nl_step *st);
/* Every reply callback's first call: the slot freed; false (the failure recorded) when the RPC
 * itself failed. */
bool nl_reply_begin(struct nl_slot *s, int status, void *data, const char *what);
/* A remainder of c's into s, for next(): false when c has none. */
bool nl_take_todo(struct nl_conn *c, struct nl_slot *s);

#endif
