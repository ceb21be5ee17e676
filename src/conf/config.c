/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc.conf parser. Each section kind has a table of keys; adding a key is one table row
 * (plus a parser function when the value is of a new kind). The config is built in a local
 * struct and handed to the caller only when the whole file parsed, so every error path ends in
 * one config_free(). */
#include "conf/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <sys/stat.h>

#define KIB 1024ULL
#define MIB (1024ULL * KIB)
#define GIB (1024ULL * MIB)
#define ANON_ID 65534u
#define MAX_KEYS 24   /* rows per section table; static asserts below the tables check it */

enum section { SECT_NONE, SECT_SERVER, SECT_CACHE, SECT_METRICS, SECT_LOCK, SECT_EXPORT, SECT_COUNT };

struct parser;

struct key_def {
	const char *name;
	/* obj is the struct config (server, cache) or the struct export_cfg being filled. */
	int (*parse)(struct parser *p, const struct key_def *k, const char *val, void *obj);
	size_t off;
	unsigned long long min, max;
};

struct parser {
	const char *file;          /* as given: every message starts with it */
	char *dir;                 /* absolute directory of file: base of relative paths */
	unsigned line;
	char *err;
	size_t errlen;
	struct config *cfg;
	enum section sect;
	const struct key_def *keys;     /* table of the current section */
	unsigned seen[MAX_KEYS];        /* line where each key of the section was set; 0 = not yet */
	unsigned sect_line[SECT_COUNT]; /* first [server] / [cache] line, to refuse a second one */
	unsigned fsid_line;             /* line of the current export's "fsid =", 0 = derive it */
	unsigned memory_line;           /* the last of the receive_memory* and max_record lines */
};

#define FIELD(type) ((type *)((char *)obj + k->off))

static int vfail_at(struct parser *p, unsigned line, const char *fmt, va_list ap)
{
	if (!p->errlen)
		return -1;
	int n = line ? snprintf(p->err, p->errlen, "%s:%u: ", p->file, line)
		     : snprintf(p->err, p->errlen, "%s: ", p->file);
	if (n >= 0 && (size_t)n < p->errlen)
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	return -1;
}

__attribute__((format(printf, 3, 4)))
static int fail_at(struct parser *p, unsigned line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail_at(p, line, fmt, ap);
	va_end(ap);
	return -1;
}

__attribute__((format(printf, 2, 3)))
static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail_at(p, p->line, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- value helpers ---------------------------------------------------------------------- */

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Plain decimal only: strtoull alone would take "-1", " 7" and "0x10". */
static bool parse_ull(const char *s, unsigned long long *out)
{
	if (!isdigit((unsigned char)*s))
		return false;
	char *end;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0';
}

long long config_parse_size(const char *s)
{
	unsigned long long v = 0;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	char *end;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end != '\0' || v > ((unsigned long long)LLONG_MAX >> shift))
		return -1;
	return (long long)(v << shift);
}

/* Sizes in messages read as the user would write them: 65536 -> "64K". */
static const char *fmt_size(unsigned long long v, char buf[32])
{
	static const char suffix[] = "GMK";
	for (int i = 0; i < 3; i++) {
		unsigned long long unit = 1ULL << (10 * (3 - i));
		if (v && v % unit == 0) {
			snprintf(buf, 32, "%llu%c", v / unit, suffix[i]);
			return buf;
		}
	}
	snprintf(buf, 32, "%llu", v);
	return buf;
}

/* REL against the conf file's directory unless absolute. */
static char *resolve_path(struct parser *p, const char *rel)
{
	char *out;
	if (rel[0] == '/')
		return strdup(rel);
	if (asprintf(&out, "%s%s%s", p->dir, strcmp(p->dir, "/") ? "/" : "", rel) < 0)
		return NULL;
	return out;
}

static int out_of_memory(struct parser *p)
{
	return fail(p, "%s", strerror(ENOMEM));
}

/* ---- key parsers ------------------------------------------------------------------------ */

static int parse_number(struct parser *p, const struct key_def *k, const char *val,
			unsigned long long *out)
{
	if (!parse_ull(val, out))
		return fail(p, "%s = %s is not a number", k->name, val);
	if (*out < k->min || *out > k->max)
		return fail(p, "%s = %s is out of range (%llu..%llu)", k->name, val, k->min, k->max);
	return 0;
}

static int parse_port(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	unsigned long long v = 0;
	if (parse_number(p, k, val, &v) < 0)
		return -1;
	*FIELD(uint16_t) = (uint16_t)v;
	return 0;
}

static int parse_unsigned(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	unsigned long long v = 0;
	if (parse_number(p, k, val, &v) < 0)
		return -1;
	*FIELD(unsigned) = (unsigned)v;
	return 0;
}

static int parse_fsid(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	unsigned long long v = 0;
	if (parse_number(p, k, val, &v) < 0)
		return -1;
	*FIELD(uint32_t) = (uint32_t)v;
	p->fsid_line = p->line;
	return 0;
}

static int parse_size(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	char lo[32], hi[32];
	long long v = config_parse_size(val);
	if (v < 0)
		return fail(p, "%s = %s is not a size (a number with an optional K, M or G suffix)",
			    k->name, val);
	if ((unsigned long long)v < k->min || (unsigned long long)v > k->max)
		return fail(p, "%s = %s is out of range (%s..%s)", k->name, val,
			    fmt_size(k->min, lo), fmt_size(k->max, hi));
	*FIELD(size_t) = (size_t)v;
	return 0;
}

/* "auto" lets the server pick from statfs and STATX_DIOALIGN; a given size must be a power of
 * two because block indexes are computed with shifts and masks. */
static int parse_block(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	if (strcasecmp(val, "auto") == 0) {
		*FIELD(size_t) = 0;
		return 0;
	}
	if (parse_size(p, k, val, obj) < 0)
		return -1;
	size_t v = *FIELD(size_t);
	if (v & (v - 1))
		return fail(p, "%s = %s is not a power of two", k->name, val);
	return 0;
}

/* yes/no, true/false, on/off, 1/0 (any case): 1 or 0; -1 for any other word. */
static int bool_word(const char *val)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (strcasecmp(val, yes[i]) == 0)
			return 1;
		if (strcasecmp(val, no[i]) == 0)
			return 0;
	}
	return -1;
}

static const char *const rpcbind_mode_names[] = {
	[RPCBIND_NO] = "no", [RPCBIND_YES] = "yes", [RPCBIND_AUTO] = "auto", [RPCBIND_OWN] = "own",
};

const char *rpcbind_mode_name(enum rpcbind_mode m)
{
	return (size_t)m < sizeof rpcbind_mode_names / sizeof rpcbind_mode_names[0]
		       ? rpcbind_mode_names[m] : "?";
}

/* auto | yes | no | own; the key was a bool, so its spellings still mean yes and no. */
static int parse_rpcbind(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	int b = bool_word(val);
	if (b >= 0)
		*FIELD(enum rpcbind_mode) = b ? RPCBIND_YES : RPCBIND_NO;
	else if (strcasecmp(val, "auto") == 0)
		*FIELD(enum rpcbind_mode) = RPCBIND_AUTO;
	else if (strcasecmp(val, "own") == 0)
		*FIELD(enum rpcbind_mode) = RPCBIND_OWN;
	else
		return fail(p, "%s = %s is not auto, yes, no or own (yes/no also as true/false, on/off "
			    "or 1/0)", k->name, val);
	return 0;
}

static int parse_log_level(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	static const struct { const char *name; int level; } levels[] = {
		{"error", LOG_ERR}, {"warning", LOG_WARNING}, {"info", LOG_INFO}, {"debug", LOG_DEBUG}};
	for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
		if (strcasecmp(val, levels[i].name) == 0) {
			*FIELD(int) = levels[i].level;
			return 0;
		}
	return fail(p, "%s = %s is not error, warning, info or debug", k->name, val);
}

static const char *const io_mode_names[] = {
	[IO_MODE_DIRECT] = "direct", [IO_MODE_DONTCACHE] = "dontcache",
	[IO_MODE_BUFFERED] = "buffered", [IO_MODE_CACHED] = "cached",
};

const char *io_mode_name(enum io_mode m)
{
	return (size_t)m < sizeof io_mode_names / sizeof io_mode_names[0] ? io_mode_names[m] : "?";
}

static int parse_io_mode(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	bool writes = strcmp(k->name, "write_mode") == 0;
	for (size_t i = 0; i < sizeof io_mode_names / sizeof io_mode_names[0]; i++) {
		if (strcasecmp(val, io_mode_names[i]) == 0) {
			/* READs go through nfsd-uc's cache in direct mode already: cached is a
			 * synonym there. */
			if (!writes && i == IO_MODE_CACHED)
				i = IO_MODE_DIRECT;
			*FIELD(enum io_mode) = (enum io_mode)i;
			return 0;
		}
	}
	return fail(p, "%s = %s is not cached, direct, dontcache or buffered", k->name, val);
}

/* One address or several, space-separated: IPv4 and IPv6 literals, each listened on. */
static int parse_listen(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	struct config *c = obj;
	char copy[CFG_LISTEN_MAX * (INET6_ADDRSTRLEN + 1) + 1], *save;
	unsigned char buf[16];
	size_t n = 0;
	if (strlen(val) >= sizeof copy)
		return fail(p, "%s: more than %d addresses", k->name, CFG_LISTEN_MAX);
	strcpy(copy, val);
	for (char *a = strtok_r(copy, " \t,", &save); a; a = strtok_r(NULL, " \t,", &save)) {
		if (inet_pton(AF_INET, a, buf) != 1 && inet_pton(AF_INET6, a, buf) != 1)
			return fail(p, "%s = %s is not an IPv4 or IPv6 address", k->name, a);
		for (size_t i = 0; i < n; i++)
			if (strcmp(c->listen_addr[i], a) == 0)
				return fail(p, "%s: %s is listed twice", k->name, a);
		if (n == CFG_LISTEN_MAX)
			return fail(p, "%s: more than %d addresses", k->name, CFG_LISTEN_MAX);
		snprintf(c->listen_addr[n++], INET6_ADDRSTRLEN, "%s", a);
	}
	if (n == 0)
		return fail(p, "%s: no address", k->name);
	char *s = strdup(val);
	if (!s)
		return out_of_memory(p);
	free(c->listen);
	c->listen = s;
	c->nlisten = n;
	return 0;
}

/* ADDR:PORT, ADDR an IPv4 literal or a bracketed IPv6 one ([::1]:9101). */
int config_parse_hostport(const char *val, struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(val, ':');
	if (!colon || colon == val || (size_t)(colon - val) >= sizeof host)
		return -1;
	memcpy(host, val, (size_t)(colon - val));
	host[colon - val] = '\0';
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || port == 0 || port > 65535)
		return -1;
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	size_t n = strlen(host);
	if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
		host[n - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			return -1;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
		return -1;
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	return 0;
}

static int parse_hostport(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	struct sockaddr_storage ss;
	if (config_parse_hostport(val, &ss) < 0)
		return fail(p, "%s = %s is not ADDRESS:PORT (an IPv4 address, or an IPv6 one in "
			    "brackets: 127.0.0.1:9101, [::1]:9101)", k->name, val);
	char *s = strdup(val);
	if (!s)
		return out_of_memory(p);
	free(*FIELD(char *));
	*FIELD(char *) = s;
	return 0;
}

/* Relative to the conf file's directory; need not exist yet (the server creates it). */
static int parse_dir(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	(void)k;
	char *s = resolve_path(p, val);
	if (!s)
		return out_of_memory(p);
	free(*FIELD(char *));
	*FIELD(char *) = s;
	return 0;
}

/* ---- clients = ADDR[/PREFIX](opts) ... -------------------------------------------------- */

static int host_error(struct parser *p, const char *host)
{
	if (host[0] == '@')
		return fail(p, "clients: netgroups (%s) are not supported yet; use an IPv4 or IPv6 "
			    "address, ADDR/PREFIX, a host name, a wildcard name or *", host);
	if (strchr(host, ':'))
		return fail(p, "clients: '%s' is not a valid IPv6 address", host);
	return fail(p, "clients: '%s' is not a valid IPv4 address", host);
}

/* A name as DNS allows it (letters, digits, '-', '.', '_'), with the wildcards * ? [ ]. */
static bool name_like(const char *s, bool *wild)
{
	*wild = false;
	if (!*s || strspn(s, "0123456789.") == strlen(s))
		return false;
	for (; *s; s++) {
		if (strchr("*?[]", *s))
			*wild = true;
		else if (!isalnum((unsigned char)*s) && !strchr("-._", *s))
			return false;
	}
	return true;
}

/* A v4-mapped IPv6 rule becomes the IPv4 rule it means, so that matching only ever compares
 * IPv4 with IPv4 (export_match maps peers the same way). */
static void unmap_v4(struct client_rule *r)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (r->family != AF_INET6 || r->prefix < 96 || memcmp(r->addr, mapped, 12) != 0)
		return;
	memmove(r->addr, r->addr + 12, 4);
	memset(r->addr + 4, 0, 12);
	r->family = AF_INET;
	r->prefix -= 96;
}

static int parse_host(struct parser *p, char *host, struct client_rule *r)
{
	if (strcmp(host, "*") == 0) {
		r->family = AF_UNSPEC;
		r->prefix = 0;
		return 0;
	}
	char *slash = strchr(host, '/');
	bool wild;
	if (!slash && name_like(host, &wild)) {
		if (strlen(host) >= CFG_PATTERN_MAX)
			return fail(p, "clients: '%s' is longer than %d characters", host,
				    CFG_PATTERN_MAX - 1);
		r->family = AF_UNSPEC;
		snprintf(r->pattern, sizeof r->pattern, "%s", host);
		r->prefix = wild ? 0 : 1;      /* 1: a host name to resolve (parse_clients) */
		return 0;
	}
	if (slash)
		*slash++ = '\0';
	if (inet_pton(AF_INET, host, r->addr) == 1)
		r->family = AF_INET;
	else if (inet_pton(AF_INET6, host, r->addr) == 1)
		r->family = AF_INET6;
	else
		return host_error(p, host);
	unsigned bits = r->family == AF_INET ? 32 : 128;
	unsigned long long prefix = bits;
	if (slash && (!parse_ull(slash, &prefix) || prefix > bits))
		return fail(p, "clients: bad prefix '/%s' for %s (0..%u)", slash, host, bits);
	r->prefix = (unsigned)prefix;
	unmap_v4(r);
	return 0;
}

static int parse_anon_id(struct parser *p, const char *host, const char *opt,
			 unsigned long long *out)
{
	const char *val = strchr(opt, '=') + 1;
	/* (uid_t)-1 means "no change" to chown/setfsuid: never a usable identity. */
	if (!parse_ull(val, out) || *out >= UINT32_MAX)
		return fail(p, "clients: %s: bad value in '%s' (0..%u)", host, opt, UINT32_MAX - 1);
	return 0;
}

/* Edit distance (insertions, deletions, substitutions, swaps of neighbours) of two short words,
 * for "did you mean": 99 when either is too long to bother. */
static unsigned distance(const char *a, const char *b)
{
	enum { W = 40 };
	size_t la = strlen(a), lb = strlen(b);
	unsigned d[W + 1][W + 1];
	if (la > W || lb > W)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned best = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) !=
							   tolower((unsigned char)b[j - 1]));
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

/* The known word nearest to word, if near enough to be a typo of it (NULL otherwise). */
static const char *nearest(const char *word, const char *const *known, size_t n)
{
	const char *best = NULL;
	unsigned bd = 99, limit = strlen(word) < 6 ? 1 : strlen(word) < 12 ? 2 : 3;
	for (size_t i = 0; i < n; i++) {
		unsigned d = distance(word, known[i]);
		if (d < bd) {
			bd = d;
			best = known[i];
		}
	}
	return bd <= limit ? best : NULL;
}

struct squash_flags {
	bool root, all;
};

static int unknown_option(struct parser *p, const char *host, const char *opt)
{
	static const char *const known[] = {
		"rw", "ro", "root_squash", "no_root_squash", "all_squash", "no_all_squash", "anonuid",
		"anongid", "secure", "insecure", "subtree_check", "no_subtree_check"};
	char word[64], hint[80] = "";
	snprintf(word, sizeof word, "%.*s", (int)strcspn(opt, "="), opt);
	const char *near = nearest(word, known, sizeof known / sizeof known[0]);
	if (near)
		snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
	return fail(p, "clients: %s: unknown option '%s' (%sknown: rw, ro, root_squash, "
		    "no_root_squash, all_squash, no_all_squash, anonuid=N, anongid=N, secure, "
		    "insecure, subtree_check, no_subtree_check)", host, opt, hint);
}

static int parse_option(struct parser *p, const char *host, const char *opt,
			struct client_rule *r, struct squash_flags *sq)
{
	if (strcmp(opt, "rw") == 0 || strcmp(opt, "ro") == 0)
		r->rw = opt[1] == 'w';
	else if (strcmp(opt, "secure") == 0 || strcmp(opt, "insecure") == 0)
		r->secure = opt[0] == 's';
	else if (strcmp(opt, "subtree_check") == 0 || strcmp(opt, "no_subtree_check") == 0)
		r->subtree_check = opt[0] == 's';
	else if (strcmp(opt, "root_squash") == 0 || strcmp(opt, "no_root_squash") == 0)
		sq->root = opt[0] == 'r';
	else if (strcmp(opt, "all_squash") == 0 || strcmp(opt, "no_all_squash") == 0)
		sq->all = opt[0] == 'a';
	else if (strncmp(opt, "anonuid=", 8) == 0 || strncmp(opt, "anongid=", 8) == 0) {
		unsigned long long id = 0;
		if (parse_anon_id(p, host, opt, &id) < 0)
			return -1;
		if (opt[4] == 'u')
			r->anonuid = (uid_t)id;
		else
			r->anongid = (gid_t)id;
	} else if (*opt == '\0')
		return fail(p, "clients: %s: empty option", host);
	else
		return unknown_option(p, host, opt);
	return 0;
}

/* Options apply in order, later ones win, as in exports(5); all_squash overrides
 * no_root_squash whatever their order, as knfsd does. */
static int parse_options(struct parser *p, const char *host, char *opts, struct client_rule *r)
{
	struct squash_flags sq = {.root = true, .all = false};
	if (*opts) {
		for (char *opt = opts, *next; opt; opt = next) {
			next = strchr(opt, ',');
			if (next)
				*next++ = '\0';
			if (parse_option(p, host, opt, r, &sq) < 0)
				return -1;
		}
	}
	r->squash = sq.all ? SQUASH_ALL : sq.root ? SQUASH_ROOT : SQUASH_NONE;
	return 0;
}

static int parse_client(struct parser *p, char *tok, struct client_rule *r)
{
	*r = (struct client_rule){.rw = false, .squash = SQUASH_ROOT, .anonuid = ANON_ID,
				  .anongid = ANON_ID, .secure = true};
	char *open = strchr(tok, '(');
	size_t len = strlen(tok);
	/* "host (rw)" means host with default options plus (rw) for the world in exports(5):
	 * a classic mistake, so refuse it rather than guess. */
	if (open == tok)
		return fail(p, "clients: '%s' has no address (no space before '('; write *%s for "
			    "every client)", tok, tok);
	if (open && tok[len - 1] != ')')
		return fail(p, "clients: missing ')' in '%s' (no spaces inside the options)", tok);
	char *close = strchr(tok, ')');
	if (close && (!open || close != tok + len - 1))
		return fail(p, "clients: unexpected ')' in '%s'", tok);
	char *opts = "";
	if (open) {
		*open = '\0';
		tok[len - 1] = '\0';
		opts = open + 1;
	}
	if (parse_host(p, tok, r) < 0)
		return -1;
	return parse_options(p, tok, opts, r);
}

/* A host name becomes one rule per address it resolves to, now (at load and at each reload),
 * as exportfs does; one that does not resolve stops the load (a typo, or DNS not up yet). */
static int resolve_host(struct parser *p, const struct client_rule *r, struct client_rule **rules,
			size_t *n)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
	int rc = getaddrinfo(r->pattern, NULL, &hints, &ai);
	if (rc != 0)
		return fail(p, "clients: cannot resolve host name '%s': %s", r->pattern,
			    gai_strerror(rc));
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		struct client_rule one = *r;
		one.pattern[0] = '\0';
		if (a->ai_family == AF_INET) {
			one.family = AF_INET;
			one.prefix = 32;
			memcpy(one.addr, &((struct sockaddr_in *)a->ai_addr)->sin_addr, 4);
		} else if (a->ai_family == AF_INET6) {
			one.family = AF_INET6;
			one.prefix = 128;
			memcpy(one.addr, &((struct sockaddr_in6 *)a->ai_addr)->sin6_addr, 16);
			unmap_v4(&one);
		} else {
			continue;
		}
		bool dup = false;
		for (size_t i = 0; i < *n && !dup; i++)
			dup = (*rules)[i].family == one.family && (*rules)[i].prefix == one.prefix &&
			      memcmp((*rules)[i].addr, one.addr, 16) == 0 && !(*rules)[i].pattern[0];
		if (dup)
			continue;
		struct client_rule *grown = reallocarray(*rules, *n + 1, sizeof **rules);
		if (!grown) {
			freeaddrinfo(ai);
			return out_of_memory(p);
		}
		*rules = grown;
		(*rules)[(*n)++] = one;
	}
	freeaddrinfo(ai);
	return 0;
}

static int parse_clients(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	(void)k;
	struct export_cfg *e = obj;
	struct client_rule *rules = NULL;
	size_t n = 0;
	char *copy = strdup(val), *save = NULL;
	if (!copy)
		return out_of_memory(p);
	for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		struct client_rule r;
		if (parse_client(p, tok, &r) < 0)
			goto fail;
		if (r.pattern[0] && r.prefix == 1) {
			if (resolve_host(p, &r, &rules, &n) < 0)
				goto fail;
			continue;
		}
		struct client_rule *grown = reallocarray(rules, n + 1, sizeof *rules);
		if (!grown) {
			out_of_memory(p);
			goto fail;
		}
		rules = grown;
		rules[n++] = r;
	}
	free(copy);
	e->clients = rules;
	e->nclients = n;
	return 0;
fail:
	free(copy);
	free(rules);
	return -1;
}

/* ---- tables ----------------------------------------------------------------------------- */

#define CFG(field) offsetof(struct config, field)
#define EXP(field) offsetof(struct export_cfg, field)

static const struct key_def server_keys[] = {
	{"listen", parse_listen, CFG(listen), 0, 0},
	{"port", parse_port, CFG(port), 1, 65535},
	{"mount_port", parse_port, CFG(mount_port), 1, 65535},
	{"threads", parse_unsigned, CFG(threads), 0, 1024},
	{"requests_per_connection", parse_unsigned, CFG(requests_per_connection), 1, 65536},
	{"requests_per_ring", parse_unsigned, CFG(requests_per_ring), 1, 1 << 20},
	{"blocking_threads", parse_unsigned, CFG(blocking_threads), 1, 256},
	{"max_record", parse_size, CFG(max_record), 64 * KIB, 64 * MIB},
	{"connections", parse_unsigned, CFG(max_connections), 1, 1 << 20},
	{"connections_per_client", parse_unsigned, CFG(max_connections_per_client), 1, 1 << 20},
	{"receive_memory", parse_size, CFG(receive_memory), 1 * MIB, 1024 * GIB},
	{"receive_memory_per_connection", parse_size, CFG(receive_memory_per_connection), 0,
	 1024 * GIB},
	{"idle_timeout", parse_unsigned, CFG(idle_timeout), 0, 86400},
	{"record_timeout", parse_unsigned, CFG(record_timeout), 1, 3600},
	{"reply_cache_entries", parse_unsigned, CFG(reply_cache_entries), 0, 1 << 24},
	{"reply_cache_size", parse_size, CFG(reply_cache_size), 0, 16 * GIB},
	{"mount_list_entries", parse_unsigned, CFG(mount_list_entries), 1, 1 << 20},
	{"state_dir", parse_dir, CFG(state_dir), 0, 0},
	{"rpcbind", parse_rpcbind, CFG(rpcbind), 0, 0},
	{"log_level", parse_log_level, CFG(log_level), 0, 0},
	{NULL, NULL, 0, 0, 0},
};

static const struct key_def cache_keys[] = {
	{"size", parse_size, CFG(cache_size), 64 * KIB, 1024 * GIB},
	{"file_size", parse_size, CFG(cache_file_size), 0, 1024 * GIB},
	{"writeback_depth", parse_unsigned, CFG(cache_writeback_depth), 1, 1024},
	{NULL, NULL, 0, 0, 0},
};

static const struct key_def metrics_keys[] = {
	{"listen", parse_hostport, CFG(metrics_listen), 0, 0},
	{"connections", parse_unsigned, CFG(metrics_connections), 1, 4096},
	{"connections_per_client", parse_unsigned, CFG(metrics_connections_per_client), 1, 4096},
	{"timeout", parse_unsigned, CFG(metrics_timeout), 1, 3600},
	{NULL, NULL, 0, 0, 0},
};

static const struct key_def lock_keys[] = {
	{"port", parse_port, CFG(lock_port), 0, 65535},
	{"grace_period", parse_unsigned, CFG(grace_period), 0, 3600},
	{"locks", parse_unsigned, CFG(max_locks), 1, 1 << 24},
	{"locks_per_client", parse_unsigned, CFG(max_locks_per_client), 1, 1 << 24},
	{"waiters", parse_unsigned, CFG(max_waiters), 1, 1 << 20},
	{"waiters_per_client", parse_unsigned, CFG(max_waiters_per_client), 1, 1 << 20},
	{"names_per_client", parse_unsigned, CFG(max_names_per_client), 1, 65536},
	{NULL, NULL, 0, 0, 0},
};

static const struct key_def export_keys[] = {
	{"clients", parse_clients, EXP(clients), 0, 0},
	{"fsid", parse_fsid, EXP(fsid), 1, UINT32_MAX},
	{"write_mode", parse_io_mode, EXP(write_mode), 0, 0},
	{"read_mode", parse_io_mode, EXP(read_mode), 0, 0},
	{"block", parse_block, EXP(block), 512, 1 * MIB},
	{NULL, NULL, 0, 0, 0},
};

_Static_assert(sizeof server_keys / sizeof server_keys[0] <= MAX_KEYS, "raise MAX_KEYS");
_Static_assert(sizeof cache_keys / sizeof cache_keys[0] <= MAX_KEYS, "raise MAX_KEYS");
_Static_assert(sizeof export_keys / sizeof export_keys[0] <= MAX_KEYS, "raise MAX_KEYS");

/* ---- sections --------------------------------------------------------------------------- */

/* FNV-1a of the canonical path. File handles carry the fsid, so this function must never
 * change: a different hash would make every handle a client holds stale after an upgrade. */
static uint32_t derive_fsid(const char *path)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *s = (const unsigned char *)path; *s; s++)
		h = (h ^ *s) * 16777619u;
	return h ? h : 1;
}

static int check_fsid(struct parser *p, const struct export_cfg *e)
{
	const struct config *c = p->cfg;
	for (size_t i = 0; i + 1 < c->nexports; i++) {
		const struct export_cfg *o = &c->exports[i];
		if (o->fsid != e->fsid)
			continue;
		if (p->fsid_line)
			return fail_at(p, p->fsid_line, "fsid %u is already used by export %s (line %u)",
				       e->fsid, o->path, o->line);
		return fail_at(p, e->line, "export %s: its derived fsid %u is already used by export "
			       "%s (line %u); set fsid explicitly", e->path, e->fsid, o->path, o->line);
	}
	return 0;
}

static int finish_export(struct parser *p)
{
	struct export_cfg *e = &p->cfg->exports[p->cfg->nexports - 1];
	if (e->nclients == 0)
		return fail_at(p, e->line, "export %s has no clients line", e->path);
	if (!p->fsid_line)
		e->fsid = derive_fsid(e->path);
	return check_fsid(p, e);
}

static int end_section(struct parser *p)
{
	int rc = p->sect == SECT_EXPORT ? finish_export(p) : 0;
	p->sect = SECT_NONE;
	return rc;
}

static int enter_section(struct parser *p, enum section s, const struct key_def *keys)
{
	p->sect = s;
	p->keys = keys;
	memset(p->seen, 0, sizeof p->seen);
	return 0;
}

/* realpath so that two spellings of one directory are one export and MOUNT matches the
 * canonical name. */
static char *canonical_dir(struct parser *p, const char *given)
{
	char *abs = resolve_path(p, given);
	if (!abs) {
		out_of_memory(p);
		return NULL;
	}
	char *canon = realpath(abs, NULL);
	struct stat st;
	if (!canon && errno == ENOENT)
		fail(p, "export path %s does not exist", abs);
	else if (!canon)
		fail(p, "export path %s: %s", abs, strerror(errno));
	else if (stat(canon, &st) < 0)
		fail(p, "export path %s: %s", abs, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		fail(p, "export path %s is not a directory", abs);
	else {
		free(abs);
		return canon;
	}
	free(abs);
	free(canon);
	return NULL;
}

static int begin_export(struct parser *p, const char *given)
{
	struct config *c = p->cfg;
	if (*given == '\0')
		return fail(p, "[export] needs a path: [export /path/to/dir]");
	char *path = canonical_dir(p, given);
	if (!path)
		return -1;
	for (size_t i = 0; i < c->nexports; i++) {
		if (strcmp(c->exports[i].path, path) == 0) {
			fail(p, "duplicate export %s (first on line %u)", path, c->exports[i].line);
			free(path);
			return -1;
		}
	}
	struct export_cfg *grown = reallocarray(c->exports, c->nexports + 1, sizeof *grown);
	if (!grown) {
		free(path);
		return out_of_memory(p);
	}
	c->exports = grown;
	c->exports[c->nexports++] = (struct export_cfg){
		.path = path, .write_mode = IO_MODE_CACHED, .read_mode = IO_MODE_DIRECT,
		.block = 0, .line = p->line,
	};
	p->fsid_line = 0;
	return enter_section(p, SECT_EXPORT, export_keys);
}

static int open_section(struct parser *p, enum section s, const char *name,
			const struct key_def *keys)
{
	if (p->sect_line[s])
		return fail(p, "duplicate section [%s] (first on line %u)", name, p->sect_line[s]);
	p->sect_line[s] = p->line;
	return enter_section(p, s, keys);
}

static int section_header(struct parser *p, char *s)
{
	char *close = strchr(s, ']');
	if (!close)
		return fail(p, "missing ']' in section header");
	if (close[1] != '\0')
		return fail(p, "unexpected text after ']': '%s'", trim(close + 1));
	*close = '\0';
	char *name = trim(s + 1);
	if (end_section(p) < 0)
		return -1;
	if (strcmp(name, "server") == 0)
		return open_section(p, SECT_SERVER, name, server_keys);
	if (strcmp(name, "cache") == 0)
		return open_section(p, SECT_CACHE, name, cache_keys);
	if (strcmp(name, "metrics") == 0)
		return open_section(p, SECT_METRICS, name, metrics_keys);
	if (strcmp(name, "lock") == 0)
		return open_section(p, SECT_LOCK, name, lock_keys);
	if (strncmp(name, "export", 6) == 0 && (name[6] == '\0' || isspace((unsigned char)name[6])))
		return begin_export(p, trim(name + 6));
	static const char *const known[] = {"server", "cache", "metrics", "lock", "export"};
	const char *near = nearest(name, known, sizeof known / sizeof known[0]);
	char hint[64] = "";
	if (near)
		snprintf(hint, sizeof hint, "did you mean [%s%s]? ", near,
			 strcmp(near, "export") == 0 ? " PATH" : "");
	return fail(p, "unknown section [%s] (%sexpected [server], [cache], [metrics], [lock] or "
		    "[export PATH])", name, hint);
}

/* ---- keys ------------------------------------------------------------------------------- */

static void *section_object(struct parser *p)
{
	if (p->sect == SECT_EXPORT)
		return &p->cfg->exports[p->cfg->nexports - 1];
	return p->cfg;
}

static const char *section_name(struct parser *p, char *buf, size_t len)
{
	if (p->sect == SECT_EXPORT)
		snprintf(buf, len, "[export %s]", p->cfg->exports[p->cfg->nexports - 1].path);
	else
		snprintf(buf, len, "[%s]", p->sect == SECT_SERVER ? "server"
					   : p->sect == SECT_CACHE ? "cache"
					   : p->sect == SECT_LOCK ? "lock" : "metrics");
	return buf;
}

static int unknown_key(struct parser *p, const char *key)
{
	char names[512] = "", sect[PATH_MAX + 16], hint[80] = "";
	const char *known[MAX_KEYS];
	size_t n = 0, nk = 0;
	for (const struct key_def *k = p->keys; k->name && n < sizeof names; k++) {
		n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "", k->name);
		known[nk++] = k->name;
	}
	const char *near = nearest(key, known, nk);
	if (near)
		snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
	return fail(p, "unknown key '%s' in %s (%sknown: %s)", key, section_name(p, sect, sizeof sect),
		    hint, names);
}

static int key_value(struct parser *p, char *s)
{
	char *eq = strchr(s, '=');
	if (!eq)
		return fail(p, "missing '=' in '%s' (expected key = value)", s);
	*eq = '\0';
	char *key = trim(s), *val = trim(eq + 1);
	if (*key == '\0')
		return fail(p, "missing key before '='");
	if (p->sect == SECT_NONE)
		return fail(p, "key '%s' is outside any section", key);
	const struct key_def *k = p->keys;
	while (k->name && strcmp(k->name, key) != 0)
		k++;
	if (!k->name)
		return unknown_key(p, key);
	unsigned *seen = &p->seen[k - p->keys];
	if (*seen)
		return fail(p, "duplicate key '%s' (first set on line %u)", key, *seen);
	if (*val == '\0')
		return fail(p, "key '%s' has no value", key);
	*seen = p->line;
	if (p->sect == SECT_SERVER && (strncmp(k->name, "receive_memory", 14) == 0 ||
				       strcmp(k->name, "max_record") == 0))
		p->memory_line = p->line;     /* for the checks of the three together, at the end */
	return k->parse(p, k, val, section_object(p));
}

static int parse_line(struct parser *p, char *line)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	char *s = trim(line);
	if (*s == '\0')
		return 0;
	if (*s == '[')
		return section_header(p, s);
	return key_value(p, s);
}

/* ---- load / free ------------------------------------------------------------------------ */

static int parse_stream(struct parser *p, FILE *f)
{
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;
	errno = 0;
	while (rc == 0 && getline(&buf, &cap, f) >= 0) {
		p->line++;
		rc = parse_line(p, buf);
	}
	if (rc == 0 && ferror(f))
		rc = fail_at(p, 0, "%s", strerror(errno ? errno : EIO));
	free(buf);
	if (rc == 0)
		rc = end_section(p);
	return rc;
}

/* The directory of FILE as the user named it (not of a symlink's target), made absolute so
 * that relative paths survive a later chdir. */
static char *conf_dir(const char *file)
{
	const char *slash = strrchr(file, '/');
	char *dir = slash ? strndup(file, slash == file ? 1 : (size_t)(slash - file)) : strdup(".");
	if (!dir)
		return NULL;
	char *abs = realpath(dir, NULL);
	free(dir);
	return abs;
}

static int set_defaults(struct config *c)
{
	*c = (struct config){
		.listen = strdup("127.0.0.1"),
		.listen_addr = {"127.0.0.1"},
		.nlisten = 1,
		.port = 2049,
		.mount_port = 20048,
		.threads = 0,
		.requests_per_connection = 256,
		.requests_per_ring = 1024,
		.blocking_threads = 4,
		.max_record = 1 * MIB + 64 * KIB,
		.max_connections = 4096,
		.max_connections_per_client = 1024,
		.receive_memory = 512 * MIB,
		.idle_timeout = 360,
		.record_timeout = 30,
		.reply_cache_entries = 16384,
		.reply_cache_size = 16 * MIB,
		.mount_list_entries = 4096,
		.state_dir = strdup("/var/lib/nfsd-uc"),
		.rpcbind = RPCBIND_AUTO,
		.log_level = LOG_INFO,
		.cache_size = 1 * GIB,
		.cache_writeback_depth = 16,
		.metrics_connections = 16,
		.metrics_connections_per_client = 4,
		.metrics_timeout = 10,
		.lock_port = 32803,
		.grace_period = 90,
		.max_locks = 1 << 20,
		.max_locks_per_client = 65536,
		.max_waiters = 16384,
		.max_waiters_per_client = 1024,
		.max_names_per_client = 64,
	};
	return c->listen && c->state_dir ? 0 : -1;
}

/* receive_memory, max_record and a connection's share of the one taken together; the default
 * share: a quarter, and at least two records (when receive_memory has room for them). */
static int check_memory(struct parser *p, struct config *c)
{
	if (c->receive_memory < 2 * c->max_record)
		return fail_at(p, p->memory_line, "receive_memory (%zu) must hold at least two "
			       "records of max_record (%zu)", c->receive_memory, c->max_record);
	size_t *share = &c->receive_memory_per_connection;
	if (*share == 0) {
		*share = c->receive_memory / 4;
		if (*share < 2 * c->max_record)
			*share = 2 * c->max_record;
	} else if (*share < c->max_record || *share > c->receive_memory) {
		return fail_at(p, p->memory_line, "receive_memory_per_connection (%zu) must lie "
			       "between max_record (%zu) and receive_memory (%zu)", *share,
			       c->max_record, c->receive_memory);
	}
	return 0;
}

int config_load(const char *file, struct config *cfg, char *err, size_t errlen)
{
	struct config c;
	struct parser p = {.file = file, .err = err, .errlen = errlen, .cfg = &c};
	int rc = -1;
	memset(cfg, 0, sizeof *cfg);
	if (errlen)
		err[0] = '\0';
	FILE *f = fopen(file, "re");
	if (!f)
		return fail_at(&p, 0, "%s", strerror(errno));
	if (set_defaults(&c) < 0)
		fail_at(&p, 0, "%s", strerror(ENOMEM));
	else if (!(p.dir = conf_dir(file)))
		fail_at(&p, 0, "%s", strerror(errno));
	else
		rc = parse_stream(&p, f);
	fclose(f);
	free(p.dir);
	/* What an editor's truncate-then-write leaves for a moment: it is no configuration, and
	 * serving defaults and no export from it is never what was meant. */
	bool empty = c.nexports == 0;
	for (int s = 0; s < SECT_COUNT; s++)
		empty = empty && !p.sect_line[s];
	if (rc == 0 && empty)
		rc = fail_at(&p, 0, "no section at all: the file is empty (an editor still writing "
			     "it?)");
	if (rc == 0)
		rc = check_memory(&p, &c);
	if (rc < 0) {
		config_free(&c);
		return -1;
	}
	*cfg = c;
	return 0;
}

void config_free(struct config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->nexports; i++) {
		free(cfg->exports[i].path);
		free(cfg->exports[i].clients);
	}
	free(cfg->exports);
	free(cfg->listen);
	free(cfg->metrics_listen);
	free(cfg->state_dir);
	memset(cfg, 0, sizeof *cfg);
}
