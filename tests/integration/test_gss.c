/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS (RFC 2203, RFC 2623) end to end, under a Kerberos KDC of its own (with_kdc.sh: realm
 * NFSDUC.TEST, a keytab for nfs/localhost, the user alice with a password). The daemon gets the
 * keytab and two exports: "gss" for sec=krb5:krb5i:krb5p:sys and "gssp" for sec=krb5p only.
 * alice's credential comes from her password (no ticket cache); every call is made by rawgss.c
 * (a client on MIT's GSS-API, byte by byte, which can replay and tamper), and one check by
 * libtirpc's own RPCSEC_GSS client (gss_tirpc.c).
 *
 * What the server must answer is knfsd's answer (net/sunrpc/auth_gss/svcauth_gss.c):
 *  - a header whose MIC does not verify: AUTH_ERROR RPCSEC_GSS_CREDPROBLEM, its sequence number
 *    not used up (the MIC is checked before the window: gss_verify_header);
 *  - a sequence number seen already or below the window: no reply at all (knfsd then closes the
 *    connection, SVC_CLOSE; RFC 2203 5.3.3.1 says discard, and nfsd-uc keeps the connection);
 *  - an integrity checksum or privacy token that does not verify: GARBAGE_ARGS, under a verifier
 *    holding the MIC of the sequence number (svcauth_gss_accept writes the verifier, then
 *    unwrap_integ_data / unwrap_priv_data fail: SVC_GARBAGE);
 *  - a handle after DESTROY: AUTH_ERROR RPCSEC_GSS_CREDPROBLEM (gss_svc_searchbyctx fails).
 * A flavor the client rule does not allow answers AUTH_TOOWEAK (issue 37; knfsd's NFSv3 says
 * NFS3ERR_ACCES there instead).
 *
 * NFSD_UC_GSS_TARGET=PORT:MOUNT_PORT:BOTH:PONLY runs the same tests against a server already
 * running (NFS-Ganesha, say) with the two exports at those paths, for comparison. NFS-Ganesha 4.3
 * (SecType = krb5, krb5i, krb5p, sys and SecType = krb5p) passes all but two: its MNT lists the
 * flavors strongest first (390005 390004 390003 1), and a forged header moves its window (ntirpc
 * takes the sequence number before it checks the MIC, so the honest call after a forged one
 * 65536 higher is dropped), and it answers a forged procedure number PROC_UNAVAIL unchecked. */
#include "harness.h"
#include "rawgss.h"
#include "rawnfs.h"
#include "gss_tirpc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NFS_PROG 100003
#define MOUNT_PROG 100005
#define SVC "nfs@localhost"
#define NO_REPLY_MS 1000          /* how long a dropped call is given to be answered anyway */
#define DATA_LEN 4000             /* one WRITE's bytes: fits rawrpc's call buffer, wrapped */

struct gss_env {
	struct itest t;
	bool external;
	uint16_t port, mount_port;
	char both[PATH_MAX], ponly[PATH_MAX];
	gss_cred_id_t cred;
};

static uint32_t next_xid = 0x47000000;

/* ---- connections, contexts, calls ---- */

static int connect_to(uint16_t port)
{
	int fd = raw_connect(port, NULL);

	assert_true(fd >= 0);
	return fd;
}

static void establish(struct gss_env *e, int fd, struct rg_ctx *c, uint32_t prog)
{
	char err[512];

	if (rg_establish(fd, c, e->cred, SVC, prog, 3, err, sizeof(err)) < 0)
		fail_msg("no RPCSEC_GSS context: %s", err);
}

/* A call with service through c on fd, which must succeed (verifier and body checked); the caller
 * decodes rep->r and frees rep. */
static void gss_ok(int fd, struct rg_ctx *c, const struct xb *plain, uint32_t service,
                   struct rg_reply *rep)
{
	struct rg_call *call = malloc(sizeof(*call));

	assert_non_null(call);
	assert_int_equal(rg_wrap(c, plain, service, call), 0);
	if (rg_exchange(fd, c, call, rep) < 0)
		fail_msg("service %u, procedure %u: no reply", service, call->proc);
	if (!rg_reply_good(rep))
		fail_msg("service %u, procedure %u: %s", service, call->proc, rg_describe(rep));
	free(call);
}

/* GETATTR of fh through c, which must succeed with NFS3_OK. */
static void getattr_ok(int fd, struct rg_ctx *c, const struct rn_fh *fh, uint32_t service)
{
	struct xb plain;
	struct rg_reply rep;
	uint64_t size;

	rn_enc_getattr(&plain, next_xid++, fh);
	gss_ok(fd, c, &plain, service, &rep);
	assert_int_equal(rn_dec_getattr(&rep.r, &size), 0);
	rg_reply_free(&rep);
}

/* NFSD_UC_GSS_VERBOSE: say what the server answered to each odd call (for comparing servers). */
static void note(const char *what, int rc, const struct rg_reply *rep)
{
	if (getenv("NFSD_UC_GSS_VERBOSE") == NULL)
		return;
	fprintf(stderr, "gss: %s: %s\n", what, rc == 0 ? rg_describe(rep) :
	        rc == -2 ? "no reply" : "connection closed");
}

/* Send call and expect nothing back within NO_REPLY_MS, the connection left open. */
static void expect_no_reply(int fd, struct rg_ctx *c, const struct rg_call *call, const char *what)
{
	struct rg_reply rep;
	int rc;

	assert_int_equal(rg_send(fd, call), 0);
	rc = rg_recv(fd, c, call, &rep, NO_REPLY_MS);
	note(what, rc, &rep);
	if (rc == 0)
		fail_msg("%s: answered: %s", what, rg_describe(&rep));
	if (rc == -1)
		fail_msg("%s: the connection was closed (knfsd's way) or sent another reply", what);
	rg_reply_free(&rep);
}

/* Send call and expect an AUTH_ERROR with auth_stat want (or want2). */
static void expect_auth_error(int fd, struct rg_ctx *c, const struct rg_call *call, uint32_t want,
                              uint32_t want2, const char *what)
{
	struct rg_reply rep;
	int rc = rg_exchange(fd, c, call, &rep);

	note(what, rc, &rep);
	if (rc < 0)
		fail_msg("%s: %s (want AUTH_ERROR %u)", what, rc == -2 ? "no reply" : "closed", want);
	if (rep.r.reply_stat != 1 || rep.r.reject_stat != 1 ||
	    (rep.r.auth_stat != want && rep.r.auth_stat != want2))
		fail_msg("%s: %s (want AUTH_ERROR %u)", what, rg_describe(&rep), want);
	rg_reply_free(&rep);
}

/* Send call and expect GARBAGE_ARGS under a verifier holding the MIC of its seq (knfsd's). */
static void expect_garbage(int fd, struct rg_ctx *c, const struct rg_call *call, const char *what)
{
	struct rg_reply rep;
	int rc = rg_exchange(fd, c, call, &rep);

	note(what, rc, &rep);
	if (rc < 0)
		fail_msg("%s: %s (want GARBAGE_ARGS)", what, rc == -2 ? "no reply" : "closed");
	if (rep.r.reply_stat != 0 || rep.r.accept_stat != 4 || !rep.verf_ok)
		fail_msg("%s: %s (want GARBAGE_ARGS, verifier the MIC of the seq)", what,
		         rg_describe(&rep));
	rg_reply_free(&rep);
}

/* ---- MOUNT ---- */

/* mountres3: the status; when MNT3_OK, the handle and the flavors. */
static int dec_mnt(const struct raw_reply *r, struct rn_fh *fh, uint32_t *flavors, uint32_t *n)
{
	const uint8_t *p = r->body, *end = r->body + r->body_len;
	uint32_t st, len;

	if (r->reply_stat != 0 || r->accept_stat != 0 || end - p < 4)
		return -1;
	st = get_u32(p);
	p += 4;
	if (st != 0)
		return (int)st;
	if (end - p < 4 || (len = get_u32(p)) > sizeof(fh->data) || end - p < 8 + ((len + 3) & ~3u))
		return -1;
	fh->len = len;
	memcpy(fh->data, p + 4, len);
	p += 4 + ((len + 3) & ~3u);
	*n = get_u32(p);
	p += 4;
	if (*n > 16 || end - p < 4 * (ptrdiff_t)*n)
		return -1;
	for (uint32_t i = 0; i < *n; i++)
		flavors[i] = get_u32(p + 4 * i);
	return 0;
}

/* MNT of path over a connection of its own: by AUTH_SYS (service 0) or through a context made
 * on it with service. The handle in *fh, the flavors in flavors[*n]. */
static void mnt(struct gss_env *e, const char *path, uint32_t service, struct rn_fh *fh,
                uint32_t *flavors, uint32_t *n)
{
	int fd = connect_to(e->mount_port);
	struct xb plain;
	struct rg_reply rep;
	struct raw_reply raw;
	struct rg_ctx c;
	uint8_t *buf = malloc(65536);
	int st;

	assert_non_null(buf);
	rn_enc_mnt(&plain, next_xid++, path);
	if (service == 0) {
		assert_int_equal(raw_call(fd, &plain, buf, 65536, &raw), 0);
		st = dec_mnt(&raw, fh, flavors, n);
	} else {
		establish(e, fd, &c, MOUNT_PROG);
		gss_ok(fd, &c, &plain, service, &rep);
		st = dec_mnt(&rep.r, fh, flavors, n);
		rg_reply_free(&rep);
		rg_ctx_free(&c);
	}
	if (st != 0)
		fail_msg("MNT %s (service %u): status %d", path, service, st);
	free(buf);
	close(fd);
}

static void mnt_fh(struct gss_env *e, const char *path, uint32_t service, struct rn_fh *fh)
{
	uint32_t flavors[16], n;

	mnt(e, path, service, fh, flavors, &n);
}

/* MNT lists the rule's flavors in the rule's order (RFC 2623 2.2's pseudo-flavors). */
static void test_mnt_flavors(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh fh;
	uint32_t flavors[16], n;
	const uint32_t both[] = { RG_FLAVOR_KRB5, RG_FLAVOR_KRB5I, RG_FLAVOR_KRB5P, 1 };

	mnt(e, e->both, 0, &fh, flavors, &n);
	if (n != 4 || memcmp(flavors, both, sizeof(both)) != 0)
		fail_msg("MNT of sec=krb5:krb5i:krb5p:sys lists %u flavors: %u %u %u %u ...", n,
		         n > 0 ? flavors[0] : 0, n > 1 ? flavors[1] : 0, n > 2 ? flavors[2] : 0,
		         n > 3 ? flavors[3] : 0);
	mnt(e, e->ponly, RG_PRIVACY, &fh, flavors, &n);
	if (n != 1 || flavors[0] != RG_FLAVOR_KRB5P)
		fail_msg("MNT of sec=krb5p lists %u flavors: %u ...", n, n > 0 ? flavors[0] : 0);
}

/* ---- data through each service ---- */

static void create_file(int fd, struct rg_ctx *c, const struct rn_fh *dir, const char *name,
                        uint32_t service, struct rn_fh *fh)
{
	struct xb plain;
	struct rg_reply rep;

	rn_enc_create(&plain, next_xid++, dir, name);
	gss_ok(fd, c, &plain, service, &rep);
	assert_int_equal(rn_dec_create(&rep.r, fh), 0);
	rg_reply_free(&rep);
}

static void write_data(int fd, struct rg_ctx *c, const struct rn_fh *fh, const uint8_t *data,
                       uint32_t service)
{
	struct xb plain;
	struct rg_reply rep;
	uint32_t count = 0, committed = 0;

	rn_enc_write(&plain, next_xid++, fh, 0, data, DATA_LEN, RN_FILE_SYNC);
	gss_ok(fd, c, &plain, service, &rep);
	assert_int_equal(rn_dec_write(&rep.r, &count, &committed), 0);
	assert_int_equal(count, DATA_LEN);
	assert_int_equal(committed, RN_FILE_SYNC);
	rg_reply_free(&rep);
}

static void read_back(int fd, struct rg_ctx *c, const struct rn_fh *fh, const uint8_t *data,
                      uint32_t service)
{
	struct xb plain;
	struct rg_reply rep;
	const uint8_t *got;
	uint32_t count = 0;
	uint64_t size = 0;
	bool eof;

	rn_enc_read(&plain, next_xid++, fh, 0, DATA_LEN);
	gss_ok(fd, c, &plain, service, &rep);
	assert_int_equal(rn_dec_read(&rep.r, &got, &count, &eof), 0);
	assert_int_equal(count, DATA_LEN);
	assert_memory_equal(got, data, DATA_LEN);
	rg_reply_free(&rep);

	rn_enc_getattr(&plain, next_xid++, fh);
	gss_ok(fd, c, &plain, service, &rep);
	assert_int_equal(rn_dec_getattr(&rep.r, &size), 0);
	assert_int_equal(size, DATA_LEN);
	rg_reply_free(&rep);
}

/* MNT, CREATE, WRITE, READ back equal and GETATTR, all with one service, on the export that
 * allows every flavor. */
static void roundtrip(struct gss_env *e, uint32_t service, const char *name)
{
	struct rn_fh root, f;
	struct rg_ctx c;
	uint8_t data[DATA_LEN];
	int fd;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + service);
	mnt_fh(e, e->both, service, &root);
	fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	create_file(fd, &c, &root, name, service, &f);
	write_data(fd, &c, &f, data, service);
	read_back(fd, &c, &f, data, service);
	rg_ctx_free(&c);
	close(fd);
}

static void test_krb5(void **state)
{
	roundtrip(*state, RG_NONE, "krb5.dat");
}

static void test_krb5i(void **state)
{
	roundtrip(*state, RG_INTEGRITY, "krb5i.dat");
}

static void test_krb5p(void **state)
{
	roundtrip(*state, RG_PRIVACY, "krb5p.dat");
}

/* ---- flavors the rule does not allow ---- */

/* On the krb5p-only export: AUTH_SYS, krb5 and krb5i answer AUTH_TOOWEAK; krb5p works. */
static void test_tooweak(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh root;
	struct xb plain;
	struct raw_reply raw;
	struct rg_ctx c;
	struct rg_call *call = malloc(sizeof(*call));
	uint8_t *buf = malloc(65536);
	int fd;

	assert_non_null(call);
	assert_non_null(buf);
	mnt_fh(e, e->ponly, RG_PRIVACY, &root);
	fd = connect_to(e->port);
	rn_enc_getattr(&plain, next_xid++, &root);
	assert_int_equal(raw_call(fd, &plain, buf, 65536, &raw), 0);
	if (raw.reply_stat != 1 || raw.reject_stat != 1 || raw.auth_stat != RG_AUTH_TOOWEAK)
		fail_msg("AUTH_SYS on a krb5p export: reply_stat %u accept_stat %u auth_stat %u "
		         "(want AUTH_ERROR AUTH_TOOWEAK)", raw.reply_stat, raw.accept_stat, raw.auth_stat);

	establish(e, fd, &c, NFS_PROG);
	rn_enc_getattr(&plain, next_xid++, &root);
	assert_int_equal(rg_wrap(&c, &plain, RG_NONE, call), 0);
	expect_auth_error(fd, &c, call, RG_AUTH_TOOWEAK, RG_AUTH_TOOWEAK, "krb5 on a krb5p export");
	rn_enc_getattr(&plain, next_xid++, &root);
	assert_int_equal(rg_wrap(&c, &plain, RG_INTEGRITY, call), 0);
	expect_auth_error(fd, &c, call, RG_AUTH_TOOWEAK, RG_AUTH_TOOWEAK, "krb5i on a krb5p export");
	getattr_ok(fd, &c, &root, RG_PRIVACY);
	rg_ctx_free(&c);
	close(fd);
	free(buf);
	free(call);
}

/* ---- the sequence window ---- */

/* The same bytes twice: the second gets no reply; the connection and context go on. */
static void test_replay_dropped(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh root;
	struct xb plain;
	struct rg_reply rep;
	struct rg_ctx c;
	struct rg_call *call = malloc(sizeof(*call));
	int fd;

	assert_non_null(call);
	mnt_fh(e, e->both, 0, &root);
	fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	rn_enc_getattr(&plain, next_xid++, &root);
	assert_int_equal(rg_wrap(&c, &plain, RG_INTEGRITY, call), 0);
	assert_int_equal(rg_exchange(fd, &c, call, &rep), 0);
	if (!rg_reply_good(&rep))
		fail_msg("first sending: %s", rg_describe(&rep));
	rg_reply_free(&rep);
	expect_no_reply(fd, &c, call, "the same call again");
	getattr_ok(fd, &c, &root, RG_INTEGRITY);
	rg_ctx_free(&c);
	close(fd);
	free(call);
}

/* After a jump ahead by more than the window, a number never used but now below the window gets
 * no reply; the next number works. */
static void test_below_window_dropped(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh root;
	struct xb plain;
	struct rg_ctx c;
	struct rg_call *call = malloc(sizeof(*call));
	uint32_t low, top;
	int fd;

	assert_non_null(call);
	mnt_fh(e, e->both, 0, &root);
	fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	getattr_ok(fd, &c, &root, RG_NONE);
	low = c.next_seq + 5;
	c.next_seq += c.window + 20;
	getattr_ok(fd, &c, &root, RG_NONE);       /* the window's top is now far past low */
	top = c.next_seq;
	c.next_seq = low;
	rn_enc_getattr(&plain, next_xid++, &root);
	assert_int_equal(rg_wrap(&c, &plain, RG_NONE, call), 0);
	c.next_seq = top;
	expect_no_reply(fd, &c, call, "a sequence number below the window");
	getattr_ok(fd, &c, &root, RG_NONE);
	rg_ctx_free(&c);
	close(fd);
	free(call);
}

/* ---- tampering ---- */

enum forged { FORGED_SEQ, FORGED_VERF, FORGED_PROC };

/* A GETATTR of root with sequence number seq and a fresh xid, one byte flipped after signing:
 * AUTH_ERROR CREDPROBLEM (knfsd's answer; AUTH_BADVERF taken too). */
static void expect_forged(int fd, struct rg_ctx *c, const struct rn_fh *root, uint32_t seq,
                          enum forged what)
{
	static const char *const name[] = { "a tampered sequence number", "a tampered verifier",
	                                     "a tampered procedure number" };
	struct rg_call *call = malloc(sizeof(*call));
	struct xb plain;
	size_t off;

	assert_non_null(call);
	rn_enc_getattr(&plain, next_xid++, root);
	c->next_seq = seq;
	assert_int_equal(rg_wrap(c, &plain, RG_NONE, call), 0);
	if (what == FORGED_SEQ)
		off = call->seq_off + 1;                     /* 65536 higher */
	else if (what == FORGED_VERF)
		off = call->verf_off + call->verf_len - 1;
	else
		off = 22;                                    /* procedure 1 -> 0x8001 */
	call->b.buf[off] ^= what == FORGED_PROC ? 0x80 : 0x01;
	expect_auth_error(fd, c, call, RG_GSS_CREDPROBLEM, RG_AUTH_BADVERF, name[what]);
	free(call);
}

/* A byte of the header changed after signing: in the credential's sequence number (65536
 * higher), then in the verifier's MIC. Neither uses up a number: the same number, signed right,
 * then works (had the forged 65536-higher one moved the window, it would be dropped). Last, the
 * procedure number: knfsd authenticates before it looks at the procedure, so the answer is
 * CREDPROBLEM and not PROC_UNAVAIL. */
static void test_tampered_header(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh root;
	struct rg_ctx c;
	uint32_t seq;
	int fd;

	mnt_fh(e, e->both, 0, &root);
	fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	seq = c.next_seq;
	expect_forged(fd, &c, &root, seq, FORGED_SEQ);
	expect_forged(fd, &c, &root, seq, FORGED_VERF);
	c.next_seq = seq;                        /* the forged calls' number, honestly */
	getattr_ok(fd, &c, &root, RG_NONE);
	expect_forged(fd, &c, &root, c.next_seq, FORGED_PROC);
	getattr_ok(fd, &c, &root, RG_NONE);
	rg_ctx_free(&c);
	close(fd);
}

/* krb5i: a byte of the arguments, then one of the checksum, changed: GARBAGE_ARGS. */
static void test_tampered_integ(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh root;
	struct xb plain;
	struct rg_ctx c;
	struct rg_call *call = malloc(sizeof(*call));
	int fd;

	assert_non_null(call);
	mnt_fh(e, e->both, 0, &root);
	fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	rn_enc_getattr(&plain, next_xid++, &root);
	assert_int_equal(rg_wrap(&c, &plain, RG_INTEGRITY, call), 0);
	call->b.buf[call->databody_off + 4 + 4 + 1] ^= 0x01;    /* past seq_num and the fh's length */
	expect_garbage(fd, &c, call, "krb5i, a tampered argument");
	rn_enc_getattr(&plain, next_xid++, &root);
	assert_int_equal(rg_wrap(&c, &plain, RG_INTEGRITY, call), 0);
	call->b.buf[call->mic_off + 20] ^= 0x01;
	expect_garbage(fd, &c, call, "krb5i, a tampered checksum");
	getattr_ok(fd, &c, &root, RG_INTEGRITY);
	rg_ctx_free(&c);
	close(fd);
	free(call);
}

/* krb5p: a byte of the wrap token changed: GARBAGE_ARGS. */
static void test_tampered_priv(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh root;
	struct xb plain;
	struct rg_ctx c;
	struct rg_call *call = malloc(sizeof(*call));
	int fd;

	assert_non_null(call);
	mnt_fh(e, e->both, 0, &root);
	fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	rn_enc_getattr(&plain, next_xid++, &root);
	assert_int_equal(rg_wrap(&c, &plain, RG_PRIVACY, call), 0);
	call->b.buf[call->wrap_off + 24] ^= 0x01;   /* in the encrypted part, past the token header */
	expect_garbage(fd, &c, call, "krb5p, a tampered token");
	getattr_ok(fd, &c, &root, RG_PRIVACY);
	rg_ctx_free(&c);
	close(fd);
	free(call);
}

/* ---- a context's life ---- */

/* DESTROY answers SUCCESS under the MIC of its seq; the handle then answers CREDPROBLEM. */
static void test_destroy(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh root;
	struct xb plain;
	struct rg_reply rep;
	struct rg_ctx c;
	struct rg_call *call = malloc(sizeof(*call));
	int fd;

	assert_non_null(call);
	mnt_fh(e, e->both, 0, &root);
	fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	getattr_ok(fd, &c, &root, RG_INTEGRITY);
	assert_int_equal(rg_destroy_call(&c, NFS_PROG, 3, call), 0);
	assert_int_equal(rg_exchange(fd, &c, call, &rep), 0);
	if (!rg_reply_good(&rep))
		fail_msg("DESTROY: %s", rg_describe(&rep));
	rg_reply_free(&rep);
	rn_enc_getattr(&plain, next_xid++, &root);
	assert_int_equal(rg_wrap(&c, &plain, RG_INTEGRITY, call), 0);
	expect_auth_error(fd, &c, call, RG_GSS_CREDPROBLEM, RG_GSS_CREDPROBLEM, "after DESTROY");
	rg_ctx_free(&c);
	close(fd);
	free(call);
}

/* A context made on one connection serves on the next (a Linux client reconnects and keeps its
 * context), and on the MOUNT port's too. */
static void test_reconnect(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh root;
	struct xb plain;
	struct rg_reply rep;
	struct rg_ctx c;
	uint32_t flavors[16], n;
	int fd;

	mnt_fh(e, e->both, 0, &root);
	fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	getattr_ok(fd, &c, &root, RG_PRIVACY);
	close(fd);
	fd = connect_to(e->port);
	getattr_ok(fd, &c, &root, RG_PRIVACY);
	getattr_ok(fd, &c, &root, RG_INTEGRITY);
	close(fd);
	fd = connect_to(e->mount_port);
	rn_enc_mnt(&plain, next_xid++, e->both);
	gss_ok(fd, &c, &plain, RG_PRIVACY, &rep);
	assert_int_equal(dec_mnt(&rep.r, &root, flavors, &n), 0);
	rg_reply_free(&rep);
	rg_ctx_free(&c);
	close(fd);
}

/* libtirpc's client, privacy: NULL and GETATTR of the krb5p export's root, then DESTROY. */
static void test_libtirpc(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh root;
	uint32_t status = 99, type = 0;
	char err[512];

	mnt_fh(e, e->ponly, RG_PRIVACY, &root);
	if (gss_tirpc_getattr(e->port, e->cred, root.data, root.len, &status, &type, err,
	                      sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(status, 0);
	assert_int_equal(type, 2);               /* NF3DIR */
}

/* ---- the daemon ---- */

static int add_exports(struct gss_env *e)
{
	FILE *f;

	snprintf(e->both, sizeof(e->both), "%s/gss", e->t.dir);
	snprintf(e->ponly, sizeof(e->ponly), "%s/gssp", e->t.dir);
	/* 0777: alice is no local user, and works as the anonymous user */
	if (mkdir(e->both, 0777) < 0 || chmod(e->both, 0777) < 0 || mkdir(e->ponly, 0777) < 0 ||
	    chmod(e->ponly, 0777) < 0 || (f = fopen(e->t.conf, "a")) == NULL) {
		fprintf(stderr, "test_gss: %s\n", strerror(errno));
		return -1;
	}
	fprintf(f, "\n[export %s]\nclients = 127.0.0.1(rw,insecure,sec=krb5:krb5i:krb5p:sys)\n",
	        e->both);
	fprintf(f, "\n[export %s]\nclients = 127.0.0.1(rw,insecure,sec=krb5p)\n", e->ponly);
	return fclose(f) == 0 ? 0 : -1;
}

static int start_daemon(struct gss_env *e, const char *exe)
{
	static char extra[PATH_MAX + 32];
	const char *keytab = getenv("NFSDUC_KEYTAB");

	snprintf(extra, sizeof(extra), "keytab = %s\n", keytab);
	it_server_conf_extra = extra;
	if (it_setup(&e->t, exe) < 0 || add_exports(e) < 0 || it_start(&e->t) < 0) {
		fprintf(stderr, "test_gss: the daemon did not start\n");
		it_log_tail(&e->t, 40);
		it_cleanup(&e->t);
		return -1;
	}
	e->port = e->t.port;
	e->mount_port = e->t.mount_port;
	return 0;
}

/* NFSD_UC_GSS_TARGET=PORT:MOUNT_PORT:BOTH:PONLY */
static int external(struct gss_env *e, const char *spec)
{
	unsigned port, mport;

	if (sscanf(spec, "%u:%u:%4095[^:]:%4095s", &port, &mport, e->both, e->ponly) != 4) {
		fprintf(stderr, "test_gss: NFSD_UC_GSS_TARGET=PORT:MOUNT_PORT:BOTH:PONLY\n");
		return -1;
	}
	e->external = true;
	e->port = (uint16_t)port;
	e->mount_port = (uint16_t)mport;
	return 0;
}

static int setup(struct gss_env *e, int argc, char **argv)
{
	const char *user = getenv("NFSDUC_USER"), *pw = getenv("NFSDUC_PASSWORD");
	const char *exe = argc > 1 ? argv[1] : getenv("NFSD_UC_EXE"), *target;
	char err[512];

	if (user == NULL || pw == NULL || getenv("NFSDUC_KEYTAB") == NULL) {
		fprintf(stderr, "test_gss: run under tests/with_kdc.sh (no NFSDUC_USER, "
		        "NFSDUC_PASSWORD, NFSDUC_KEYTAB)\n");
		return -1;
	}
	if (rg_cred_password(user, pw, &e->cred, err, sizeof(err)) < 0) {
		fprintf(stderr, "test_gss: %s\n", err);
		return -1;
	}
	target = getenv("NFSD_UC_GSS_TARGET");
	if (target != NULL)
		return external(e, target);
	if (exe == NULL) {
		fprintf(stderr, "usage: %s NFSD_UC_BINARY (or set NFSD_UC_EXE)\n", argv[0]);
		return -1;
	}
	return start_daemon(e, exe);
}

int main(int argc, char **argv)
{
	static struct gss_env env;
	static struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mnt_flavors),
		cmocka_unit_test(test_krb5),
		cmocka_unit_test(test_krb5i),
		cmocka_unit_test(test_krb5p),
		cmocka_unit_test(test_tooweak),
		cmocka_unit_test(test_replay_dropped),
		cmocka_unit_test(test_below_window_dropped),
		cmocka_unit_test(test_tampered_header),
		cmocka_unit_test(test_tampered_integ),
		cmocka_unit_test(test_tampered_priv),
		cmocka_unit_test(test_destroy),
		cmocka_unit_test(test_reconnect),
		cmocka_unit_test(test_libtirpc),
	};
	OM_uint32 minor;
	int failed, status;

	signal(SIGPIPE, SIG_IGN);
	if (setup(&env, argc, argv) < 0)
		return 1;
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		tests[i].initial_state = &env;
	failed = cmocka_run_group_tests_name("gss", tests, NULL, NULL);
	gss_release_cred(&minor, &env.cred);
	if (env.external)
		return failed ? 1 : 0;
	status = it_stop(&env.t);
	if (status != 0) {
		fprintf(stderr, "harness: daemon exit status after SIGTERM: %d (want 0)\n", status);
		failed++;
	}
	if (failed)
		it_log_tail(&env.t, 60);
	it_cleanup(&env.t);
	return failed ? 1 : 0;
}
