/* SPDX-License-Identifier: GPL-2.0-or-later */
/* it-gss's shared part (gss_it.c): the program's environment (the daemon or an external server,
 * its exports, the principals' credentials), connections, contexts and calls that must succeed
 * or fail a given way, MNT, and the daemon's RPCSEC_GSS counters before and after a test. The
 * tests are in test_gss.c (the protocol) and test_gss_server.c (who a principal is, the reply
 * cache, a refused context, the counters' text); test_gss.c lists them all. */
#ifndef NFSD_UC_IT_GSS_IT_H
#define NFSD_UC_IT_GSS_IT_H

#include "harness.h"
#include "rawgss.h"
#include "rawnfs.h"

#include <stdbool.h>
#include <stdint.h>

#define NFS_PROG 100003
#define MOUNT_PROG 100005
#define SVC "nfs@localhost"
#define NO_REPLY_MS 1000          /* how long a dropped call is given to be answered anyway */
#define DATA_LEN 4000             /* one WRITE's bytes: fits rawrpc's call buffer, wrapped */

/* The anonymous user of the exports "gsssq" and "gssnosq" (not 65534: seen to be the rule's). */
#define GSS_IT_ANONUID 6001u
#define GSS_IT_ANONGID 6002u

struct gss_env {
	struct itest t;
	bool external;                /* NFSD_UC_GSS_TARGET: a server of its own, no daemon of ours */
	uint16_t port, mount_port, metrics_port;
	char both[PATH_MAX], ponly[PATH_MAX];
	/* sec=krb5:krb5i:krb5p:sys with GSS_IT_ANON*, one root_squash and one no_root_squash */
	char squash[PATH_MAX], nosquash[PATH_MAX];
	gss_cred_id_t cred;           /* alice, who is no user of this host */
	gss_cred_id_t local_cred;     /* the principal named as a user of this host (local_user) */
	gss_cred_id_t machine_cred;   /* host/localhost, from the client keytab */
	char local_user[64];
};

extern uint32_t next_xid;

/* ---- connections, contexts, calls ---- */

int connect_to(uint16_t port);
/* A context of alice's (establish) or of cred's on fd for prog, version 3. */
void establish(struct gss_env *e, int fd, struct rg_ctx *c, uint32_t prog);
void establish_as(gss_cred_id_t cred, int fd, struct rg_ctx *c, uint32_t prog);
/* Send call, which must be answered SUCCESS with its verifier and body checked; the caller
 * decodes rep->r and frees rep. */
void call_ok(int fd, struct rg_ctx *c, const struct rg_call *call, struct rg_reply *rep);
/* plain (a whole call of rawnfs's) wrapped with service through c, as call_ok. */
void gss_ok(int fd, struct rg_ctx *c, const struct xb *plain, uint32_t service,
            struct rg_reply *rep);
/* GETATTR of fh through c, which must succeed with NFS3_OK. */
void getattr_ok(int fd, struct rg_ctx *c, const struct rn_fh *fh, uint32_t service);
/* CREATE (UNCHECKED) of dir/name through c, which must succeed; the new handle in *fh. */
void create_file(int fd, struct rg_ctx *c, const struct rn_fh *dir, const char *name,
                 uint32_t service, struct rn_fh *fh);

/* Send call and expect: nothing back within NO_REPLY_MS, the connection left open; an
 * AUTH_ERROR with auth_stat want (or want2); GARBAGE_ARGS under a verifier holding the MIC of
 * its seq (knfsd's). */
void expect_no_reply(int fd, struct rg_ctx *c, const struct rg_call *call, const char *what);
void expect_auth_error(int fd, struct rg_ctx *c, const struct rg_call *call, uint32_t want,
                       uint32_t want2, const char *what);
void expect_garbage(int fd, struct rg_ctx *c, const struct rg_call *call, const char *what);

/* ---- MOUNT ---- */

/* mountres3: the status; when MNT3_OK, the handle and the flavors. */
int dec_mnt(const struct raw_reply *r, struct rn_fh *fh, uint32_t *flavors, uint32_t *n);
/* MNT of path over a connection of its own: by AUTH_SYS (service 0) or through a context of
 * alice's made on it with service. The handle in *fh, the flavors in flavors[*n]. */
void mnt(struct gss_env *e, const char *path, uint32_t service, struct rn_fh *fh,
         uint32_t *flavors, uint32_t *n);
void mnt_fh(struct gss_env *e, const char *path, uint32_t service, struct rn_fh *fh);

/* ---- the daemon's counters ([metrics]: nfsd_uc_gss_*) ---- */

struct gss_counts {
	long long contexts;           /* the gauge: held now */
	long long made, refused, calls[3], unknown, bad_headers, bad_bodies, seq_drops;
};
/* One scrape's figures (zeros against an external server). */
void gss_counts_read(const struct gss_env *e, struct gss_counts *c);
/* Each family moved from before by exactly want's figure (0 for those left out), what saying
 * which test; nothing checked against an external server. */
void gss_counts_expect(const struct gss_env *e, const struct gss_counts *before,
                       struct gss_counts want, const char *what);

/* ---- a test's session ---- */

/* The counters before the test, an export's root handle (MNT by AUTH_SYS), a connection to the
 * NFS port and a context of alice's on it, and a call's buffer. */
struct gss_session {
	struct gss_counts before;
	struct rn_fh root;
	struct rg_ctx c;
	struct rg_call *call;
	int fd;
};
void session_open(struct gss_env *e, struct gss_session *s, const char *export);
/* Let it all go, then each family moved by exactly want's figure (gss_counts_expect). */
void session_close(struct gss_env *e, struct gss_session *s, struct gss_counts want,
                   const char *what);

/* ---- the tests of test_gss_server.c, listed by test_gss.c ---- */

void test_map_local_user(void **state);
void test_map_unknown_user(void **state);
void test_map_machine_squashed(void **state);
void test_map_machine_no_root_squash(void **state);
void test_drc_krb5i(void **state);
void test_drc_krb5p(void **state);
void test_refused_context(void **state);
void test_counters_text(void **state);

#endif
