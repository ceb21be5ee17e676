/* Synchronous wrapper over libnfs's raw async RPC API. See client.h. */
#include "client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CALL_TIMEOUT_MS 60000
#define COPY_MIN (64 * 1024)
#define COPY_MAX (64 * 1024 * 1024)
/* libnfs's fixed-size opaque encoder does not check the buffer end: leave room past it */
#define COPY_SLACK 64

/* One copied result: the decoder's allocations (zdr's arena) and the bytes it read. */
struct nc_arena {
	struct nc_arena *next;
	ZDR zdr;
	char *buf;
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void nc_arm(struct nfsclient *c, zdrproc_t codec, void *res, size_t res_size)
{
	c->call.done = 0;
	c->call.status = -1;
	c->call.err[0] = '\0';
	c->call.codec = codec;
	c->call.res = res;
	c->call.res_size = res_size;
	c->call.arenas = &c->arenas;
	if (res != NULL)
		memset(res, 0, res_size);
}

/* Encode data with the codec into a buffer large enough; its length, or 0. */
static size_t encode_result(zdrproc_t codec, void *data, char **out)
{
	for (size_t cap = COPY_MIN; cap <= COPY_MAX; cap *= 4) {
		char *buf = malloc(cap + COPY_SLACK);
		ZDR enc;

		if (buf == NULL)
			return 0;
		zdrmem_create(&enc, buf, (uint32_t)cap, ZDR_ENCODE);
		if (codec(&enc, data)) {
			size_t len = zdr_getpos(&enc);
			zdr_destroy(&enc);
			*out = buf;
			return len;
		}
		zdr_destroy(&enc);
		free(buf);
	}
	return 0;
}

static int copy_result(struct nc_call *call, void *data)
{
	struct nc_arena *a = calloc(1, sizeof(*a));
	size_t len;

	if (a == NULL)
		return -1;
	len = encode_result(call->codec, data, &a->buf);
	if (len == 0) {
		free(a);
		return -1;
	}
	zdrmem_create(&a->zdr, a->buf, (uint32_t)len, ZDR_DECODE);
	if (!call->codec(&a->zdr, call->res)) {
		zdr_destroy(&a->zdr);
		free(a->buf);
		free(a);
		return -1;
	}
	a->next = *call->arenas;
	*call->arenas = a;
	return 0;
}

void nc_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
	struct nc_call *call = private_data;

	(void)rpc;
	call->done = 1;
	call->status = status;
	if (status != RPC_STATUS_SUCCESS) {
		snprintf(call->err, sizeof(call->err), "%s",
		         status == RPC_STATUS_ERROR && data != NULL ? (const char *)data :
		         status == RPC_STATUS_TIMEOUT ? "timed out" : "cancelled");
		return;
	}
	if (call->codec != NULL && data != NULL && copy_result(call, data) < 0) {
		call->status = RPC_STATUS_ERROR;
		snprintf(call->err, sizeof(call->err), "could not copy the decoded result");
	}
}

int nc_wait(struct nfsclient *c, int queued)
{
	long long deadline = now_ms() + CALL_TIMEOUT_MS;

	if (queued != 0) {
		snprintf(c->call.err, sizeof(c->call.err), "not queued: %s", rpc_get_error(c->rpc));
		return -1;
	}
	while (!c->call.done) {
		struct pollfd p = { .fd = rpc_get_fd(c->rpc), .events = (short)rpc_which_events(c->rpc) };
		int n = poll(&p, 1, 100);

		if (n < 0 && errno != EINTR)
			break;
		if (rpc_service(c->rpc, n > 0 ? p.revents : 0) < 0 && !c->call.done) {
			snprintf(c->call.err, sizeof(c->call.err), "connection failed: %s",
			         rpc_get_error(c->rpc));
			return -1;
		}
		if (!c->call.done && now_ms() > deadline) {
			snprintf(c->call.err, sizeof(c->call.err), "no reply in %d ms", CALL_TIMEOUT_MS);
			return -1;
		}
	}
	return c->call.done && c->call.status == RPC_STATUS_SUCCESS ? 0 : -1;
}

static struct nfsclient *connect_with(struct rpc_context *rpc, uint16_t port, int program,
                                      int version)
{
	struct nfsclient *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		rpc_destroy_context(rpc);
		return NULL;
	}
	c->rpc = rpc;
	nc_arm(c, NULL, NULL, 0);
	if (nc_wait(c, rpc_connect_port_async(rpc, "127.0.0.1", port, program, version,
	                                      nc_cb, &c->call)) < 0) {
		fprintf(stderr, "connect to port %u (program %d v%d): %s\n", port, program, version,
		        c->call.err);
		nc_close(c);
		return NULL;
	}
	return c;
}

struct nfsclient *nc_connect(uint16_t port, int program, int version, int uid, int gid,
                             uint32_t ngids, const uint32_t *gids)
{
	struct rpc_context *rpc = rpc_init_context();
	uint32_t groups[32];

	if (rpc == NULL || ngids > 32)
		return NULL;
	if (ngids > 0)
		memcpy(groups, gids, ngids * sizeof(*gids));
	rpc_set_auth(rpc, libnfs_authunix_create("nfsd-uc-it", (uint32_t)uid, (uint32_t)gid,
	                                         ngids, groups));
	return connect_with(rpc, port, program, version);
}

struct nfsclient *nc_connect_authnone(uint16_t port, int program, int version)
{
	struct rpc_context *rpc = rpc_init_context();

	if (rpc == NULL)
		return NULL;
	rpc_set_auth(rpc, libnfs_authnone_create());
	return connect_with(rpc, port, program, version);
}

void nc_release(struct nfsclient *c)
{
	while (c->arenas != NULL) {
		struct nc_arena *a = c->arenas;
		c->arenas = a->next;
		zdr_destroy(&a->zdr);
		free(a->buf);
		free(a);
	}
}

void nc_close(struct nfsclient *c)
{
	if (c == NULL)
		return;
	rpc_destroy_context(c->rpc);
	nc_release(c);
	free(c);
}

nfs_fh3 fh3(struct fh *f)
{
	nfs_fh3 v = { .data = { .data_len = f->len, .data_val = f->data } };
	return v;
}

void fh_copy(struct fh *to, const nfs_fh3 *from)
{
	assert_true(from->data.data_len <= NFS3_FHSIZE);
	to->len = from->data.data_len;
	memcpy(to->data, from->data.data_val, to->len);
}

int fh_equal(const struct fh *a, const struct fh *b)
{
	return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

const char *nc_status_name(int status)
{
	return status < 0 ? "call failed" : nfsstat3_to_str(status);
}

void nc_check(struct nfsclient *c, int got, int want, const char *what, const char *file, int line)
{
	if (got == want)
		return;
	if (got < 0)
		print_error("%s\n  the call failed: %s (want %s)\n", what, c->call.err,
		            nc_status_name(want));
	else
		print_error("%s\n  got %s (%d), want %s (%d)\n", what, nc_status_name(got), got,
		            nc_status_name(want), want);
	_fail(file, line);
}
