/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What nfsd-uc.conf says about Kerberos (issue 37): a client rule's sec= (its flavors in their
 * order, the default, the spellings exports(5) takes, the mistakes and their messages, the dump),
 * the [server] keys keytab, gss_contexts, gss_contexts_per_client and gss_window (defaults,
 * ranges, the dump), and --check's look for the keytab. One binary with test_config.c, which
 * lists the tests (conftest.h declares them). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "conftest.h"
#include "rpc/oncrpc.h"

/* rule's flavors are exactly want[0..n). */
static void assert_sec(const struct client_rule *r, const uint32_t *want, unsigned n)
{
	assert_int_equal(r->nsec, n);
	assert_memory_equal(r->sec, want, n * sizeof *want);
}

/* sec= keeps the order written (MNT's order of preference), replaces the default (sys), takes
 * exportfs's other spellings (unix, null) and keeps a flavor named twice at its first place;
 * the other options around it still apply; the dump spells it back and loads to the same. */
void test_sec_parsing(void **state)
{
	struct scratch *s = *state;
	struct config cfg = load_ok(s, "[export data]\nclients = 10.0.0.1(rw,sec=krb5p:krb5i:krb5:sys,"
				       "no_root_squash) 10.0.0.2(sec=krb5:none) 10.0.0.3(sec=unix:null) "
				       "10.0.0.4(sec=krb5:sys:krb5:unix) localhost(sec=krb5i) *\n");
	const struct export_cfg *e = &cfg.exports[0];
	assert_sec(&e->clients[0], (uint32_t[]){RPC_AUTH_KRB5P, RPC_AUTH_KRB5I, RPC_AUTH_KRB5,
						 RPC_AUTH_SYS}, 4);
	assert_true(e->clients[0].rw);
	assert_int_equal(e->clients[0].squash, SQUASH_NONE);
	assert_sec(&e->clients[1], (uint32_t[]){RPC_AUTH_KRB5, RPC_AUTH_NONE}, 2);
	assert_sec(&e->clients[2], (uint32_t[]){RPC_AUTH_SYS, RPC_AUTH_NONE}, 2);
	assert_sec(&e->clients[3], (uint32_t[]){RPC_AUTH_KRB5, RPC_AUTH_SYS}, 2);
	/* a host name's rules (one per address) each carry the entry's sec= */
	for (size_t i = 4; i + 1 < e->nclients; i++)
		assert_sec(&e->clients[i], (uint32_t[]){RPC_AUTH_KRB5I}, 1);
	assert_sec(&e->clients[e->nclients - 1], (uint32_t[]){RPC_AUTH_SYS}, 1);   /* default */

	char *first = dump_of(&cfg);
	assert_non_null(strstr(first, "10.0.0.1(rw,no_root_squash,anonuid=65534,anongid=65534,"
				      "secure,no_subtree_check,sec=krb5p:krb5i:krb5:sys) "));
	assert_non_null(strstr(first, ",sec=krb5:none) 10.0.0.3("));
	assert_non_null(strstr(first, ",sec=sys:none) 10.0.0.4("));
	assert_non_null(strstr(first, ",sec=krb5:sys) "));
	assert_non_null(strstr(first, "*(ro,root_squash,anonuid=65534,anongid=65534,secure,"
				      "no_subtree_check,sec=sys)\n"));
	assert_int_equal(scratch_write(s, "nfsd-uc.conf", first), 0);
	struct config again;
	char err[2048] = "";
	if (config_load(s->conf, &again, err, sizeof err) < 0)
		fail_msg("the dump does not load: %s", err);
	char *second = dump_of(&again);
	assert_string_equal(first, second);
	free(first);
	free(second);
	config_free(&again);
	config_free(&cfg);
	assert_string_equal(config_flavor_name(RPC_AUTH_KRB5I), "krb5i");
	assert_string_equal(config_flavor_name(RPC_AUTH_NONE), "none");
	assert_null(config_flavor_name(390006));
}

void test_sec_errors(void **state)
{
	static const struct { const char *text, *want; } cases[] = {
		{"[export data]\nclients = *(sec=krb6)\n",
		 "2: clients: *: unknown flavor 'krb6' in 'sec=krb6' (did you mean 'krb5'? known: sys, "
		 "krb5, krb5i, krb5p, none)"},
		{"[export data]\nclients = 10.0.0.1(rw,sec=sys:KRB5P)\n",
		 "2: clients: 10.0.0.1: unknown flavor 'KRB5P' in 'sec=sys:KRB5P' (did you mean "
		 "'krb5p'? known: sys, krb5, krb5i, krb5p, none)"},
		{"[export data]\nclients = *(sec=kerberos)\n",
		 "2: clients: *: unknown flavor 'kerberos' in 'sec=kerberos' (known: sys, krb5, krb5i, "
		 "krb5p, none)"},
		{"[export data]\nclients = *(sec=)\n",
		 "2: clients: *: empty flavor in 'sec=' (known: sys, krb5, krb5i, krb5p, none, "
		 "separated by ':')"},
		{"[export data]\nclients = *(sec=sys::krb5)\n",
		 "2: clients: *: empty flavor in 'sec=sys::krb5' (known: sys, krb5, krb5i, krb5p, none, "
		 "separated by ':')"},
		{"[export data]\nclients = *(sec=sys,ro,sec=krb5p,rw)\n",
		 "2: clients: *: sec= given twice (options for some flavors only, as exports(5)'s "
		 "sec=sys,ro,sec=krb5p,rw, are not supported: one sec= list per entry)"},
		{"[export data]\nclients = *(sec=sys,se=krb5)\n",
		 "2: clients: *: unknown option 'se=krb5' (did you mean 'sec'? known: rw, ro, "
		 "root_squash, no_root_squash, all_squash, no_all_squash, anonuid=N, anongid=N, "
		 "secure, insecure, subtree_check, no_subtree_check, sec=FLAVOR:...)"},
		/* every one reported, each with its line */
		{"[export data]\nclients = *(sec=x)\n[export data2]\nclients = 10.0.0.1(sec=krb5:y)\n",
		 "2: clients: *: unknown flavor 'x' in 'sec=x' (known: sys, krb5, krb5i, krb5p, none)\n"
		 "{D}/nfsd-uc.conf:4: clients: 10.0.0.1: unknown flavor 'y' in 'sec=krb5:y' (known: "
		 "sys, krb5, krb5i, krb5p, none)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_error(*state, cases[i].text, cases[i].want);
}

/* keytab, gss_contexts, gss_contexts_per_client, gss_window, gss_unmapped, gss_crypto:
 * defaults, bounds, errors, dump. */
void test_gss_keys(void **state)
{
	struct scratch *s = *state;
	struct config cfg = load_ok(s, "[server]\n");
	assert_string_equal(cfg.keytab, "/etc/krb5.keytab");
	assert_int_equal(cfg.gss_contexts, 8192);
	assert_int_equal(cfg.gss_contexts_per_client, 256);
	assert_int_equal(cfg.gss_window, 128);
	assert_int_equal(cfg.line.keytab, 0);
	char *dump = dump_of(&cfg);
	assert_false(cfg.gss_refuse_unmapped);
	assert_false(cfg.gss_crypto_gssapi);
	assert_non_null(strstr(dump, "\nkeytab = /etc/krb5.keytab\ngss_contexts = 8192\n"
				     "gss_contexts_per_client = 256\ngss_window = 128\n"
				     "gss_unmapped = anonymous\ngss_crypto = openssl\n"));
	free(dump);
	config_free(&cfg);

	/* the bounds themselves; a relative keytab is beside the file */
	cfg = load_ok(s, "[server]\n\nkeytab = nfs.keytab\ngss_contexts = 1\n"
			 "gss_contexts_per_client = 1048576\ngss_window = 1\n");
	char want[PATH_MAX + 16];
	snprintf(want, sizeof want, "%s/nfs.keytab", s->dir);
	assert_string_equal(cfg.keytab, want);
	assert_int_equal(cfg.line.keytab, 3);
	assert_int_equal(cfg.gss_contexts, 1);
	assert_int_equal(cfg.gss_contexts_per_client, 1048576);
	assert_int_equal(cfg.gss_window, 1);
	config_free(&cfg);
	cfg = load_ok(s, "[server]\ngss_contexts = 1048576\ngss_contexts_per_client = 1\n"
			 "gss_window = 1024\n");
	assert_int_equal(cfg.gss_contexts, 1048576);
	assert_int_equal(cfg.gss_window, 1024);
	config_free(&cfg);
	cfg = load_ok(s, "[server]\ngss_unmapped = refuse\ngss_crypto = GSSAPI\n");
	assert_true(cfg.gss_refuse_unmapped);
	assert_true(cfg.gss_crypto_gssapi);
	dump = dump_of(&cfg);
	assert_non_null(strstr(dump, "\ngss_crypto = gssapi\n"));
	free(dump);
	config_free(&cfg);

	static const struct { const char *text, *want; } cases[] = {
		{"[server]\ngss_window = 0\n", "2: gss_window = 0 is out of range (1..1024)"},
		{"[server]\ngss_window = 1025\n", "2: gss_window = 1025 is out of range (1..1024)"},
		{"[server]\ngss_contexts = 0\n", "2: gss_contexts = 0 is out of range (1..1048576)"},
		{"[server]\ngss_contexts = 1048577\n",
		 "2: gss_contexts = 1048577 is out of range (1..1048576)"},
		{"[server]\ngss_contexts_per_client = 0\n",
		 "2: gss_contexts_per_client = 0 is out of range (1..1048576)"},
		{"[server]\ngss_contexts = many\n", "2: gss_contexts = many is not a number"},
		{"[server]\nkeytab =\n", "2: key 'keytab' has no value"},
		{"[server]\nkeytab = a\nkeytab = b\n", "3: duplicate key 'keytab' (first set on line 2)"},
		{"[server]\ngss_unmapped = nobody\n",
		 "2: gss_unmapped = nobody is not anonymous or refuse"},
		{"[server]\ngss_crypto = mit\n", "2: gss_crypto = mit is not openssl or gssapi"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_error(s, cases[i].text, cases[i].want);
}

static int check_keytab(const struct scratch *s, const char *text, unsigned checks, char *err,
			size_t len)
{
	struct config cfg = load_ok(s, text);
	err[0] = '\0';
	int n = config_check_host(&cfg, s->conf, checks, err, len);
	config_free(&cfg);
	return n;
}

/* --check: a missing keytab is an error only when some rule allows a krb5 flavor, and then it
 * says which file and which export. */
void test_keytab_check(void **state)
{
	struct scratch *s = *state;
	char err[2048], want[3 * PATH_MAX + 256];
	/* no rule wants Kerberos: a host without a keytab is fine */
	assert_int_equal(check_keytab(s, "[server]\nstate_dir = st\nkeytab = nokeytab\n"
					 "[export data]\nclients = *(sec=sys:none)\n", CFG_CHECK_ALL,
				      err, sizeof err), 0);
	assert_string_equal(err, "");
	const char *krb = "[server]\nstate_dir = st\nkeytab = nokeytab\n[export data]\n"
			  "clients = 10.0.0.1 *(sec=sys:krb5i:krb5p)\n";
	assert_int_equal(check_keytab(s, krb, CFG_CHECK_ALL, err, sizeof err), 1);
	snprintf(want, sizeof want, "%s:3: keytab %s/nokeytab: No such file or directory (export "
		 "%s/data allows sec=krb5i)", s->conf, s->dir, s->dir);
	assert_string_equal(err, want);
	assert_int_equal(check_keytab(s, krb, CFG_CHECK_KEYTAB, err, sizeof err), 1);
	/* a start does not look (the daemon's GSS set-up says) */
	assert_int_equal(check_keytab(s, krb, CFG_CHECK_STATE_DIR, err, sizeof err), 0);
	/* a regular file is taken (whether it holds the right keys is the KDC's business) */
	assert_int_equal(check_keytab(s, "[server]\nkeytab = file\n[export data]\n"
					 "clients = *(sec=krb5)\n", CFG_CHECK_KEYTAB, err, sizeof err), 0);
	assert_int_equal(check_keytab(s, "[server]\nkeytab = data2\n[export data]\nclients = *\n"
					 "[export data2]\nclients = *(sec=krb5p)\n", CFG_CHECK_KEYTAB,
				      err, sizeof err), 1);
	snprintf(want, sizeof want, "%s:2: keytab %s/data2 is not a regular file (export %s/data2 "
		 "allows sec=krb5p)", s->conf, s->dir, s->dir);
	assert_string_equal(err, want);
}
