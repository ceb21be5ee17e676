/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Connections, on the ring that owns them from accept to close. Each one reads its byte stream
 * into a small buffer and handles the records found there in place. A record larger than what the
 * buffer holds (a WRITE) is received into a buffer of its own, placed so that the payload's
 * address is congruent to its file offset modulo 64 KiB: the whole-block middle of the WRITE is
 * then aligned in memory for O_DIRECT, with no copy for the bytes received straight into it.
 * Every complete record runs as a fiber on this ring (decode, handler, encode), and its reply is
 * queued on the connection by the fiber itself: no queue between threads. */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "bcache.h"
#include "cred.h"
#include "dgram.h"
#include "dispatch.h"
#include "export.h"
#include "fileio.h"
#include "io/fiber.h"
#include "io/ring.h"
#include "connlimit.h"
#include "log.h"
#include "pmap/pmap.h"
#include "rpc/recmark.h"
#include "worker.h"

#define SBUF_SIZE (64 * 1024)
#define PEEK_MIN 512              /* bytes of a large record needed to find a WRITE's payload */
/* A record this large is received into its own placed buffer, not through the stream buffer, when
 * the one before it was as large too: the stream buffer then takes only HEAD_RECV bytes (the
 * record mark, the call's header and a WRITE's arguments), not the next records' payloads, each
 * of which would be copied out of it again. */
#define BIG_RECORD (16 * 1024)
#define HEAD_RECV 1024
#define SENDQ_MAX (8u << 20)      /* stop reading requests while this much reply data is queued */
#define ACCEPT_BACKOFF_NS (100 * 1000 * 1000ull)   /* out of descriptors: try again after this */
#define SEC_NS 1000000000ull
#define MEM_RETRY_NS (10 * 1000 * 1000ull) /* waiting for record memory freed on another ring */

struct conn {
	struct conn *next, *prev;
	struct worker *w;
	unsigned inflight;            /* its requests running: it is not freed before they end */
	int fd;
	struct sockaddr_storage peer;
	struct sockaddr_storage local;   /* our address the client connected to */
	struct io_op recv_op, send_op;
	bool recv_busy, send_busy, dead;
	bool recv_direct;             /* the pending recv targets the record, not the stream buffer */
	bool big_records;             /* its last record was large: read the next one's head alone */
	bool stalled;                 /* stopped reading because its ring was full */
	bool mem_wait;                /* stopped reading: record memory is at receive_memory */
	uint64_t last_rx_ns;          /* when bytes last came (idle_timeout) */
	uint64_t rec_start_ns;        /* since when a record is arriving, 0: none (record_timeout) */
	uint64_t last_tx_ns;          /* when a send last made progress (a client not reading) */
	size_t rec_charged;           /* record memory charged for rec_mem */
	size_t read_charged;          /* charged for its READs' replies, running or unsent */
	/* stream buffer: bytes [head, tail) not yet consumed */
	uint8_t *sbuf;
	size_t head, tail;
	/* record being assembled outside the stream buffer */
	uint8_t *rec_mem, *rec;
	size_t rec_len, rec_cap;
	uint32_t frag_left;
	bool in_rec, last_frag;
	/* replies waiting for the socket; the head one is being sent */
	struct reply *sq_head, *sq_tail;
	size_t sq_bytes;
	struct iovec iov[3];
	struct iovec *iov_big;        /* a reply with many payload iovecs (iov_cap of them) */
	size_t iov_cap;
	struct msghdr msg;
};

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

static void mem_retry(struct worker *w);

/* Ring 0's accept on one listener. */
struct listener {
	struct io_op op;
	struct worker *w;
	int fd;
	struct sockaddr_storage addr;
	socklen_t alen;
	struct fiber_timer backoff;
};

/* A connection accepted by ring 0 for another ring. */
struct handoff {
	struct fiber_msg msg;
	struct worker *w;
	int fd;
	struct sockaddr_storage peer;
	enum climit_verdict verdict;
};

static void conn_pump(struct conn *c);
static void conn_post_recv(struct conn *c);

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

static void conn_free(struct conn *c)
{
	struct worker *w = c->w;
	if (c->stalled)
		w->nstalled--;
	if (c->mem_wait)
		w->nmem_wait--;
	if (c->rec_charged)
		climits_mem_put(w->srv->limits, c->rec_charged);
	climits_close(w->srv->limits, &c->peer);
	if (c->prev) c->prev->next = c->next; else w->conns = c->next;
	if (c->next) c->next->prev = c->prev;
	close(c->fd);
	while (c->sq_head) {
		struct reply *r = c->sq_head;
		c->sq_head = r->next;
		reply_done(c, r);
	}
	free(c->rec_mem);
	free(c->iov_big);
	free(c->sbuf);
	free(c);
}

/* Stop using the connection. It is freed by conn_settle(), which every completion callback calls
 * last, once no operation of ours is in flight: nothing below a callback ever frees it. */
static void conn_kill(struct conn *c)
{
	if (!c->dead) {
		c->dead = true;
		if (c->recv_busy || c->send_busy)
			io_ring_cancel_fd(c->w->ring, c->fd);
	}
}

static void conn_settle(struct conn *c)
{
	if (c->dead && !c->recv_busy && !c->send_busy && !c->inflight)
		conn_free(c);
}

/* A stopping loop closes a connection once it owes nothing more. */
static bool conn_drained(const struct conn *c)
{
	return !c->recv_busy && !c->send_busy && !c->sq_head && !c->inflight;
}

/* ---- sending ---- */

static void send_next(struct conn *c);

static void on_send(struct io_op *op, int res)
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

/* Room for the reply's iovecs: the connection's three, or a larger array it keeps for replies
 * whose payload is many pieces (a READ answered from cached blocks). NULL: no memory. */
static struct iovec *reply_iov(struct conn *c, const struct reply *r)
{
	size_t need = 2 + (r->payload_iov ? (size_t)r->payload_iovcnt : 1);
	if (need <= 3)
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
		static const uint8_t zeros[4];
		struct iovec *v = reply_iov(c, r);
		if (!v) {
			log_err("out of memory for a reply: closing the connection");
			conn_kill(c);
			return;
		}
		int n = 0;
		v[n++] = (struct iovec){r->hdr, r->hdr_len};
		if (r->payload_iov) {
			memcpy(v + n, r->payload_iov, (size_t)r->payload_iovcnt * sizeof *v);
			n += r->payload_iovcnt;
		} else if (r->payload_len) {
			v[n++] = (struct iovec){r->payload, r->payload_len};
		}
		if (r->pad)
			v[n++] = (struct iovec){(void *)zeros, r->pad};
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
	c->sq_bytes += r->hdr_len + r->payload_len + r->pad;
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
		*start = malloc(len ? len : 1);    /* not a WRITE: no alignment to keep */
		return *start;
	}
	size_t shift = (size_t)((pk->file_off - pk->payload_idx) & (align - 1));
	void *mem = NULL;
	/* posix_memalign: C11's aligned_alloc wants the size a multiple of the alignment, which
	 * would cost a small WRITE 64 KiB. */
	if (posix_memalign(&mem, align, shift + len) != 0)
		mem = NULL;
	*start = mem ? (uint8_t *)mem + shift : NULL;
	return mem;
}

static void request_main(void *arg);

struct bcache_buf *record_buf(struct record_mem *rm)
{
	if (!rm)
		return NULL;
	/* The whole allocation counts: header and slack too. NULL: the cache copies instead. */
	if (!rm->hold)
		rm->hold = bcache_buf_heap(rm->mem, malloc_usable_size(rm->mem));
	return rm->hold;
}

void record_mem_release(struct record_mem *rm)
{
	if (rm->hold)
		bcache_buf_put(rm->hold);
	else
		free(rm->mem);
	rm->mem = NULL;
	rm->hold = NULL;
}

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
				       .creds = {.w = c->w}};
	/* The fiber first runs at the loop's next turn, not inside this call. */
	if (!rq || !mem || fiber_spawn(c->w->sched, request_main, rq) < 0) {
		log_err("out of memory for a request: closing the connection");
		climits_mem_put(c->w->srv->limits, charged + read_charge);
		c->read_charged -= read_charge;
		free(rq);
		free(mem);
		conn_kill(c);
		return;
	}
	c->inflight++;
	c->w->inflight++;
}

static bool rec_begin(struct conn *c, const uint8_t *p, size_t avail, uint32_t frag_len)
{
	struct dispatch_peek pk;
	dispatch_peek(p, avail, &pk);
	c->rec_mem = place_record(&pk, frag_len, c->w->srv->place_align, &c->rec);
	if (!c->rec_mem) {
		climits_mem_put(c->w->srv->limits, frag_len);
		return false;
	}
	c->rec_charged = frag_len;
	c->rec_cap = frag_len;
	c->rec_len = 0;
	c->in_rec = true;
	return true;
}

/* Make room for a further fragment (rare: clients send one fragment per record). */
static bool rec_grow(struct conn *c, size_t need)
{
	if (c->rec_len + need <= c->rec_cap)
		return true;
	size_t cap = c->rec_len + need;
	size_t align = c->w->srv->place_align;
	uint8_t *m = aligned_alloc(align, (cap + 2 * align - 1) & ~(align - 1));
	if (!m)
		return false;
	/* A record already begun goes on: refusing it memory now would only stall it. */
	climits_mem_force(c->w->srv->limits, cap - c->rec_cap);
	c->rec_charged += cap - c->rec_cap;
	size_t shift = (size_t)(c->rec - c->rec_mem);
	memcpy(m + shift, c->rec, c->rec_len);
	free(c->rec_mem);
	c->rec_mem = m;
	c->rec = m + shift;
	c->rec_cap = cap;
	return true;
}

static void rec_done(struct conn *c)
{
	c->big_records = c->rec_len >= BIG_RECORD;
	handle_record(c, c->rec_mem, c->rec, c->rec_len, c->rec_charged, NULL, 0);
	c->rec_charged = 0;
	c->rec_mem = c->rec = NULL;
	c->in_rec = false;
}

/* Consume a fragment header from the stream. false: wait for more bytes, or the connection died. */
static bool take_mark(struct conn *c, uint32_t *len, bool *last)
{
	if (c->tail - c->head < 4)
		return false;
	uint32_t m = recmark_get(c->sbuf + c->head);
	*len = recmark_len(m);
	*last = recmark_is_last(m);
	size_t total = (c->in_rec ? c->rec_len : 0) + *len;
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

static void on_mem_timer(struct fiber_timer *t);

/* What a READ's reply may hold (its count, up to rtmax), charged to receive_memory from the
 * call's arrival until its reply is sent: 128 READs of 1 MiB in flight are 128 MiB that nothing
 * else bounds, and the payload outlives the request (a reply waits for the socket). A
 * connection's first READ is always taken, as a whole small call is, so that every client goes
 * on; its others wait for room like a large record. 0: not a READ. */
static size_t read_reply_charge(const struct dispatch_peek *pk)
{
	if (!pk->read)
		return 0;
	return pk->read_count < NFS3_MAXIO ? pk->read_count : NFS3_MAXIO;
}

/* Charge a large record (one that arrives into a buffer of its own, and so may sit there half
 * received for as long as its client likes) to receive_memory, or mark the connection as waiting
 * for it: it stops reading, and a ring that frees record memory, or this ring's retry timer,
 * pumps it again. Records already begun always finish: they are what frees memory. A record
 * that fits in the stream buffer and is whole is always taken (charged all the same): it runs at
 * once, and a new client's calls must not wait behind other clients' half-sent WRITEs.
 * force: charge it whatever the bound says. */
static bool take_mem(struct conn *c, size_t len, bool force)
{
	struct worker *w = c->w;
	if (force)
		climits_mem_force(w->srv->limits, len);
	if (force || climits_mem_take(w->srv->limits, len)) {
		if (c->mem_wait) {
			c->mem_wait = false;
			w->nmem_wait--;
		}
		return true;
	}
	if (!c->mem_wait) {
		c->mem_wait = true;
		w->nmem_wait++;
		climits_count(w->srv->limits, CLE_MEM_WAIT);
		log_ratelimited(&w->srv->mem_log, LOG_WARNING,
				"receive_memory (%zu bytes) in use: connections wait to be read",
				w->srv->cfg->receive_memory);
	}
	if (!w->mem_timer.armed) {
		w->mem_timer.fire = on_mem_timer;
		fiber_timer_arm(&w->mem_timer, fiber_now_ns() + MEM_RETRY_NS);
	}
	return false;
}

/* Look again at the connections waiting for record memory, until one still finds none. */
static void mem_retry(struct worker *w)
{
	for (struct conn *c = w->conns, *next; c && w->nmem_wait; c = next) {
		next = c->next;
		if (!c->mem_wait)
			continue;
		conn_pump(c);
		bool full = c->mem_wait;
		conn_settle(c);
		if (full)
			break;    /* still full: the others would fail the same way */
	}
}

static void on_mem_timer(struct fiber_timer *t)
{
	struct worker *w = (struct worker *)((char *)t - offsetof(struct worker, mem_timer));
	if (!w->stopping)
		mem_retry(w);
}

/* Handle every complete record in the stream buffer; move partial large ones out of it. */
static void conn_pump(struct conn *c)
{
	while (!c->dead && !c->stalled && conn_may_take(c)) {
		if (c->in_rec) {
			size_t k = c->tail - c->head;
			if (k > c->frag_left)
				k = c->frag_left;
			memcpy(c->rec + c->rec_len, c->sbuf + c->head, k);
			c->head += k;
			c->rec_len += k;
			c->frag_left -= (uint32_t)k;
			if (c->frag_left)
				break;          /* rest arrives by direct recv into the record */
			if (c->last_frag) {
				rec_done(c);
				continue;
			}
			uint32_t len;
			bool last;
			if (!take_mark(c, &len, &last))
				break;
			if (!rec_grow(c, len)) {
				conn_kill(c);
				return;
			}
			c->head += 4;
			c->frag_left = len;
			c->last_frag = last;
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
			dispatch_peek(rec, len, &pk);
			size_t rd = read_reply_charge(&pk);
			if (rd && !take_mem(c, rd, c->read_charged == 0))
				break;
			c->read_charged += rd;
			climits_mem_force(c->w->srv->limits, len);
			c->head += 4 + (size_t)len;
			c->big_records = len >= BIG_RECORD;
			handle_record(c, NULL, rec, len, len, &pk, rd);
			continue;
		}
		/* Large or fragmented: wait for enough bytes to find a WRITE's payload, then move out. */
		if (avail < PEEK_MIN && avail < len && c->tail < SBUF_SIZE)
			break;
		if (!take_mem(c, len, false))
			break;
		if (!rec_begin(c, c->sbuf + c->head + 4, avail, len)) {
			conn_kill(c);
			return;
		}
		c->head += 4;
		c->frag_left = len;
		c->last_frag = last;
	}
	if (c->head == c->tail && !c->recv_busy)
		c->head = c->tail = 0;
	conn_post_recv(c);
	/* The record deadline runs while the current partial record waits for the client: for its
	 * bytes, or for it to read the replies that hold our reading back (not while our own ring
	 * or receive_memory does). handle_record() restarts it for each record. */
	bool partial = c->in_rec || c->head < c->tail;
	bool clients_turn = c->recv_busy || c->sq_bytes >= SENDQ_MAX;
	if (!partial || !clients_turn)
		c->rec_start_ns = 0;
	else if (!c->rec_start_ns)
		c->rec_start_ns = fiber_now_ns();
}

static void on_recv(struct io_op *op, int res)
{
	struct conn *c = (struct conn *)((char *)op - offsetof(struct conn, recv_op));
	c->recv_busy = false;
	if (c->w->stopping && !c->dead && !conn_drained(c))
		return;         /* stopping: closed once the owed replies are out */
	if (res <= 0 || c->dead || c->w->stopping) {
		if (res < 0 && res != -ECANCELED && res != -ECONNRESET)
			log_ratelimited(&c->w->srv->sock_log, LOG_INFO, "recv: %s", strerror(-res));
		conn_kill(c);
		conn_settle(c);
		return;
	}
	if (c->recv_direct) {
		/* received straight into the record */
		c->rec_len += (size_t)res;
		c->frag_left -= (uint32_t)res;
		if (c->frag_left == 0 && c->last_frag)
			rec_done(c);
	} else {
		c->tail += (size_t)res;
	}
	c->last_rx_ns = fiber_now_ns();
	conn_pump(c);
	conn_settle(c);
}

static void conn_post_recv(struct conn *c)
{
	if (c->recv_busy || c->dead || c->w->stopping || c->stalled || c->mem_wait ||
	    !conn_may_take(c))
		return;
	c->recv_busy = true;
	c->recv_direct = c->in_rec && c->head == c->tail && c->frag_left;
	if (c->recv_direct) {
		io_ring_recv(c->w->ring, &c->recv_op, c->fd, c->rec + c->rec_len, c->frag_left);
		return;
	}
	if (c->tail == SBUF_SIZE && c->head) {
		memmove(c->sbuf, c->sbuf + c->head, c->tail - c->head);
		c->tail -= c->head;
		c->head = 0;
	}
	size_t room = SBUF_SIZE - c->tail;
	if (c->big_records && room > HEAD_RECV)
		room = HEAD_RECV;
	io_ring_recv(c->w->ring, &c->recv_op, c->fd, c->sbuf + c->tail, room);
}

/* ---- accepting ---- */

/* Nothing in flight, owed or half received: the connection only waits for the client. */
static bool conn_idle(const struct conn *c)
{
	return !c->inflight && !c->sq_head && !c->in_rec && c->head == c->tail;
}

/* The connection of this ring to close for a new one (of peer's address, when given): one with
 * nothing in flight or owed, preferring one with nothing half received either, and among those
 * the one silent longest (a record begun long ago and never finished goes before an active
 * sender's). NULL if every one is busy. */
static struct conn *conn_victim(struct worker *w, const struct sockaddr_storage *peer)
{
	struct conn *best = NULL;
	for (struct conn *c = w->conns; c; c = c->next) {
		if (c->dead || c->inflight || c->sq_head ||
		    (peer && !export_same_host((const struct sockaddr *)&c->peer,
					       (const struct sockaddr *)peer)))
			continue;
		bool idle = conn_idle(c), best_idle = best && conn_idle(best);
		if (!best || (idle && !best_idle) ||
		    (idle == best_idle && c->last_rx_ns < best->last_rx_ns))
			best = c;
	}
	return best;
}

/* Over a connection limit: as knfsd does, the longest idle connection goes to let the new one
 * in (a client reconnecting is served; one that opens connections without end only churns its
 * own). If none is idle, the new one is refused. */
static bool make_room(struct worker *w, const struct sockaddr_storage *peer, enum climit_verdict v)
{
	const struct config *cfg = w->srv->cfg;
	const char *what = v == CL_OVER_CLIENT ? "connections_per_client" : "connections";
	unsigned limit = v == CL_OVER_CLIENT ? cfg->max_connections_per_client : cfg->max_connections;
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	struct conn *victim = conn_victim(w, v == CL_OVER_CLIENT ? peer : NULL);
	if (!victim) {
		climits_count(w->srv->limits, CLE_REFUSED);
		log_ratelimited(&w->srv->limit_log, LOG_WARNING,
				"%s = %u reached and none idle: refusing a connection from %s", what,
				limit, peer_str(peer, a));
		return false;
	}
	climits_count(w->srv->limits, CLE_EVICTED);
	log_ratelimited(&w->srv->limit_log, LOG_WARNING,
			"%s = %u reached: closing the longest idle connection (from %s) for one from %s",
			what, limit, peer_str(&victim->peer, b), peer_str(peer, a));
	conn_kill(victim);
	conn_settle(victim);
	return true;
}

/* On the connection's own ring: from here on only this ring touches it. It was counted by
 * climits_open() (verdict), and is uncounted when freed, or here if it never opens. */
static void conn_open(struct worker *w, int fd, const struct sockaddr_storage *peer,
		      enum climit_verdict verdict)
{
	struct conn *c = NULL;
	uint8_t *sbuf = NULL;
	if (!w->stopping && (verdict == CL_OK || make_room(w, peer, verdict))) {
		c = calloc(1, sizeof *c);
		sbuf = malloc(SBUF_SIZE);
		if (!c || !sbuf)
			log_err("out of memory for a connection: closing it");
	}
	if (!c || !sbuf) {
		free(c);
		free(sbuf);
		climits_close(w->srv->limits, peer);
		close(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->w = w;
	c->fd = fd;
	c->sbuf = sbuf;
	c->peer = *peer;
	socklen_t llen = sizeof c->local;
	if (getsockname(fd, (struct sockaddr *)&c->local, &llen) < 0)
		c->local.ss_family = AF_UNSPEC;
	c->last_rx_ns = fiber_now_ns();
	c->recv_op.cb = on_recv;
	c->send_op.cb = on_send;
	c->next = w->conns;
	if (w->conns)
		w->conns->prev = c;
	w->conns = c;
	conn_post_recv(c);
}

static void on_handoff(struct fiber_msg *m)
{
	struct handoff *h = (struct handoff *)m;
	conn_open(h->w, h->fd, &h->peer, h->verdict);
	free(h);
}

/* Connections go to the rings in turn: each ring then owns its share from accept to close. */
static void place_conn(struct worker *acceptor, int fd, const struct sockaddr_storage *peer)
{
	struct server *srv = acceptor->srv;
	struct worker *w = &srv->workers[srv->next_ring++ % srv->nworkers];
	enum climit_verdict v = climits_open(srv->limits, peer);
	if (w == acceptor) {
		conn_open(w, fd, peer, v);
		return;
	}
	struct handoff *h = malloc(sizeof *h);
	if (!h) {
		log_err("out of memory for a connection: closing it");
		climits_close(srv->limits, peer);
		close(fd);
		return;
	}
	*h = (struct handoff){.msg = {.fn = on_handoff}, .w = w, .fd = fd, .peer = *peer,
			      .verdict = v};
	fiber_sched_post(w->sched, &h->msg);
}

static void accept_again(struct listener *l)
{
	l->alen = sizeof l->addr;
	io_ring_accept(l->w->ring, &l->op, l->fd, (struct sockaddr *)&l->addr, &l->alen);
}

static void on_backoff(struct fiber_timer *t)
{
	struct listener *l = (struct listener *)((char *)t - offsetof(struct listener, backoff));
	if (!l->w->stopping)
		accept_again(l);
}

static void on_accept(struct io_op *op, int res)
{
	struct listener *l = (struct listener *)op;
	struct worker *w = l->w;
	if (res >= 0) {
		if (w->stopping)
			close(res);
		else
			place_conn(w, res, &l->addr);
	} else if (res != -ECANCELED) {
		log_ratelimited(&w->srv->accept_errors, LOG_WARNING, "accept: %s", strerror(-res));
		if (!w->stopping && (res == -EMFILE || res == -ENFILE || res == -ENOMEM ||
				     res == -ENOBUFS)) {
			/* Out of descriptors or memory: the next accept would fail the same way at
			 * once. Try again later instead of spinning. */
			l->backoff.fire = on_backoff;
			fiber_timer_arm(&l->backoff, fiber_now_ns() + ACCEPT_BACKOFF_NS);
			return;
		}
	}
	if (!w->stopping)
		accept_again(l);     /* stopping: the listener is freed with the ring (server_ring_free) */
}

int server_bind(const char *addr, uint16_t port, int type, bool v6only)
{
	struct sockaddr_storage ss;
	socklen_t len = export_addr_parse(addr, port, &ss);
	if (!len)
		return -EINVAL;
	int fd = socket(ss.ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	/* SO_REUSEADDR only: with SO_REUSEPORT a second daemon started on the same port would
	 * silently share its connections instead of failing. */
	if ((type & 0xf) == SOCK_STREAM)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ss.ss_family == AF_INET6 && v6only)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static int listen_on(const char *addr, uint16_t port, bool v6only)
{
	int fd = server_bind(addr, port, SOCK_STREAM, v6only);
	if (fd >= 0 && listen(fd, SOMAXCONN) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* A daemon killed with SIGKILL leaves its listening sockets to the kernel's deferred io_uring
 * teardown, which can outlive the process by a fraction of a second; a supervisor that restarts
 * at once would otherwise fail.  Another live server on the port still fails, after the wait. */
#define LISTEN_RETRY_MS 10000

static int listen_retrying(const char *addr, uint16_t port, bool v6only)
{
	int fd = listen_on(addr, port, v6only);
	for (int waited = 0; fd == -EADDRINUSE && waited < LISTEN_RETRY_MS; waited += 100) {
		if (waited == 0)
			log_warn("%s port %u is in use; retrying for up to %d s", addr, port,
				 LISTEN_RETRY_MS / 1000);
		nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
		fd = listen_on(addr, port, v6only);
	}
	return fd;
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
	climits_mem_put(w->srv->limits, rq->charged);
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
	for (size_t i = 0; i < w->srv->nlisten_fds; i++) {
		struct listener *l = calloc(1, sizeof *l);
		if (!l) {
			log_err("out of memory for a listener");
			continue;
		}
		l->op.cb = on_accept;
		l->w = w;
		l->fd = w->srv->listen_fd[i];
		w->listeners[i] = l;
		accept_again(l);
	}
	for (size_t i = 0; i < w->srv->nudp_fds; i++)
		if (!(w->dgrams[i] = dgram_start(w, w->srv->udp_fd[i])))
			log_err("out of memory for a UDP socket");
}

void server_ring_stop(struct worker *w)
{
	fiber_timer_disarm(&w->conn_timer);
	fiber_timer_disarm(&w->mem_timer);
	for (size_t i = 0; i < w->srv->nlisten_fds; i++)
		if (w->listeners[i]) {
			fiber_timer_disarm(&w->listeners[i]->backoff);   /* backing off: no accept to cancel */
			io_ring_cancel_fd(w->ring, w->srv->listen_fd[i]);
		}
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
	for (size_t i = 0; i < SERVER_LISTEN_MAX; i++) {
		free(w->listeners[i]);   /* their accepts ended with the loop */
		w->listeners[i] = NULL;
	}
	for (size_t i = 0; i < SERVER_UDP_MAX; i++) {
		dgram_free(w->dgrams[i]);
		w->dgrams[i] = NULL;
	}
}

/* The TCP ports served on each listen address (tcp) or the UDP ones (!tcp), duplicates once:
 * NFS (TCP only), MOUNT, the lock manager's NLM and NSM when it runs, the portmapper when we are
 * it. n of them in ports. */
static size_t served_ports(const struct server *srv, bool tcp, uint16_t ports[4])
{
	const struct config *cfg = srv->cfg;
	uint16_t want[4] = {tcp ? cfg->port : 0, cfg->mount_port, srv->nlm ? cfg->lock_port : 0,
			    srv->pmap ? PMAP_PORT : 0};
	size_t n = 0;
	for (size_t i = 0; i < 4; i++) {
		bool dup = !want[i];
		for (size_t j = 0; j < n && !dup; j++)
			dup = ports[j] == want[i];
		if (!dup)
			ports[n++] = want[i];
	}
	return n;
}

/* The portmapper's port taken by something else is not fatal unless rpcbind = own: clients can
 * still be given the ports. */
static bool port_optional(const struct server *srv, uint16_t port)
{
	return port == PMAP_PORT && srv->cfg->rpcbind != RPCBIND_OWN;
}

static int open_port(struct server *srv, const char *addr, uint16_t port, bool tcp, bool v6only)
{
	int fd = tcp ? listen_retrying(addr, port, v6only) : dgram_open(addr, port, v6only);
	if (fd >= 0) {
		if (tcp)
			srv->listen_fd[srv->nlisten_fds++] = fd;
		else
			srv->udp_fd[srv->nudp_fds++] = fd;
		return 0;
	}
	if (port_optional(srv, port)) {
		log_warn("listen on %s %s port %u: %s: not serving the portmapper there", addr,
			 tcp ? "TCP" : "UDP", port, strerror(-fd));
		return 0;
	}
	log_err("listen on %s %s port %u: %s", addr, tcp ? "TCP" : "UDP", port, strerror(-fd));
	return -1;
}

/* Whether the listen addresses reach 127.0.0.1 already (a wildcard, or a loopback address). */
static bool reaches_loopback(const struct config *cfg)
{
	for (size_t a = 0; a < cfg->nlisten; a++) {
		const char *s = cfg->listen_addr[a];
		if (strcmp(s, "0.0.0.0") == 0 || strncmp(s, "127.", 4) == 0 ||
		    (strcmp(s, "::") == 0 && cfg->nlisten == 1))
			return true;
	}
	return false;
}

int server_listen(struct server *srv)
{
	const struct config *cfg = srv->cfg;
	srv->nlisten_fds = srv->nudp_fds = 0;
	/* With several addresses, "::" means IPv6 alone: 0.0.0.0 beside it is the IPv4 side. */
	bool v6only = cfg->nlisten > 1;
	for (int tcp = 1; tcp >= 0; tcp--) {
		uint16_t ports[4];
		size_t n = served_ports(srv, tcp, ports);
		for (size_t a = 0; a < cfg->nlisten; a++)
			for (size_t i = 0; i < n; i++)
				if (open_port(srv, cfg->listen_addr[a], ports[i], tcp, v6only) < 0) {
					server_unlisten(srv);
					return -1;
				}
		/* Local services (a host's own lockd, say) register with the portmapper over
		 * loopback, whatever addresses clients use. */
		if (srv->pmap && !reaches_loopback(cfg))
			open_port(srv, "127.0.0.1", PMAP_PORT, tcp, v6only);
	}
	return 0;
}

void server_unlisten(struct server *srv)
{
	for (size_t i = 0; i < srv->nlisten_fds; i++)
		close(srv->listen_fd[i]);
	for (size_t i = 0; i < srv->nudp_fds; i++)
		close(srv->udp_fd[i]);
	srv->nlisten_fds = srv->nudp_fds = 0;
}
