/* check_template.c - the {{ var }} subset of Jinja. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/template.h"
#include "testutil.h"

#define SUPPORTED \
	"only {{ name }} and {{ name | default('value') }} are supported"

static const char *const vars[][2] = {
	{ "cuda_root", "/usr/local/cuda-13.0" },
	{ "ver", "13.0" },
	{ "empty", "" },
	{ "weird", "{{ not_expanded }} {% if %}" },
	{ "_x9", "u" },
};

static int lookups;

static const char *
lookup(void *ctx, const char *name)
{
	size_t i;

	ck_assert_ptr_eq(ctx, (void *)vars);
	lookups++;
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (strcmp(vars[i][0], name) == 0)
			return vars[i][1];
	return NULL;
}

static const struct template_pos pos = { "p.yaml", 12, 7 };

/* Expands s (a C string) and checks the result is want. */
static void
expands(const char *s, const char *want)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	int r;

	r = template_expand(&b, s, strlen(s), &pos, lookup, (void *)vars,
	    &err);
	ck_assert_msg(r == 0, "'%s': %s", s, err.msg);
	ck_assert_msg(strcmp(b.data, want) == 0, "'%s' gave '%s', want '%s'",
	    s, b.data, want);
	ck_assert_uint_eq(b.len, strlen(want));
	buf_release(&b);
}

/*
 * Expands s, which must fail with code at line:col; the formatted error
 * must equal "p.yaml:LINE:COL: " + msg.  out keeps what it held.
 */
static void
fails(const char *s, int code, int line, int col, const char *msg)
{
	struct buf b = ENVCTL_BUF_INIT, f = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	char *want;
	int r;

	buf_addstr(&b, "keep");
	r = template_expand(&b, s, strlen(s), &pos, lookup, (void *)vars,
	    &err);
	ck_assert_msg(r == code, "'%s' returned %s (%s), want %s", s,
	    err_codename(r), err.msg != NULL ? err.msg : "",
	    err_codename(code));
	ck_assert_int_eq(err.code, code);
	ck_assert_str_eq(err.path, "p.yaml");
	ck_assert_int_eq(err.line, line);
	ck_assert_int_eq(err.col, col);
	err_format(&err, &f);
	want = xasprintf("p.yaml:%d:%d: %s\n", line, col, msg);
	ck_assert_str_eq(f.data, want);
	ck_assert_str_eq(b.data, "keep");
	free(want);
	buf_release(&f);
	buf_release(&b);
	err_release(&err);
}

START_TEST(test_passthrough)
{
	static const char text[] = "a { b } }} {x} {} {\n\0\xff\xe9 {";
	struct buf b = ENVCTL_BUF_INIT;

	ck_assert_int_eq(template_expand(&b, text, sizeof(text) - 1, &pos,
	    lookup, (void *)vars, NULL), 0);
	ck_assert_uint_eq(b.len, sizeof(text) - 1);
	ck_assert_mem_eq(b.data, text, sizeof(text) - 1);
	buf_release(&b);
	expands("", "");
	expands("}}", "}}");
	expands("{", "{");
	expands("plain text", "plain text");
	expands("{ {x} }", "{ {x} }");
}
END_TEST

START_TEST(test_spacing)
{
	expands("{{cuda_root}}", "/usr/local/cuda-13.0");
	expands("{{ cuda_root }}", "/usr/local/cuda-13.0");
	expands("{{  cuda_root  }}", "/usr/local/cuda-13.0");
	expands("{{\tcuda_root\t}}", "/usr/local/cuda-13.0");
	expands("{{ cuda_root}}", "/usr/local/cuda-13.0");
	expands("{{cuda_root }}", "/usr/local/cuda-13.0");
	expands("{{\n cuda_root\n}}", "/usr/local/cuda-13.0");
	expands("{{ _x9 }}", "u");
	expands("A{{ver}}B", "A13.0B");
	expands("{{ver}}{{ver}}", "13.013.0");
	expands("x}}{{ ver }}}}", "x}}13.0}}");
}
END_TEST

START_TEST(test_default)
{
	expands("{{ missing | default('x') }}", "x");
	expands("{{ missing | default(\"y\") }}", "y");
	expands("{{missing|default('z')}}", "z");
	expands("{{ missing |default( 'a b' ) }}", "a b");
	expands("{{ missing\t|\tdefault\t(\t'c'\t)\t}}", "c");
	expands("{{ missing | default('') }}", "");
	expands("{{ missing | default('a\\'b\\\\c\\\"d') }}", "a'b\\c\"d");
	expands("{{ missing | default(\"a\\\"b'c\") }}", "a\"b'c");
	expands("{{ missing | default('}}') }}", "}}");
	expands("{{ missing | default('{{ ver }}') }}", "{{ ver }}");
	expands("{{ missing | default('/opt/cuda') }}/bin",
	    "/opt/cuda/bin");
}
END_TEST

START_TEST(test_default_when_defined)
{
	expands("{{ cuda_root | default('x') }}", "/usr/local/cuda-13.0");
	expands("{{ empty | default('x') }}", "");
	expands("[{{ empty }}]", "[]");
	expands("{{ ver|default(\"0\") }}", "13.0");
}
END_TEST

START_TEST(test_no_reexpansion)
{
	expands("{{ weird }}", "{{ not_expanded }} {% if %}");
}
END_TEST

START_TEST(test_multiple_lines)
{
	lookups = 0;
	expands("CUDA_HOME={{ cuda_root }}\n"
	    "PATH={{cuda_root}}/bin:{{ missing | default('/usr/bin') }}\n"
	    "V={{ ver }}\n",
	    "CUDA_HOME=/usr/local/cuda-13.0\n"
	    "PATH=/usr/local/cuda-13.0/bin:/usr/bin\n"
	    "V=13.0\n");
	ck_assert_int_eq(lookups, 4);
}
END_TEST

START_TEST(test_undefined)
{
	/* On the first line the column counts from pos.col. */
	fails("{{ cuda_rot }}", ENVCTL_EUNDEFINED, 12, 7,
	    "undefined variable 'cuda_rot'");
	fails("x {{ cuda_root }} {{ nope }}", ENVCTL_EUNDEFINED, 12, 25,
	    "undefined variable 'nope'");
	/* Later lines count from column 1. */
	fails("a={{ ver }}\nbb {{ ver }}\n\n   {{cuda_root}}{{ nope|upper }}",
	    ENVCTL_EUNSUPPORTED, 15, 17, "unsupported template syntax "
	    "'{{ nope|upper }}' (filter 'upper'): " SUPPORTED);
	fails("a\nbb {{ nope }}\n", ENVCTL_EUNDEFINED, 13, 4,
	    "undefined variable 'nope'");
	fails("{{ none_such | default('x') }} {{ none_such }}",
	    ENVCTL_EUNDEFINED, 12, 38, "undefined variable 'none_such'");
}
END_TEST

START_TEST(test_no_pos)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT, f = ENVCTL_BUF_INIT;

	ck_assert_int_eq(template_expand(&b, "ab{{ x }}", 9, NULL, lookup,
	    (void *)vars, &err), ENVCTL_EUNDEFINED);
	ck_assert_ptr_null(err.path);
	ck_assert_int_eq(err.line, 1);
	ck_assert_int_eq(err.col, 3);
	err_format(&err, &f);
	ck_assert_str_eq(f.data, "undefined variable 'x'\n");
	ck_assert_int_eq(template_expand(&b, "ab{{ x }}", 9, NULL, lookup,
	    (void *)vars, NULL), ENVCTL_EUNDEFINED);
	buf_release(&f);
	buf_release(&b);
	err_release(&err);
}
END_TEST

struct unsup {
	const char	*in;
	int		 col;
	const char	*shown;
	const char	*why;
};

static const struct unsup unsups[] = {
	{ "{% if x %}y{% endif %}", 7, "{% if x %}", "statement" },
	{ "{%- set x = 1 -%}", 7, "{%- set x = 1 -%}", "statement" },
	{ "a {# note #}", 9, "{# note #}", "comment" },
	{ "{{ ver | upper }}", 7, "{{ ver | upper }}", "filter 'upper'" },
	{ "{{ ver | d('x') }}", 7, "{{ ver | d('x') }}", "filter 'd'" },
	{ "{{ ver.major }}", 7, "{{ ver.major }}", "attribute access" },
	{ "{{ ver['a'] }}", 7, "{{ ver['a'] }}", "index access" },
	{ "{{ ver() }}", 7, "{{ ver() }}", "function call" },
	{ "{{ ver + 'a' }}", 7, "{{ ver + 'a' }}",
	    "operators and expressions" },
	{ "{{ ver ~ ver }}", 7, "{{ ver ~ ver }}",
	    "operators and expressions" },
	{ "{{ ver if ver }}", 7, "{{ ver if ver }}",
	    "expected '}}' after the variable name" },
	{ "{{ not ver }}", 7, "{{ not ver }}", "'not' is a Jinja keyword" },
	{ "{{ true }}", 7, "{{ true }}", "'true' is a Jinja keyword" },
	{ "{{ 'lit' }}", 7, "{{ 'lit' }}", "expected a variable name" },
	{ "{{ 42 }}", 7, "{{ 42 }}", "expected a variable name" },
	{ "{{{ ver }}}", 7, "{{{ ver }}", "expected a variable name" },
	{ "{{- ver }}", 7, "{{- ver }}", "whitespace control" },
	{ "{{ ver -}}", 7, "{{ ver -}}", "operators and expressions" },
	{ "{{ x | default('a') | upper }}", 7,
	    "{{ x | default('a') | upper }}", "chained filters" },
	{ "{{ x | default(ver) }}", 7, "{{ x | default(ver) }}",
	    "the default value must be a quoted string" },
	{ "{{ x | default('a', true) }}", 7, "{{ x | default('a', true) }}",
	    "default takes one argument here" },
	{ "{{ x | default }}", 7, "{{ x | default }}",
	    "default needs a quoted value in parentheses" },
	{ "{{ x | default('a' }}", 7, "{{ x | default('a' }}",
	    "expected ')' after the default value" },
	{ "{{ x | default('a\\nb') }}", 7, "{{ x | default('a\\nb') }}",
	    "escape '\\n' in a default value; only \\\\, \\' and \\\" are" },
	{ "{% raw %}\n{{ x }}", 7, "{% raw %}", "statement" },
	{ "{# long\ncomment #}", 7, "{# long...", "comment" },
	{ "{{ ver . x }}", 7, "{{ ver . x }}", "attribute access" },
};

START_TEST(test_unsupported)
{
	const struct unsup *u = &unsups[_i];
	char *msg;

	msg = xasprintf("unsupported template syntax '%s' (%s): " SUPPORTED,
	    u->shown, u->why);
	fails(u->in, ENVCTL_EUNSUPPORTED, 12, u->col, msg);
	free(msg);
}
END_TEST

START_TEST(test_unsupported_position)
{
	fails("ok {{ ver }}\n  x = {% if a %}", ENVCTL_EUNSUPPORTED, 13, 7,
	    "unsupported template syntax '{% if a %}' (statement): "
	    SUPPORTED);
	/* A long construct is shortened in the message. */
	fails("{{ ver | upper(\"0123456789012345678901234567890123456789"
	    "0123456789\") }}", ENVCTL_EUNSUPPORTED, 12, 7,
	    "unsupported template syntax '{{ ver | upper(\"012345678901234"
	    "56789012345678901234567890123...' (filter 'upper'): "
	    SUPPORTED);
}
END_TEST

START_TEST(test_parse_errors)
{
	const char *unterm = "unterminated '{{': no closing '}}' (" SUPPORTED
	    ")";

	fails("{{ ver", ENVCTL_EPARSE, 12, 7, unterm);
	fails("{{", ENVCTL_EPARSE, 12, 7, unterm);
	fails("a\nb {{ ver }", ENVCTL_EPARSE, 13, 3, unterm);
	fails("{{ ver }\n}", ENVCTL_EPARSE, 12, 7, unterm);
	fails("{{ x | default('abc }}", ENVCTL_EPARSE, 12, 7, unterm);
	fails("{{ x | default('abc\\", ENVCTL_EPARSE, 12, 7, unterm);
	fails("{{ ver }} {{ x | default('a') ", ENVCTL_EPARSE, 12, 17,
	    unterm);
	fails("{{ }}", ENVCTL_EPARSE, 12, 7,
	    "empty expression '{{ }}': expected a variable name");
	fails("{{}}", ENVCTL_EPARSE, 12, 7,
	    "empty expression '{{ }}': expected a variable name");
	fails("{{ x | }}", ENVCTL_EPARSE, 12, 7,
	    "expected a filter name after '|' (" SUPPORTED ")");
}
END_TEST

START_TEST(test_cap)
{
	struct buf b;
	struct err err = ENVCTL_ERR_INIT;

	buf_init(&b, 10);
	buf_addstr(&b, "k=");
	ck_assert_int_eq(template_expand(&b, "{{ cuda_root }}", 15, &pos,
	    lookup, (void *)vars, &err), ENVCTL_ETOOBIG);
	ck_assert_str_eq(err.msg, "expanded value exceeds the 10-byte limit");
	ck_assert_int_eq(err.line, 12);
	ck_assert_str_eq(b.data, "k=");
	ck_assert_int_eq(template_expand(&b, "0123456789", 10, &pos,
	    lookup, (void *)vars, &err), ENVCTL_ETOOBIG);
	ck_assert_str_eq(err.msg, "expanded text exceeds the 10-byte limit");
	ck_assert_str_eq(b.data, "k=");
	ck_assert_int_eq(template_expand(&b, "{{ ver }}", 9, &pos,
	    lookup, (void *)vars, &err), 0);
	ck_assert_str_eq(b.data, "k=13.0");
	buf_release(&b);
	err_release(&err);
}
END_TEST

START_TEST(test_has_syntax)
{
	ck_assert_int_eq(template_has_syntax("", 0), 0);
	ck_assert_int_eq(template_has_syntax("plain", 5), 0);
	ck_assert_int_eq(template_has_syntax("{ } }} {x}", 10), 0);
	ck_assert_int_eq(template_has_syntax("{", 1), 0);
	ck_assert_int_eq(template_has_syntax("a{{b", 4), 1);
	ck_assert_int_eq(template_has_syntax("{%", 2), 1);
	ck_assert_int_eq(template_has_syntax("x{#", 3), 1);
	/* len is honoured: the "{{" lies past it. */
	ck_assert_int_eq(template_has_syntax("ab{{", 3), 0);
	ck_assert_int_eq(template_has_syntax("a\0{{", 4), 1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("template");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_passthrough);
	tcase_add_test(tc, test_spacing);
	tcase_add_test(tc, test_default);
	tcase_add_test(tc, test_default_when_defined);
	tcase_add_test(tc, test_no_reexpansion);
	tcase_add_test(tc, test_multiple_lines);
	tcase_add_test(tc, test_undefined);
	tcase_add_test(tc, test_no_pos);
	tcase_add_loop_test(tc, test_unsupported, 0,
	    sizeof(unsups) / sizeof(unsups[0]));
	tcase_add_test(tc, test_unsupported_position);
	tcase_add_test(tc, test_parse_errors);
	tcase_add_test(tc, test_cap);
	tcase_add_test(tc, test_has_syntax);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
