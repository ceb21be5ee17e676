/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc.conf's errors: every message with its line number (each error load also checked for
 * leaks), host names that do not resolve, unreadable files, a message cut to the caller's
 * buffer, and a good load giving back every byte. One binary with test_config.c, which lists
 * the tests (conftest.h declares them). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "conf/config.h"
#include "conftest.h"

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

void test_structure_errors(void **state)
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
		 "receive_memory_per_client, "
		 "idle_timeout, record_timeout, reply_cache_entries, reply_cache_size, "
		 "mount_list_entries, state_dir, exports_dir, rpcbind, log_level, keytab, gss_contexts, "
		 "gss_contexts_per_client, gss_window, gss_unmapped, gss_crypto)"},
		{"[server]\nrecord_timout = 5\n",
		 "2: unknown key 'record_timout' in [server] (did you mean 'record_timeout'? known: "
		 "listen, port, mount_port, threads, requests_per_connection, requests_per_ring, "
		 "blocking_threads, max_record, connections, connections_per_client, receive_memory, "
		 "receive_memory_per_connection, receive_memory_per_client, idle_timeout, "
		 "record_timeout, reply_cache_entries, "
		 "reply_cache_size, mount_list_entries, state_dir, exports_dir, rpcbind, log_level, "
		 "keytab, gss_contexts, gss_contexts_per_client, gss_window, gss_unmapped, "
		 "gss_crypto)"},
		{"[cahce]\n",
		 "1: unknown section [cahce] (did you mean [cache]? expected [server], [cache], "
		 "[metrics], [lock] or [export PATH])"},
		{"[exprot data]\n",
		 "1: unknown section [exprot data] (expected [server], [cache], [metrics], [lock] "
		 "or [export PATH])"},
		{"[cache]\nsized = 1\n", "2: unknown key 'sized' in [cache] (did you mean 'size'? known: size, file_size, writeback_depth, sync_behind)"},
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

void test_export_errors(void **state)
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

void test_value_errors(void **state)
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
		{"[server]\nreceive_memory = 8M\nreceive_memory_per_client = 9M\n",
		 "3: receive_memory_per_client (9437184) must lie between max_record (1114112) and "
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

void test_client_errors(void **state)
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
		 "insecure, subtree_check, no_subtree_check, sec=FLAVOR:...)"},
		{"[export data]\nclients = 127.0.0.1(rw,no_root_sqaush)\n",
		 "2: clients: 127.0.0.1: unknown option 'no_root_sqaush' (did you mean "
		 "'no_root_squash'? known: rw, ro, root_squash, no_root_squash, all_squash, "
		 "no_all_squash, anonuid=N, anongid=N, secure, insecure, subtree_check, "
		 "no_subtree_check, sec=FLAVOR:...)"},
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
void test_host_names_and_wildcards(void **state)
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

void test_unreadable_files(void **state)
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

void test_error_truncated_to_buffer(void **state)
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

void test_success_takes_back_everything(void **state)
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
