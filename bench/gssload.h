/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gss-load's parts (bench/gssload.c: options, set-up, the phases, COMMIT; gssload_io.c: the
 * calls each writer sends and the replies it checks, on an event loop per client thread). */
#ifndef NFSBENCH_GSSLOAD_H
#define NFSBENCH_GSSLOAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/gssconn.h"
#include "lib/nfsclient.h"

enum workload { WL_INTERLEAVE, WL_SEQ };
enum phases { PH_BOTH, PH_WRITE, PH_READ };
enum kind { K_WRITE = 1, K_READ };

struct opts {
	struct nb_args srv;       /* HOST NFS_PORT MOUNT_PORT EXPORT */
	const char *file, *principal, *password, *keytab, *target;
	unsigned writers, qd, threads, passes;
	uint64_t record, total, records, seed;
	uint32_t service, rsize;
	bool seed_set, file_sync;
	bool own_crypto;          /* --crypto openssl: the tokens by rpc/gss_krb5.h, not MIT's */
	enum workload wl;
	enum phases phases;
};

/* Per record (interleave) or 1 MiB piece (seq): the verifier its UNSTABLE WRITE got. */
enum { U_VERF = 1, U_MIXED = 2 };
struct unit {
	uint8_t verf[8];
	uint8_t flags;
};

struct run;

struct writer {
	struct gconn c;
	struct run *r;
	unsigned id;
	struct pieces todo;       /* resends and remainders, before anything new */
	uint64_t next_rec;        /* interleave: this writer's next record */
	uint64_t calls, bytes, short_ops;
	uint8_t *scratch;         /* the bytes a READ must return */
};

struct run {
	const struct opts *o;
	struct rn_fh fh;
	uint64_t nunits, size;
	uint32_t rsize;
	struct unit *units;
	struct writer *w;
	enum kind phase;
	atomic_uint_fast64_t next;   /* seq WRITEs: the next unit; READs: the next of all passes */
	uint64_t nchunks, nreads;
	uint64_t commits, resends;
	atomic_int failed;
	pthread_mutex_t fail_lock;
};

/* "krb5", "krb5i", "krb5p" by RG_NONE, RG_INTEGRITY, RG_PRIVACY. */
extern const char *const service_names[4];

/* Record the run's first failure with its exit status and print it; later ones are dropped. */
__attribute__((format(printf, 3, 4)))
void fail(struct run *r, int status, const char *fmt, ...);
bool failed(struct run *r);
/* The length of unit u (the last one of a seq file may be short). */
uint64_t unit_len(const struct run *r, uint64_t u);
/* Every writer's calls of r->phase, on --threads event loops, until none is left or one failed:
 * 0, or the failure's exit status. */
int run_threads(struct run *r);


#endif
