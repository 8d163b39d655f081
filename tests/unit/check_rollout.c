/*
 * check_rollout.c - --serial, --by-group and --max-fail: the parsers, the
 * batch splitting (Ansible's serial: rounding), group by group, the
 * budget, the texts and JSON, and the usage errors (64) of the commands
 * that take them.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/inventory.h"
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
	    "\"max_fail\":\"1\",\"by_group\":null,\"budget\":1,"
	    "\"hosts\":6,\"failures\":2,\"batches\":["
	    "{\"index\":1,\"group\":null,\"hosts\":[\"gpu-01\"],\"ok\":0,"
	    "\"changed\":1,\"failed\":0,\"unreachable\":0,\"skipped\":0},"
	    "{\"index\":2,\"group\":null,\"hosts\":[\"gpu-02\",\"gpu-03\"],"
	    "\"ok\":0,\"changed\":0,\"failed\":2,\"unreachable\":0,"
	    "\"skipped\":0},"
	    "{\"index\":3,\"group\":null,"
	    "\"hosts\":[\"gpu-04\",\"gpu-05\",\"gpu-06\"],"
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
	/* The question without groups. */
	rollout_plan_text(&b, &run);
	ck_assert_str_eq(b.data, ", in batches of 1, 2, 3");
	buf_release(&b);
}
END_TEST

/*
 * Racks as groups: gpu-03 is in both (moved between racks, listed in
 * both), login-01 in neither; inventory order gpu-01..08, login-01.
 */
static const char racks[] =
    "[rack1]\ngpu-01\ngpu-02\ngpu-03\ngpu-04\n"
    "[rack2]\ngpu-03\ngpu-05\ngpu-06\ngpu-07\ngpu-08\n"
    "[login]\nlogin-01\n"
    "[racks:children]\nrack1\nrack2\n";

/* The first n hosts of the inventory (gpu-01..08, login-01). */
static const struct host **
first_hosts(const struct inventory *inv, size_t n)
{
	const struct host **h = calloc(n + 1, sizeof(*h));
	size_t i;

	for (i = 0; i < n; i++)
		h[i] = inventory_host(inv, i);
	return h;
}

/*
 * The batches of --serial serial (NULL: none) and --by-group groups over
 * the first n hosts, as "rack2: gpu-03 | rack2: gpu-05 gpu-06 | ...";
 * *budget gets the budget of --max-fail max_fail (NULL: none).
 */
static char *
by_group(const struct inventory *inv, const char *serial,
    const char *groups, const char *max_fail, size_t n, size_t *budget)
{
	struct rollout_spec rs = { 0 };
	struct rollout_run run = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	const struct host **hosts = first_hosts(inv, n);
	size_t *batch = calloc(n + 1, sizeof(*batch)), i, k;

	ck_assert(serial == NULL ||
	    rollout_parse_serial(&rs, serial, &err) == 0);
	ck_assert(max_fail == NULL ||
	    rollout_parse_max_fail(&rs, max_fail, &err) == 0);
	ck_assert_int_eq(rollout_parse_groups(&rs, groups, &err), 0);
	ck_assert_msg(rollout_groups(&run, &rs, inv, hosts, n, &err) == 0,
	    "--by-group %s: %s", groups, err.msg);
	rollout_batches(&run, &rs, hosts, n, batch);
	for (i = 0; i < run.nbatches; i++) {
		buf_addf(&b, "%s%s:", i > 0 ? " | " : "",
		    run.batches[i].group);
		for (k = 0; k < run.batches[i].nhosts; k++)
			buf_addf(&b, " %s", run.batches[i].names[k]);
	}
	/* Each host's batch[] names the batch that holds it. */
	for (i = 0; i < n; i++) {
		const struct rollout_batch *bt = &run.batches[batch[i] - 1];

		ck_assert_uint_ge(batch[i], 1);
		for (k = 0; k < bt->nhosts; k++)
			if (strcmp(bt->names[k], hosts[i]->name) == 0)
				break;
		ck_assert_msg(k < bt->nhosts, "%s not in its batch %zu",
		    hosts[i]->name, batch[i]);
	}
	ck_assert_uint_eq(run.total, n);
	*budget = run.budget;
	rollout_run_release(&run);
	free(batch);
	free(hosts);
	return buf_detach(&b, NULL);
}

static void
check_by_group(const struct inventory *inv, const char *serial,
    const char *groups, size_t n, const char *want)
{
	size_t budget;
	char *got = by_group(inv, serial, groups, NULL, n, &budget);

	ck_assert_msg(strcmp(got, want) == 0, "--serial %s --by-group %s: "
	    "want '%s', got '%s'", serial, groups, want, got);
	ck_assert_uint_eq(budget, SIZE_MAX);
	free(got);
}

START_TEST(test_by_group)
{
	struct inventory *inv;
	struct err err = ENVCTL_ERR_INIT;
	size_t budget;
	char *got;

	ck_assert_int_eq(inventory_load_string(&inv, racks,
	    sizeof(racks) - 1, "racks.ini", &err), 0);
	/* Group after group, in the order listed, the sizes afresh in each:
	   50% is of the group's hosts (of 5, 2; of 3, 1). */
	check_by_group(inv, "1,50%", "rack2,rack1", 8,
	    "rack2: gpu-03 | rack2: gpu-05 gpu-06 | rack2: gpu-07 gpu-08 | "
	    "rack1: gpu-01 | rack1: gpu-02 | rack1: gpu-04");
	/* A host in several groups goes with the first listed. */
	check_by_group(inv, "1,50%", "rack1,rack2", 8,
	    "rack1: gpu-01 | rack1: gpu-02 gpu-03 | rack1: gpu-04 | "
	    "rack2: gpu-05 | rack2: gpu-06 gpu-07 | rack2: gpu-08");
	/* Without --serial, a group is one batch. */
	check_by_group(inv, NULL, "rack2,rack1", 8,
	    "rack2: gpu-03 gpu-05 gpu-06 gpu-07 gpu-08 | "
	    "rack1: gpu-01 gpu-02 gpu-04");
	/* all, last, takes the rest; a parent group its children's hosts. */
	check_by_group(inv, "2", "rack2,all", 9,
	    "rack2: gpu-03 gpu-05 | rack2: gpu-06 gpu-07 | rack2: gpu-08 | "
	    "all: gpu-01 gpu-02 | all: gpu-04 login-01");
	check_by_group(inv, "100%", "login,racks", 9,
	    "login: login-01 | racks: gpu-01 gpu-02 gpu-03 gpu-04 gpu-05 "
	    "gpu-06 gpu-07 gpu-08");
	check_by_group(inv, NULL, "ungrouped,rack1,rack2", 8,
	    "rack1: gpu-01 gpu-02 gpu-03 gpu-04 | "
	    "rack2: gpu-05 gpu-06 gpu-07 gpu-08");
	/* A group without a host to change has no batch. */
	check_by_group(inv, "1", "rack2,rack1", 2,
	    "rack1: gpu-01 | rack1: gpu-02");
	/* One budget for the whole rollout: 25% of all 8 hosts, not of a
	   group's 4. */
	got = by_group(inv, "1", "rack1,rack2", "25%", 8, &budget);
	ck_assert_uint_eq(budget, 2);
	free(got);
	got = by_group(inv, NULL, "rack1,rack2", "1", 8, &budget);
	ck_assert_uint_eq(budget, 1);
	free(got);
	inventory_free(inv);
}
END_TEST

/* rollout_groups() over the first n hosts fails with code and msg. */
static void
groups_refused(const struct inventory *inv, const char *groups, size_t n,
    int code, const char *msg)
{
	struct rollout_spec rs = { 0 };
	struct rollout_run run = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	const struct host **hosts = first_hosts(inv, n);

	ck_assert_int_eq(rollout_parse_groups(&rs, groups, &err), 0);
	ck_assert_int_eq(rollout_groups(&run, &rs, inv, hosts, n, &err),
	    code);
	ck_assert_int_eq(err.code, code);
	ck_assert_str_eq(err.msg, msg);
	err_release(&err);
	rollout_run_release(&run);
	free(hosts);
}

static void
bad_groups(const char *text, const char *want)
{
	struct rollout_spec rs = { 0 };
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_int_eq(rollout_parse_groups(&rs, text, &err),
	    ENVCTL_EUSAGE);
	ck_assert_str_eq(err.msg, want);
	ck_assert_ptr_null(rs.by_group);
	err_release(&err);
}

START_TEST(test_by_group_refused)
{
	struct inventory *inv;
	struct err err = ENVCTL_ERR_INIT;
	struct buf many = ENVCTL_BUF_INIT;
	size_t i;

	ck_assert_int_eq(inventory_load_string(&inv, racks,
	    sizeof(racks) - 1, "racks.ini", &err), 0);
	/* A group the inventory lacks is named, as -l names a pattern. */
	groups_refused(inv, "rack1,rack9,rack2", 8, ENVCTL_ENOTFOUND,
	    "--by-group: group 'rack9' is not in the inventory 'racks.ini'");
	groups_refused(inv, "rack", 8, ENVCTL_ENOTFOUND,
	    "--by-group: group 'rack' is not in the inventory 'racks.ini'");
	/* A host to change in none of the groups is refused, not left out
	   nor changed last. */
	groups_refused(inv, "rack1,rack2", 9, ENVCTL_EINVALID,
	    "--by-group: host 'login-01' is in none of the groups "
	    "rack1,rack2: list its group, end the list with all, or leave it "
	    "out (-l)");
	groups_refused(inv, "rack1", 9, ENVCTL_EINVALID,
	    "--by-group: host 'gpu-05' and 4 more are in none of the groups "
	    "rack1: list their groups, end the list with all, or leave them "
	    "out (-l)");
	inventory_free(inv);
	bad_groups("", "--by-group: an empty group name in ''");
	bad_groups("rack1,,rack2", "--by-group: an empty group name in "
	    "'rack1,,rack2'");
	bad_groups("rack1,", "--by-group: an empty group name in 'rack1,'");
	bad_groups("rack1,rack2,rack1", "--by-group: 'rack1' is listed "
	    "twice");
	for (i = 0; i <= ENVCTL_ROLLOUT_MAXGROUPS; i++)
		buf_addf(&many, "%sg%zu", i > 0 ? "," : "", i);
	bad_groups(many.data, "--by-group: more than 1024 groups");
	buf_release(&many);
}
END_TEST

START_TEST(test_by_group_texts)
{
	struct rollout_spec rs = { 0 };
	struct rollout_run run = { 0 };
	struct inventory *inv;
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	const struct host **hosts;
	size_t batch[8];
	json_t *j, *bt;

	ck_assert_int_eq(inventory_load_string(&inv, racks,
	    sizeof(racks) - 1, "racks.ini", &err), 0);
	hosts = first_hosts(inv, 8);
	ck_assert_int_eq(rollout_parse_serial(&rs, "1,100%", &err), 0);
	ck_assert_int_eq(rollout_parse_groups(&rs, "rack1,rack2", &err), 0);
	ck_assert_int_eq(rollout_parse_max_fail(&rs, "1", &err), 0);
	ck_assert_int_eq(rollout_groups(&run, &rs, inv, hosts, 8, &err), 0);
	rollout_batches(&run, &rs, hosts, 8, batch);
	ck_assert_uint_eq(run.nbatches, 4);
	rollout_plan_text(&b, &run);
	ck_assert_str_eq(b.data, ", by group: rack1 (1, 3), rack2 (1, 3)");
	buf_truncate(&b, 0);
	/* The budget is spent inside the second group: its last batch and
	   any later group's are skipped. */
	run.batches[0].counts.changed = 1;
	run.batches[1].counts.changed = 3;
	run.batches[2].counts.failed = 1;
	run.batches[2].ran = run.batches[1].ran = run.batches[0].ran = 1;
	run.batches[3].counts.skipped = 3;
	run.failures = 2;
	run.stopped_after = 3;
	rollout_batch_text(&b, &run, 2);
	rollout_reason(&b, &run);
	ck_assert_str_eq(b.data, "batch 3/4 in group rack2: 1 host: "
	    "0 changed, 1 failed\nrollout stopped after batch 3 in group "
	    "rack2 (2 failures > budget 1)");
	buf_release(&b);
	j = rollout_json(&rs, &run);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j,
	    "by_group"), 1)), "rack2");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "by_group")), 2);
	bt = json_array_get(json_object_get(j, "batches"), 3);
	ck_assert_str_eq(json_string_value(json_object_get(bt, "group")),
	    "rack2");
	ck_assert_int_eq(json_integer_value(json_object_get(bt, "skipped")),
	    3);
	ck_assert_str_eq(json_string_value(json_object_get(j, "reason")),
	    "rollout stopped after batch 3 in group rack2 (2 failures > "
	    "budget 1)");
	json_decref(j);
	rollout_run_release(&run);
	free(hosts);
	inventory_free(inv);
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
	usage_error("envctl apply: --max-fail needs --serial or --by-group",
	    "apply", inv, "--max-fail", "1", NULL);
	usage_error("envctl rollback: --serial: an empty batch size",
	    "rollback", inv, "--serial", "1,,2", "--yes");
	usage_error("envctl drift: --serial, --by-group and --max-fail are "
	    "for --fix", "drift", inv, "--serial", "1", NULL);
	usage_error("envctl drift: --serial, --by-group and --max-fail are "
	    "for --fix", "drift", inv, "--by-group", "rack1", NULL);
	usage_error("envctl apply: --by-group: an empty group name in "
	    "'rack1,'", "apply", inv, "--by-group", "rack1,", NULL);
	usage_error("envctl rollback: --by-group: 'a' is listed twice",
	    "rollback", inv, "--by-group=a,b,a", "--serial", "1");
	usage_error("envctl drift: --serial: '0' is no batch size", "drift",
	    inv, "--fix", "--serial", "0");
	usage_error("option '--serial' needs a value", "apply", inv,
	    "--serial", NULL, NULL);
}
END_TEST

/* envctl apply FLEET --yes --by-group groups: exit 1, want, no host read. */
static void
groups_error(const char *groups, const char *want)
{
	char *inv = tu_srcpath("tests/data/cli/fleet.yaml");
	char *argv[] = { (char *)tu_envctl(), "apply", inv, "--yes",
	    "--by-group", (char *)groups, "--serial", "1", NULL };
	struct tu_run r;

	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_msg(r.status == 1, "--by-group %s: exit %d, want 1 (%s)",
	    groups, r.status, r.errout);
	ck_assert_msg(strstr(r.errout, want) != NULL, "want '%s' in '%s'",
	    want, r.errout);
	ck_assert_ptr_null(strstr(r.errout, "unreachable"));
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
	free(inv);
}

START_TEST(test_by_group_command)
{
	/* Found before any host is contacted: the hosts do not resolve. */
	groups_error("gpu,nosuch", "--by-group: group 'nosuch' is not in the "
	    "inventory '");
	groups_error("h100", "--by-group: host 'rtx-01' and 1 more are in "
	    "none of the groups h100: list their groups, end the list with "
	    "all, or leave them out (-l)\n");
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
	tcase_add_test(tc, test_by_group);
	tcase_add_test(tc, test_by_group_refused);
	tcase_add_test(tc, test_by_group_texts);
	tcase_add_test(tc, test_by_group_command);
	tcase_add_test(tc, test_usage_errors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
