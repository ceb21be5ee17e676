/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Receive memory (conf receive_memory): what the records being received or run and the READ
 * replies not yet sent hold, over every ring (connlimit.h keeps the count), and one connection's
 * share of it (receive_memory_per_connection).
 *
 * A record's bytes are charged as they arrive, never as its record mark promises them: clients
 * that each sent the mark of a 1 MiB WRITE and 600 bytes of it once held the whole bound, and
 * every other client's WRITE waited until record_timeout closed them. A direct receive into a
 * record asks for at most the connection's window: one of a stream buffer's size (64 KiB) is
 * charged when its bytes come, like a read into the stream buffer; a larger one is charged
 * before the receive is posted, so that the bound holds however many connections receive at once.
 * The window doubles whenever the record has received half of it, up to a record: a client
 * that streams WRITEs gets each in one receive, charged once, into a buffer allocated whole, as
 * before; one that sent nothing has no more than a stream buffer's worth charged or allocated. Each ring takes back the charged windows of
 * receives that brought nothing for STALL_NS (the recv is cancelled and posted again, small): a
 * client that earned a large window and then stopped sending holds it a tenth of a second, not
 * until record_timeout. So a client that promises and does not send holds what it sent.
 *
 * A client address's connections together hold at most its share (receive_memory_per_client):
 * one client with many connections, each holding its own share in unread READ replies or
 * half-sent records, would otherwise take all of the bound, and every other client's records
 * would wait for record_timeout. That share counts a record at its announced size from its
 * start (max_record when it comes in fragments), and is asked only before a record begins or a
 * READ is taken: a record once begun never waits for it, so that a client's records, each
 * waiting for another's memory, cannot hold each other up.
 *
 * Records begun always have a way to finish: past the bound, one begun record per ring at a time
 * goes on (the ring's token), so that half-received records filling receive_memory (their
 * clients sent that much and stopped) cannot stop every record for good. A holder whose bytes
 * stop coming for STALL_NS gives the token up to the next record that waits: one client that
 * stalls with it would otherwise hold every other record of its ring until record_timeout. */
#include <sys/mman.h>
#include <unistd.h>

#include "svc/conn.h"
#include "base/bufstash.h"
#include "io/fiber.h"
#include "io/ring.h"
#include "base/log.h"
#include "svc/worker.h"

#define RECV_WIN_MIN SBUF_SIZE        /* charged when it arrives, like a stream buffer's read */
#define MEM_RETRY_NS (10 * 1000 * 1000ull) /* waiting for record memory freed on another ring */
#define STALL_NS (100 * 1000 * 1000ull)    /* a charged window that brought nothing for this long */
#define WIN_CHECK_NS (50 * 1000 * 1000ull)

static size_t conn_held(const struct conn *c)
{
	return c->rec_charged + c->run_charged + c->read_charged;
}

/* Within its share? A connection holding nothing always is. */
static bool share_room(const struct conn *c, size_t n)
{
	size_t held = conn_held(c);
	return held == 0 || held + n <= climits_mem_share(c->w->srv->limits);
}

/* Its part of its client's account: the record being received counts its promise. */
static size_t client_part(const struct conn *c)
{
	size_t rec = c->rec_charged > c->rec_promise ? c->rec_charged : c->rec_promise;
	return c->run_charged + c->read_charged + rec;
}

void mem_client_sync(struct conn *c)
{
	if (!c->client)
		return;
	size_t now = client_part(c);
	if (now > c->client_part)
		climits_client_add(c->client, now - c->client_part);
	else if (now < c->client_part)
		climits_client_sub(c->client, c->client_part - now);
	c->client_part = now;
}

/* n bytes more within the client's share? When all the client holds is this connection's, its
 * own share decides. */
static bool client_room(struct conn *c, size_t n)
{
	if (!c->client)
		return true;
	mem_client_sync(c);
	size_t held = climits_client_held(c->client);
	return held <= c->client_part || held + n <= climits_client_share(c->w->srv->limits);
}

static void on_mem_timer(struct fiber_timer *t);
static void on_win_timer(struct fiber_timer *t);

/* The stall check runs while a window is charged or the token held. */
static void win_timer_arm(struct worker *w, uint64_t now)
{
	if (!w->win_timer.armed) {
		w->win_timer.fire = on_win_timer;
		fiber_timer_arm(&w->win_timer, now + WIN_CHECK_NS);
	}
}

static void wait_end(struct conn *c)
{
	if (!c->mem_wait)
		return;
	c->mem_wait = false;
	c->w->nmem_wait--;
}

static void wait_counted(struct conn *c, enum mem_wait_why why)
{
	struct svc *srv = c->w->srv;
	char a[INET6_ADDRSTRLEN];
	climits_count(srv->limits, CLE_MEM_WAIT);
	if (why == MW_ALL) {
		log_ratelimited(&srv->mem_log, LOG_WARNING,
				"receive_memory (%zu bytes) in use: connections wait to be read",
				srv->cfg->receive_memory);
	} else if (why == MW_SHARE) {
		climits_count(srv->limits, CLE_SHARE_WAIT);
		log_ratelimited(&srv->share_log, LOG_WARNING,
				"client %s: receive_memory_per_connection (%zu bytes) reached: "
				"its connection waits for its own calls", conn_peer_str(&c->peer, a),
				srv->cfg->receive_memory_per_connection);
	} else {
		climits_count(srv->limits, CLE_CLIENT_WAIT);
		log_ratelimited(&srv->client_log, LOG_WARNING,
				"client %s: receive_memory_per_client (%zu bytes) reached: "
				"its connections wait for its own calls", conn_peer_str(&c->peer, a),
				srv->cfg->receive_memory_per_client);
	}
}

/* The connection stops reading until memory comes back: of the bound (all), or of its or its
 * client's share (their own requests give it back). Its ring's retry timer and every request
 * that ends look again. */
static void wait_begin(struct conn *c, enum mem_wait_why why)
{
	struct worker *w = c->w;
	if (c->mem_wait && c->mem_wait_why != why)
		wait_end(c);
	if (!c->mem_wait) {
		c->mem_wait = true;
		c->mem_wait_why = (uint8_t)why;
		w->nmem_wait++;
		wait_counted(c, why);
	}
	if (!w->mem_timer.armed) {
		w->mem_timer.fire = on_mem_timer;
		fiber_timer_arm(&w->mem_timer, fiber_now_ns() + MEM_RETRY_NS);
	}
}

bool mem_take(struct conn *c, size_t len, bool force)
{
	struct conn_limits *cl = c->w->srv->limits;
	/* a small forced one passes its client's share: each connection goes on, and a client's
	 * thousand connections hold at most a stream buffer's worth each that way */
	if (force && (len <= RECV_WIN_MIN || client_room(c, len))) {
		climits_mem_force(cl, len);
	} else if (!share_room(c, len)) {
		wait_begin(c, MW_SHARE);
		return false;
	} else if (!client_room(c, len)) {
		wait_begin(c, MW_CLIENT);
		return false;
	} else if (!climits_mem_take(cl, len)) {
		wait_begin(c, MW_ALL);
		return false;
	}
	wait_end(c);
	return true;
}

void mem_run_begin(struct conn *c, size_t len)
{
	climits_mem_force(c->w->srv->limits, len);
	c->run_charged += len;
}

void mem_run_end(struct conn *c, size_t charged)
{
	climits_mem_put(c->w->srv->limits, charged);
	c->run_charged -= charged;
}

bool mem_may_begin(struct conn *c, size_t promise)
{
	if (!share_room(c, 1)) {
		wait_begin(c, MW_SHARE);
		return false;
	}
	if (!client_room(c, promise)) {
		wait_begin(c, MW_CLIENT);
		return false;
	}
	if (!climits_mem_room(c->w->srv->limits)) {
		wait_begin(c, MW_ALL);
		return false;
	}
	wait_end(c);
	c->rec_promise = promise;
	return true;
}

bool mem_rec_grow(struct conn *c)
{
	struct worker *w = c->w;
	if (!share_room(c, 1)) {
		wait_begin(c, MW_SHARE);
		return false;
	}
	if (!climits_mem_room(w->srv->limits)) {
		if (w->mem_token && w->mem_token != c) {
			wait_begin(c, MW_ALL);
			return false;
		}
		w->mem_token = c;
		w->token_ns = fiber_now_ns();
		win_timer_arm(w, w->token_ns);
	}
	wait_end(c);
	return true;
}

void mem_rec_arrived(struct conn *c)
{
	if (c->ra.len > c->rec_charged) {
		climits_mem_force(c->w->srv->limits, c->ra.len - c->rec_charged);
		c->rec_charged = c->ra.len;
	}
}

size_t mem_window(struct conn *c, size_t left)
{
	struct worker *w = c->w;
	if (c->win < RECV_WIN_MIN)
		c->win = RECV_WIN_MIN;      /* a new connection's */
	size_t want = left < c->win ? left : c->win;
	size_t ahead = c->rec_charged - c->ra.len;
	if (want > RECV_WIN_MIN && want > ahead) {
		size_t more = want - ahead;
		if (share_room(c, more) && climits_mem_take(w->srv->limits, more)) {
			c->rec_charged += more;
			ahead = want;
		} else {
			want = left < RECV_WIN_MIN ? left : RECV_WIN_MIN;
		}
	}
	if (want > ahead && !mem_rec_grow(c))
		return 0;
	wait_end(c);
	c->posted_ns = fiber_now_ns();
	c->win_charged = ahead > 0;
	if (c->win_charged) {
		w->nwin++;
		win_timer_arm(w, c->posted_ns);
	}
	return want;
}

void mem_window_done(struct conn *c, size_t got)
{
	if (c->win_charged) {
		c->win_charged = false;
		c->w->nwin--;
	}
	mem_rec_arrived(c);
	if (c->rec_charged > c->ra.len) {
		climits_mem_put(c->w->srv->limits, c->rec_charged - c->ra.len);
		c->rec_charged = c->ra.len;
	}
	/* Grown by what the client sends, not by how it is cut: a receive gives what the socket has
	 * (part of a window, on a real network), so a window that had to fill before growing would
	 * stay small, and the record's buffer grow (and be copied) a window at a time. */
	size_t max = c->w->srv->cfg->max_record;
	if (got && 2 * c->ra.len >= c->win && c->win < max)
		c->win = 2 * c->win < max ? 2 * c->win : max;
}

void mem_window_revoked(struct conn *c)
{
	mem_window_done(c, 0);
	c->win = RECV_WIN_MIN;
	/* What the window would have received is allocated but empty: give its pages back (the
	 * allocator's recycled memory is resident), until the client sends again. */
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)recasm_tail(&c->ra) + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	uintptr_t to = (uintptr_t)(c->ra.rec + c->ra.cap) & ~((uintptr_t)page - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
}

/* Every charged window whose recv brought nothing for STALL_NS: the recv is cancelled
 * (conn_on_recv gives the window back and posts a small one). A token whose holder asked
 * nothing for as long goes to the records waiting for it. */
static void on_win_timer(struct fiber_timer *t)
{
	struct worker *w = (struct worker *)((char *)t - offsetof(struct worker, win_timer));
	struct svc *srv = w->srv;
	uint64_t now = fiber_now_ns();
	if (w->stopping || (!w->nwin && !w->mem_token))
		return;
	if (w->mem_token && now - w->token_ns >= STALL_NS) {
		w->mem_token = NULL;
		if (w->nmem_wait) {
			climits_count(srv->limits, CLE_TOKEN_PASSED);
			mem_retry(w);
		}
	}
	for (struct conn *c = w->conns; c; c = c->next) {
		if (!c->win_charged || c->revoking || c->dead || now - c->posted_ns < STALL_NS)
			continue;
		c->revoking = true;
		io_ring_cancel_op(w->ring, &c->recv_op);
		climits_count(srv->limits, CLE_WIN_REVOKED);
	}
	fiber_timer_arm(t, now + WIN_CHECK_NS);
}

size_t mem_rec_done(struct conn *c, size_t held)
{
	size_t charged = c->rec_charged;
	/* A buffer of whole huge pages (base/bufstash.h) holds up to twice a 1 MiB record's bytes:
	 * the rest is charged too, without waiting (the record is in), so that receive_memory
	 * bounds the memory its records take. */
	if (held >= BUFSTASH_HUGE_PAGE && held > charged) {
		climits_mem_force(c->w->srv->limits, held - charged);
		charged = held;
	}
	if (c->w->mem_token == c)
		c->w->mem_token = NULL;
	c->rec_charged = 0;
	c->rec_promise = 0;
	c->run_charged += charged;
	return charged;
}

/* Its replies give their READs' memory back as they are freed (reply_done); nothing of it runs. */
void mem_conn_free(struct conn *c)
{
	struct worker *w = c->w;
	wait_end(c);
	if (c->win_charged)
		w->nwin--;
	if (w->mem_token == c)
		w->mem_token = NULL;
	climits_mem_put(w->srv->limits, c->rec_charged);
	if (c->client)
		climits_client_sub(c->client, c->client_part);
	c->client_part = 0;
}

/* Look again at the connections waiting for memory, until one still finds none of the bound
 * and the token is taken (one waiting for its share says nothing of the others; while the token
 * is free, a record begun further on may take it, where a record not begun may not). */
void mem_retry(struct worker *w)
{
	for (struct conn *c = w->conns, *next; c && w->nmem_wait; c = next) {
		next = c->next;
		if (!c->mem_wait)
			continue;
		conn_pump(c);
		bool full = c->mem_wait && c->mem_wait_why == MW_ALL;
		conn_settle(c);
		if (full && w->mem_token)
			break;
	}
}

static void on_mem_timer(struct fiber_timer *t)
{
	struct worker *w = (struct worker *)((char *)t - offsetof(struct worker, mem_timer));
	if (!w->stopping)
		mem_retry(w);
}

void mem_ring_stop(struct worker *w)
{
	fiber_timer_disarm(&w->mem_timer);
	fiber_timer_disarm(&w->win_timer);
}
