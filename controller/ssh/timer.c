/*
 * timer.c - one thread for every connection's deadline (see timer.h).
 *
 * Two locks: lifemu orders the start and the join of the thread (attach
 * and detach only; the thread never takes it), mu guards the heap and is
 * the one the condition variable waits with.  The thread is woken when
 * the earliest deadline changes or it has to quit, never by a polling
 * sleep: a deadline that moved later only makes it wake once for nothing.
 */
#include "timer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/deadline.h"
#include "common/err.h"
#include "common/xmalloc.h"

struct timer {
	pthread_mutex_t	 lifemu;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;		/* on CLOCK_MONOTONIC */
	pthread_t	 thread;
	int		 running;	/* under lifemu */
	size_t		 users;		/* under lifemu */
	int		 quit;
	struct timer_entry **heap;	/* earliest first */
	size_t		 n;
	size_t		 alloc;
};

static void
heap_set(struct timer *t, size_t i, struct timer_entry *e)
{
	t->heap[i] = e;
	e->slot = i + 1;
}

static void
heap_up(struct timer *t, size_t i)
{
	struct timer_entry *e = t->heap[i];
	size_t parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (t->heap[parent]->deadline <= e->deadline)
			break;
		heap_set(t, i, t->heap[parent]);
		i = parent;
	}
	heap_set(t, i, e);
}

static void
heap_down(struct timer *t, size_t i)
{
	struct timer_entry *e = t->heap[i];
	size_t child;

	for (;;) {
		child = 2 * i + 1;
		if (child >= t->n)
			break;
		if (child + 1 < t->n &&
		    t->heap[child + 1]->deadline < t->heap[child]->deadline)
			child++;
		if (e->deadline <= t->heap[child]->deadline)
			break;
		heap_set(t, i, t->heap[child]);
		i = child;
	}
	heap_set(t, i, e);
}

static void
heap_remove(struct timer *t, struct timer_entry *e)
{
	size_t i = e->slot - 1;
	struct timer_entry *last = t->heap[--t->n];

	e->slot = 0;
	if (last == e)
		return;
	heap_set(t, i, last);
	heap_up(t, i);
	heap_down(t, last->slot - 1);
}

static void *
timer_main(void *arg)
{
	struct timer *t = arg;
	struct timer_entry *e;
	struct timespec ts;

	pthread_mutex_lock(&t->mu);
	while (!t->quit) {
		if (t->n == 0) {
			pthread_cond_wait(&t->cv, &t->mu);
			continue;
		}
		e = t->heap[0];
		if (deadline_now_ms() < e->deadline) {
			ts.tv_sec = (time_t)(e->deadline / 1000);
			ts.tv_nsec = (long)(e->deadline % 1000) * 1000000;
			pthread_cond_timedwait(&t->cv, &t->mu, &ts);
			continue;
		}
		heap_remove(t, e);
		e->fired = 1;
		e->fire(e);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

struct timer *
timer_new(void)
{
	struct timer *t = xcalloc(1, sizeof(*t));
	pthread_condattr_t ca;

	pthread_mutex_init(&t->lifemu, NULL);
	pthread_mutex_init(&t->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	return t;
}

/* Stops and joins the thread; the caller holds lifemu. */
static void
timer_stop(struct timer *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->mu);
	t->quit = 1;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	t->running = 0;
}

void
timer_free(struct timer *t)
{
	size_t i;

	if (t == NULL)
		return;
	pthread_mutex_lock(&t->lifemu);
	timer_stop(t);
	pthread_mutex_unlock(&t->lifemu);
	for (i = 0; i < t->n; i++)
		t->heap[i]->slot = 0;
	free(t->heap);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	pthread_mutex_destroy(&t->lifemu);
	free(t);
}

int
timer_attach(struct timer *t, struct err *err)
{
	int rc = 0, e;

	pthread_mutex_lock(&t->lifemu);
	if (!t->running) {
		t->quit = 0;	/* no thread reads it now */
		if ((e = pthread_create(&t->thread, NULL, timer_main, t)) !=
		    0) {
			rc = err_errno(err, ENVCTL_ESYS, e, "cannot start the "
			    "timer thread");
			goto out;
		}
		t->running = 1;
	}
	t->users++;
out:
	pthread_mutex_unlock(&t->lifemu);
	return rc;
}

void
timer_detach(struct timer *t)
{
	pthread_mutex_lock(&t->lifemu);
	if (t->users > 0 && --t->users == 0)
		timer_stop(t);
	pthread_mutex_unlock(&t->lifemu);
}

void
timer_entry_init(struct timer_entry *e, void (*fire)(struct timer_entry *e))
{
	memset(e, 0, sizeof(*e));
	e->fire = fire;
}

void
timer_arm(struct timer *t, struct timer_entry *e, long long deadline)
{
	pthread_mutex_lock(&t->mu);
	e->deadline = deadline;
	if (e->slot == 0) {
		ENVCTL_GROW(t->heap, t->n + 1, t->alloc);
		heap_set(t, t->n++, e);
	}
	heap_up(t, e->slot - 1);
	heap_down(t, e->slot - 1);
	if (t->heap[0] == e)
		pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

void
timer_cancel(struct timer *t, struct timer_entry *e)
{
	pthread_mutex_lock(&t->mu);
	if (e->slot != 0)
		heap_remove(t, e);
	pthread_mutex_unlock(&t->mu);
}

int
timer_fired(struct timer *t, const struct timer_entry *e)
{
	int fired;

	pthread_mutex_lock(&t->mu);
	fired = e->fired;
	pthread_mutex_unlock(&t->mu);
	return fired;
}

size_t
timer_pending(struct timer *t)
{
	size_t n;

	pthread_mutex_lock(&t->mu);
	n = t->n;
	pthread_mutex_unlock(&t->mu);
	return n;
}
