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
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define STATS_PROGRAM 0x20004e55u
#define STATS_VERSION 1u
#define STATS_PROC 1u
#define NAME_MAX_LEN 64u
#define REPLY_MAX (1u << 20)
#define TIMEOUT_MS 10000

#define EXIT_USAGE 2
#define EXIT_PROTO 3
#define EXIT_NONAME 4

/* RFC 5531 constants */
enum { MSG_CALL = 0, MSG_REPLY = 1, MSG_ACCEPTED = 0, MSG_DENIED = 1, RPC_VERS = 2 };
static const char *const accept_names[] = {
	"SUCCESS", "PROG_UNAVAIL", "PROG_MISMATCH", "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR",
};

/* A cursor over the reply body; every read checks the end. */
struct cur {
	const uint8_t *p, *end;
};

static bool get_u32(struct cur *c, uint32_t *v)
{
	if (c->end - c->p < 4)
		return false;
	*v = (uint32_t)c->p[0] << 24 | (uint32_t)c->p[1] << 16 | (uint32_t)c->p[2] << 8 | c->p[3];
	c->p += 4;
	return true;
}

static bool get_u64(struct cur *c, uint64_t *v)
{
	uint32_t hi, lo;

	if (!get_u32(c, &hi) || !get_u32(c, &lo))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

/* Opaque of len bytes padded to 4: *data points into the reply. */
static bool get_opaque(struct cur *c, uint32_t len, const uint8_t **data)
{
	size_t padded = ((size_t)len + 3) & ~(size_t)3;

	if ((size_t)(c->end - c->p) < padded)
		return false;
	*data = c->p;
	c->p += padded;
	return true;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The whole call record: record mark, xid, CALL, rpcvers 2, prog, vers, proc, AUTH_NONE
 * credential and verifier (flavor 0, length 0 each), no arguments. */
static size_t encode_call(uint8_t *buf, uint32_t xid)
{
	const uint32_t words[] = { xid, MSG_CALL, RPC_VERS, STATS_PROGRAM, STATS_VERSION, STATS_PROC,
				   0, 0, 0, 0 };
	size_t n = sizeof(words) / sizeof(words[0]);

	put_u32(buf, 0x80000000u | (uint32_t)(n * 4));   /* last fragment */
	for (size_t i = 0; i < n; i++)
		put_u32(buf + 4 + 4 * i, words[i]);
	return 4 + 4 * n;
}

static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	int fd = -1, rc = getaddrinfo(host, port, &hints, &ai);

	if (rc != 0) {
		fprintf(stderr, "nfsduc-stat: %s:%s: %s\n", host, port, gai_strerror(rc));
		return -1;
	}
	for (a = ai; a != NULL && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		fprintf(stderr, "nfsduc-stat: connect to %s:%s: %s\n", host, port, strerror(errno));
	freeaddrinfo(ai);
	return fd;
}

static bool send_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Read exactly len bytes, waiting TIMEOUT_MS at most for each piece. */
static bool recv_all(int fd, uint8_t *p, size_t len)
{
	while (len > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, TIMEOUT_MS) == 0) {
			fprintf(stderr, "nfsduc-stat: no reply in %d ms\n", TIMEOUT_MS);
			return false;
		}
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "nfsduc-stat: %s\n", n == 0 ? "the server closed the connection"
						: strerror(errno));
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Reassemble one record (RFC 5531 record marking: fragments until the last-fragment bit).
 * The caller frees *out. Its length, or 0 on failure. */
static size_t recv_record(int fd, uint8_t **out)
{
	uint8_t *buf = NULL, mark[4];
	size_t len = 0;
	uint32_t m;

	do {
		uint8_t *nb;
		if (!recv_all(fd, mark, 4))
			goto fail;
		m = (uint32_t)mark[0] << 24 | (uint32_t)mark[1] << 16 | (uint32_t)mark[2] << 8 | mark[3];
		if (len + (m & 0x7fffffffu) > REPLY_MAX) {
			fprintf(stderr, "nfsduc-stat: reply larger than %u bytes\n", REPLY_MAX);
			goto fail;
		}
		nb = realloc(buf, len + (m & 0x7fffffffu) + 1);
		if (nb == NULL)
			goto fail;
		buf = nb;
		if (!recv_all(fd, buf + len, m & 0x7fffffffu))
			goto fail;
		len += m & 0x7fffffffu;
	} while (!(m & 0x80000000u));
	*out = buf;
	return len;
fail:
	free(buf);
	return 0;
}

/* Check the reply header up to the result: xid, REPLY, MSG_ACCEPTED, verifier, SUCCESS. */
static bool check_header(struct cur *c, uint32_t xid)
{
	uint32_t v[3], flavor, vlen, stat;
	const uint8_t *body;

	if (!get_u32(c, &v[0]) || !get_u32(c, &v[1]) || !get_u32(c, &v[2]))
		goto short_reply;
	if (v[0] != xid || v[1] != MSG_REPLY) {
		fprintf(stderr, "nfsduc-stat: not our reply (xid %#x, type %u)\n", v[0], v[1]);
		return false;
	}
	if (v[2] != MSG_ACCEPTED) {
		fprintf(stderr, "nfsduc-stat: call denied (reject_stat %s)\n",
			get_u32(c, &stat) ? (stat == 0 ? "RPC_MISMATCH" : "AUTH_ERROR") : "?");
		return false;
	}
	if (!get_u32(c, &flavor) || !get_u32(c, &vlen) || vlen > 400 ||
	    !get_opaque(c, vlen, &body) || !get_u32(c, &stat))
		goto short_reply;
	if (stat != 0) {
		fprintf(stderr, "nfsduc-stat: %s (the server has no STATS program 0x%x v%u?)\n",
			stat < 6 ? accept_names[stat] : "unknown accept_stat", STATS_PROGRAM,
			STATS_VERSION);
		return false;
	}
	return true;
short_reply:
	fprintf(stderr, "nfsduc-stat: short or garbled reply header\n");
	return false;
}

/* Print the counters (or the one named want). 0, EXIT_PROTO or EXIT_NONAME. */
static int print_result(struct cur *c, const char *want)
{
	uint32_t n, len;
	bool found = false;

	if (!get_u32(c, &n))
		goto garbled;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *name;
		uint64_t value;

		if (!get_u32(c, &len) || len > NAME_MAX_LEN || !get_opaque(c, len, &name) ||
		    !get_u64(c, &value))
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
	uint8_t call[64], *reply = NULL;
	struct timespec ts;
	uint32_t xid;
	size_t len;
	int rc = EXIT_PROTO;

	clock_gettime(CLOCK_REALTIME, &ts);
	xid = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() << 16;
	len = encode_call(call, xid);
	if (!send_all(fd, call, len)) {
		fprintf(stderr, "nfsduc-stat: send: %s\n", strerror(errno));
		return EXIT_PROTO;
	}
	len = recv_record(fd, &reply);
	if (len > 0) {
		struct cur c = { reply, reply + len };
		if (check_header(&c, xid))
			rc = print_result(&c, want);
	}
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
	fd = connect_to(argv[1], argv[2]);
	if (fd < 0)
		return EXIT_PROTO;
	rc = query(fd, argc == 4 ? argv[3] : NULL);
	close(fd);
	return rc;
}
