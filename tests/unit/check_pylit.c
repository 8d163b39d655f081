/* check_pylit.c - Python string literals and identifiers. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/pylit.h"
#include "testutil.h"

struct golden {
	const char	*in;
	size_t		 len;
	const char	*lit;
};

#define G(s, lit)	{ s, sizeof(s) - 1, lit }

static const struct golden goldens[] = {
	G("", "\"\""),
	G("plain /usr/local/cuda-13.0", "\"plain /usr/local/cuda-13.0\""),
	G("a\"b", "\"a\\\"b\""),
	G("a'b", "\"a'b\""),
	G("a\\b", "\"a\\\\b\""),
	G("\\", "\"\\\\\""),
	G("a\\nb", "\"a\\\\nb\""),
	G("\\N{DIGIT ONE}\\x41\\u0041", "\"\\\\N{DIGIT ONE}\\\\x41\\\\u0041\""),
	G("\n\r\t", "\"\\n\\r\\t\""),
	G("\x01\x07\x0b\x0c\x1b\x1f\x7f",
	    "\"\\x01\\x07\\x0b\\x0c\\x1b\\x1f\\x7f\""),
	G(" ~{{ x }}#", "\" ~{{ x }}#\""),
	G("caf\xc3\xa9", "\"caf\\xe9\""),		/* U+00E9 */
	G("\xc2\x80\xc2\xa0", "\"\\x80\\xa0\""),
	G("\xc4\x80", "\"\\u0100\""),
	G("\xe2\x82\xac", "\"\\u20ac\""),		/* U+20AC */
	G("\xef\xbf\xbf", "\"\\uffff\""),
	G("\xf0\x90\x80\x80", "\"\\U00010000\""),
	G("\xf0\x9f\x98\x80", "\"\\U0001f600\""),	/* U+1F600 */
	G("\xf4\x8f\xbf\xbf", "\"\\U0010ffff\""),
};

START_TEST(test_golden)
{
	const struct golden *g = &goldens[_i];
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_int_eq(pylit_quote(&b, g->in, g->len, &err), 0);
	ck_assert_str_eq(b.data, g->lit);
	ck_assert_uint_eq(b.len, strlen(g->lit));
	ck_assert_int_eq(err.code, 0);
	buf_release(&b);
}
END_TEST

START_TEST(test_appends)
{
	struct buf b = ENVCTL_BUF_INIT;

	buf_addstr(&b, "v = ");
	ck_assert_int_eq(pylit_quote(&b, "x\"y", 3, NULL), 0);
	ck_assert_str_eq(b.data, "v = \"x\\\"y\"");
	buf_release(&b);
}
END_TEST

START_TEST(test_nul)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	buf_addstr(&b, "keep");
	ck_assert_int_eq(pylit_quote(&b, "ab\0c", 4, &err), ENVCTL_EINVALID);
	ck_assert_int_eq(err.code, ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "value contains a NUL byte (environment "
	    "variables cannot hold one)");
	ck_assert_str_eq(b.data, "keep");
	ck_assert_uint_eq(b.len, 4);
	err_release(&err);
	buf_release(&b);
}
END_TEST

struct bad {
	const char	*in;
	size_t		 len;
	size_t		 off;
	const char	*why;
};

#define BAD(s, off, why)	{ s, sizeof(s) - 1, off, why }

static const struct bad bads[] = {
	BAD("ab\x80", 2, "unexpected continuation byte"),
	BAD("\xbf", 0, "unexpected continuation byte"),
	BAD("\xc0\xaf", 0, "overlong encoding"),
	BAD("x\xc1\xbf", 1, "overlong encoding"),
	BAD("\xe0\x80\xaf", 0, "overlong encoding"),
	BAD("\xf0\x80\x80\xaf", 0, "overlong encoding"),
	BAD("x\xed\xa0\x80", 1, "UTF-16 surrogate"),
	BAD("\xed\xbf\xbf", 0, "UTF-16 surrogate"),
	BAD("abc\xe2\x82", 3, "truncated sequence"),
	BAD("\xe2\x82x", 0, "truncated sequence"),
	BAD("\xf0\x9f\x98", 0, "truncated sequence"),
	BAD("caf\xe9", 3, "truncated sequence"),		/* latin-1 */
	BAD("\xf4\x90\x80\x80", 0, "code point above U+10FFFF"),
	BAD("\xf5\x80\x80\x80", 0, "code point above U+10FFFF"),
	BAD("ok\xff", 2, "byte never valid in UTF-8"),
	BAD("\xf8\x88\x80\x80\x80", 0, "byte never valid in UTF-8"),
};

START_TEST(test_invalid_utf8)
{
	const struct bad *t = &bads[_i];
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	char *want;
	size_t off = 99;

	buf_addstr(&b, "keep");
	ck_assert_int_eq(pylit_quote(&b, t->in, t->len, &err),
	    ENVCTL_EINVALID);
	want = xasprintf("value is not valid UTF-8: byte 0x%02x at byte "
	    "offset %zu (%s)", (unsigned char)t->in[t->off], t->off, t->why);
	ck_assert_str_eq(err.msg, want);
	ck_assert_str_eq(b.data, "keep");
	ck_assert_int_eq(pylit_utf8_valid(t->in, t->len, &off), 0);
	ck_assert_uint_eq(off, t->off);
	free(want);
	err_release(&err);
	buf_release(&b);
}
END_TEST

START_TEST(test_utf8_valid)
{
	size_t off = 7;

	ck_assert_int_eq(pylit_utf8_valid("", 0, &off), 1);
	ck_assert_int_eq(pylit_utf8_valid("a\0b", 3, &off), 1);
	ck_assert_int_eq(pylit_utf8_valid("\xc3\xa9\xf0\x9f\x98\x80", 6,
	    NULL), 1);
	ck_assert_uint_eq(off, 7);
}
END_TEST

START_TEST(test_cap)
{
	struct buf b;
	struct err err = ENVCTL_ERR_INIT;

	buf_init(&b, 8);
	buf_addstr(&b, "v=");
	ck_assert_int_eq(pylit_quote(&b, "abcdef", 6, &err), ENVCTL_ETOOBIG);
	ck_assert_str_eq(err.msg, "quoted value exceeds the 8-byte limit");
	ck_assert_str_eq(b.data, "v=");
	ck_assert_int_eq(pylit_quote(&b, "abcd", 4, &err), 0);
	ck_assert_str_eq(b.data, "v=\"abcd\"");
	err_release(&err);
	buf_release(&b);
}
END_TEST

START_TEST(test_identifier)
{
	static const char *const good[] = {
		"a", "_", "A", "CUDA_HOME", "_envctl_os", "NCCL_P2P_LEVEL",
		"x9", "__",
	};
	static const char *const bad[] = {
		"", "9a", "A-B", "A B", "A=B", "a.b", " A", "A ", "caf\xc3\xa9",
		"A\n", "$A", "A\x01",
	};
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(pylit_is_identifier(good[i]) == 1, "%s", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(pylit_is_identifier(bad[i]) == 0, "%s", bad[i]);
	ck_assert_int_eq(pylit_is_identifier(NULL), 0);
}
END_TEST

/* Code points in UTF-8 text: every byte that is not a continuation. */
static size_t
codepoints(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

static void
hex(struct buf *b, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf_addf(b, "%02x", (unsigned char)s[i]);
}

/*
 * Each hostile value goes into a Python file as a literal; python3 must get
 * exactly the original bytes back and nothing may run.
 */
START_TEST(test_python_roundtrip)
{
	static const char *const unit[] = {
		"\\", "'", "\"", "\n", "{{", "\xc3\xa9", "\xe2\x82\xac",
		"\xf0\x9f\x98\x80", "\t", "\x01", "#", " ", "\r\n", "}}",
		"\x7f", "a",
	};
	const char *py = tu_python();
	char *dir, *pwned, *inject, *inject2, *big, *spath;
	const char *values[16];
	struct buf src = ENVCTL_BUF_INIT, want = ENVCTL_BUF_INIT;
	struct tu_run r;
	size_t i, n = 0, biglen = 0;

	if (py[0] != '/' || access(py, X_OK) != 0) {
		tu_skip("check_pylit", "no /usr/bin/python3 to compare with");
		return;
	}
	dir = tu_mkdtemp();
	pwned = xasprintf("%s/pwned", dir);
	inject = xasprintf("\"); import os; os.system(\"touch %s\"); (\"",
	    pwned);
	inject2 = xasprintf("\\\"; import os; os.system('touch %s') #",
	    pwned);
	big = xmalloc(4096 + 16);
	for (i = 0; biglen < 4096; i++) {
		const char *u = unit[i % (sizeof(unit) / sizeof(unit[0]))];

		memcpy(big + biglen, u, strlen(u));
		biglen += strlen(u);
	}
	big[biglen] = '\0';
	values[n++] = inject;
	values[n++] = "\\";
	values[n++] = "a\\nb";
	values[n++] = "line1\nline2\r\nline3\r";
	values[n++] = "'''";
	values[n++] = "\"\"\"";
	values[n++] = "{{ cuda_root }} {% x %}";
	values[n++] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\x85";
	values[n++] = "\\N{DIGIT ONE}\\x41\\u0041\\";
	values[n++] = "\x01\x1b[31m\x7f\t";
	values[n++] = "";
	values[n++] = inject2;
	values[n++] = big;

	buf_addstr(&src, "import sys\nvs = [\n");
	for (i = 0; i < n; i++) {
		buf_addstr(&src, "    ");
		ck_assert_int_eq(pylit_quote(&src, values[i], strlen(values[i]),
		    NULL), 0);
		buf_addstr(&src, ",\n");
		buf_addf(&want, "%zu %zu ", codepoints(values[i],
		    strlen(values[i])), strlen(values[i]));
		hex(&want, values[i], strlen(values[i]));
		buf_addch(&want, '\n');
	}
	buf_addstr(&src, "]\nfor v in vs:\n"
	    "    b = v.encode('utf-8')\n"
	    "    sys.stdout.write('%d %d %s\\n' %\n"
	    "        (len(v), len(b), b.hex()))\n");
	for (i = 0; i < src.len; i++)
		ck_assert_msg((src.data[i] >= 0x20 && src.data[i] < 0x7f) ||
		    src.data[i] == '\n', "non-ASCII byte in generated source");
	spath = tu_write(dir, "lit.py", src.data, src.len);
	{
		char *const argv[] = { (char *)py, "-I", "-S", spath, NULL };
		char *const envp[] = { "PATH=/usr/bin:/bin", NULL };

		tu_run(&r, argv, envp, NULL, 0);
	}
	ck_assert_msg(r.status == 0, "python failed: %s", r.errout);
	ck_assert_str_eq(r.errout, "");
	ck_assert_str_eq(r.out, want.data);
	ck_assert_int_eq(access(pwned, F_OK), -1);
	tu_run_free(&r);
	free(spath);
	buf_release(&src);
	buf_release(&want);
	free(big);
	free(inject);
	free(inject2);
	free(pwned);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("pylit");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_golden, 0,
	    sizeof(goldens) / sizeof(goldens[0]));
	tcase_add_test(tc, test_appends);
	tcase_add_test(tc, test_nul);
	tcase_add_loop_test(tc, test_invalid_utf8, 0,
	    sizeof(bads) / sizeof(bads[0]));
	tcase_add_test(tc, test_utf8_valid);
	tcase_add_test(tc, test_cap);
	tcase_add_test(tc, test_identifier);
	tcase_add_test(tc, test_python_roundtrip);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
