/*
 * check_startups.c - controller/ssh/startups: handshakes in flight per hop.
 *
 * No network: threads take and give back slots.  A test that needs a
 * thread to be waiting asks startups_waiting(), never sleeps.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/deadline.h"
#include "common/err.h"
#include "controller/ssh/startups.h"

static int
take(struct startups *s, const char *key, long long deadline)
{
	struct err err = ENVCTL_ERR_INIT;
	int rc = startups_acquire(s, key, deadline, NULL, &err);

	err_release(&err);
	return rc;
}

START_TEST(test_counts)
{
	struct startups *s = startups_new(3);
	struct err err = ENVCTL_ERR_INIT;
	long long waited = -1;
	int i;

	ck_assert_int_eq(startups_max(s), 3);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(take(s, "bastion", 0), 0);
	ck_assert_int_eq(startups_held(s, "bastion"), 3);
	/* Full: a deadline already passed fails at once. */
	ck_assert_int_eq(startups_acquire(s, "bastion", 1, &waited, &err),
	    ENVCTL_ETIMEOUT);
	ck_assert_int_eq(err.code, ENVCTL_ETIMEOUT);
	ck_assert_ptr_nonnull(strstr(err.msg, "'bastion'"));
	ck_assert_int_lt(waited, 1000);
	err_release(&err);
	ck_assert_int_eq(startups_held(s, "bastion"), 3);
	startups_release(s, "bastion");
	ck_assert_int_eq(startups_held(s, "bastion"), 2);
	ck_assert_int_eq(take(s, "bastion", 1), 0);
	for (i = 0; i < 3; i++)
		startups_release(s, "bastion");
	ck_assert_int_eq(startups_held(s, "bastion"), 0);
	ck_assert_uint_eq(startups_nkeys(s), 0);
	/* A release nobody took is ignored. */
	startups_release(s, "bastion");
	ck_assert_uint_eq(startups_nkeys(s), 0);
	startups_free(s);
	startups_free(NULL);
}
END_TEST

/* 100 direct hosts are 100 keys: none waits, even with a cap of 1. */
START_TEST(test_keys_apart)
{
	struct startups *s = startups_new(1);
	char key[64];
	int i;

	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "127.0.0.1:%d", 22000 + i);
		ck_assert_int_eq(take(s, key, 1), 0);
	}
	ck_assert_uint_eq(startups_nkeys(s), 100);
	ck_assert_int_eq(startups_held(s, "127.0.0.1:22042"), 1);
	ck_assert_int_eq(startups_held(s, "127.0.0.1:21999"), 0);
	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "127.0.0.1:%d", 22000 + i);
		startups_release(s, key);
	}
	ck_assert_uint_eq(startups_nkeys(s), 0);
	startups_free(s);
}
END_TEST

/* The wait ends at the deadline, not before, and leaves nothing behind. */
START_TEST(test_deadline)
{
	struct startups *s = startups_new(1);
	struct err err = ENVCTL_ERR_INIT;
	long long waited = 0, t0;

	ck_assert_int_eq(take(s, "jump", 0), 0);
	t0 = deadline_now_ms();
	ck_assert_int_eq(startups_acquire(s, "jump", t0 + 300, &waited, &err),
	    ENVCTL_ETIMEOUT);
	err_release(&err);
	ck_assert_int_ge(deadline_now_ms() - t0, 299);
	ck_assert_int_ge(waited, 299);
	ck_assert_int_lt(waited, 5000);
	ck_assert_int_eq(startups_waiting(s, "jump"), 0);
	ck_assert_int_eq(startups_held(s, "jump"), 1);
	startups_release(s, "jump");
	ck_assert_uint_eq(startups_nkeys(s), 0);
	startups_free(s);
}
END_TEST

struct waiter {
	struct startups *s;
	const char	*key;
	long long	 deadline;
	int		 rc;
	long long	 waited;
};

static void *
waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct err err = ENVCTL_ERR_INIT;

	w->rc = startups_acquire(w->s, w->key, w->deadline, &w->waited, &err);
	err_release(&err);
	return NULL;
}

/* A release wakes a waiter of that key at once; other keys do not. */
START_TEST(test_wakeup)
{
	struct startups *s = startups_new(1);
	struct waiter w = { s, "jump", 0, -1, 0 };
	pthread_t th;

	w.deadline = deadline_now_ms() + 30000;
	ck_assert_int_eq(take(s, "jump", 0), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, waiter_main, &w), 0);
	while (startups_waiting(s, "jump") == 0)
		sched_yield();
	ck_assert_int_eq(take(s, "other", 0), 0);
	startups_release(s, "other");
	ck_assert_int_eq(startups_waiting(s, "jump"), 1);
	startups_release(s, "jump");
	pthread_join(th, NULL);
	ck_assert_int_eq(w.rc, 0);
	ck_assert_int_lt(w.waited, 30000);
	ck_assert_int_eq(startups_held(s, "jump"), 1);
	startups_release(s, "jump");
	ck_assert_uint_eq(startups_nkeys(s), 0);
	startups_free(s);
}
END_TEST

#define NTHREADS	8
#define NROUNDS		300

struct churn {
	struct startups *s;
	pthread_mutex_t	*mu;
	int		*inflight;	/* per key */
	int		*peak;
	int		 id;
};

static void *
churn_main(void *arg)
{
	static const char *const keys[] = { "a", "b", "c" };
	struct churn *c = arg;
	int i, k;

	for (i = 0; i < NROUNDS; i++) {
		k = (c->id + i) % 3;
		ck_assert_int_eq(take(c->s, keys[k], 0), 0);
		pthread_mutex_lock(c->mu);
		if (++c->inflight[k] > *c->peak)
			*c->peak = c->inflight[k];
		pthread_mutex_unlock(c->mu);
		sched_yield();
		pthread_mutex_lock(c->mu);
		c->inflight[k]--;
		pthread_mutex_unlock(c->mu);
		startups_release(c->s, keys[k]);
	}
	return NULL;
}

/* Many threads: never more than max holders of a key; nothing leaks. */
START_TEST(test_threads)
{
	struct startups *s = startups_new(2);
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct churn cs[NTHREADS];
	pthread_t th[NTHREADS];
	int inflight[3] = { 0, 0, 0 }, peak = 0, i;

	for (i = 0; i < NTHREADS; i++) {
		cs[i] = (struct churn){ s, &mu, inflight, &peak, i };
		ck_assert_int_eq(pthread_create(&th[i], NULL, churn_main,
		    &cs[i]), 0);
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_le(peak, 2);
	ck_assert_int_ge(peak, 1);
	ck_assert_uint_eq(startups_nkeys(s), 0);
	startups_free(s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("startups");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_keys_apart);
	tcase_add_test(tc, test_deadline);
	tcase_add_test(tc, test_wakeup);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
