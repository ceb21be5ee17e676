/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS contexts (gss_ctx.h), made by MIT Kerberos's GSS-API, their tokens then made and
 * checked by our own RFC 4121 code where it does the enctype (gss_krb5.h): a table of them by
 * handle, shared by the rings under one mutex held only to find, add or unlink; each context's
 * token calls and window under its own lock; a context freed when DESTROY (or its end) has
 * unlinked it and the last call holding it has let go. */
#include "rpc/gss_ctx.h"

#include "rpc/gss_ident.h"
#include "rpc/gss_krb5.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUCKETS 1024
/* A context still being made after this long was abandoned (krb5 takes one round trip). */
#define INIT_LIFE_NS (60ull * 1000000000)

struct gss_ctx {
	uint8_t handle[GSS_CTX_HANDLE_LEN];
	gss_ctx_id_t gss;               /* MIT's, until own takes over (GSS_C_NO_CONTEXT then) */
	struct gss_krb5 *own;           /* our RFC 4121 tokens on OpenSSL (gss_krb5.h), or NULL:
					 * set by the step that completes it, never after */
	bool established, unlinked;     /* table lock: established is set once the step that
					 * made it has let go of c's lock, so a call that finds it
					 * sees own, ident and expires_ns as that step left them */
	bool stepping;                  /* an INIT or CONTINUE_INIT runs on it; table lock */
	/* The table's link and each call holding it. Taken under the table lock, while the
	 * table's own reference keeps the context alive; let go without it (gss_ctx_put, once
	 * or twice a call from every ring, need not queue for the one lock of all contexts). */
	atomic_uint refs;
	struct sockaddr_storage peer;
	uint64_t expires_ns;            /* established: its ticket's end; else: INIT's + 60 s */
	char principal[256];
	struct rpc_cred ident;          /* the principal's local user (gss_ident.h) */
	pthread_mutex_t lock;           /* gss, win, and own's state (its sequence number, its
					 * ciphers' contexts) */
	struct gss_seqwin win;
	struct gss_ctx *next;           /* in its bucket */
};

struct gss_ctx_table {
	pthread_mutex_t lock;
	gss_cred_id_t cred;
	unsigned window, max, per_client, n;
	bool refuse_unmapped, own_crypto;
	struct gss_ctx *bucket[BUCKETS];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void gss_ctx_status_text(uint32_t major, uint32_t minor, char *out, size_t len)
{
	OM_uint32 min, ctx = 0;
	gss_buffer_desc b = GSS_C_EMPTY_BUFFER;
	out[0] = '\0';
	gss_display_status(&min, major, GSS_C_GSS_CODE, GSS_C_NO_OID, &ctx, &b);
	size_t n = (size_t)snprintf(out, len, "%.*s", (int)b.length, (char *)b.value);
	gss_release_buffer(&min, &b);
	ctx = 0;
	gss_display_status(&min, minor, GSS_C_MECH_CODE, GSS_C_NO_OID, &ctx, &b);
	if (n < len && b.length)
		snprintf(out + n, len - n, ": %.*s", (int)b.length, (char *)b.value);
	gss_release_buffer(&min, &b);
}

struct gss_ctx_table *gss_ctx_table_new(const struct gss_ctx_params *p, char *err, size_t errlen)
{
	struct gss_ctx_table *t = calloc(1, sizeof *t);
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* The keytab by the cred store, not krb5_gss_register_acceptor_identity: that one is the
	 * whole process's. */
	gss_key_value_element_desc kt = {"keytab", p->keytab};
	gss_key_value_set_desc store = {1, &kt};
	OM_uint32 minor, major = gss_acquire_cred_from(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE,
						       GSS_C_NO_OID_SET, GSS_C_ACCEPT, &store,
						       &t->cred, NULL, NULL);
	if (GSS_ERROR(major)) {
		char why[256];
		gss_ctx_status_text(major, minor, why, sizeof why);
		snprintf(err, errlen, "keytab %s: %s", p->keytab, why);
		free(t);
		return NULL;
	}
	struct gss_seqwin probe;   /* the window as each context rounds it */
	gss_seqwin_init(&probe, p->window);
	t->window = probe.size;
	t->max = p->max;
	t->per_client = p->per_client;
	t->refuse_unmapped = p->refuse_unmapped;
	t->own_crypto = !p->mit_crypto;
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

static void ctx_free(struct gss_ctx *c);

static void ctx_ref(struct gss_ctx *c)
{
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

/* One reference let go (a call's, or the table's when it unlinks c); the last frees it. */
void gss_ctx_put(struct gss_ctx *c)
{
	if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
		ctx_free(c);
}

static void ctx_free(struct gss_ctx *c)
{
	OM_uint32 minor;
	if (c->gss != GSS_C_NO_CONTEXT)
		gss_delete_sec_context(&minor, &c->gss, GSS_C_NO_BUFFER);
	gss_krb5_free(c->own);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void gss_ctx_table_free(struct gss_ctx_table *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < BUCKETS; i++)
		while (t->bucket[i]) {
			struct gss_ctx *c = t->bucket[i];
			t->bucket[i] = c->next;
			ctx_free(c);
		}
	OM_uint32 minor;
	gss_release_cred(&minor, &t->cred);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

void gss_init_res_free(struct gss_init_res *r)
{
	free(r->token);
	r->token = NULL;
	r->token_len = 0;
}

static struct gss_ctx **slot(struct gss_ctx_table *t, const uint8_t *handle)
{
	uint32_t h;
	memcpy(&h, handle, sizeof h);
	return &t->bucket[h & (BUCKETS - 1)];
}

/* Under the table lock: the context named by handle, linked; NULL if none. */
static struct gss_ctx *lookup(struct gss_ctx_table *t, const uint8_t *handle, uint32_t len)
{
	if (len != GSS_CTX_HANDLE_LEN)
		return NULL;
	for (struct gss_ctx *c = *slot(t, handle); c; c = c->next)
		if (memcmp(c->handle, handle, GSS_CTX_HANDLE_LEN) == 0)
			return c;
	return NULL;
}

static void unlink_ctx(struct gss_ctx_table *t, struct gss_ctx *c)
{
	for (struct gss_ctx **pp = slot(t, c->handle); *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->unlinked = true;
	t->n--;
}

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
	return false;
}

/* Under the table lock: contexts past their end (a ticket's, or a creation abandoned halfway),
 * unlinked, so that clients that went away without DESTROY do not hold the table's room. */
static void purge(struct gss_ctx_table *t)
{
	uint64_t now = now_ns();
	for (unsigned i = 0; i < BUCKETS; i++)
		for (struct gss_ctx *c = t->bucket[i], *next; c; c = next) {
			next = c->next;
			if (now < c->expires_ns)
				continue;
			unlink_ctx(t, c);
			gss_ctx_put(c);
		}
}

static unsigned count_peer(struct gss_ctx_table *t, const struct sockaddr_storage *peer)
{
	unsigned mine = 0;
	for (unsigned i = 0; i < BUCKETS; i++)
		for (struct gss_ctx *c = t->bucket[i]; c; c = c->next)
			mine += same_host(&c->peer, peer);
	return mine;
}

/* Under the table lock: a new context for peer, linked and held once for the caller; NULL
 * past the bounds, once the contexts past their end are gone. */
static struct gss_ctx *add_ctx(struct gss_ctx_table *t, const struct sockaddr_storage *peer)
{
	if (t->n >= t->max || count_peer(t, peer) >= t->per_client) {
		purge(t);
		if (t->n >= t->max || count_peer(t, peer) >= t->per_client)
			return NULL;
	}
	struct gss_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	randombytes_buf(c->handle, sizeof c->handle);
	c->gss = GSS_C_NO_CONTEXT;
	c->peer = *peer;
	c->expires_ns = now_ns() + INIT_LIFE_NS;
	atomic_init(&c->refs, 2);   /* the table's, the caller's */
	pthread_mutex_init(&c->lock, NULL);
	gss_seqwin_init(&c->win, t->window);
	struct gss_ctx **s = slot(t, c->handle);
	c->next = *s;
	*s = c;
	t->n++;
	return c;
}

/* The context to take one more step with: a new one for INIT, the named one in the making for
 * CONTINUE_INIT, one step at a time (two CONTINUE_INITs at once on the pool's threads would
 * otherwise both accept, the second over what the first completed). Held and marked stepping;
 * NULL when refused. */
static struct gss_ctx *step_ctx(struct gss_ctx_table *t, const struct sockaddr_storage *peer,
				const uint8_t *handle, uint32_t handle_len)
{
	pthread_mutex_lock(&t->lock);
	struct gss_ctx *c;
	if (handle_len == 0) {
		c = add_ctx(t, peer);
	} else {
		c = lookup(t, handle, handle_len);
		if (c && (c->established || c->stepping))
			c = NULL;
		if (c)
			ctx_ref(c);
	}
	if (c)
		c->stepping = true;
	pthread_mutex_unlock(&t->lock);
	return c;
}

/* The accepted context's name, user and end; false when it has no name that can be shown, or
 * no local user and the conf refuses those (res->principal says whose it was). */
static bool complete(struct gss_ctx_table *t, struct gss_ctx *c, gss_name_t name,
		     OM_uint32 time_rec, struct gss_init_res *res)
{
	OM_uint32 minor;
	gss_buffer_desc b = GSS_C_EMPTY_BUFFER;
	bool shown = !GSS_ERROR(gss_display_name(&minor, name, &b, NULL)) &&
		     b.length < sizeof c->principal;
	if (shown) {
		memcpy(c->principal, b.value, b.length);
		c->principal[b.length] = '\0';
		memcpy(res->principal, c->principal, b.length + 1);
	}
	gss_release_buffer(&minor, &b);
	if (!shown)
		return false;
	gss_ident_map(name, c->principal, &c->ident);
	if (!c->ident.gss_mapped && t->refuse_unmapped)
		return false;
	uint64_t life = time_rec == GSS_C_INDEFINITE ? 10ull * 3600 : time_rec;
	c->expires_ns = now_ns() + life * 1000000000ull;
	return true;
}

static int mic_u32_locked(struct gss_ctx *c, uint32_t n, uint8_t *out, size_t cap)
{
	uint8_t be[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
	if (c->own)
		return gss_krb5_get_mic(c->own, be, sizeof be, out, cap);
	gss_buffer_desc in = {sizeof be, be}, mic = GSS_C_EMPTY_BUFFER;
	OM_uint32 minor;
	int len = -1;
	if (!GSS_ERROR(gss_get_mic(&minor, c->gss, GSS_C_QOP_DEFAULT, &in, &mic)) && mic.length <= cap) {
		memcpy(out, mic.value, mic.length);
		len = (int)mic.length;
	}
	gss_release_buffer(&minor, &mic);
	return len;
}

/* A copy of MIT's context h (its serialised form imported again), or GSS_C_NO_CONTEXT. */
static gss_ctx_id_t copy_of(gss_ctx_id_t *h)
{
	OM_uint32 minor;
	gss_buffer_desc tok = GSS_C_EMPTY_BUFFER;
	gss_ctx_id_t a = GSS_C_NO_CONTEXT, b = GSS_C_NO_CONTEXT;
	/* export deletes *h: it comes back as a, and b is the copy (a failed import leaves
	 * GSS_C_NO_CONTEXT: then no copy, and MIT's context goes on as a if it came back) */
	if (GSS_ERROR(gss_export_sec_context(&minor, h, &tok)))
		return GSS_C_NO_CONTEXT;
	if (GSS_ERROR(gss_import_sec_context(&minor, &tok, &a)) ||
	    GSS_ERROR(gss_import_sec_context(&minor, &tok, &b)))
		b = GSS_C_NO_CONTEXT;
	OPENSSL_cleanse(tok.value, tok.length);   /* it holds the context's keys */
	gss_release_buffer(&minor, &tok);
	*h = a;
	return b;
}

/* Under c's lock, once c is established: its tokens made and checked by our own RFC 4121 code
 * from here on (gss_krb5.h: OpenSSL's AES and SHA instructions, five times cheaper than MIT's
 * built-in crypto at krb5p, and a WRITE's offset readable before its record is placed), when
 * its enctype is one that code does; else MIT's context goes on. MIT's lucid export deletes
 * the context it is given: a copy is given, so that MIT's is still there if ours declines. */
static void adopt_own(struct gss_ctx *c)
{
	OM_uint32 minor;
	void *lucid = NULL;
	gss_ctx_id_t copy = copy_of(&c->gss);
	if (copy == GSS_C_NO_CONTEXT ||
	    GSS_ERROR(gss_krb5_export_lucid_sec_context(&minor, &copy, 1, &lucid))) {
		gss_delete_sec_context(&minor, &copy, GSS_C_NO_BUFFER);
		return;
	}
	c->own = gss_krb5_from_lucid(lucid);
	gss_krb5_free_lucid_sec_context(&minor, lucid);
	if (c->own)
		gss_delete_sec_context(&minor, &c->gss, GSS_C_NO_BUFFER);
}

/* gss_accept_sec_context on c with the client's token, under c's lock; res filled. */
static void accept_step(struct gss_ctx_table *t, struct gss_ctx *c, const void *token,
			size_t token_len, struct gss_init_res *res)
{
	gss_buffer_desc in = {token_len, (void *)token}, out = GSS_C_EMPTY_BUFFER;
	gss_name_t name = GSS_C_NO_NAME;
	OM_uint32 minor = 0, time_rec = 0, ignored;
	pthread_mutex_lock(&c->lock);
	OM_uint32 major = gss_accept_sec_context(&minor, &c->gss, t->cred, &in,
						 GSS_C_NO_CHANNEL_BINDINGS, &name, NULL, &out, NULL,
						 &time_rec, NULL);
	if (major == GSS_S_COMPLETE && !complete(t, c, name, time_rec, res))
		major = GSS_S_FAILURE;
	/* our own tokens from here on (for a principal complete() took), before the context is
	 * marked established */
	if (major == GSS_S_COMPLETE && t->own_crypto)
		adopt_own(c);
	if (major == GSS_S_COMPLETE && c->gss == GSS_C_NO_CONTEXT && !c->own)
		major = GSS_S_FAILURE;   /* lost in the copy: the client makes another */
	if (major == GSS_S_COMPLETE) {
		int n = mic_u32_locked(c, t->window, res->verf, sizeof res->verf);
		res->verf_len = n > 0 ? (size_t)n : 0;
		major = n > 0 ? major : GSS_S_FAILURE;
	}
	pthread_mutex_unlock(&c->lock);
	gss_release_name(&ignored, &name);
	res->major = major;
	res->minor = minor;
	res->window = t->window;
	if (out.length && (res->token = malloc(out.length))) {
		memcpy(res->token, out.value, out.length);
		res->token_len = out.length;
	}
	gss_release_buffer(&ignored, &out);
}

int gss_ctx_accept(struct gss_ctx_table *t, const struct sockaddr_storage *peer,
		   const uint8_t *handle, uint32_t handle_len, const void *token, size_t token_len,
		   struct gss_init_res *res)
{
	memset(res, 0, sizeof *res);
	struct gss_ctx *c = step_ctx(t, peer, handle, handle_len);
	if (!c) {
		res->major = GSS_S_FAILURE;
		return -1;
	}
	accept_step(t, c, token, token_len, res);
	bool failed = res->major != GSS_S_COMPLETE && res->major != GSS_S_CONTINUE_NEEDED;
	pthread_mutex_lock(&t->lock);
	c->stepping = false;
	c->established = res->major == GSS_S_COMPLETE;
	if (failed && !c->unlinked) {
		unlink_ctx(t, c);
		gss_ctx_put(c);   /* the table's: the caller still holds its own */
	}
	pthread_mutex_unlock(&t->lock);
	if (!failed) {
		memcpy(res->handle, c->handle, sizeof c->handle);
		res->handle_len = GSS_CTX_HANDLE_LEN;
	}
	gss_ctx_put(c);
	return 0;
}

struct gss_ctx *gss_ctx_get(struct gss_ctx_table *t, const uint8_t *handle, uint32_t handle_len)
{
	pthread_mutex_lock(&t->lock);
	struct gss_ctx *c = lookup(t, handle, handle_len);
	if (c && c->established && now_ns() >= c->expires_ns) {
		unlink_ctx(t, c);   /* its ticket ended: the client gets a new one and a new context */
		gss_ctx_put(c);
		c = NULL;
	} else if (c && c->established) {
		ctx_ref(c);
	} else {
		c = NULL;
	}
	pthread_mutex_unlock(&t->lock);
	return c;
}

const char *gss_ctx_principal(const struct gss_ctx *c) { return c->principal; }

bool gss_ctx_own_tokens(const struct gss_ctx *c) { return c->own != NULL; }

int gss_ctx_verify_mic(struct gss_ctx *c, const void *msg, size_t len, const void *mic,
		       size_t mic_len)
{
	gss_buffer_desc m = {len, (void *)msg}, tok = {mic_len, (void *)mic};
	OM_uint32 minor, major = GSS_S_FAILURE;
	pthread_mutex_lock(&c->lock);
	if (c->own)
		major = gss_krb5_verify_mic(c->own, msg, len, mic, mic_len) == 0 ? GSS_S_COMPLETE
										 : GSS_S_BAD_SIG;
	else
		major = gss_verify_mic(&minor, c->gss, &m, &tok, NULL);
	pthread_mutex_unlock(&c->lock);
	return major == GSS_S_COMPLETE ? 0 : -1;
}

enum gss_seq_verdict gss_ctx_check_seq(struct gss_ctx *c, uint32_t seq)
{
	pthread_mutex_lock(&c->lock);
	enum gss_seq_verdict v = gss_seqwin_accept(&c->win, seq);
	pthread_mutex_unlock(&c->lock);
	return v;
}

int gss_ctx_get_mic_iov(struct gss_ctx *c, const struct iovec *v, int n, uint8_t *out, size_t cap)
{
	/* A READ's data in the cache's blocks is checksummed where it lies: one DATA buffer a
	 * piece. The MIC is small: MIT allocates it, and it is copied out. */
	if (c->own) {
		pthread_mutex_lock(&c->lock);
		int len = gss_krb5_get_mic_iov(c->own, v, n, out, cap);
		pthread_mutex_unlock(&c->lock);
		return len;
	}
	gss_iov_buffer_desc stack[17], *iov = n < 17 ? stack : calloc((size_t)n + 1, sizeof *iov);
	if (!iov)
		return -1;
	for (int i = 0; i < n; i++)
		iov[i] = (gss_iov_buffer_desc){GSS_IOV_BUFFER_TYPE_DATA, {v[i].iov_len, v[i].iov_base}};
	iov[n] = (gss_iov_buffer_desc){GSS_IOV_BUFFER_TYPE_MIC_TOKEN | GSS_IOV_BUFFER_FLAG_ALLOCATE,
				       GSS_C_EMPTY_BUFFER};
	OM_uint32 minor;
	int len = -1;
	pthread_mutex_lock(&c->lock);
	OM_uint32 major = gss_get_mic_iov(&minor, c->gss, GSS_C_QOP_DEFAULT, iov, n + 1);
	pthread_mutex_unlock(&c->lock);
	if (!GSS_ERROR(major) && iov[n].buffer.length <= cap) {
		memcpy(out, iov[n].buffer.value, iov[n].buffer.length);
		len = (int)iov[n].buffer.length;
	}
	gss_release_iov_buffer(&minor, iov + n, 1);
	if (iov != stack)
		free(iov);
	return len;
}

int gss_ctx_unwrap(struct gss_ctx *c, uint8_t *token, size_t len, uint8_t **data, size_t *dlen)
{
	/* A stream buffer: MIT decrypts in place and points the data buffer into it, so the
	 * plaintext stays in the record's memory (a cached WRITE keeps that memory). */
	gss_iov_buffer_desc iov[2] = {
		{GSS_IOV_BUFFER_TYPE_STREAM, {len, token}},
		{GSS_IOV_BUFFER_TYPE_DATA, GSS_C_EMPTY_BUFFER},
	};
	OM_uint32 minor;
	int conf = 0;
	if (c->own) {
		pthread_mutex_lock(&c->lock);
		int rc = gss_krb5_unwrap(c->own, token, len, data, dlen);
		pthread_mutex_unlock(&c->lock);
		return rc;
	}
	pthread_mutex_lock(&c->lock);
	OM_uint32 major = gss_unwrap_iov(&minor, c->gss, &conf, NULL, iov, 2);
	pthread_mutex_unlock(&c->lock);
	if (GSS_ERROR(major) || !conf)
		return -1;
	*data = iov[1].buffer.value;
	*dlen = iov[1].buffer.length;
	return 0;
}

/* The four buffers of an RFC 4121 wrap token around data, in one piece of memory: header,
 * data, padding (none for AES), trailer; the lengths of all but data asked for when sizing. */
static void wrap_iov(gss_iov_buffer_desc iov[4], uint8_t *data, size_t len)
{
	iov[0] = (gss_iov_buffer_desc){GSS_IOV_BUFFER_TYPE_HEADER, GSS_C_EMPTY_BUFFER};
	iov[1] = (gss_iov_buffer_desc){GSS_IOV_BUFFER_TYPE_DATA, {len, data}};
	iov[2] = (gss_iov_buffer_desc){GSS_IOV_BUFFER_TYPE_PADDING, GSS_C_EMPTY_BUFFER};
	iov[3] = (gss_iov_buffer_desc){GSS_IOV_BUFFER_TYPE_TRAILER, GSS_C_EMPTY_BUFFER};
}

int gss_ctx_wrap_room(struct gss_ctx *c, size_t len, size_t *head, size_t *tail)
{
	if (c->own)   /* no lock: the room is the enctype's, fixed */
		return gss_krb5_wrap_room(c->own, len, head, tail);
	gss_iov_buffer_desc iov[4];
	OM_uint32 minor;
	wrap_iov(iov, NULL, len);
	pthread_mutex_lock(&c->lock);
	OM_uint32 major = gss_wrap_iov_length(&minor, c->gss, 1, GSS_C_QOP_DEFAULT, NULL, iov, 4);
	pthread_mutex_unlock(&c->lock);
	if (GSS_ERROR(major))
		return -1;
	*head = iov[0].buffer.length;
	*tail = iov[2].buffer.length + iov[3].buffer.length;
	return 0;
}

int gss_ctx_wrap(struct gss_ctx *c, uint8_t *data, size_t len, size_t head, size_t tail)
{
	if (c->own) {
		pthread_mutex_lock(&c->lock);
		int rc = gss_krb5_wrap(c->own, data, len, head, tail);
		pthread_mutex_unlock(&c->lock);
		return rc;
	}
	gss_iov_buffer_desc iov[4];
	OM_uint32 minor;
	int conf = 0;
	wrap_iov(iov, data, len);
	if (gss_ctx_wrap_room(c, len, &iov[0].buffer.length, &iov[3].buffer.length) < 0 ||
	    iov[0].buffer.length != head || iov[3].buffer.length != tail)
		return -1;
	/* No padding (AES, RFC 4121): what wrap_room counted as tail is all trailer. */
	iov[0].buffer.value = data - head;
	iov[3].buffer.value = data + len;
	pthread_mutex_lock(&c->lock);
	OM_uint32 major = gss_wrap_iov(&minor, c->gss, 1, GSS_C_QOP_DEFAULT, &conf, iov, 4);
	pthread_mutex_unlock(&c->lock);
	return GSS_ERROR(major) || !conf ? -1 : 0;
}

int gss_ctx_wrap_iov_out(struct gss_ctx *c, const struct iovec *v, int n, uint8_t *out)
{
	if (!c->own)
		return GSS_CTX_NOT_OWN;
	pthread_mutex_lock(&c->lock);
	int rc = gss_krb5_wrap_iov_out(c->own, v, n, out);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

static long peek_small(struct gss_ctx *c, const uint8_t *token, size_t len, uint8_t *out,
		       size_t *n)
{
	uint8_t copy[512], *data;
	size_t dlen;
	memcpy(copy, token, len);
	pthread_mutex_lock(&c->lock);
	int rc = gss_krb5_unwrap(c->own, copy, len, &data, &dlen);
	pthread_mutex_unlock(&c->lock);
	if (rc == 0) {
		*n = *n < dlen ? *n : dlen;
		memcpy(out, data, *n);
	}
	OPENSSL_cleanse(copy, len);
	return rc < 0 ? -1 : (long)(data - copy);
}

long gss_ctx_peek(struct gss_ctx *c, const uint8_t *token, size_t len, size_t avail,
		  bool whole, uint8_t *out, size_t *n)
{
	/* gss_krb5_unwrap leaves the plaintext behind the 16-byte header and the 16-byte
	 * confounder */
	enum { PLAIN_AT = 32, SMALL = 512 };
	if (!c->own || avail < 16)
		return -1;
	/* A small call whole here (a READ's): its last bytes, which ciphertext stealing swaps, are
	 * deciphered too, by opening a copy of it */
	if (whole && avail >= len && len <= SMALL)
		return peek_small(c, token, len, out, n);
	pthread_mutex_lock(&c->lock);
	size_t max = gss_krb5_peek_max(c->own, token, len);
	if (*n > max)
		*n = max;
	int rc = *n && avail >= 16 + GSS_KRB5_PEEK_END(*n) ?
		 gss_krb5_peek(c->own, token, len, 0, out, *n) : -1;
	pthread_mutex_unlock(&c->lock);
	return rc < 0 ? -1 : PLAIN_AT;
}

void gss_ctx_cred(const struct gss_ctx *c, struct rpc_cred *cred)
{
	uint32_t service = cred->gss_service;
	*cred = c->ident;
	cred->flavor = RPC_AUTH_GSS;
	cred->gss_service = service;
}

int gss_ctx_mic_u32(struct gss_ctx *c, uint32_t n, uint8_t *out, size_t cap)
{
	pthread_mutex_lock(&c->lock);
	int len = mic_u32_locked(c, n, out, cap);
	pthread_mutex_unlock(&c->lock);
	return len;
}

int gss_ctx_destroy(struct gss_ctx_table *t, const uint8_t *handle, uint32_t handle_len)
{
	pthread_mutex_lock(&t->lock);
	struct gss_ctx *c = lookup(t, handle, handle_len);
	if (c)
		unlink_ctx(t, c);
	pthread_mutex_unlock(&t->lock);
	if (c)
		gss_ctx_put(c);   /* the table's */
	return c ? 0 : -1;
}

unsigned gss_ctx_count(struct gss_ctx_table *t)
{
	pthread_mutex_lock(&t->lock);
	unsigned n = t->n;
	pthread_mutex_unlock(&t->lock);
	return n;
}
