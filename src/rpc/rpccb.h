/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The lock manager's calls from server to client: NLM GRANTED callbacks, NLM _RES replies (which
 * NLM sends as calls of their own) and NSM SM_NOTIFY. One engine thread owns every call in
 * flight and every timer; any thread hands it work through rpccb_call() and rpccb_after(), which
 * only queue and return. No thread ever waits for a reply: each call is a small state machine
 * (GETPORT sent -> CALL sent -> done) driven by its socket's readiness and by retransmission
 * deadlines, so a client that is slow or gone holds up nothing but its own call.
 *
 * Transport, as knfsd's lockd and statd do it: ONC RPC over UDP, or over TCP (knfsd calls a
 * client back over the transport the client used, and a client behind a firewall may be
 * reachable over TCP only); credential AUTH_SYS (uid 0, gid 0, this host's name, no groups),
 * verifier AUTH_NONE. Each call has its own socket, connect()ed to the peer and bound to the
 * target's source address, on a reserved port (600..1023) when the process may bind one:
 * Linux's lockd checks a GRANTED callback's source address against the server it locked with.
 * The port comes from the client's portmapper: PMAP v2 GETPORT for an IPv4 client, RPCBIND v4
 * GETADDR ("udp6" or "tcp6") for an IPv6 one (PMAP v2 is IPv4's protocol; rpcbind refuses it
 * over IPv6). Both answers end the same way; "GETPORT" below means either.
 *
 * UDP: each stage's datagram is retransmitted with its xid at 500 ms, 1 s, 2 s, 4 s, 4 s, ...
 * until timeout_ms. TCP: GETPORT still goes over UDP to the portmapper (pmap_port is a UDP
 * port), asking for the program's TCP port; then a connection to host:port from the
 * source address, the call as one RPC record (one last fragment), the reply read as one record
 * (its fragments reassembled; at most RPCCB_TCP_REPLY_MAX bytes) and the socket closed. Nothing
 * is retransmitted on a live connection. A connection that fails (refused, reset, or closed
 * before the reply) is made anew after the same backoff (500 ms after the failure, then 1 s,
 * 2 s, 4 s, 4 s, ...) and the call sent again with its xid, until timeout_ms. A reserved port
 * that a closed connection still holds (TIME_WAIT) is skipped, like one in use.
 *
 * Status passed to done (and what each ending counts as in struct rpccb_counters):
 *   0                 accepted, SUCCESS: res/res_len are the procedure's results  (ok)
 *   -ETIMEDOUT        no reply within timeout_ms                                  (timeouts)
 *   -ECONNREFUSED     no reply within timeout_ms and the peer sent ICMP port
 *                     unreachable at least once in the last stage (UDP), or the
 *                     last TCP connection to fail was refused                     (timeouts)
 *   -ECONNRESET       TCP: no reply within timeout_ms and the last connection to
 *                     fail was reset, or closed by the peer before the reply      (timeouts)
 *   -ENOENT           the portmapper answered port 0: program/version not
 *                     registered for the call's transport                         (errors)
 *   -EPFNOSUPPORT     accepted, PROG_UNAVAIL                                      (errors)
 *   -EPROTONOSUPPORT  accepted, PROG_MISMATCH                                     (errors)
 *   -EOPNOTSUPP       accepted, PROC_UNAVAIL                                      (errors)
 *   -EIO              accepted, GARBAGE_ARGS                                      (errors)
 *   -EREMOTEIO        accepted, SYSTEM_ERR                                        (errors)
 *   -EACCES           denied, AUTH_ERROR                                          (errors)
 *   -EPROTO           denied, RPC_MISMATCH                                        (errors)
 *   -EBADMSG          a reply with the call's xid that does not decode or has
 *                     an unknown status, a GETPORT answer that is no port, or a
 *                     TCP reply record longer than RPCCB_TCP_REPLY_MAX            (errors)
 *   -ECANCELED        rpccb_stop() ran before the call ended                      (cancelled)
 *   other -errno      the call's socket could not be set up (socket, bind,
 *                     connect: -EMFILE, -ENETUNREACH, ...), or no memory for a
 *                     TCP reply (-ENOMEM)                                         (errors)
 * TCP connection failures other than refused and reset (-EHOSTUNREACH, ...) are retried like
 * them and end as -ETIMEDOUT, as an ICMP host unreachable does over UDP.
 * The RPC-level errors are the same whichever stage (GETPORT or the call) got them.
 * PROG_UNAVAIL, PROG_MISMATCH, PROC_UNAVAIL and GARBAGE_ARGS map as the Linux client maps them
 * (net/sunrpc/clnt.c), which gives SYSTEM_ERR -EIO too: -EREMOTEIO here keeps the two apart. Once
 * every call has ended, started == ok + timeouts + errors + cancelled. */
#ifndef NFSD_UC_LOCK_RPCCB_H
#define NFSD_UC_LOCK_RPCCB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Largest procedure argument accepted: the call must fit one UDP datagram. NLM's largest
 * arguments (cookie, caller name, handle, owner: four netobjs) are well below. */
#define RPCCB_ARGS_MAX 32768u
/* Largest TCP reply record (header and results, all fragments) accepted: as large as a UDP
 * reply can be. */
#define RPCCB_TCP_REPLY_MAX 65536u
#define RPCCB_TIMEOUT_DEFAULT_MS 30000u

struct rpccb;

struct rpccb_target {
	struct sockaddr_storage host;  /* the client's address (AF_INET or AF_INET6), port ignored */
	struct sockaddr_storage src;   /* local address to send from (AF_UNSPEC: any), port ignored */
	uint32_t prog, vers, proc;
	uint16_t port;                 /* the program's port for proto; 0: ask the portmapper */
	uint16_t pmap_port;            /* where the portmapper listens (UDP); 0: 111 */
	unsigned timeout_ms;           /* for the whole call, GETPORT included; 0: the default */
	int proto;                     /* IPPROTO_UDP (0 means UDP too) or IPPROTO_TCP */
};

struct rpccb_counters {
	uint64_t started, ok, timeouts, errors, cancelled;
};

/* The done callback of a call: runs on the engine thread, exactly once per call rpccb_call()
 * accepted. res is valid only during the callback. It may call rpccb_call() and rpccb_after()
 * (they queue), but not rpccb_stop(). */
typedef void rpccb_done_fn(void *ctx, int status, const uint8_t *res, size_t res_len);

/* Start the engine thread. NULL (errno set) when its thread, epoll, eventfd or timerfd cannot
 * be had. */
struct rpccb *rpccb_start(void);

/* Stop the engine: every call not yet ended gets done(-ECANCELED) (on the engine thread),
 * pending timers are dropped without running, then the thread is joined and everything freed.
 * Calls and timers queued concurrently are either cancelled so or refused (-ESHUTDOWN). Not
 * from the engine thread itself (a done or timer callback). */
void rpccb_stop(struct rpccb *e);

/* Send the call prog/vers/proc with args (the procedure's XDR-encoded arguments, copied: a
 * multiple of 4 bytes, at most RPCCB_ARGS_MAX) to t->host; t is copied too. Thread-safe, never
 * blocks on the network. 0: done will be called once; -EINVAL (bad arguments), -EAFNOSUPPORT
 * (family), -EPROTONOSUPPORT (proto neither UDP nor TCP), -EMSGSIZE, -ENOMEM, -ESHUTDOWN
 * (engine stopping): done will not be called. */
int rpccb_call(struct rpccb *e, const struct rpccb_target *t, const void *args, size_t args_len,
	       rpccb_done_fn *done, void *ctx);

/* Run fn(ctx) once on the engine thread, no earlier than ms milliseconds from now. A periodic
 * timer is fn calling rpccb_after() again. Thread-safe. 0, -EINVAL, -ENOMEM or -ESHUTDOWN. */
int rpccb_after(struct rpccb *e, unsigned ms, void (*fn)(void *ctx), void *ctx);

/* A snapshot of the counters (each read atomically; they may be mid-update relative to each
 * other while calls run). */
void rpccb_counters(const struct rpccb *e, struct rpccb_counters *out);

#endif
