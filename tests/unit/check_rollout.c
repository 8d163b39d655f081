/*
 * check_rollout.c - --serial and --max-fail: the parsers, the batch
 * splitting (Ansible's serial: rounding), the budget, the texts and JSON,
 * and the usage errors (64) of the commands that take them.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/rollout.h"
#include "testutil.h"

/* The sizes of --serial text for total hosts, as "1 2 3". */
static char *
split(const char *text, size_t total)
{
	struct rollout_spec rs = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	size_t *sizes, n, i;

	ck_assert_msg(rollout_parse_serial(&rs, text, &err) == 0, "%s: %s",
	    text, err.msg);
	sizes = rollout_split(&rs, total, &n);
	for (i = 0; i < n; i++)
		buf_addf(&b, "%s%zu", i > 0 ? " " : "", sizes[i]);
	free(sizes);
	return buf_detach(&b, NULL);
}

static void
check_split(const char *text, size_t total, const char *want)
{
	char *got = split(text, total);

	ck_assert_msg(strcmp(got, want) == 0, "--serial %s of %zu hosts: "
	    "want '%s', got '%s'", text, total, want, got);
	free(got);
}

START_TEST(test_split)
{
	/* Counts; the last size repeats until every host is done. */
	check_split("1", 3, "1 1 1");
	check_split("2", 5, "2 2 1");
	check_split("1,2,100%", 6, "1 2 3");
	check_split("1,5,10", 40, "1 5 10 10 10 4");
	/* Percentages of the total, rounded down (Ansible: 30% of 20 is 6). */
	check_split("30%", 20, "6 6 6 2");
	check_split("10%,20%,100%", 100, "10 20 70");
	check_split("1,10%,100%", 1000, "1 100 899");
	check_split("33%", 10, "3 3 3 1");
	/* However small the percentage, at least one host a batch. */
	check_split("1%", 3, "1 1 1");
	check_split("10%", 9, "1 1 1 1 1 1 1 1 1");
	check_split("1,10%,100%", 9, "1 1 7");
	/* A list longer than the hosts: the batches end with the hosts. */
	check_split("1,1,1,1,1,1", 2, "1 1");
	check_split("5,10", 3, "3");
	check_split("100%", 7, "7");
	/* No host to change: no batch. */
	check_split("1,10%", 0, "");
}
END_TEST

START_TEST(test_no_serial_is_one_batch)
{
	struct rollout_spec rs = { 0 };
	size_t *sizes, n;

	sizes = rollout_split(&rs, 9, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(sizes[0], 9);
	free(sizes);
	ck_assert_uint_eq(rollout_budget(&rs, 9), SIZE_MAX);
}
END_TEST

static void
bad_serial(const char *text, const char *want)
{
	struct rollout_spec rs = { 0 };
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_int_eq(rollout_parse_serial(&rs, text, &err),
	    ENVCTL_EUSAGE);
	ck_assert_int_eq(err.code, ENVCTL_EUSAGE);
	ck_assert_msg(strstr(err.msg, want) != NULL, "--serial %s: want "
	    "'%s' in '%s'", text, want, err.msg);
	err_release(&err);
}

START_TEST(test_serial_refused)
{
	bad_serial("0", "--serial: '0' is no batch size: give a count of "
	    "hosts (1 or more) or a percentage (1% to 100%)");
	bad_serial("0%", "'0%' is no batch size");
	bad_serial("1,0%,100%", "'0%' is no batch size");
	bad_serial("101%", "'101%' is no batch size");
	bad_serial("-1", "'-1' is no batch size");
	bad_serial("+1", "'+1' is no batch size");
	bad_serial("1.5%", "'1.5%' is no batch size");
	bad_serial("ten", "'ten' is no batch size");
	bad_serial("%", "'%' is no batch size");
	bad_serial("1 ,2", "'1 ' is no batch size");
	bad_serial("99999999", "'99999999' is no batch size");
	bad_serial("1000001", "'1000001' is no batch size");
	bad_serial("", "--serial: an empty batch size in '': give");
	bad_serial("1,,2", "an empty batch size in '1,,2'");
	bad_serial("1,", "an empty batch size in '1,'");
	bad_serial("1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
	    "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
	    "1,1,1", "--serial: more than 64 batch sizes");
}
END_TEST

START_TEST(test_max_fail)
{
	struct rollout_spec rs = { 0 };
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_int_eq(rollout_parse_max_fail(&rs, "0", &err), 0);
	ck_assert_uint_eq(rollout_budget(&rs, 50), 0);
	ck_assert_int_eq(rollout_parse_max_fail(&rs, "2", &err), 0);
	ck_assert_uint_eq(rollout_budget(&rs, 50), 2);
	/* A percentage of the hosts to change, rounded down. */
	ck_assert_int_eq(rollout_parse_max_fail(&rs, "10%", &err), 0);
	ck_assert_uint_eq(rollout_budget(&rs, 25), 2);
	ck_assert_uint_eq(rollout_budget(&rs, 9), 0);
	ck_assert_uint_eq(rollout_budget(&rs, 1000), 100);
	ck_assert_int_eq(rollout_parse_max_fail(&rs, "0%", &err), 0);
	ck_assert_uint_eq(rollout_budget(&rs, 1000), 0);
	ck_assert_int_eq(rollout_parse_max_fail(&rs, "100%", &err), 0);
	ck_assert_uint_eq(rollout_budget(&rs, 7), 7);
	ck_assert_int_eq(rollout_parse_max_fail(&rs, "101%", &err),
	    ENVCTL_EUSAGE);
	ck_assert_str_eq(err.msg, "--max-fail: '101%' is no failure budget: "
	    "give a count of hosts (0 or more) or a percentage (0% to 100%)");
	err_release(&err);
	ck_assert_int_eq(rollout_parse_max_fail(&rs, "", &err),
	    ENVCTL_EUSAGE);
	err_release(&err);
	ck_assert_int_eq(rollout_parse_max_fail(&rs, "two", &err),
	    ENVCTL_EUSAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "'two' is no failure budget"));
	err_release(&err);
}
END_TEST

START_TEST(test_texts_and_json)
{
	struct rollout_spec rs = { 0 };
	struct rollout_batch batches[3];
	struct rollout_run run = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	const char *n1[] = { "gpu-01" }, *n2[] = { "gpu-02", "gpu-03" },
	    *n3[] = { "gpu-04", "gpu-05", "gpu-06" };
	json_t *j;
	char *s;

	ck_assert_int_eq(rollout_parse_serial(&rs, "1,2,100%", &err), 0);
	ck_assert_int_eq(rollout_parse_max_fail(&rs, "1", &err), 0);
	memset(batches, 0, sizeof(batches));
	batches[0].names = n1;
	batches[0].nhosts = 1;
	batches[0].ran = 1;
	batches[0].counts.changed = 1;
	batches[1].names = n2;
	batches[1].nhosts = 2;
	batches[1].ran = 1;
	batches[1].counts.failed = 2;
	batches[2].names = n3;
	batches[2].nhosts = 3;
	batches[2].counts.skipped = 3;
	run.batches = batches;
	run.nbatches = 3;
	run.total = 6;
	run.budget = 1;
	run.failures = 2;
	run.stopped_after = 2;
	rollout_batch_text(&b, &run, 0);
	rollout_batch_text(&b, &run, 1);
	rollout_reason(&b, &run);
	ck_assert_str_eq(b.data, "batch 1/3: 1 host: 1 changed\n"
	    "batch 2/3: 2 hosts: 0 changed, 2 failed\n"
	    "rollout stopped after batch 2 (2 failures > budget 1)");
	buf_release(&b);
	j = rollout_json(&rs, &run);
	s = json_dumps(j, JSON_COMPACT);
	ck_assert_str_eq(s, "{\"serial\":[\"1\",\"2\",\"100%\"],"
	    "\"max_fail\":\"1\",\"budget\":1,\"hosts\":6,\"failures\":2,"
	    "\"batches\":["
	    "{\"index\":1,\"hosts\":[\"gpu-01\"],\"ok\":0,\"changed\":1,"
	    "\"failed\":0,\"unreachable\":0,\"skipped\":0},"
	    "{\"index\":2,\"hosts\":[\"gpu-02\",\"gpu-03\"],\"ok\":0,"
	    "\"changed\":0,\"failed\":2,\"unreachable\":0,\"skipped\":0},"
	    "{\"index\":3,\"hosts\":[\"gpu-04\",\"gpu-05\",\"gpu-06\"],"
	    "\"ok\":0,\"changed\":0,\"failed\":0,\"unreachable\":0,"
	    "\"skipped\":3}],\"stopped_after\":2,\"reason\":\"rollout stopped "
	    "after batch 2 (2 failures > budget 1)\"}");
	free(s);
	json_decref(j);
	/* Went through, no budget: nulls. */
	rs.has_budget = 0;
	run.budget = SIZE_MAX;
	run.stopped_after = 0;
	j = rollout_json(&rs, &run);
	ck_assert(json_is_null(json_object_get(j, "max_fail")));
	ck_assert(json_is_null(json_object_get(j, "budget")));
	ck_assert(json_is_null(json_object_get(j, "stopped_after")));
	ck_assert(json_is_null(json_object_get(j, "reason")));
	json_decref(j);
}
END_TEST

/* envctl CMD ARGS...: exit status 64 and want on stderr. */
static void
usage_error(const char *want, const char *a1, const char *a2,
    const char *a3, const char *a4, const char *a5)
{
	char *argv[] = { (char *)tu_envctl(), (char *)a1, (char *)a2,
	    (char *)a3, (char *)a4, (char *)a5, NULL };
	struct tu_run r;

	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_msg(r.status == 64, "%s %s %s: exit %d, want 64 (%s)", a1,
	    a3, a4 != NULL ? a4 : "", r.status, r.errout);
	ck_assert_msg(strstr(r.errout, want) != NULL, "want '%s' in '%s'",
	    want, r.errout);
	tu_run_free(&r);
}

START_TEST(test_usage_errors)
{
	const char *inv = "/nonexistent/hosts.yaml";

	usage_error("envctl apply: --serial: '0%' is no batch size", "apply",
	    inv, "--serial", "0%", NULL);
	usage_error("envctl apply: --serial: 'x' is no batch size", "apply",
	    inv, "--serial=x", "--yes", NULL);
	usage_error("envctl apply: --max-fail: '5x' is no failure budget",
	    "apply", inv, "--serial=1", "--max-fail", "5x");
	usage_error("envctl apply: --max-fail needs --serial", "apply", inv,
	    "--max-fail", "1", NULL);
	usage_error("envctl rollback: --serial: an empty batch size",
	    "rollback", inv, "--serial", "1,,2", "--yes");
	usage_error("envctl drift: --serial and --max-fail are for --fix",
	    "drift", inv, "--serial", "1", NULL);
	usage_error("envctl drift: --serial: '0' is no batch size", "drift",
	    inv, "--fix", "--serial", "0");
	usage_error("option '--serial' needs a value", "apply", inv,
	    "--serial", NULL, NULL);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("rollout");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_no_serial_is_one_batch);
	tcase_add_test(tc, test_serial_refused);
	tcase_add_test(tc, test_max_fail);
	tcase_add_test(tc, test_texts_and_json);
	tcase_add_test(tc, test_usage_errors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
