/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc.conf parsing: defaults, every key, relative paths, fsids, and every error message
 * with its line number (each error load also checked for leaks). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/config.h"
#include "conftest.h"

#ifndef NFSD_UC_DEFAULT_CONF
#error "meson passes the path of the repository's nfsd-uc.conf"
#endif

static int setup(void **state)
{
	struct scratch *s = calloc(1, sizeof *s);
	if (!s || scratch_new(s) < 0) {
		free(s);
		return -1;
	}
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	scratch_delete(*state);
	free(*state);
	return 0;
}

/* TEMPLATE with every "{D}" replaced by the scratch directory. */
static void expand(const struct scratch *s, const char *templ, char *out, size_t len)
{
	size_t n = 0;
	while (*templ && n + 1 < len) {
		if (strncmp(templ, "{D}", 3) == 0) {
			n += (size_t)snprintf(out + n, len - n, "%s", s->dir);
			templ += 3;
		} else {
			out[n++] = *templ++;
		}
	}
	out[n < len ? n : len - 1] = '\0';
}

static struct config load_ok(const struct scratch *s, const char *text)
{
	struct config cfg;
	char err[512] = "";
	int rc = scratch_load(s, text, &cfg, err, sizeof err);
	if (rc != 0)
		print_error("unexpected error: %s\n", err);
	assert_int_equal(rc, 0);
	return cfg;
}

/* TEXT must fail with exactly "CONF:" WANT ({D} = scratch dir), leave *cfg empty, and give
 * back every byte it took. The first load warms up libc (stdio, locale) so the second can be
 * measured exactly. */
static void expect_error(const struct scratch *s, const char *text, const char *want)
{
	char err[8192], tail[2048], full[sizeof s->conf + sizeof tail + 1];
	struct config cfg;
	expand(s, want, tail, sizeof tail);
	snprintf(full, sizeof full, "%s:%s", s->conf, tail);

	assert_int_equal(scratch_load(s, text, &cfg, err, sizeof err), -1);
	size_t before = heap_in_use();
	memset(&cfg, 0xa5, sizeof cfg);
	assert_int_equal(config_load(s->conf, &cfg, err, sizeof err), -1);
	assert_int_equal(heap_in_use(), before);

	if (strcmp(err, full) != 0)
		print_error("conf:\n%s\n", text);
	assert_string_equal(err, full);
	assert_null(cfg.listen);
	assert_null(cfg.state_dir);
	assert_null(cfg.exports);
	assert_int_equal(cfg.nexports, 0);
	config_free(&cfg);   /* harmless on a failed load */
}

/* ---- defaults and values ---------------------------------------------------------------- */

/* A section and nothing in it: every default. */
static void test_empty_section_gives_defaults(void **state)
{
	struct config cfg = load_ok(*state, "# a comment\n\n[server]\n");
	assert_string_equal(cfg.listen, "127.0.0.1");
	assert_int_equal(cfg.port, 2049);
	assert_int_equal(cfg.mount_port, 20048);
	assert_int_equal(cfg.threads, 0);   /* one ring per online CPU */
	assert_int_equal(cfg.requests_per_connection, 256);
	assert_int_equal(cfg.requests_per_ring, 1024);
	assert_int_equal(cfg.blocking_threads, 4);
	assert_int_equal(cfg.max_record, 1024 * 1024 + 64 * 1024);
	assert_int_equal(cfg.max_connections, 4096);
	assert_int_equal(cfg.max_connections_per_client, 1024);
	assert_int_equal(cfg.receive_memory, 512 * 1024 * 1024);
	assert_int_equal(cfg.receive_memory_per_connection, 128 * 1024 * 1024);   /* a quarter */
	assert_int_equal(cfg.idle_timeout, 360);
	assert_int_equal(cfg.record_timeout, 30);
	assert_int_equal(cfg.reply_cache_entries, 16384);
	assert_int_equal(cfg.mount_list_entries, 4096);
	assert_int_equal(cfg.reply_cache_size, 16 * 1024 * 1024);
	assert_string_equal(cfg.state_dir, "/var/lib/nfsd-uc");
	assert_true(cfg.rpcbind);
	assert_null(cfg.metrics_listen);   /* no HTTP endpoint unless asked */
	assert_int_equal(cfg.metrics_connections, 16);
	assert_int_equal(cfg.metrics_connections_per_client, 4);
	assert_int_equal(cfg.metrics_timeout, 10);
	assert_int_equal(cfg.log_level, LOG_INFO);
	assert_int_equal(cfg.cache_size, 1024 * 1024 * 1024);
	assert_int_equal(cfg.cache_file_size, 0);   /* half of size */
	assert_int_equal(cfg.cache_writeback_depth, 16);
	assert_int_equal(cfg.max_names_per_client, 64);
	assert_int_equal(cfg.nexports, 0);
	assert_null(cfg.exports);
	config_free(&cfg);
	assert_null(cfg.listen);
}

static void test_export_and_client_defaults(void **state)
{
	struct scratch *s = *state;
	struct config cfg = load_ok(s, "\n[export data]\nclients = 10.1.2.3\n");
	assert_int_equal(cfg.nexports, 1);
	const struct export_cfg *e = &cfg.exports[0];
	char want[PATH_MAX + 8];
	snprintf(want, sizeof want, "%s/data", s->dir);
	assert_string_equal(e->path, want);
	assert_int_equal(e->line, 2);
	assert_int_equal(e->write_mode, IO_MODE_CACHED);
	assert_int_equal(e->read_mode, IO_MODE_DIRECT);
	assert_int_equal(e->block, 0);
	assert_int_not_equal(e->fsid, 0);
	assert_int_equal(e->nclients, 1);
	const struct client_rule *r = &e->clients[0];
	assert_int_equal(r->family, AF_INET);
	assert_int_equal(r->prefix, 32);
	assert_memory_equal(r->addr, ((uint8_t[]){10, 1, 2, 3}), 4);
	assert_false(r->rw);
	assert_int_equal(r->squash, SQUASH_ROOT);
	assert_int_equal(r->anonuid, 65534);
	assert_int_equal(r->anongid, 65534);
	assert_true(r->secure);
	assert_false(r->subtree_check);   /* knfsd's default */
	config_free(&cfg);
}

static void test_every_key_set(void **state)
{
	struct scratch *s = *state;
	struct config cfg = load_ok(s,
		"[server]\n"
		"listen = ::\n"
		"port = 12049\n"
		"mount_port = 1\n"
		"threads = 64\n"
		"max_record = 2M\n"
		"connections = 100\n"
		"connections_per_client = 10\n"
		"receive_memory = 64M\n"
		"receive_memory_per_connection = 8M\n"
		"idle_timeout = 0\n"
		"record_timeout = 5\n"
		"reply_cache_entries = 0\n"
		"reply_cache_size = 1M\n"
		"mount_list_entries = 7\n"
		"state_dir = /srv/state\n"
		"rpcbind = no\n"
		"log_level = debug\n"
		"[metrics]\n"
		"listen = [::1]:9101\n"
		"connections = 32\n"
		"connections_per_client = 2\n"
		"timeout = 3\n"
		"[cache]\n"
		"size = 1G\n"
		"file_size = 256M\n"
		"writeback_depth = 3\n"
		"[export data]\n"
		"clients = 10.0.0.0/8(rw,all_squash,anonuid=1000,anongid=1001,insecure,subtree_check) "
		"::1(ro,subtree_check,no_subtree_check)\n"
		"fsid = 4294967295\n"
		"write_mode = dontcache\n"
		"read_mode = buffered\n"
		"block = 16K\n"
		"[export data2]\n"
		"clients = *(no_root_squash)\n"
		"write_mode = buffered\n"
		"read_mode = dontcache\n"
		"block = auto\n"
		"[export data3]\n"
		"clients = *\n"
		"write_mode = direct\n"
		"read_mode = cached\n");
	assert_string_equal(cfg.listen, "::");
	assert_int_equal(cfg.port, 12049);
	assert_int_equal(cfg.mount_port, 1);
	assert_int_equal(cfg.threads, 64);
	assert_int_equal(cfg.max_record, 2 * 1024 * 1024);
	assert_int_equal(cfg.max_connections, 100);
	assert_int_equal(cfg.max_connections_per_client, 10);
	assert_int_equal(cfg.receive_memory, 64 * 1024 * 1024);
	assert_int_equal(cfg.receive_memory_per_connection, 8 * 1024 * 1024);
	assert_int_equal(cfg.metrics_connections, 32);
	assert_int_equal(cfg.metrics_connections_per_client, 2);
	assert_int_equal(cfg.metrics_timeout, 3);
	assert_int_equal(cfg.idle_timeout, 0);
	assert_int_equal(cfg.record_timeout, 5);
	assert_int_equal(cfg.reply_cache_entries, 0);
	assert_int_equal(cfg.reply_cache_size, 1024 * 1024);
	assert_int_equal(cfg.mount_list_entries, 7);
	assert_string_equal(cfg.state_dir, "/srv/state");
	assert_false(cfg.rpcbind);
	assert_string_equal(cfg.metrics_listen, "[::1]:9101");
	assert_int_equal(cfg.log_level, LOG_DEBUG);
	assert_int_equal(cfg.cache_size, 1024 * 1024 * 1024);
	assert_int_equal(cfg.cache_file_size, 256 * 1024 * 1024);
	assert_int_equal(cfg.cache_writeback_depth, 3);
	assert_int_equal(cfg.nexports, 3);

	const struct export_cfg *e = &cfg.exports[0];
	assert_int_equal(e->fsid, 4294967295u);
	assert_int_equal(e->write_mode, IO_MODE_DONTCACHE);
	assert_int_equal(e->read_mode, IO_MODE_BUFFERED);
	assert_int_equal(e->block, 16384);
	assert_int_equal(e->nclients, 2);
	const struct client_rule *r = &e->clients[0];
	assert_int_equal(r->family, AF_INET);
	assert_int_equal(r->prefix, 8);
	assert_true(r->rw);
	assert_int_equal(r->squash, SQUASH_ALL);
	assert_int_equal(r->anonuid, 1000);
	assert_int_equal(r->anongid, 1001);
	assert_false(r->secure);
	assert_true(r->subtree_check);
	r = &e->clients[1];
	assert_false(r->subtree_check);   /* the later option wins */
	uint8_t one[16] = {[15] = 1};
	assert_int_equal(r->family, AF_INET6);
	assert_int_equal(r->prefix, 128);
	assert_memory_equal(r->addr, one, 16);
	assert_false(r->rw);
	assert_int_equal(r->squash, SQUASH_ROOT);

	e = &cfg.exports[1];
	assert_int_equal(e->line, 34);
	assert_int_equal(e->write_mode, IO_MODE_BUFFERED);
	assert_int_equal(e->read_mode, IO_MODE_DONTCACHE);
	assert_int_equal(e->block, 0);
	assert_int_equal(e->clients[0].family, AF_UNSPEC);
	assert_int_equal(e->clients[0].squash, SQUASH_NONE);

	e = &cfg.exports[2];
	assert_int_equal(e->write_mode, IO_MODE_DIRECT);     /* write-through */
	assert_int_equal(e->read_mode, IO_MODE_DIRECT);      /* "cached" reads are direct ones */
	config_free(&cfg);
}

static void test_range_limits_accepted(void **state)
{
	struct config cfg = load_ok(*state,
		"[server]\nport = 65535\nmount_port = 65535\nthreads = 1\nmax_record = 64K\n"
		"[cache]\nsize = 64K\n"
		"[export data]\nclients = *\nfsid = 1\nblock = 512\n"
		"[export data2]\nclients = *\nblock = 1M\n");
	assert_int_equal(cfg.port, 65535);
	assert_int_equal(cfg.max_record, 65536);
	assert_int_equal(cfg.cache_size, 65536);
	assert_int_equal(cfg.exports[0].fsid, 1);
	assert_int_equal(cfg.exports[0].block, 512);
	assert_int_equal(cfg.exports[1].block, 1024 * 1024);
	config_free(&cfg);

	cfg = load_ok(*state, "[server]\nmax_record = 64M\n[cache]\nsize = 1024G\n");
	assert_int_equal(cfg.max_record, 64 * 1024 * 1024);
	assert_int_equal(cfg.cache_size, 1024ULL * 1024 * 1024 * 1024);
	config_free(&cfg);
}

static void test_bool_spellings(void **state)
{
	static const struct { const char *word; bool value; } cases[] = {
		{"yes", true}, {"no", false}, {"true", true}, {"false", false}, {"on", true},
		{"off", false}, {"1", true}, {"0", false}, {"YES", true}, {"Off", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[64];
		snprintf(text, sizeof text, "[server]\nrpcbind = %s\n", cases[i].word);
		struct config cfg = load_ok(*state, text);
		if (cfg.rpcbind != cases[i].value)
			print_error("rpcbind = %s\n", cases[i].word);
		assert_int_equal(cfg.rpcbind, cases[i].value);
		config_free(&cfg);
	}
}

static void test_listen_addresses(void **state)
{
	static const char *const ok[] = {"0.0.0.0", "::", "::1", "192.168.1.20", "fd00::7"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char text[64];
		snprintf(text, sizeof text, "[server]\nlisten = %s\n", ok[i]);
		struct config cfg = load_ok(*state, text);
		assert_string_equal(cfg.listen, ok[i]);
		config_free(&cfg);
	}
}

static void test_several_listen_addresses(void **state)
{
	struct config cfg = load_ok(*state, "[server]\nlisten = 127.0.0.1 ::1, 10.1.2.3\n");
	assert_int_equal(cfg.nlisten, 3);
	assert_string_equal(cfg.listen_addr[0], "127.0.0.1");
	assert_string_equal(cfg.listen_addr[1], "::1");
	assert_string_equal(cfg.listen_addr[2], "10.1.2.3");
	config_free(&cfg);
	cfg = load_ok(*state, "[server]\n");
	assert_int_equal(cfg.nlisten, 1);
	assert_string_equal(cfg.listen_addr[0], "127.0.0.1");
	config_free(&cfg);
}

static void test_syntax_tolerance(void **state)
{
	/* Tabs, no spaces around '=', trailing comments, CRLF line ends, indented lines. */
	struct config cfg = load_ok(*state,
		"  # leading comment\r\n"
		"\t[server]   # the server\r\n"
		"port=3049\r\n"
		"\tthreads\t=\t4\t# four\r\n"
		"   \r\n"
		"[ export   data ]\r\n"
		"clients = 127.0.0.1(rw)   10.0.0.0/8  # two\r\n");
	assert_int_equal(cfg.port, 3049);
	assert_int_equal(cfg.threads, 4);
	assert_int_equal(cfg.nexports, 1);
	assert_int_equal(cfg.exports[0].line, 6);
	assert_int_equal(cfg.exports[0].nclients, 2);
	config_free(&cfg);
}

static void test_parse_size(void **state)
{
	(void)state;
	assert_int_equal(config_parse_size("4096"), 4096);
	assert_int_equal(config_parse_size("0"), 0);
	assert_int_equal(config_parse_size("16K"), 16384);
	assert_int_equal(config_parse_size("16k"), 16384);
	assert_int_equal(config_parse_size("1088K"), 1088 * 1024);
	assert_int_equal(config_parse_size("64M"), 64LL << 20);
	assert_int_equal(config_parse_size("3G"), 3LL << 30);
	assert_int_equal(config_parse_size("8589934591G"), 8589934591LL << 30);
	static const char *const junk[] = {
		"", "K", "-1", "+1", " 1", "1 ", "1KB", "1KiB", "1T", "0x10", "1.5M", "12Q",
		"8589934592G", "99999999999999999999", NULL,
	};
	for (size_t i = 0; junk[i]; i++) {
		if (config_parse_size(junk[i]) != -1)
			print_error("accepted '%s'\n", junk[i]);
		assert_int_equal(config_parse_size(junk[i]), -1);
	}
	assert_int_equal(config_parse_size(NULL), -1);
}

/* ---- paths ------------------------------------------------------------------------------ */

static void test_relative_paths_against_conf_dir(void **state)
{
	struct scratch *s = *state;
	char want_state[PATH_MAX + 16], want_export[PATH_MAX + 16], cwd[PATH_MAX];
	snprintf(want_state, sizeof want_state, "%s/state", s->dir);
	snprintf(want_export, sizeof want_export, "%s/data", s->dir);
	assert_int_equal(scratch_write(s, "nfsd-uc.conf",
		"[server]\nstate_dir = state\n[export ./data2/../data/]\nclients = *\n"), 0);

	/* Loaded by absolute path, and by a path relative to an unrelated working directory. */
	struct config cfg;
	char err[512];
	assert_int_equal(config_load(s->conf, &cfg, err, sizeof err), 0);
	assert_string_equal(cfg.state_dir, want_state);
	assert_string_equal(cfg.exports[0].path, want_export);
	config_free(&cfg);

	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(s->dir), 0);
	assert_int_equal(chdir("data2"), 0);
	int rc = config_load("../nfsd-uc.conf", &cfg, err, sizeof err);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(rc, 0);
	assert_string_equal(cfg.state_dir, want_state);
	assert_string_equal(cfg.exports[0].path, want_export);
	config_free(&cfg);
}

static void test_absolute_export_path_is_canonical(void **state)
{
	struct scratch *s = *state;
	char text[PATH_MAX * 2], want[PATH_MAX + 16];
	snprintf(text, sizeof text, "[export %s//data/.]\nclients = *\n", s->dir);
	snprintf(want, sizeof want, "%s/data", s->dir);
	struct config cfg = load_ok(s, text);
	assert_string_equal(cfg.exports[0].path, want);
	config_free(&cfg);
}

static void test_default_conf_file(void **state)
{
	/* The repository's nfsd-uc.conf, next to an export/ directory as the README makes it. */
	struct scratch *s = *state;
	FILE *f = fopen(NFSD_UC_DEFAULT_CONF, "r");
	assert_non_null(f);
	char text[32768];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	assert_true(n > 0 && n < sizeof text - 1);
	text[n] = '\0';
	char dir[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s/export", s->dir);
	assert_int_equal(mkdir(dir, 0755), 0);

	struct config cfg = load_ok(s, text);
	char want_state[PATH_MAX + 16];
	snprintf(want_state, sizeof want_state, "%s/state", s->dir);
	assert_int_equal(cfg.port, 2049);
	assert_int_equal(cfg.mount_port, 20048);
	assert_string_equal(cfg.state_dir, want_state);
	assert_true(cfg.rpcbind);
	assert_int_equal(cfg.nexports, 1);
	assert_string_equal(cfg.exports[0].path, dir);
	assert_int_equal(cfg.exports[0].nclients, 1);
	const struct client_rule *r = &cfg.exports[0].clients[0];
	assert_int_equal(r->family, AF_INET);
	assert_int_equal(r->prefix, 32);
	assert_memory_equal(r->addr, ((uint8_t[]){127, 0, 0, 1}), 4);
	assert_true(r->rw);
	assert_int_equal(r->squash, SQUASH_NONE);
	assert_false(r->secure);
	config_free(&cfg);
}

/* ---- fsid ------------------------------------------------------------------------------- */

static uint32_t derived_fsid(const struct scratch *s, const char *dir)
{
	char text[256];
	snprintf(text, sizeof text, "[export %s]\nclients = *\n", dir);
	struct config cfg = load_ok(s, text);
	uint32_t fsid = cfg.exports[0].fsid;
	config_free(&cfg);
	return fsid;
}

static void test_fsid_stable_and_distinct(void **state)
{
	struct scratch *s = *state;
	uint32_t a = derived_fsid(s, "data"), b = derived_fsid(s, "data2");
	assert_int_not_equal(a, 0);
	assert_int_equal(derived_fsid(s, "data"), a);
	assert_int_equal(derived_fsid(s, "./data/"), a);   /* from the canonical path */
	assert_int_not_equal(a, b);

	struct config cfg = load_ok(s, "[export data]\nclients = *\n[export data2]\nclients = *\n");
	assert_int_equal(cfg.exports[0].fsid, a);
	assert_int_equal(cfg.exports[1].fsid, b);
	config_free(&cfg);
}

static void test_fsid_derivation_never_changes(void **state)
{
	/* File handles carry the fsid: a new hash would make every client's handles stale after
	 * an upgrade. This pins the value for "/" (FNV-1a, 32 bits). */
	assert_int_equal(derived_fsid(*state, "/"), 0x2A0C975Eu);
}

static void test_fsid_derived_collides_with_explicit(void **state)
{
	struct scratch *s = *state;
	uint32_t a = derived_fsid(s, "data"), b = derived_fsid(s, "data2");
	char text[256], want[256];

	snprintf(text, sizeof text, "[export data]\nclients = *\nfsid = %u\n"
		 "[export data2]\nclients = *\n", b);
	snprintf(want, sizeof want, "4: export {D}/data2: its derived fsid %u is already used by "
		 "export {D}/data (line 1); set fsid explicitly", b);
	expect_error(s, text, want);

	snprintf(text, sizeof text, "[export data]\nclients = *\n[export data2]\n"
		 "clients = *\n\nfsid = %u\n", a);
	snprintf(want, sizeof want, "6: fsid %u is already used by export {D}/data (line 1)", a);
	expect_error(s, text, want);
}

/* ---- errors ----------------------------------------------------------------------------- */

struct error_case {
	const char *text;
	const char *want;   /* after "CONF:"; {D} = scratch dir */
};

static void run_error_cases(void **state, const struct error_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect_error(*state, cases[i].text, cases[i].want);
}

#define RUN(cases) run_error_cases(state, cases, sizeof cases / sizeof cases[0])

static void test_structure_errors(void **state)
{
	static const struct error_case cases[] = {
		/* what an editor's truncate-then-write leaves for a moment */
		{"", " no section at all: the file is empty (an editor still writing it?)"},
		{"# nothing but a comment\n\n",
		 " no section at all: the file is empty (an editor still writing it?)"},
		{"# hi\n\n[bogus]\n",
		 "3: unknown section [bogus] (expected [server], [cache], [metrics], [lock] "
		 "or [export PATH])"},
		{"[exports data]\n",
		 "1: unknown section [exports data] (expected [server], [cache], [metrics], [lock] "
		 "or [export PATH])"},
		{"[server\n", "1: missing ']' in section header"},
		{"[server] port = 1\n", "1: unexpected text after ']': 'port = 1'"},
		{"[server]\n[cache]\n\n[server]\n", "4: duplicate section [server] (first on line 1)"},
		{"[cache]\n[cache]\n", "2: duplicate section [cache] (first on line 1)"},
		{"port = 2049\n", "1: key 'port' is outside any section"},
		{"# c\n[server]\nport 2049\n", "3: missing '=' in 'port 2049' (expected key = value)"},
		{"[server]\n = 5\n", "2: missing key before '='"},
		{"[server]\nport =   # none\n", "2: key 'port' has no value"},
		{"[server]\nport = 1\n# c\nport = 2\n", "4: duplicate key 'port' (first set on line 2)"},
		{"[server]\nprot = 1\n",
		 "2: unknown key 'prot' in [server] (did you mean 'port'? known: listen, port, "
		 "mount_port, threads, "
		 "requests_per_connection, requests_per_ring, blocking_threads, max_record, "
		 "connections, connections_per_client, receive_memory, receive_memory_per_connection, "
		 "idle_timeout, record_timeout, reply_cache_entries, reply_cache_size, "
		 "mount_list_entries, state_dir, rpcbind, log_level)"},
		{"[server]\nrecord_timout = 5\n",
		 "2: unknown key 'record_timout' in [server] (did you mean 'record_timeout'? known: "
		 "listen, port, mount_port, threads, requests_per_connection, requests_per_ring, "
		 "blocking_threads, max_record, connections, connections_per_client, receive_memory, "
		 "receive_memory_per_connection, idle_timeout, record_timeout, reply_cache_entries, "
		 "reply_cache_size, mount_list_entries, state_dir, rpcbind, log_level)"},
		{"[cahce]\n",
		 "1: unknown section [cahce] (did you mean [cache]? expected [server], [cache], "
		 "[metrics], [lock] or [export PATH])"},
		{"[exprot data]\n",
		 "1: unknown section [exprot data] (expected [server], [cache], [metrics], [lock] "
		 "or [export PATH])"},
		{"[cache]\nsized = 1\n", "2: unknown key 'sized' in [cache] (did you mean 'size'? known: size, file_size, writeback_depth)"},
		{"[lock]\ngrace_perod = 5\n", "2: unknown key 'grace_perod' in [lock] (did you mean 'grace_period'? known: port, "
		 "grace_period, locks, locks_per_client, waiters, waiters_per_client, names_per_client)"},
		{"[lock]\n[lock]\n", "2: duplicate section [lock] (first on line 1)"},
		{"[export data]\nclients = *\nsync = yes\n",
		 "3: unknown key 'sync' in [export {D}/data] (known: clients, fsid, write_mode, "
		 "read_mode, block)"},
		{"[export data]\nclients = *\n[export data2]\nclients = *\nclients = *\n",
		 "5: duplicate key 'clients' (first set on line 4)"},
	};
	RUN(cases);
}

static void test_export_errors(void **state)
{
	static const struct error_case cases[] = {
		{"[export]\n", "1: [export] needs a path: [export /path/to/dir]"},
		{"\n[export nosuch]\nclients = *\n", "2: export path {D}/nosuch does not exist"},
		{"[export /nonexistent-nfsduc/x]\n", "1: export path /nonexistent-nfsduc/x does not exist"},
		{"[export file]\nclients = *\n", "1: export path {D}/file is not a directory"},
		{"[export file/x]\n", "1: export path {D}/file/x: Not a directory"},
		{"[server]\n[export data]\n# no clients\n", "2: export {D}/data has no clients line"},
		{"[export data]\nfsid = 3\n[server]\nport = 1\n",
		 "1: export {D}/data has no clients line"},
		{"[export data]\nclients = *\n[export ./data/]\nclients = *\n",
		 "3: duplicate export {D}/data (first on line 1)"},
		{"[export data]\nclients = *\nfsid = 7\n[export data2]\nfsid = 7\nclients = *\n",
		 "5: fsid 7 is already used by export {D}/data (line 1)"},
	};
	RUN(cases);
}

static void test_value_errors(void **state)
{
	static const struct error_case cases[] = {
		{"[server]\nlisten = localhost\n",
		 "2: listen = localhost is not an IPv4 or IPv6 address"},
		{"[server]\nlisten = 127.0.0.1 ::1 127.0.0.1\n", "2: listen: 127.0.0.1 is listed twice"},
		{"[server]\nlisten = ::1 localhost\n",
		 "2: listen = localhost is not an IPv4 or IPv6 address"},
		{"[server]\nlisten = 10.0.0.0/8\n",
		 "2: listen = 10.0.0.0/8 is not an IPv4 or IPv6 address"},
		{"[server]\nport = 0\n", "2: port = 0 is out of range (1..65535)"},
		{"[server]\nport = 65536\n", "2: port = 65536 is out of range (1..65535)"},
		{"[server]\nport = 20x\n", "2: port = 20x is not a number"},
		{"[server]\nport = -1\n", "2: port = -1 is not a number"},
		{"[server]\nmount_port = 0\n", "2: mount_port = 0 is out of range (1..65535)"},
		{"[server]\nthreads = 1025\n", "2: threads = 1025 is out of range (0..1024)"},
		{"[lock]\nnames_per_client = 0\n",
		 "2: names_per_client = 0 is out of range (1..65536)"},
		{"[server]\nmount_list_entries = 0\n",
		 "2: mount_list_entries = 0 is out of range (1..1048576)"},
		{"[server]\nrequests_per_connection = 0\n",
		 "2: requests_per_connection = 0 is out of range (1..65536)"},
		{"[server]\nrequests_per_ring = 0\n", "2: requests_per_ring = 0 is out of range (1..1048576)"},
		{"[server]\nblocking_threads = 0\n", "2: blocking_threads = 0 is out of range (1..256)"},
		{"[server]\nthreads = 99999999999999999999\n",
		 "2: threads = 99999999999999999999 is not a number"},
		{"[server]\nmax_record = 32K\n", "2: max_record = 32K is out of range (64K..64M)"},
		{"[server]\nmax_record = 65M\n", "2: max_record = 65M is out of range (64K..64M)"},
		{"[server]\nmax_record = 1Q\n",
		 "2: max_record = 1Q is not a size (a number with an optional K, M or G suffix)"},
		{"[server]\nconnections = 0\n", "2: connections = 0 is out of range (1..1048576)"},
		{"[server]\nrecord_timeout = 0\n", "2: record_timeout = 0 is out of range (1..3600)"},
		{"[server]\nreceive_memory = 2M\n",
		 "2: receive_memory (2097152) must hold at least two records of max_record (1114112)"},
		{"[server]\nreceive_memory = 8M\nreceive_memory_per_connection = 9M\n",
		 "3: receive_memory_per_connection (9437184) must lie between max_record (1114112) and "
		 "receive_memory (8388608)"},
		{"[server]\nreceive_memory_per_connection = 1M\nreceive_memory = 8M\n",
		 "3: receive_memory_per_connection (1048576) must lie between max_record (1114112) and "
		 "receive_memory (8388608)"},
		{"[metrics]\ntimeout = 0\n", "2: timeout = 0 is out of range (1..3600)"},
		{"[metrics]\nconnections = 5000\n", "2: connections = 5000 is out of range (1..4096)"},
		{"[metrics]\nconnections_per_client = 0\n",
		 "2: connections_per_client = 0 is out of range (1..4096)"},
		{"[metrics]\nlisten = 127.0.0.1\n",
		 "2: listen = 127.0.0.1 is not ADDRESS:PORT (an IPv4 address, or an IPv6 one in "
		 "brackets: 127.0.0.1:9101, [::1]:9101)"},
		{"[metrics]\nlisten = ::1:9101\n",
		 "2: listen = ::1:9101 is not ADDRESS:PORT (an IPv4 address, or an IPv6 one in "
		 "brackets: 127.0.0.1:9101, [::1]:9101)"},
		{"[metrics]\nlisten = 127.0.0.1:70000\n",
		 "2: listen = 127.0.0.1:70000 is not ADDRESS:PORT (an IPv4 address, or an IPv6 one in "
		 "brackets: 127.0.0.1:9101, [::1]:9101)"},
		{"[server]\nlog_level = loud\n",
		 "2: log_level = loud is not error, warning, info or debug"},
		{"[server]\nrpcbind = maybe\n",
		 "2: rpcbind = maybe is not auto, yes, no or own (yes/no also as true/false, on/off or 1/0)"},
		{"[cache]\nsize = 1K\n", "2: size = 1K is out of range (64K..1024G)"},
		{"[cache]\nsize = 1025G\n", "2: size = 1025G is out of range (64K..1024G)"},
		{"[cache]\nwriteback_depth = 0\n", "2: writeback_depth = 0 is out of range (1..1024)"},
		{"[cache]\nsize = lots\n",
		 "2: size = lots is not a size (a number with an optional K, M or G suffix)"},
		{"[export data]\nclients = *\nfsid = 0\n", "3: fsid = 0 is out of range (1..4294967295)"},
		{"[export data]\nclients = *\nfsid = 4294967296\n",
		 "3: fsid = 4294967296 is out of range (1..4294967295)"},
		{"[export data]\nclients = *\nwrite_mode = fast\n",
		 "3: write_mode = fast is not cached, direct, dontcache or buffered"},
		{"[export data]\nclients = *\nread_mode = sync\n",
		 "3: read_mode = sync is not cached, direct, dontcache or buffered"},
		{"[export data]\nclients = *\nblock = 1000\n", "3: block = 1000 is not a power of two"},
		{"[export data]\nclients = *\nblock = 256\n", "3: block = 256 is out of range (512..1M)"},
		{"[export data]\nclients = *\nblock = 2M\n", "3: block = 2M is out of range (512..1M)"},
		{"[export data]\nclients = *\nblock = big\n",
		 "3: block = big is not a size (a number with an optional K, M or G suffix)"},
	};
	RUN(cases);
}

static void test_client_errors(void **state)
{
	static const struct error_case cases[] = {
		{"[export data]\nclients = 127.0.0.1 @trusted(rw)\n",
		 "2: clients: netgroups (@trusted) are not supported yet; use an IPv4 or IPv6 "
		 "address, ADDR/PREFIX, a host name, a wildcard name or *"},
		{"[export data]\nclients = bad!name(rw)\n",
		 "2: clients: 'bad!name' is not a valid IPv4 address"},
		{"[export data]\nclients = 10.0.0.256\n",
		 "2: clients: '10.0.0.256' is not a valid IPv4 address"},
		{"[export data]\nclients = 10/8\n", "2: clients: '10' is not a valid IPv4 address"},
		{"[export data]\nclients = fe80::1::2(rw)\n",
		 "2: clients: 'fe80::1::2' is not a valid IPv6 address"},
		{"[export data]\nclients = 10.0.0.0/33\n",
		 "2: clients: bad prefix '/33' for 10.0.0.0 (0..32)"},
		{"[export data]\nclients = 10.0.0.0/(rw)\n",
		 "2: clients: bad prefix '/' for 10.0.0.0 (0..32)"},
		{"[export data]\nclients = 10.0.0.0/-1\n",
		 "2: clients: bad prefix '/-1' for 10.0.0.0 (0..32)"},
		{"[export data]\nclients = ::1/129\n", "2: clients: bad prefix '/129' for ::1 (0..128)"},
		{"[export data]\nclients = 127.0.0.1 (rw)\n",
		 "2: clients: '(rw)' has no address (no space before '('; write *(rw) for every "
		 "client)"},
		{"[export data]\nclients = 127.0.0.1(rw, no_root_squash)\n",
		 "2: clients: missing ')' in '127.0.0.1(rw,' (no spaces inside the options)"},
		{"[export data]\nclients = 127.0.0.1)\n", "2: clients: unexpected ')' in '127.0.0.1)'"},
		{"[export data]\nclients = 127.0.0.1(rw)(ro)\n",
		 "2: clients: unexpected ')' in '127.0.0.1(rw)(ro)'"},
		{"[export data]\nclients = 127.0.0.1(rw,sync)\n",
		 "2: clients: 127.0.0.1: unknown option 'sync' (known: rw, ro, root_squash, "
		 "no_root_squash, all_squash, no_all_squash, anonuid=N, anongid=N, secure, "
		 "insecure, subtree_check, no_subtree_check)"},
		{"[export data]\nclients = 127.0.0.1(rw,no_root_sqaush)\n",
		 "2: clients: 127.0.0.1: unknown option 'no_root_sqaush' (did you mean "
		 "'no_root_squash'? known: rw, ro, root_squash, no_root_squash, all_squash, "
		 "no_all_squash, anonuid=N, anongid=N, secure, insecure, subtree_check, "
		 "no_subtree_check)"},
		{"[export data]\nclients = 127.0.0.1(rw,,ro)\n", "2: clients: 127.0.0.1: empty option"},
		{"[export data]\nclients = *(anonuid=-2)\n",
		 "2: clients: *: bad value in 'anonuid=-2' (0..4294967294)"},
		{"[export data]\nclients = *(anongid=4294967295)\n",
		 "2: clients: *: bad value in 'anongid=4294967295' (0..4294967294)"},
		{"[export data]\nclients = *(anonuid=)\n",
		 "2: clients: *: bad value in 'anonuid=' (0..4294967294)"},
	};
	RUN(cases);
}

/* A host name is resolved at load into a rule per address (localhost: /etc/hosts), with the
 * entry's options; a wildcard name stays a pattern, matched against the client's name later;
 * a name that does not resolve stops the load with its line. */
static void test_host_names_and_wildcards(void **state)
{
	struct config cfg = load_ok(*state, "[export data]\n"
					    "clients = localhost(rw,insecure) *.example.com(ro)\n");
	const struct export_cfg *e = &cfg.exports[0];
	size_t v4 = 0, wild = 0;
	for (size_t i = 0; i < e->nclients; i++) {
		const struct client_rule *r = &e->clients[i];
		if (r->pattern[0]) {
			assert_string_equal(r->pattern, "*.example.com");
			assert_false(r->rw);
			assert_int_equal(i, e->nclients - 1);     /* after localhost's, in order */
			wild++;
			continue;
		}
		assert_true(r->rw);
		assert_false(r->secure);
		if (r->family == AF_INET) {
			assert_memory_equal(r->addr, ((uint8_t[]){127, 0, 0, 1}), 4);
			assert_int_equal(r->prefix, 32);
			v4++;
		}
	}
	assert_int_equal(v4, 1);
	assert_int_equal(wild, 1);
	config_free(&cfg);

	struct scratch *s = *state;
	char err[512];
	assert_int_equal(scratch_load(s, "[export data]\nclients = no-such-host.invalid(rw)\n", &cfg,
				      err, sizeof err), -1);
	assert_non_null(strstr(err, ":2: clients: cannot resolve host name 'no-such-host.invalid': "));
}

static void test_unreadable_files(void **state)
{
	struct scratch *s = *state;
	struct config cfg;
	char path[PATH_MAX + 16], err[PATH_MAX + 64], want[PATH_MAX + 64];

	snprintf(path, sizeof path, "%s/missing.conf", s->dir);
	snprintf(want, sizeof want, "%s: No such file or directory", path);
	assert_int_equal(config_load(path, &cfg, err, sizeof err), -1);
	assert_string_equal(err, want);
	assert_null(cfg.exports);

	/* fopen() accepts a directory; the read fails. */
	snprintf(path, sizeof path, "%s/data", s->dir);
	snprintf(want, sizeof want, "%s: Is a directory", path);
	assert_int_equal(config_load(path, &cfg, err, sizeof err), -1);
	size_t before = heap_in_use();
	assert_int_equal(config_load(path, &cfg, err, sizeof err), -1);
	assert_int_equal(heap_in_use(), before);
	assert_string_equal(err, want);
}

static void test_error_truncated_to_buffer(void **state)
{
	struct scratch *s = *state;
	struct config cfg;
	char err[8];
	memset(err, 'x', sizeof err);
	assert_int_equal(scratch_load(s, "[bogus]\n", &cfg, err, sizeof err), -1);
	assert_memory_equal(err, s->conf, 7);
	assert_int_equal(err[7], '\0');
	/* No room at all for a message is not a reason to crash. */
	assert_int_equal(config_load(s->conf, &cfg, NULL, 0), -1);
}

static void test_success_takes_back_everything(void **state)
{
	static const char text[] =
		"[server]\nlisten = ::1\nstate_dir = st\n"
		"[export data]\nclients = 10.0.0.0/8(rw) ::1 *(ro)\n"
		"[export data2]\nclients = *\n";
	struct config cfg = load_ok(*state, text);
	config_free(&cfg);
	size_t before = heap_in_use();
	cfg = load_ok(*state, text);
	config_free(&cfg);
	assert_int_equal(heap_in_use(), before);
	config_free(&cfg);   /* twice is harmless */
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
	(void)argc;
	heap_gauge_init(argv);
	const struct CMUnitTest tests[] = {
		T(test_empty_section_gives_defaults),
		T(test_export_and_client_defaults),
		T(test_every_key_set),
		T(test_range_limits_accepted),
		T(test_bool_spellings),
		T(test_listen_addresses),
		T(test_several_listen_addresses),
		T(test_host_names_and_wildcards),
		T(test_syntax_tolerance),
		T(test_parse_size),
		T(test_relative_paths_against_conf_dir),
		T(test_absolute_export_path_is_canonical),
		T(test_default_conf_file),
		T(test_fsid_stable_and_distinct),
		T(test_fsid_derivation_never_changes),
		T(test_fsid_derived_collides_with_explicit),
		T(test_structure_errors),
		T(test_export_errors),
		T(test_value_errors),
		T(test_client_errors),
		T(test_unreadable_files),
		T(test_error_truncated_to_buffer),
		T(test_success_takes_back_everything),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
