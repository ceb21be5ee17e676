/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc --check -c FILE: 0 for a good conf; FILE:LINE: message and exit 2 for a bad one, and
 * FILE: message and exit 2 for an empty one. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Run the check on conf; its exit status, its output (stdout and stderr) in out. */
static int run_check(const struct itest *t, const char *conf, char *out, size_t outlen)
{
	char cmd[3 * PATH_MAX];
	size_t n;
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd), "'%s' --check -c '%s' 2>&1", t->exe, conf);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, outlen - 1, p);
	out[n] = '\0';
	status = pclose(p);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_conf),
		cmocka_unit_test(test_bad_port),
		cmocka_unit_test(test_missing_export_dir),
		cmocka_unit_test(test_bad_client_rule),
		cmocka_unit_test(test_empty_file),
		cmocka_unit_test(test_no_export),
	};
	return IT_MAIN("integration-check", tests);
}
