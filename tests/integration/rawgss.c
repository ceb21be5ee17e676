/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A raw RPCSEC_GSS client on MIT's GSS-API. See rawgss.h. */
#include "rawgss.h"

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RG_FLAVOR 6               /* RPCSEC_GSS */
#define RG_REC_CAP (1u << 20)
#define RG_WANT_FLAGS (GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG)

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* The GSS-API's own words for major/minor. */
static void gss_words(OM_uint32 major, OM_uint32 minor, char *out, size_t len)
{
	OM_uint32 m, ctx = 0;
	gss_buffer_desc a = GSS_C_EMPTY_BUFFER, b = GSS_C_EMPTY_BUFFER;

	gss_display_status(&m, major, GSS_C_GSS_CODE, GSS_C_NO_OID, &ctx, &a);
	ctx = 0;
	gss_display_status(&m, minor, GSS_C_MECH_CODE, (gss_OID)gss_mech_krb5, &ctx, &b);
	snprintf(out, len, "%.*s (%.*s)", (int)a.length, a.value ? (char *)a.value : "",
	         (int)b.length, b.value ? (char *)b.value : "");
	gss_release_buffer(&m, &a);
	gss_release_buffer(&m, &b);
}

int rg_cred_password(const char *user, const char *password, gss_cred_id_t *cred, char *err,
                     size_t errlen)
{
	OM_uint32 major, minor;
	gss_buffer_desc ub = { strlen(user), (void *)user }, pb = { strlen(password), (void *)password };
	gss_OID_set_desc mechs = { 1, (gss_OID)gss_mech_krb5 };
	gss_name_t name;
	char words[256];

	major = gss_import_name(&minor, &ub, GSS_C_NT_USER_NAME, &name);
	if (major == GSS_S_COMPLETE) {
		major = gss_acquire_cred_with_password(&minor, name, &pb, 0, &mechs, GSS_C_INITIATE,
		                                       cred, NULL, NULL);
		gss_release_name(&minor, &name);
	}
	if (major == GSS_S_COMPLETE)
		return 0;
	gss_words(major, minor, words, sizeof(words));
	return fail(err, errlen, "%s's credential: %s", user, words);
}

/* ---- replies ---- */

/* A reply's header, and its verifier's flavor and bytes (pointing into rec). */
struct hdr {
	struct raw_reply r;
	uint32_t verf_flavor;
	const uint8_t *verf;
	uint32_t verf_len;
};

static int parse(const uint8_t *rec, size_t len, struct hdr *h)
{
	memset(h, 0, sizeof(*h));
	if (raw_parse_reply(rec, len, &h->r) < 0)
		return -1;
	if (h->r.reply_stat == 0) {   /* raw_parse_reply checked that the verifier fits */
		h->verf_flavor = get_u32(rec + 12);
		h->verf_len = get_u32(rec + 16);
		h->verf = rec + 20;
	}
	return 0;
}

/* Receive the reply to xid into a new buffer *rec: as raw_recv_record, and -1 when it is no
 * well-formed reply to xid. */
static int recv_hdr(int fd, uint32_t xid, uint8_t **rec, struct hdr *h, int timeout_ms)
{
	ssize_t n;

	*rec = malloc(RG_REC_CAP);
	if (*rec == NULL)
		return -1;
	n = raw_recv_record(fd, *rec, RG_REC_CAP, timeout_ms);
	if (n < 0)
		return (int)n;
	if (parse(*rec, (size_t)n, h) < 0 || h->r.xid != xid)
		return -1;
	return 0;
}

static bool mic_ok(gss_ctx_id_t ctx, const void *msg, size_t len, const void *mic, size_t mic_len)
{
	OM_uint32 minor;
	gss_buffer_desc m = { len, (void *)msg }, t = { mic_len, (void *)mic };

	return gss_verify_mic(&minor, ctx, &m, &t, NULL) == GSS_S_COMPLETE;
}

static bool mic_of_u32_ok(gss_ctx_id_t ctx, uint32_t n, const void *mic, size_t mic_len)
{
	uint8_t be[4];

	put_be32(be, n);
	return mic_ok(ctx, be, 4, mic, mic_len);
}

/* ---- making a context ---- */

/* rpc_gss_init_res, pointing into the reply. */
struct init_res {
	const uint8_t *handle, *token;
	uint32_t handle_len, token_len;
	uint32_t major, minor, window;
};

static int parse_init_res(const struct raw_reply *r, struct init_res *res)
{
	const uint8_t *p = r->body, *end = r->body + r->body_len;

	if (end - p < 4)
		return -1;
	res->handle_len = get_u32(p);
	res->handle = p + 4;
	if (res->handle_len > RG_HANDLE_MAX || (size_t)(end - p) < 4 + pad4(res->handle_len) + 16)
		return -1;
	p += 4 + pad4(res->handle_len);
	res->major = get_u32(p);
	res->minor = get_u32(p + 4);
	res->window = get_u32(p + 8);
	res->token_len = get_u32(p + 12);
	res->token = p + 16;
	p += 16;
	return (size_t)(end - p) >= pad4(res->token_len) ? 0 : -1;
}

/* Send one INIT or CONTINUE_INIT carrying token, and receive its reply into *rec / *res. */
static int init_step(int fd, struct rg_ctx *c, uint32_t prog, uint32_t vers, const gss_buffer_desc *token,
                     uint8_t **rec, struct hdr *h, struct init_res *res, char *err, size_t errlen)
{
	struct xb *b = calloc(1, sizeof(*b));
	struct xb cred = { .len = 0 };
	uint32_t xid = c->next_xid++;
	int rc;

	if (b == NULL)
		return fail(err, errlen, "out of memory");
	xb_u32(&cred, 1);
	xb_u32(&cred, c->handle_len ? RG_CONTINUE_INIT : RG_INIT);
	xb_u32(&cred, 0);
	xb_u32(&cred, RG_NONE);
	xb_opaque(&cred, c->handle, c->handle_len);
	xb_call(b, xid, 2, prog, vers, 0, RG_FLAVOR, &cred);   /* verifier AUTH_NONE */
	xb_opaque(b, token->value, token->length);
	rc = raw_send_record(fd, b->buf, b->len);
	free(b);
	if (rc < 0)
		return fail(err, errlen, "INIT: send failed");
	rc = recv_hdr(fd, xid, rec, h, 10000);
	if (rc < 0)
		return fail(err, errlen, "INIT: %s", rc == -2 ? "no reply in 10 s" : "no reply (closed)");
	if (h->r.reply_stat != 0 || h->r.accept_stat != 0)
		return fail(err, errlen, "INIT: refused: reply_stat %u accept_stat %u auth_stat %u",
		            h->r.reply_stat, h->r.accept_stat, h->r.auth_stat);
	if (parse_init_res(&h->r, res) < 0)
		return fail(err, errlen, "INIT: malformed rpc_gss_init_res");
	if (res->major != GSS_S_COMPLETE && res->major != GSS_S_CONTINUE_NEEDED)
		return fail(err, errlen, "INIT: the server's GSS-API said major 0x%x minor %u", res->major,
		            res->minor);
	memcpy(c->handle, res->handle, res->handle_len);
	c->handle_len = res->handle_len;
	return 0;
}

static OM_uint32 init_sec(struct rg_ctx *c, gss_cred_id_t cred, gss_name_t target, const void *in,
                          size_t in_len, gss_buffer_desc *out, OM_uint32 *minor)
{
	gss_buffer_desc ib = { in_len, (void *)in };

	return gss_init_sec_context(minor, cred, &c->gss, target, (gss_OID)gss_mech_krb5,
	                            RG_WANT_FLAGS, 0, GSS_C_NO_CHANNEL_BINDINGS,
	                            c->gss == GSS_C_NO_CONTEXT ? GSS_C_NO_BUFFER : &ib, NULL, out,
	                            &c->flags, NULL);
}

/* The rounds: our token, the server's answer, until the server says COMPLETE; then its last
 * token (mutual authentication), and its verifier, the MIC of the window. */
static int handshake(int fd, struct rg_ctx *c, gss_cred_id_t cred, gss_name_t target, uint32_t prog,
                     uint32_t vers, char *err, size_t errlen)
{
	OM_uint32 minor, major, m;
	gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
	char words[256];

	major = init_sec(c, cred, target, NULL, 0, &out, &minor);
	for (int round = 0; round < 8; round++) {
		uint8_t *rec = NULL;
		struct hdr h;
		struct init_res res;
		int rc;

		if (GSS_ERROR(major)) {
			gss_words(major, minor, words, sizeof(words));
			return fail(err, errlen, "gss_init_sec_context: %s", words);
		}
		rc = init_step(fd, c, prog, vers, &out, &rec, &h, &res, err, errlen);
		gss_release_buffer(&m, &out);
		if (rc == 0 && major == GSS_S_CONTINUE_NEEDED)
			major = init_sec(c, cred, target, res.token, res.token_len, &out, &minor);
		if (rc == 0 && res.major == GSS_S_COMPLETE) {
			c->window = res.window;
			if (GSS_ERROR(major) || major != GSS_S_COMPLETE || out.length != 0)
				rc = fail(err, errlen, "INIT: the server is done, we are not (major 0x%x)", major);
			else if (h.verf_flavor != RG_FLAVOR ||
			         !mic_of_u32_ok(c->gss, res.window, h.verf, h.verf_len))
				rc = fail(err, errlen, "INIT: the verifier is no MIC of the window %u", res.window);
			free(rec);
			gss_release_buffer(&m, &out);
			return rc;
		}
		free(rec);
		if (rc < 0)
			return rc;
	}
	gss_release_buffer(&m, &out);
	return fail(err, errlen, "INIT: no context after 8 rounds");
}

int rg_establish(int fd, struct rg_ctx *c, gss_cred_id_t cred, const char *service, uint32_t prog,
                 uint32_t vers, char *err, size_t errlen)
{
	static uint32_t xid_base;
	OM_uint32 major, minor;
	gss_buffer_desc sb = { strlen(service), (void *)service };
	gss_name_t target;
	int rc;

	memset(c, 0, sizeof(*c));
	c->gss = GSS_C_NO_CONTEXT;
	c->next_seq = 1;
	if (xid_base == 0)
		xid_base = ((uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16)) & 0x7fffffffu;
	xid_base += 0x10000;           /* each context's calls have xids of their own */
	c->next_xid = xid_base;
	major = gss_import_name(&minor, &sb, GSS_C_NT_HOSTBASED_SERVICE, &target);
	if (major != GSS_S_COMPLETE)
		return fail(err, errlen, "gss_import_name(%s) failed", service);
	rc = handshake(fd, c, cred, target, prog, vers, err, errlen);
	gss_release_name(&minor, &target);
	if (rc == 0 && (c->flags & RG_WANT_FLAGS) != RG_WANT_FLAGS)
		rc = fail(err, errlen, "the context lacks mutual, integrity or confidentiality (flags 0x%x)",
		          c->flags);
	if (rc == 0 && (c->window == 0 || c->handle_len == 0))
		rc = fail(err, errlen, "INIT: window %u, handle of %u bytes", c->window, c->handle_len);
	if (rc < 0)
		rg_ctx_free(c);
	return rc;
}

void rg_ctx_free(struct rg_ctx *c)
{
	OM_uint32 minor;

	if (c->gss != GSS_C_NO_CONTEXT)
		gss_delete_sec_context(&minor, &c->gss, GSS_C_NO_BUFFER);
	c->gss = GSS_C_NO_CONTEXT;
}

/* ---- calls ---- */

static int room(const struct xb *b, size_t n)
{
	return b->len + n <= sizeof(b->buf) ? 0 : -1;
}

/* The credential and the verifier, the MIC of everything before it. */
static int put_auth(struct rg_ctx *c, struct rg_call *call)
{
	struct xb cred = { .len = 0 };
	OM_uint32 minor;
	gss_buffer_desc msg, mic;

	xb_u32(&cred, 1);
	xb_u32(&cred, call->gss_proc);
	xb_u32(&cred, call->seq);
	xb_u32(&cred, call->service);
	xb_opaque(&cred, c->handle, c->handle_len);
	xb_u32(&call->b, RG_FLAVOR);
	call->seq_off = call->b.len + 4 + 8;
	xb_opaque(&call->b, cred.buf, cred.len);
	call->hdr_len = call->b.len;
	msg = (gss_buffer_desc){ call->hdr_len, call->b.buf };
	if (gss_get_mic(&minor, c->gss, GSS_C_QOP_DEFAULT, &msg, &mic) != GSS_S_COMPLETE)
		return -1;
	xb_u32(&call->b, RG_FLAVOR);
	call->verf_off = call->b.len + 4;
	call->verf_len = mic.length;
	xb_opaque(&call->b, mic.value, mic.length);
	gss_release_buffer(&minor, &mic);
	return 0;
}

/* rpc_gss_integ_data or rpc_gss_priv_data around seq_num and args. */
static int put_wrapped(struct rg_ctx *c, struct rg_call *call, const void *args, size_t args_len)
{
	OM_uint32 minor, major;
	uint8_t *data = malloc(args_len + 4);
	gss_buffer_desc in = { args_len + 4, data }, out = GSS_C_EMPTY_BUFFER;
	int conf = 0, rc = -1;

	if (data == NULL)
		return -1;
	put_be32(data, call->seq);
	if (args_len)
		memcpy(data + 4, args, args_len);
	if (call->service == RG_INTEGRITY) {
		major = gss_get_mic(&minor, c->gss, GSS_C_QOP_DEFAULT, &in, &out);
		if (major == GSS_S_COMPLETE && room(&call->b, 12 + in.length + pad4(out.length)) == 0) {
			call->databody_off = call->b.len + 4;
			xb_opaque(&call->b, in.value, in.length);
			call->mic_off = call->b.len + 4;
			xb_opaque(&call->b, out.value, out.length);
			rc = 0;
		}
	} else {
		major = gss_wrap(&minor, c->gss, 1, GSS_C_QOP_DEFAULT, &in, &conf, &out);
		if (major == GSS_S_COMPLETE && conf && room(&call->b, 8 + pad4(out.length)) == 0) {
			call->wrap_off = call->b.len + 4;
			xb_opaque(&call->b, out.value, out.length);
			rc = 0;
		}
	}
	gss_release_buffer(&minor, &out);
	free(data);
	return rc;
}

int rg_encode(struct rg_ctx *c, struct rg_call *call, uint32_t gss_proc, uint32_t service,
              uint32_t seq, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
              const void *args, size_t args_len)
{
	call->b.len = 0;
	call->xid = xid;
	call->proc = proc;
	call->gss_proc = gss_proc;
	call->service = service;
	call->seq = seq;
	call->seq_off = call->verf_off = call->verf_len = call->body_off = 0;
	call->databody_off = call->mic_off = call->wrap_off = 0;
	if (args_len % 4 != 0 || room(&call->b, 256 + c->handle_len + args_len) < 0)
		return -1;
	xb_u32(&call->b, xid);
	xb_u32(&call->b, 0);       /* CALL */
	xb_u32(&call->b, 2);
	xb_u32(&call->b, prog);
	xb_u32(&call->b, vers);
	xb_u32(&call->b, proc);
	if (put_auth(c, call) < 0)
		return -1;
	call->body_off = call->b.len;
	if (gss_proc != RG_DATA || service == RG_NONE) {
		xb_bytes(&call->b, args, args_len);
		return 0;
	}
	return put_wrapped(c, call, args, args_len);
}

int rg_wrap(struct rg_ctx *c, const struct xb *plain, uint32_t service, struct rg_call *call)
{
	const uint8_t *p = plain->buf;
	size_t off;

	if (plain->len < 40)
		return -1;
	off = 32 + pad4(get_u32(p + 28));            /* past the credential */
	if (off + 8 > plain->len)
		return -1;
	off += 8 + pad4(get_u32(p + off + 4));       /* past the verifier */
	if (off > plain->len)
		return -1;
	return rg_encode(c, call, RG_DATA, service, c->next_seq++, get_u32(p), get_u32(p + 12),
	                 get_u32(p + 16), get_u32(p + 20), p + off, plain->len - off);
}

int rg_null(struct rg_ctx *c, uint32_t prog, uint32_t vers, uint32_t service, struct rg_call *call)
{
	return rg_encode(c, call, RG_DATA, service, c->next_seq++, c->next_xid++, prog, vers, 0, NULL, 0);
}

int rg_destroy_call(struct rg_ctx *c, uint32_t prog, uint32_t vers, struct rg_call *call)
{
	return rg_encode(c, call, RG_DESTROY, RG_NONE, c->next_seq++, c->next_xid++, prog, vers, 0,
	                 NULL, 0);
}

int rg_send(int fd, const struct rg_call *call)
{
	return raw_send_record(fd, call->b.buf, call->b.len);
}

/* ---- checking a reply ---- */

/* Integrity: databody_integ (seq_num, results) and its checksum. */
static bool unwrap_integ(struct rg_ctx *c, const struct rg_call *call, struct rg_reply *rep)
{
	const uint8_t *p = rep->r.body, *end = p + rep->r.body_len;
	uint32_t dlen, mlen;

	if (end - p < 8 || (dlen = get_u32(p)) % 4 != 0 || dlen < 4 || (size_t)(end - p) < 8 + dlen)
		return false;
	mlen = get_u32(p + 4 + dlen);
	if ((size_t)(end - p) < 8 + dlen + pad4(mlen) ||
	    !mic_ok(c->gss, p + 4, dlen, p + 8 + dlen, mlen) || get_u32(p + 4) != call->seq)
		return false;
	rep->plain = malloc(dlen);
	if (rep->plain == NULL)
		return false;
	memcpy(rep->plain, p + 8, dlen - 4);
	rep->r.body = rep->plain;
	rep->r.body_len = dlen - 4;
	return true;
}

/* Privacy: databody_priv, unwrapped with confidentiality, then seq_num and results. */
static bool unwrap_priv(struct rg_ctx *c, const struct rg_call *call, struct rg_reply *rep)
{
	const uint8_t *p = rep->r.body, *end = p + rep->r.body_len;
	OM_uint32 minor, major;
	gss_buffer_desc in, out = GSS_C_EMPTY_BUFFER;
	int conf = 0;
	bool ok = false;

	if (end - p < 4 || (size_t)(end - p) < 4 + pad4(get_u32(p)))
		return false;
	in = (gss_buffer_desc){ get_u32(p), (void *)(p + 4) };
	major = gss_unwrap(&minor, c->gss, &in, &out, &conf, NULL);
	if (major == GSS_S_COMPLETE && conf && out.length >= 4 &&
	    get_u32(out.value) == call->seq && (rep->plain = malloc(out.length)) != NULL) {
		memcpy(rep->plain, (uint8_t *)out.value + 4, out.length - 4);
		rep->r.body = rep->plain;
		rep->r.body_len = out.length - 4;
		ok = true;
	}
	gss_release_buffer(&minor, &out);
	return ok;
}

int rg_recv(int fd, struct rg_ctx *c, const struct rg_call *call, struct rg_reply *rep,
            int timeout_ms)
{
	struct hdr h;
	int rc;

	memset(rep, 0, sizeof(*rep));
	rc = recv_hdr(fd, call->xid, &rep->rec, &h, timeout_ms);
	if (rc < 0) {
		rg_reply_free(rep);
		return rc;
	}
	rep->r = h.r;
	rep->verf_flavor = h.verf_flavor;
	rep->verf_ok = h.r.reply_stat == 0 && h.verf_flavor == RG_FLAVOR &&
	               mic_of_u32_ok(c->gss, call->seq, h.verf, h.verf_len);
	rep->body_ok = true;
	if (h.r.reply_stat != 0 || h.r.accept_stat != 0 || call->gss_proc != RG_DATA)
		return 0;
	if (call->service == RG_INTEGRITY)
		rep->body_ok = unwrap_integ(c, call, rep);
	else if (call->service == RG_PRIVACY)
		rep->body_ok = unwrap_priv(c, call, rep);
	return 0;
}

int rg_exchange(int fd, struct rg_ctx *c, const struct rg_call *call, struct rg_reply *rep)
{
	if (rg_send(fd, call) < 0) {
		memset(rep, 0, sizeof(*rep));
		return -1;
	}
	return rg_recv(fd, c, call, rep, 10000);
}

bool rg_reply_good(const struct rg_reply *rep)
{
	return rep->r.reply_stat == 0 && rep->r.accept_stat == 0 && rep->verf_ok && rep->body_ok;
}

const char *rg_describe(const struct rg_reply *rep)
{
	static char line[160];

	if (rep->r.reply_stat == 0)
		snprintf(line, sizeof(line), "accepted, accept_stat %u, verifier flavor %u (%s), body %s",
		         rep->r.accept_stat, rep->verf_flavor, rep->verf_ok ? "MIC good" : "not good",
		         rep->body_ok ? "good" : "bad");
	else
		snprintf(line, sizeof(line), "denied, reject_stat %u, auth_stat %u", rep->r.reject_stat,
		         rep->r.auth_stat);
	return line;
}

void rg_reply_free(struct rg_reply *rep)
{
	free(rep->rec);
	free(rep->plain);
	rep->rec = rep->plain = NULL;
}
