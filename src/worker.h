/* Handler threads and the queue that feeds them. The network loop (server.c) turns bytes into
 * records and records into jobs; a worker takes a job, runs it through dispatch (decode, handle,
 * encode) and hands the reply back to the job's owner. Replies of one connection may therefore
 * come back out of order, which RPC allows (the xid matches them), and a slow request (a
 * fsync, a device read) holds up only its own worker, as knfsd's threads. */
#ifndef NFSD_UC_WORKER_H
#define NFSD_UC_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nfsd.h"

struct reply;
struct job;
typedef void (*job_done_fn)(struct job *j);

struct job {
	struct job *next;
	uint8_t *mem;                 /* owns the record bytes; freed with the job */
	const uint8_t *rec;
	size_t len;
	struct sockaddr_storage peer;
	struct reply *reply;          /* set by the worker, NULL when no reply is owed */
	job_done_fn done;             /* called on the worker's thread when the reply is ready */
	void *owner;                  /* the connection, for done() */
};

/* Start n workers on srv->jobs (created here). 0 or -errno; on failure nothing is left running. */
int workers_start(struct server *srv, struct worker **out, unsigned n);
/* Queue a job; some worker will run it and call job->done. */
void jobs_push(struct server *srv, struct job *j);
/* After the network loops have stopped: let the workers finish the queue, then join and free
 * them (closing their handle caches writes what the boundary cache still holds). */
void workers_stop(struct server *srv, struct worker *w, unsigned n);
void job_free(struct job *j);
/* The inode (dev, ino) lost its last link through this worker (which forgot it already): every
 * other worker closes its handles of it at its next turn. */
void workers_forget(struct worker *self, dev_t dev, uint64_t ino);
/* Make every worker close its handles of deleted files (a REMOVE went through one worker; a WRITE
 * found the disk full). With wait, return once they all did (or after 100 ms): only the caller's
 * own cache is swept by the caller, as the caches are per thread. */
void workers_sweep_all(struct worker *self, bool wait);

#endif
