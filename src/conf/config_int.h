/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the conf parser: its state, the rows of its key tables and what its three files
 * (config.c, config_keys.c, config_clients.c) share. */
#ifndef NFSD_UC_CONF_CONFIG_INT_H
#define NFSD_UC_CONF_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/config.h"

#define KIB 1024ULL
#define MIB (1024ULL * KIB)
#define GIB (1024ULL * MIB)
#define MAX_KEYS 32   /* rows per section table; config_keys.c's static asserts check it */

enum section { SECT_NONE, SECT_SERVER, SECT_CACHE, SECT_METRICS, SECT_LOCK, SECT_EXPORT, SECT_COUNT };

struct parser;

struct key_def {
	const char *name;
	/* obj is the struct config (server, cache) or the struct export_cfg being filled. */
	int (*parse)(struct parser *p, const struct key_def *k, const char *val, void *obj);
	size_t off;
	unsigned long long min, max;
	/* The value in force, as the file would spell it (--dump-config); "" when unset. */
	void (*show)(const struct key_def *k, const void *obj, char *buf, size_t len);
};

struct parser {
	const char *file;          /* as given: every message starts with it */
	const char *cfg_file;      /* the main file (file is a drop-in's while one is read) */
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
	unsigned nerrors;               /* every error is reported, not just the first */
	unsigned sect_errors;           /* nerrors when the current section began */
	bool skip_keys;                 /* its header was refused: its keys are not checked */
	bool dropin;                    /* a file of exports_dir: [export] sections only */
};

/* Past this many errors the reading stops: a file that is not a configuration at all would
 * otherwise bury the first (and usually only real) mistake. */
#define CFG_MAX_ERRORS 20

#define FIELD(type) ((type *)((char *)obj + k->off))

/* config.c */
/* Add "FILE:LINE: ..." (no LINE when 0) to the messages, one per line, and return -1. */
__attribute__((format(printf, 3, 4)))
int cfg_fail_at(struct parser *p, unsigned line, const char *fmt, ...);
/* The same at the current line. */
__attribute__((format(printf, 2, 3)))
int cfg_fail(struct parser *p, const char *fmt, ...);
int cfg_out_of_memory(struct parser *p);
/* REL against the conf file's directory unless absolute (allocated; NULL when out of memory). */
char *cfg_resolve_path(struct parser *p, const char *rel);
/* The known word nearest to word, if near enough to be a typo of it (NULL otherwise). */
const char *cfg_nearest(const char *word, const char *const *known, size_t n);

/* config_keys.c */
/* Plain decimal only: strtoull alone would take "-1", " 7" and "0x10". */
bool cfg_parse_ull(const char *s, unsigned long long *out);
/* The tables of keys, each ended by a row with no name. */
extern const struct key_def cfg_server_keys[], cfg_cache_keys[], cfg_metrics_keys[],
	cfg_lock_keys[], cfg_export_keys[];

/* config_clients.c */
/* clients = ...: the export's client rules, host names resolved. */
int cfg_parse_clients(struct parser *p, const struct key_def *k, const char *val, void *obj);
void cfg_show_clients(const struct key_def *k, const void *obj, char *buf, size_t len);

#endif
