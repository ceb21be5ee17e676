/* SPDX-License-Identifier: GPL-2.0-or-later */
/* it-gss's shared part. See gss_it.h. */
#include "gss_it.h"
#include "scrape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint32_t next_xid = 0x47000000;

/* ---- connections, contexts, calls ---- */

int connect_to(uint16_t port)
{
	int fd = raw_connect(port, NULL);

	assert_true(fd >= 0);
	return fd;
}

void establish_as(gss_cred_id_t cred, int fd, struct rg_ctx *c, uint32_t prog)
{
	char err[512];

	if (rg_establish(fd, c, cred, SVC, prog, 3, err, sizeof(err)) < 0)
		fail_msg("no RPCSEC_GSS context: %s", err);
}

void establish(struct gss_env *e, int fd, struct rg_ctx *c, uint32_t prog)
{
	establish_as(e->cred, fd, c, prog);
}

void call_ok(int fd, struct rg_ctx *c, const struct rg_call *call, struct rg_reply *rep)
{
	if (rg_exchange(fd, c, call, rep) < 0)
		fail_msg("service %u, procedure %u: no reply", call->p.service, call->p.proc);
	if (!rg_reply_good(rep))
		fail_msg("service %u, procedure %u: %s", call->p.service, call->p.proc, rg_describe(rep));
}

void gss_ok(int fd, struct rg_ctx *c, const struct xb *plain, uint32_t service,
            struct rg_reply *rep)
{
	struct rg_call *call = malloc(sizeof(*call));

	assert_non_null(call);
	assert_int_equal(rg_wrap(c, plain, service, call), 0);
	call_ok(fd, c, call, rep);
	free(call);
}

/* GETATTR of fh through c, which must succeed with NFS3_OK. */
void getattr_ok(int fd, struct rg_ctx *c, const struct rn_fh *fh, uint32_t service)
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
void expect_no_reply(int fd, struct rg_ctx *c, const struct rg_call *call, const char *what)
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
void expect_auth_error(int fd, struct rg_ctx *c, const struct rg_call *call, uint32_t want,
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
void expect_garbage(int fd, struct rg_ctx *c, const struct rg_call *call, const char *what)
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
int dec_mnt(const struct raw_reply *r, struct rn_fh *fh, uint32_t *flavors, uint32_t *n)
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
void mnt(struct gss_env *e, const char *path, uint32_t service, struct rn_fh *fh,
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

void mnt_fh(struct gss_env *e, const char *path, uint32_t service, struct rn_fh *fh)
{
	uint32_t flavors[16], n;

	mnt(e, path, service, fh, flavors, &n);
}

void create_file(int fd, struct rg_ctx *c, const struct rn_fh *dir, const char *name,
                 uint32_t service, struct rn_fh *fh)
{
	struct xb plain;
	struct rg_reply rep;

	rn_enc_create(&plain, next_xid++, dir, name);
	gss_ok(fd, c, &plain, service, &rep);
	assert_int_equal(rn_dec_create(&rep.r, fh), 0);
	rg_reply_free(&rep);
}

/* ---- the daemon's counters ---- */

#define GSS_FAMILY(name) "nfsd_uc_gss_" name

void gss_counts_read(const struct gss_env *e, struct gss_counts *c)
{
	char *text;

	memset(c, 0, sizeof(*c));
	if (e->external)
		return;
	text = scrape(e->metrics_port);
	c->contexts = scrape_value(text, GSS_FAMILY("contexts"));
	c->made = scrape_value(text, GSS_FAMILY("contexts_made_total"));
	c->refused = scrape_value(text, GSS_FAMILY("contexts_refused_total"));
	c->calls[0] = scrape_value(text, GSS_FAMILY("calls_krb5_total"));
	c->calls[1] = scrape_value(text, GSS_FAMILY("calls_krb5i_total"));
	c->calls[2] = scrape_value(text, GSS_FAMILY("calls_krb5p_total"));
	c->unknown = scrape_value(text, GSS_FAMILY("unknown_contexts_total"));
	c->bad_headers = scrape_value(text, GSS_FAMILY("bad_headers_total"));
	c->bad_bodies = scrape_value(text, GSS_FAMILY("bad_bodies_total"));
	c->seq_drops = scrape_value(text, GSS_FAMILY("sequence_drops_total"));
	free(text);
}

#define N_FIGURES 10

/* c's figures in the order of gss_counts_expect's names. */
static void figures(const struct gss_counts *c, long long out[N_FIGURES])
{
	const long long v[N_FIGURES] = { c->contexts, c->made, c->refused, c->calls[0], c->calls[1],
	                                 c->calls[2], c->unknown, c->bad_headers, c->bad_bodies,
	                                 c->seq_drops };

	memcpy(out, v, sizeof(v));
}

void gss_counts_expect(const struct gss_env *e, const struct gss_counts *before,
                       struct gss_counts want, const char *what)
{
	static const char *const name[N_FIGURES] = { "contexts", "contexts_made", "contexts_refused",
	                                             "calls_krb5", "calls_krb5i", "calls_krb5p",
	                                             "unknown_contexts", "bad_headers", "bad_bodies",
	                                             "sequence_drops" };
	struct gss_counts after;
	long long a[N_FIGURES], b[N_FIGURES], w[N_FIGURES];
	int wrong = 0;

	if (e->external)
		return;
	gss_counts_read(e, &after);
	figures(&after, a);
	figures(before, b);
	figures(&want, w);
	for (size_t i = 0; i < N_FIGURES; i++) {
		if (a[i] < 0 || b[i] < 0)
			fail_msg("%s: no nfsd_uc_gss_%s in the metrics", what, name[i]);
		if (a[i] - b[i] != w[i]) {
			print_error("%s: nfsd_uc_gss_%s moved by %lld, want %lld\n", what, name[i],
			            a[i] - b[i], w[i]);
			wrong++;
		}
	}
	if (wrong)
		fail_msg("%s: %d RPCSEC_GSS figure(s) wrong", what, wrong);
}

void session_open(struct gss_env *e, struct gss_session *s, const char *export)
{
	s->call = malloc(sizeof(*s->call));
	assert_non_null(s->call);
	gss_counts_read(e, &s->before);
	mnt_fh(e, export, 0, &s->root);
	s->fd = connect_to(e->port);
	establish(e, s->fd, &s->c, NFS_PROG);
}

void session_close(struct gss_env *e, struct gss_session *s, struct gss_counts want,
                   const char *what)
{
	rg_ctx_free(&s->c);
	close(s->fd);
	free(s->call);
	gss_counts_expect(e, &s->before, want, what);
}
