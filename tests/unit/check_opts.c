/* check_opts.c - the option table: parsing and --help. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/opts.h"

struct vals {
	const char	*playbook;
	int		 forks, quiet, verbose;
};

static int
parse(struct vals *v, int argc, char **argv, char **ops, int *nops,
    struct err *err)
{
	struct opt opts[] = {
		{ 'p', "playbook", ENVCTL_OPT_STRING, &v->playbook, "FILE",
		    "the playbook", 0, 0 },
		{ 'j', "forks", ENVCTL_OPT_INT, &v->forks, "N",
		    "parallel hosts", 1, 1000 },
		{ 'q', "quiet", ENVCTL_OPT_FLAG, &v->quiet, NULL, "quiet", 0,
		    0 },
		{ 'v', "verbose", ENVCTL_OPT_COUNT, &v->verbose, NULL, "more",
		    0, 0 },
		ENVCTL_OPT_END_ENTRY
	};

	memset(v, 0, sizeof(*v));
	return opts_parse(opts, argc, argv, 1, ops, nops, err);
}

START_TEST(test_forms)
{
	char *argv[] = { "plan", "-pA", "inv.yaml", "--forks=7", "-qvv",
	    "--verbose", "--", "-x", NULL };
	char *ops[8];
	struct vals v;
	struct err err = ENVCTL_ERR_INIT;
	int n;

	ck_assert_int_eq(parse(&v, 8, argv, ops, &n, &err), 0);
	ck_assert_str_eq(v.playbook, "A");
	ck_assert_int_eq(v.forks, 7);
	ck_assert_int_eq(v.quiet, 1);
	ck_assert_int_eq(v.verbose, 3);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(ops[0], "inv.yaml");
	ck_assert_str_eq(ops[1], "-x");
}
END_TEST

START_TEST(test_separate_values)
{
	char *argv[] = { "plan", "-j", "3", "--playbook", "B", "-", NULL };
	char *ops[6];
	struct vals v;
	int n;

	ck_assert_int_eq(parse(&v, 6, argv, ops, &n, NULL), 0);
	ck_assert_int_eq(v.forks, 3);
	ck_assert_str_eq(v.playbook, "B");
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ops[0], "-");
}
END_TEST

static void
expect_usage_error(int argc, char **argv, const char *msg)
{
	char *ops[8];
	struct vals v;
	struct err err = ENVCTL_ERR_INIT;
	int n;

	ck_assert_int_eq(parse(&v, argc, argv, ops, &n, &err), ENVCTL_EUSAGE);
	ck_assert_str_eq(err.msg, msg);
	err_release(&err);
}

START_TEST(test_errors)
{
	char *a1[] = { "plan", "--nope", NULL };
	char *a2[] = { "plan", "-x", NULL };
	char *a3[] = { "plan", "--forks", NULL };
	char *a4[] = { "plan", "-j", "0", NULL };
	char *a5[] = { "plan", "--forks=abc", NULL };
	char *a6[] = { "plan", "--quiet=1", NULL };
	char *a7[] = { "plan", "-qz", NULL };
	char *a8[] = { "plan", "--nope=3", NULL };

	expect_usage_error(2, a1, "unknown option '--nope'");
	expect_usage_error(2, a2, "unknown option '-x'");
	expect_usage_error(2, a3, "option '--forks' needs a value (N)");
	expect_usage_error(3, a4, "option '--forks' expects a number from 1 "
	    "to 1000, not '0'");
	expect_usage_error(2, a5, "option '--forks' expects a number from 1 "
	    "to 1000, not 'abc'");
	expect_usage_error(2, a6, "option '--quiet' takes no value");
	expect_usage_error(2, a7, "unknown option '-z' in '-qz'");
	expect_usage_error(2, a8, "unknown option '--nope'");
}
END_TEST

START_TEST(test_help)
{
	char *argv[] = { "plan", "x", "--help", NULL };
	char *ops[4];
	struct vals v;
	int n;
	struct opt opts[] = {
		{ 'p', "playbook", ENVCTL_OPT_STRING, NULL, "FILE",
		    "the playbook", 0, 0 },
		{ 0, "accept-new-host-keys", ENVCTL_OPT_FLAG, NULL, NULL,
		    "trust unknown hosts", 0, 0 },
		ENVCTL_OPT_END_ENTRY
	};
	static const char *const usage[] = { "envctl plan INVENTORY",
		"envctl plan PLANFILE", NULL };
	struct buf b = ENVCTL_BUF_INIT;

	ck_assert_int_eq(parse(&v, 3, argv, ops, &n, NULL), 1);
	opts_usage(&b, usage, opts);
	ck_assert_str_eq(b.data,
	    "usage: envctl plan INVENTORY\n"
	    "   or: envctl plan PLANFILE\n"
	    "\n"
	    "    -p, --playbook FILE       the playbook\n"
	    "        --accept-new-host-keys\n"
	    "                              trust unknown hosts\n");
	buf_release(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("opts");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_forms);
	tcase_add_test(tc, test_separate_values);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_help);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
