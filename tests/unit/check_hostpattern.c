/* check_hostpattern.c - --limit host patterns over an inventory. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/hostpattern.h"
#include "controller/inventory.h"
#include "testutil.h"

#define ALL_HOSTS	"bastion localhost gpu-01 gpu-02 gpu-03 gpu-04 " \
	"gpu-05 gpu-06 gpu-07 gpu-08 gpu-09 gpu-10 gpu-11 gpu-12 gpu-13 " \
	"gpu-14 gpu-15 gpu-16 gpu-17"

static struct inventory *
load_fleet(void)
{
	struct err err = ENVCTL_ERR_INIT;
	struct inventory *inv;
	char *path = tu_srcpath("tests/data/inventory/gpu-fleet.yaml");

	ck_assert_int_eq(inventory_load(&inv, path, &err), 0);
	free(path);
	return inv;
}

/* The selected hosts, space-separated in inventory order. */
static char *
select_ok(const struct inventory *inv, const char *pattern)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT, msg = ENVCTL_BUF_INIT;
	unsigned char *sel = xcalloc(inventory_nhosts(inv), 1);
	size_t count, i, n = 0;

	if (hostpattern_select(inv, pattern, sel, &count, &err) != 0) {
		err_format(&err, &msg);
		ck_abort_msg("'%s': %s", pattern, msg.data);
	}
	for (i = 0; i < inventory_nhosts(inv); i++) {
		if (!sel[i])
			continue;
		buf_addf(&b, "%s%s", n > 0 ? " " : "",
		    inventory_host(inv, i)->name);
		n++;
	}
	ck_assert_uint_eq(count, n);
	free(sel);
	return buf_detach(&b, NULL);
}

static void
assert_select(const struct inventory *fleet, const char *pattern,
    const char *want)
{
	char *got = select_ok(fleet, pattern);

	ck_assert_msg(strcmp(got, want) == 0, "'%s' selects '%s', want '%s'",
	    pattern, got, want);
	free(got);
}

static void
assert_fail(const struct inventory *fleet, const char *pattern, int code,
    const char *want)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	unsigned char *sel = xcalloc(inventory_nhosts(fleet), 1);
	size_t count = 99, i;
	int r;

	r = hostpattern_select(fleet, pattern, sel, &count, &err);
	err_format(&err, &msg);
	ck_assert_msg(r == code, "'%s': got %s: %s", pattern,
	    err_codename(r), msg.data);
	ck_assert_int_eq(err.code, code);
	ck_assert_str_eq(msg.data, want);
	ck_assert_uint_eq(count, 0);
	for (i = 0; i < inventory_nhosts(fleet); i++)
		ck_assert_int_eq(sel[i], 0);
	free(sel);
	buf_release(&msg);
	err_release(&err);
}

static void
assert_split(const char *pattern, const char *want)
{
	struct buf b = ENVCTL_BUF_INIT;
	char **terms;
	size_t n, i;

	n = hostpattern_split(pattern, &terms);
	for (i = 0; i < n; i++)
		buf_addf(&b, "%s<%s>", i > 0 ? " " : "", terms[i]);
	ck_assert_msg(strcmp(b.data, want) == 0, "'%s' splits into '%s', "
	    "want '%s'", pattern, b.data, want);
	hostpattern_free_terms(terms, n);
	buf_release(&b);
}

START_TEST(test_split)
{
	assert_split("gpu,infer", "<gpu> <infer>");
	assert_split(" gpu , !gpu-03 ,, &rack_a ", "<gpu> <!gpu-03> <&rack_a>");
	assert_split("gpu:!gpu-03:&rack_a", "<gpu> <!gpu-03> <&rack_a>");
	assert_split("rack_a:rack_b", "<rack_a> <rack_b>");
	/* One address: a range, a port, IPv6 are not split on ':'. */
	assert_split("gpu-[01:04]", "<gpu-[01:04]>");
	assert_split("gpu-01:22", "<gpu-01:22>");
	assert_split("fe80::1", "<fe80::1>");
	/* Brackets keep their colons; blanks separate too. */
	assert_split("gpu*[2:3]:!gpu-05", "<gpu*[2:3]> <!gpu-05>");
	assert_split("gpu infer", "<gpu> <infer>");
	/* With commas, colons stay inside terms. */
	assert_split("gpu:rack_a,infer", "<gpu:rack_a> <infer>");
	assert_split("", "");
	assert_split(NULL, "");
}
END_TEST

START_TEST(test_terms)
{
	struct inventory *fleet = load_fleet();

	/* A host; a group with its child groups' hosts. */
	assert_select(fleet, "gpu-03", "gpu-03");
	assert_select(fleet, "rack_a", "gpu-01 gpu-02 gpu-03 gpu-04 gpu-05 "
	    "gpu-06 gpu-07 gpu-08");
	assert_select(fleet, "infer", "gpu-03 gpu-04 gpu-05 gpu-16");
	assert_select(fleet, "vllm", "gpu-03 gpu-04 gpu-16");
	assert_select(fleet, "ungrouped", "bastion localhost");
	/* all, * and no pattern: everything. */
	assert_select(fleet, "all", ALL_HOSTS);
	assert_select(fleet, "*", ALL_HOSTS);
	assert_select(fleet, NULL, ALL_HOSTS);
	assert_select(fleet, "", ALL_HOSTS);
	assert_select(fleet, " , ", ALL_HOSTS);
	/* Globs over host names and over group names. */
	assert_select(fleet, "gpu-1*", "gpu-10 gpu-11 gpu-12 gpu-13 gpu-14 "
	    "gpu-15 gpu-16 gpu-17");
	assert_select(fleet, "gpu-0?", "gpu-01 gpu-02 gpu-03 gpu-04 gpu-05 "
	    "gpu-06 gpu-07 gpu-08 gpu-09");
	assert_select(fleet, "*100", "gpu-01 gpu-02 gpu-03 gpu-04 gpu-05 "
	    "gpu-06 gpu-07 gpu-08 gpu-09 gpu-10 gpu-11 gpu-12 gpu-13 gpu-14 "
	    "gpu-15 gpu-16");
	assert_select(fleet, "s*", "gpu-05");	/* sglang */
	assert_select(fleet, "b*", "bastion");
	/* ~regex: POSIX ERE, anchored at the start like Python's re.match. */
	assert_select(fleet, "~gpu-0[1-3]", "gpu-01 gpu-02 gpu-03");
	assert_select(fleet, "~(bastion|local)", "bastion localhost");
	assert_select(fleet, "~.*7$", "gpu-07 gpu-17");
	assert_select(fleet, "~rack_b", "gpu-09 gpu-10 gpu-11 gpu-12 gpu-13 "
	    "gpu-14 gpu-15 gpu-16 gpu-17");
	inventory_free(fleet);
}
END_TEST

START_TEST(test_order_and_sets)
{
	struct inventory *fleet = load_fleet();

	/* A result keeps inventory order, whatever the pattern's order. */
	assert_select(fleet, "gpu-05,gpu-01,bastion", "bastion gpu-01 gpu-05");
	assert_select(fleet, "sglang:canary:bastion",
	    "bastion gpu-03 gpu-05 gpu-16");
	/* Exclusion, intersection, and both, in Ansible's order. */
	assert_select(fleet, "rack_b:!h100",
	    "gpu-10 gpu-12 gpu-14 gpu-16 gpu-17");
	assert_select(fleet, "rack_b:&h100", "gpu-09 gpu-11 gpu-13 gpu-15");
	assert_select(fleet, "!rack_a:rack_b:&infer", "gpu-16");
	assert_select(fleet, "&infer,rack_a", "gpu-03 gpu-04 gpu-05");
	assert_select(fleet, "gpu,!gpu-0*,!gpu-17", "gpu-10 gpu-11 gpu-12 "
	    "gpu-13 gpu-14 gpu-15 gpu-16");
	/* Only exclusions or intersections: from all, as Ansible. */
	assert_select(fleet, "!gpu", "bastion localhost");
	assert_select(fleet, "&ungrouped", "bastion localhost");
	/* An exclusion beats a later plain term. */
	assert_select(fleet, "!gpu-03,infer", "gpu-04 gpu-05 gpu-16");
	/* Subscripts index a term's matches in inventory order. */
	assert_select(fleet, "rack_a[0]", "gpu-01");
	assert_select(fleet, "rack_a[-1]", "gpu-08");
	assert_select(fleet, "rack_a[2:4]", "gpu-03 gpu-04 gpu-05");
	assert_select(fleet, "rack_b[6:]", "gpu-15 gpu-16 gpu-17");
	assert_select(fleet, "gpu-1*[0]", "gpu-10");
	assert_select(fleet, "rack_a[1:3],!gpu-02", "gpu-03 gpu-04");
	inventory_free(fleet);
}
END_TEST

/* @file names a file of terms, one a line (Ansible's retry files). */
START_TEST(test_limit_file)
{
	struct inventory *fleet = load_fleet();
	char *dir = tu_mkdtemp(), *p, *pat, *want;

	p = tu_writes(dir, "retry", "gpu-02\n\n  gpu-07  \nrack_b[0]\n");
	pat = xasprintf("@%s,bastion", p);
	assert_select(fleet, pat, "bastion gpu-02 gpu-07 gpu-09");
	free(pat);
	free(p);
	/* An empty file is no way to say "every host". */
	p = tu_writes(dir, "empty", "\n \n");
	pat = xasprintf("@%s", p);
	want = xasprintf("limit file '%s' names no host\n", p);
	assert_fail(fleet, pat, ENVCTL_ENOTFOUND, want);
	free(want);
	free(pat);
	free(p);
	p = xasprintf("%s/nope", dir);
	pat = xasprintf("@%s", p);
	want = xasprintf("limit file: cannot open '%s': No such file or "
	    "directory\n", p);
	assert_fail(fleet, pat, ENVCTL_ENOTFOUND, want);
	free(want);
	free(pat);
	free(p);
	tu_rmtree(dir);
	free(dir);
	inventory_free(fleet);
}
END_TEST

START_TEST(test_no_match)
{
	struct inventory *fleet = load_fleet();

	assert_fail(fleet, "gpu-99", ENVCTL_ENOTFOUND,
	    "pattern 'gpu-99' matches no host or group\n");
	/* Every unmatched term is reported, exclusions too. */
	assert_fail(fleet, "gpu-99,rack_a,!rack-c,&nope*", ENVCTL_ENOTFOUND,
	    "pattern 'gpu-99' matches no host or group\n"
	    "pattern '&nope*' matches no host or group\n"
	    "pattern '!rack-c' matches no host or group\n");
	assert_fail(fleet, "~17", ENVCTL_ENOTFOUND,
	    "pattern '~17' matches no host or group\n");
	assert_fail(fleet, "rack_a:&h100:&a100", ENVCTL_ENOTFOUND,
	    "pattern 'rack_a:&h100:&a100' selects no host\n");
	assert_fail(fleet, "rack_a[8]", ENVCTL_ENOTFOUND,
	    "pattern 'rack_a[8]' matches no host (subscript out of range: 8 "
	    "matches)\n");
	assert_fail(fleet, "rack_a[9:12]", ENVCTL_ENOTFOUND,
	    "pattern 'rack_a[9:12]' matches no host or group\n");
	/* An unclosed '[' separates terms, as in Ansible; '(' does not. */
	assert_select(fleet, "~gpu-1[", "gpu-10 gpu-11 gpu-12 gpu-13 gpu-14 "
	    "gpu-15 gpu-16 gpu-17");
	assert_fail(fleet, "~gpu-(", ENVCTL_EUSAGE,
	    "invalid regular expression in pattern '~gpu-(': Unmatched ( "
	    "or \\(\n");
	assert_fail(fleet, "gpu,!", ENVCTL_EUSAGE,
	    "empty pattern after '!' in '!'\n");
	inventory_free(fleet);
}
END_TEST

/* Ansible's special cases: host beats group for a plain term; empty groups. */
START_TEST(test_names)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	struct inventory *inv;
	static const char text[] =
	    "all:\n"
	    "  hosts:\n"
	    "    db:\n"
	    "    web.example.com:\n"
	    "  children:\n"
	    "    db:\n"
	    "      hosts: {pg-1: , pg-2: }\n"
	    "    spare:\n"
	    "    web:\n"
	    "      hosts: {w1: }\n";
	unsigned char sel[5];
	size_t count;
	char *got;

	ck_assert_int_eq(inventory_load_string(&inv, text, sizeof(text) - 1,
	    "hosts.yaml", &err), 0);
	got = select_ok(inv, "db");
	ck_assert_str_eq(got, "db");		/* the host, not the group */
	free(got);
	got = select_ok(inv, "&db,all");
	ck_assert_str_eq(got, "pg-1 pg-2");	/* with & it is the group */
	free(got);
	got = select_ok(inv, "!db");
	ck_assert_str_eq(got, "db web.example.com w1");
	free(got);
	/* A '.' in a term also looks at hosts when a group matched. */
	got = select_ok(inv, "web*");
	ck_assert_str_eq(got, "web.example.com w1");
	free(got);
	/* An empty group matches, but selects nothing. */
	ck_assert_int_eq(hostpattern_select(inv, "spare", sel, &count, &err),
	    ENVCTL_ENOTFOUND);
	err_format(&err, &msg);
	ck_assert_str_eq(msg.data, "pattern 'spare' selects no host\n");
	got = select_ok(inv, "spare,w1");
	ck_assert_str_eq(got, "w1");
	free(got);
	buf_release(&msg);
	err_release(&err);
	inventory_free(inv);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hostpattern");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_terms);
	tcase_add_test(tc, test_order_and_sets);
	tcase_add_test(tc, test_limit_file);
	tcase_add_test(tc, test_no_match);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
