/*
 * check_timer.c - controller/ssh/timer: many deadlines on one thread.
 *
 * No network: entries record the order in which they fire.  Tests wait on
 * a condition variable for the fires they expect (a sentinel entry armed
 * after the ones that must not fire), never on a sleep.
 */
#include <check.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "common/deadline.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/ssh/timer.h"

#define NMANY		2000

struct rec {
	struct timer_entry e;
	int		 id;
	long long	 deadline;
	long long	 fired_at;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int *order;
static size_t nfired;

static void
rec_fire(struct timer_entry *e)
{
	struct rec *r = (struct rec *)(void *)((char *)e -
	    offsetof(struct rec, e));

	pthread_mutex_lock(&mu);
	r->fired_at = deadline_now_ms();
	order[nfired++] = r->id;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void
reset(size_t n)
{
	free(order);
	order = xcalloc(n + 1, sizeof(*order));
	nfired = 0;
}

/* Waits until n entries fired (at most 10 s). */
static size_t
wait_fired(size_t n)
{
	struct timespec ts;
	size_t got;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&mu);
	while (nfired < n)
		if (pthread_cond_timedwait(&cv, &mu, &ts) != 0)
			break;
	got = nfired;
	pthread_mutex_unlock(&mu);
	return got;
}

static struct rec *
recs_new(size_t n)
{
	struct rec *rs = xcalloc(n, sizeof(*rs));
	size_t i;

	for (i = 0; i < n; i++) {
		timer_entry_init(&rs[i].e, rec_fire);
		rs[i].id = (int)i;
	}
	return rs;
}

/* Thousands of deadlines armed out of order fire in deadline order. */
START_TEST(test_many_in_order)
{
	struct err err = ENVCTL_ERR_INIT;
	struct timer *t = timer_new();
	struct rec *rs = recs_new(NMANY);
	long long now = deadline_now_ms(), prev = 0;
	size_t i;

	reset(NMANY);
	srandom(17);
	for (i = 0; i < NMANY; i++) {
		/* Scattered over 50..550 ms, registered in random order. */
		rs[i].deadline = now + 50 + random() % 500;
		timer_arm(t, &rs[i].e, rs[i].deadline);
	}
	ck_assert_uint_eq(timer_pending(t), NMANY);
	/* Attached only now, so that a slow machine cannot fire some
	 * before all are registered. */
	ck_assert_int_eq(timer_attach(t, &err), 0);
	ck_assert_uint_eq(wait_fired(NMANY), NMANY);
	for (i = 0; i < NMANY; i++) {
		struct rec *r = &rs[order[i]];

		ck_assert_msg(r->deadline >= prev, "entry %d (deadline %lld) "
		    "fired after one of deadline %lld", r->id, r->deadline,
		    prev);
		prev = r->deadline;
		ck_assert_int_ge(r->fired_at, r->deadline);
		ck_assert(timer_fired(t, &r->e));
	}
	ck_assert_uint_eq(timer_pending(t), 0);
	timer_detach(t);
	timer_free(t);
	free(rs);
}
END_TEST

/*
 * A cancelled entry never fires; the ones around it do.  Armed before the
 * thread runs, so that even past deadlines are cancelled before expiry;
 * then one cancelled while the thread waits for it.
 */
START_TEST(test_cancel_before_expiry)
{
	struct err err = ENVCTL_ERR_INIT;
	struct timer *t = timer_new();
	struct rec *rs = recs_new(7);
	long long now = deadline_now_ms();

	reset(7);
	timer_arm(t, &rs[0].e, now + 40);
	timer_arm(t, &rs[1].e, now + 30);	/* the earliest: cancelled */
	timer_arm(t, &rs[2].e, now + 60);	/* cancelled */
	timer_arm(t, &rs[3].e, now + 50);
	timer_cancel(t, &rs[1].e);
	timer_cancel(t, &rs[2].e);
	timer_cancel(t, &rs[2].e);		/* twice: a no-op */
	timer_arm(t, &rs[4].e, now + 200);	/* the sentinel */
	ck_assert_uint_eq(timer_pending(t), 3);
	ck_assert_int_eq(timer_attach(t, &err), 0);
	ck_assert_uint_eq(wait_fired(3), 3);
	ck_assert_int_eq(order[0], 0);
	ck_assert_int_eq(order[1], 3);
	ck_assert_int_eq(order[2], 4);
	ck_assert(!timer_fired(t, &rs[1].e));
	ck_assert(!timer_fired(t, &rs[2].e));
	/* The thread now sleeps until rs[5]'s deadline: cancel it there. */
	now = deadline_now_ms();
	timer_arm(t, &rs[5].e, now + 500);
	timer_arm(t, &rs[6].e, now + 600);
	timer_cancel(t, &rs[5].e);
	ck_assert_uint_eq(wait_fired(4), 4);
	ck_assert_int_eq(order[3], 6);
	ck_assert(!timer_fired(t, &rs[5].e));
	/* Cancelling what fired already changes nothing. */
	timer_cancel(t, &rs[0].e);
	ck_assert(timer_fired(t, &rs[0].e));
	timer_detach(t);
	timer_free(t);
	free(rs);
}
END_TEST

/* Arming an armed entry moves it, earlier or later. */
START_TEST(test_rearm_moves)
{
	struct err err = ENVCTL_ERR_INIT;
	struct timer *t = timer_new();
	struct rec *rs = recs_new(3);
	long long now = deadline_now_ms();

	reset(3);
	timer_arm(t, &rs[0].e, now + 60 * 1000);
	timer_arm(t, &rs[1].e, now + 30);
	timer_arm(t, &rs[2].e, now + 80);
	timer_arm(t, &rs[0].e, now + 50);	/* earlier: moved up */
	timer_arm(t, &rs[1].e, now + 120);	/* later: moved down */
	ck_assert_uint_eq(timer_pending(t), 3);
	ck_assert_int_eq(timer_attach(t, &err), 0);
	ck_assert_uint_eq(wait_fired(3), 3);
	ck_assert_int_eq(order[0], 0);
	ck_assert_int_eq(order[1], 2);
	ck_assert_int_eq(order[2], 1);
	ck_assert_int_ge(rs[1].fired_at, now + 120);
	timer_detach(t);
	timer_free(t);
	free(rs);
}
END_TEST

/*
 * The thread runs only while someone is attached: entries armed with no
 * user wait, and fire once one attaches; the last detach stops it and a
 * new attach starts another.
 */
START_TEST(test_attach_detach)
{
	struct err err = ENVCTL_ERR_INIT;
	struct timer *t = timer_new();
	struct rec *rs = recs_new(3);
	long long now = deadline_now_ms();
	int k;

	reset(3);
	timer_arm(t, &rs[0].e, now - 10);	/* past already */
	ck_assert_uint_eq(timer_pending(t), 1);
	ck_assert_int_eq(timer_attach(t, &err), 0);
	ck_assert_int_eq(timer_attach(t, &err), 0);
	ck_assert_uint_eq(wait_fired(1), 1);
	timer_detach(t);
	timer_arm(t, &rs[1].e, deadline_now_ms() + 20);
	ck_assert_uint_eq(wait_fired(2), 2);
	timer_detach(t);		/* the last: joined */
	for (k = 0; k < 20; k++) {	/* restarts cleanly, again and again */
		ck_assert_int_eq(timer_attach(t, &err), 0);
		timer_detach(t);
	}
	ck_assert_int_eq(timer_attach(t, &err), 0);
	timer_arm(t, &rs[2].e, deadline_now_ms() + 10);
	ck_assert_uint_eq(wait_fired(3), 3);
	ck_assert_int_eq(order[2], 2);
	/* timer_free() joins a thread still running. */
	timer_free(t);
	free(rs);
}
END_TEST

/* Entries armed and cancelled from many threads at once. */
struct churn {
	struct timer	*t;
	struct rec	*rs;
	size_t		 n;
};

static void *
churn_main(void *arg)
{
	struct churn *c = arg;
	long long now = deadline_now_ms();
	size_t i;

	for (i = 0; i < c->n; i++) {
		timer_arm(c->t, &c->rs[i].e, now + 60 * 1000);
		if (i % 2 == 0)
			timer_cancel(c->t, &c->rs[i].e);
		else
			timer_arm(c->t, &c->rs[i].e, now + 20 + (long long)i %
			    7);
	}
	return NULL;
}

START_TEST(test_threads)
{
	struct err err = ENVCTL_ERR_INIT;
	struct timer *t = timer_new();
	struct churn cs[4];
	pthread_t th[4];
	size_t i, per = 250;

	reset(4 * per);
	ck_assert_int_eq(timer_attach(t, &err), 0);
	for (i = 0; i < 4; i++) {
		cs[i].t = t;
		cs[i].rs = recs_new(per);
		cs[i].n = per;
		ck_assert_int_eq(pthread_create(&th[i], NULL, churn_main,
		    &cs[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(wait_fired(4 * per / 2), 4 * per / 2);
	ck_assert_uint_eq(timer_pending(t), 0);
	timer_detach(t);
	timer_free(t);
	for (i = 0; i < 4; i++)
		free(cs[i].rs);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("timer");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_many_in_order);
	tcase_add_test(tc, test_cancel_before_expiry);
	tcase_add_test(tc, test_rearm_moves);
	tcase_add_test(tc, test_attach_detach);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	free(order);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
