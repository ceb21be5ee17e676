/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsduc-stat: print nfsd-uc's counters, one "name value" line each.
 *
 *   nfsduc-stat HOST PORT          every counter
 *   nfsduc-stat HOST PORT NAME     the value of NAME alone (exit 4 when the server has no NAME)
 *
 * The counters come from the daemon's private RPC program 0x20004e55 version 1, procedure 1
 * (STATS), AUTH_NONE, no arguments, answered on the NFS port; the result is
 *   uint32 n, then n x { string name<64>; unsigned hyper value }.
 * The call is encoded by hand on a plain TCP socket, so that this tool depends on nothing but
 * libc and can check a server whose own XDR code is what is being tested.
 *
 * Exit status: 0, 2 usage, 3 connection or protocol error, 4 NAME not reported. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "statrpc.h"

#define STATS_PROC 1u
#define NAME_MAX_LEN 64u

#define EXIT_USAGE 2
#define EXIT_PROTO STATRPC_EXIT_PROTO
#define EXIT_NONAME 4

const char *statrpc_prog = "nfsduc-stat";

/* Print the counters (or the one named want). 0, EXIT_PROTO or EXIT_NONAME. */
static int print_result(struct statrpc_cur *c, const char *want)
{
	uint32_t n, len;
	bool found = false;

	if (!statrpc_u32(c, &n))
		goto garbled;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *name;
		uint64_t value;

		if (!statrpc_u32(c, &len) || len > NAME_MAX_LEN || !statrpc_opaque(c, len, &name) ||
		    !statrpc_u64(c, &value))
			goto garbled;
		if (want == NULL)
			printf("%.*s %" PRIu64 "\n", (int)len, (const char *)name, value);
		else if (strlen(want) == len && memcmp(want, name, len) == 0) {
			printf("%" PRIu64 "\n", value);
			found = true;
		}
	}
	if (c->p != c->end)
		fprintf(stderr, "nfsduc-stat: %zu bytes after the last counter\n",
			(size_t)(c->end - c->p));
	if (want != NULL && !found) {
		fprintf(stderr, "nfsduc-stat: the server reports no counter named %s\n", want);
		return EXIT_NONAME;
	}
	return 0;
garbled:
	fprintf(stderr, "nfsduc-stat: garbled STATS result\n");
	return EXIT_PROTO;
}

static int query(int fd, const char *want)
{
	uint8_t *reply;
	struct statrpc_cur c;
	int rc = statrpc_call(fd, STATS_PROC, &reply, &c);

	if (rc == 0)
		rc = print_result(&c, want);
	free(reply);
	return rc;
}

int main(int argc, char **argv)
{
	int fd, rc;

	if (argc < 3 || argc > 4 || strcmp(argv[1], "--help") == 0) {
		fputs("usage: nfsduc-stat HOST PORT [NAME]\n"
		      "  prints nfsd-uc's counters (\"name value\" lines), or NAME's value alone\n",
		      argc < 3 || argc > 4 ? stderr : stdout);
		return argc < 3 || argc > 4 ? EXIT_USAGE : 0;
	}
	fd = statrpc_connect(argv[1], argv[2]);
	if (fd < 0)
		return EXIT_PROTO;
	rc = query(fd, argc == 4 ? argv[3] : NULL);
	close(fd);
	return rc;
}
