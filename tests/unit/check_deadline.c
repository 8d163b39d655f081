/* check_deadline.c - the deadline arithmetic of common/deadline. */
#include <check.h>
#include <limits.h>
#include <stdlib.h>

#include "common/deadline.h"

START_TEST(test_left)
{
	ck_assert_int_eq(deadline_left_ms(1000, 400), 600);
	ck_assert_int_eq(deadline_left_ms(1000, 1000), 0);
	ck_assert_int_eq(deadline_left_ms(1000, 5000), 0);
	ck_assert_int_eq(deadline_left_ms(1LL << 40, 0), INT_MAX);
}
END_TEST

START_TEST(test_host_share)
{
	/* --timeout 3, connected in 50 ms: 1 s margin, 100 ms steps. */
	ck_assert_int_eq(deadline_host_ms(2950), 1900);
	ck_assert_int_eq(deadline_host_ms(3000), 2000);
	/* Past 5 s the margin is a fifth. */
	ck_assert_int_eq(deadline_host_ms(5000), 4000);
	ck_assert_int_eq(deadline_host_ms(30000), 24000);
	ck_assert_int_eq(deadline_host_ms(29990), 23900);
	/* Little or nothing left: the floor, never 0 or less. */
	ck_assert_int_eq(deadline_host_ms(1100), 100);
	ck_assert_int_eq(deadline_host_ms(1050), 100);
	ck_assert_int_eq(deadline_host_ms(0), ENVCTL_DEADLINE_MIN_MS);
	ck_assert_int_eq(deadline_host_ms(-5000), ENVCTL_DEADLINE_MIN_MS);
	/* Always less than what is left, once above the floor. */
	for (long long r = 1200; r < 4000000; r = r * 3 / 2)
		ck_assert_int_lt(deadline_host_ms(r), r - 999);
	ck_assert_int_le(deadline_host_ms(1LL << 40), INT_MAX);
}
END_TEST

START_TEST(test_now)
{
	long long a = deadline_now_ms(), b = deadline_now_ms();

	ck_assert(a > 0);
	ck_assert(b >= a);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("deadline");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_left);
	tcase_add_test(tc, test_host_share);
	tcase_add_test(tc, test_now);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
