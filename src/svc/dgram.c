/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPC over UDP, for the programs clients reach that way: the portmapper, NLM, NSM and MOUNT
 * (NFS itself is TCP only, as knfsd's default). Ring 0 owns every UDP socket: a recvmsg on the
 * ring per socket; each datagram is one call, run as a fiber through the same dispatcher as a
 * TCP record, and its reply leaves from the address the call came to (IP_PKTINFO), so a
 * server listening on a wildcard address answers from the right one. A datagram never waits
 * for room: replies are sent with MSG_DONTWAIT, and one the socket cannot take is dropped, as
 * UDP allows (the client retransmits). */
#include "svc/dgram.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/cred.h"
#include "fs/fs.h"
#include "svc/reply.h"
#include "io/fiber.h"
#include "io/ring.h"
#include "base/log.h"
#include "svc/server.h"
#include "svc/worker.h"

#define DGRAM_MAX 65536
/* Calls of one socket in flight at most: past it datagrams are dropped (the client sends
 * again), so a flood, spoofed or not, costs no more than this many fibers and buffers. */
#define DGRAM_INFLIGHT_MAX 256
/* Room for one IP_PKTINFO or IPV6_PKTINFO message (CMSG_SPACE is not a constant expression for
 * every compiler): 64 bytes each, twice over. */
#define CTL_MAX 128

struct dgram {
	struct io_op op;
	struct worker *w;
	int fd;
	struct sockaddr_storage bound;   /* the socket's own address (its port) */
	struct sockaddr_storage peer;
	unsigned inflight;               /* its calls running (DGRAM_INFLIGHT_MAX) */
	struct iovec iov;
	struct msghdr msg;
	_Alignas(struct cmsghdr) char ctl[CTL_MAX];
	uint8_t buf[DGRAM_MAX];
};

struct dgram_call {
	struct dgram *d;
	struct sockaddr_storage peer, local;
	struct record_mem rm;
	size_t len;
	struct cred_saved creds;
};

int dgram_open(const char *addr, uint16_t port, bool v6only)
{
	int fd = server_bind(addr, port, SOCK_DGRAM | SOCK_NONBLOCK, v6only);
	if (fd < 0)
		return fd;
	int one = 1;
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
	/* On a dual-stack socket IPv4 datagrams carry IP_PKTINFO. */
	setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
	return fd;
}

static void post_recv(struct dgram *d)
{
	d->iov = (struct iovec){.iov_base = d->buf, .iov_len = sizeof d->buf};
	d->msg = (struct msghdr){.msg_name = &d->peer, .msg_namelen = sizeof d->peer,
				 .msg_iov = &d->iov, .msg_iovlen = 1, .msg_control = d->ctl,
				 .msg_controllen = sizeof d->ctl};
	io_ring_recvmsg(d->w->ring, &d->op, d->fd, &d->msg);
}

/* The address the datagram was sent to, with our port: the reply's source. */
static void dest_of(struct dgram *d, struct sockaddr_storage *out)
{
	*out = d->bound;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&d->msg); c; c = CMSG_NXTHDR(&d->msg, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof pi);
			if (out->ss_family == AF_INET) {
				((struct sockaddr_in *)out)->sin_addr = pi.ipi_addr;
			} else {   /* IPv4 on a dual-stack socket: as a mapped address */
				struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)out;
				memset(&s6->sin6_addr, 0, sizeof s6->sin6_addr);
				s6->sin6_addr.s6_addr[10] = s6->sin6_addr.s6_addr[11] = 0xff;
				memcpy(&s6->sin6_addr.s6_addr[12], &pi.ipi_addr, 4);
			}
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof pi);
			((struct sockaddr_in6 *)out)->sin6_addr = pi.ipi6_addr;
		}
	}
}

/* One control message (level, type, data) as msg's whole control part, in ctl. */
static void put_cmsg(struct msghdr *msg, char *ctl, int level, int type, const void *data,
		     size_t len)
{
	msg->msg_control = ctl;
	msg->msg_controllen = CMSG_SPACE(len);
	struct cmsghdr *c = CMSG_FIRSTHDR(msg);
	*c = (struct cmsghdr){.cmsg_level = level, .cmsg_type = type, .cmsg_len = CMSG_LEN(len)};
	memcpy(CMSG_DATA(c), data, len);
}

/* The reply's source: the address the call came to. An IPv4 one, also an IPv4-mapped one on a
 * dual-stack socket, is set with IP_PKTINFO; an IPv6 one with IPV6_PKTINFO. */
static void put_source(struct msghdr *msg, char *ctl, const struct sockaddr_storage *local)
{
	const struct sockaddr_in6 *l6 = (const struct sockaddr_in6 *)local;
	struct in_pktinfo pi = {0};
	if (local->ss_family == AF_INET) {
		pi.ipi_spec_dst = ((const struct sockaddr_in *)local)->sin_addr;
	} else if (local->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&l6->sin6_addr)) {
		memcpy(&pi.ipi_spec_dst, &l6->sin6_addr.s6_addr[12], 4);
	} else if (local->ss_family == AF_INET6) {
		struct in6_pktinfo pi6 = {.ipi6_addr = l6->sin6_addr};
		put_cmsg(msg, ctl, IPPROTO_IPV6, IPV6_PKTINFO, &pi6, sizeof pi6);
		return;
	} else {
		return;
	}
	put_cmsg(msg, ctl, IPPROTO_IP, IP_PKTINFO, &pi, sizeof pi);
}

/* Send r from local (the address the call came to) to the caller; the record mark stays out. */
static void send_reply(struct dgram *d, const struct dgram_call *dc, const struct reply *r)
{
	if (r->payload_iov || r->hdr_len - 4 + r->payload_len + r->pad + r->tail_len > DGRAM_MAX) {
		log_ratelimited(&d->w->srv->udp_log, LOG_WARNING, "udp: a reply too large for a datagram "
				"was dropped");
		return;
	}
	struct iovec iov[4] = {{.iov_base = r->hdr + 4, .iov_len = r->hdr_len - 4}};
	size_t n = 1 + (size_t)reply_body_iov(r, iov + 1);   /* no payload_iov: two at most */
	if (r->tail_len)
		iov[n++] = (struct iovec){(void *)r->tail, r->tail_len};
	_Alignas(struct cmsghdr) char ctl[CTL_MAX] = {0};
	struct msghdr msg = {.msg_name = (void *)&dc->peer, .msg_iov = iov, .msg_iovlen = n};
	msg.msg_namelen = dc->peer.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							 : sizeof(struct sockaddr_in);
	put_source(&msg, ctl, &dc->local);
	if (sendmsg(d->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		log_ratelimited(&d->w->srv->udp_log, LOG_WARNING, "udp: sending a reply: %s",
				strerror(errno));
}

static void dgram_main(void *arg)
{
	struct dgram_call *dc = arg;
	struct dgram *d = dc->d;
	struct worker *w = d->w;
	struct reply *reply = NULL;
	fiber_set_hooks(fiber_self(), cred_save, cred_restore, &dc->creds);
	worker_request_begin(w);
	dispatch_record(w, &dc->peer, &dc->local, IPPROTO_UDP, &dc->rm, dc->rm.mem, dc->len, &reply);
	worker_running(w, false);
	fiber_set_hooks(fiber_self(), NULL, NULL, NULL);
	if (reply && !w->stopping)
		send_reply(d, dc, reply);
	reply_free(reply);
	record_mem_release(&dc->rm);
	d->inflight--;
	free(dc);
}

static void on_datagram(struct io_op *op, int res)
{
	struct dgram *d = (struct dgram *)op;
	if (res == -ECANCELED || d->w->stopping)
		return;
	if (res > 0 && d->inflight >= DGRAM_INFLIGHT_MAX) {
		log_ratelimited(&d->w->srv->udp_log, LOG_WARNING, "udp: %u calls of one socket in "
				"flight: a datagram dropped", d->inflight);
	} else if (res > 0) {
		struct dgram_call *dc = calloc(1, sizeof *dc);
		void *mem = dc ? malloc((size_t)res) : NULL;
		if (mem) {
			memcpy(mem, d->buf, (size_t)res);
			*dc = (struct dgram_call){.d = d, .peer = d->peer, .rm = {.mem = mem},
						  .len = (size_t)res, .creds = {.ch = d->w->fs}};
			dest_of(d, &dc->local);
		}
		if (!mem || fiber_spawn(d->w->sched, dgram_main, dc) < 0) {
			log_ratelimited(&d->w->srv->udp_log, LOG_WARNING,
					"udp: out of memory for a call: dropped");
			free(mem);
			free(dc);
		} else {
			d->inflight++;
		}
	} else if (res < 0) {
		log_ratelimited(&d->w->srv->udp_log, LOG_WARNING, "udp: receive: %s", strerror(-res));
	}
	post_recv(d);
}

struct dgram *dgram_start(struct worker *w, int fd)
{
	struct dgram *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->op.cb = on_datagram;
	d->w = w;
	d->fd = fd;
	socklen_t len = sizeof d->bound;
	if (getsockname(fd, (struct sockaddr *)&d->bound, &len) < 0)
		d->bound.ss_family = AF_UNSPEC;
	post_recv(d);
	return d;
}

void dgram_stop(struct dgram *d)
{
	if (d)
		io_ring_cancel_fd(d->w->ring, d->fd);
}

void dgram_free(struct dgram *d)
{
	free(d);
}
