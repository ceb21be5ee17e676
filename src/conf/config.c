/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc.conf parser. Each section kind has a table of keys; adding a key is one table row
 * (plus a parser function when the value is of a new kind). The config is built in a local
 * struct and handed to the caller only when the whole file parsed, so every error path ends in
 * one config_free().
 *
 * Here is the reading: lines, sections, keys, the messages, and the checks made once the whole
 * file is read. What a key's value may be and the tables of keys are config_keys.c's; an
 * export's clients line, a small language of its own, is config_clients.c's. */
#include "conf/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <dirent.h>
#include <sys/stat.h>

#include "conf/config_int.h"

static int vfail_at(struct parser *p, unsigned line, const char *fmt, va_list ap)
{
	if (++p->nerrors > CFG_MAX_ERRORS + 1 || !p->errlen)
		return -1;
	size_t used = strlen(p->err);
	if (used && used + 1 < p->errlen)
		p->err[used++] = '\n';
	char *o = p->err + used;
	size_t room = p->errlen - used;
	int n = line ? snprintf(o, room, "%s:%u: ", p->file, line) : snprintf(o, room, "%s: ", p->file);
	if (n >= 0 && (size_t)n < room)
		vsnprintf(o + n, room - (size_t)n, fmt, ap);
	return -1;
}

int cfg_fail_at(struct parser *p, unsigned line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail_at(p, line, fmt, ap);
	va_end(ap);
	return -1;
}

int cfg_fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail_at(p, p->line, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- helpers ---------------------------------------------------------------------------- */

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* REL against the conf file's directory unless absolute. */
char *cfg_resolve_path(struct parser *p, const char *rel)
{
	char *out;
	if (rel[0] == '/')
		return strdup(rel);
	if (asprintf(&out, "%s%s%s", p->dir, strcmp(p->dir, "/") ? "/" : "", rel) < 0)
		return NULL;
	return out;
}

int cfg_out_of_memory(struct parser *p)
{
	return cfg_fail(p, "%s", strerror(ENOMEM));
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
const char *cfg_nearest(const char *word, const char *const *known, size_t n)
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
			return cfg_fail_at(p, p->fsid_line, "fsid %u is already used by export %s (line %u)",
				       e->fsid, o->path, o->line);
		return cfg_fail_at(p, e->line, "export %s: its derived fsid %u is already used by export "
			       "%s (line %u); set fsid explicitly", e->path, e->fsid, o->path, o->line);
	}
	return 0;
}

static int finish_export(struct parser *p)
{
	struct export_cfg *e = &p->cfg->exports[p->cfg->nexports - 1];
	if (p->nerrors > p->sect_errors)
		return -1;   /* its own error said it: "no clients line" would only repeat it */
	if (e->nclients == 0)
		return cfg_fail_at(p, e->line, "export %s has no clients line", e->path);
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
	p->sect_errors = p->nerrors;
	memset(p->seen, 0, sizeof p->seen);
	return 0;
}

/* realpath so that two spellings of one directory are one export and MOUNT matches the
 * canonical name. */
static char *canonical_dir(struct parser *p, const char *given)
{
	char *abs = cfg_resolve_path(p, given);
	if (!abs) {
		cfg_out_of_memory(p);
		return NULL;
	}
	char *canon = realpath(abs, NULL);
	struct stat st;
	if (!canon && errno == ENOENT)
		cfg_fail(p, "export path %s does not exist", abs);
	else if (!canon)
		cfg_fail(p, "export path %s: %s", abs, strerror(errno));
	else if (stat(canon, &st) < 0)
		cfg_fail(p, "export path %s: %s", abs, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		cfg_fail(p, "export path %s is not a directory", abs);
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
		return cfg_fail(p, "[export] needs a path: [export /path/to/dir]");
	char *path = canonical_dir(p, given);
	if (!path)
		return -1;
	for (size_t i = 0; i < c->nexports; i++) {
		if (strcmp(c->exports[i].path, path) == 0) {
			const char *in = c->exports[i].dropin ? c->exports[i].dropin : p->cfg_file;
			if (strcmp(in, p->file) == 0)
				cfg_fail(p, "duplicate export %s (first on line %u)", path,
					 c->exports[i].line);
			else
				cfg_fail(p, "duplicate export %s (first at %s:%u)", path, in,
					 c->exports[i].line);
			free(path);
			return -1;
		}
	}
	struct export_cfg *grown = reallocarray(c->exports, c->nexports + 1, sizeof *grown);
	if (!grown) {
		free(path);
		return cfg_out_of_memory(p);
	}
	char *dropin = p->dropin ? strdup(p->file) : NULL;
	if (p->dropin && !dropin) {
		free(path);
		return cfg_out_of_memory(p);
	}
	c->exports = grown;
	c->exports[c->nexports++] = (struct export_cfg){
		.path = path, .write_mode = IO_MODE_CACHED, .read_mode = IO_MODE_DIRECT,
		.block = 0, .line = p->line, .dropin = dropin,
	};
	p->fsid_line = 0;
	return enter_section(p, SECT_EXPORT, cfg_export_keys);
}

static int open_section(struct parser *p, enum section s, const char *name,
			const struct key_def *keys)
{
	if (p->sect_line[s])
		return cfg_fail(p, "duplicate section [%s] (first on line %u)", name, p->sect_line[s]);
	p->sect_line[s] = p->line;
	return enter_section(p, s, keys);
}

static int section_header(struct parser *p, char *s)
{
	char *close = strchr(s, ']');
	if (!close)
		return cfg_fail(p, "missing ']' in section header");
	if (close[1] != '\0')
		return cfg_fail(p, "unexpected text after ']': '%s'", trim(close + 1));
	*close = '\0';
	char *name = trim(s + 1);
	end_section(p);   /* an error in the section before is its own; this one is read anyway */
	bool export = strncmp(name, "export", 6) == 0 && (name[6] == '\0' || isspace((unsigned char)name[6]));
	if (p->dropin && !export)
		return cfg_fail(p, "[%s] in a file of exports_dir: only [export PATH] sections may be "
			    "there", name);
	if (strcmp(name, "server") == 0)
		return open_section(p, SECT_SERVER, name, cfg_server_keys);
	if (strcmp(name, "cache") == 0)
		return open_section(p, SECT_CACHE, name, cfg_cache_keys);
	if (strcmp(name, "metrics") == 0)
		return open_section(p, SECT_METRICS, name, cfg_metrics_keys);
	if (strcmp(name, "lock") == 0)
		return open_section(p, SECT_LOCK, name, cfg_lock_keys);
	if (export)
		return begin_export(p, trim(name + 6));
	static const char *const known[] = {"server", "cache", "metrics", "lock", "export"};
	const char *near = cfg_nearest(name, known, sizeof known / sizeof known[0]);
	char hint[64] = "";
	if (near)
		snprintf(hint, sizeof hint, "did you mean [%s%s]? ", near,
			 strcmp(near, "export") == 0 ? " PATH" : "");
	return cfg_fail(p, "unknown section [%s] (%sexpected [server], [cache], [metrics], [lock] or "
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
	const char *near = cfg_nearest(key, known, nk);
	if (near)
		snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
	return cfg_fail(p, "unknown key '%s' in %s (%sknown: %s)", key, section_name(p, sect, sizeof sect),
		    hint, names);
}

/* For the checks against the host (config_host.c), which come after the reading. */
static void note_line(struct parser *p, const char *key)
{
	if (p->sect == SECT_SERVER && strcmp(key, "listen") == 0)
		p->cfg->line.listen = p->line;
	else if (p->sect == SECT_SERVER && strcmp(key, "state_dir") == 0)
		p->cfg->line.state_dir = p->line;
	else if (p->sect == SECT_SERVER && strcmp(key, "exports_dir") == 0)
		p->cfg->line.exports_dir = p->line;
	else if (p->sect == SECT_CACHE && strcmp(key, "size") == 0)
		p->cfg->line.cache_size = p->line;
	else if (p->sect == SECT_SERVER && strcmp(key, "keytab") == 0)
		p->cfg->line.keytab = p->line;
}

/* "value" or 'value' is value, as in the shell and in most INI dialects: kept literally, the
 * quotes would become part of a path or a name and fail far from here. */
static int unquote(struct parser *p, char **val)
{
	char *v = *val;
	size_t n = strlen(v);
	bool opens = v[0] == '"' || v[0] == '\'';
	bool closes = n >= 2 && v[n - 1] == v[0];
	if (!opens && (n == 0 || (v[n - 1] != '"' && v[n - 1] != '\'')))
		return 0;
	if (!opens || !closes)
		return cfg_fail(p, "unbalanced quote in '%s'", v);
	v[n - 1] = '\0';
	*val = v + 1;
	return 0;
}

static int key_value(struct parser *p, char *s)
{
	char *eq = strchr(s, '=');
	if (!eq)
		return cfg_fail(p, "missing '=' in '%s' (expected key = value)", s);
	*eq = '\0';
	char *key = trim(s), *val = trim(eq + 1);
	if (*key == '\0')
		return cfg_fail(p, "missing key before '='");
	if (p->sect == SECT_NONE)
		return cfg_fail(p, "key '%s' is outside any section", key);
	const struct key_def *k = p->keys;
	while (k->name && strcmp(k->name, key) != 0)
		k++;
	if (!k->name)
		return unknown_key(p, key);
	unsigned *seen = &p->seen[k - p->keys];
	if (*seen)
		return cfg_fail(p, "duplicate key '%s' (first set on line %u)", key, *seen);
	if (unquote(p, &val) < 0)
		return -1;
	if (*val == '\0')
		return cfg_fail(p, "key '%s' has no value", key);
	*seen = p->line;
	note_line(p, k->name);
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
	if (*s == '[') {
		p->skip_keys = section_header(p, s) < 0;
		return p->skip_keys ? -1 : 0;
	}
	return p->skip_keys ? 0 : key_value(p, s);
}

/* ---- load / free ------------------------------------------------------------------------ */

/* Every line, past errors too: --check and a refused reload then list all that is wrong. */
static int parse_stream(struct parser *p, FILE *f)
{
	char *buf = NULL;
	size_t cap = 0;
	errno = 0;
	while (p->nerrors < CFG_MAX_ERRORS && getline(&buf, &cap, f) >= 0) {
		p->line++;
		parse_line(p, buf);
	}
	if (ferror(f))
		cfg_fail_at(p, 0, "%s", strerror(errno ? errno : EIO));
	else if (p->nerrors >= CFG_MAX_ERRORS && !feof(f))
		cfg_fail_at(p, 0, "too many errors: the rest of the file was not read");
	free(buf);
	end_section(p);
	return p->nerrors ? -1 : 0;
}

static int conf_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

/* One file of exports_dir, read as if its sections followed the main file's; relative export
 * paths are against its own directory. */
static void read_dropin(struct parser *p, const char *dir, const char *name)
{
	char *path = NULL;
	if (asprintf(&path, "%s/%s", dir, name) < 0) {
		cfg_out_of_memory(p);
		return;
	}
	FILE *f = fopen(path, "re");
	const char *file = p->file;
	unsigned line = p->line;
	p->file = path;
	p->line = 0;
	if (!f) {
		cfg_fail_at(p, 0, "%s", strerror(errno));
	} else {
		parse_stream(p, f);
		fclose(f);
	}
	p->file = file;
	p->line = line;
	free(path);
}

/* exports_dir's *.conf files, in name order (scandir's alphasort: the C locale's byte order,
 * as the daemon never sets a locale). It may be missing, as /etc/exports.d may: nothing to add. */
static void read_dropins(struct parser *p, struct config *c, unsigned dir_line)
{
	if (!c->exports_dir && !(c->exports_dir = cfg_resolve_path(p, "nfsd-uc.d"))) {
		cfg_out_of_memory(p);
		return;
	}
	struct dirent **names;
	int n = scandir(c->exports_dir, &names, conf_name, alphasort);
	if (n < 0) {
		if (errno != ENOENT)
			cfg_fail_at(p, dir_line, "exports_dir %s: %s", c->exports_dir, strerror(errno));
		return;
	}
	char *main_dir = p->dir;
	p->dir = c->exports_dir;
	p->dropin = true;
	for (int i = 0; i < n; i++) {
		if (p->nerrors < CFG_MAX_ERRORS)
			read_dropin(p, c->exports_dir, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	p->dropin = false;
	p->dir = main_dir;
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
		.keytab = strdup("/etc/krb5.keytab"),
		.gss_contexts = 8192,
		.gss_contexts_per_client = 256,
		.gss_window = 128,
	};
	return c->listen && c->state_dir && c->keytab ? 0 : -1;
}

/* A share of receive_memory (name): its default, a fraction of it and at least two records;
 * or what was set, which must lie between max_record and receive_memory. */
static int check_share(struct parser *p, const struct config *c, size_t *share, size_t dflt,
		       const char *name)
{
	if (*share == 0) {
		*share = dflt < 2 * c->max_record ? 2 * c->max_record : dflt;
		return 0;
	}
	if (*share < c->max_record || *share > c->receive_memory)
		return cfg_fail_at(p, p->memory_line, "%s (%zu) must lie between max_record (%zu) and "
			       "receive_memory (%zu)", name, *share, c->max_record, c->receive_memory);
	return 0;
}

/* receive_memory, max_record and the shares of a connection (default a quarter) and of a
 * client's connections together (default a half) taken together. */
static int check_memory(struct parser *p, struct config *c)
{
	if (c->receive_memory < 2 * c->max_record)
		return cfg_fail_at(p, p->memory_line, "receive_memory (%zu) must hold at least two "
			       "records of max_record (%zu)", c->receive_memory, c->max_record);
	if (check_share(p, c, &c->receive_memory_per_connection, c->receive_memory / 4,
			"receive_memory_per_connection") < 0 ||
	    check_share(p, c, &c->receive_memory_per_client, c->receive_memory / 2,
			"receive_memory_per_client") < 0)
		return -1;
	if (c->receive_memory_per_client < c->receive_memory_per_connection)
		c->receive_memory_per_client = c->receive_memory_per_connection;
	return 0;
}

int config_load(const char *file, struct config *cfg, char *err, size_t errlen)
{
	struct config c;
	struct parser p = {.file = file, .cfg_file = file, .err = err, .errlen = errlen, .cfg = &c};
	int rc = -1;
	memset(cfg, 0, sizeof *cfg);
	if (errlen)
		err[0] = '\0';
	FILE *f = fopen(file, "re");
	if (!f)
		return cfg_fail_at(&p, 0, "%s", strerror(errno));
	if (set_defaults(&c) < 0)
		cfg_fail_at(&p, 0, "%s", strerror(ENOMEM));
	else if (!(p.dir = conf_dir(file)))
		cfg_fail_at(&p, 0, "%s", strerror(errno));
	else
		rc = parse_stream(&p, f);
	fclose(f);
	if (p.dir) {
		read_dropins(&p, &c, c.line.exports_dir);
		rc = p.nerrors ? -1 : rc;
	}
	free(p.dir);
	/* What an editor's truncate-then-write leaves for a moment: it is no configuration, and
	 * serving defaults and no export from it is never what was meant. */
	bool empty = c.nexports == 0;
	for (int s = 0; s < SECT_COUNT; s++)
		empty = empty && !p.sect_line[s];
	if (rc == 0 && empty)
		rc = cfg_fail_at(&p, 0, "no section at all: the file is empty (an editor still writing "
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
		free(cfg->exports[i].dropin);
	}
	free(cfg->exports);
	free(cfg->listen);
	free(cfg->metrics_listen);
	free(cfg->state_dir);
	free(cfg->exports_dir);
	free(cfg->keytab);
	memset(cfg, 0, sizeof *cfg);
}

