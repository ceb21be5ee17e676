/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gss-cost: what RPCSEC_GSS's cryptography itself costs on this CPU, per GiB: the yardstick of
 * bench/run's gss workload (issue 37: krb5p's CPU per GiB within 1.5x of what the cipher costs for
 * those bytes). A Kerberos context is made in this process from the KDC's tickets (the client's
 * principal by password or client keytab, the server's key from its keytab: both ends here, no
 * server needed), then each operation runs on buffers of each --sizes size for --seconds of CPU:
 *
 *   wrap_iov     gss_wrap_iov in place, confidentiality (krb5p: how nfsd-uc seals a READ reply)
 *   unwrap_iov   gss_unwrap_iov of a stream buffer in place (krb5p: how nfsd-uc opens a WRITE)
 *   wrap         gss_wrap, the token in a new buffer (the GSS-API's plain call, libtirpc's;
 *                nfsd-uc and ntirpc 4.3, Ganesha's, seal in place)
 *   unwrap       gss_unwrap, the plain text in a new buffer (the token and it freed in its time)
 *   get_mic      gss_get_mic (krb5i: a reply's checksum)
 *   verify_mic   gss_verify_mic (krb5i: a call's checksum)
 *
 * Then both ends exported (gss_krb5_export_lucid_sec_context) into nfsd-uc's own RFC 4121 code
 * on OpenSSL (src/rpc/gss_krb5.c), the same operations through it:
 *
 *   own_wrap       gss_krb5_wrap in place (the client's end seals, as wrap_iov)
 *   own_unwrap     gss_krb5_unwrap in place (the server's end opens, as unwrap_iov)
 *   own_wrap_out   gss_krb5_wrap_iov_out from 4 KiB pages into another buffer (how a READ's
 *                  reply can be sealed from the cache's pages: the encryption is the copy)
 *   own_mic        gss_krb5_get_mic_iov over those pages (the server's end, as get_mic)
 *   own_verify_mic gss_krb5_verify_mic_iov (the client's end, as verify_mic)
 *
 * Each operation's own CPU time is measured (the thread's clock around each call), nothing else.
 * Prints one line per operation and size, MIT's first, then the context's enctype, then ours:
 *   op=wrap_iov size=1048576 calls=N cpu_s=S cpu_s_per_gib=X MiB/s=Y
 * Exit 0, 2 usage, 3 Kerberos error. */
#include <getopt.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "rawgss.h"
#include "rpc/gss_krb5.h"

#define FLAGS (GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG)
#define GIB 1073741824.0

struct opts {
	const char *principal, *password, *keytab, *server_keytab, *target;
	double seconds;
	size_t sizes[8];
	unsigned nsizes;
};

/* Both ends of one context: MIT's, then (exported) ours. */
struct pair {
	gss_ctx_id_t init, accept;
	struct gss_krb5 *own_init, *own_accept;
};

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void words(const char *what, OM_uint32 major, OM_uint32 minor)
{
	char text[256];

	rg_major_words(major, text, sizeof(text));
	fprintf(stderr, "gss-cost: %s: %s (minor %u)\n", what, text, minor);
}

/* The acceptor's credential from the server's keytab (any principal in it). */
static int accept_cred(const char *keytab, gss_cred_id_t *cred)
{
	OM_uint32 major, minor;
	gss_key_value_element_desc kv = { "keytab", keytab };
	gss_key_value_set_desc store = { 1, &kv };

	major = gss_acquire_cred_from(&minor, GSS_C_NO_NAME, 0, GSS_C_NO_OID_SET, GSS_C_ACCEPT,
	                              &store, cred, NULL, NULL);
	if (major != GSS_S_COMPLETE)
		words("the server's keytab", major, minor);
	return major == GSS_S_COMPLETE ? 0 : -1;
}

/* The tokens go back and forth in memory until both ends are done. */
static int handshake(gss_cred_id_t icred, gss_cred_id_t acred, gss_name_t target, struct pair *p)
{
	gss_buffer_desc itok = GSS_C_EMPTY_BUFFER, atok = GSS_C_EMPTY_BUFFER;
	OM_uint32 imaj = GSS_S_CONTINUE_NEEDED, amaj = GSS_S_CONTINUE_NEEDED, minor, m;
	OM_uint32 flags = 0;

	for (int round = 0; round < 8; round++) {
		imaj = gss_init_sec_context(&minor, icred, &p->init, target, (gss_OID)gss_mech_krb5,
		                            FLAGS, 0, GSS_C_NO_CHANNEL_BINDINGS,
		                            round ? &atok : GSS_C_NO_BUFFER, NULL, &itok, &flags, NULL);
		gss_release_buffer(&m, &atok);
		if (GSS_ERROR(imaj)) {
			words("gss_init_sec_context", imaj, minor);
			return -1;
		}
		if (itok.length == 0 && amaj == GSS_S_COMPLETE)
			break;
		amaj = gss_accept_sec_context(&minor, &p->accept, acred, &itok,
		                              GSS_C_NO_CHANNEL_BINDINGS, NULL, NULL, &atok, NULL, NULL,
		                              NULL);
		gss_release_buffer(&m, &itok);
		if (GSS_ERROR(amaj)) {
			words("gss_accept_sec_context", amaj, minor);
			return -1;
		}
		if (imaj == GSS_S_COMPLETE && amaj == GSS_S_COMPLETE && atok.length == 0)
			break;
	}
	gss_release_buffer(&m, &atok);
	gss_release_buffer(&m, &itok);
	if (imaj != GSS_S_COMPLETE || amaj != GSS_S_COMPLETE || (flags & FLAGS) != FLAGS) {
		fprintf(stderr, "gss-cost: no context after 8 rounds (flags 0x%x)\n", flags);
		return -1;
	}
	return 0;
}

static int make_pair(const struct opts *o, struct pair *p)
{
	gss_cred_id_t icred = GSS_C_NO_CREDENTIAL, acred = GSS_C_NO_CREDENTIAL;
	gss_buffer_desc tb = { strlen(o->target), (void *)o->target };
	gss_name_t target = GSS_C_NO_NAME;
	OM_uint32 minor;
	char err[512];
	int rc = o->keytab ? rg_cred_keytab(o->principal, o->keytab, &icred, err, sizeof(err))
			   : rg_cred_password(o->principal, o->password, &icred, err, sizeof(err));

	p->init = p->accept = GSS_C_NO_CONTEXT;
	p->own_init = p->own_accept = NULL;
	if (rc < 0)
		fprintf(stderr, "gss-cost: %s\n", err);
	if (rc == 0)
		rc = accept_cred(o->server_keytab, &acred);
	if (rc == 0 && gss_import_name(&minor, &tb, GSS_C_NT_HOSTBASED_SERVICE, &target) != 0)
		rc = -1;
	if (rc == 0)
		rc = handshake(icred, acred, target, p);
	gss_release_name(&minor, &target);
	gss_release_cred(&minor, &icred);
	gss_release_cred(&minor, &acred);
	return rc;
}

/* ---- the operations ---- */

struct tally {
	const char *op;
	double cpu;
	uint64_t calls;
};

static void report(const struct tally *t, size_t size)
{
	double bytes = (double)size * (double)t->calls;

	printf("op=%s size=%zu calls=%llu cpu_s=%.3f cpu_s_per_gib=%.4f MiB/s=%.1f\n", t->op, size,
	       (unsigned long long)t->calls, t->cpu, t->cpu > 0 ? t->cpu / (bytes / GIB) : 0.0,
	       t->cpu > 0 ? bytes / 1048576.0 / t->cpu : 0.0);
}

static void iov4(gss_iov_buffer_desc iov[4], uint8_t *buf, size_t head, size_t len, size_t tail)
{
	iov[0] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_HEADER, { head, buf } };
	iov[1] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_DATA, { len, buf + head } };
	iov[2] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_PADDING, { 0, NULL } };
	iov[3] = (gss_iov_buffer_desc){ GSS_IOV_BUFFER_TYPE_TRAILER, { tail, buf + head + len } };
}

/* What one pair of operations works on: the client's end seals or checksums, the server's end
 * opens or checks. buf holds room for a wrap token's header (head) and trailer (tail) around
 * the len bytes of data. */
struct job {
	const struct pair *p;
	uint8_t *buf;
	size_t len, head, tail;
	gss_buffer_desc tok;      /* the copying calls' token, or a MIC */
	struct iovec *pages;      /* ours: len bytes of other memory in 4 KiB pieces */
	int npages;
	uint8_t *out;             /* ours: where own_wrap_out seals them to */
	uint8_t mic[64];
};

typedef int step_fn(struct job *j);

/* krb5p in place: sealed where it lies, then opened there (a stream buffer: the plain text must
 * come back where it was). */
static int wrap_iov_step(struct job *j)
{
	gss_iov_buffer_desc iov[4];
	OM_uint32 minor;
	int conf = 0;

	iov4(iov, j->buf, j->head, j->len, j->tail);
	return GSS_ERROR(gss_wrap_iov(&minor, j->p->init, 1, 0, &conf, iov, 4)) || !conf ? -1 : 0;
}

static int unwrap_iov_step(struct job *j)
{
	gss_iov_buffer_desc st[2] = {
		{ GSS_IOV_BUFFER_TYPE_STREAM, { j->head + j->len + j->tail, j->buf } },
		{ GSS_IOV_BUFFER_TYPE_DATA, GSS_C_EMPTY_BUFFER },
	};
	OM_uint32 minor;
	int conf = 0;

	if (GSS_ERROR(gss_unwrap_iov(&minor, j->p->accept, &conf, NULL, st, 2)) || !conf)
		return -1;
	return st[1].buffer.value == j->buf + j->head && st[1].buffer.length == j->len ? 0 : -1;
}

/* krb5p through the plain calls: a new token, then a new plain text (both freed in its time). */
static int wrap_step(struct job *j)
{
	gss_buffer_desc in = { j->len, j->buf + j->head };
	OM_uint32 minor;
	int conf = 0;

	return GSS_ERROR(gss_wrap(&minor, j->p->init, 1, 0, &in, &conf, &j->tok)) || !conf ? -1 : 0;
}

static int unwrap_step(struct job *j)
{
	gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
	OM_uint32 minor, major = gss_unwrap(&minor, j->p->accept, &j->tok, &out, NULL, NULL);
	size_t got = out.length;

	gss_release_buffer(&minor, &j->tok);
	gss_release_buffer(&minor, &out);
	return GSS_ERROR(major) || got != j->len ? -1 : 0;
}

/* krb5i: a checksum made by the server's end and checked by the client's. */
static int get_mic_step(struct job *j)
{
	gss_buffer_desc in = { j->len, j->buf + j->head };
	OM_uint32 minor;

	return GSS_ERROR(gss_get_mic(&minor, j->p->accept, 0, &in, &j->tok)) ? -1 : 0;
}

static int verify_mic_step(struct job *j)
{
	gss_buffer_desc in = { j->len, j->buf + j->head };
	OM_uint32 minor, major = gss_verify_mic(&minor, j->p->init, &in, &j->tok, NULL);

	gss_release_buffer(&minor, &j->tok);
	return GSS_ERROR(major) ? -1 : 0;
}

/* first then second, over and over until they took secs of CPU together; each one's own CPU
 * time (the thread's clock around it) in its tally. */
static int pair_loop(struct job *j, step_fn *first, step_fn *second, double secs,
                     struct tally *a, struct tally *b)
{
	while (a->cpu + b->cpu < secs) {
		double t0 = thread_cpu(), t1, t2;
		int rc = first(j);

		t1 = thread_cpu();
		rc = rc < 0 ? rc : second(j);
		t2 = thread_cpu();
		if (rc < 0)
			return -1;
		a->cpu += t1 - t0;
		b->cpu += t2 - t1;
		a->calls++;
		b->calls++;
	}
	return 0;
}

/* The room a wrap token takes around len bytes (none may pad: AES does not). */
static int wrap_room(struct job *j)
{
	gss_iov_buffer_desc iov[4];
	OM_uint32 minor;

	iov4(iov, j->buf, 0, j->len, 0);
	if (GSS_ERROR(gss_wrap_iov_length(&minor, j->p->init, 1, 0, NULL, iov, 4)) ||
	    iov[2].buffer.length != 0)
		return -1;
	j->head = iov[0].buffer.length;
	j->tail = iov[3].buffer.length;
	return 0;
}

/* ---- ours (src/rpc/gss_krb5.c) ---- */

/* Sealed in place by the client's end, opened in place by the server's (the plain text then
 * back where it was, for the next round). */
static int own_wrap_step(struct job *j)
{
	return gss_krb5_wrap(j->p->own_init, j->buf + j->head, j->len, j->head, j->tail);
}

static int own_unwrap_step(struct job *j)
{
	uint8_t *data;
	size_t dlen;

	if (gss_krb5_unwrap(j->p->own_accept, j->buf, j->head + j->len + j->tail, &data, &dlen) < 0)
		return -1;
	return data == j->buf + j->head && dlen == j->len ? 0 : -1;
}

/* The server's end seals the pages into out (a READ reply from the cache). */
static int own_wrap_out_step(struct job *j)
{
	return gss_krb5_wrap_iov_out(j->p->own_accept, j->pages, j->npages, j->out);
}

static int own_mic_step(struct job *j)
{
	return gss_krb5_get_mic_iov(j->p->own_accept, j->pages, j->npages, j->mic,
				    sizeof(j->mic)) < 0 ? -1 : 0;
}

static int own_verify_mic_step(struct job *j)
{
	return gss_krb5_verify_mic_iov(j->p->own_init, j->pages, j->npages, j->mic,
				       gss_krb5_mic_len(j->p->own_accept));
}

/* step alone, over and over until it took secs of CPU. */
static int solo_loop(struct job *j, step_fn *step, double secs, struct tally *a)
{
	while (a->cpu < secs) {
		double t0 = thread_cpu();
		int rc = step(j);

		a->cpu += thread_cpu() - t0;
		a->calls++;
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The job's buffers for our operations: the pages (other memory than buf) and out. */
static int own_buffers(struct job *j)
{
	uint8_t *src;

	j->npages = (int)((j->len + 4095) / 4096);
	gss_krb5_wrap_room(j->p->own_accept, j->len, &j->head, &j->tail);
	j->pages = calloc((size_t)j->npages + 1, sizeof(*j->pages));
	src = malloc(j->len + 1);
	j->out = malloc(j->head + j->len + j->tail);
	if (j->pages == NULL || src == NULL || j->out == NULL) {
		free(src);
		return -1;
	}
	for (size_t i = 0; i < j->len; i++)
		src[i] = (uint8_t)(i * 137 + 11);
	j->pages[0].iov_base = src;     /* freed through it, even with no page */
	for (int i = 0; i < j->npages; i++) {
		size_t at = (size_t)i * 4096;

		j->pages[i] = (struct iovec){ src + at, j->len - at < 4096 ? j->len - at : 4096 };
	}
	return 0;
}

static int measure_own(const struct pair *p, size_t size, double secs)
{
	struct tally t[5] = { { "own_wrap", 0, 0 }, { "own_unwrap", 0, 0 }, { "own_wrap_out", 0, 0 },
	                      { "own_mic", 0, 0 }, { "own_verify_mic", 0, 0 } };
	struct job j = { .p = p, .buf = malloc(size + 4096), .len = size };
	int rc = -1;

	if (j.buf != NULL && own_buffers(&j) == 0 && j.head + j.tail <= 4096 &&
	    pair_loop(&j, own_wrap_step, own_unwrap_step, secs, &t[0], &t[1]) == 0 &&
	    solo_loop(&j, own_wrap_out_step, secs, &t[2]) == 0 &&
	    pair_loop(&j, own_mic_step, own_verify_mic_step, secs, &t[3], &t[4]) == 0)
		rc = 0;
	for (int i = 0; i < 5 && rc == 0; i++)
		report(&t[i], size);
	if (rc < 0)
		fprintf(stderr, "gss-cost: one of our operations on %zu bytes failed\n", size);
	if (j.pages != NULL)
		free(j.pages[0].iov_base);
	free(j.pages);
	free(j.out);
	free(j.buf);
	return rc;
}

static int measure(const struct pair *p, size_t size, double secs)
{
	struct tally t[6] = { { "wrap_iov", 0, 0 }, { "unwrap_iov", 0, 0 }, { "wrap", 0, 0 },
	                      { "unwrap", 0, 0 }, { "get_mic", 0, 0 }, { "verify_mic", 0, 0 } };
	struct job j = { .p = p, .buf = malloc(size + 4096), .len = size };
	int rc = -1;

	if (j.buf == NULL)
		return -1;
	for (size_t i = 0; i < size + 4096; i++)
		j.buf[i] = (uint8_t)(i * 131 + 7);
	if (wrap_room(&j) == 0 && j.head + j.tail <= 4096 &&
	    pair_loop(&j, wrap_iov_step, unwrap_iov_step, secs, &t[0], &t[1]) == 0 &&
	    pair_loop(&j, wrap_step, unwrap_step, secs, &t[2], &t[3]) == 0 &&
	    pair_loop(&j, get_mic_step, verify_mic_step, secs, &t[4], &t[5]) == 0)
		rc = 0;
	for (int i = 0; i < 6 && rc == 0; i++)
		report(&t[i], size);
	if (rc < 0)
		fprintf(stderr, "gss-cost: an operation on %zu bytes failed\n", size);
	free(j.buf);
	return rc;
}

/* ---- the context's enctype ---- */

static const char *enctype_name(int32_t e)
{
	switch (e) {
	case 17: return "aes128-cts-hmac-sha1-96";
	case 18: return "aes256-cts-hmac-sha1-96";
	case 19: return "aes128-cts-hmac-sha256-128";
	case 20: return "aes256-cts-hmac-sha384-192";
	case 23: return "arcfour-hmac";
	case 25: return "camellia128-cts-cmac";
	case 26: return "camellia256-cts-cmac";
	default: return "?";
	}
}

/* One end of the context exported (a lucid context: MIT spends the handle) into ours, NULL
 * when ours does not take its enctype; *e the key that seals (the acceptor's subkey when it
 * sent one, else the session key). */
static struct gss_krb5 *export_end(gss_ctx_id_t *ctx, int32_t *e)
{
	OM_uint32 minor;
	void *lucid = NULL;
	struct gss_krb5 *own = NULL;

	if (gss_krb5_export_lucid_sec_context(&minor, ctx, 1, &lucid) == GSS_S_COMPLETE) {
		gss_krb5_lucid_context_v1_t *l = lucid;

		if (l->protocol == 1)
			*e = l->cfx_kd.have_acceptor_subkey ? l->cfx_kd.acceptor_subkey.type
							    : l->cfx_kd.ctx_key.type;
		else
			*e = l->rfc1964_kd.ctx_key.type;
		own = gss_krb5_from_lucid(l);
		gss_krb5_free_lucid_sec_context(&minor, lucid);
	}
	return own;
}

/* Both ends into ours once MIT's are measured (it spends them), the enctype printed. */
static int own_ends(struct pair *p)
{
	int32_t e = -1;

	p->own_init = export_end(&p->init, &e);
	p->own_accept = export_end(&p->accept, &e);
	printf("enctype=%s etype=%d\n", enctype_name(e), e);
	fflush(stdout);
	if (p->own_init != NULL && p->own_accept != NULL)
		return 0;
	fprintf(stderr, "gss-cost: enctype %d is not nfsd-uc's own (src/rpc/gss_krb5.c): "
	        "MIT's only\n", e);
	return -1;
}

static int parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seconds", required_argument, NULL, 's' }, { "sizes", required_argument, NULL, 'z' },
		{ "principal", required_argument, NULL, 'p' },
		{ "password", required_argument, NULL, 'P' }, { "keytab", required_argument, NULL, 'k' },
		{ "server-keytab", required_argument, NULL, 'K' },
		{ "target", required_argument, NULL, 't' }, { NULL, 0, NULL, 0 },
	};
	char *sizes = NULL;
	int c;

	*o = (struct opts){ .principal = getenv("NFSDUC_USER"), .password = getenv("NFSDUC_PASSWORD"),
	                    .server_keytab = getenv("NFSDUC_KEYTAB"), .target = "nfs@localhost",
	                    .seconds = 1.0 };
	while ((c = getopt_long(argc, argv, "s:z:p:P:k:K:t:", lo, NULL)) != -1) {
		switch (c) {
		case 's': o->seconds = atof(optarg); break;
		case 'z': sizes = optarg; break;
		case 'p': o->principal = optarg; break;
		case 'P': o->password = optarg; break;
		case 'k': o->keytab = optarg; break;
		case 'K': o->server_keytab = optarg; break;
		case 't': o->target = optarg; break;
		default: return -1;
		}
	}
	for (char *w = sizes ? strtok(sizes, ",") : NULL; w && o->nsizes < 8; w = strtok(NULL, ","))
		o->sizes[o->nsizes++] = strtoul(w, NULL, 0) << (strchr(w, 'M') ? 20 : 0);
	if (o->nsizes == 0) {
		o->sizes[o->nsizes++] = 1u << 20;
		o->sizes[o->nsizes++] = 47008;
	}
	return optind == argc && o->seconds > 0 && o->principal && o->server_keytab &&
	       (o->password || o->keytab) ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct pair p;
	OM_uint32 minor;
	int rc = 0;

	if (parse_args(&o, argc, argv) < 0) {
		fputs("usage: gss-cost [--seconds S] [--sizes 1M,47008] [--principal P] [--password PW |"
		      " --keytab FILE]\n                [--server-keytab FILE] [--target nfs@localhost]\n"
		      "(defaults from tests/with_kdc.sh's environment: NFSDUC_USER, NFSDUC_PASSWORD,"
		      " NFSDUC_KEYTAB)\n", stderr);
		return 2;
	}
	if (make_pair(&o, &p) < 0)
		return 3;
	for (unsigned i = 0; i < o.nsizes && rc == 0; i++)
		rc = measure(&p, o.sizes[i], o.seconds);
	if (own_ends(&p) == 0)
		for (unsigned i = 0; i < o.nsizes && rc == 0; i++)
			rc = measure_own(&p, o.sizes[i], o.seconds);
	gss_krb5_free(p.own_init);
	gss_krb5_free(p.own_accept);
	gss_delete_sec_context(&minor, &p.init, GSS_C_NO_BUFFER);
	gss_delete_sec_context(&minor, &p.accept, GSS_C_NO_BUFFER);
	return rc ? 3 : 0;
}
