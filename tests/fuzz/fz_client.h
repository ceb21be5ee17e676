/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fuzzed clients' host (fz_client.c): sockets on port 111 of each fuzzed client's address,
 * UDP and TCP, play the client's portmapper, lockd and statd for the lock manager's callbacks.
 * A GRANTED callback is answered as its lock's svid says (fz_marks.h: FZ_GRANTED_*), or held
 * unanswered; the _RES calls and SM_NOTIFY get an empty SUCCESS. */
#ifndef NFSD_UC_FZ_CLIENT_H
#define NFSD_UC_FZ_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

struct rpccb;

/* Its sockets and thread, up from now on (exits the process when they cannot be had); and
 * down, its connections closed. */
void fz_client_start(void);
void fz_client_stop(void);

/* Until every callback in flight has been answered and its answer taken by the lock manager,
 * but those the client host holds (at most 100 ms: a lost datagram waits for its
 * retransmission): after each record, so the next one finds the GRANTED callbacks its
 * predecessors caused settled (or held, their cookie known). */
void fz_client_settle(struct rpccb *cb);
/* The client host answers what it held (so no call waits out its 30 s), and the lock manager
 * takes the answers. */
void fz_client_release(struct rpccb *cb);

/* The GRANTED callbacks it holds unanswered now. */
uint64_t fz_client_held(void);
/* The cookie of the last GRANTED callback it received, when it was 8 bytes long: true and
 * copied to cookie; and forgotten. */
bool fz_client_cookie(uint8_t cookie[8]);
void fz_client_forget_cookie(void);

#endif
