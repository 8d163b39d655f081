/*
 * check_hostrange.c - controller/hostrange: range expansion and addresses.
 *
 * The expected names follow Ansible's expand_hostname_range(); the
 * inventory-level tests (positions of errors, ports from "[name]:22")
 * stay in check_inventory.c and `make check-inventory` compares whole
 * inventories with ansible-inventory itself.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/hostrange.h"

#define ROOM	100000u

/* The names pattern expands to, joined by spaces (caller frees). */
static char *
expand_ok(const char *pattern)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	char **names;
	size_t n, i;
	int rc;

	rc = hostrange_expand(&names, &n, pattern, ROOM, &err);
	ck_assert_msg(rc == 0, "'%s': %s", pattern, err.msg);
	for (i = 0; i < n; i++) {
		buf_addf(&b, "%s%s", i > 0 ? " " : "", names[i]);
		free(names[i]);
	}
	free(names);
	return buf_detach(&b, NULL);
}

static void
expand_fail(const char *pattern, size_t room, int code, const char *msg)
{
	struct err err = ENVCTL_ERR_INIT;
	char **names;
	size_t n;

	ck_assert_int_eq(hostrange_expand(&names, &n, pattern, room, &err),
	    code);
	ck_assert_int_eq(err.code, code);
	ck_assert_str_eq(err.msg, msg);
	ck_assert_ptr_null(names);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(err.path);
	err_release(&err);
}

static void
assert_expands(const char *pattern, const char *want)
{
	char *got = expand_ok(pattern);

	ck_assert_msg(strcmp(got, want) == 0, "'%s': got '%s', want '%s'",
	    pattern, got, want);
	free(got);
}

START_TEST(test_expand)
{
	assert_expands("gpu-[01:03]", "gpu-01 gpu-02 gpu-03");
	assert_expands("gpu-[01:16]", "gpu-01 gpu-02 gpu-03 gpu-04 gpu-05 "
	    "gpu-06 gpu-07 gpu-08 gpu-09 gpu-10 gpu-11 gpu-12 gpu-13 gpu-14 "
	    "gpu-15 gpu-16");
	assert_expands("node-[a:c]", "node-a node-b node-c");
	assert_expands("n[1:10:4]", "n1 n5 n9");
	/* The first range varies slowest. */
	assert_expands("r[1:2]-s[01:02].dc",
	    "r1-s01.dc r1-s02.dc r2-s01.dc r2-s02.dc");
	assert_expands("x[:2]", "x0 x1 x2");
	assert_expands("h[09:11]", "h09 h10 h11");
	assert_expands("up[y:B:2]", "upy upA");
	assert_expands("w[8:10]", "w8 w9 w10");
	assert_expands("10.0.0.[1:2]", "10.0.0.1 10.0.0.2");
	assert_expands("[1:2]", "1 2");
	assert_expands("[a:a]", "a");
	assert_expands("plain", "plain");
	assert_expands("g[0:6:3]x", "g0x g3x g6x");
}
END_TEST

START_TEST(test_expand_errors)
{
	expand_fail("gpu-[3:1]", ROOM, ENVCTL_EINVALID, "invalid host range "
	    "in 'gpu-[3:1]': start '3' is after end '1'");
	expand_fail("gpu-[a:10]", ROOM, ENVCTL_EINVALID, "invalid host range "
	    "in 'gpu-[a:10]': start 'a' and end '10' must be both numbers or "
	    "both single letters");
	expand_fail("gpu-[1:3:0]", ROOM, ENVCTL_EINVALID, "invalid host "
	    "range in 'gpu-[1:3:0]': step '0' is not a positive integer");
	expand_fail("gpu-[1:3:x]", ROOM, ENVCTL_EINVALID, "invalid host "
	    "range in 'gpu-[1:3:x]': step 'x' is not a positive integer");
	expand_fail("gpu-[01:100]", ROOM, ENVCTL_EINVALID, "invalid host "
	    "range in 'gpu-[01:100]': zero-padded start '01' and end '100' "
	    "differ in width");
	expand_fail("gpu-[1:]", ROOM, ENVCTL_EINVALID, "invalid host range "
	    "in 'gpu-[1:]': missing end");
	expand_fail("gpu-[1:3", ROOM, ENVCTL_EINVALID, "invalid host range "
	    "in 'gpu-[1:3': unclosed '['");
	expand_fail("gpu-[7]", ROOM, ENVCTL_EINVALID, "invalid host range in "
	    "'gpu-[7]': expected [start:end] or [start:end:step]");
	expand_fail("gpu-[1:2:3:4]", ROOM, ENVCTL_EINVALID, "invalid host "
	    "range in 'gpu-[1:2:3:4]': expected [start:end] or "
	    "[start:end:step]");
	expand_fail("gpu]-[1:2]", ROOM, ENVCTL_EINVALID, "invalid host range "
	    "in 'gpu]-[1:2]': ']' before '['");
	expand_fail("big-[0:9999999]", ROOM, ENVCTL_ETOOBIG, "host pattern "
	    "'big-[0:9999999]' expands to more than 100000 hosts");
	/* The product of the ranges counts, not each one. */
	expand_fail("a[1:400]b[1:400]", ROOM, ENVCTL_ETOOBIG, "host pattern "
	    "'a[1:400]b[1:400]' expands to more than 100000 hosts");
	expand_fail("n[1:5]", 4, ENVCTL_ETOOBIG, "host pattern 'n[1:5]' "
	    "expands to more than 4 hosts");
}
END_TEST

/* As many names as room allows, and not one more. */
START_TEST(test_expand_room)
{
	struct err err = ENVCTL_ERR_INIT;
	char **names;
	size_t n, i;

	ck_assert_int_eq(hostrange_expand(&names, &n, "n[1:5]", 5, &err), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq(names[4], "n5");
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
END_TEST

START_TEST(test_parse_address)
{
	static const struct {
		const char	*in;
		const char	*host;	/* NULL: not an address */
		const char	*port;
	} cases[] = {
		{ "gpu-01", "gpu-01", NULL },
		{ "gpu-01:2222", "gpu-01", "2222" },
		{ "gpu-[01:16]:22", "gpu-[01:16]", "22" },
		{ "node-[a:f].dc1", "node-[a:f].dc1", NULL },
		{ "10.0.0.[1:9]", "10.0.0.[1:9]", NULL },
		{ "[10.0.0.1]:22", "10.0.0.1", "22" },
		{ "fe80::1", "fe80::1", NULL },
		{ "[fe80::1]:2222", "fe80::1", "2222" },
		{ "::", "::", NULL },
		{ "::ffff:10.0.0.1", "::ffff:10.0.0.1", NULL },
		{ "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8", NULL },
		{ "1:2:3:4:5:6:7::", NULL, NULL },
		{ "a_b", "a_b", NULL },
		{ "ends-", NULL, NULL },
		{ "ends_", NULL, NULL },
		{ "-starts", NULL, NULL },
		{ "a..b", NULL, NULL },
		{ "rack1:rack2", NULL, NULL },
		{ "gpu*", NULL, NULL },
		{ "!gpu", NULL, NULL },
		{ "my host", NULL, NULL },
		{ "gpu-[a:10]", NULL, NULL },
	};
	char *host, *port;
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = hostrange_parse_address(cases[i].in, &host, &port);
		ck_assert_msg(r == (cases[i].host != NULL), "'%s': got %d",
		    cases[i].in, r);
		if (r == 0) {
			ck_assert_ptr_null(host);
			continue;
		}
		ck_assert_str_eq(host, cases[i].host);
		if (cases[i].port == NULL)
			ck_assert_ptr_null(port);
		else
			ck_assert_str_eq(port, cases[i].port);
		free(host);
		free(port);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hostrange");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_expand);
	tcase_add_test(tc, test_expand_errors);
	tcase_add_test(tc, test_expand_room);
	tcase_add_test(tc, test_parse_address);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
