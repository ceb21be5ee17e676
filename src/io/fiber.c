/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fibers on ucontext: makecontext/swapcontext enter a new stack once; after that every switch is
 * a _setjmp/_longjmp pair, which saves no signal mask (swapcontext makes a sigprocmask call per
 * switch). This is QEMU's coroutine-ucontext scheme, sanitizer annotations included. Switches go
 * only between the scheduler's own stack and one fiber, never fiber to fiber. */
#undef _FORTIFY_SOURCE   /* __longjmp_chk refuses to jump to another stack */
#include "io/fiber.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#ifdef FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/* Ended fibers are kept for reuse, stacks and all: IDLE_KEEP always, and as many as were live at
 * once in the last PEAK_WINDOW_NS or the one before. Keeping only IDLE_KEEP, 128 writers with 4
 * WRITEs in flight each (256 calls a ring) had every burst map, fault in and unmap stacks again:
 * each unmap a TLB shootdown across the daemon's threads, a tenth of its CPU time. */
#define IDLE_KEEP 64
#define PEAK_WINDOW_NS 1000000000ull

struct fiber {
	struct fiber_msg wake;        /* its wake-up, when sent from another thread */
	struct fiber *next;           /* ready list or idle pool */
	struct fiber_sched *sched;
	jmp_buf env;
	void *map;                    /* stack mapping, guard page first */
	size_t map_len;
	fiber_fn fn;
	void *arg;
	void (*hook_out)(void *);
	void (*hook_in)(void *);
	void *hook_ctx;
	void *asan_fake;
};

struct fiber_sched {
	size_t stack;
	struct fiber *current;
	struct fiber *ready, *ready_tail;
	struct fiber *idle;
	unsigned nidle, live;
	unsigned peak, last_peak;     /* most live at once in this window, and in the one before */
	uint64_t window_end_ns;
	jmp_buf env;                  /* the loop's context, where fibers switch back to */
	const void *asan_stack;       /* the thread's own stack, for the sanitizer */
	size_t asan_stack_size;
	struct fiber_timer *timers;   /* sorted by deadline */
	pthread_mutex_t inbox_lock;
	struct fiber_msg *inbox, *inbox_tail;
	pthread_mutex_t notify_lock;  /* held by a poster across its notify (fiber_sched_post) */
	atomic_bool running;          /* the owner runs and will look at its inbox before waiting:
				       * posters need not notify (fiber_sched_may_wait) */
	void (*notify)(void *);
	void *notify_ctx;
};

static _Thread_local struct fiber_sched *tls_sched;

/* ---- sanitizer bookkeeping around each switch ---- */

static void asan_start(void **fake, const void *bottom, size_t size)
{
#ifdef FIBER_ASAN
	__sanitizer_start_switch_fiber(fake, bottom, size);
#else
	(void)fake, (void)bottom, (void)size;
#endif
}

static void asan_finish(struct fiber_sched *s, void *fake)
{
#ifdef FIBER_ASAN
	const void *old;
	size_t old_size;
	__sanitizer_finish_switch_fiber(fake, &old, &old_size);
	if (!s->asan_stack) {
		s->asan_stack = old;
		s->asan_stack_size = old_size;
	}
#else
	(void)s, (void)fake;
#endif
}

static const void *stack_bottom(const struct fiber *f)
{
	return (const char *)f->map + sysconf(_SC_PAGESIZE);
}

/* ---- switching ---- */

/* From the loop into f, until f suspends or ends. */
static void switch_in(struct fiber_sched *s, struct fiber *f)
{
	void *fake = NULL;
	s->current = f;
	if (!_setjmp(s->env)) {
		asan_start(&fake, stack_bottom(f), s->stack);
		_longjmp(f->env, 1);
	}
	asan_finish(s, fake);
	s->current = NULL;
}

/* From the running fiber back to the loop. ended: the fiber's stack is not coming back. */
static void switch_out(struct fiber_sched *s, struct fiber *f, bool ended)
{
	if (!_setjmp(f->env)) {
		asan_start(ended ? NULL : &f->asan_fake, s->asan_stack, s->asan_stack_size);
		_longjmp(s->env, 1);
	}
	asan_finish(s, f->asan_fake);
}

static void push_ready(struct fiber_sched *s, struct fiber *f)
{
	f->next = NULL;
	if (s->ready_tail)
		s->ready_tail->next = f;
	else
		s->ready = f;
	s->ready_tail = f;
}

static void fiber_end(struct fiber_sched *s, struct fiber *f);

/* Every fiber's first frame: run calls until the fiber is given up. makecontext passes ints
 * only, hence the pointer in two halves. */
static void trampoline(unsigned hi, unsigned lo)
{
	struct fiber *f = (struct fiber *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
	struct fiber_sched *s = f->sched;
	jmp_buf *back = (jmp_buf *)f->arg;

	asan_finish(s, NULL);
	/* Ready: return to fiber_new(), which entered us with swapcontext. */
	if (!_setjmp(f->env)) {
		asan_start(&f->asan_fake, s->asan_stack, s->asan_stack_size);
		_longjmp(*back, 1);
	}
	asan_finish(s, f->asan_fake);
	for (;;) {
		f->fn(f->arg);
		fiber_end(s, f);
	}
}

/* Enter the new stack once, with swapcontext; the trampoline longjmps back at once. Apart for
 * setjmp's sake: nothing here lives in a register across it. */
static __attribute__((noinline)) void first_entry(struct fiber_sched *volatile s, struct fiber *f,
						  ucontext_t *uc)
{
	ucontext_t old;
	jmp_buf back;
	void *volatile fake = NULL;
	f->arg = &back;
	uintptr_t p = (uintptr_t)f;
	makecontext(uc, (void (*)(void))trampoline, 2, (unsigned)(p >> 32), (unsigned)p);
	if (!_setjmp(back)) {
		void *fk = NULL;
		asan_start(&fk, uc->uc_stack.ss_sp, s->stack);
		fake = fk;
		swapcontext(&old, uc);
	}
	asan_finish(s, fake);
}

/* getcontext is declared returns_twice, like setjmp, but this one returns once: nothing ever
 * resumes the context it saved (makecontext gives it a stack and function of its own). */
#if defined(__GNUC__) && !defined(__clang__)   /* clang has no -Wclobbered (nor the false alarm) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wclobbered"
#endif
static struct fiber *fiber_new(struct fiber_sched *s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct fiber *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->sched = s;
	f->map_len = s->stack + page;
	f->map = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
		      -1, 0);
	if (f->map == MAP_FAILED || mprotect(f->map, page, PROT_NONE) < 0) {
		if (f->map != MAP_FAILED)
			munmap(f->map, f->map_len);
		free(f);
		return NULL;
	}
	ucontext_t uc;
	if (getcontext(&uc) < 0) {
		munmap(f->map, f->map_len);
		free(f);
		return NULL;
	}
	uc.uc_link = NULL;
	uc.uc_stack.ss_sp = (char *)f->map + page;
	uc.uc_stack.ss_size = s->stack;
	first_entry(s, f, &uc);
	f->arg = NULL;
	return f;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

static void fiber_destroy(struct fiber *f)
{
	munmap(f->map, f->map_len);
	free(f);
}

/* The call returned: keep the fiber for the next one (or let it go), back to the loop. */
static void fiber_end(struct fiber_sched *s, struct fiber *f)
{
	s->live--;
	f->fn = NULL;
	f->hook_out = f->hook_in = NULL;
	f->next = s->idle;
	s->idle = f;
	s->nidle++;
	switch_out(s, f, false);
	/* Reused: fiber_spawn set fn again. */
}

/* ---- the scheduler ---- */

struct fiber_sched *fiber_sched_new(size_t stack, void (*notify)(void *ctx), void *ctx)
{
	struct fiber_sched *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	s->stack = (stack + page - 1) & ~(page - 1);
	s->notify = notify;
	s->notify_ctx = ctx;
	pthread_mutex_init(&s->inbox_lock, NULL);
	pthread_mutex_init(&s->notify_lock, NULL);
	return s;
}

void fiber_sched_bind(struct fiber_sched *s) { tls_sched = s; }

void fiber_sched_free(struct fiber_sched *s)
{
	if (!s)
		return;
	while (s->idle) {
		struct fiber *f = s->idle;
		s->idle = f->next;
		fiber_destroy(f);
	}
	/* A poster still inside fiber_sched_post is waited for: the one pushing, then the one
	 * notifying (which took notify_lock before it let go of inbox_lock). */
	pthread_mutex_lock(&s->inbox_lock);
	pthread_mutex_unlock(&s->inbox_lock);
	pthread_mutex_lock(&s->notify_lock);
	pthread_mutex_unlock(&s->notify_lock);
	pthread_mutex_destroy(&s->inbox_lock);
	pthread_mutex_destroy(&s->notify_lock);
	if (tls_sched == s)
		tls_sched = NULL;
	free(s);
}

struct fiber *fiber_self(void) { return tls_sched ? tls_sched->current : NULL; }
unsigned fiber_sched_live(const struct fiber_sched *s) { return s->live; }
unsigned fiber_sched_idle(const struct fiber_sched *s) { return s->nidle; }

int fiber_spawn(struct fiber_sched *s, fiber_fn fn, void *arg)
{
	struct fiber *f = s->idle;
	if (f) {
		s->idle = f->next;
		s->nidle--;
	} else if (!(f = fiber_new(s))) {
		return -ENOMEM;
	}
	f->fn = fn;
	f->arg = arg;
	if (++s->live > s->peak)
		s->peak = s->live;
	push_ready(s, f);
	return 0;
}

/* How many fibers (live and idle) to keep in being: the most live at once since the window
 * before this one began. A window ends at the first look past its end, so a burst's fibers go
 * two looks a window apart after it, however long the ring slept between. */
static unsigned fibers_wanted(struct fiber_sched *s)
{
	uint64_t now = fiber_now_ns();
	if (now >= s->window_end_ns) {
		s->last_peak = s->peak;
		s->peak = s->live;
		s->window_end_ns = now + PEAK_WINDOW_NS;
	}
	unsigned want = s->peak > s->last_peak ? s->peak : s->last_peak;
	return want > IDLE_KEEP ? want : IDLE_KEEP;
}

unsigned fiber_sched_run(struct fiber_sched *s)
{
	unsigned n = 0;
	while (s->ready) {
		struct fiber *f = s->ready;
		s->ready = f->next;
		if (!s->ready)
			s->ready_tail = NULL;
		if (f->hook_in)
			f->hook_in(f->hook_ctx);
		switch_in(s, f);
		n++;
	}
	while (s->nidle > IDLE_KEEP && s->live + s->nidle > fibers_wanted(s)) {
		struct fiber *f = s->idle;
		s->idle = f->next;
		s->nidle--;
		fiber_destroy(f);
	}
	return n;
}

void fiber_suspend(void)
{
	struct fiber_sched *s = tls_sched;
	struct fiber *f = s->current;
	if (f->hook_out)
		f->hook_out(f->hook_ctx);
	switch_out(s, f, false);
}

static void wake_msg(struct fiber_msg *m)
{
	struct fiber *f = (struct fiber *)m;   /* first member */
	push_ready(f->sched, f);
}

void fiber_wake(struct fiber *f)
{
	if (f->sched == tls_sched) {
		push_ready(f->sched, f);
		return;
	}
	f->wake.fn = wake_msg;
	fiber_sched_post(f->sched, &f->wake);
}

void fiber_set_hooks(struct fiber *f, void (*out)(void *), void (*in)(void *), void *ctx)
{
	f->hook_out = out;
	f->hook_in = in;
	f->hook_ctx = ctx;
}

void fiber_sched_post(struct fiber_sched *s, struct fiber_msg *m)
{
	m->next = NULL;
	pthread_mutex_lock(&s->inbox_lock);
	bool was_empty = !s->inbox;
	if (s->inbox_tail)
		s->inbox_tail->next = m;
	else
		s->inbox = m;
	s->inbox_tail = m;
	/* One notification per batch (the owner takes the whole inbox at each wake-up), none to an
	 * owner that runs: `running` is read under inbox_lock, and an owner about to wait cleared
	 * it before it took the lock to look at its inbox, so either it sees this message or this
	 * poster sees that it waits. The notify is made under notify_lock, taken before inbox_lock
	 * goes: the owner could otherwise take this message, finish the fiber it wakes and free
	 * its scheduler (and the descriptor notify writes to) while this thread still has to
	 * notify it (a pool thread's wake-up once raced a stopping ring's teardown, TSan). Not
	 * under inbox_lock itself: the owner taking its inbox waited for the notify's write(2)
	 * and slept on the lock (32 FILE_SYNC writers: two thirds of the daemon's lock waits). */
	bool notify = was_empty && s->notify &&
		      !atomic_load_explicit(&s->running, memory_order_relaxed);
	if (notify)
		pthread_mutex_lock(&s->notify_lock);
	pthread_mutex_unlock(&s->inbox_lock);
	if (notify) {
		s->notify(s->notify_ctx);
		pthread_mutex_unlock(&s->notify_lock);
	}
}

/* A ring that runs has its messages at its next look, with no notify: a write(2) to its
 * eventfd, and a completion and a new read for it, once per WRITE when 32 FILE_SYNC writers'
 * group commits wake fibers on the other ring. */
bool fiber_sched_may_wait(struct fiber_sched *s)
{
	atomic_store_explicit(&s->running, false, memory_order_relaxed);
	pthread_mutex_lock(&s->inbox_lock);
	bool empty = !s->inbox;
	pthread_mutex_unlock(&s->inbox_lock);
	if (empty)
		return true;
	fiber_sched_running(s);
	fiber_sched_take_inbox(s);
	return false;
}

void fiber_sched_running(struct fiber_sched *s)
{
	atomic_store_explicit(&s->running, true, memory_order_relaxed);
}

void fiber_sched_take_inbox(struct fiber_sched *s)
{
	pthread_mutex_lock(&s->inbox_lock);
	struct fiber_msg *m = s->inbox;
	s->inbox = s->inbox_tail = NULL;
	pthread_mutex_unlock(&s->inbox_lock);
	while (m) {
		struct fiber_msg *next = m->next;
		m->fn(m);       /* may free m */
		m = next;
	}
}

/* ---- timers ---- */

uint64_t fiber_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void fiber_timer_arm(struct fiber_timer *t, uint64_t deadline_ns)
{
	struct fiber_sched *s = tls_sched;
	struct fiber_timer **pp = &s->timers;
	fiber_timer_disarm(t);        /* armed twice, it would be on the list twice */
	t->deadline_ns = deadline_ns;
	while (*pp && (*pp)->deadline_ns <= deadline_ns)
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
	t->armed = true;
}

void fiber_timer_disarm(struct fiber_timer *t)
{
	if (!t->armed)
		return;
	for (struct fiber_timer **pp = &tls_sched->timers; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	t->armed = false;
}

uint64_t fiber_sched_next_deadline(const struct fiber_sched *s)
{
	return s->timers ? s->timers->deadline_ns : UINT64_MAX;
}

unsigned fiber_sched_fire_timers(struct fiber_sched *s)
{
	unsigned n = 0;
	if (!s->timers)
		return 0;
	uint64_t now = fiber_now_ns();
	while (s->timers && s->timers->deadline_ns <= now) {
		struct fiber_timer *t = s->timers;
		s->timers = t->next;
		t->armed = false;
		t->fire(t);
		n++;
	}
	return n;
}

struct sleeper {
	struct fiber_timer t;
	struct fiber *f;
};

static void sleeper_fire(struct fiber_timer *t)
{
	fiber_wake(((struct sleeper *)t)->f);
}

void fiber_sleep_ns(uint64_t ns)
{
	struct fiber *f = fiber_self();
	if (!f) {
		struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
		nanosleep(&ts, NULL);
		return;
	}
	struct sleeper sl = {.t = {.fire = sleeper_fire}, .f = f};
	fiber_timer_arm(&sl.t, fiber_now_ns() + ns);
	fiber_suspend();
}
