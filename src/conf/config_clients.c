/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An export's clients line: clients = HOST[(OPTIONS)] ..., each HOST an address, ADDR/PREFIX,
 * a host name (resolved now), a wildcard name or *, each OPTION one of exports(5)'s. A small
 * language of its own, with its own mistakes to catch, so apart from the parser (config.c) and
 * the other keys (config_keys.c). What the rules mean at run time is export.c's. */
#include "conf/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config_int.h"
#include "rpc/oncrpc.h"

#define ANON_ID 65534u

/* ---- sec= ------------------------------------------------------------------------------- */

/* exports(5)'s names, the first of each number the one shown back; "unix" and "null" are
 * exportfs's other spellings, taken so that a line copied from /etc/exports loads. */
static const struct { const char *name; uint32_t flavor; } flavors[] = {
	{"sys", RPC_AUTH_SYS}, {"krb5", RPC_AUTH_KRB5}, {"krb5i", RPC_AUTH_KRB5I},
	{"krb5p", RPC_AUTH_KRB5P}, {"none", RPC_AUTH_NONE}, {"unix", RPC_AUTH_SYS},
	{"null", RPC_AUTH_NONE},
};
#define NFLAVORS (sizeof flavors / sizeof flavors[0])

const char *config_flavor_name(uint32_t flavor)
{
	for (size_t i = 0; i < NFLAVORS; i++)
		if (flavors[i].flavor == flavor)
			return flavors[i].name;
	return NULL;
}

uint32_t config_first_krb5(const struct config *c, const struct export_cfg **export)
{
	for (size_t e = 0; e < c->nexports; e++)
		for (size_t i = 0; i < c->exports[e].nclients; i++) {
			const struct client_rule *r = &c->exports[e].clients[i];
			for (unsigned k = 0; k < r->nsec; k++)
				if (r->sec[k] >= RPC_AUTH_KRB5 && r->sec[k] <= RPC_AUTH_KRB5P) {
					if (export)
						*export = &c->exports[e];
					return r->sec[k];
				}
		}
	return 0;
}

static int unknown_flavor(struct parser *p, const char *host, const char *name, const char *opt)
{
	const char *known[NFLAVORS];
	char hint[64] = "";
	if (!*name)
		return cfg_fail(p, "clients: %s: empty flavor in '%s' (known: sys, krb5, krb5i, krb5p, "
			    "none, separated by ':')", host, opt);
	for (size_t i = 0; i < NFLAVORS; i++)
		known[i] = flavors[i].name;
	const char *near = cfg_nearest(name, known, NFLAVORS);
	if (near)
		snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
	return cfg_fail(p, "clients: %s: unknown flavor '%s' in '%s' (%sknown: sys, krb5, krb5i, "
		    "krb5p, none)", host, name, opt, hint);
}

/* sec=F1:F2:...: the list replaces the default (sys); a flavor named twice keeps its first
 * place, as exportfs does, so the five numbers there are always fit in sec[CFG_SEC_MAX]. */
static int parse_sec(struct parser *p, const char *host, const char *opt, struct client_rule *r)
{
	char list[64];
	if (strlen(opt + 4) >= sizeof list)
		return cfg_fail(p, "clients: %s: '%s' is too long", host, opt);
	strcpy(list, opt + 4);
	r->nsec = 0;
	for (char *f = list, *next; f; f = next) {
		next = strchr(f, ':');
		if (next)
			*next++ = '\0';
		size_t i = 0;
		while (i < NFLAVORS && strcmp(f, flavors[i].name) != 0)
			i++;
		if (i == NFLAVORS)
			return unknown_flavor(p, host, f, opt);
		bool dup = false;
		for (unsigned k = 0; k < r->nsec; k++)
			dup = dup || r->sec[k] == flavors[i].flavor;
		if (!dup)
			r->sec[r->nsec++] = flavors[i].flavor;
	}
	return 0;
}

static int host_error(struct parser *p, const char *host)
{
	if (host[0] == '@')
		return cfg_fail(p, "clients: netgroups (%s) are not supported yet; use an IPv4 or IPv6 "
			    "address, ADDR/PREFIX, a host name, a wildcard name or *", host);
	if (strchr(host, ':'))
		return cfg_fail(p, "clients: '%s' is not a valid IPv6 address", host);
	return cfg_fail(p, "clients: '%s' is not a valid IPv4 address", host);
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
			return cfg_fail(p, "clients: '%s' is longer than %d characters", host,
				    CFG_PATTERN_MAX - 1);
		r->family = AF_UNSPEC;
		snprintf(r->pattern, sizeof r->pattern, "%s", host);
		r->prefix = wild ? 0 : 1;      /* 1: a host name to resolve (cfg_parse_clients) */
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
	if (slash && (!cfg_parse_ull(slash, &prefix) || prefix > bits))
		return cfg_fail(p, "clients: bad prefix '/%s' for %s (0..%u)", slash, host, bits);
	r->prefix = (unsigned)prefix;
	unmap_v4(r);
	return 0;
}

static int parse_anon_id(struct parser *p, const char *host, const char *opt,
			 unsigned long long *out)
{
	const char *val = strchr(opt, '=') + 1;
	/* (uid_t)-1 means "no change" to chown/setfsuid: never a usable identity. */
	if (!cfg_parse_ull(val, out) || *out >= UINT32_MAX)
		return cfg_fail(p, "clients: %s: bad value in '%s' (0..%u)", host, opt, UINT32_MAX - 1);
	return 0;
}

/* What the options said so far: the squash options combine at the end (parse_options), and
 * sec= may be given once. */
struct opt_state {
	bool root, all;
	bool sec;
};

static int unknown_option(struct parser *p, const char *host, const char *opt)
{
	static const char *const known[] = {
		"rw", "ro", "root_squash", "no_root_squash", "all_squash", "no_all_squash", "anonuid",
		"anongid", "secure", "insecure", "subtree_check", "no_subtree_check", "sec"};
	char word[64], hint[80] = "";
	snprintf(word, sizeof word, "%.*s", (int)strcspn(opt, "="), opt);
	const char *near = cfg_nearest(word, known, sizeof known / sizeof known[0]);
	if (near)
		snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
	return cfg_fail(p, "clients: %s: unknown option '%s' (%sknown: rw, ro, root_squash, "
		    "no_root_squash, all_squash, no_all_squash, anonuid=N, anongid=N, secure, "
		    "insecure, subtree_check, no_subtree_check, sec=FLAVOR:...)", host, opt, hint);
}

/* knfsd lets options after a second sec= apply to its flavors alone (sec=sys,ro,sec=krb5p,rw);
 * taking the second list alone would silently refuse sys, so it is an error. */
static int sec_option(struct parser *p, const char *host, const char *opt, struct client_rule *r,
		      struct opt_state *st)
{
	if (st->sec)
		return cfg_fail(p, "clients: %s: sec= given twice (options for some flavors only, as "
			    "exports(5)'s sec=sys,ro,sec=krb5p,rw, are not supported: one sec= list "
			    "per entry)", host);
	st->sec = true;
	return parse_sec(p, host, opt, r);
}

static int parse_option(struct parser *p, const char *host, const char *opt,
			struct client_rule *r, struct opt_state *sq)
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
	} else if (strncmp(opt, "sec=", 4) == 0) {
		return sec_option(p, host, opt, r, sq);
	} else if (*opt == '\0')
		return cfg_fail(p, "clients: %s: empty option", host);
	else
		return unknown_option(p, host, opt);
	return 0;
}

/* Options apply in order, later ones win, as in exports(5); all_squash overrides
 * no_root_squash whatever their order, as knfsd does. */
static int parse_options(struct parser *p, const char *host, char *opts, struct client_rule *r)
{
	struct opt_state sq = {.root = true, .all = false};
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
				  .anongid = ANON_ID, .secure = true, .sec = {RPC_AUTH_SYS},
				  .nsec = 1};
	char *open = strchr(tok, '(');
	size_t len = strlen(tok);
	/* "host (rw)" means host with default options plus (rw) for the world in exports(5):
	 * a classic mistake, so refuse it rather than guess. */
	if (open == tok)
		return cfg_fail(p, "clients: '%s' has no address (no space before '('; write *%s for "
			    "every client)", tok, tok);
	if (open && tok[len - 1] != ')')
		return cfg_fail(p, "clients: missing ')' in '%s' (no spaces inside the options)", tok);
	char *close = strchr(tok, ')');
	if (close && (!open || close != tok + len - 1))
		return cfg_fail(p, "clients: unexpected ')' in '%s'", tok);
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
		return cfg_fail(p, "clients: cannot resolve host name '%s': %s", r->pattern,
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
			return cfg_out_of_memory(p);
		}
		*rules = grown;
		(*rules)[(*n)++] = one;
	}
	freeaddrinfo(ai);
	return 0;
}

int cfg_parse_clients(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	(void)k;
	struct export_cfg *e = obj;
	struct client_rule *rules = NULL;
	size_t n = 0;
	char *copy = strdup(val), *save = NULL;
	if (!copy)
		return cfg_out_of_memory(p);
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
			cfg_out_of_memory(p);
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

/* ---- the rules as a clients line (--dump-config) ---------------------------------------- */

static size_t show_host(const struct client_rule *r, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "";
	unsigned full = r->family == AF_INET ? 32 : 128;
	if (r->pattern[0])
		return (size_t)snprintf(buf, len, "%s", r->pattern);
	if (r->family == AF_UNSPEC)
		return (size_t)snprintf(buf, len, "*");
	inet_ntop(r->family, r->addr, a, sizeof a);
	if (r->prefix == full)
		return (size_t)snprintf(buf, len, "%s", a);
	return (size_t)snprintf(buf, len, "%s/%u", a, r->prefix);
}

/* sec=sys:krb5p, the rule's flavors in its order. */
static void show_sec(const struct client_rule *r, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "sec=");
	for (unsigned i = 0; i < r->nsec && n < len; i++) {
		const char *name = config_flavor_name(r->sec[i]);
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ":" : "", name ? name : "?");
	}
}

/* Every option spelled out, defaults too: the point of a dump is to show what is in force. */
static size_t show_rule(const struct client_rule *r, char *buf, size_t len)
{
	char sec[64];
	size_t n = show_host(r, buf, len);
	if (n >= len)
		return n;
	show_sec(r, sec, sizeof sec);
	return n + (size_t)snprintf(buf + n, len - n, "(%s,%s,anonuid=%lu,anongid=%lu,%s,%s,%s)",
				    r->rw ? "rw" : "ro",
				    r->squash == SQUASH_ALL ? "all_squash"
				    : r->squash == SQUASH_NONE ? "no_root_squash" : "root_squash",
				    (unsigned long)r->anonuid, (unsigned long)r->anongid,
				    r->secure ? "secure" : "insecure",
				    r->subtree_check ? "subtree_check" : "no_subtree_check", sec);
}

void cfg_show_clients(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	(void)k;
	const struct export_cfg *e = obj;
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < e->nclients && n + 1 < len; i++) {
		if (i)
			buf[n++] = ' ';
		n += show_rule(&e->clients[i], buf + n, len - n);
	}
	if (n >= len)
		buf[len - 1] = '\0';
}
