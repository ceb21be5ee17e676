/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc.conf parsing: defaults, every key, relative paths, fsids, and every error message
 * with its line number (each error load also checked for leaks). The errors are in
 * test_config_errors.c, the checked loads in conftest.c; this file lists every test. */
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
	assert_int_equal(cfg.receive_memory_per_client, 256 * 1024 * 1024);       /* a half */
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
	assert_int_equal(cfg.cache_sync_behind, 0);   /* off */
	assert_int_equal(cfg.max_names_per_client, 64);
	assert_string_equal(cfg.keytab, "/etc/krb5.keytab");
	assert_int_equal(cfg.gss_contexts, 8192);
	assert_int_equal(cfg.gss_contexts_per_client, 256);
	assert_int_equal(cfg.gss_window, 128);
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
	assert_int_equal(r->nsec, 1);     /* sec=sys, as knfsd */
	assert_int_equal(r->sec[0], 1);
	config_free(&cfg);
}

/* Every key of every section, none at its default. */
static const char every_key[] =
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
	"receive_memory_per_client = 16M\n"
	"idle_timeout = 0\n"
	"record_timeout = 5\n"
	"reply_cache_entries = 0\n"
	"reply_cache_size = 1M\n"
	"mount_list_entries = 7\n"
	"state_dir = /srv/state\n"
	"rpcbind = no\n"
	"log_level = debug\n"
	"keytab = /etc/nfs.keytab\n"
	"gss_contexts = 100\n"
	"gss_contexts_per_client = 9\n"
	"gss_window = 32\n"
	"gss_unmapped = refuse\n"
	"[metrics]\n"
	"listen = [::1]:9101\n"
	"connections = 32\n"
	"connections_per_client = 2\n"
	"timeout = 3\n"
	"[cache]\n"
	"size = 1G\n"
	"file_size = 256M\n"
	"writeback_depth = 3\n"
	"sync_behind = 64M\n"
	"[export data]\n"
	"clients = 10.0.0.0/8(rw,all_squash,anonuid=1000,anongid=1001,insecure,subtree_check) "
	"::1(ro,subtree_check,no_subtree_check,sec=krb5p:sys)\n"
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
	"read_mode = cached\n";

/* The [server], [metrics] and [cache] keys as every_key sets them. */
static void check_every_server_key(const struct config *cfg)
{
	assert_string_equal(cfg->listen, "::");
	assert_int_equal(cfg->port, 12049);
	assert_int_equal(cfg->mount_port, 1);
	assert_int_equal(cfg->threads, 64);
	assert_int_equal(cfg->max_record, 2 * 1024 * 1024);
	assert_int_equal(cfg->max_connections, 100);
	assert_int_equal(cfg->max_connections_per_client, 10);
	assert_int_equal(cfg->receive_memory, 64 * 1024 * 1024);
	assert_int_equal(cfg->receive_memory_per_connection, 8 * 1024 * 1024);
	assert_int_equal(cfg->receive_memory_per_client, 16 * 1024 * 1024);
	assert_int_equal(cfg->metrics_connections, 32);
	assert_int_equal(cfg->metrics_connections_per_client, 2);
	assert_int_equal(cfg->metrics_timeout, 3);
	assert_int_equal(cfg->idle_timeout, 0);
	assert_int_equal(cfg->record_timeout, 5);
	assert_int_equal(cfg->reply_cache_entries, 0);
	assert_int_equal(cfg->reply_cache_size, 1024 * 1024);
	assert_int_equal(cfg->mount_list_entries, 7);
	assert_string_equal(cfg->state_dir, "/srv/state");
	assert_false(cfg->rpcbind);
	assert_string_equal(cfg->metrics_listen, "[::1]:9101");
	assert_int_equal(cfg->log_level, LOG_DEBUG);
	assert_int_equal(cfg->cache_size, 1024 * 1024 * 1024);
	assert_int_equal(cfg->cache_file_size, 256 * 1024 * 1024);
	assert_int_equal(cfg->cache_writeback_depth, 3);
	assert_int_equal(cfg->cache_sync_behind, 64 * 1024 * 1024);
	assert_string_equal(cfg->keytab, "/etc/nfs.keytab");
	assert_int_equal(cfg->gss_contexts, 100);
	assert_int_equal(cfg->gss_contexts_per_client, 9);
	assert_int_equal(cfg->gss_window, 32);
	assert_true(cfg->gss_refuse_unmapped);
	assert_int_equal(cfg->nexports, 3);
}

/* The three exports as every_key sets them, and their client rules. */
static void check_every_export_key(const struct config *cfg)
{
	const struct export_cfg *e = &cfg->exports[0];
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
	assert_int_equal(r->nsec, 2);
	assert_int_equal(r->sec[0], 390005);   /* krb5p */
	assert_int_equal(r->sec[1], 1);        /* sys */

	e = &cfg->exports[1];
	assert_int_equal(e->line, 41);
	assert_int_equal(e->write_mode, IO_MODE_BUFFERED);
	assert_int_equal(e->read_mode, IO_MODE_DONTCACHE);
	assert_int_equal(e->block, 0);
	assert_int_equal(e->clients[0].family, AF_UNSPEC);
	assert_int_equal(e->clients[0].squash, SQUASH_NONE);

	e = &cfg->exports[2];
	assert_int_equal(e->write_mode, IO_MODE_DIRECT);     /* write-through */
	assert_int_equal(e->read_mode, IO_MODE_DIRECT);      /* "cached" reads are direct ones */
}

static void test_every_key_set(void **state)
{
	struct scratch *s = *state;
	struct config cfg = load_ok(s, every_key);

	check_every_server_key(&cfg);
	check_every_export_key(&cfg);
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
		T(test_every_error_reported),
		T(test_errors_stop_at_a_bound),
		T(test_quoted_values),
		T(test_host_checks),
		T(test_dump_loads_back),
		T(test_exports_dir),
		T(test_sec_parsing),
		T(test_sec_errors),
		T(test_gss_keys),
		T(test_keytab_check),
		T(test_error_truncated_to_buffer),
		T(test_success_takes_back_everything),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
