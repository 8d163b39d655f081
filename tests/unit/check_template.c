/* check_template.c - the Jinja subset of inventories, as Ansible runs it. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/template.h"
#include "controller/yamldoc.h"
#include "testutil.h"

/*
 * The variables of scope "main" (line numbers matter: messages cite
 * them); "other" is a second host, reached as hv['other'].
 */
static const char main_yaml[] =
    "cuda_root: /usr/local/cuda-13.0\n"			/* 1 */
    "ver: \"13.0\"\n"					/* 2 */
    "empty: \"\"\n"					/* 3 */
    "nul: null\n"					/* 4 */
    "n: 42\n"						/* 5 */
    "zero: 0\n"						/* 6 */
    "yes_: yes\n"					/* 7 */
    "fl: 1.50\n"					/* 8 */
    "lst: [a, \"b\", 3]\n"				/* 9 */
    "mp: {k: v, n: 5, inner: {z: deep}, 1: one}\n"	/* 10 */
    "nested: \"{{ ver }}-n\"\n"				/* 11 */
    "undef_nested: \"{{ nope }}\"\n"			/* 12 */
    "unsafe: !unsafe \"{{ ver }}\"\n"			/* 13 */
    "selfref: \"{{ selfref }}\"\n"			/* 14 */
    "trimmed: \"{{ '/opt/cuda-13.0' | trim }}\"\n"	/* 15 */
    "bad_nested: \"{{ ver | regex_replace('a') }}\"\n"	/* 16 */
    "truestr: \"True\"\n"				/* 17 */
    "boolish: \"{{ truestr }}\"\n"			/* 18 */
    "listy: \"{{ '[1, 2]' }}\"\n"			/* 19 */
    "nzero: \"{{ zero }}\"\n"				/* 20 */
    "nnull: \"{{ nul }}\"\n"				/* 21 */
    "mnested: {a: \"{{ ver }}\", u: \"{{ nope }}\"}\n"	/* 22 */
    "secret: !vault |\n"				/* 23 */
    "  $ANSIBLE_VAULT;1.1;AES256\n"			/* 24 */
    "  3132\n"						/* 25 */
    "pyset: !envctl-unusable \"a Python set, which envctl cannot "
    "use\"\n"						/* 26 */
    "sp: \"  pad  \"\n"					/* 27 */
    "chain1: \"{{ chain2 }}\"\n"			/* 28 */
    "chain2: \"{{ chain1 }}\"\n"			/* 29 */
    "lst2: [\"{{ ver }}\", \"{{ yes_ }}\", \"[3]\"]\n"	/* 30 */
    "weird: \"{{ '{{ x }}' }}\"\n"			/* 31 */
    "hexs: \"0x1F\"\n"					/* 32 */
    "emptylist: []\n"					/* 33 */
    "dtpl: \"{{ ver }}{'a': 1}\"\n";			/* 34 */

static const char other_yaml[] =
    "y: \"{{ name }}-y\"\n"
    "name: other\n"
    "yu: \"{{ nope }}\"\n"
    "yd: \"{{ ver | default('nover') }}\"\n";

static struct ydoc *main_doc, *other_doc;
static int lookups;
/* The opaque handles: hv itself, and hv['other']. */
static const char hv_all[] = "hv", hv_other[] = "hv-other";

static int
lookup(void *ctx, const void *scope, const char *name, struct ydoc *doc,
    struct template_val *out, struct err *err)
{
	const struct ynode *root = scope;

	ck_assert_ptr_eq(ctx, &lookups);
	(void)doc;
	(void)err;
	lookups++;
	memset(out, 0, sizeof(*out));
	if (strcmp(name, "hv") == 0) {
		out->kind = ENVCTL_TVAL_OPAQUE;
		out->opaque = hv_all;
		return 0;
	}
	if (strcmp(name, "failing") == 0)
		return err_set(err, ENVCTL_EINVALID, "lookup failed");
	out->node = ymap_get(root, name);
	out->kind = out->node != NULL ? ENVCTL_TVAL_NODE :
	    ENVCTL_TVAL_UNDEFINED;
	out->scope = root;
	return 0;
}

static int
getitem(void *ctx, const void *opaque, const char *key, struct ydoc *doc,
    struct template_val *out, struct err *err)
{
	(void)ctx;
	(void)doc;
	(void)err;
	memset(out, 0, sizeof(*out));
	if (opaque == hv_all) {
		if (strcmp(key, "other") == 0) {
			out->kind = ENVCTL_TVAL_OPAQUE;
			out->opaque = hv_other;
		}
		return 0;
	}
	ck_assert_ptr_eq(opaque, hv_other);
	out->node = ymap_get(other_doc->root, key);
	out->kind = out->node != NULL ? ENVCTL_TVAL_NODE :
	    ENVCTL_TVAL_UNDEFINED;
	out->scope = other_doc->root;
	out->keep_raw = 1;
	return 0;
}

static const struct template_ops ops = { lookup, getitem };
static const struct template_pos pos = { "p.yaml", 12, 7 };

static void
setup(void)
{
	ck_assert_int_eq(ydoc_load_string(&main_doc, main_yaml,
	    sizeof(main_yaml) - 1, "v.yaml", NULL), 0);
	ck_assert_int_eq(ydoc_load_string(&other_doc, other_yaml,
	    sizeof(other_yaml) - 1, "o.yaml", NULL), 0);
}

static void
teardown(void)
{
	ydoc_free(main_doc);
	ydoc_free(other_doc);
}

static int
expand(struct buf *b, const char *s, struct err *err)
{
	return template_expand(b, s, strlen(s), &pos, &ops, &lookups,
	    main_doc->root, err);
}

/* Expands s (a C string) and checks the result is want. */
static void
expands(const char *s, const char *want)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	int r;

	r = expand(&b, s, &err);
	ck_assert_msg(r == 0, "'%s': %s", s, err.msg);
	ck_assert_msg(strcmp(b.data, want) == 0, "'%s' gave '%s', want '%s'",
	    s, b.data, want);
	ck_assert_uint_eq(b.len, strlen(want));
	buf_release(&b);
}

/*
 * Expands s, which must fail with code; the formatted error must equal
 * want (with its position).  out keeps what it held.
 */
static void
fails(const char *s, int code, const char *want)
{
	struct buf b = ENVCTL_BUF_INIT, f = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	int r;

	buf_addstr(&b, "keep");
	r = expand(&b, s, &err);
	ck_assert_msg(r == code, "'%s' returned %s (%s), want %s", s,
	    err_codename(r), err.msg != NULL ? err.msg : "",
	    err_codename(code));
	ck_assert_int_eq(err.code, code);
	err_format(&err, &f);
	ck_assert_str_eq(f.data, want);
	ck_assert_str_eq(b.data, "keep");
	buf_release(&f);
	buf_release(&b);
	err_release(&err);
}

/* As fails, for an unsupported construct in the env value at 12:col. */
static void
refuses(const char *s, int col, const char *shown, const char *why)
{
	char *want = xasprintf("p.yaml:12:%d: unsupported template syntax "
	    "'%s' (%s)\n", col, shown, why);

	fails(s, ENVCTL_EUNSUPPORTED, want);
	free(want);
}

START_TEST(test_passthrough)
{
	static const char text[] = "a { b } }} {x} {} {\n\0\xff\xe9 {";
	struct buf b = ENVCTL_BUF_INIT;

	ck_assert_int_eq(template_expand(&b, text, sizeof(text) - 1, &pos,
	    &ops, &lookups, main_doc->root, NULL), 0);
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
	expands("{{\n cuda_root\n}}", "/usr/local/cuda-13.0");
	expands("A{{ver}}B", "A13.0B");
	expands("{{ver}}{{ver}}", "13.013.0");
	expands("x}}{{ ver }}}}", "x}}13.0}}");
	/* Jinja normalises the newlines of a template's text. */
	expands("a\r\nb\rc{{ ver }}\r\n", "a\nb\nc13.0\n");
	expands("a\r\nb", "a\r\nb");
}
END_TEST

START_TEST(test_literals)
{
	expands("{{ 'lit' }}", "lit");
	expands("{{ \"d'q\" }}", "d'q");
	expands("{{ '}}' }}", "}}");
	expands("{{ '{{ ver }}' }}", "{{ ver }}");
	/* Ansible doubles backslashes in expressions: they stay. */
	expands("{{ 'a\\nb' }}", "a\\nb");
	expands("{{ 'a\\\\b' }}", "a\\\\b");
	expands("{{ 42 }}", "42");
	expands("{{ 1_000 }}", "1000");
	expands("{{ 0 }}", "0");
	expands("{{ -1 }}", "-1");
	expands("{{ true }}/{{ True }}/{{ false }}", "True/True/False");
	expands("{{ none }}{{ None }}", "");
	expands("{{ True ~ none }}", "TrueNone");
}
END_TEST

START_TEST(test_scalars)
{
	expands("{{ n }}", "42");
	expands("{{ yes_ }}", "True");
	expands("{{ fl }}", "1.5");
	expands("[{{ empty }}]", "[]");
	/* In a template, null prints nothing; str() of it is None. */
	expands("a{{ nul }}b", "ab");
	expands("{{ nul | string }}", "None");
	expands("{{ nul ~ 'a' }}", "Nonea");
	expands("{{ nul | lower }}", "none");
	expands("{{ nul | default('d') }}", "");
}
END_TEST

START_TEST(test_default)
{
	expands("{{ missing | default('x') }}", "x");
	expands("{{ missing | d(\"y\") }}", "y");
	expands("{{missing|default('z')}}", "z");
	expands("{{ missing | default }}", "");
	expands("{{ missing | default(ver) }}", "13.0");
	expands("{{ missing | default(default_value='kw') }}", "kw");
	expands("{{ missing | default('/opt/cuda') }}/bin", "/opt/cuda/bin");
	expands("{{ cuda_root | default('x') }}", "/usr/local/cuda-13.0");
	expands("{{ empty | default('x') }}", "");
	expands("{{ empty | default('x', true) }}", "x");
	expands("{{ zero | default('x', true) }}", "x");
	expands("{{ nul | default('x', true) }}", "x");
	expands("{{ emptylist | default('x', true) }}", "x");
	expands("{{ ver | default('x', true) }}", "13.0");
	expands("{{ empty | default('x', boolean=1) }}", "x");
	expands("{{ empty | default('x', false) }}", "");
	/* Undefined absorbs subscripts, as Ansible's does. */
	expands("{{ missing.k | default('d') }}", "d");
	expands("{{ missing['k'][0] | default('d') }}", "d");
	expands("{{ mp.nokey.deeper | default('d') }}", "d");
	expands("{{ lst[5] | default('oob') }}", "oob");
	expands("{{ emptylist | first | default('e') }}", "e");
	expands("{{ empty | last | default('e') }}", "e");
}
END_TEST

START_TEST(test_default_not_for_failures)
{
	/* The tracker's bug: a value that failed is not undefined. */
	expands("{{ trimmed | default('/usr/local/cuda-12.4') }}",
	    "/opt/cuda-13.0");
	fails("{{ bad_nested | default('d') }}", ENVCTL_EUNSUPPORTED,
	    "v.yaml:16:14: variable 'bad_nested': unsupported template "
	    "syntax '{{ ver | regex_replace('a') }}' (filter "
	    "'regex_replace') (used at p.yaml:12 in '{{ bad_nested | "
	    "default('d') }}')\n");
	fails("{{ selfref | default('d') }}", ENVCTL_EINVALID,
	    "v.yaml:14:10: variable 'selfref' refers to itself, or nests "
	    "more than 16 deep (used at p.yaml:12 in '{{ selfref | "
	    "default('d') }}')\n");
	fails("{{ chain1 | d('d') }}", ENVCTL_EINVALID,
	    "v.yaml:28:9: variable 'chain1' refers to itself, or nests "
	    "more than 16 deep (used at p.yaml:12 in '{{ chain1 | d('d') "
	    "}}')\n");
	fails("{{ secret | default('d') }}", ENVCTL_EUNSUPPORTED,
	    "v.yaml:23:9: variable 'secret' is vault-encrypted, which envctl "
	    "cannot decrypt (used at p.yaml:12 in '{{ secret | default('d') "
	    "}}')\n");
	fails("{{ pyset | default('d') }}", ENVCTL_EUNSUPPORTED,
	    "v.yaml:26:8: variable 'pyset': a Python set, which envctl "
	    "cannot use (used at p.yaml:12 in '{{ pyset | default('d') }}')\n");
	/* Filters other than default fail on undefined: not absorbed. */
	fails("{{ missing | lower | default('d') }}", ENVCTL_EUNDEFINED,
	    "p.yaml:12:7: undefined variable 'missing'\n");
	fails("{{ (missing ~ 'a') | default('d') }}", ENVCTL_EUNDEFINED,
	    "p.yaml:12:7: undefined variable 'missing'\n");
	fails("{{ missing | first | default('d') }}", ENVCTL_EUNDEFINED,
	    "p.yaml:12:7: undefined variable 'missing'\n");
	/* A lookup's own failure is passed on. */
	fails("{{ failing | default('d') }}", ENVCTL_EINVALID,
	    "lookup failed\n");
}
END_TEST

START_TEST(test_nested)
{
	expands("{{ nested }}", "13.0-n");
	expands("{{ unsafe }}", "{{ ver }}");
	expands("{{ weird }}", "{{ x }}");
	/* An undefined use inside a variable makes it undefined. */
	expands("{{ undef_nested | default('und') }}", "und");
	expands("{{ mnested | default('md') }}", "md");
	expands("{{ mnested.a | default('md') }}", "md");
	fails("a\n{{ undef_nested }}", ENVCTL_EUNDEFINED,
	    "v.yaml:12:16: variable 'undef_nested': undefined variable "
	    "'nope' (used at p.yaml:13 in '{{ undef_nested }}')\n");
	fails("{{ undef_nested }}", ENVCTL_EUNDEFINED,
	    "v.yaml:12:16: variable 'undef_nested': undefined variable "
	    "'nope' (used at p.yaml:12 in '{{ undef_nested }}')\n");
	/* Ansible's literal_eval of results, and its one-name shortcut. */
	expands("{{ boolish | int }}", "1");
	expands("{{ truestr | int }}", "0");
	expands("{{ listy | first }}", "1");
	expands("{{ listy[1] }}", "2");
	expands("{{ nzero | default('z', true) }}", "z");
	expands("{{ nnull | default('z', true) }}", "z");
	expands("{{ nnull ~ 'a' }}", "Nonea");
	expands("{{ dtpl }}", "13.0{'a': 1}");
	expands("{{ lst2[0] }}|{{ lst2[1] | int }}|{{ lst2[2] | first }}",
	    "13.0|1|[");
	fails("{{ nzero | first }}", ENVCTL_EINVALID,
	    "p.yaml:12:7: filter 'first' of an integer: Ansible fails ('int' "
	    "object is not iterable)\n");
}
END_TEST

START_TEST(test_subscripts)
{
	expands("{{ lst[0] }}{{ lst[-1] }}{{ lst.1 }}", "a3b");
	expands("{{ mp.k }}{{ mp['n'] }}{{ mp.inner.z }}{{ mp['inner']['z'] }}",
	    "v5deepdeep");
	expands("{{ mp[1] }}{{ mp[true] }}", "oneone");
	expands("{{ mp['1'] | default('str key') }}", "str key");
	expands("{{ ver[0] }}{{ ver[-1] }}", "10");
	expands("{{ 'h\xc3\xa9llo'[1] }}", "\xc3\xa9");
	expands("{{ ver.nosuch | default('ns') }}", "ns");
	expands("{{ (lst)[0] }}", "a");
	expands("{{ hv['other'].y }}|{{ hv.other['name'] }}|{{ hv.other.yd }}",
	    "other-y|other|nover");
	expands("{{ hv['nohost'] | default('nh') }}", "nh");
	expands("{{ hv.other.nov | default('nv') }}", "nv");
	refuses("{{ mp.keys }}", 7, "{{ mp.keys }}",
	    "'keys' is a Python attribute of dict");
	refuses("{{ mp['items'] }}", 7, "{{ mp['items'] }}",
	    "'items' is a Python attribute of dict");
	refuses("{{ ver.upper }}", 7, "{{ ver.upper }}",
	    "'upper' is a Python attribute of str");
	refuses("{{ n.real }}", 7, "{{ n.real }}",
	    "'real' is a Python attribute of int");
	refuses("{{ lst.__class__ }}", 7, "{{ lst.__class__ }}",
	    "'__class__' is a Python attribute of list");
	refuses("{{ hv.keys }}", 7, "{{ hv.keys }}",
	    "'keys' is a Python attribute of dict");
	refuses("{{ hv }}", 7, "{{ hv }}", "'hv' as a whole");
	refuses("{{ hv['other'] | first }}", 7, "{{ hv['other'] | first }}",
	    "'hv['other']' as a whole");
	refuses("{{ lst[0:1] }}", 7, "{{ lst[0:1] }}", "slice");
	fails("{{ hv['other'].yu }}", ENVCTL_EUNSUPPORTED,
	    "o.yaml:3:6: variable 'hv['other']['yu']': undefined variable "
	    "'nope'; through hostvars Ansible would keep the template's "
	    "text unexpanded (used at p.yaml:12 in '{{ hv['other'].yu }}')\n");
	fails("{{ mp[missing] }}", ENVCTL_EUNDEFINED,
	    "p.yaml:12:7: undefined variable 'missing'\n");
}
END_TEST

START_TEST(test_filters)
{
	expands("{{ ver | lower }}{{ 'AbC' | lower }}{{ 'AbC' | upper }}",
	    "13.0abcABC");
	expands("{{ yes_ | upper }}", "TRUE");
	expands("{{ lst | upper }}", "['A', 'B', 3]");
	expands("[{{ sp | trim }}]", "[pad]");
	expands("[{{ sp | trim('p ') }}]", "[ad]");
	expands("[{{ ' xx ' | trim(chars=' x') }}]", "[]");
	expands("[{{ '\xc2\xa0x\xe3\x80\x80' | trim }}]", "[x]");
	expands("{{ ver | replace('.', '_') }}", "13_0");
	expands("{{ 'aaaa' | replace('a', 'b', 2) }}", "bbaa");
	expands("{{ 'aaa' | replace('a', 'b', count=1) }}", "baa");
	expands("{{ 'ab' | replace('', '-') }}", "-a-b-");
	expands("{{ n | replace('4', 'x') }}", "x2");
	expands("{{ lst | join(',') }}|{{ lst | join }}|"
	    "{{ 'abc' | join('-') }}", "a,b,3|ab3|a-b-c");
	expands("{{ mp | join(',') }}", "k,n,inner,1");
	expands("{{ missing | default(lst) | join }}", "ab3");
	expands("{{ lst | first }}{{ lst | last }}{{ 'abc' | first }}"
	    "{{ mp | first }}{{ mp | last }}", "a3ak1");
	expands("{{ lst | string }}", "['a', 'b', 3]");
	expands("{{ mp.inner | string }}", "{'z': 'deep'}");
	expands("{{ yes_ | string }}{{ n | string }}", "True42");
	expands("{{ ver | replace('1', 'x') | upper | replace('X', 'y') }}",
	    "y3.0");
	expands("{{ 'a' ~ 'b' | upper }}", "aB");
	expands("{{ ver ~ n ~ yes_ ~ fl }}", "13.042True1.5");
}
END_TEST

START_TEST(test_int)
{
	expands("{{ '42' | int }}|{{ ' 42 ' | int }}|{{ '1_000' | int }}",
	    "42|42|1000");
	expands("{{ '1.9' | int }}|{{ '-1.9' | int }}|{{ '1e3' | int }}",
	    "1|-1|1000");
	expands("{{ 'abc' | int }}|{{ 'abc' | int(7) }}|{{ 'x' | int('zz') }}",
	    "0|7|zz");
	expands("{{ hexs | int }}|{{ hexs | int(base=16) }}|"
	    "{{ '1F' | int(0, 16) }}|{{ '0x1F' | int(0, 0) }}", "0|31|31|31");
	expands("{{ '010' | int(0, 0) }}|{{ '12' | int(base=8) }}|"
	    "{{ '0b101' | int(0, 2) }}", "10|10|5");
	expands("{{ fl | int }}|{{ yes_ | int }}|{{ nul | int }}|"
	    "{{ lst | int }}", "1|1|0|0");
	expands("{{ '99999999999999999999999' | int }}",
	    "99999999999999999999999");
	expands("{{ '1e20' | int }}", "100000000000000000000");
	expands("{{ 'nan' | int }}|{{ '  ' | int }}|{{ '+5' | int }}|"
	    "{{ '1__0' | int }}|{{ '-0' | int }}", "0|0|5|0|0");
	expands("{{ '.5' | int }}|{{ '5.' | int }}|{{ '1.5e3' | int }}",
	    "0|5|1500");
	fails("{{ 'inf' | int }}", ENVCTL_EINVALID, "p.yaml:12:7: filter "
	    "'int' of infinity: Ansible fails (cannot convert float "
	    "infinity to integer)\n");
	fails("{{ '1e400' | int }}", ENVCTL_EINVALID, "p.yaml:12:7: filter "
	    "'int' of infinity: Ansible fails (cannot convert float "
	    "infinity to integer)\n");
	refuses("{{ '\xd9\xa1' | int }}", 7, "{{ '\xd9\xa1' | int }}",
	    "filter 'int' of non-ASCII text");
	refuses("{{ '1' | int(0, 1) }}", 7, "{{ '1' | int(0, 1) }}",
	    "int base 1");
	refuses("{{ '1' | int(0, 'x') }}", 7, "{{ '1' | int(0, 'x') }}",
	    "a base of filter 'int' that is not an integer");
}
END_TEST

START_TEST(test_env_value)
{
	fails("{{ lst }}", ENVCTL_EINVALID, "v.yaml:9:6: variable 'lst' is "
	    "a list; only strings, numbers and booleans can be used (used at "
	    "p.yaml:12 in '{{ lst }}')\n");
	fails("x{{ mp.inner }}", ENVCTL_EINVALID, "v.yaml:10:25: variable "
	    "'mp['inner']' is a mapping; only strings, numbers and booleans "
	    "can be used (used at p.yaml:12 in 'x{{ mp.inner }}')\n");
	fails("{{ listy }}", ENVCTL_EINVALID, "p.yaml:12:7: variable 'listy' "
	    "is a list; only strings, numbers and booleans can be used\n");
	fails("{{ lst | default(1) }}", ENVCTL_EINVALID, "v.yaml:9:6: "
	    "variable 'lst' is a list; only strings, numbers and booleans "
	    "can be used (used at p.yaml:12 in '{{ lst | default(1) }}')\n");
	{
		static const char nul[] = "{{ 'a\0b' }}";
		struct buf b = ENVCTL_BUF_INIT;
		struct err err = ENVCTL_ERR_INIT;

		ck_assert_int_eq(template_expand(&b, nul, sizeof(nul) - 1,
		    &pos, &ops, &lookups, main_doc->root, &err),
		    ENVCTL_EINVALID);
		ck_assert_str_eq(err.msg, "a value contains a NUL byte, which "
		    "no environment variable can hold");
		ck_assert_uint_eq(b.len, 0);
		err_release(&err);
	}
	fails("{{ nul }}", ENVCTL_EINVALID, "p.yaml:12:7: variable 'nul' is "
	    "null, and Ansible's value for '{{ nul }}' is None, not a string "
	    "('{{ nul | default(\"\", true) }}' gives an empty one)\n");
	fails("{{ '[1,2]' }}", ENVCTL_EINVALID, "p.yaml:12:7: the value "
	    "reads as a Python list, which Ansible would make of it and "
	    "print as '[1, 2]'; only strings, numbers and booleans can be "
	    "used\n");
	fails("{{ \"{'a':1}\" }}", ENVCTL_EINVALID, "p.yaml:12:7: the value "
	    "reads as a Python dict, which Ansible would make of it and "
	    "print as '{'a': 1}'; only strings, numbers and booleans can be "
	    "used\n");
	/* Printed as Ansible would print the list it makes: kept. */
	expands("{{ lst | string }}", "['a', 'b', 3]");
	refuses("{{ lst.pop }}", 7, "{{ lst.pop }}",
	    "'pop' is a Python attribute of list");
	expands("{{ nul | default('', true) }}", "");
	expands("{{ '[1, ' }}", "[1, ");
	expands("{{ lst | join(' ') }}", "a b 3");
}
END_TEST

START_TEST(test_undefined)
{
	fails("{{ cuda_rot }}", ENVCTL_EUNDEFINED,
	    "p.yaml:12:7: undefined variable 'cuda_rot'\n");
	fails("x {{ cuda_root }} {{ nope }}", ENVCTL_EUNDEFINED,
	    "p.yaml:12:25: undefined variable 'nope'\n");
	fails("a\nbb {{ nope }}\n", ENVCTL_EUNDEFINED,
	    "p.yaml:13:4: undefined variable 'nope'\n");
	fails("{{ none_such | default('x') }} {{ none_such }}",
	    ENVCTL_EUNDEFINED, "p.yaml:12:38: undefined variable "
	    "'none_such'\n");
	fails("{{ lst[7] }}", ENVCTL_EUNDEFINED, "p.yaml:12:7: 'lst[7]' is "
	    "undefined (the list has 3 items)\n");
	fails("{{ mp.nokey }}", ENVCTL_EUNDEFINED,
	    "p.yaml:12:7: 'mp['nokey']' is undefined\n");
	fails("{{ emptylist | first }}", ENVCTL_EUNDEFINED, "p.yaml:12:7: "
	    "filter 'first' of an empty list: no first item\n");
}
END_TEST

START_TEST(test_no_pos)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT, f = ENVCTL_BUF_INIT;

	ck_assert_int_eq(template_expand(&b, "ab{{ x }}", 9, NULL, &ops,
	    &lookups, main_doc->root, &err), ENVCTL_EUNDEFINED);
	ck_assert_ptr_null(err.path);
	ck_assert_int_eq(err.line, 1);
	ck_assert_int_eq(err.col, 3);
	err_format(&err, &f);
	ck_assert_str_eq(f.data, "undefined variable 'x'\n");
	ck_assert_int_eq(template_expand(&b, "ab{{ x }}", 9, NULL, &ops,
	    &lookups, main_doc->root, NULL), ENVCTL_EUNDEFINED);
	buf_release(&f);
	buf_release(&b);
	err_release(&err);
}
END_TEST

struct unsup {
	const char	*in;
	const char	*shown;
	const char	*why;
};

static const struct unsup unsups[] = {
	{ "{% if x %}y{% endif %}", "{% if x %}", "statement" },
	{ "{%- set x = 1 -%}", "{%- set x = 1 -%}", "statement" },
	{ "{# note #}", "{# note #}", "comment" },
	{ "{{ ver | regex_replace('a', 'b') }}",
	    "{{ ver | regex_replace('a', 'b') }}", "filter 'regex_replace'" },
	{ "{{ ver | ansible.builtin.lower }}",
	    "{{ ver | ansible.builtin.lower }}", "filter 'ansible.'" },
	{ "{{ ver() }}", "{{ ver() }}", "call" },
	{ "{{ lst.pop(0) }}", "{{ lst.pop(0) }}",
	    "call" },
	{ "{{ ver + 'a' }}", "{{ ver + 'a' }}", "operator '+'" },
	{ "{{ ver - 1 }}", "{{ ver - 1 }}", "operator '-'" },
	{ "{{ ver == 'a' }}", "{{ ver == 'a' }}", "operator '=='" },
	{ "{{ ver ** 2 }}", "{{ ver ** 2 }}", "operator '**'" },
	{ "{{ ver if ver }}", "{{ ver if ver }}", "conditional expression" },
	{ "{{ ver is defined }}", "{{ ver is defined }}", "test 'is'" },
	{ "{{ not ver }}", "{{ not ver }}", "operator 'not'" },
	{ "{{ ver and 1 }}", "{{ ver and 1 }}", "operator 'and'" },
	{ "{{ 'a' in ver }}", "{{ 'a' in ver }}", "operator 'in'" },
	{ "{{ [1, 2] }}", "{{ [1, 2] }}", "list literal" },
	{ "{{ {'a': 1} }}", "{{ {'a': 1} }}", "dict literal" },
	{ "{{ (1, 2) }}", "{{ (1, 2) }}", "tuple" },
	{ "{{ 1.5 }}", "{{ 1.5 }}", "number literal '1.5'; only decimal "
	    "integers are" },
	{ "{{ 0x1F }}", "{{ 0x1F }}", "number literal '0x1F'; only decimal "
	    "integers are" },
	{ "{{ 007 }}", "{{ 007 }}", "integer literal '007'" },
	{ "{{ 1__0 }}", "{{ 1__0 }}", "integer literal '1__0'" },
	{ "{{- ver }}", "{{- ver }}", "whitespace control" },
	{ "{{ ver -}}", "{{ ver -}}", "whitespace control" },
	{ "{{ 'it\\'s' }}", "{{ 'it\\'s' }}",
	    "a backslash before ' in a string literal" },
	{ "{{ x | default('a', true, 3) }}",
	    "{{ x | default('a', true, 3) }}",
	    "filter 'default' takes 2 arguments" },
	{ "{{ ver | upper(1) }}", "{{ ver | upper(1) }}",
	    "filter 'upper' takes 0 arguments" },
	{ "{{ ver | int(bogus=1) }}", "{{ ver | int(bogus=1) }}",
	    "argument 'bogus' of filter 'int'" },
	{ "{{ ver | int(1, default=2) }}", "{{ ver | int(1, default=2) }}",
	    "argument 'default' of filter 'int' given twice" },
	{ "{{ ver | replace('a') }}", "{{ ver | replace('a') }}",
	    "filter 'replace' needs old and new" },
	{ "{{ x | default('a' }}", "{{ x | default('a' }}", "expected ')'" },
	{ "{{ lst[0 }}", "{{ lst[0 }}", "expected ']'" },
	{ "{{ ver ver }}", "{{ ver ver }}",
	    "unexpected 'ver' where '}}' was expected" },
	{ "{{ 'a' 'b' }}", "{{ 'a' 'b' }}",
	    "unexpected ''b'' where '}}' was expected" },
	{ "{{ ver . }}", "{{ ver . }}",
	    "expected an attribute name before '}}'" },
	{ "{{ ver ~ }}", "{{ ver ~ }}", "expected a value before '}}'" },
	{ "{% raw %}\n{{ x }}", "{% raw %}", "statement" },
	{ "{# long\ncomment #}", "{# long...", "comment" },
	{ "{{ lst[] }}", "{{ lst[] }}",
	    "unexpected ']' where an index was expected" },
};

START_TEST(test_unsupported)
{
	const struct unsup *u = &unsups[_i];

	if (strcmp(u->why, "expected a value before '}}'") == 0)
		fails(u->in, ENVCTL_EPARSE, "p.yaml:12:7: expected a value "
		    "before '}}'\n");
	else
		refuses(u->in, 7, u->shown, u->why);
}
END_TEST

START_TEST(test_syntax_before_values)
{
	/* Jinja compiles the whole template before it looks anything up. */
	lookups = 0;
	refuses("{{ nope }}{{ x | regex_replace('a') }}", 17,
	    "{{ x | regex_replace('a') }}", "filter 'regex_replace'");
	ck_assert_int_eq(lookups, 0);
}
END_TEST

START_TEST(test_unsupported_position)
{
	fails("ok {{ ver }}\n  x = {% if a %}", ENVCTL_EUNSUPPORTED,
	    "p.yaml:13:7: unsupported template syntax '{% if a %}' "
	    "(statement)\n");
	/* A long construct is shortened in the message. */
	fails("{{ ver | upper(\"0123456789012345678901234567890123456789"
	    "0123456789\") }}", ENVCTL_EUNSUPPORTED,
	    "p.yaml:12:7: unsupported template syntax '{{ ver | upper(\""
	    "01234567890123456789012345678901234567890123...' (filter "
	    "'upper' takes 0 arguments)\n");
}
END_TEST

START_TEST(test_parse_errors)
{
	const char *unterm = "unterminated '{{': no closing '}}'\n";
	char *want;

	want = xasprintf("p.yaml:12:7: %s", unterm);
	fails("{{ ver", ENVCTL_EPARSE, want);
	fails("{{", ENVCTL_EPARSE, want);
	fails("{{ ver }\n}", ENVCTL_EPARSE, want);
	fails("{{ x | default('abc }}", ENVCTL_EPARSE, want);
	free(want);
	want = xasprintf("p.yaml:13:3: %s", unterm);
	fails("a\nb {{ ver }", ENVCTL_EPARSE, want);
	free(want);
	fails("{{ }}", ENVCTL_EPARSE, "p.yaml:12:7: empty expression "
	    "'{{ }}'\n");
	fails("{{}}", ENVCTL_EPARSE, "p.yaml:12:7: empty expression "
	    "'{{ }}'\n");
	fails("{{ x | }}", ENVCTL_EPARSE,
	    "p.yaml:12:7: expected a filter name after '|'\n");
	fails("{{ x | int(default=1, 2) }}", ENVCTL_EPARSE,
	    "p.yaml:12:7: positional argument after a keyword argument\n");
}
END_TEST

START_TEST(test_cap)
{
	struct buf b;
	struct err err = ENVCTL_ERR_INIT;

	buf_init(&b, 10);
	buf_addstr(&b, "k=");
	ck_assert_int_eq(expand(&b, "{{ cuda_root }}", &err), ENVCTL_ETOOBIG);
	ck_assert_str_eq(err.msg, "expanded value exceeds the 10-byte limit");
	ck_assert_int_eq(err.line, 12);
	ck_assert_str_eq(b.data, "k=");
	ck_assert_int_eq(expand(&b, "0123456789", &err), ENVCTL_ETOOBIG);
	ck_assert_str_eq(err.msg, "expanded text exceeds the 10-byte limit");
	ck_assert_str_eq(b.data, "k=");
	ck_assert_int_eq(expand(&b, "{{ 'x' | replace('x', '0123456789') }}",
	    &err), ENVCTL_ETOOBIG);
	ck_assert_str_eq(b.data, "k=");
	ck_assert_int_eq(expand(&b, "{{ ver }}", &err), 0);
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
	ck_assert_uint_eq(template_find_syntax("ab{%", 4), 2);
	ck_assert_uint_eq(template_find_syntax("ab", 2), 2);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("template");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_passthrough);
	tcase_add_test(tc, test_spacing);
	tcase_add_test(tc, test_literals);
	tcase_add_test(tc, test_scalars);
	tcase_add_test(tc, test_default);
	tcase_add_test(tc, test_default_not_for_failures);
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_subscripts);
	tcase_add_test(tc, test_filters);
	tcase_add_test(tc, test_int);
	tcase_add_test(tc, test_env_value);
	tcase_add_test(tc, test_undefined);
	tcase_add_test(tc, test_no_pos);
	tcase_add_loop_test(tc, test_unsupported, 0,
	    sizeof(unsups) / sizeof(unsups[0]));
	tcase_add_test(tc, test_syntax_before_values);
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
