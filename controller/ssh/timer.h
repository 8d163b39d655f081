/*
 * timer.h - one thread that fires the deadlines of many owners.
 *
 * Armed entries wait in a binary heap ordered by deadline (CLOCK_MONOTONIC
 * ms, common/deadline.h).  One thread, started by the first
 * timer_attach() and joined by the last timer_detach() (or timer_free()),
 * sleeps on a condition variable until the earliest deadline; there an
 * entry is disarmed, marked fired, and its fire callback runs on that
 * thread under the timer's lock: short, and no timer_*() call in it.
 * Thread-safe; once timer_cancel() returns, the entry's fire will not run.
 */
#ifndef ENVCTL_CONTROLLER_SSH_TIMER_H
#define ENVCTL_CONTROLLER_SSH_TIMER_H

#include <stddef.h>

struct err;
struct timer;

/* Embedded in its owner's struct; the owner sets fire (timer_entry_init). */
struct timer_entry {
	void		(*fire)(struct timer_entry *e);
	/* private: under the timer's lock */
	long long	 deadline;
	size_t		 slot;		/* heap index + 1; 0: idle */
	int		 fired;
};

/* A timer without a thread; freed with timer_free(). */
struct timer *timer_new(void);
/* Joins the thread if one runs; entries still armed are dropped. */
void	timer_free(struct timer *t);
/*
 * One more user: entries fire only while at least one is attached.
 * Starts the thread when there is none; ENVCTL_ESYS when it cannot start.
 */
int	timer_attach(struct timer *t, struct err *err);
/* One user fewer; the last one stops and joins the thread. */
void	timer_detach(struct timer *t);
/* Clears e (not armed, not fired) and sets its callback. */
void	timer_entry_init(struct timer_entry *e,
	    void (*fire)(struct timer_entry *e));
/* Arms e for deadline (ms), or moves it there when armed already. */
void	timer_arm(struct timer *t, struct timer_entry *e,
	    long long deadline);
/* Disarms e; a no-op when it is not armed (or fired already). */
void	timer_cancel(struct timer *t, struct timer_entry *e);
/* 1 once e's deadline fired (until timer_entry_init()), else 0. */
int	timer_fired(struct timer *t, const struct timer_entry *e);
/* How many entries are armed. */
size_t	timer_pending(struct timer *t);

#endif
