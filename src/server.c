/* Connections. Each one reads its byte stream into a small buffer and handles the records found
 * there in place. A record larger than what the buffer holds (a WRITE) is received into a buffer of
 * its own, placed so that the payload's address is congruent to its file offset modulo 64 KiB: the
 * whole-block middle of the WRITE is then aligned in memory for O_DIRECT, with no copy for the
 * bytes received straight into it. */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dispatch.h"
#include "io/ring.h"
#include "log.h"
#include "rpc/recmark.h"
#include "worker.h"

#define SBUF_SIZE (64 * 1024)
#define PLACE_ALIGN (64 * 1024)   /* payload address == file offset modulo this */
#define PEEK_MIN 512              /* bytes of a large record needed to find a WRITE's payload */
#define SENDQ_MAX (8u << 20)      /* stop reading requests while this much reply data is queued */
#define CONN_MAX_INFLIGHT 64      /* requests of one connection at the workers at once */

struct netloop {
	struct server *srv;
	struct io_ring *ring;
	pthread_t thread;
	int listen_fd[2];
	struct conn *conns;
	unsigned inflight;            /* jobs at the workers, all connections */
	bool stop;                    /* the loop's own view: stopping */
	atomic_bool stop_req;         /* set by netloop_stop() from the main thread */
	/* Workers hand finished jobs back through this list and wake the loop with the eventfd. */
	int ev_fd;
	uint64_t ev_buf;
	struct io_op ev_op;
	pthread_mutex_t done_lock;
	struct job *done;
};

struct conn {
	struct conn *next, *prev;
	struct netloop *nl;
	unsigned inflight;            /* its jobs at the workers: it is not freed before they return */
	int fd;
	struct sockaddr_storage peer;
	struct io_op recv_op, send_op;
	bool recv_busy, send_busy, dead;
	bool recv_direct;             /* the pending recv targets the record, not the stream buffer */
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
	struct msghdr msg;
};

struct listener {
	struct io_op op;
	struct netloop *nl;
	int fd;
	struct sockaddr_storage addr;
	socklen_t alen;
};

static void conn_pump(struct conn *c);
static void conn_post_recv(struct conn *c);

/* ---- connection lifetime ---- */

static void conn_free(struct conn *c)
{
	struct netloop *nl = c->nl;
	if (c->prev) c->prev->next = c->next; else nl->conns = c->next;
	if (c->next) c->next->prev = c->prev;
	close(c->fd);
	while (c->sq_head) {
		struct reply *r = c->sq_head;
		c->sq_head = r->next;
		reply_free(r);
	}
	free(c->rec_mem);
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
			io_ring_cancel_fd(c->nl->ring, c->fd);
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
			log_info("send: %s", strerror(-res));
		conn_kill(c);
		conn_settle(c);
		return;
	}
	size_t n = (size_t)res;
	c->sq_bytes -= n;
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
		reply_free(r);
	}
	send_next(c);
	if (c->nl->stop && conn_drained(c))
		conn_kill(c);
	else
		conn_pump(c);   /* replies drained: maybe resume handling queued records */
	conn_settle(c);
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
		int n = 0;
		c->iov[n++] = (struct iovec){r->hdr, r->hdr_len};
		if (r->payload_len)
			c->iov[n++] = (struct iovec){r->payload, r->payload_len};
		if (r->pad)
			c->iov[n++] = (struct iovec){(void *)zeros, r->pad};
		c->msg = (struct msghdr){.msg_iov = c->iov, .msg_iovlen = (size_t)n};
	}
	c->send_busy = true;
	io_ring_sendmsg(c->nl->ring, &c->send_op, c->fd, &c->msg);
}

static void queue_reply(struct conn *c, struct reply *r)
{
	if (!r)
		return;
	if (c->sq_tail) c->sq_tail->next = r; else c->sq_head = r;
	c->sq_tail = r;
	c->sq_bytes += r->hdr_len + r->payload_len + r->pad;
	send_next(c);
}

/* ---- receiving ---- */

static void job_done(struct job *j);

/* Memory for a record of len bytes whose first avail bytes are at p, and where in it the record
 * starts: a WRITE's payload lands at an address congruent to its file offset modulo PLACE_ALIGN, so
 * the whole blocks of its middle are aligned for O_DIRECT wherever the WRITE starts. */
static uint8_t *place_record(const uint8_t *p, size_t avail, size_t len, uint8_t **start)
{
	size_t idx;
	uint64_t off;
	if (!dispatch_peek_write(p, avail, &idx, &off)) {
		*start = malloc(len ? len : 1);    /* not a WRITE: no alignment to keep */
		return *start;
	}
	size_t shift = (size_t)((off - idx) & (PLACE_ALIGN - 1));
	void *mem = NULL;
	/* posix_memalign: C11's aligned_alloc wants the size a multiple of the alignment, which
	 * would cost a small WRITE 64 KiB. */
	if (posix_memalign(&mem, PLACE_ALIGN, shift + len) != 0)
		mem = NULL;
	*start = mem ? (uint8_t *)mem + shift : NULL;
	return mem;
}

/* Hand a record to the workers. mem, when given, owns rec and goes with the job; else rec lies
 * in the stream buffer and is copied out (placed, so this is the payload's only copy). */
static void handle_record(struct conn *c, uint8_t *mem, const uint8_t *rec, size_t len)
{
	struct job *j = calloc(1, sizeof *j);
	if (j && !mem) {
		uint8_t *start;
		mem = place_record(rec, len, len, &start);
		if (mem) {
			memcpy(start, rec, len);
			rec = start;
		}
	}
	if (!j || !mem) {
		log_err("out of memory for a request: closing the connection");
		free(j);
		free(mem);
		conn_kill(c);
		return;
	}
	*j = (struct job){.mem = mem, .rec = rec, .len = len, .peer = c->peer, .done = job_done, .owner = c};
	c->inflight++;
	c->nl->inflight++;
	jobs_push(c->nl->srv, j);
}

static bool rec_begin(struct conn *c, const uint8_t *p, size_t avail, uint32_t frag_len)
{
	c->rec_mem = place_record(p, avail, frag_len, &c->rec);
	if (!c->rec_mem)
		return false;
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
	uint8_t *m = aligned_alloc(PLACE_ALIGN, (cap + 2 * PLACE_ALIGN - 1) & ~(size_t)(PLACE_ALIGN - 1));
	if (!m)
		return false;
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
	handle_record(c, c->rec_mem, c->rec, c->rec_len);
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
	if (total > c->nl->srv->cfg->max_record) {
		char a[INET6_ADDRSTRLEN] = "?";
		const struct sockaddr_storage *s = &c->peer;
		if (s->ss_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)s)->sin_addr, a, sizeof a);
		else if (s->ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)s)->sin6_addr, a, sizeof a);
		log_warn("client %s: RPC record of %zu bytes exceeds max_record %zu; closing connection", a,
			 total, c->nl->srv->cfg->max_record);
		conn_kill(c);
		return false;
	}
	return true;
}

/* Handle every complete record in the stream buffer; move partial large ones out of it. */
static void conn_pump(struct conn *c)
{
	while (!c->dead && c->sq_bytes < SENDQ_MAX && c->inflight < CONN_MAX_INFLIGHT) {
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
			c->head += 4 + (size_t)len;
			handle_record(c, NULL, rec, len);
			continue;
		}
		/* Large or fragmented: wait for enough bytes to find a WRITE's payload, then move out. */
		if (avail < PEEK_MIN && avail < len && c->tail < SBUF_SIZE)
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
}

static void on_recv(struct io_op *op, int res)
{
	struct conn *c = (struct conn *)((char *)op - offsetof(struct conn, recv_op));
	c->recv_busy = false;
	if (c->nl->stop && !c->dead && !conn_drained(c))
		return;         /* stopping: closed once the owed replies are out */
	if (res <= 0 || c->dead || c->nl->stop) {
		if (res < 0 && res != -ECANCELED && res != -ECONNRESET)
			log_info("recv: %s", strerror(-res));
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
	conn_pump(c);
	conn_settle(c);
}

static void conn_post_recv(struct conn *c)
{
	if (c->recv_busy || c->dead || c->nl->stop || c->sq_bytes >= SENDQ_MAX ||
	    c->inflight >= CONN_MAX_INFLIGHT)
		return;
	c->recv_busy = true;
	c->recv_direct = c->in_rec && c->head == c->tail && c->frag_left;
	if (c->recv_direct) {
		io_ring_recv(c->nl->ring, &c->recv_op, c->fd, c->rec + c->rec_len, c->frag_left);
		return;
	}
	if (c->tail == SBUF_SIZE && c->head) {
		memmove(c->sbuf, c->sbuf + c->head, c->tail - c->head);
		c->tail -= c->head;
		c->head = 0;
	}
	io_ring_recv(c->nl->ring, &c->recv_op, c->fd, c->sbuf + c->tail, SBUF_SIZE - c->tail);
}

/* ---- accepting ---- */

static void on_accept(struct io_op *op, int res)
{
	struct listener *l = (struct listener *)op;
	struct netloop *nl = l->nl;
	if (res >= 0) {
		struct conn *c = calloc(1, sizeof *c);
		uint8_t *sbuf = malloc(SBUF_SIZE);
		if (!c || !sbuf || nl->stop) {
			free(c);
			free(sbuf);
			close(res);
		} else {
			int one = 1;
			setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			c->nl = nl;
			c->fd = res;
			c->sbuf = sbuf;
			memcpy(&c->peer, &l->addr, sizeof c->peer);
			c->recv_op.cb = on_recv;
			c->send_op.cb = on_send;
			c->next = nl->conns;
			if (nl->conns)
				nl->conns->prev = c;
			nl->conns = c;
			conn_post_recv(c);
		}
	} else if (res != -ECANCELED) {
		log_warn("accept: %s", strerror(-res));
	}
	if (!nl->stop) {
		l->alen = sizeof l->addr;
		io_ring_accept(nl->ring, &l->op, l->fd, (struct sockaddr *)&l->addr, &l->alen);
	} else {
		free(l);
	}
}

static int listen_on(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		len = sizeof *s4;
	} else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		len = sizeof *s6;
	} else {
		return -EINVAL;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	/* SO_REUSEADDR only: with SO_REUSEPORT a second daemon started on the same port would
	 * silently share its connections instead of failing. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
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

static int listen_retrying(const char *addr, uint16_t port)
{
	int fd = listen_on(addr, port);
	for (int waited = 0; fd == -EADDRINUSE && waited < LISTEN_RETRY_MS; waited += 100) {
		if (waited == 0)
			log_warn("%s port %u is in use; retrying for up to %d s", addr, port,
				 LISTEN_RETRY_MS / 1000);
		nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
		fd = listen_on(addr, port);
	}
	return fd;
}

/* ---- the loop ---- */

/* On a worker's thread: give the finished job back to the loop. */
static void job_done(struct job *j)
{
	struct netloop *nl = ((struct conn *)j->owner)->nl;
	pthread_mutex_lock(&nl->done_lock);
	bool first = !nl->done;
	j->next = nl->done;
	nl->done = j;
	pthread_mutex_unlock(&nl->done_lock);
	/* The loop takes the whole list at each wake-up, so only the job that finds it empty needs
	 * to wake it: one syscall and one wake-up per batch, not per reply. */
	uint64_t one = 1;
	if (first && write(nl->ev_fd, &one, sizeof one) < 0)
		log_err("cannot wake the network loop: %s", strerror(errno));
}

static void begin_stop(struct netloop *nl)
{
	nl->stop = true;
	for (int i = 0; i < 2; i++)
		io_ring_cancel_fd(nl->ring, nl->listen_fd[i]);
	/* Connections finish the replies they owe, then close. */
	for (struct conn *c = nl->conns, *next; c; c = next) {
		next = c->next;
		if (c->recv_busy) {
			io_ring_cancel_fd(nl->ring, c->fd);
		} else if (conn_drained(c)) {
			conn_kill(c);
			conn_settle(c);
		}
	}
}

/* The eventfd fired: jobs came back, or netloop_stop() asked us to stop. */
static void on_event(struct io_op *op, int res)
{
	struct netloop *nl = (struct netloop *)((char *)op - offsetof(struct netloop, ev_op));
	(void)res;
	pthread_mutex_lock(&nl->done_lock);
	struct job *done = nl->done;
	nl->done = NULL;
	pthread_mutex_unlock(&nl->done_lock);
	while (done) {
		struct job *j = done;
		done = j->next;
		struct conn *c = j->owner;
		c->inflight--;
		nl->inflight--;
		if (!c->dead) {
			queue_reply(c, j->reply);
			j->reply = NULL;
		}
		job_free(j);
		if (nl->stop && conn_drained(c))
			conn_kill(c);
		else
			conn_pump(c);
		conn_settle(c);
	}
	if (atomic_load(&nl->stop_req) && !nl->stop)
		begin_stop(nl);
	if (!nl->stop || nl->inflight)
		io_ring_read(nl->ring, &nl->ev_op, nl->ev_fd, &nl->ev_buf, sizeof nl->ev_buf);
}

static void *netloop_main(void *arg)
{
	struct netloop *nl = arg;
	io_ring_bind_thread(nl->ring);
	io_ring_read(nl->ring, &nl->ev_op, nl->ev_fd, &nl->ev_buf, sizeof nl->ev_buf);
	for (int i = 0; i < 2; i++) {
		struct listener *l = calloc(1, sizeof *l);
		if (!l)
			continue;
		l->op.cb = on_accept;
		l->nl = nl;
		l->fd = nl->listen_fd[i];
		l->alen = sizeof l->addr;
		io_ring_accept(nl->ring, &l->op, l->fd, (struct sockaddr *)&l->addr, &l->alen);
	}
	int rc = io_ring_run(nl->ring, &nl->stop);
	if (rc < 0)
		log_err("network loop: io_uring: %s", strerror(-rc));
	return NULL;
}

static void netloop_free(struct netloop *nl)
{
	while (nl->conns)
		conn_free(nl->conns);
	for (int i = 0; i < 2; i++)
		if (nl->listen_fd[i] >= 0)
			close(nl->listen_fd[i]);
	if (nl->ev_fd >= 0)
		close(nl->ev_fd);
	io_ring_free(nl->ring);
	pthread_mutex_destroy(&nl->done_lock);
	free(nl);
}

struct netloop *netloop_start(struct server *srv)
{
	struct netloop *nl = calloc(1, sizeof *nl);
	if (!nl)
		return NULL;
	*nl = (struct netloop){.srv = srv, .listen_fd = {-1, -1}, .ev_fd = -1, .ev_op = {on_event}};
	pthread_mutex_init(&nl->done_lock, NULL);
	nl->ring = io_ring_new(256);
	nl->ev_fd = eventfd(0, EFD_CLOEXEC);
	if (!nl->ring || nl->ev_fd < 0) {
		log_err("network loop: %s", strerror(errno));
		netloop_free(nl);
		return NULL;
	}
	uint16_t ports[2] = {srv->cfg->port, srv->cfg->mount_port};
	for (int i = 0; i < 2; i++) {
		nl->listen_fd[i] = listen_retrying(srv->cfg->listen, ports[i]);
		if (nl->listen_fd[i] < 0) {
			log_err("listen on %s port %u: %s", srv->cfg->listen, ports[i], strerror(-nl->listen_fd[i]));
			nl->listen_fd[i] = -1;
			netloop_free(nl);
			return NULL;
		}
	}
	if (pthread_create(&nl->thread, NULL, netloop_main, nl) != 0) {
		netloop_free(nl);
		return NULL;
	}
	return nl;
}

void netloop_stop(struct netloop *nl)
{
	if (!nl)
		return;
	atomic_store(&nl->stop_req, true);
	uint64_t one = 1;
	if (write(nl->ev_fd, &one, sizeof one) < 0)
		log_err("cannot signal the network loop to stop: %s", strerror(errno));
	pthread_join(nl->thread, NULL);
	netloop_free(nl);
}
