/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS as the server's administrator sees it, part of it-gss (test_gss.c lists the tests
 * and starts the daemon; gss_it.c holds what both files share):
 *  - who a principal is (rpc/gss_ident.c): a principal named as a user of this host is that user
 *    (auth_to_local, then the password file), alice (no user here) the export's anonymous user,
 *    and the machine principal host/localhost root, which root_squash squashes as it squashes
 *    AUTH_SYS's root; seen as the owner of a file each CREATEs, by GETATTR and on disk;
 *  - the duplicate request cache across sequence numbers: a CREATE (GUARDED) retransmitted with
 *    the same xid and arguments but a new sequence number, as the Linux client retransmits, gets
 *    the kept reply (not NFS3ERR_EXIST), sealed afresh for the new number, as knfsd's;
 *  - a context refused (INIT with a token that is none): a GSS-API failure in the init_res, no
 *    handle, and a line in the daemon's log saying so and why;
 *  - the nfsd_uc_gss_* families through the Prometheus client's parser, with HELP and TYPE. */
#include "gss_it.h"
#include "scrape.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- who a principal is ---- */

/* CREATE of name in the export path by cred's principal (krb5i), then GETATTR of it: its owner
 * in *uid, *gid, which the file on disk must have too. */
static void owner_of_new_file(struct gss_env *e, gss_cred_id_t cred, const char *path,
                              const char *name, uint32_t *uid, uint32_t *gid)
{
	struct rn_fh root, f;
	struct rg_ctx c;
	struct xb plain;
	struct rg_reply rep;
	struct stat st;
	char disk[PATH_MAX + 64];
	int fd;

	mnt_fh(e, path, 0, &root);
	fd = connect_to(e->port);
	establish_as(cred, fd, &c, NFS_PROG);
	create_file(fd, &c, &root, name, RG_INTEGRITY, &f);
	rn_enc_getattr(&plain, next_xid++, &f);
	gss_ok(fd, &c, &plain, RG_INTEGRITY, &rep);
	assert_int_equal(rn_dec_getattr_ids(&rep.r, uid, gid), 0);
	rg_reply_free(&rep);
	rg_ctx_free(&c);
	close(fd);
	snprintf(disk, sizeof(disk), "%s/%s", path, name);
	assert_int_equal(stat(disk, &st), 0);
	if (st.st_uid != *uid || st.st_gid != *gid)
		fail_msg("%s: GETATTR says %u:%u, the disk %u:%u", disk, *uid, *gid,
		         (unsigned)st.st_uid, (unsigned)st.st_gid);
}

static void expect_owner(struct gss_env *e, gss_cred_id_t cred, const char *path,
                         const char *name, uint32_t want_uid, uint32_t want_gid, const char *who)
{
	uint32_t uid = UINT32_MAX, gid = UINT32_MAX;

	owner_of_new_file(e, cred, path, name, &uid, &gid);
	if (uid != want_uid || gid != want_gid)
		fail_msg("a file CREATEd by %s is owned by %u:%u, want %u:%u", who, uid, gid, want_uid,
		         want_gid);
}

/* The principal named as a local user (daemon: uid 1) is that user, its uid and primary gid, on
 * the root_squash export (squashing is for root only). */
void test_map_local_user(void **state)
{
	struct gss_env *e = *state;
	struct passwd *pw;

	if (e->external)
		skip();
	pw = getpwnam(e->local_user);
	if (pw == NULL)
		fail_msg("no local user %s (with_kdc.sh chose it)", e->local_user);
	assert_true(pw->pw_uid != 0 && pw->pw_uid != 65534 && pw->pw_uid != GSS_IT_ANONUID);
	expect_owner(e, e->local_cred, e->squash, "by-local-user", pw->pw_uid, pw->pw_gid,
	             e->local_user);
}

/* alice, whom no local user is named for, is the export's anonymous user (anonuid=6001,
 * anongid=6002), on the no_root_squash export too. */
void test_map_unknown_user(void **state)
{
	struct gss_env *e = *state;

	if (e->external)
		skip();
	if (getpwnam("alice") != NULL) {
		print_message("this host has a user alice: her principal maps to her\n");
		skip();
	}
	expect_owner(e, e->cred, e->squash, "by-alice", GSS_IT_ANONUID, GSS_IT_ANONGID, "alice");
	expect_owner(e, e->cred, e->nosquash, "by-alice", GSS_IT_ANONUID, GSS_IT_ANONGID,
	             "alice (no_root_squash)");
}

/* host/localhost is root, squashed to the anonymous user by root_squash ... */
void test_map_machine_squashed(void **state)
{
	struct gss_env *e = *state;

	if (e->external)
		skip();
	expect_owner(e, e->machine_cred, e->squash, "by-machine", GSS_IT_ANONUID, GSS_IT_ANONGID,
	             "host/localhost (root_squash)");
}

/* ... and root itself with no_root_squash. */
void test_map_machine_no_root_squash(void **state)
{
	struct gss_env *e = *state;

	if (e->external)
		skip();
	expect_owner(e, e->machine_cred, e->nosquash, "by-machine", 0, 0,
	             "host/localhost (no_root_squash)");
}

/* ---- the duplicate request cache ---- */

static long long drc_hits(const struct gss_env *e)
{
	char *text;
	long long n;

	if (e->external)
		return 0;
	text = scrape(e->metrics_port);
	n = scrape_value(text, "nfsd_uc_drc_hits_total");
	free(text);
	assert_true(n >= 0);      /* the cache is on: reply_cache_entries' default */
	return n;
}

/* The same call as *call (its xid and arguments, plain) with the next sequence number: the
 * kept reply, whose verifier is the MIC of the new number and whose body is sealed with it
 * (rg_reply_good checks both against the call sent), equal to first's. */
static void retransmit(int fd, struct rg_ctx *c, const struct xb *plain, struct rg_call *call,
                       const struct rg_reply *first)
{
	uint32_t seq = call->p.seq, xid = call->p.xid;
	struct rg_reply again;
	struct rn_fh fh1, fh2;
	int st;

	assert_int_equal(rg_wrap(c, plain, call->p.service, call), 0);
	assert_int_equal(call->p.xid, xid);
	assert_true(call->p.seq > seq);
	if (rg_exchange(fd, c, call, &again) < 0)
		fail_msg("the retransmission (seq %u): no reply", call->p.seq);
	if (!rg_reply_good(&again))
		fail_msg("the retransmission (seq %u, first sent as %u): %s (want the kept reply, "
		         "verifier and body of seq %u)", call->p.seq, seq, rg_describe(&again),
		         call->p.seq);
	st = rn_dec_create(&again.r, &fh2);
	if (st != 0)
		fail_msg("the retransmission: NFS status %d (want 0: the kept reply, not a second "
		         "CREATE)", st);
	assert_int_equal(rn_dec_create(&first->r, &fh1), 0);
	assert_int_equal(fh1.len, fh2.len);
	assert_memory_equal(fh1.data, fh2.data, fh1.len);
	assert_int_equal(again.r.body_len, first->r.body_len);
	assert_memory_equal(again.r.body, first->r.body, first->r.body_len);
	rg_reply_free(&again);
}

/* A CREATE (GUARDED) with service, then the same call (xid, arguments) with a new sequence
 * number, as Linux retransmits: the kept reply, sealed for the new number; one cache hit. */
static void drc_retransmit(struct gss_env *e, uint32_t service, const char *name)
{
	struct gss_counts before, want = { .contexts = 1, .made = 1 };
	struct rn_fh root;
	struct xb plain;
	struct rg_ctx c;
	struct rg_reply first;
	struct rg_call *call = malloc(sizeof(*call));
	long long hits;
	int fd;

	assert_non_null(call);
	mnt_fh(e, e->both, 0, &root);
	gss_counts_read(e, &before);
	hits = drc_hits(e);
	fd = connect_to(e->port);
	establish(e, fd, &c, NFS_PROG);
	rn_enc_create_how(&plain, next_xid++, &root, name, RN_GUARDED);
	assert_int_equal(rg_wrap(&c, &plain, service, call), 0);
	call_ok(fd, &c, call, &first);
	assert_int_equal(rn_dec_status(&first.r), 0);
	retransmit(fd, &c, &plain, call, &first);
	rg_reply_free(&first);
	rg_ctx_free(&c);
	close(fd);
	free(call);
	want.calls[service - 1] = 2;
	gss_counts_expect(e, &before, want, name);
	assert_int_equal(drc_hits(e) - hits, e->external ? 0 : 1);
}

void test_drc_krb5i(void **state)
{
	drc_retransmit(*state, RG_INTEGRITY, "drc-krb5i");
}

void test_drc_krb5p(void **state)
{
	drc_retransmit(*state, RG_PRIVACY, "drc-krb5p");
}

/* ---- a refused context ---- */

#define REFUSED_LINE "RPCSEC_GSS context from 127.0.0.1 refused: "

/* The daemon's line about a refused context past from (it may come a moment after the reply). */
static char *refused_line(const struct gss_env *e, long from)
{
	char *line = NULL;

	for (int i = 0; i < 100 && line == NULL; i++) {
		line = it_log_find(&e->t, from, REFUSED_LINE);
		if (line == NULL)
			it_sleep_ms(20);
	}
	return line;
}

/* INIT carrying token on fd: an init_res of a GSS-API failure, no handle, an AUTH_NONE verifier
 * (no MIC of a window: there is none); the log's line says why in the GSS-API's words. */
static void refused(struct gss_env *e, int fd, const void *token, size_t len, const char *what)
{
	struct rg_init_result res;
	char err[512], words[128], *line;
	long from = e->external ? 0 : it_log_size(&e->t);

	if (rg_init_raw(fd, next_xid++, NFS_PROG, 3, token, len, &res, err, sizeof(err)) < 0)
		fail_msg("%s: %s", what, err);
	if (!GSS_ERROR(res.major) || res.handle_len != 0 || res.verf_flavor != 0)
		fail_msg("%s: major 0x%x minor %u, a handle of %u bytes, verifier flavor %u (want a "
		         "failure, no handle, AUTH_NONE)", what, res.major, res.minor, res.handle_len,
		         res.verf_flavor);
	if (e->external)
		return;
	line = refused_line(e, from);
	if (line == NULL)
		fail_msg("%s: no \"%s\" in the daemon's log", what, REFUSED_LINE);
	print_message("%s: %s", what, strstr(line, REFUSED_LINE));
	rg_major_words(res.major, words, sizeof(words));
	if (words[0] == '\0' || strstr(line, words) == NULL)
		fail_msg("%s: the log does not say why (major 0x%x, \"%s\"): %s", what, res.major,
		         words, line);
	free(line);
}

/* INIT with bytes that are no GSS-API token, then with a krb5 token's framing (RFC 2743 3.1: the
 * krb5 OID, an AP-REQ's token id) around garbage: both refused, and nothing held. The log says
 * one line a second of these: the second waits for the next second. */
void test_refused_context(void **state)
{
	static const uint8_t framing[] = { 0x60, 0x25, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7,
	                                   0x12, 0x01, 0x02, 0x02, 0x01, 0x00 };
	struct gss_env *e = *state;
	struct gss_counts before;
	uint8_t garbage[48], krb5_framed[sizeof(framing) + 24];
	int fd;

	_Static_assert(sizeof(krb5_framed) - 2 == 0x25, "the framing's length is the token's");
	for (size_t i = 0; i < sizeof(garbage); i++)
		garbage[i] = (uint8_t)(0xa5 ^ (i * 29));
	memcpy(krb5_framed, framing, sizeof(framing));
	memcpy(krb5_framed + sizeof(framing), garbage, sizeof(krb5_framed) - sizeof(framing));
	gss_counts_read(e, &before);
	fd = connect_to(e->port);
	refused(e, fd, garbage, sizeof(garbage), "garbage");
	it_sleep_ms(1100);
	refused(e, fd, krb5_framed, sizeof(krb5_framed), "a krb5 token of garbage");
	close(fd);
	gss_counts_expect(e, &before, (struct gss_counts){ .refused = 2 }, "refused contexts");
}

/* ---- the counters' text ---- */

/* After the tests above, every RPCSEC_GSS family is there with its HELP and TYPE for the
 * Prometheus client's parser (check_metrics.py), and each counter has moved. */
void test_counters_text(void **state)
{
	static const char *const counters[] = {
		"contexts_made", "contexts_refused", "calls_krb5", "calls_krb5i", "calls_krb5p",
		"unknown_contexts", "bad_headers", "bad_bodies", "sequence_drops"
	};
	struct gss_env *e = *state;
	char require[1024] = "nfsd_uc_gss_contexts:gauge", series[128];
	size_t n = strlen(require);
	char *text;

	if (e->external)
		skip();
	text = scrape(e->metrics_port);
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		n += (size_t)snprintf(require + n, sizeof(require) - n, " nfsd_uc_gss_%s:counter",
		                      counters[i]);
		assert_true(n < sizeof(require));
		snprintf(series, sizeof(series), "nfsd_uc_gss_%s_total", counters[i]);
		if (scrape_value(text, series) <= 0)
			fail_msg("%s is %lld after every test", series, scrape_value(text, series));
	}
	scrape_check_text(text, require);
	free(text);
}
