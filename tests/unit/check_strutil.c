/* check_strutil.c - edit distance and typo suggestions. */
#include <check.h>
#include <stdlib.h>

#include "common/strutil.h"

START_TEST(test_distance)
{
	ck_assert_uint_eq(str_distance("", ""), 0);
	ck_assert_uint_eq(str_distance("hosts", "hosts"), 0);
	ck_assert_uint_eq(str_distance("hots", "hosts"), 1);
	ck_assert_uint_eq(str_distance("kitten", "sitting"), 3);
	ck_assert_uint_eq(str_distance("", "abc"), 3);
	ck_assert_uint_eq(str_distance("abc", ""), 3);
}
END_TEST

START_TEST(test_closest)
{
	static const char *const keys[] = { "hosts", "vars", "children",
		NULL };

	ck_assert_str_eq(str_closest("hots", keys), "hosts");
	ck_assert_str_eq(str_closest("childern", keys), "children");
	ck_assert_str_eq(str_closest("var", keys), "vars");
	ck_assert_ptr_null(str_closest("something", keys));
	ck_assert(str_endswith("a.yaml", ".yaml"));
	ck_assert(!str_endswith("yaml", ".yaml"));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("strutil");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_distance);
	tcase_add_test(tc, test_closest);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
