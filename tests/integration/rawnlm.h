/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NLM v4, NSM and PMAP v2 calls hand-encoded over rawrpc (TCP records or UDP datagrams), and a
 * fake client host for the calls the daemon makes itself: a portmapper on ADDR:111 (UDP) that
 * answers GETPORT for the fake lockd (NLM, any version) and statd (NSM v1), both UDP sockets on
 * ADDR. A fake host binds port 111, so its programs run in a private network namespace
 * (in_netns.sh).
 *
 * The lock tests need two client hosts (the lock manager tells owners apart by client address
 * and svid): 127.0.0.1, 127.0.0.2, 127.0.0.3..., all on the loopback. The harness's exports admit
 * one address each, so rl_main() adds SHARED, an export under the tree that every 127.0.0.0/8
 * address may use read-write. */
#ifndef NFSD_UC_IT_RAWNLM_H
#define NFSD_UC_IT_RAWNLM_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "rawnfs.h"
#include "rawrpc.h"

#define RL_NLM_PROG 100021u
#define RL_NLM4_VERS 4u
#define RL_SM_PROG 100024u
#define RL_SM_VERS 1u
#define RL_PMAP_PROG 100000u
#define RL_PMAP_VERS 2u
#define RL_NFS_PROG 100003u
#define RL_MOUNT_PROG 100005u

enum { RL_NLM_NULL = 0, RL_NLM_TEST = 1, RL_NLM_LOCK = 2, RL_NLM_CANCEL = 3, RL_NLM_UNLOCK = 4,
       RL_NLM_GRANTED = 5, RL_NLM_TEST_MSG = 6, RL_NLM_LOCK_MSG = 7, RL_NLM_TEST_RES = 11,
       RL_NLM_LOCK_RES = 12, RL_NLM_FREE_ALL = 23 };
enum { RL_SM_STAT = 1, RL_SM_NOTIFY = 6 };
enum { RL_PMAP_SET = 1, RL_PMAP_UNSET = 2, RL_PMAP_GETPORT = 3, RL_PMAP_DUMP = 4 };

/* nlm4_stats */
enum { RL_GRANTED = 0, RL_DENIED = 1, RL_DENIED_NOLOCKS = 2, RL_BLOCKED = 3,
       RL_DENIED_GRACE_PERIOD = 4, RL_DEADLCK = 5, RL_ROFS = 6, RL_STALE_FH = 7, RL_FBIG = 8,
       RL_FAILED = 9 };

#define RL_SHARED "shared"        /* the directory of the extra export, under t->dir */
#define RL_OH_MAX 64

/* One lock as a client names it (nlm4_lock). */
struct rl_lock {
	const char *caller;           /* caller_name */
	struct rn_fh fh;
	const char *oh;               /* owner handle (its bytes, no NUL) */
	int32_t svid;
	uint64_t off, len;            /* len 0: to the end of the file */
};

/* The flags of rl_lock()/rl_test() calls, spelt out. */
#define EXCL true
#define SHARED false
#define BLOCK true
#define NOBLOCK false
#define RECLAIM true

static inline struct rl_lock lk(const char *caller, const char *oh, struct rn_fh fh, int32_t svid,
                                uint64_t off, uint64_t len)
{
	return (struct rl_lock){.caller = caller, .fh = fh, .oh = oh, .svid = svid, .off = off,
	                        .len = len};
}

/* TEST's holder when DENIED. */
struct rl_holder {
	bool excl;
	int32_t svid;
	uint32_t oh_len;
	uint8_t oh[RL_OH_MAX];
	uint64_t off, len;
};

/* ---- calls: a whole call (header, AUTH_SYS root, arguments) into b; the cookie is the xid's
 * four bytes, which the decoders check in the reply ---- */
/* The AUTH_SYS identity of the calls encoded from now on (0, 0: root, the default). */
void rl_set_cred(uint32_t uid, uint32_t gid);
void rl_enc_null(struct xb *b, uint32_t xid, uint32_t prog, uint32_t vers);
void rl_enc_test(struct xb *b, uint32_t xid, const struct rl_lock *l, bool excl);
void rl_enc_lock(struct xb *b, uint32_t xid, const struct rl_lock *l, bool excl, bool block,
                 bool reclaim, int32_t state);
void rl_enc_cancel(struct xb *b, uint32_t xid, const struct rl_lock *l, bool excl, bool block);
void rl_enc_unlock(struct xb *b, uint32_t xid, const struct rl_lock *l);
void rl_enc_free_all(struct xb *b, uint32_t xid, const char *name, int32_t state);
void rl_enc_sm_notify(struct xb *b, uint32_t xid, const char *mon_name, int32_t state);
void rl_enc_sm_stat(struct xb *b, uint32_t xid, const char *mon_name);
void rl_enc_pmap(struct xb *b, uint32_t xid, uint32_t proc, uint32_t prog, uint32_t vers,
                 uint32_t prot, uint32_t port);

/* Make an encoded TEST, LOCK, CANCEL or UNLOCK call its asynchronous _MSG variant (proc): the
 * same arguments; the result comes back as a _RES call to the client's lockd. */
void rl_enc_as_msg(struct xb *b, uint32_t proc);

/* ---- results: the nlm4_stats, -1 when malformed, not accepted/SUCCESS, or the cookie is not
 * want_cookie ---- */
int rl_dec_res(const struct raw_reply *r, uint32_t want_cookie);
int rl_dec_testres(const struct raw_reply *r, uint32_t want_cookie, struct rl_holder *h);
/* NLM4_GRANTED..NLM4_FAILED by name; -1 "(no reply / malformed)". */
const char *rl_stat_name(int st);
/* sm_stat_res: res_stat, *state. */
int rl_dec_sm_stat(const struct raw_reply *r, int32_t *state);

/* ---- transport ---- */

/* A UDP socket bound to src (NULL: any) and connect()ed to 127.0.0.1:port. -1 on failure. */
int rl_udp_connect(uint16_t port, const char *src);
/* Send b and receive its reply on fd, TCP (a record) or connected UDP (a datagram; sent again
 * every second until the reply comes): 0 or -1 (nothing within 5 s, or not a reply to b). */
int rl_exchange(int fd, const struct xb *b, uint8_t *buf, size_t cap, struct raw_reply *r);

/* Send b as a datagram on the unconnected UDP socket fd to dst:port and wait (5 s) for the
 * datagram answering it: 0 with *r and *from (where it came from), or -1. */
int rl_udp_call_to(int fd, const char *dst, uint16_t port, const struct xb *b, uint8_t *buf,
                   size_t cap, struct raw_reply *r, struct sockaddr_in *from);

/* One call and its reply on fd (TCP or connected UDP): the status, -1 on a transport error or
 * a malformed reply. */
int rl_null(int fd, uint32_t prog, uint32_t vers);
int rl_test(int fd, const struct rl_lock *l, bool excl, struct rl_holder *h);
int rl_lock(int fd, const struct rl_lock *l, bool excl, bool block, bool reclaim);
int rl_cancel(int fd, const struct rl_lock *l, bool excl, bool block);
int rl_unlock(int fd, const struct rl_lock *l);
/* FREE_ALL and SM_NOTIFY are void: 0 when accepted with an empty result, -1 otherwise. */
int rl_free_all(int fd, const char *name, int32_t state);
int rl_sm_notify(int fd, const char *mon_name, int32_t state);
/* SM_STAT: res_stat (and *state), -1 on error. */
int rl_sm_stat(int fd, const char *mon_name, int32_t *state);

/* PMAP v2 on fd (TCP or connected UDP to port 111). GETPORT: the port, -1 on error. SET and
 * UNSET: the boolean answer (0, 1), -1 on error. DUMP: the number of entries (at most cap are
 * stored), -1 on error. */
struct rl_pmap_entry {
	uint32_t prog, vers, prot, port;
};
int rl_pmap_getport(int fd, uint32_t prog, uint32_t vers, uint32_t prot);
int rl_pmap_set(int fd, uint32_t prog, uint32_t vers, uint32_t prot, uint32_t port);
int rl_pmap_unset(int fd, uint32_t prog, uint32_t vers);
int rl_pmap_dump(int fd, struct rl_pmap_entry *out, size_t cap);

/* ---- a fake client host ---- */

struct rl_fakehost {
	char addr[INET_ADDRSTRLEN];
	int pmap_fd, lockd_fd, statd_fd;
	uint16_t lockd_port, statd_port;
	int lockd_tcp_fd;             /* the fake lockd's TCP listener */
	uint16_t lockd_tcp_port;
	int conn_fd;                  /* the TCP connection of the last call, closed at the next wait */
	unsigned getports;            /* GETPORT calls answered */
	uint32_t gp_prog, gp_vers, gp_prot;   /* the last one's arguments */
	struct sockaddr_in gp_from;   /* and its sender */
};

/* A call that reached the fake lockd or statd. */
struct rl_incall {
	int fd;                       /* the socket it came on: its reply leaves from there */
	bool tcp;                     /* over TCP (a connection to the fake lockd), else UDP */
	struct sockaddr_in from;
	uint32_t xid, rpcvers, prog, vers, proc, cred_flavor;
	uint8_t rec[65536];
	size_t len;
	const uint8_t *args;          /* into rec */
	size_t args_len;
};

/* Bind ADDR:111 (UDP), two UDP sockets on ADDR's ephemeral ports (lockd, statd) and a TCP
 * listener (lockd: the server calls back over the transport the LOCK came on). 0, or -errno. */
int rl_fakehost_open(struct rl_fakehost *h, const char *addr);
void rl_fakehost_close(struct rl_fakehost *h);
/* Serve the portmapper (GETPORT, NULL) until a call reaches the lockd or statd: 1 (*c holds
 * it), 0 when timeout_ms passed without one, -1 on a socket error. Nothing is answered on the
 * lockd or statd sockets here: the test answers with rl_fakehost_reply. */
int rl_fakehost_wait(struct rl_fakehost *h, int timeout_ms, struct rl_incall *c);
/* Answer c: accepted, SUCCESS, then the results' body bytes (none for void). 0 or -1. */
int rl_fakehost_reply(const struct rl_incall *c, const void *body, size_t len);
/* Answer a GRANTED call with nlm4_res {its cookie, stat}. 0 or -1. */
int rl_fakehost_reply_res(const struct rl_incall *c, const uint8_t *cookie, uint32_t cookie_len,
                          uint32_t stat);

/* GRANTED's arguments (nlm4_testargs) as the fake lockd got them. */
struct rl_granted {
	uint32_t cookie_len;
	uint8_t cookie[1024];
	bool excl;
	char caller[256];
	struct rn_fh fh;
	uint32_t oh_len;
	uint8_t oh[RL_OH_MAX];
	int32_t svid;
	uint64_t off, len;
};
int rl_dec_granted(const struct rl_incall *c, struct rl_granted *g);
/* A _RES call's leading nlm4_res/nlm4_testres part as the fake lockd got it: the cookie (the
 * xid of the _MSG call, as rl_enc_* put it) and the status. 0 or -1. */
int rl_dec_res_call(const struct rl_incall *c, uint32_t *cookie, uint32_t *stat);
/* SM_NOTIFY's stat_chge. 0 or -1. */
int rl_dec_stat_chge(const struct rl_incall *c, char *mon_name, size_t cap, int32_t *state);

/* ---- the daemon ---- */

/* A status check that names both sides on failure (cmocka). */
#define RL_EXPECT(call, want)                                                                \
	do {                                                                                 \
		int got_ = (call);                                                           \
		if (got_ != (want))                                                          \
			fail_msg("%s: %s (%d), want %s", #call, rl_stat_name(got_), got_,    \
			         rl_stat_name(want));                                        \
	} while (0)

/* A TCP connection to the lock port from src, or fail the test. */
int rl_conn(const struct itest *t, const char *src);

/* The path of SHARED/rel. */
void rl_shared_path(const struct itest *t, const char *rel, char *out, size_t outlen);
/* MNT SHARED and CREATE rel in it (as root, from 127.0.0.1): its handle, or fail the test. */
struct rn_fh rl_make_file(const struct itest *t, const char *rel);

/* it_main with SHARED added to the conf before the daemon starts; an "rpcbind =" line in
 * it_server_conf_extra replaces the harness's "rpcbind = no". */
int rl_main(const char *group, const struct CMUnitTest *tests, size_t ntests, int argc,
            char **argv);
#define RL_MAIN(group, tests) rl_main(group, tests, sizeof(tests) / sizeof((tests)[0]), argc, argv)

#endif
