/*
 * check_fleet.c - the fleet runner's ordering: results are reported in the
 * order of idx, as soon as a host and every host before it are done, with
 * jobs finishing out of order; at most forks jobs at once.  Each job waits
 * on its own pipe, which the test writes to release it; progress() writes
 * a byte to another pipe after each completion, so the test knows when
 * the runner has taken a result.  No sleeps.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/fleet.h"

#define NJOBS	6

struct bench {
	int		 gate[NJOBS][2];	/* job i reads gate[i][0] */
	int		 prog[2];		/* a byte per completion */
	size_t		 idx[NJOBS];
	size_t		 njobs;
	int		 forks;
	size_t		 order[NJOBS];		/* done(), in call order */
	size_t		 ndone;
	size_t		 last_progress;
	pthread_mutex_t	 lock;
	int		 running, max_running;
	pthread_t	 runner;
};

static void
job(void *ctx, size_t i)
{
	struct bench *b = ctx;
	char c;

	pthread_mutex_lock(&b->lock);
	if (++b->running > b->max_running)
		b->max_running = b->running;
	pthread_mutex_unlock(&b->lock);
	ck_assert_int_eq(read(b->gate[i][0], &c, 1), 1);
	pthread_mutex_lock(&b->lock);
	b->running--;
	pthread_mutex_unlock(&b->lock);
}

static void
done(void *ctx, size_t i)
{
	struct bench *b = ctx;

	b->order[b->ndone++] = i;
}

static void
progress(void *ctx, size_t ndone, size_t n)
{
	struct bench *b = ctx;

	ck_assert_uint_le(ndone, n);
	b->last_progress = ndone;
	ck_assert_int_eq(write(b->prog[1], "x", 1), 1);
}

static void *
run(void *arg)
{
	struct bench *b = arg;
	struct fleet_job fj = { job, done, progress, b };

	ck_assert_int_eq(fleet_run(&fj, b->idx, b->njobs, b->forks), 0);
	return NULL;
}

static void
bench_start(struct bench *b, const size_t *idx, size_t n, int forks)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < NJOBS; i++)
		ck_assert_int_eq(pipe(b->gate[i]), 0);
	ck_assert_int_eq(pipe(b->prog), 0);
	memcpy(b->idx, idx, n * sizeof(*idx));
	b->njobs = n;
	b->forks = forks;
	pthread_mutex_init(&b->lock, NULL);
	ck_assert_int_eq(pthread_create(&b->runner, NULL, run, b), 0);
}

/* Lets job i finish, and waits until the runner has taken its result. */
static void
release(struct bench *b, size_t i)
{
	char c;

	ck_assert_int_eq(write(b->gate[i][1], "g", 1), 1);
	ck_assert_int_eq(read(b->prog[0], &c, 1), 1);
}

/* done() has been called for exactly want[0..n), in that order. */
static void
expect_done(const struct bench *b, const size_t *want, size_t n)
{
	size_t k;

	ck_assert_uint_eq(b->ndone, n);
	for (k = 0; k < n; k++)
		ck_assert_uint_eq(b->order[k], want[k]);
}

static void
bench_finish(struct bench *b)
{
	size_t i;

	ck_assert_int_eq(pthread_join(b->runner, NULL), 0);
	for (i = 0; i < NJOBS; i++) {
		close(b->gate[i][0]);
		close(b->gate[i][1]);
	}
	close(b->prog[0]);
	close(b->prog[1]);
	pthread_mutex_destroy(&b->lock);
}

/* idx is not sorted: the order reported is idx's, not the jobs' values. */
START_TEST(test_out_of_order)
{
	static const size_t idx[] = { 3, 0, 4, 1 };
	static const size_t want[] = { 3, 0, 4, 1 };
	struct bench b;

	bench_start(&b, idx, 4, 4);
	release(&b, 1);			/* last in idx: held back */
	expect_done(&b, want, 0);
	release(&b, 4);			/* third: held back */
	expect_done(&b, want, 0);
	release(&b, 3);			/* first: reported alone */
	expect_done(&b, want, 1);
	release(&b, 0);			/* second: it, the third, the last */
	expect_done(&b, want, 4);
	ck_assert_uint_eq(b.last_progress, 4);
	bench_finish(&b);
	ck_assert_int_le(b.max_running, 4);
}
END_TEST

/* In order, each result is reported as soon as its job is done. */
START_TEST(test_in_order)
{
	static const size_t idx[] = { 0, 1, 2 };
	struct bench b;
	size_t k;

	bench_start(&b, idx, 3, 3);
	for (k = 0; k < 3; k++) {
		release(&b, k);
		expect_done(&b, idx, k + 1);
	}
	bench_finish(&b);
}
END_TEST

/* Two threads for six jobs: never more than two at once, order kept. */
START_TEST(test_bounded)
{
	static const size_t idx[] = { 0, 1, 2, 3, 4, 5 };
	struct bench b;

	bench_start(&b, idx, 6, 2);
	release(&b, 1);
	expect_done(&b, idx, 0);
	/* Job 2 may start now; job 0 still runs. */
	release(&b, 2);
	expect_done(&b, idx, 0);
	release(&b, 0);
	expect_done(&b, idx, 3);
	release(&b, 4);
	expect_done(&b, idx, 3);
	release(&b, 3);
	expect_done(&b, idx, 5);
	release(&b, 5);
	expect_done(&b, idx, 6);
	bench_finish(&b);
	ck_assert_int_le(b.max_running, 2);
	ck_assert_int_ge(b.max_running, 1);
}
END_TEST

/* More forks than jobs, and no job at all. */
START_TEST(test_edges)
{
	static const size_t idx[] = { 2 };
	struct bench b;
	struct fleet_job fj = { job, done, progress, &b };

	bench_start(&b, idx, 1, 64);
	release(&b, 2);
	expect_done(&b, idx, 1);
	bench_finish(&b);
	memset(&b, 0, sizeof(b));
	ck_assert_int_eq(fleet_run(&fj, NULL, 0, 8), 0);
	ck_assert_uint_eq(b.ndone, 0);
}
END_TEST

static Suite *
fleet_suite(void)
{
	Suite *s = suite_create("fleet");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_out_of_order);
	tcase_add_test(tc, test_in_order);
	tcase_add_test(tc, test_bounded);
	tcase_add_test(tc, test_edges);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(fleet_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
