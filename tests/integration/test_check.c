/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc --check -c FILE: 0 for a good conf; FILE:LINE: message and exit 2 for a bad one (every
 * error of it, each at the journal's error priority when stderr is the journal), and FILE:
 * message and exit 2 for an empty one; --check --reload, --dump-config, and a start on a bad
 * file ending with exit 2 (what the unit's RestartPreventExitStatus=2 counts on). */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Run the daemon with OPTS on conf, under sh (PREFIX before it, e.g. an assignment); its exit
 * status, its output (stdout and stderr) in out. */
static int run_daemon(const struct itest *t, const char *prefix, const char *opts,
		      const char *conf, char *out, size_t outlen)
{
	char cmd[3 * PATH_MAX];
	size_t n;
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd), "%s exec '%s' %s -c '%s' 2>&1", prefix, t->exe, opts, conf);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, outlen - 1, p);
	out[n] = '\0';
	status = pclose(p);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int run_check(const struct itest *t, const char *conf, char *out, size_t outlen)
{
	return run_daemon(t, "", "--check", conf, out, outlen);
}

static void write_conf(const struct itest *t, const char *name, const char *text, char *path,
                       size_t pathlen)
{
	FILE *f;

	snprintf(path, pathlen, "%s/%s", t->dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Expect exit 2 and a message that starts with FILE:LINE: */
static void expect_error_at(const struct itest *t, const char *name, const char *text, int line)
{
	char path[PATH_MAX + 64], out[4096], where[PATH_MAX + 80];
	int rc;

	write_conf(t, name, text, path, sizeof(path));
	rc = run_check(t, path, out, sizeof(out));
	snprintf(where, sizeof(where), "%s:%d:", path, line);
	if (rc != 2 || strstr(out, where) == NULL)
		fail_msg("--check of %s: exit %d, output \"%s\"; want exit 2 and \"%s ...\"", name, rc,
		         out, where);
}

static void test_good_conf(void **state)
{
	struct itest *t = *state;
	char out[4096];
	int rc = run_check(t, t->conf, out, sizeof(out));

	if (rc != 0)
		fail_msg("--check of the harness's conf: exit %d, output \"%s\"", rc, out);
}

static void test_bad_port(void **state)
{
	expect_error_at(*state, "bad-port.conf",
	                "[server]\nlisten = 127.0.0.1\nport = not-a-number\n", 3);
	expect_error_at(*state, "big-port.conf",
	                "# comment\n[server]\nport = 70000\n", 3);
}

static void test_missing_export_dir(void **state)
{
	expect_error_at(*state, "missing-export.conf",
	                "[server]\nport = 2049\n\n[export /nonexistent/nfsd-uc-it]\n"
	                "clients = 127.0.0.1(rw)\n", 4);
}

static void test_bad_client_rule(void **state)
{
	struct itest *t = *state;
	char text[PATH_MAX + 128];

	snprintf(text, sizeof(text), "[server]\nport = 2049\n[export %s]\n"
	         "clients = 127.0.0.1(rw,no_such_option)\n", t->exports[EXP_RW]);
	expect_error_at(t, "bad-client.conf", text, 4);
	snprintf(text, sizeof(text), "[server]\nport = 2049\n[export %s]\n"
	         "clients = 300.1.2.3(rw)\n", t->exports[EXP_RW]);
	expect_error_at(t, "bad-address.conf", text, 4);
}

/* What an editor's truncate-then-write leaves: refused, with the file's name. */
static void test_empty_file(void **state)
{
	struct itest *t = *state;
	static const char *const texts[] = {"", "\n\n", "# nothing but comments\n\n# here\n"};
	char path[PATH_MAX + 64], out[4096], where[PATH_MAX + 80];

	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		write_conf(t, "empty.conf", texts[i], path, sizeof(path));
		int rc = run_check(t, path, out, sizeof(out));
		snprintf(where, sizeof(where), "%s: ", path);
		if (rc != 2 || strncmp(out, where, strlen(where)) != 0 || !strstr(out, "empty"))
			fail_msg("--check of \"%s\": exit %d, output \"%s\"; want exit 2 and \"%s... "
			         "empty ...\"", texts[i], rc, out, where);
	}
}

/* Settings but no export: it loads (an installed conf exports nothing yet), and --check says
 * that a reload would refuse it. */
static void test_no_export(void **state)
{
	struct itest *t = *state;
	char path[PATH_MAX + 64], out[4096];

	write_conf(t, "noexport.conf", "[server]\nport = 2049\n", path, sizeof(path));
	int rc = run_check(t, path, out, sizeof(out));
	if (rc != 0 || !strstr(out, "no [export] section") || !strstr(out, "reload"))
		fail_msg("--check of a conf without an export: exit %d, output \"%s\"", rc, out);
}

/* Every error of the file, not just the first: an administrator fixes them in one pass. */
static void test_every_error(void **state)
{
	struct itest *t = *state;
	char path[PATH_MAX + 64], out[4096], a[PATH_MAX + 80], b[PATH_MAX + 80];

	write_conf(t, "two.conf", "[server]\nport = x\n[cache]\n\nsize = 12Q\n", path, sizeof(path));
	int rc = run_check(t, path, out, sizeof(out));
	snprintf(a, sizeof(a), "%s:2: port = x", path);
	snprintf(b, sizeof(b), "\n%s:5: size = 12Q", path);
	if (rc != 2 || strncmp(out, a, strlen(a)) != 0 || !strstr(out, b))
		fail_msg("--check of a conf with two errors: exit %d, output \"%s\"", rc, out);
}

/* Under systemd stderr is the journal's stream (JOURNAL_STREAM names it): each line carries
 * <3>, so `journalctl -p warning` shows why the service did not start. */
static void test_errors_at_journal_priority(void **state)
{
	struct itest *t = *state;
	char path[PATH_MAX + 64], out[4096], want[PATH_MAX + 128];

	write_conf(t, "two.conf", "[server]\nport = x\nprot = 1\n", path, sizeof(path));
	int rc = run_daemon(t, "exec 2>&1; export JOURNAL_STREAM=$(stat -L -c %d:%i /dev/stderr);",
			    "--check", path,
			    out, sizeof(out));
	snprintf(want, sizeof(want), "<3>%s:2: port = x", path);
	if (rc != 2 || strncmp(out, want, strlen(want)) != 0)
		fail_msg("--check under the journal: exit %d, output \"%s\"; want \"%s...\"", rc, out,
			 want);
	snprintf(want, sizeof(want), "\n<3>%s:3: unknown key 'prot'", path);
	assert_non_null(strstr(out, want));
	/* and without the journal, no priority */
	rc = run_check(t, path, out, sizeof(out));
	assert_int_equal(rc, 2);
	assert_null(strstr(out, "<3>"));
}

/* systemctl reload runs --check --reload first: a file a reload would refuse fails it. */
static void test_check_for_reload(void **state)
{
	struct itest *t = *state;
	char path[PATH_MAX + 64], out[4096];

	write_conf(t, "noexport.conf", "[server]\nport = 2049\n", path, sizeof(path));
	int rc = run_daemon(t, "", "--check --reload", path, out, sizeof(out));
	if (rc != 2 || !strstr(out, "no [export] section"))
		fail_msg("--check --reload of a conf without an export: exit %d, output \"%s\"", rc,
			 out);
	assert_int_equal(run_daemon(t, "", "--check --reload", t->conf, out, sizeof(out)), 0);
}

/* The checks a parser cannot make: a listen address this host does not have, a state_dir
 * that cannot be made, a cache larger than the host's memory. All three reported. */
static void test_host_problems(void **state)
{
	struct itest *t = *state;
	char path[PATH_MAX + 64], out[4096];

	write_conf(t, "host.conf", "[server]\nlisten = 192.0.2.1\nstate_dir = /nonexistent/a/b\n"
		   "[cache]\nsize = 1000G\n", path, sizeof(path));
	int rc = run_check(t, path, out, sizeof(out));
	if (rc != 2 || !strstr(out, ":2: listen: 192.0.2.1 is not an address of this host") ||
	    !strstr(out, ":3: state_dir /nonexistent/a/b cannot be made") ||
	    !strstr(out, ":5: [cache] size"))
		fail_msg("--check of host problems: exit %d, output \"%s\"", rc, out);
}

/* The dump is a file the daemon loads, with the harness's settings and the defaults in it. */
static void test_dump_config(void **state)
{
	struct itest *t = *state;
	char out[16384], path[PATH_MAX + 64], want[PATH_MAX + 64];

	assert_int_equal(run_daemon(t, "", "--dump-config", t->conf, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "\nport = %u\n", t->port);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "\n[export %s]\n", t->exports[EXP_RW]);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "\nidle_timeout = 360\n"));   /* a default, shown */
	write_conf(t, "dumped.conf", out, path, sizeof(path));
	char again[16384];
	assert_int_equal(run_daemon(t, "", "--dump-config", path, again, sizeof(again)), 0);
	assert_string_equal(out, again);
}

/* A start on a bad file exits 2 at once: the unit does not restart it in a loop. */
static void test_bad_start_exits_2(void **state)
{
	struct itest *t = *state;
	char path[PATH_MAX + 64], out[4096];

	write_conf(t, "bad.conf", "[server]\nport = x\n", path, sizeof(path));
	int rc = run_daemon(t, "", "", path, out, sizeof(out));
	if (rc != 2 || !strstr(out, ":2: port = x"))
		fail_msg("start on a bad conf: exit %d, output \"%s\"", rc, out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_conf),
		cmocka_unit_test(test_bad_port),
		cmocka_unit_test(test_missing_export_dir),
		cmocka_unit_test(test_bad_client_rule),
		cmocka_unit_test(test_empty_file),
		cmocka_unit_test(test_no_export),
		cmocka_unit_test(test_every_error),
		cmocka_unit_test(test_errors_at_journal_priority),
		cmocka_unit_test(test_check_for_reload),
		cmocka_unit_test(test_host_problems),
		cmocka_unit_test(test_dump_config),
		cmocka_unit_test(test_bad_start_exits_2),
	};
	return IT_MAIN("integration-check", tests);
}
