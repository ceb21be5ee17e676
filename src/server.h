/* Worker threads: listeners, connections, RPC record reassembly and reply sending. */
#ifndef NFSD_UC_SERVER_H
#define NFSD_UC_SERVER_H

#include "nfsd.h"

/* Create the worker's ring and its listening sockets (SO_REUSEPORT: every worker listens on the
 * same ports and the kernel spreads connections). 0 or -errno. */
int worker_init(struct worker *w, struct server *srv, unsigned id);
/* The worker's loop: returns when stopped and every reply has been sent. */
void *worker_main(void *arg);
/* Ask a running worker to stop accepting, finish what it has, and return. */
void worker_stop(struct worker *w);
void worker_fini(struct worker *w);

#endif
