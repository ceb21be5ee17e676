/* Acting as the caller: the worker thread's fsuid, fsgid and supplementary groups are switched per
 * request, so the kernel checks every access (mode bits, ACLs) as it would for the user. Thread-local
 * by construction: setfsuid/setfsgid are per thread, and setgroups goes through the raw syscall because
 * glibc's wrapper would apply it to every thread of the process. */
#ifndef NFSD_UC_CRED_H
#define NFSD_UC_CRED_H

#include "nfsd.h"

/* Switch to cred (no-op when already applied). Returns 0 or -errno. */
int cred_apply(struct worker *w, const struct rpc_cred *cred);
/* Back to the server's own identity (root), e.g. to open a handle. */
int cred_root(struct worker *w);
/* access(2) semantics for the current fs credentials on an O_PATH fd: R_OK, W_OK, X_OK. 0 or -errno. */
int cred_access(int fd, int mode);

#endif
