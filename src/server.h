/* The network loop: listeners, connections, RPC record reassembly, replies. It owns every socket
 * and runs on its own thread with its own ring; requests go to the workers (worker.h). */
#ifndef NFSD_UC_SERVER_H
#define NFSD_UC_SERVER_H

#include "nfsd.h"

struct netloop;

/* Listen on the configured NFS and MOUNT ports (both serve both programs) and start the loop's
 * thread. NULL with a log line on failure. */
struct netloop *netloop_start(struct server *srv);
/* Stop accepting and reading, wait for the requests in flight to be answered and sent, close
 * every connection, join the thread and free. */
void netloop_stop(struct netloop *nl);

#endif
