/* check_strutil.c - edit distance, typo suggestions, UTF-8, terminal-safe
 * text. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"

#define S(s)	(s), sizeof(s) - 1

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

static const struct {
	const char	*in;
	size_t		 len;
	unsigned	 flags;
	const char	*want;
} vis_cases[] = {
	{ S("plain /usr/lib/python3.11"), 0, "plain /usr/lib/python3.11" },
	{ S("caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80"), 0,
	    "caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80" },
	/* Terminal control: clear screen, title, clipboard, cursor up. */
	{ S("a\x1b[2Jb\x1b]0;t\x07" "c\x1b[1A"), 0,
	    "a\\x1b[2Jb\\x1b]0;t\\x07c\\x1b[1A" },
	/* A forged line. */
	{ S("x\ngpu-02: ok\r\n"), 0, "x\\ngpu-02: ok\\r\\n" },
	{ S("a\tb"), 0, "a\\tb" },
	{ S("a\tb"), ENVCTL_VIS_TAB, "a\tb" },
	{ S("nul\0del\x7f"), 0, "nul\\x00del\\x7f" },
	/* C1 CSI, NEL; bidi override (CVE-2021-42574); line separator. */
	{ S("\xc2\x9b" "2J\xc2\x85"), 0, "\\u009b2J\\u0085" },
	{ S("x\xe2\x80\xaey\xe2\x81\xa6z\xe2\x80\xa8"), 0,
	    "x\\u202ey\\u2066z\\u2028" },
	/* Bad UTF-8: each byte; a backslash stays. */
	{ S("\xff\xc3(\xed\xa0\x80\\"), 0,
	    "\\xff\\xc3(\\xed\\xa0\\x80\\" },
	{ S(""), 0, "" },
};

START_TEST(test_addvis)
{
	struct buf b = ENVCTL_BUF_INIT;

	buf_addstr(&b, "kept:");
	str_addvis(&b, vis_cases[_i].in, vis_cases[_i].len,
	    vis_cases[_i].flags);
	ck_assert_uint_eq(b.len, strlen(b.data));
	ck_assert_str_eq(b.data + 5, vis_cases[_i].want);
	ck_assert_int_eq(memcmp(b.data, "kept:", 5), 0);
	buf_release(&b);
}
END_TEST

START_TEST(test_vis_slots)
{
	struct vis v = ENVCTL_VIS_INIT;
	const char *a = vis_str(&v, "a\x1b"), *n = vis_str(&v, NULL);
	size_t i;

	ck_assert_str_eq(a, "a\\x1b");
	ck_assert_str_eq(n, "");
	/* Every slot but the oldest stays valid. */
	for (i = 2; i < ENVCTL_VIS_SLOTS; i++)
		vis_str(&v, "x");
	ck_assert_str_eq(a, "a\\x1b");
	vis_release(&v);
	ck_assert_ptr_null(v.slot[0]);
}
END_TEST

/* err_format() keeps its promise of one line per error. */
START_TEST(test_err_format_one_line)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;

	err_setat(&err, ENVCTL_EREMOTE, "/etc/x\x1b[2J.py", 3, 1,
	    "agent: %s", "line\ngpu-02: ok");
	err_sethost(&err, "gpu-01");
	err_format(&err, &b);
	ck_assert_str_eq(b.data, "gpu-01: /etc/x\\x1b[2J.py:3:1: agent: "
	    "line\\ngpu-02: ok\n");
	buf_release(&b);
	err_release(&err);
}
END_TEST

START_TEST(test_utf8_decode)
{
	const char *why = NULL;
	uint32_t cp = 0;

	ck_assert_uint_eq(str_utf8_decode("\xe2\x82\xac", 3, &cp, &why), 3);
	ck_assert_uint_eq(cp, 0x20ac);
	ck_assert_uint_eq(str_utf8_decode("\0", 1, &cp, &why), 1);
	ck_assert_uint_eq(cp, 0);
	ck_assert_uint_eq(str_utf8_decode("\xc0\xaf", 2, &cp, &why), 0);
	ck_assert_str_eq(why, "overlong encoding");
	ck_assert_uint_eq(str_utf8_decode("\xed\xa0\x80", 3, &cp, &why), 0);
	ck_assert_str_eq(why, "UTF-16 surrogate");
	ck_assert_uint_eq(str_utf8_decode("\xe2\x82", 2, &cp, &why), 0);
	ck_assert_str_eq(why, "truncated sequence");
	ck_assert_uint_eq(str_utf8_decode("\xf4\x90\x80\x80", 4, &cp,
	    &why), 0);
	ck_assert_str_eq(why, "code point above U+10FFFF");
	ck_assert_uint_eq(str_utf8_decode("\x80", 1, &cp, &why), 0);
	ck_assert_str_eq(why, "unexpected continuation byte");
}
END_TEST

START_TEST(test_addutf8)
{
	static const struct {
		uint32_t	 cp;
		const char	*want;
		size_t		 len;
	} edges[] = {
		{ 0, "\0", 1 },
		{ 0x7f, "\x7f", 1 },
		{ 0x80, "\xc2\x80", 2 },
		{ 0x7ff, "\xdf\xbf", 2 },
		{ 0x800, "\xe0\xa0\x80", 3 },
		{ 0x20ac, "\xe2\x82\xac", 3 },
		{ 0xffff, "\xef\xbf\xbf", 3 },
		{ 0x10000, "\xf0\x90\x80\x80", 4 },
		{ 0x10ffff, "\xf4\x8f\xbf\xbf", 4 },
	};
	struct buf b = ENVCTL_BUF_INIT;
	const char *why = NULL;
	uint32_t cp, got;
	size_t i;

	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		b.len = 0;
		str_addutf8(&b, edges[i].cp);
		ck_assert_uint_eq(b.len, edges[i].len);
		ck_assert_mem_eq(b.data, edges[i].want, edges[i].len);
	}
	/* Every scalar value: what the decoder reads back, in full. */
	for (cp = 0; cp <= 0x10ffff; cp++) {
		if (cp == 0xd800)
			cp = 0xe000;
		b.len = 0;
		str_addutf8(&b, cp);
		ck_assert_uint_eq(str_utf8_decode(b.data, b.len, &got, &why),
		    b.len);
		ck_assert_uint_eq(got, cp);
	}
	buf_release(&b);
}
END_TEST

START_TEST(test_hexval)
{
	static const char digits[] = "0123456789abcdef";
	int c;

	for (c = 0; c < 256; c++) {
		if (c >= 'A' && c <= 'F')
			ck_assert_int_eq(str_hexval(c), c - 'A' + 10);
		else if (c != 0 && strchr(digits, c) != NULL)
			ck_assert_int_eq(str_hexval(c), strchr(digits, c) -
			    digits);
		else
			ck_assert_int_eq(str_hexval(c), -1);
	}
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
	/* Half the candidate's length: a longer slip on a long word. */
	ck_assert_str_eq(str_closest("childs", keys), "children");
	/* Something of the word kept: two letters are not a typo of two. */
	ck_assert_ptr_null(str_closest("ab", (const char *const[]){ "cd",
	    NULL }));
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
	tcase_add_test(tc, test_utf8_decode);
	tcase_add_test(tc, test_addutf8);
	tcase_add_test(tc, test_hexval);
	tcase_add_loop_test(tc, test_addvis, 0,
	    sizeof(vis_cases) / sizeof(vis_cases[0]));
	tcase_add_test(tc, test_vis_slots);
	tcase_add_test(tc, test_err_format_one_line);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
