/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Connections, on the ring that owns them from accept to close. Each one reads its byte stream
 * into a small buffer and handles the records found there in place. A record larger than what the
 * buffer holds (a WRITE), or in fragments, is put together in a buffer of its own (rpc/recasm.c),
 * placed so that the payload's address is congruent to its file offset modulo 64 KiB: the
 * whole-block middle of the WRITE is then aligned in memory for O_DIRECT, with no copy for the
 * bytes received straight into it. What they hold is receive memory (recvmem.c). Every complete
 * record runs as a fiber on this ring (decode, handler, encode), and its reply is queued on the
 * connection by the fiber itself: no queue between threads. Accepting is accept.c's, the
 * listening sockets listen.c's. */
#include "svc/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bufstash.h"
#include "cache/bcache.h"
#include "svc/conn.h"
#include "fs/cred.h"
#include "svc/dgram.h"
#include "svc/reply.h"
#include "fs/fs.h"
#include "io/fiber.h"
#include "io/ring.h"
#include "svc/connlimit.h"
#include "base/log.h"
#include "rpc/recmark.h"
#include "svc/worker.h"

#define PEEK_MIN 512              /* bytes of a large record needed to find a WRITE's payload */
/* A record this large is received into its own placed buffer, not through the stream buffer, when
 * the one before it was as large too: the stream buffer then takes only HEAD_RECV bytes (the
 * record mark, the call's header and a WRITE's arguments), not the next records' payloads, each
 * of which would be copied out of it again. */
#define BIG_RECORD (16 * 1024)
#define HEAD_RECV 1024
#define SENDQ_MAX (8u << 20)      /* stop reading requests while this much reply data is queued */

/* One RPC call from its record to its reply, run by a fiber of the connection's ring. */
struct request {
	struct conn *c;
	struct record_mem rm;         /* owns the record bytes */
	size_t charged;               /* record memory charged for it (connlimit.h) */
	size_t read_charge;           /* and for its reply, when it is a READ: kept until sent */
	const uint8_t *rec;
	size_t len;
	struct cred_saved creds;      /* the thread's credentials while this fiber is switched out */
};

/* The end of a reply: sent, or its connection gone. A READ's gives its memory back. */
static void reply_done(struct conn *c, struct reply *r)
{
	if (r->charged) {
		climits_mem_put(c->w->srv->limits, r->charged);
		c->read_charged -= r->charged;
	}
	reply_free(r);
}

/* ---- connection lifetime ---- */

static const char *peer_str(const struct sockaddr_storage *s, char a[INET6_ADDRSTRLEN])
{
	strcpy(a, "?");
	if (s->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)s)->sin_addr, a, INET6_ADDRSTRLEN);
	else if (s->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)s)->sin6_addr, a, INET6_ADDRSTRLEN);
	return a;
}

const char *conn_peer_str(const struct sockaddr_storage *s, char a[INET6_ADDRSTRLEN])
{
	return peer_str(s, a);
}

static void conn_free(struct conn *c)
{
	struct worker *w = c->w;
	if (c->stalled)
		w->nstalled--;
	mem_conn_free(c);
	climits_close(w->srv->limits, &c->peer);
	if (c->prev) c->prev->next = c->next; else w->conns = c->next;
	if (c->next) c->next->prev = c->prev;
	close(c->fd);
	while (c->sq_head) {
		struct reply *r = c->sq_head;
		c->sq_head = r->next;
		reply_done(c, r);
	}
	recasm_free(&c->ra);
	free(c->iov_big);
	free(c->sbuf);
	free(c);
}

/* Stop using the connection. It is freed by conn_settle(), which every completion callback calls
 * last, once no operation of ours is in flight: nothing below a callback ever frees it. */
void conn_kill(struct conn *c)
{
	if (!c->dead) {
		c->dead = true;
		if (c->recv_busy || c->send_busy)
			io_ring_cancel_fd(c->w->ring, c->fd);
	}
}

/* After each event of the connection: freed once dead and idle, else its client's account
 * brought up to date. */
void conn_settle(struct conn *c)
{
	if (c->dead && !c->recv_busy && !c->send_busy && !c->inflight)
		conn_free(c);
	else
		mem_client_sync(c);
}

/* A stopping loop closes a connection once it owes nothing more. */
static bool conn_drained(const struct conn *c)
{
	return !c->recv_busy && !c->send_busy && !c->sq_head && !c->inflight;
}

/* ---- sending ---- */

static void send_next(struct conn *c);

void conn_on_send(struct io_op *op, int res)
{
	struct conn *c = (struct conn *)((char *)op - offsetof(struct conn, send_op));
	c->send_busy = false;
	if (res <= 0 || c->dead) {
		if (res < 0 && res != -ECANCELED && res != -EPIPE && res != -ECONNRESET)
			log_ratelimited(&c->w->srv->sock_log, LOG_INFO, "send: %s", strerror(-res));
		conn_kill(c);
		conn_settle(c);
		return;
	}
	struct worker *w = c->w;
	bool freed = false;
	size_t n = (size_t)res;
	c->sq_bytes -= n;
	c->last_tx_ns = fiber_now_ns();
	/* Advance over what went out; a short send leaves the rest of this reply for the next call. */
	while (n && c->msg.msg_iovlen) {
		struct iovec *v = c->msg.msg_iov;
		size_t k = n < v->iov_len ? n : v->iov_len;
		v->iov_base = (char *)v->iov_base + k;
		v->iov_len -= k;
		n -= k;
		if (v->iov_len == 0) {
			c->msg.msg_iov++;
			c->msg.msg_iovlen--;
		}
	}
	if (c->msg.msg_iovlen == 0) {
		struct reply *r = c->sq_head;
		c->sq_head = r->next;
		if (!c->sq_head)
			c->sq_tail = NULL;
		freed = r->charged != 0;
		reply_done(c, r);
	}
	send_next(c);
	if (w->stopping && conn_drained(c))
		conn_kill(c);
	else
		conn_pump(c);   /* replies drained: maybe resume handling queued records */
	conn_settle(c);
	if (freed && w->nmem_wait && !w->stopping)
		mem_retry(w);   /* a READ's memory came back: connections waiting for it go on */
}

/* Room for the reply's iovecs (header, body, tail): the connection's four, or a larger array it
 * keeps for replies whose payload is many pieces (a READ answered from cached blocks). NULL: no
 * memory. */
static struct iovec *reply_iov(struct conn *c, const struct reply *r)
{
	size_t need = 2 + REPLY_BODY_IOVS(r);
	if (need <= sizeof c->iov / sizeof c->iov[0])
		return c->iov;
	if (need > c->iov_cap) {
		struct iovec *v = realloc(c->iov_big, need * sizeof *v);
		if (!v)
			return NULL;
		c->iov_big = v;
		c->iov_cap = need;
	}
	return c->iov_big;
}

static void send_next(struct conn *c)
{
	if (c->send_busy || c->dead)
		return;
	if (c->msg.msg_iovlen == 0) {
		struct reply *r = c->sq_head;
		if (!r)
			return;
		struct iovec *v = reply_iov(c, r);
		if (!v) {
			log_err("out of memory for a reply: closing the connection");
			conn_kill(c);
			return;
		}
		v[0] = (struct iovec){r->hdr, r->hdr_len};
		int n = 1 + reply_body_iov(r, v + 1);
		if (r->tail_len)
			v[n++] = (struct iovec){(void *)r->tail, r->tail_len};
		c->msg = (struct msghdr){.msg_iov = v, .msg_iovlen = (size_t)n};
	}
	c->send_busy = true;
	io_ring_sendmsg(c->w->ring, &c->send_op, c->fd, &c->msg);
}

static void queue_reply(struct conn *c, struct reply *r)
{
	if (!r)
		return;
	if (!c->sq_head)
		c->last_tx_ns = fiber_now_ns();   /* the send deadline starts with the first reply */
	if (c->sq_tail) c->sq_tail->next = r; else c->sq_head = r;
	c->sq_tail = r;
	c->sq_bytes += r->hdr_len + r->payload_len + r->pad + r->tail_len;
	send_next(c);
}

/* ---- receiving ---- */

/* Memory for a record of len bytes (pk: what its first bytes say), and where in it the record
 * starts: a WRITE's payload lands at an address congruent to its file offset modulo align (the
 * largest block of any export: server.place_align), so the whole blocks of its middle are aligned
 * for O_DIRECT wherever the WRITE starts. No larger: in cached mode the record lives on in the
 * cache, and every byte of alignment slack with it. */
static uint8_t *place_record(const struct dispatch_peek *pk, size_t len, size_t align,
			     uint8_t **start)
{
	if (!pk->write) {
		*start = bufstash_alloc(_Alignof(max_align_t), len);   /* no alignment to keep */
		return *start;
	}
	size_t shift = (size_t)((pk->file_off - pk->payload_idx) & (align - 1));
	uint8_t *mem = bufstash_alloc(align, shift + len);
	*start = mem ? mem + shift : NULL;
	return mem;
}

static void request_main(void *arg);

/* Run a record as a fiber of this ring. mem, when given, owns rec and goes with the request; else
 * rec lies in the stream buffer and is copied out (placed, so this is the payload's only copy). */
static void handle_record(struct conn *c, uint8_t *mem, const uint8_t *rec, size_t len,
			  size_t charged, const struct dispatch_peek *pk, size_t read_charge)
{
	c->rec_start_ns = 0;          /* a record whole: the next one's deadline starts afresh */
	struct request *rq = calloc(1, sizeof *rq);
	if (rq && !mem) {
		uint8_t *start;
		mem = place_record(pk, len, c->w->srv->place_align, &start);
		if (mem) {
			memcpy(start, rec, len);
			rec = start;
		}
	}
	if (rq && mem)
		*rq = (struct request){.c = c, .rm = {.mem = mem}, .rec = rec, .len = len,
				       .charged = charged, .read_charge = read_charge,
				       .creds = {.ch = c->w->fs}};
	/* The fiber first runs at the loop's next turn, not inside this call. */
	if (!rq || !mem || fiber_spawn(c->w->sched, request_main, rq) < 0) {
		log_err("out of memory for a request: closing the connection");
		mem_run_end(c, charged);
		climits_mem_put(c->w->srv->limits, read_charge);
		c->read_charged -= read_charge;
		free(rq);
		bufstash_free(mem);
		conn_kill(c);
		return;
	}
	c->inflight++;
	c->w->inflight++;
}

/* A record too large for the stream buffer, or in fragments, goes into a buffer of its own,
 * placed for a WRITE (place_record says why), with room for what is here and one receive window
 * (it grows as more comes: a mark that promises 1 MiB gets no 1 MiB). */
static bool rec_begin(struct conn *c, const uint8_t *p, size_t avail, uint32_t frag_len, bool last)
{
	struct dispatch_peek pk;
	dispatch_peek(c->w->srv->gss, p, avail, &pk);
	size_t align = 0, shift = 0;
	if (pk.write) {
		align = c->w->srv->place_align;
		shift = (size_t)((pk.file_off - pk.payload_idx) & (align - 1));
	}
	size_t room = avail + (c->win > SBUF_SIZE ? c->win : SBUF_SIZE);
	if (recasm_begin(&c->ra, frag_len, last, room < frag_len ? room : frag_len, align, shift) < 0) {
		log_err("out of memory for a record: closing the connection");
		return false;
	}
	return true;
}

static void rec_done(struct conn *c)
{
	uint8_t *rec;
	size_t len;
	uint8_t *mem = recasm_take(&c->ra, &rec, &len);
	size_t charged = mem_rec_done(c, mem ? malloc_usable_size(mem) : 0);
	c->big_records = len >= BIG_RECORD;
	handle_record(c, mem, rec, len, charged, NULL, 0);
}

/* Consume a fragment header from the stream. false: wait for more bytes, or the connection died. */
static bool take_mark(struct conn *c, uint32_t *len, bool *last)
{
	if (c->tail - c->head < 4)
		return false;
	uint32_t m = recmark_get(c->sbuf + c->head);
	*len = recmark_len(m);
	*last = recmark_is_last(m);
	size_t total = (conn_in_rec(c) ? c->ra.len : 0) + *len;
	if (total > c->w->srv->cfg->max_record) {
		char a[INET6_ADDRSTRLEN];
		log_warn("client %s: RPC record of %zu bytes exceeds max_record %zu; closing connection",
			 peer_str(&c->peer, a), total, c->w->srv->cfg->max_record);
		conn_kill(c);
		return false;
	}
	return true;
}

/* Whether the connection may start another request: its own bound and its ring's (conf
 * requests_per_connection, requests_per_ring). A connection held back by its ring is marked, and
 * pumped again when one of the ring's requests ends. */
static bool conn_may_take(struct conn *c)
{
	const struct config *cfg = c->w->srv->cfg;
	if (c->sq_bytes >= SENDQ_MAX || c->inflight >= cfg->requests_per_connection)
		return false;
	if (c->w->inflight >= cfg->requests_per_ring) {
		c->stalled = true;
		c->w->nstalled++;
		return false;
	}
	return true;
}

/* What a READ's reply may hold (its count, up to rtmax), charged to receive_memory from the
 * call's arrival until its reply is sent: 128 READs of 1 MiB in flight are 128 MiB that nothing
 * else bounds, and the payload outlives the request (a reply waits for the socket). A
 * connection's first READ is always taken, as a whole small call is, so that every client goes
 * on; its others wait for room like a large record. 0: not a READ. */
static size_t read_reply_charge(const struct dispatch_peek *pk)
{
	if (!pk->read)
		return 0;
	return pk->read_count < FS_MAXIO ? pk->read_count : FS_MAXIO;
}

/* Bytes of the stream buffer that belong to the record being put together go into it (charged
 * as they go: they arrived). false: stop pumping (waiting for memory, or the connection died). */
static bool rec_take(struct conn *c)
{
	for (;;) {
		size_t k = c->tail - c->head;
		if (k > c->ra.frag_left)
			k = c->ra.frag_left;
		if (k) {
			if (!mem_rec_grow(c))
				return false;
			if (recasm_reserve(&c->ra, c->ra.len + k, c->w->srv->cfg->max_record) < 0) {
				log_err("out of memory for a record: closing the connection");
				conn_kill(c);
				return false;
			}
			recasm_put(&c->ra, c->sbuf + c->head, k);
			c->head += k;
			mem_rec_arrived(c);
		}
		if (c->ra.frag_left)
			return false;       /* rest arrives by direct recv into the record */
		if (c->ra.last) {
			rec_done(c);
			return true;
		}
		uint32_t len;
		bool last;
		if (!take_mark(c, &len, &last))
			return false;
		c->head += 4;
		recasm_next(&c->ra, len, last);
	}
}

/* Handle every complete record in the stream buffer; move partial large ones out of it. */
void conn_pump(struct conn *c)
{
	while (!c->dead && !c->stalled && conn_may_take(c)) {
		if (conn_in_rec(c)) {
			if (!rec_take(c))
				break;
			continue;
		}
		uint32_t len;
		bool last;
		if (!take_mark(c, &len, &last))
			break;
		size_t avail = c->tail - c->head - 4;
		if (last && avail >= len) {
			const uint8_t *rec = c->sbuf + c->head + 4;
			struct dispatch_peek pk;
			dispatch_peek(c->w->srv->gss, rec, len, &pk);
			size_t rd = read_reply_charge(&pk);
			if (rd && !mem_take(c, rd, c->read_charged == 0))
				break;
			c->read_charged += rd;
			mem_run_begin(c, len);
			c->head += 4 + (size_t)len;
			c->big_records = len >= BIG_RECORD;
			handle_record(c, NULL, rec, len, len, &pk, rd);
			continue;
		}
		/* Large or fragmented: wait for enough bytes to find a WRITE's payload, then move out. */
		if (avail < PEEK_MIN && avail < len && c->tail < SBUF_SIZE)
			break;
		/* a record in fragments may grow to max_record: that is what it may hold */
		if (!mem_may_begin(c, last ? len : c->w->srv->cfg->max_record))
			break;
		if (!rec_begin(c, c->sbuf + c->head + 4, avail, len, last)) {
			conn_kill(c);
			return;
		}
		c->head += 4;
	}
	if (c->head == c->tail && !c->recv_busy)
		c->head = c->tail = 0;
	conn_post_recv(c);
	/* The record deadline runs while the current partial record waits for the client: for its
	 * bytes, or for it to read the replies that hold our reading back (not while our own ring
	 * or receive_memory does). handle_record() restarts it for each record. */
	bool partial = conn_in_rec(c) || c->head < c->tail;
	bool clients_turn = c->recv_busy || c->sq_bytes >= SENDQ_MAX;
	if (!partial || !clients_turn)
		c->rec_start_ns = 0;
	else if (!c->rec_start_ns)
		c->rec_start_ns = fiber_now_ns();
}

/* A direct recv into the record ended (res: its result): the window's memory settles; a recv
 * cancelled to take its window back (it brought nothing for a while: recvmem.c) is posted again,
 * small. true: that was it, the connection goes on. */
static bool direct_done(struct conn *c, int res)
{
	bool revoked = c->revoking && res == -ECANCELED && !c->dead && !c->w->stopping;
	c->revoking = false;
	if (revoked) {
		mem_window_revoked(c);
		return true;
	}
	if (res > 0)
		recasm_got(&c->ra, (size_t)res);
	mem_window_done(c, res > 0 ? (size_t)res : 0);
	return false;
}

void conn_on_recv(struct io_op *op, int res)
{
	struct conn *c = (struct conn *)((char *)op - offsetof(struct conn, recv_op));
	c->recv_busy = false;
	if (c->recv_direct && direct_done(c, res)) {
		conn_pump(c);
		conn_settle(c);
		return;
	}
	if (c->w->stopping && !c->dead && !conn_drained(c))
		return;         /* stopping: closed once the owed replies are out */
	if (res <= 0 || c->dead || c->w->stopping) {
		if (res < 0 && res != -ECANCELED && res != -ECONNRESET)
			log_ratelimited(&c->w->srv->sock_log, LOG_INFO, "recv: %s", strerror(-res));
		conn_kill(c);
		conn_settle(c);
		return;
	}
	if (!c->recv_direct)
		c->tail += (size_t)res;
	else if (recasm_whole(&c->ra))
		rec_done(c);        /* received straight into the record */
	c->last_rx_ns = fiber_now_ns();
	conn_pump(c);
	conn_settle(c);
}

/* A direct recv into the record, as large as its window lets it (recvmem.c); nothing while the
 * connection waits for memory. */
static void post_direct(struct conn *c)
{
	size_t n = mem_window(c, c->ra.frag_left);
	if (!n)
		return;
	if (recasm_reserve(&c->ra, c->ra.len + n, c->w->srv->cfg->max_record) < 0) {
		mem_window_done(c, 0);
		log_err("out of memory for a record: closing the connection");
		conn_kill(c);
		return;
	}
	c->recv_busy = true;
	io_ring_recv(c->w->ring, &c->recv_op, c->fd, recasm_tail(&c->ra), n);
}

/* A connection waiting for memory reads nothing more into its stream buffer; one receiving
 * straight into its record asks its window again (mem_window waits, or ends the wait): nothing
 * else would look at it again. */
void conn_post_recv(struct conn *c)
{
	if (c->recv_busy || c->dead || c->w->stopping || c->stalled || !conn_may_take(c))
		return;
	c->recv_direct = conn_in_rec(c) && c->head == c->tail && c->ra.frag_left;
	if (c->recv_direct) {
		post_direct(c);
		return;
	}
	if (c->mem_wait)
		return;
	if (c->tail == SBUF_SIZE && c->head) {
		memmove(c->sbuf, c->sbuf + c->head, c->tail - c->head);
		c->tail -= c->head;
		c->head = 0;
	}
	size_t room = SBUF_SIZE - c->tail;
	if (c->big_records && room > HEAD_RECV)
		room = HEAD_RECV;
	c->recv_busy = true;
	io_ring_recv(c->w->ring, &c->recv_op, c->fd, c->sbuf + c->tail, room);
}

/* ---- the request fiber ---- */

/* One record from decode to its reply on the socket, on the connection's ring. */
static void request_main(void *arg)
{
	struct request *rq = arg;
	struct conn *c = rq->c;
	struct worker *w = c->w;
	struct reply *reply = NULL;
	fiber_set_hooks(fiber_self(), cred_save, cred_restore, &rq->creds);
	worker_request_begin(w);
	dispatch_record(w, &c->peer, &c->local, IPPROTO_TCP, &rq->rm, rq->rec, rq->len, &reply);
	worker_running(w, false);
	fiber_set_hooks(fiber_self(), NULL, NULL, NULL);
	record_mem_release(&rq->rm);
	mem_run_end(c, rq->charged);
	if (reply) {
		reply->charged = rq->read_charge;
	} else if (rq->read_charge) {
		climits_mem_put(w->srv->limits, rq->read_charge);
		c->read_charged -= rq->read_charge;
	}
	free(rq);
	bool was_full = w->inflight >= w->srv->cfg->requests_per_ring;
	c->inflight--;
	w->inflight--;
	if (!c->dead)
		queue_reply(c, reply);
	else if (reply)
		reply_done(c, reply);
	if (w->stopping && conn_drained(c))
		conn_kill(c);
	else
		conn_pump(c);
	conn_settle(c);
	if (was_full && w->nstalled)
		server_ring_unstall(w);
	if (w->nmem_wait)
		mem_retry(w);
}

/* ---- the ring's side ---- */

void server_ring_unstall(struct worker *w)
{
	for (struct conn *c = w->conns, *next; c && w->inflight < w->srv->cfg->requests_per_ring; c = next) {
		next = c->next;
		if (!c->stalled)
			continue;
		c->stalled = false;
		w->nstalled--;
		conn_pump(c);
		conn_settle(c);
	}
}

/* Once a second: a connection whose record has been arriving for longer than record_timeout (a
 * client trickling bytes holds a record buffer) and one silent for idle_timeout (knfsd closes
 * those after 6 minutes; clients reconnect when they need to) are closed. */
static void on_conn_timer(struct fiber_timer *t)
{
	struct worker *w = (struct worker *)((char *)t - offsetof(struct worker, conn_timer));
	const struct config *cfg = w->srv->cfg;
	uint64_t now = fiber_now_ns();
	char a[INET6_ADDRSTRLEN];
	if (w->stopping)
		return;
	for (struct conn *c = w->conns, *next; c; c = next) {
		next = c->next;
		if (c->dead)
			continue;
		if (c->rec_start_ns && now - c->rec_start_ns > cfg->record_timeout * SEC_NS) {
			climits_count(w->srv->limits, CLE_SLOW);
			log_ratelimited(&w->srv->slow_log, LOG_WARNING,
					"client %s: a record still incomplete after record_timeout = %u s; "
					"closing the connection", peer_str(&c->peer, a), cfg->record_timeout);
		} else if (c->sq_head && now - c->last_tx_ns > cfg->record_timeout * SEC_NS) {
			climits_count(w->srv->limits, CLE_SLOW);
			log_ratelimited(&w->srv->slow_log, LOG_WARNING,
					"client %s: reads no reply for record_timeout = %u s; closing the "
					"connection", peer_str(&c->peer, a), cfg->record_timeout);
		} else if (cfg->idle_timeout && conn_idle(c) &&
			   now - c->last_rx_ns > cfg->idle_timeout * SEC_NS) {
			climits_count(w->srv->limits, CLE_IDLE);
			log_debug("client %s: idle for %u s: closing the connection",
				  peer_str(&c->peer, a), cfg->idle_timeout);
		} else {
			continue;
		}
		conn_kill(c);
		conn_settle(c);
	}
	fiber_timer_arm(t, now + SEC_NS);
}

void server_ring_start(struct worker *w)
{
	w->conn_timer.fire = on_conn_timer;
	fiber_timer_arm(&w->conn_timer, fiber_now_ns() + SEC_NS);
	if (w->id != 0)
		return;
	accept_start(w);
	for (size_t i = 0; i < w->srv->nudp_fds; i++)
		if (!(w->dgrams[i] = dgram_start(w, w->srv->udp_fd[i])))
			log_err("out of memory for a UDP socket");
}

void server_ring_stop(struct worker *w)
{
	fiber_timer_disarm(&w->conn_timer);
	mem_ring_stop(w);
	accept_stop(w);
	for (size_t i = 0; i < w->srv->nudp_fds; i++)
		dgram_stop(w->dgrams[i]);
	/* Connections finish the replies they owe, then close. */
	for (struct conn *c = w->conns, *next; c; c = next) {
		next = c->next;
		if (c->recv_busy) {
			io_ring_cancel_fd(w->ring, c->fd);
		} else if (conn_drained(c)) {
			conn_kill(c);
			conn_settle(c);
		}
	}
}

bool server_ring_closed(const struct worker *w)
{
	return !w->conns;
}

void server_ring_free(struct worker *w)
{
	while (w->conns)
		conn_free(w->conns);
	for (size_t i = 0; i < SVC_LISTEN_MAX; i++) {
		free(w->listeners[i]);   /* their accepts ended with the loop */
		w->listeners[i] = NULL;
	}
	for (size_t i = 0; i < SVC_UDP_MAX; i++) {
		dgram_free(w->dgrams[i]);
		w->dgrams[i] = NULL;
	}
}

