/* check_atomicfile.c - local atomic replacement of a file. */
#include <check.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/atomicfile.h"
#include "testutil.h"

/* Entries in d besides "." and "..". */
static int
entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(dp);
	return n;
}

START_TEST(test_create_and_replace)
{
	char *p = xasprintf("%s/m.prom", tu_dir), *got;
	struct err err = ENVCTL_ERR_INIT;
	struct stat st;
	size_t len;

	ck_assert_int_eq(atomic_write_file(p, "one\n", 4, 0600, &err), 0);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(atomic_write_file(p, "two, longer\n", 12, 0644,
	    &err), 0);
	got = tu_read(p, &len);
	ck_assert_uint_eq(len, 12);
	ck_assert_int_eq(memcmp(got, "two, longer\n", 12), 0);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(entries(tu_dir), 1);
	free(got);
	free(p);
}
END_TEST

START_TEST(test_failure_leaves_target_whole)
{
	char *p = xasprintf("%s/m.prom", tu_dir), *got, *missing;
	struct err err = ENVCTL_ERR_INIT;
	size_t len;

	ck_assert_int_eq(atomic_write_file(p, "old\n", 4, 0644, &err), 0);
	/* No temp file can be made: the old file stays, nothing is left. */
	if (geteuid() != 0) {
		ck_assert_int_eq(chmod(tu_dir, 0500), 0);
		ck_assert_int_eq(atomic_write_file(p, "new\n", 4, 0644, &err),
		    ENVCTL_ESYS);
		ck_assert_ptr_nonnull(strstr(err.msg, "cannot create a "
		    "temporary file in"));
		err_release(&err);
		ck_assert_int_eq(chmod(tu_dir, 0700), 0);
	}
	/* The target is a directory: rename fails, the temp is removed. */
	missing = xasprintf("%s/sub", tu_dir);
	ck_assert_int_eq(mkdir(missing, 0700), 0);
	free(tu_writes(missing, "keep", "x"));
	ck_assert_int_eq(atomic_write_file(missing, "new\n", 4, 0644, &err),
	    ENVCTL_ESYS);
	ck_assert_ptr_nonnull(strstr(err.msg, "cannot rename"));
	err_release(&err);
	got = tu_read(p, &len);
	ck_assert_uint_eq(len, 4);
	ck_assert_int_eq(memcmp(got, "old\n", 4), 0);
	ck_assert_int_eq(entries(tu_dir), 2);
	/* A missing directory is named in the error. */
	free(missing);
	missing = xasprintf("%s/nodir/m.prom", tu_dir);
	ck_assert_int_eq(atomic_write_file(missing, "x", 1, 0644, &err),
	    ENVCTL_ESYS);
	ck_assert_ptr_nonnull(strstr(err.msg, "/nodir"));
	err_release(&err);
	free(missing);
	free(got);
	free(p);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("atomicfile");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, tu_dir_setup, tu_dir_teardown);
	tcase_add_test(tc, test_create_and_replace);
	tcase_add_test(tc, test_failure_leaves_target_whole);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
