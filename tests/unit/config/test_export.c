/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Export access rules: which client rule a peer gets, how its credential is squashed (AUTH_SYS,
 * AUTH_NONE, RPCSEC_GSS), which flavors its sec= lets in, and the lookups MOUNT and the
 * file-handle code use. Rules come from conf text, as users write them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "conf/config.h"
#include "conftest.h"
#include "conf/export.h"

struct fixture {
	struct scratch s;
	struct config cfg;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	if (!f || scratch_new(&f->s) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	config_free(&f->cfg);
	scratch_delete(&f->s);
	free(f);
	return 0;
}

/* The export "data" with the given clients line. */
static const struct export_cfg *export_with(void **state, const char *clients)
{
	struct fixture *f = *state;
	char text[1024], err[512];
	config_free(&f->cfg);
	snprintf(text, sizeof text, "[export data]\nclients = %s\n", clients);
	int rc = scratch_load(&f->s, text, &f->cfg, err, sizeof err);
	if (rc != 0)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	return &f->cfg.exports[0];
}

static struct sockaddr_storage peer(const char *addr)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(800);
	} else {
		assert_int_equal(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(800);
	}
	return ss;
}

/* Index of the rule ADDR gets, or -1 when refused. */
static int rule_of(const struct export_cfg *e, const char *addr)
{
	struct sockaddr_storage ss = peer(addr);
	const struct client_rule *r = export_match(e, (const struct sockaddr *)&ss);
	return r ? (int)(r - e->clients) : -1;
}

/* ---- matching --------------------------------------------------------------------------- */

static void test_match_ipv4_host_and_networks(void **state)
{
	const struct export_cfg *e = export_with(state, "127.0.0.1/32(rw) 10.0.0.0/8 192.168.0.0/23");
	assert_int_equal(rule_of(e, "127.0.0.1"), 0);
	assert_int_equal(rule_of(e, "127.0.0.2"), -1);
	assert_int_equal(rule_of(e, "10.0.0.0"), 1);
	assert_int_equal(rule_of(e, "10.255.255.255"), 1);
	assert_int_equal(rule_of(e, "11.0.0.1"), -1);
	assert_int_equal(rule_of(e, "9.255.255.255"), -1);
	/* A prefix that does not end on a byte boundary. */
	assert_int_equal(rule_of(e, "192.168.1.255"), 2);
	assert_int_equal(rule_of(e, "192.168.2.0"), -1);
	/* An IPv4 rule never matches a native IPv6 peer. */
	assert_int_equal(rule_of(e, "::1"), -1);
	assert_int_equal(rule_of(e, "::7f00:1"), -1);   /* IPv4-compatible, not mapped */
}

static void test_match_host_bits_in_rule_ignored(void **state)
{
	/* exports(5) writes networks either way; the bits past the prefix do not count. */
	const struct export_cfg *e = export_with(state, "10.1.2.3/16");
	assert_int_equal(rule_of(e, "10.1.200.9"), 0);
	assert_int_equal(rule_of(e, "10.2.2.3"), -1);
}

static void test_match_slash_zero_and_star(void **state)
{
	const struct export_cfg *e = export_with(state, "0.0.0.0/0");
	assert_int_equal(rule_of(e, "1.2.3.4"), 0);
	assert_int_equal(rule_of(e, "255.255.255.255"), 0);
	assert_int_equal(rule_of(e, "::ffff:1.2.3.4"), 0);
	assert_int_equal(rule_of(e, "2001:db8::1"), -1);

	e = export_with(state, "::/0");
	assert_int_equal(rule_of(e, "2001:db8::1"), 0);
	assert_int_equal(rule_of(e, "::1"), 0);
	assert_int_equal(rule_of(e, "1.2.3.4"), -1);

	e = export_with(state, "*");
	assert_int_equal(rule_of(e, "1.2.3.4"), 0);
	assert_int_equal(rule_of(e, "2001:db8::1"), 0);
	assert_int_equal(rule_of(e, "::ffff:10.0.0.1"), 0);
}

static void test_match_ipv6(void **state)
{
	const struct export_cfg *e = export_with(state, "::1 2001:db8:1::/48(rw) fd00::/7");
	assert_int_equal(rule_of(e, "::1"), 0);
	assert_int_equal(rule_of(e, "::2"), -1);
	assert_int_equal(rule_of(e, "2001:db8:1:ffff::5"), 1);
	assert_int_equal(rule_of(e, "2001:db8:2::5"), -1);
	assert_int_equal(rule_of(e, "fd12:3456::1"), 2);
	assert_int_equal(rule_of(e, "fc00::1"), 2);
	assert_int_equal(rule_of(e, "fe00::1"), -1);
	assert_int_equal(rule_of(e, "127.0.0.1"), -1);
}

static void test_match_mapped_ipv4(void **state)
{
	/* A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d. */
	const struct export_cfg *e = export_with(state, "127.0.0.1(rw) 10.0.0.0/8");
	assert_int_equal(rule_of(e, "::ffff:127.0.0.1"), 0);
	assert_int_equal(rule_of(e, "::ffff:10.9.8.7"), 1);
	assert_int_equal(rule_of(e, "::ffff:11.0.0.1"), -1);

	/* A rule written in mapped form means the IPv4 network, for either kind of peer. */
	e = export_with(state, "::ffff:10.0.0.0/104");
	assert_int_equal(e->clients[0].family, AF_INET);
	assert_int_equal(e->clients[0].prefix, 8);
	assert_int_equal(rule_of(e, "10.1.1.1"), 0);
	assert_int_equal(rule_of(e, "::ffff:10.1.1.1"), 0);
	assert_int_equal(rule_of(e, "11.1.1.1"), -1);
}

static void test_first_match_wins(void **state)
{
	const struct export_cfg *e = export_with(state, "10.0.0.1(rw) 10.0.0.0/8(ro) *(ro,all_squash)");
	assert_int_equal(rule_of(e, "10.0.0.1"), 0);
	assert_int_equal(rule_of(e, "10.0.0.2"), 1);
	assert_int_equal(rule_of(e, "192.0.2.1"), 2);

	/* The broad rule first hides the narrow one, as in exports(5). */
	e = export_with(state, "10.0.0.0/8(ro) 10.0.0.1(rw)");
	assert_int_equal(rule_of(e, "10.0.0.1"), 0);
	assert_false(e->clients[0].rw);
}

struct namer {
	const char *name;
	int asked;
};

static const char *name_of(void *ctx)
{
	struct namer *n = ctx;
	n->asked++;
	return n->name;
}

/* Wildcard names match the client's name, asked once and only when such a rule is reached; a
 * client with no (confirmed) name matches none of them; first match still wins. */
static void test_match_wildcard_names(void **state)
{
	const struct export_cfg *e = export_with(state,
		"10.0.0.1(rw) *.lab.example.com(ro) host?.example.com(rw) 10.0.0.0/8(ro,all_squash)");
	struct sockaddr_storage near = peer("10.0.0.1"), far = peer("10.9.9.9");
	struct namer n = {"build7.lab.example.com", 0};
	const struct client_rule *r;
	r = export_match_named(e, (const struct sockaddr *)&near, name_of, &n);
	assert_ptr_equal(r, &e->clients[0]);
	assert_int_equal(n.asked, 0);                 /* an address rule matched first */
	r = export_match_named(e, (const struct sockaddr *)&far, name_of, &n);
	assert_ptr_equal(r, &e->clients[1]);
	assert_int_equal(n.asked, 1);
	n = (struct namer){"HOST3.Example.COM", 0};   /* names compare without case */
	r = export_match_named(e, (const struct sockaddr *)&far, name_of, &n);
	assert_ptr_equal(r, &e->clients[2]);
	assert_int_equal(n.asked, 1);                 /* once for both wildcard rules */
	n = (struct namer){"", 0};                    /* no name: the network rule */
	r = export_match_named(e, (const struct sockaddr *)&far, name_of, &n);
	assert_ptr_equal(r, &e->clients[3]);
	assert_ptr_equal(export_match(e, (const struct sockaddr *)&far), &e->clients[3]);
	e = export_with(state, "*.example.com(rw)");
	n = (struct namer){"example.org", 0};
	assert_null(export_match_named(e, (const struct sockaddr *)&far, name_of, &n));
}

static void test_match_refuses_non_inet_peer(void **state)
{
	const struct export_cfg *e = export_with(state, "*(rw)");
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	assert_null(export_match(e, (const struct sockaddr *)&un));
	assert_null(export_match(e, NULL));
	struct sockaddr_storage ss = peer("1.2.3.4");
	assert_null(export_match(NULL, (const struct sockaddr *)&ss));
}

/* ---- squashing -------------------------------------------------------------------------- */

static struct rpc_cred sys_cred(uid_t uid, gid_t gid, uint32_t ngids, const gid_t *gids)
{
	struct rpc_cred c = {.flavor = RPC_AUTH_SYS, .uid = uid, .gid = gid, .ngids = ngids};
	if (ngids)
		memcpy(c.gids, gids, ngids * sizeof *gids);
	return c;
}

static void test_root_squash(void **state)
{
	const struct export_cfg *e = export_with(state, "*(rw,anonuid=900,anongid=901)");
	const struct client_rule *r = &e->clients[0];
	assert_int_equal(r->squash, SQUASH_ROOT);

	struct rpc_cred c = sys_cred(0, 0, 3, (gid_t[]){10, 0, 20});
	export_squash(r, &c);
	assert_int_equal(c.uid, 900);
	assert_int_equal(c.gid, 901);
	assert_int_equal(c.ngids, 3);
	assert_memory_equal(c.gids, ((gid_t[]){10, 901, 20}), 3 * sizeof(gid_t));

	/* Root's group alone, or root's uid alone, is squashed on its own. */
	c = sys_cred(1000, 0, 0, NULL);
	export_squash(r, &c);
	assert_int_equal(c.uid, 1000);
	assert_int_equal(c.gid, 901);
	c = sys_cred(0, 100, 1, (gid_t[]){100});
	export_squash(r, &c);
	assert_int_equal(c.uid, 900);
	assert_int_equal(c.gid, 100);
	assert_int_equal(c.gids[0], 100);

	/* Everyone else is untouched. */
	c = sys_cred(1000, 1000, 2, (gid_t[]){4, 27});
	export_squash(r, &c);
	assert_int_equal(c.uid, 1000);
	assert_int_equal(c.gid, 1000);
	assert_int_equal(c.ngids, 2);
	assert_memory_equal(c.gids, ((gid_t[]){4, 27}), 2 * sizeof(gid_t));
}

static void test_root_squash_default_anon_ids(void **state)
{
	const struct export_cfg *e = export_with(state, "*");
	struct rpc_cred c = sys_cred(0, 0, 1, (gid_t[]){0});
	export_squash(&e->clients[0], &c);
	assert_int_equal(c.uid, 65534);
	assert_int_equal(c.gid, 65534);
	assert_int_equal(c.gids[0], 65534);
}

static void test_no_root_squash(void **state)
{
	const struct export_cfg *e = export_with(state, "*(rw,no_root_squash)");
	struct rpc_cred c = sys_cred(0, 0, 2, (gid_t[]){0, 5});
	export_squash(&e->clients[0], &c);
	assert_int_equal(c.uid, 0);
	assert_int_equal(c.gid, 0);
	assert_int_equal(c.ngids, 2);
	assert_memory_equal(c.gids, ((gid_t[]){0, 5}), 2 * sizeof(gid_t));
}

static void test_all_squash(void **state)
{
	const struct export_cfg *e = export_with(state, "*(all_squash,anonuid=1000,anongid=1000)");
	struct rpc_cred c = sys_cred(4242, 4243, 2, (gid_t[]){1, 2});
	export_squash(&e->clients[0], &c);
	assert_int_equal(c.uid, 1000);
	assert_int_equal(c.gid, 1000);
	assert_int_equal(c.ngids, 0);

	c = sys_cred(0, 0, 1, (gid_t[]){0});
	export_squash(&e->clients[0], &c);
	assert_int_equal(c.uid, 1000);
	assert_int_equal(c.gid, 1000);
	assert_int_equal(c.ngids, 0);
}

static void test_all_squash_beats_no_root_squash(void **state)
{
	/* Whatever the order, as knfsd: all_squash is the stronger promise. */
	const struct export_cfg *e = export_with(state, "1.1.1.1(all_squash,no_root_squash) "
					       "2.2.2.2(no_root_squash,all_squash) "
					       "3.3.3.3(all_squash,no_all_squash)");
	assert_int_equal(e->clients[0].squash, SQUASH_ALL);
	assert_int_equal(e->clients[1].squash, SQUASH_ALL);
	assert_int_equal(e->clients[2].squash, SQUASH_ROOT);
	struct rpc_cred c = sys_cred(0, 0, 0, NULL);
	export_squash(&e->clients[0], &c);
	assert_int_equal(c.uid, 65534);
}

static void test_auth_none_is_anonymous(void **state)
{
	const struct export_cfg *e = export_with(state, "*(rw,no_root_squash,anonuid=7,anongid=8)");
	struct rpc_cred c = {.flavor = RPC_AUTH_NONE, .uid = 0, .gid = 0, .ngids = 2,
			     .gids = {0, 3}};
	export_squash(&e->clients[0], &c);
	assert_int_equal(c.uid, 7);
	assert_int_equal(c.gid, 8);
	assert_int_equal(c.ngids, 0);
}

/* ---- RPCSEC_GSS ------------------------------------------------------------------------- */

static struct rpc_cred gss_cred(uint32_t service, bool mapped, uid_t uid, gid_t gid,
				uint32_t ngids, const gid_t *gids)
{
	struct rpc_cred c = {.flavor = RPC_AUTH_GSS, .uid = uid, .gid = gid, .ngids = ngids,
			     .gss_service = service, .gss_mapped = mapped};
	if (ngids)
		memcpy(c.gids, gids, ngids * sizeof *gids);
	return c;
}

/* A principal mapped to a local user is squashed as AUTH_SYS is: root_squash takes uid 0 (a
 * machine principal, nfs/ host/ root/) and group 0, no_root_squash keeps them, all_squash
 * takes everyone; users other than root pass root_squash as they are. */
static void test_gss_mapped_squash(void **state)
{
	const struct export_cfg *e = export_with(state, "1.1.1.1(rw,anonuid=900,anongid=901,"
					       "sec=krb5) 2.2.2.2(no_root_squash,sec=krb5i) "
					       "3.3.3.3(all_squash,anonuid=7,anongid=8,sec=krb5p)");
	struct rpc_cred c = gss_cred(GSS_SVC_NONE, true, 0, 0, 2, (gid_t[]){0, 5});
	export_squash(&e->clients[0], &c);
	assert_int_equal(c.uid, 900);
	assert_int_equal(c.gid, 901);
	assert_int_equal(c.ngids, 2);
	assert_memory_equal(c.gids, ((gid_t[]){901, 5}), 2 * sizeof(gid_t));
	c = gss_cred(GSS_SVC_NONE, true, 1000, 100, 1, (gid_t[]){27});
	export_squash(&e->clients[0], &c);
	assert_int_equal(c.uid, 1000);
	assert_int_equal(c.gid, 100);
	assert_int_equal(c.ngids, 1);
	assert_int_equal(c.gids[0], 27);

	c = gss_cred(GSS_SVC_INTEGRITY, true, 0, 0, 1, (gid_t[]){0});
	export_squash(&e->clients[1], &c);
	assert_int_equal(c.uid, 0);
	assert_int_equal(c.gid, 0);
	assert_int_equal(c.ngids, 1);
	assert_int_equal(c.gids[0], 0);

	c = gss_cred(GSS_SVC_PRIVACY, true, 1000, 100, 1, (gid_t[]){27});
	export_squash(&e->clients[2], &c);
	assert_int_equal(c.uid, 7);
	assert_int_equal(c.gid, 8);
	assert_int_equal(c.ngids, 0);
}

/* A principal that maps to no local user is the anonymous user under every squash option, as
 * AUTH_NONE is, whatever ids the credential holds. */
static void test_gss_unmapped_is_anonymous(void **state)
{
	const struct export_cfg *e = export_with(state, "1.1.1.1(rw,anonuid=900,anongid=901,"
					       "sec=krb5) 2.2.2.2(no_root_squash,anonuid=3,anongid=4,"
					       "sec=krb5i) 3.3.3.3(all_squash,anonuid=7,anongid=8,"
					       "sec=krb5p)");
	static const struct { uid_t uid; gid_t gid; } want[] = {{900, 901}, {3, 4}, {7, 8}};
	for (size_t i = 0; i < 3; i++) {
		struct rpc_cred c = gss_cred((uint32_t)i + 1, false, 1000, 0, 2, (gid_t[]){0, 5});
		export_squash(&e->clients[i], &c);
		assert_int_equal(c.uid, want[i].uid);
		assert_int_equal(c.gid, want[i].gid);
		assert_int_equal(c.ngids, 0);
		c = gss_cred((uint32_t)i + 1, false, 0, 0, 0, NULL);
		export_squash(&e->clients[i], &c);
		assert_int_equal(c.uid, want[i].uid);
	}
}

/* A call passes sec= with its exact pseudo-flavor listed (krb5p does not let krb5 or krb5i
 * in, nor sys), and AUTH_NONE wherever sys is listed (knfsd's default takes both). */
static void test_export_flavor_ok(void **state)
{
	const struct export_cfg *e = export_with(state, "1.1.1.1 2.2.2.2(sec=krb5p) "
					       "3.3.3.3(sec=krb5:sys) 4.4.4.4(sec=none) "
					       "5.5.5.5(sec=krb5i:krb5)");
	struct rpc_cred sys = sys_cred(1000, 1000, 0, NULL);
	struct rpc_cred none = {.flavor = RPC_AUTH_NONE};
	struct rpc_cred k = gss_cred(GSS_SVC_NONE, true, 1000, 1000, 0, NULL);
	struct rpc_cred ki = gss_cred(GSS_SVC_INTEGRITY, true, 1000, 1000, 0, NULL);
	struct rpc_cred kp = gss_cred(GSS_SVC_PRIVACY, false, 1000, 1000, 0, NULL);
	struct rpc_cred bad = gss_cred(0, true, 1000, 1000, 0, NULL);   /* no service */
	static const bool want[5][5] = {
		/*  sys   none   krb5   krb5i  krb5p */
		{true,  true,  false, false, false},   /* default: sec=sys */
		{false, false, false, false, true},    /* sec=krb5p */
		{true,  true,  true,  false, false},   /* sec=krb5:sys */
		{false, true,  false, false, false},   /* sec=none */
		{false, false, true,  true,  false},   /* sec=krb5i:krb5 */
	};
	const struct rpc_cred *creds[5] = {&sys, &none, &k, &ki, &kp};
	for (size_t r = 0; r < 5; r++) {
		for (size_t c = 0; c < 5; c++) {
			if (export_flavor_ok(&e->clients[r], creds[c]) != want[r][c])
				print_error("rule %zu, credential %zu\n", r, c);
			assert_int_equal(export_flavor_ok(&e->clients[r], creds[c]), want[r][c]);
		}
		assert_false(export_flavor_ok(&e->clients[r], &bad));
	}
}

static void test_option_order_later_wins(void **state)
{
	const struct export_cfg *e = export_with(state, "1.1.1.1(rw,ro) 2.2.2.2(ro,rw,insecure,secure) "
					       "3.3.3.3(no_root_squash,root_squash)");
	assert_false(e->clients[0].rw);
	assert_true(e->clients[1].rw);
	assert_true(e->clients[1].secure);
	assert_int_equal(e->clients[2].squash, SQUASH_ROOT);
}

/* ---- lookups ---------------------------------------------------------------------------- */

static void test_by_path_and_fsid(void **state)
{
	struct fixture *f = *state;
	char text[256], err[512], data[PATH_MAX + 16], slash[PATH_MAX + 16], prefix[PATH_MAX + 16];
	snprintf(text, sizeof text,
		 "[export data]\nclients = *\nfsid = 10\n[export data2]\nclients = *\n");
	assert_int_equal(scratch_load(&f->s, text, &f->cfg, err, sizeof err), 0);
	const struct config *c = &f->cfg;

	snprintf(data, sizeof data, "%s/data", f->s.dir);
	snprintf(slash, sizeof slash, "%s/data//", f->s.dir);
	snprintf(prefix, sizeof prefix, "%s/dat", f->s.dir);
	assert_ptr_equal(export_by_path(c, data), &c->exports[0]);
	assert_ptr_equal(export_by_path(c, slash), &c->exports[0]);   /* "mount srv:/x/" */
	assert_null(export_by_path(c, prefix));
	assert_null(export_by_path(c, f->s.dir));
	assert_null(export_by_path(c, "/"));
	assert_null(export_by_path(c, ""));
	strcat(data, "2");
	assert_ptr_equal(export_by_path(c, data), &c->exports[1]);

	assert_ptr_equal(export_by_fsid(c, 10), &c->exports[0]);
	assert_ptr_equal(export_by_fsid(c, c->exports[1].fsid), &c->exports[1]);
	assert_null(export_by_fsid(c, 11));
	assert_null(export_by_fsid(NULL, 10));
}

static void test_root_export_by_path(void **state)
{
	struct fixture *f = *state;
	char err[512];
	assert_int_equal(scratch_load(&f->s, "[export /]\nclients = *\n", &f->cfg, err, sizeof err), 0);
	assert_ptr_equal(export_by_path(&f->cfg, "/"), &f->cfg.exports[0]);
	assert_ptr_equal(export_by_path(&f->cfg, "//"), &f->cfg.exports[0]);
	assert_null(export_by_path(&f->cfg, "/srv"));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_match_ipv4_host_and_networks),
		T(test_match_wildcard_names),
		T(test_match_host_bits_in_rule_ignored),
		T(test_match_slash_zero_and_star),
		T(test_match_ipv6),
		T(test_match_mapped_ipv4),
		T(test_first_match_wins),
		T(test_match_refuses_non_inet_peer),
		T(test_root_squash),
		T(test_root_squash_default_anon_ids),
		T(test_no_root_squash),
		T(test_all_squash),
		T(test_all_squash_beats_no_root_squash),
		T(test_auth_none_is_anonymous),
		T(test_gss_mapped_squash),
		T(test_gss_unmapped_is_anonymous),
		T(test_export_flavor_ok),
		T(test_option_order_later_wins),
		T(test_by_path_and_fsid),
		T(test_root_export_by_path),
	};
	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
