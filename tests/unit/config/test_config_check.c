/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What nfsd-uc --check and --dump-config stand on: every error of a file reported (not just the
 * first), quoted values, the checks against the host (state_dir's parent, the cache against the
 * host's memory, listen addresses) and a dump that loads back to the same configuration. One
 * binary with test_config.c, which lists the tests (conftest.h declares them). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf/config.h"
#include "conftest.h"

void test_every_error_reported(void **state)
{
	/* A refused header's keys are not checked (they would only repeat it), an export whose
	 * clients line failed is not also said to have none, and the reading goes on past each. */
	expect_error(*state,
		     "[server]\nport = x\nbogus = 1\n[sevrer]\nfoo = 1\n[export nowhere]\n"
		     "clients = *\n[export data]\nclients = *(xx)\n[cache]\nsize = 12Q\n",
		     "2: port = x is not a number\n"
		     "{D}/nfsd-uc.conf:3: unknown key 'bogus' in [server] (known: listen, port, "
		     "mount_port, threads, requests_per_connection, requests_per_ring, "
		     "blocking_threads, max_record, connections, connections_per_client, "
		     "receive_memory, receive_memory_per_connection, receive_memory_per_client, "
		     "idle_timeout, record_timeout, "
		     "reply_cache_entries, reply_cache_size, mount_list_entries, state_dir, "
		     "exports_dir, rpcbind, log_level, keytab, gss_contexts, gss_contexts_per_client, "
		     "gss_window, gss_unmapped, gss_crypto)\n"
		     "{D}/nfsd-uc.conf:4: unknown section [sevrer] (did you mean [server]? expected "
		     "[server], [cache], [metrics], [lock] or [export PATH])\n"
		     "{D}/nfsd-uc.conf:6: export path {D}/nowhere does not exist\n"
		     "{D}/nfsd-uc.conf:9: clients: *: unknown option 'xx' (known: rw, ro, root_squash, "
		     "no_root_squash, all_squash, no_all_squash, anonuid=N, anongid=N, secure, "
		     "insecure, subtree_check, no_subtree_check, sec=FLAVOR:...)\n"
		     "{D}/nfsd-uc.conf:11: size = 12Q is not a size (a number with an optional K, M "
		     "or G suffix)");
}

void test_errors_stop_at_a_bound(void **state)
{
	struct scratch *s = *state;
	char text[4096] = "[server]\n", err[16384];
	for (int i = 0; i < 40; i++)
		strcat(text, "junk\n");
	struct config cfg;
	assert_int_equal(scratch_load(s, text, &cfg, err, sizeof err), -1);
	unsigned lines = 1;
	for (const char *c = err; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 21);   /* 20 errors, then why the rest was not read */
	assert_non_null(strstr(err, ":21: missing '='"));
	assert_null(strstr(err, ":22:"));
	assert_non_null(strstr(err, "too many errors: the rest of the file was not read"));
}

void test_quoted_values(void **state)
{
	struct scratch *s = *state;
	struct config cfg = load_ok(s, "[server]\nstate_dir = \"st\"\nlog_level = 'debug'\n"
				       "[export data]\nclients = \"*(rw)\"\n");
	char want[PATH_MAX + 8];
	snprintf(want, sizeof want, "%s/st", s->dir);
	assert_string_equal(cfg.state_dir, want);
	assert_true(cfg.exports[0].clients[0].rw);
	config_free(&cfg);
	expect_error(s, "[server]\nstate_dir = \"st\n", "2: unbalanced quote in '\"st'");
	expect_error(s, "[server]\nstate_dir = st'\n", "2: unbalanced quote in 'st''");
	expect_error(s, "[server]\nstate_dir = \"st'\n", "2: unbalanced quote in '\"st''");
}

static int check_host(const struct scratch *s, const char *text, bool all, char *err,
		      size_t len)
{
	struct config cfg = load_ok(s, text);
	err[0] = '\0';
	int n = config_check_host(&cfg, s->conf, all ? CFG_CHECK_ALL : CFG_CHECK_STATE_DIR, err,
				  len);
	config_free(&cfg);
	return n;
}

void test_host_checks(void **state)
{
	struct scratch *s = *state;
	char err[2048], want[3 * PATH_MAX + 256];
	/* state_dir itself is made at start; the directories above it are not */
	assert_int_equal(check_host(s, "[server]\nstate_dir = st\n", true, err, sizeof err), 0);
	assert_int_equal(check_host(s, "[server]\n\nstate_dir = no/st\n", true, err, sizeof err), 1);
	snprintf(want, sizeof want, "%s:3: state_dir %s/no/st cannot be made: its parent %s/no does "
		 "not exist", s->conf, s->dir, s->dir);
	assert_string_equal(err, want);
	assert_int_equal(check_host(s, "[server]\nstate_dir = file\n", true, err, sizeof err), 1);
	assert_non_null(strstr(err, ":2: state_dir "));
	assert_non_null(strstr(err, "/file is not a directory"));
	/* more memory than any test machine has */
	assert_int_equal(check_host(s, "[server]\nstate_dir = st\n[cache]\nsize = 1000G\n", true,
				    err, sizeof err), 1);
	assert_non_null(strstr(err, ":4: [cache] size (1024000 MiB) and [server] receive_memory "
			       "(512 MiB) together are more than this host's memory ("));
	/* TEST-NET-1 (RFC 5737): no host has it */
	const char *net = "[server]\nstate_dir = st\nlisten = 127.0.0.1 192.0.2.1\n";
	assert_int_equal(check_host(s, net, true, err, sizeof err), 1);
	assert_non_null(strstr(err, ":3: listen: 192.0.2.1 is not an address of this host"));
	assert_int_equal(check_host(s, net, false, err, sizeof err), 0);   /* a start: the bind says */
	assert_int_equal(check_host(s, "[server]\nstate_dir = st\n[cache]\nsize = 1000G\n", false,
				    err, sizeof err), 0);   /* a start: a warning only (main.c) */
	/* all of them, one line each */
	assert_int_equal(check_host(s, "[server]\nstate_dir = no/st\nlisten = 192.0.2.1\n"
				       "[cache]\nsize = 1000G\n", true, err, sizeof err), 3);
	assert_non_null(strchr(strchr(err, '\n') + 1, '\n'));
}

/* What an administrator reads in the dump loads back to the same configuration. */
void test_dump_loads_back(void **state)
{
	struct scratch *s = *state;
	struct config a = load_ok(s, "[server]\nlisten = 127.0.0.1 ::1\nport = 3049\n"
				     "state_dir = st\nrpcbind = own\nlog_level = warning\n"
				     "max_record = 2M\n[cache]\nsize = 3G\n[metrics]\n"
				     "listen = 127.0.0.1:9101\n[lock]\nport = 0\n"
				     "[export data]\nclients = 10.0.0.0/8(rw,no_root_squash) "
				     "::1(ro,all_squash,anonuid=7,insecure) *.example.com "
				     "*(ro,subtree_check)\nwrite_mode = direct\nblock = 64K\n"
				     "[export data2]\nclients = *\nfsid = 77\n");
	char *first = dump_of(&a);
	assert_int_equal(scratch_write(s, "nfsd-uc.conf", first), 0);
	struct config b;
	char err[2048] = "";
	if (config_load(s->conf, &b, err, sizeof err) < 0)
		fail_msg("the dump does not load: %s", err);
	char *second = dump_of(&b);
	assert_string_equal(first, second);
	assert_non_null(strstr(first, "\nport = 3049\n"));
	assert_non_null(strstr(first, "\nlisten = 127.0.0.1:9101\n"));
	assert_non_null(strstr(first, "\nreply_cache_entries = 16384\n"));   /* a default */
	assert_non_null(strstr(first, "clients = 10.0.0.0/8(rw,no_root_squash,anonuid=65534,"
				      "anongid=65534,secure,no_subtree_check,sec=sys) ::1(ro,all_squash,"
				      "anonuid=7,anongid=65534,insecure,no_subtree_check,sec=sys) "
				      "*.example.com(ro,root_squash,"));
	assert_int_equal(b.port, 3049);
	assert_int_equal(b.nexports, 2);
	assert_int_equal(b.exports[1].fsid, 77);
	assert_int_equal(b.exports[0].fsid, a.exports[0].fsid);
	assert_int_equal(b.exports[0].block, 64 * 1024);
	free(first);
	free(second);
	config_free(&a);
	config_free(&b);
}

/* exports_dir (default nfsd-uc.d beside the file), as /etc/exports.d: its *.conf files in name
 * order, [export] sections only; a package or a script adds an export without editing the
 * main file. */
void test_exports_dir(void **state)
{
	struct scratch *s = *state;
	char err[4096], want[4 * PATH_MAX];
	assert_int_equal(scratch_write(s, "nfsd-uc.d", ""), 0);   /* a file there: refused */
	struct config cfg;
	assert_int_equal(scratch_load(s, "[export data]\nclients = *\n", &cfg, err, sizeof err), -1);
	assert_non_null(strstr(err, "nfsd-uc.d: Not a directory"));
	char d[PATH_MAX + 16];
	snprintf(d, sizeof d, "%s/nfsd-uc.d", s->dir);
	assert_int_equal(remove(d), 0);
	assert_int_equal(mkdir(d, 0755), 0);
	snprintf(want, sizeof want, "[export %s/data3]\nclients = 10.0.0.1(rw)\n", s->dir);
	assert_int_equal(scratch_write(s, "nfsd-uc.d/20-b.conf", want), 0);
	snprintf(want, sizeof want, "# two\n[export %s/data2]\nclients = *\n", s->dir);
	assert_int_equal(scratch_write(s, "nfsd-uc.d/10-a.conf", want), 0);
	assert_int_equal(scratch_write(s, "nfsd-uc.d/.30-hidden.conf", "junk\n"), 0);
	assert_int_equal(scratch_write(s, "nfsd-uc.d/README", "junk\n"), 0);
	cfg = load_ok(s, "[export data]\nclients = *\n");
	assert_int_equal(cfg.nexports, 3);
	assert_non_null(strstr(cfg.exports[1].path, "/data2"));
	assert_non_null(strstr(cfg.exports[2].path, "/data3"));
	assert_int_equal(cfg.exports[2].line, 1);
	assert_true(cfg.exports[2].clients[0].rw);
	/* the dump shows them, commented out: loaded again with the same directory, the same */
	char *dump = dump_of(&cfg);
	snprintf(want, sizeof want, "\n# from %s/nfsd-uc.d/10-a.conf (exports_dir):\n# [export %s/data2]\n",
		 s->dir, s->dir);
	assert_non_null(strstr(dump, want));
	assert_int_equal(scratch_write(s, "nfsd-uc.conf", dump), 0);
	struct config again;
	assert_int_equal(config_load(s->conf, &again, err, sizeof err), 0);
	assert_int_equal(again.nexports, 3);
	free(dump);
	config_free(&again);
	config_free(&cfg);
	/* only exports there; a duplicate names both files */
	assert_int_equal(scratch_write(s, "nfsd-uc.d/30-c.conf", "\n[server]\nport = 1\n"), 0);
	snprintf(want, sizeof want, "%s/nfsd-uc.d/30-c.conf:2: [server] in a file of exports_dir: "
		 "only [export PATH] sections may be there", s->dir);
	assert_int_equal(scratch_load(s, "[export data]\nclients = *\n", &cfg, err, sizeof err), -1);
	assert_string_equal(err, want);
	snprintf(want, sizeof want, "[export %s/data]\nclients = *\n", s->dir);
	assert_int_equal(scratch_write(s, "nfsd-uc.d/30-c.conf", want), 0);
	assert_int_equal(scratch_load(s, "[export data]\nclients = *\n", &cfg, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s/nfsd-uc.d/30-c.conf:1: duplicate export %s/data (first at "
		 "%s:1)", s->dir, s->dir, s->conf);
	assert_string_equal(err, want);
}
