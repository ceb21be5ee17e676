/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS (RFC 2203, RFC 2623) end to end, under a Kerberos KDC of its own (with_kdc.sh: realm
 * NFSDUC.TEST, a keytab for nfs/localhost, the user alice with a password, a principal named as
 * a local user, host/localhost with a client keytab). The daemon gets the keytab, a [metrics]
 * endpoint and four exports: "gss" for sec=krb5:krb5i:krb5p:sys, "gssp" for sec=krb5p only, and
 * "gsssq" and "gssnosq" (root_squash, no_root_squash; anonuid 6001) for who a principal is.
 * alice's credential comes from her password (no ticket cache); every call is made by rawgss.c
 * (a client on MIT's GSS-API, byte by byte, which can replay and tamper), and one check by
 * libtirpc's own RPCSEC_GSS client (gss_tirpc.c). Each test of the protocol also checks that the
 * daemon's nfsd_uc_gss_* counters moved by exactly what it did. This file lists the tests of
 * test_gss_server.c too (principals' users, the reply cache, a refused context, the counters'
 * text); gss_it.c holds what both share.
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
#include "gss_it.h"
#include "gss_tirpc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
 * allows every flavor: two contexts made (MOUNT's, NFS's) and held, five calls of the service. */
static void roundtrip(struct gss_env *e, uint32_t service, const char *name)
{
	struct rn_fh root, f;
	struct rg_ctx c;
	struct gss_counts before, want = { .contexts = 2, .made = 2 };
	uint8_t data[DATA_LEN];
	int fd;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + service);
	gss_counts_read(e, &before);
	mnt_fh(e, e->both, service, &root);
	fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	create_file(fd, &c, &root, name, service, &f);
	write_data(fd, &c, &f, data, service);
	read_back(fd, &c, &f, data, service);
	rg_ctx_free(&c);
	close(fd);
	want.calls[service - 1] = 5;
	gss_counts_expect(e, &before, want, name);
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

/* A READ of many blocks just written UNSTABLE: its data comes from the cache's own blocks, in
 * pieces, which krb5i checksums where they lie and krb5p copies once as it seals. */
static void big_read(struct gss_env *e, uint32_t service, const char *name)
{
	enum { PIECES = 16, BIG = PIECES * DATA_LEN };
	struct rn_fh root, f;
	struct rg_ctx c;
	struct xb plain;
	struct rg_reply rep;
	uint8_t *data = malloc(BIG);
	const uint8_t *got;
	uint32_t count = 0, committed = 0;
	bool eof;

	assert_non_null(data);
	for (size_t i = 0; i < BIG; i++)
		data[i] = (uint8_t)(i * 13 + i / 4096 + service);
	mnt_fh(e, e->both, service, &root);
	int fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	create_file(fd, &c, &root, name, service, &f);
	for (int i = 0; i < PIECES; i++) {
		rn_enc_write(&plain, next_xid++, &f, (uint64_t)i * DATA_LEN, data + i * DATA_LEN,
		             DATA_LEN, RN_UNSTABLE);
		gss_ok(fd, &c, &plain, service, &rep);
		assert_int_equal(rn_dec_write(&rep.r, &count, &committed), 0);
		assert_int_equal(count, DATA_LEN);
		rg_reply_free(&rep);
	}
	/* the whole file and 1000 bytes past its end: all of it back, and EOF */
	rn_enc_read(&plain, next_xid++, &f, 0, BIG + 1000);
	gss_ok(fd, &c, &plain, service, &rep);
	assert_int_equal(rn_dec_read(&rep.r, &got, &count, &eof), 0);
	assert_int_equal(count, BIG);
	assert_true(eof);
	assert_memory_equal(got, data, BIG);
	rg_reply_free(&rep);
	rg_ctx_free(&c);
	close(fd);
	free(data);
}

static void test_big_reads(void **state)
{
	big_read(*state, RG_NONE, "big-krb5.dat");
	big_read(*state, RG_INTEGRITY, "big-krb5i.dat");
	big_read(*state, RG_PRIVACY, "big-krb5p.dat");
}

/* ---- flavors the rule does not allow ---- */

/* AUTH_SYS on the krb5p-only export: GETATTR of its root answers (RFC 2623 2.3.2's exception,
 * knfsd's NFSD_MAY_BYPASS_GSS_ON_ROOT: a Linux client whose root has no ticket mounts with it),
 * READDIR of it AUTH_TOOWEAK. */
static void sys_on_krb5p_root(int fd, const struct rn_fh *root, uint8_t *buf)
{
	struct xb plain;
	struct raw_reply raw;
	uint64_t size;

	rn_enc_getattr(&plain, next_xid++, root);
	assert_int_equal(raw_call(fd, &plain, buf, 65536, &raw), 0);
	if (raw.reply_stat != 0 || raw.accept_stat != 0 || rn_dec_getattr(&raw, &size) != 0)
		fail_msg("AUTH_SYS GETATTR of a krb5p export's root: reply_stat %u accept_stat %u "
		         "auth_stat %u (want an answer, NFS3_OK)", raw.reply_stat, raw.accept_stat,
		         raw.auth_stat);
	rn_enc_readdir(&plain, next_xid++, root, 4096);
	assert_int_equal(raw_call(fd, &plain, buf, 65536, &raw), 0);
	if (raw.reply_stat != 1 || raw.reject_stat != 1 || raw.auth_stat != RG_AUTH_TOOWEAK)
		fail_msg("AUTH_SYS READDIR on a krb5p export: reply_stat %u accept_stat %u auth_stat %u "
		         "(want AUTH_ERROR AUTH_TOOWEAK)", raw.reply_stat, raw.accept_stat, raw.auth_stat);
}

/* On the krb5p-only export: AUTH_SYS (but for its root's GETATTR), krb5 and krb5i answer
 * AUTH_TOOWEAK; krb5p works. */
static void test_tooweak(void **state)
{
	struct gss_env *e = *state;
	struct rn_fh root;
	struct xb plain;
	struct rg_ctx c;
	struct rg_call *call = malloc(sizeof(*call));
	uint8_t *buf = malloc(65536);
	int fd;

	assert_non_null(call);
	assert_non_null(buf);
	mnt_fh(e, e->ponly, RG_PRIVACY, &root);
	fd = connect_to(e->port);
	sys_on_krb5p_root(fd, &root, buf);
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
	struct gss_session s;
	struct xb plain;
	struct rg_reply rep;

	session_open(e, &s, e->both);
	rn_enc_getattr(&plain, next_xid++, &s.root);
	assert_int_equal(rg_wrap(&s.c, &plain, RG_INTEGRITY, s.call), 0);
	assert_int_equal(rg_exchange(s.fd, &s.c, s.call, &rep), 0);
	if (!rg_reply_good(&rep))
		fail_msg("first sending: %s", rg_describe(&rep));
	rg_reply_free(&rep);
	expect_no_reply(s.fd, &s.c, s.call, "the same call again");
	getattr_ok(s.fd, &s.c, &s.root, RG_INTEGRITY);
	session_close(e, &s, (struct gss_counts){ .contexts = 1, .made = 1, .calls[1] = 2,
	                                          .seq_drops = 1 }, "a replay");
}

/* After a jump ahead by more than the window, a number never used but now below the window gets
 * no reply; the next number works. */
static void test_below_window_dropped(void **state)
{
	struct gss_env *e = *state;
	struct gss_session s;
	struct xb plain;
	uint32_t low, top;

	session_open(e, &s, e->both);
	getattr_ok(s.fd, &s.c, &s.root, RG_NONE);
	low = s.c.next_seq + 5;
	s.c.next_seq += s.c.window + 20;
	getattr_ok(s.fd, &s.c, &s.root, RG_NONE);   /* the window's top is now far past low */
	top = s.c.next_seq;
	s.c.next_seq = low;
	rn_enc_getattr(&plain, next_xid++, &s.root);
	assert_int_equal(rg_wrap(&s.c, &plain, RG_NONE, s.call), 0);
	s.c.next_seq = top;
	expect_no_reply(s.fd, &s.c, s.call, "a sequence number below the window");
	getattr_ok(s.fd, &s.c, &s.root, RG_NONE);
	session_close(e, &s, (struct gss_counts){ .contexts = 1, .made = 1, .calls[0] = 3,
	                                          .seq_drops = 1 }, "below the window");
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
		off = call->p.seq_off + 1;                     /* 65536 higher */
	else if (what == FORGED_VERF)
		off = call->p.verf_off + call->p.verf_len - 1;
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
	struct gss_session s;
	uint32_t seq;

	session_open(e, &s, e->both);
	seq = s.c.next_seq;
	expect_forged(s.fd, &s.c, &s.root, seq, FORGED_SEQ);
	expect_forged(s.fd, &s.c, &s.root, seq, FORGED_VERF);
	s.c.next_seq = seq;                      /* the forged calls' number, honestly */
	getattr_ok(s.fd, &s.c, &s.root, RG_NONE);
	expect_forged(s.fd, &s.c, &s.root, s.c.next_seq, FORGED_PROC);
	getattr_ok(s.fd, &s.c, &s.root, RG_NONE);
	session_close(e, &s, (struct gss_counts){ .contexts = 1, .made = 1, .calls[0] = 2,
	                                          .bad_headers = 3 }, "tampered headers");
}

/* krb5i: a byte of the arguments, then one of the checksum, changed: GARBAGE_ARGS. */
static void test_tampered_integ(void **state)
{
	struct gss_env *e = *state;
	struct gss_session s;
	struct xb plain;

	session_open(e, &s, e->both);
	rn_enc_getattr(&plain, next_xid++, &s.root);
	assert_int_equal(rg_wrap(&s.c, &plain, RG_INTEGRITY, s.call), 0);
	s.call->b.buf[s.call->p.databody_off + 4 + 4 + 1] ^= 0x01;  /* past seq_num, fh length */
	expect_garbage(s.fd, &s.c, s.call, "krb5i, a tampered argument");
	rn_enc_getattr(&plain, next_xid++, &s.root);
	assert_int_equal(rg_wrap(&s.c, &plain, RG_INTEGRITY, s.call), 0);
	s.call->b.buf[s.call->p.mic_off + 20] ^= 0x01;
	expect_garbage(s.fd, &s.c, s.call, "krb5i, a tampered checksum");
	getattr_ok(s.fd, &s.c, &s.root, RG_INTEGRITY);
	session_close(e, &s, (struct gss_counts){ .contexts = 1, .made = 1, .calls[1] = 3,
	                                          .bad_bodies = 2 }, "tampered krb5i bodies");
}

/* krb5p: a byte of the wrap token changed: GARBAGE_ARGS. */
static void test_tampered_priv(void **state)
{
	struct gss_env *e = *state;
	struct gss_session s;
	struct xb plain;

	session_open(e, &s, e->both);
	rn_enc_getattr(&plain, next_xid++, &s.root);
	assert_int_equal(rg_wrap(&s.c, &plain, RG_PRIVACY, s.call), 0);
	s.call->b.buf[s.call->p.wrap_off + 24] ^= 0x01;   /* encrypted part, past the token header */
	expect_garbage(s.fd, &s.c, s.call, "krb5p, a tampered token");
	getattr_ok(s.fd, &s.c, &s.root, RG_PRIVACY);
	session_close(e, &s, (struct gss_counts){ .contexts = 1, .made = 1, .calls[2] = 2,
	                                          .bad_bodies = 1 }, "a tampered krb5p body");
}

/* ---- a context's life ---- */

/* DESTROY answers SUCCESS under the MIC of its seq; the handle then answers CREDPROBLEM. */
static void test_destroy(void **state)
{
	struct gss_env *e = *state;
	struct gss_session s;
	struct xb plain;
	struct rg_reply rep;

	session_open(e, &s, e->both);
	getattr_ok(s.fd, &s.c, &s.root, RG_INTEGRITY);
	assert_int_equal(rg_destroy_call(&s.c, NFS_PROG, 3, s.call), 0);
	assert_int_equal(rg_exchange(s.fd, &s.c, s.call, &rep), 0);
	if (!rg_reply_good(&rep))
		fail_msg("DESTROY: %s", rg_describe(&rep));
	rg_reply_free(&rep);
	rn_enc_getattr(&plain, next_xid++, &s.root);
	assert_int_equal(rg_wrap(&s.c, &plain, RG_INTEGRITY, s.call), 0);
	expect_auth_error(s.fd, &s.c, s.call, RG_GSS_CREDPROBLEM, RG_GSS_CREDPROBLEM,
	                  "after DESTROY");
	session_close(e, &s, (struct gss_counts){ .made = 1, .calls[1] = 1, .unknown = 1 },
	              "DESTROY");
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

/* A directory of the tree any user may write: alice works as the anonymous user, the local
 * user's principal as that user. */
static int shared_dir(const struct gss_env *e, char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s", e->t.dir, name);
	return mkdir(path, 0777) == 0 && chmod(path, 0777) == 0 ? 0 : -1;
}

/* The GSS exports and the metrics endpoint, after the harness's conf. */
static int add_sections(struct gss_env *e)
{
	static const char all[] = "sec=krb5:krb5i:krb5p:sys";
	int keep, port = it_free_port(&keep);
	FILE *f;

	if (port < 0)
		return -1;
	close(keep);
	e->metrics_port = (uint16_t)port;
	if (shared_dir(e, e->both, sizeof(e->both), "gss") < 0 ||
	    shared_dir(e, e->ponly, sizeof(e->ponly), "gssp") < 0 ||
	    shared_dir(e, e->squash, sizeof(e->squash), "gsssq") < 0 ||
	    shared_dir(e, e->nosquash, sizeof(e->nosquash), "gssnosq") < 0 ||
	    (f = fopen(e->t.conf, "a")) == NULL) {
		fprintf(stderr, "test_gss: %s\n", strerror(errno));
		return -1;
	}
	fprintf(f, "\n[export %s]\nclients = 127.0.0.1(rw,insecure,%s)\n", e->both, all);
	fprintf(f, "\n[export %s]\nclients = 127.0.0.1(rw,insecure,sec=krb5p)\n", e->ponly);
	fprintf(f, "\n[export %s]\nclients = 127.0.0.1(rw,insecure,root_squash,anonuid=%u,anongid=%u,"
	        "%s)\n", e->squash, GSS_IT_ANONUID, GSS_IT_ANONGID, all);
	fprintf(f, "\n[export %s]\nclients = 127.0.0.1(rw,insecure,no_root_squash,anonuid=%u,"
	        "anongid=%u,%s)\n", e->nosquash, GSS_IT_ANONUID, GSS_IT_ANONGID, all);
	fprintf(f, "\n[metrics]\nlisten = 127.0.0.1:%u\n", e->metrics_port);
	return fclose(f) == 0 ? 0 : -1;
}

static int start_daemon(struct gss_env *e, const char *exe)
{
	static char extra[PATH_MAX + 64];
	const char *keytab = getenv("NFSDUC_KEYTAB");
	/* NFSD_UC_GSS_CRYPTO: gss_crypto's value (openssl, the default, or gssapi: the same
	 * cases with MIT's GSS-API making every token, integration-gss-gssapi) */
	const char *crypto = getenv("NFSD_UC_GSS_CRYPTO");

	snprintf(extra, sizeof(extra), "keytab = %s\ngss_crypto = %s\n", keytab,
	         crypto ? crypto : "openssl");
	it_server_conf_extra = extra;
	if (it_setup(&e->t, exe) < 0 || add_sections(e) < 0 || it_start(&e->t) < 0) {
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

/* alice's credential by password, the local user's principal's by password, the machine
 * principal's from the client keytab (with_kdc.sh's environment). */
static int get_creds(struct gss_env *e)
{
	const char *user = getenv("NFSDUC_USER"), *pw = getenv("NFSDUC_PASSWORD");
	const char *local = getenv("NFSDUC_LOCAL_USER"), *lpw = getenv("NFSDUC_LOCAL_PASSWORD");
	const char *machine = getenv("NFSDUC_MACHINE"), *ckt = getenv("NFSDUC_CLIENT_KEYTAB");
	char err[512];

	if (user == NULL || pw == NULL || local == NULL || lpw == NULL || machine == NULL ||
	    ckt == NULL || getenv("NFSDUC_KEYTAB") == NULL) {
		fprintf(stderr, "test_gss: run under tests/with_kdc.sh (no NFSDUC_USER, "
		        "NFSDUC_PASSWORD, NFSDUC_LOCAL_USER, NFSDUC_LOCAL_PASSWORD, NFSDUC_MACHINE, "
		        "NFSDUC_CLIENT_KEYTAB or NFSDUC_KEYTAB)\n");
		return -1;
	}
	snprintf(e->local_user, sizeof(e->local_user), "%s", local);
	if (rg_cred_password(user, pw, &e->cred, err, sizeof(err)) < 0 ||
	    rg_cred_password(local, lpw, &e->local_cred, err, sizeof(err)) < 0 ||
	    rg_cred_keytab(machine, ckt, &e->machine_cred, err, sizeof(err)) < 0) {
		fprintf(stderr, "test_gss: %s\n", err);
		return -1;
	}
	return 0;
}

static int setup(struct gss_env *e, int argc, char **argv)
{
	const char *exe = argc > 1 ? argv[1] : getenv("NFSD_UC_EXE"), *target;

	e->cred = e->local_cred = e->machine_cred = GSS_C_NO_CREDENTIAL;
	if (get_creds(e) < 0)
		return -1;
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
		cmocka_unit_test(test_big_reads),
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
		cmocka_unit_test(test_map_local_user),
		cmocka_unit_test(test_map_unknown_user),
		cmocka_unit_test(test_map_machine_squashed),
		cmocka_unit_test(test_map_machine_no_root_squash),
		cmocka_unit_test(test_drc_krb5i),
		cmocka_unit_test(test_drc_krb5p),
		cmocka_unit_test(test_refused_context),
		cmocka_unit_test(test_counters_text),    /* last: after every test that moves one */
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
	gss_release_cred(&minor, &env.local_cred);
	gss_release_cred(&minor, &env.machine_cred);
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
