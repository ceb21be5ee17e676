/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The values of nfsd-uc.conf's keys and the tables of keys, one per section kind: what a key's
 * value may be (a number in a range, a size, a port, an address, a mode) and where it goes in
 * struct config or struct export_cfg. Apart from the parser (config.c), which reaches keys
 * through these tables: adding a key of a kind already known is one row here. */
#include "conf/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "conf/config_int.h"

/* ---- value helpers ---------------------------------------------------------------------- */

/* Plain decimal only: strtoull alone would take "-1", " 7" and "0x10". */
bool cfg_parse_ull(const char *s, unsigned long long *out)
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

/* ---- key parsers ------------------------------------------------------------------------ */

static int parse_number(struct parser *p, const struct key_def *k, const char *val,
			unsigned long long *out)
{
	if (!cfg_parse_ull(val, out))
		return cfg_fail(p, "%s = %s is not a number", k->name, val);
	if (*out < k->min || *out > k->max)
		return cfg_fail(p, "%s = %s is out of range (%llu..%llu)", k->name, val, k->min, k->max);
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
		return cfg_fail(p, "%s = %s is not a size (a number with an optional K, M or G suffix)",
			    k->name, val);
	if ((unsigned long long)v < k->min || (unsigned long long)v > k->max)
		return cfg_fail(p, "%s = %s is out of range (%s..%s)", k->name, val,
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
		return cfg_fail(p, "%s = %s is not a power of two", k->name, val);
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
		return cfg_fail(p, "%s = %s is not auto, yes, no or own (yes/no also as true/false, on/off "
			    "or 1/0)", k->name, val);
	return 0;
}

/* A principal with no local user: anonymous (the export's anonuid, as knfsd's nobody) | refuse. */
static int parse_gss_unmapped(struct parser *p, const struct key_def *k, const char *val,
			      void *obj)
{
	if (strcasecmp(val, "anonymous") == 0)
		*FIELD(bool) = false;
	else if (strcasecmp(val, "refuse") == 0)
		*FIELD(bool) = true;
	else
		return cfg_fail(p, "%s = %s is not anonymous or refuse", k->name, val);
	return 0;
}

/* Who makes and checks the per-message tokens: openssl (rpc/gss_krb5.h) | gssapi (MIT's). */
static int parse_gss_crypto(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	if (strcasecmp(val, "openssl") == 0)
		*FIELD(bool) = false;
	else if (strcasecmp(val, "gssapi") == 0)
		*FIELD(bool) = true;
	else
		return cfg_fail(p, "%s = %s is not openssl or gssapi", k->name, val);
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
	return cfg_fail(p, "%s = %s is not error, warning, info or debug", k->name, val);
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
	return cfg_fail(p, "%s = %s is not cached, direct, dontcache or buffered", k->name, val);
}

/* One address or several, space-separated: IPv4 and IPv6 literals, each listened on. */
static int parse_listen(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	struct config *c = obj;
	char copy[CFG_LISTEN_MAX * (INET6_ADDRSTRLEN + 1) + 1], *save;
	unsigned char buf[16];
	size_t n = 0;
	if (strlen(val) >= sizeof copy)
		return cfg_fail(p, "%s: more than %d addresses", k->name, CFG_LISTEN_MAX);
	strcpy(copy, val);
	for (char *a = strtok_r(copy, " \t,", &save); a; a = strtok_r(NULL, " \t,", &save)) {
		if (inet_pton(AF_INET, a, buf) != 1 && inet_pton(AF_INET6, a, buf) != 1)
			return cfg_fail(p, "%s = %s is not an IPv4 or IPv6 address", k->name, a);
		for (size_t i = 0; i < n; i++)
			if (strcmp(c->listen_addr[i], a) == 0)
				return cfg_fail(p, "%s: %s is listed twice", k->name, a);
		if (n == CFG_LISTEN_MAX)
			return cfg_fail(p, "%s: more than %d addresses", k->name, CFG_LISTEN_MAX);
		snprintf(c->listen_addr[n++], INET6_ADDRSTRLEN, "%s", a);
	}
	if (n == 0)
		return cfg_fail(p, "%s: no address", k->name);
	char *s = strdup(val);
	if (!s)
		return cfg_out_of_memory(p);
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
		return cfg_fail(p, "%s = %s is not ADDRESS:PORT (an IPv4 address, or an IPv6 one in "
			    "brackets: 127.0.0.1:9101, [::1]:9101)", k->name, val);
	char *s = strdup(val);
	if (!s)
		return cfg_out_of_memory(p);
	free(*FIELD(char *));
	*FIELD(char *) = s;
	return 0;
}

/* Relative to the conf file's directory; need not exist yet: state_dir is made at start,
 * exports_dir may be missing, and keytab is looked for by --check only when a client rule
 * allows a krb5 flavor (config_host.c). */
static int parse_path(struct parser *p, const struct key_def *k, const char *val, void *obj)
{
	(void)k;
	char *s = cfg_resolve_path(p, val);
	if (!s)
		return cfg_out_of_memory(p);
	free(*FIELD(char *));
	*FIELD(char *) = s;
	return 0;
}

/* ---- values as the file spells them (--dump-config) ------------------------------------ */

#define SHOWN(type) ((const type *)((const char *)obj + k->off))

static void show_u16(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	snprintf(buf, len, "%u", (unsigned)*SHOWN(uint16_t));
}

static void show_u32(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	snprintf(buf, len, "%lu", (unsigned long)*SHOWN(uint32_t));
}

static void show_unsigned(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	snprintf(buf, len, "%u", *SHOWN(unsigned));
}

static void show_size(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	char b[32];
	snprintf(buf, len, "%s", fmt_size(*SHOWN(size_t), b));
}

static void show_block(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	if (*SHOWN(size_t) == 0)
		snprintf(buf, len, "auto");
	else
		show_size(k, obj, buf, len);
}

static void show_rpcbind(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	snprintf(buf, len, "%s", rpcbind_mode_name(*SHOWN(enum rpcbind_mode)));
}

static void show_gss_unmapped(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	snprintf(buf, len, "%s", *SHOWN(bool) ? "refuse" : "anonymous");
}

static void show_gss_crypto(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	snprintf(buf, len, "%s", *SHOWN(bool) ? "gssapi" : "openssl");
}

static void show_log_level(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	int l = *SHOWN(int);
	snprintf(buf, len, "%s", l <= LOG_ERR ? "error" : l == LOG_WARNING ? "warning"
			       : l == LOG_DEBUG ? "debug" : "info");
}

static void show_io_mode(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	snprintf(buf, len, "%s", io_mode_name(*SHOWN(enum io_mode)));
}

static void show_string(const struct key_def *k, const void *obj, char *buf, size_t len)
{
	const char *v = *SHOWN(char *);
	snprintf(buf, len, "%s", v ? v : "");
}

/* ---- tables ----------------------------------------------------------------------------- */

#define CFG(field) offsetof(struct config, field)
#define EXP(field) offsetof(struct export_cfg, field)

const struct key_def cfg_server_keys[] = {
	{"listen", parse_listen, CFG(listen), 0, 0, show_string},
	{"port", parse_port, CFG(port), 1, 65535, show_u16},
	{"mount_port", parse_port, CFG(mount_port), 1, 65535, show_u16},
	{"threads", parse_unsigned, CFG(threads), 0, 1024, show_unsigned},
	{"requests_per_connection", parse_unsigned, CFG(requests_per_connection), 1, 65536, show_unsigned},
	{"requests_per_ring", parse_unsigned, CFG(requests_per_ring), 1, 1 << 20, show_unsigned},
	{"blocking_threads", parse_unsigned, CFG(blocking_threads), 1, 256, show_unsigned},
	{"max_record", parse_size, CFG(max_record), 64 * KIB, 64 * MIB, show_size},
	{"connections", parse_unsigned, CFG(max_connections), 1, 1 << 20, show_unsigned},
	{"connections_per_client", parse_unsigned, CFG(max_connections_per_client), 1, 1 << 20, show_unsigned},
	{"receive_memory", parse_size, CFG(receive_memory), 1 * MIB, 1024 * GIB, show_size},
	{"receive_memory_per_connection", parse_size, CFG(receive_memory_per_connection), 0,
	 1024 * GIB, show_size},
	{"receive_memory_per_client", parse_size, CFG(receive_memory_per_client), 0, 1024 * GIB,
	 show_size},
	{"idle_timeout", parse_unsigned, CFG(idle_timeout), 0, 86400, show_unsigned},
	{"record_timeout", parse_unsigned, CFG(record_timeout), 1, 3600, show_unsigned},
	{"reply_cache_entries", parse_unsigned, CFG(reply_cache_entries), 0, 1 << 24, show_unsigned},
	{"reply_cache_size", parse_size, CFG(reply_cache_size), 0, 16 * GIB, show_size},
	{"mount_list_entries", parse_unsigned, CFG(mount_list_entries), 1, 1 << 20, show_unsigned},
	{"state_dir", parse_path, CFG(state_dir), 0, 0, show_string},
	{"exports_dir", parse_path, CFG(exports_dir), 0, 0, show_string},
	{"rpcbind", parse_rpcbind, CFG(rpcbind), 0, 0, show_rpcbind},
	{"log_level", parse_log_level, CFG(log_level), 0, 0, show_log_level},
	{"keytab", parse_path, CFG(keytab), 0, 0, show_string},
	{"gss_contexts", parse_unsigned, CFG(gss_contexts), 1, 1 << 20, show_unsigned},
	{"gss_contexts_per_client", parse_unsigned, CFG(gss_contexts_per_client), 1, 1 << 20,
	 show_unsigned},
	{"gss_window", parse_unsigned, CFG(gss_window), 1, 1024, show_unsigned},
	{"gss_unmapped", parse_gss_unmapped, CFG(gss_refuse_unmapped), 0, 0, show_gss_unmapped},
	{"gss_crypto", parse_gss_crypto, CFG(gss_crypto_gssapi), 0, 0, show_gss_crypto},
	{NULL, NULL, 0, 0, 0, NULL},
};

const struct key_def cfg_cache_keys[] = {
	{"size", parse_size, CFG(cache_size), 64 * KIB, 1024 * GIB, show_size},
	{"file_size", parse_size, CFG(cache_file_size), 0, 1024 * GIB, show_size},
	{"writeback_depth", parse_unsigned, CFG(cache_writeback_depth), 1, 1024, show_unsigned},
	{"sync_behind", parse_size, CFG(cache_sync_behind), 0, 1024 * GIB, show_size},
	{NULL, NULL, 0, 0, 0, NULL},
};

const struct key_def cfg_metrics_keys[] = {
	{"listen", parse_hostport, CFG(metrics_listen), 0, 0, show_string},
	{"connections", parse_unsigned, CFG(metrics_connections), 1, 4096, show_unsigned},
	{"connections_per_client", parse_unsigned, CFG(metrics_connections_per_client), 1, 4096, show_unsigned},
	{"timeout", parse_unsigned, CFG(metrics_timeout), 1, 3600, show_unsigned},
	{NULL, NULL, 0, 0, 0, NULL},
};

const struct key_def cfg_lock_keys[] = {
	{"port", parse_port, CFG(lock_port), 0, 65535, show_u16},
	{"grace_period", parse_unsigned, CFG(grace_period), 0, 3600, show_unsigned},
	{"locks", parse_unsigned, CFG(max_locks), 1, 1 << 24, show_unsigned},
	{"locks_per_client", parse_unsigned, CFG(max_locks_per_client), 1, 1 << 24, show_unsigned},
	{"waiters", parse_unsigned, CFG(max_waiters), 1, 1 << 20, show_unsigned},
	{"waiters_per_client", parse_unsigned, CFG(max_waiters_per_client), 1, 1 << 20, show_unsigned},
	{"names_per_client", parse_unsigned, CFG(max_names_per_client), 1, 65536, show_unsigned},
	{NULL, NULL, 0, 0, 0, NULL},
};

const struct key_def cfg_export_keys[] = {
	{"clients", cfg_parse_clients, EXP(clients), 0, 0, cfg_show_clients},
	{"fsid", parse_fsid, EXP(fsid), 1, UINT32_MAX, show_u32},
	{"write_mode", parse_io_mode, EXP(write_mode), 0, 0, show_io_mode},
	{"read_mode", parse_io_mode, EXP(read_mode), 0, 0, show_io_mode},
	{"block", parse_block, EXP(block), 512, 1 * MIB, show_block},
	{NULL, NULL, 0, 0, 0, NULL},
};

_Static_assert(sizeof cfg_server_keys / sizeof cfg_server_keys[0] <= MAX_KEYS, "raise MAX_KEYS");
_Static_assert(sizeof cfg_cache_keys / sizeof cfg_cache_keys[0] <= MAX_KEYS, "raise MAX_KEYS");
_Static_assert(sizeof cfg_metrics_keys / sizeof cfg_metrics_keys[0] <= MAX_KEYS, "raise MAX_KEYS");
_Static_assert(sizeof cfg_lock_keys / sizeof cfg_lock_keys[0] <= MAX_KEYS, "raise MAX_KEYS");
_Static_assert(sizeof cfg_export_keys / sizeof cfg_export_keys[0] <= MAX_KEYS, "raise MAX_KEYS");
