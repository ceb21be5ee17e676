/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A raw RPCSEC_GSS client on MIT's GSS-API. See rawgss.h. */
#include "rawgss.h"

#include "rpc/gss_krb5.h"

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

int rg_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* The GSS-API's first message for a status of type (GSS_C_GSS_CODE, GSS_C_MECH_CODE). */
static void display(OM_uint32 status, int type, char *out, size_t len)
{
	OM_uint32 m, ctx = 0;
	gss_buffer_desc b = GSS_C_EMPTY_BUFFER;

	gss_display_status(&m, status, type,
	                   type == GSS_C_MECH_CODE ? (gss_OID)gss_mech_krb5 : GSS_C_NO_OID, &ctx, &b);
	snprintf(out, len, "%.*s", (int)b.length, b.value ? (char *)b.value : "");
	gss_release_buffer(&m, &b);
}

/* The GSS-API's own words for major/minor. */
static void gss_words(OM_uint32 major, OM_uint32 minor, char *out, size_t len)
{
	char a[120], b[120];   /* both fit the callers' 256 */

	display(major, GSS_C_GSS_CODE, a, sizeof(a));
	display(minor, GSS_C_MECH_CODE, b, sizeof(b));
	snprintf(out, len, "%s (%s)", a, b);
}

void rg_major_words(uint32_t major, char *out, size_t len)
{
	display(major, GSS_C_GSS_CODE, out, len);
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
	return rg_errf(err, errlen, "%s's credential: %s", user, words);
}

int rg_cred_keytab(const char *principal, const char *keytab, gss_cred_id_t *cred, char *err,
                   size_t errlen)
{
	static unsigned n;
	OM_uint32 major, minor;
	gss_buffer_desc pb = { strlen(principal), (void *)principal };
	gss_OID_set_desc mechs = { 1, (gss_OID)gss_mech_krb5 };
	char ccache[64], words[256];
	gss_key_value_element_desc kv[2] = { { "client_keytab", keytab }, { "ccache", ccache } };
	gss_key_value_set_desc store = { 2, kv };
	gss_name_t name;

	snprintf(ccache, sizeof(ccache), "MEMORY:rawgss-%d-%u", (int)getpid(), n++);
	major = gss_import_name(&minor, &pb, (gss_OID)GSS_KRB5_NT_PRINCIPAL_NAME, &name);
	if (major == GSS_S_COMPLETE) {
		major = gss_acquire_cred_from(&minor, name, 0, &mechs, GSS_C_INITIATE, &store, cred,
		                              NULL, NULL);
		gss_release_name(&minor, &name);
	}
	if (major == GSS_S_COMPLETE)
		return 0;
	gss_words(major, minor, words, sizeof(words));
	return rg_errf(err, errlen, "%s's credential from %s: %s", principal, keytab, words);
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

/* Receive the reply to xid into a new buffer *rec: its length, as raw_recv_record, and -1 when
 * it is no well-formed reply to xid. */
static ssize_t recv_hdr(int fd, uint32_t xid, uint8_t **rec, struct hdr *h, int timeout_ms)
{
	ssize_t n;

	*rec = malloc(RG_REC_CAP);
	if (*rec == NULL)
		return -1;
	n = raw_recv_record(fd, *rec, RG_REC_CAP, timeout_ms);
	if (n < 0)
		return n;
	if (parse(*rec, (size_t)n, h) < 0 || h->r.xid != xid)
		return -1;
	return n;
}

static bool mic_ok(struct rg_ctx *c, const void *msg, size_t len, const void *mic, size_t mic_len)
{
	OM_uint32 minor;
	gss_buffer_desc m = { len, (void *)msg }, t = { mic_len, (void *)mic };

	if (c->own)
		return gss_krb5_verify_mic(c->own, msg, len, mic, mic_len) == 0;
	return gss_verify_mic(&minor, c->gss, &m, &t, NULL) == GSS_S_COMPLETE;
}

static bool mic_of_u32_ok(struct rg_ctx *c, uint32_t n, const void *mic, size_t mic_len)
{
	uint8_t be[4];

	put_u32(be, n);
	return mic_ok(c, be, 4, mic, mic_len);
}

/* c's MIC of msg into out (room for cap): its length, or -1. */
static int mic_make(struct rg_ctx *c, const void *msg, size_t len, uint8_t *out, size_t cap)
{
	OM_uint32 minor;
	gss_buffer_desc m = { len, (void *)msg }, mic;
	int n = -1;

	if (c->own)
		return gss_krb5_get_mic(c->own, msg, len, out, cap);
	if (gss_get_mic(&minor, c->gss, GSS_C_QOP_DEFAULT, &m, &mic) != GSS_S_COMPLETE)
		return -1;
	if (mic.length <= cap) {
		memcpy(out, mic.value, mic.length);
		n = (int)mic.length;
	}
	gss_release_buffer(&minor, &mic);
	return n;
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

/* Send one INIT (handle_len 0) or CONTINUE_INIT of handle with xid carrying token, and receive
 * its reply into *rec / *h / *res: 0 when it is accepted with SUCCESS and holds an
 * rpc_gss_init_res, whatever its major status. */
static int init_exchange(int fd, uint32_t xid, uint32_t prog, uint32_t vers, const uint8_t *handle,
                         uint32_t handle_len, const gss_buffer_desc *token, uint8_t **rec,
                         struct hdr *h, struct init_res *res, char *err, size_t errlen)
{
	struct xb *b = calloc(1, sizeof(*b));
	struct xb cred = { .len = 0 };
	int rc;

	if (b == NULL)
		return rg_errf(err, errlen, "out of memory");
	xb_u32(&cred, 1);
	xb_u32(&cred, handle_len ? RG_CONTINUE_INIT : RG_INIT);
	xb_u32(&cred, 0);
	xb_u32(&cred, RG_NONE);
	xb_opaque(&cred, handle, handle_len);
	xb_call(b, xid, 2, prog, vers, 0, RG_FLAVOR, &cred);   /* verifier AUTH_NONE */
	xb_opaque(b, token->value, token->length);
	rc = raw_send_record(fd, b->buf, b->len);
	free(b);
	if (rc < 0)
		return rg_errf(err, errlen, "INIT: send failed");
	if ((rc = (int)recv_hdr(fd, xid, rec, h, 10000)) < 0)
		return rg_errf(err, errlen, "INIT: %s", rc == -2 ? "no reply in 10 s" : "no reply (closed)");
	if (h->r.reply_stat != 0 || h->r.accept_stat != 0)
		return rg_errf(err, errlen, "INIT: refused: reply_stat %u accept_stat %u auth_stat %u",
		            h->r.reply_stat, h->r.accept_stat, h->r.auth_stat);
	if (parse_init_res(&h->r, res) < 0)
		return rg_errf(err, errlen, "INIT: malformed rpc_gss_init_res");
	return 0;
}

/* One step of making c: send token, take the server's handle; -1 unless it goes on or is done. */
static int init_step(int fd, struct rg_ctx *c, uint32_t prog, uint32_t vers,
                     const gss_buffer_desc *token, uint8_t **rec, struct hdr *h,
                     struct init_res *res, char *err, size_t errlen)
{
	if (init_exchange(fd, c->next_xid++, prog, vers, c->handle, c->handle_len, token, rec, h, res,
	                  err, errlen) < 0)
		return -1;
	if (res->major != GSS_S_COMPLETE && res->major != GSS_S_CONTINUE_NEEDED)
		return rg_errf(err, errlen, "INIT: the server's GSS-API said major 0x%x minor %u", res->major,
		            res->minor);
	memcpy(c->handle, res->handle, res->handle_len);
	c->handle_len = res->handle_len;
	return 0;
}

int rg_init_raw(int fd, uint32_t xid, uint32_t prog, uint32_t vers, const void *token,
                size_t token_len, struct rg_init_result *res, char *err, size_t errlen)
{
	gss_buffer_desc tb = { token_len, (void *)token };
	uint8_t *rec = NULL;
	struct hdr h;
	struct init_res ir;
	int rc = init_exchange(fd, xid, prog, vers, NULL, 0, &tb, &rec, &h, &ir, err, errlen);

	if (rc == 0)
		*res = (struct rg_init_result){ .handle_len = ir.handle_len, .major = ir.major,
		                                .minor = ir.minor, .window = ir.window,
		                                .token_len = ir.token_len,
		                                .verf_flavor = h.verf_flavor, .verf_len = h.verf_len };
	free(rec);
	return rc;
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
			return rg_errf(err, errlen, "gss_init_sec_context: %s", words);
		}
		rc = init_step(fd, c, prog, vers, &out, &rec, &h, &res, err, errlen);
		gss_release_buffer(&m, &out);
		if (rc == 0 && major == GSS_S_CONTINUE_NEEDED)
			major = init_sec(c, cred, target, res.token, res.token_len, &out, &minor);
		if (rc == 0 && res.major == GSS_S_COMPLETE) {
			c->window = res.window;
			if (GSS_ERROR(major) || major != GSS_S_COMPLETE || out.length != 0)
				rc = rg_errf(err, errlen, "INIT: the server is done, we are not (major 0x%x)", major);
			else if (h.verf_flavor != RG_FLAVOR ||
			         !mic_of_u32_ok(c, res.window, h.verf, h.verf_len))
				rc = rg_errf(err, errlen, "INIT: the verifier is no MIC of the window %u", res.window);
			free(rec);
			gss_release_buffer(&m, &out);
			return rc;
		}
		free(rec);
		if (rc < 0)
			return rc;
	}
	gss_release_buffer(&m, &out);
	return rg_errf(err, errlen, "INIT: no context after 8 rounds");
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
		return rg_errf(err, errlen, "gss_import_name(%s) failed", service);
	rc = handshake(fd, c, cred, target, prog, vers, err, errlen);
	gss_release_name(&minor, &target);
	if (rc == 0 && (c->flags & RG_WANT_FLAGS) != RG_WANT_FLAGS)
		rc = rg_errf(err, errlen, "the context lacks mutual, integrity or confidentiality (flags 0x%x)",
		          c->flags);
	if (rc == 0 && (c->window == 0 || c->handle_len == 0))
		rc = rg_errf(err, errlen, "INIT: window %u, handle of %u bytes", c->window, c->handle_len);
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
	gss_krb5_free(c->own);
	c->own = NULL;
}

int rg_ctx_own(struct rg_ctx *c)
{
	OM_uint32 minor;
	void *lucid = NULL;

	if (c->own)
		return 0;
	/* MIT's export deletes the context: from here on the tokens are ours or there are none */
	if (GSS_ERROR(gss_krb5_export_lucid_sec_context(&minor, &c->gss, 1, &lucid)))
		return -1;
	c->own = gss_krb5_from_lucid(lucid);
	gss_krb5_free_lucid_sec_context(&minor, lucid);
	return c->own ? 0 : -1;
}

/* ---- sealing a call ---- */

/* An XDR writer into the call's buffer; the caller has checked the room. */
static size_t put_u32_at(uint8_t *buf, size_t off, uint32_t v)
{
	put_u32(buf + off, v);
	return off + 4;
}

static size_t put_opaque_at(uint8_t *buf, size_t off, const void *p, size_t n)
{
	off = put_u32_at(buf, off, (uint32_t)n);
	if (n)
		memcpy(buf + off, p, n);
	memset(buf + off + n, 0, pad4(n) - n);
	return off + pad4(n);
}

/* The header, the credential and the verifier, the MIC of everything before it. */
static int put_auth(struct rg_ctx *c, uint8_t *buf, struct rg_parts *p)
{
	uint8_t mic[64];
	int mic_len;
	const uint32_t head[] = { p->xid, 0 /* CALL */, 2, p->prog, p->vers, p->proc, RG_FLAVOR,
	                          20 + (uint32_t)pad4(c->handle_len), 1, p->gss_proc, p->seq,
	                          p->service };
	size_t off = 0;

	if (p->cap < sizeof(head) + 4 + pad4(c->handle_len) + 8)
		return -1;
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		off = put_u32_at(buf, off, head[i]);
	p->seq_off = off - 8;
	off = put_opaque_at(buf, off, c->handle, c->handle_len);
	p->hdr_len = off;
	if ((mic_len = mic_make(c, buf, p->hdr_len, mic, sizeof(mic))) < 0 ||
	    p->cap < off + 8 + pad4((size_t)mic_len))
		return -1;
	off = put_u32_at(buf, off, RG_FLAVOR);
	p->verf_off = off + 4;
	p->verf_len = (size_t)mic_len;
	p->body_off = put_opaque_at(buf, off, mic, (size_t)mic_len);
	return 0;
}

/* The four buffers of an RFC 4121 wrap token around data: header, data, padding, trailer. */
static void wrap_iov(gss_iov_buffer_desc iov[4], uint8_t *data, size_t len)
{
	iov[0] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_HEADER, GSS_C_EMPTY_BUFFER };
	iov[1] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_DATA, { len, data } };
	iov[2] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_PADDING, GSS_C_EMPTY_BUFFER };
	iov[3] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_TRAILER, GSS_C_EMPTY_BUFFER };
}

/* Where the arguments go behind the body's opaque length and seq_num (and privacy's token
 * header), the room checked; 0 when it does not fit or the mechanism pads (AES does not). */
static size_t args_place(struct rg_ctx *c, struct rg_parts *p, size_t args_len)
{
	OM_uint32 minor;
	gss_iov_buffer_desc iov[4];
	size_t need;

	if (p->gss_proc != RG_DATA || p->service == RG_NONE) {
		need = p->body_off + args_len;
		return need <= p->cap ? p->body_off : 0;
	}
	if (p->service == RG_INTEGRITY) {
		p->databody_off = p->body_off + 4;
		need = p->databody_off + 4 + args_len + 4 + 64;   /* a MIC's room, checked at the end */
		return need <= p->cap ? p->databody_off + 4 : 0;
	}
	p->wrap_off = p->body_off + 4;
	if (c->own) {
		gss_krb5_wrap_room(c->own, args_len + 4, &p->wrap_head, &p->wrap_tail);
	} else {
		wrap_iov(iov, NULL, args_len + 4);
		if (GSS_ERROR(gss_wrap_iov_length(&minor, c->gss, 1, GSS_C_QOP_DEFAULT, NULL, iov,
		                                  4)) || iov[2].buffer.length != 0)
			return 0;
		p->wrap_head = iov[0].buffer.length;
		p->wrap_tail = iov[3].buffer.length;
	}
	need = p->wrap_off + pad4(p->wrap_head + 4 + args_len + p->wrap_tail);
	return need <= p->cap ? p->wrap_off + p->wrap_head + 4 : 0;
}

uint8_t *rg_seal_begin(struct rg_ctx *c, uint8_t *buf, struct rg_parts *p, size_t args_len)
{
	p->hdr_len = p->seq_off = p->verf_off = p->verf_len = p->body_off = 0;
	p->databody_off = p->mic_off = p->wrap_off = p->wrap_head = p->wrap_tail = p->len = 0;
	p->args_off = 0;
	p->args_len = args_len;
	if (args_len % 4 != 0 || put_auth(c, buf, p) < 0)
		return NULL;
	p->args_off = args_place(c, p, args_len);
	return p->args_off ? buf + p->args_off : NULL;
}

static size_t seal_integ(struct rg_ctx *c, uint8_t *buf, struct rg_parts *p)
{
	size_t len = 4 + p->args_len, off = p->databody_off + len;
	uint8_t mic[64];
	int mic_len;

	put_u32(buf + p->body_off, (uint32_t)len);
	put_u32(buf + p->databody_off, p->seq);
	if ((mic_len = mic_make(c, buf + p->databody_off, len, mic, sizeof(mic))) < 0)
		return 0;
	if (off + 4 + pad4((size_t)mic_len) <= p->cap) {
		p->mic_off = off + 4;
		p->len = put_opaque_at(buf, off, mic, (size_t)mic_len);
	}
	return p->len;
}

static size_t seal_priv(struct rg_ctx *c, uint8_t *buf, struct rg_parts *p)
{
	OM_uint32 minor;
	gss_iov_buffer_desc iov[4];
	uint8_t *data = buf + p->args_off - 4;
	size_t token = p->wrap_head + 4 + p->args_len + p->wrap_tail;
	int conf = 0;

	put_u32(data, p->seq);
	if (c->own) {
		if (gss_krb5_wrap(c->own, data, 4 + p->args_len, p->wrap_head, p->wrap_tail) < 0)
			return 0;
	} else {
		wrap_iov(iov, data, 4 + p->args_len);
		iov[0].buffer = (gss_buffer_desc){ p->wrap_head, data - p->wrap_head };
		iov[3].buffer = (gss_buffer_desc){ p->wrap_tail, data + 4 + p->args_len };
		if (GSS_ERROR(gss_wrap_iov(&minor, c->gss, 1, GSS_C_QOP_DEFAULT, &conf, iov, 4)) ||
		    !conf)
			return 0;
	}
	put_u32(buf + p->body_off, (uint32_t)token);
	memset(buf + p->wrap_off + token, 0, pad4(token) - token);
	p->len = p->wrap_off + pad4(token);
	return p->len;
}

size_t rg_seal_end(struct rg_ctx *c, uint8_t *buf, struct rg_parts *p)
{
	if (p->args_off == 0)
		return 0;
	if (p->gss_proc != RG_DATA || p->service == RG_NONE)
		return p->len = p->args_off + p->args_len;
	return p->service == RG_INTEGRITY ? seal_integ(c, buf, p) : seal_priv(c, buf, p);
}

/* The arguments of plain, a whole call of any flavor: past its credential and verifier. */
static const uint8_t *plain_args(const struct xb *plain, size_t *len)
{
	const uint8_t *p = plain->buf;
	size_t off;

	if (plain->len < 40)
		return NULL;
	off = 32 + pad4(get_u32(p + 28));            /* past the credential */
	if (off + 8 > plain->len)
		return NULL;
	off += 8 + pad4(get_u32(p + off + 4));       /* past the verifier */
	if (off > plain->len)
		return NULL;
	*len = plain->len - off;
	return p + off;
}

size_t rg_seal_plain(struct rg_ctx *c, const struct xb *plain, uint32_t service, uint32_t seq,
                     uint8_t *buf, struct rg_parts *p)
{
	size_t len;
	const uint8_t *args = plain_args(plain, &len);
	uint8_t *to;

	if (args == NULL)
		return 0;
	p->xid = get_u32(plain->buf);
	p->prog = get_u32(plain->buf + 12);
	p->vers = get_u32(plain->buf + 16);
	p->proc = get_u32(plain->buf + 20);
	p->gss_proc = RG_DATA;
	p->service = service;
	p->seq = seq;
	to = rg_seal_begin(c, buf, p, len);
	if (to == NULL)
		return 0;
	if (len)
		memcpy(to, args, len);
	return rg_seal_end(c, buf, p);
}

/* ---- the test's calls ---- */

int rg_encode(struct rg_ctx *c, struct rg_call *call, uint32_t gss_proc, uint32_t service,
              uint32_t seq, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
              const void *args, size_t args_len)
{
	struct rg_parts *p = &call->p;
	uint8_t *to;

	*p = (struct rg_parts){ .xid = xid, .prog = prog, .vers = vers, .proc = proc,
	                        .gss_proc = gss_proc, .service = service, .seq = seq,
	                        .cap = sizeof(call->b.buf) };
	call->b.len = 0;
	to = rg_seal_begin(c, call->b.buf, p, args_len);
	if (to == NULL)
		return -1;
	if (args_len)
		memcpy(to, args, args_len);
	call->b.len = rg_seal_end(c, call->b.buf, p);
	return call->b.len ? 0 : -1;
}

int rg_wrap(struct rg_ctx *c, const struct xb *plain, uint32_t service, struct rg_call *call)
{
	call->p = (struct rg_parts){ .cap = sizeof(call->b.buf) };
	call->b.len = rg_seal_plain(c, plain, service, c->next_seq++, call->b.buf, &call->p);
	return call->b.len ? 0 : -1;
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

/* ---- opening a reply ---- */

/* Integrity: databody_integ (seq_num, results) and its checksum, checked where they lie. */
static bool open_integ(struct rg_ctx *c, uint32_t seq, struct rg_reply *rep)
{
	const uint8_t *p = rep->r.body, *end = p + rep->r.body_len;
	uint32_t dlen, mlen;

	if (end - p < 8 || (dlen = get_u32(p)) % 4 != 0 || dlen < 4 || (size_t)(end - p) < 8 + dlen)
		return false;
	mlen = get_u32(p + 4 + dlen);
	if ((size_t)(end - p) < 8 + dlen + pad4(mlen) ||
	    !mic_ok(c, p + 4, dlen, p + 8 + dlen, mlen) || get_u32(p + 4) != seq)
		return false;
	rep->r.body = p + 8;
	rep->r.body_len = dlen - 4;
	return true;
}

/* Privacy: databody_priv, unwrapped with confidentiality where it lies (a stream buffer: MIT
 * decrypts in place and points the data into it), then seq_num and results. */
static bool open_priv(struct rg_ctx *c, uint32_t seq, uint8_t *rec, struct rg_reply *rep)
{
	uint8_t *p = rec + (rep->r.body - rec);
	const uint8_t *end = rep->r.body + rep->r.body_len;
	gss_iov_buffer_desc iov[2];
	OM_uint32 minor;
	const uint8_t *data;
	int conf = 0;

	if (end - p < 4 || (size_t)(end - p) < 4 + pad4(get_u32(p)))
		return false;
	iov[0] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_STREAM, { get_u32(p), p + 4 } };
	iov[1] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_DATA, GSS_C_EMPTY_BUFFER };
	if (c->own) {
		uint8_t *d;
		size_t dlen;
		if (gss_krb5_unwrap(c->own, p + 4, get_u32(p), &d, &dlen) < 0)
			return false;
		iov[1].buffer = (gss_buffer_desc){ dlen, d };
		conf = 1;
	} else if (GSS_ERROR(gss_unwrap_iov(&minor, c->gss, &conf, NULL, iov, 2))) {
		return false;
	}
	if (!conf || iov[1].buffer.length < 4)
		return false;
	data = iov[1].buffer.value;
	if (get_u32(data) != seq)
		return false;
	rep->r.body = data + 4;
	rep->r.body_len = iov[1].buffer.length - 4;
	return true;
}

int rg_reply_open(struct rg_ctx *c, const struct rg_parts *p, uint8_t *rec, size_t len,
                  struct rg_reply *rep)
{
	struct hdr h;

	if (parse(rec, len, &h) < 0)
		return -1;
	rep->r = h.r;
	rep->verf_flavor = h.verf_flavor;
	rep->verf_ok = h.r.reply_stat == 0 && h.verf_flavor == RG_FLAVOR &&
	               mic_of_u32_ok(c, p->seq, h.verf, h.verf_len);
	rep->body_ok = true;
	if (h.r.reply_stat != 0 || h.r.accept_stat != 0 || p->gss_proc != RG_DATA)
		return 0;
	if (p->service == RG_INTEGRITY)
		rep->body_ok = open_integ(c, p->seq, rep);
	else if (p->service == RG_PRIVACY)
		rep->body_ok = open_priv(c, p->seq, rec, rep);
	return 0;
}

int rg_recv(int fd, struct rg_ctx *c, const struct rg_call *call, struct rg_reply *rep,
            int timeout_ms)
{
	struct hdr h;
	ssize_t n;

	memset(rep, 0, sizeof(*rep));
	n = recv_hdr(fd, call->p.xid, &rep->rec, &h, timeout_ms);
	if (n >= 0 && rg_reply_open(c, &call->p, rep->rec, (size_t)n, rep) == 0)
		return 0;
	rg_reply_free(rep);
	return n == -2 ? -2 : -1;
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
	rep->rec = NULL;
}
