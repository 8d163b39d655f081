/* check_yamldoc.c - the YAML loader: aliases, merge keys, errors, typing. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/yamldoc.h"
#include "testutil.h"

static struct ydoc *
load_ok(const char *text)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	struct ydoc *doc = NULL;

	if (ydoc_load_string(&doc, text, strlen(text), "t.yaml", &err) != 0) {
		err_format(&err, &msg);
		ck_abort_msg("unexpected error: %s", msg.data);
	}
	err_release(&err);
	buf_release(&msg);
	return doc;
}

/* Loads text expecting code; returns the formatted error (caller frees). */
static char *
load_fail(const char *text, int code)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	struct ydoc *doc = NULL;
	int r;

	r = ydoc_load_string(&doc, text, strlen(text), "t.yaml", &err);
	ck_assert_int_eq(r, code);
	ck_assert_ptr_null(doc);
	ck_assert_int_eq(err.code, code);
	ck_assert_str_eq(err.path, "t.yaml");
	err_format(&err, &msg);
	err_release(&err);
	return buf_detach(&msg, NULL);
}

static char *
text_of(const struct ynode *n)
{
	struct buf b = ENVCTL_BUF_INIT;

	ck_assert_int_eq(yscalar_text(&b, n, NULL), 0);
	return buf_detach(&b, NULL);
}

static void
assert_text(const struct ynode *n, const char *want)
{
	char *got = text_of(n);

	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_anchor_alias)
{
	struct ydoc *doc = load_ok(
	    "base: &b\n"
	    "  user: deploy\n"
	    "  port: 22\n"
	    "copy: *b\n"
	    "list: [&x one, *x, *x]\n");
	const struct ynode *base, *copy, *list;

	base = ymap_get(doc->root, "base");
	copy = ymap_get(doc->root, "copy");
	ck_assert_ptr_nonnull(base);
	ck_assert_ptr_eq(base, copy);	/* an alias shares the node */
	ck_assert_int_eq(base->type, ENVCTL_YMAP);
	/* A node starts at its properties (here the anchor). */
	ck_assert_int_eq(base->line, 1);
	ck_assert_int_eq(base->col, 7);
	assert_text(ymap_get(copy, "user"), "deploy");
	list = ymap_get(doc->root, "list");
	ck_assert_uint_eq(list->nitems, 3);
	ck_assert_ptr_eq(list->items[0], list->items[2]);
	assert_text(list->items[1], "one");
	ck_assert_ptr_null(ymap_get(doc->root, "nope"));
	ck_assert_ptr_null(ymap_get(list, "one"));
	ydoc_free(doc);
}
END_TEST

/* The pairs of map as "k=v,k=v", in order. */
static char *
pairs_of(const struct ynode *map)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	ck_assert_int_eq(map->type, ENVCTL_YMAP);
	for (i = 0; i < map->npairs; i++) {
		if (i > 0)
			buf_addch(&b, ',');
		buf_addf(&b, "%s=", map->pairs[i].key->str);
		yscalar_text(&b, map->pairs[i].value, NULL);
	}
	return buf_detach(&b, NULL);
}

static void
assert_pairs(const struct ynode *map, const char *want)
{
	char *got = pairs_of(map);

	ck_assert_str_eq(got, want);
	free(got);
}

/* Expected orders and values are PyYAML's (yaml.safe_load into a dict). */
START_TEST(test_merge)
{
	struct ydoc *doc = load_ok(
	    "b: &b {x: 1, y: 2}\n"
	    "c: &c {x: 3, z: 4}\n"
	    "single: {<<: *b, y: 9, w: 0}\n"
	    "own_first: {y: 9, <<: *b}\n"
	    "list: {<<: [*b, *c], y: 9}\n"
	    "list_rev: {<<: [*c, *b]}\n"
	    "two: {<<: *b, <<: *c}\n"
	    "nested: {<<: {<<: *c, q: 5}, z: 6}\n"
	    "quoted: {\"<<\": *b}\n"
	    "tagged: {!!merge x: *c}\n");

	assert_pairs(ymap_get(doc->root, "single"), "x=1,y=9,w=0");
	assert_pairs(ymap_get(doc->root, "own_first"), "x=1,y=9");
	/* PyYAML: {'x': 1, 'z': 4, 'y': 9}: earlier list items win. */
	assert_pairs(ymap_get(doc->root, "list"), "x=1,z=4,y=9");
	assert_pairs(ymap_get(doc->root, "list_rev"), "x=3,y=2,z=4");
	/* Two merge keys: the later one wins, as PyYAML. */
	assert_pairs(ymap_get(doc->root, "two"), "x=3,y=2,z=4");
	assert_pairs(ymap_get(doc->root, "nested"), "x=3,z=6,q=5");
	ck_assert_ptr_nonnull(ymap_get(ymap_get(doc->root, "quoted"), "<<"));
	assert_pairs(ymap_get(doc->root, "tagged"), "x=3,z=4");
	ydoc_free(doc);
}
END_TEST

START_TEST(test_merge_errors)
{
	char *msg;

	msg = load_fail("a: {<<: 1}\n", ENVCTL_EINVALID);
	ck_assert_str_eq(msg, "t.yaml:1:9: merge key '<<' expects a mapping "
	    "or a list of mappings, got an integer\n");
	free(msg);
	msg = load_fail("b: &b {x: 1}\nm: {<<: [*b, [1]]}\n",
	    ENVCTL_EINVALID);
	ck_assert_str_eq(msg, "t.yaml:2:14: merge key '<<' expects a mapping "
	    "or a list of mappings, got a list\n");
	free(msg);
}
END_TEST

START_TEST(test_recursive_alias)
{
	char *msg;

	msg = load_fail("a: &a [1, *a]\n", ENVCTL_EINVALID);
	ck_assert_str_eq(msg, "t.yaml:1:11: alias '*a' refers to a node that "
	    "contains it\n");
	free(msg);
	msg = load_fail("a: &m\n  b:\n    <<: *m\n", ENVCTL_EINVALID);
	ck_assert_str_eq(msg, "t.yaml:3:9: alias '*m' refers to a node that "
	    "contains it\n");
	free(msg);
	msg = load_fail("a: *nope\n", ENVCTL_EPARSE);
	ck_assert_str_eq(msg, "t.yaml:1:4: undefined alias '*nope'\n");
	free(msg);
}
END_TEST

START_TEST(test_alias_bomb)
{
	struct buf b = ENVCTL_BUF_INIT;
	char *msg;
	int i;

	/* 10^7 nodes once expanded: refused, not walked. */
	buf_addstr(&b, "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (i = 1; i < 8; i++)
		buf_addf(&b, "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, "
		    "*l%d, *l%d, *l%d, *l%d]\n", i, i, i - 1, i - 1, i - 1,
		    i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	msg = load_fail(b.data, ENVCTL_ETOOBIG);
	ck_assert_ptr_nonnull(strstr(msg, "more than 2000000 nodes after "
	    "expanding aliases"));
	free(msg);
	buf_release(&b);
}
END_TEST

/*
 * Nesting is capped, so that a small file nested deep is refused at once
 * (a 300 KB value nested 150,000 deep used to take over a minute).
 */
START_TEST(test_depth)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct ydoc *doc;
	char *msg;
	int i;

	for (i = 0; i < 1000; i++)
		buf_addch(&b, '[');
	for (i = 0; i < 1000; i++)
		buf_addch(&b, ']');
	doc = load_ok(b.data);
	ck_assert_int_eq(doc->root->type, ENVCTL_YSEQ);
	ydoc_free(doc);
	buf_reset(&b);
	buf_addstr(&b, "a: ");
	for (i = 0; i < 150000; i++)
		buf_addch(&b, '[');
	msg = load_fail(b.data, ENVCTL_ETOOBIG);
	ck_assert_str_eq(msg, "t.yaml:1:1003: nested more than 1000 levels "
	    "deep\n");
	free(msg);
	/* Aliases of a deep node still count every node they stand for. */
	buf_reset(&b);
	buf_addstr(&b, "a: &a ");
	for (i = 0; i < 900; i++)
		buf_addch(&b, '[');
	for (i = 0; i < 900; i++)
		buf_addch(&b, ']');
	buf_addstr(&b, "\nb: [");
	for (i = 0; i < 3000; i++)
		buf_addstr(&b, "*a, ");
	buf_addstr(&b, "]\n");
	msg = load_fail(b.data, ENVCTL_ETOOBIG);
	ck_assert_ptr_nonnull(strstr(msg, "more than 2000000 nodes after "
	    "expanding aliases"));
	free(msg);
	buf_release(&b);
}
END_TEST

START_TEST(test_many_anchors)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct ydoc *doc;
	int i;

	/* Redefined anchors: an alias means the latest definition. */
	doc = load_ok("a: &x 1\nb: *x\nc: &x 2\nd: *x\n");
	assert_text(ymap_get(doc->root, "b"), "1");
	assert_text(ymap_get(doc->root, "d"), "2");
	ydoc_free(doc);
	/* Many anchors and aliases stay fast (hashed, not searched). */
	buf_addstr(&b, "anchors:\n");
	for (i = 0; i < 50000; i++)
		buf_addf(&b, "  - &a%d v%d\n", i, i);
	buf_addstr(&b, "aliases:\n");
	for (i = 0; i < 200000; i++)
		buf_addf(&b, "  - *a%d\n", i % 7);
	buf_addstr(&b, "last: *a49999\n");
	doc = load_ok(b.data);
	assert_text(ymap_get(doc->root, "last"), "v49999");
	ck_assert_uint_eq(ymap_get(doc->root, "aliases")->nitems, 200000);
	ck_assert_ptr_eq(ymap_get(doc->root, "last"),
	    ymap_get(doc->root, "anchors")->items[49999]);
	ydoc_free(doc);
	buf_release(&b);
}
END_TEST

START_TEST(test_duplicate_key)
{
	struct buf b = ENVCTL_BUF_INIT;
	char *msg;
	int i;

	msg = load_fail("all:\n  hosts:\n    a: 1\n    b: 2\n    a: 3\n",
	    ENVCTL_EINVALID);
	ck_assert_str_eq(msg, "t.yaml:5:5: duplicate key 'a' (first at line "
	    "3)\n");
	free(msg);
	/* The first repeat in document order is reported, not a later one. */
	msg = load_fail("x: 1\ny: 2\ny: 3\nx: 4\n", ENVCTL_EINVALID);
	ck_assert_str_eq(msg, "t.yaml:3:1: duplicate key 'y' (first at line "
	    "2)\n");
	free(msg);
	/* Quoted or not, the same key; merged keys are no duplicates. */
	msg = load_fail("'k': 1\nk: 2\n", ENVCTL_EINVALID);
	ck_assert_str_eq(msg, "t.yaml:2:1: duplicate key 'k' (first at line "
	    "1)\n");
	free(msg);
	/* Many keys stay fast (sorted, not compared pairwise). */
	for (i = 0; i < 50000; i++)
		buf_addf(&b, "k%d: %d\n", i, i);
	buf_addstr(&b, "k777: dup\n");
	msg = load_fail(b.data, ENVCTL_EINVALID);
	ck_assert_str_eq(msg, "t.yaml:50001:1: duplicate key 'k777' (first "
	    "at line 778)\n");
	free(msg);
	buf_release(&b);
}
END_TEST

START_TEST(test_malformed)
{
	char *msg;

	/* Bad indentation. */
	msg = load_fail("all:\n  hosts:\n    a: 1\n   b: 2\n", ENVCTL_EPARSE);
	ck_assert_str_eq(msg, "t.yaml:4:4: did not find expected key, while "
	    "parsing a block mapping at line 2\n");
	free(msg);
	/* A tab used for indentation gets a hint. */
	msg = load_fail("all:\n\thosts:\n", ENVCTL_EPARSE);
	ck_assert_str_eq(msg, "t.yaml:2:1: found character that cannot start "
	    "any token (a tab: YAML indentation must use spaces), while "
	    "scanning for the next token at line 2\n");
	free(msg);
	/* An unclosed quote runs to the end of the file. */
	msg = load_fail("all:\n  vars: {x: \"abc}\n  hosts:\n", ENVCTL_EPARSE);
	ck_assert_str_eq(msg, "t.yaml:4:1: found unexpected end of stream, "
	    "while scanning a quoted scalar at line 2\n");
	free(msg);
	msg = load_fail("a: 1\n  b: 2\n", ENVCTL_EPARSE);
	ck_assert_str_eq(msg, "t.yaml:2:4: mapping values are not allowed in "
	    "this context\n");
	free(msg);
	msg = load_fail("a: 1\n---\nb: 2\n", ENVCTL_EPARSE);
	ck_assert_str_eq(msg, "t.yaml:2:1: expected one YAML document, found "
	    "a second one\n");
	free(msg);
	msg = load_fail("{a: 1}: x\n", ENVCTL_EINVALID);
	ck_assert_str_eq(msg, "t.yaml:1:1: mapping keys must be scalars, got "
	    "a mapping\n");
	free(msg);
}
END_TEST

START_TEST(test_files)
{
	struct err err = ENVCTL_ERR_INIT;
	struct ydoc *doc;
	char *dir = tu_mkdtemp(), *p, *missing;

	p = tu_writes(dir, "empty.yaml", "# nothing but a comment\n");
	ck_assert_int_eq(ydoc_load_file(&doc, p, &err), 0);
	ck_assert_ptr_null(doc->root);
	ck_assert_str_eq(doc->path, p);
	ydoc_free(doc);
	free(p);
	p = tu_writes(dir, "one.yaml", "a: 1\n");
	ck_assert_int_eq(ydoc_load_file(&doc, p, &err), 0);
	ck_assert_str_eq(ymap_get(doc->root, "a")->path, p);
	ydoc_free(doc);
	missing = xasprintf("%s/missing.yaml", dir);
	ck_assert_int_eq(ydoc_load_file(&doc, missing, &err),
	    ENVCTL_ENOTFOUND);
	ck_assert_ptr_null(doc);
	ck_assert_ptr_nonnull(strstr(err.msg, missing));
	ck_assert_int_eq(err.cause, ENOENT);
	err_release(&err);
	ydoc_free(NULL);
	free(missing);
	free(p);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* YAML 1.1 as PyYAML (and so Ansible) types it, and how Jinja prints it. */
static const struct {
	const char		*yaml;
	enum yscalar_kind	 kind;
	const char		*text;
	const char		*pytype;	/* type(value).__name__ */
} table[] = {
	{ "yes", ENVCTL_YBOOL, "True", "bool" },
	{ "No", ENVCTL_YBOOL, "False", "bool" },
	{ "on", ENVCTL_YBOOL, "True", "bool" },
	{ "OFF", ENVCTL_YBOOL, "False", "bool" },
	{ "TRUE", ENVCTL_YBOOL, "True", "bool" },
	{ "tRue", ENVCTL_YSTR, "tRue", "str" },
	{ "y", ENVCTL_YSTR, "y", "str" },
	{ "\"yes\"", ENVCTL_YSTR, "yes", "str" },
	{ "'off'", ENVCTL_YSTR, "off", "str" },
	{ "!!str yes", ENVCTL_YSTR, "yes", "str" },
	{ "!!str 123", ENVCTL_YSTR, "123", "str" },
	{ "0x1F", ENVCTL_YINT, "31", "int" },
	{ "0x_1F", ENVCTL_YINT, "31", "int" },
	{ "010", ENVCTL_YINT, "8", "int" },
	{ "-010", ENVCTL_YINT, "-8", "int" },
	{ "08", ENVCTL_YSTR, "08", "str" },
	{ "0o17", ENVCTL_YSTR, "0o17", "str" },
	{ "0b101", ENVCTL_YINT, "5", "int" },
	{ "1_000", ENVCTL_YINT, "1000", "int" },
	{ "1__0", ENVCTL_YINT, "10", "int" },
	{ "0", ENVCTL_YINT, "0", "int" },
	{ "-0", ENVCTL_YINT, "0", "int" },
	{ "+12", ENVCTL_YINT, "12", "int" },
	{ "1:30", ENVCTL_YINT, "90", "int" },
	{ "-1:30:00", ENVCTL_YINT, "-5400", "int" },
	{ "1:60", ENVCTL_YSTR, "1:60", "str" },
	{ "09:30", ENVCTL_YSTR, "09:30", "str" },
	{ "4194304", ENVCTL_YINT, "4194304", "int" },
	/* Just above a power of two the shortest digits are not %.16e's. */
	{ "7.120236347223045e-307", ENVCTL_YFLOAT, "7.120236347223045e-307",
	    "float" },
	{ "99999999999999999999", ENVCTL_YINT, "99999999999999999999",
	    "int" },
	{ "-1_000_000_000_000_000_000_000", ENVCTL_YINT,
	    "-1000000000000000000000", "int" },
	{ "! 123", ENVCTL_YINT, "123", "int" },
	{ "!!int \"0x10\"", ENVCTL_YINT, "16", "int" },
	{ "1.5", ENVCTL_YFLOAT, "1.5", "float" },
	{ "1.0", ENVCTL_YFLOAT, "1.0", "float" },
	{ "100.", ENVCTL_YFLOAT, "100.0", "float" },
	{ ".5", ENVCTL_YFLOAT, "0.5", "float" },
	{ "._5", ENVCTL_YSTR, "._5", "str" },
	{ "0.1", ENVCTL_YFLOAT, "0.1", "float" },
	{ "-0.0", ENVCTL_YFLOAT, "-0.0", "float" },
	{ "1e3", ENVCTL_YSTR, "1e3", "str" },
	{ "1.5e3", ENVCTL_YSTR, "1.5e3", "str" },
	{ "1e+16", ENVCTL_YSTR, "1e+16", "str" },
	{ "1.0e+3", ENVCTL_YFLOAT, "1000.0", "float" },
	{ "1.0e+16", ENVCTL_YFLOAT, "1e+16", "float" },
	{ "1.0e+15", ENVCTL_YFLOAT, "1000000000000000.0", "float" },
	{ "1.5e-5", ENVCTL_YFLOAT, "1.5e-05", "float" },
	{ "0.0001", ENVCTL_YFLOAT, "0.0001", "float" },
	{ "12345678901234567.0", ENVCTL_YFLOAT, "1.2345678901234568e+16",
	    "float" },
	{ "1_0.5", ENVCTL_YFLOAT, "10.5", "float" },
	{ "190:20:30.15", ENVCTL_YFLOAT, "685230.15", "float" },
	{ ".inf", ENVCTL_YFLOAT, "inf", "float" },
	{ "-.Inf", ENVCTL_YFLOAT, "-inf", "float" },
	{ ".NaN", ENVCTL_YFLOAT, "nan", "float" },
	{ "!!float 1", ENVCTL_YFLOAT, "1.0", "float" },
	{ "~", ENVCTL_YNULL, "None", "NoneType" },
	{ "null", ENVCTL_YNULL, "None", "NoneType" },
	{ "NULL", ENVCTL_YNULL, "None", "NoneType" },
	{ "nULL", ENVCTL_YSTR, "nULL", "str" },
	{ "", ENVCTL_YNULL, "None", "NoneType" },
	{ "''", ENVCTL_YSTR, "", "str" },
	{ "!!bool yes", ENVCTL_YBOOL, "True", "bool" },
	{ "/usr/local/cuda-13.0", ENVCTL_YSTR, "/usr/local/cuda-13.0", "str" },
	{ "10.0.0.1", ENVCTL_YSTR, "10.0.0.1", "str" },
	/* A date for PyYAML; Jinja prints it as written. */
	{ "2001-12-14", ENVCTL_YSTR, "2001-12-14", "date" },
};
#define NTABLE	(sizeof(table) / sizeof(table[0]))

static char *
table_yaml(void)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	for (i = 0; i < NTABLE; i++)
		buf_addf(&b, "k%zu: %s\n", i, table[i].yaml);
	return buf_detach(&b, NULL);
}

START_TEST(test_typing)
{
	char *text = table_yaml(), *got, key[32];
	struct ydoc *doc = load_ok(text);
	const struct ynode *n;
	size_t i;

	for (i = 0; i < NTABLE; i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		n = ymap_get(doc->root, key);
		ck_assert_ptr_nonnull(n);
		got = text_of(n);
		ck_assert_msg(strcmp(got, table[i].text) == 0 &&
		    yscalar_kind(n) == table[i].kind,
		    "'%s': got '%s' kind %d, want '%s' kind %d", table[i].yaml,
		    got, (int)yscalar_kind(n), table[i].text,
		    (int)table[i].kind);
		free(got);
	}
	ydoc_free(doc);
	free(text);
}
END_TEST

/* The same table through the real PyYAML, when python3-yaml is there. */
START_TEST(test_typing_pyyaml)
{
	static const char script[] =
	    "import sys\n"
	    "try:\n"
	    "    import yaml\n"
	    "except ImportError:\n"
	    "    sys.exit(77)\n"
	    "d = yaml.safe_load(open(sys.argv[1]))\n"
	    "for i in range(len(d)):\n"
	    "    v = d['k%d' % i]\n"
	    "    print(type(v).__name__ + '\\t' + str(v))\n";
	char *dir = tu_mkdtemp(), *text = table_yaml(), *path, *line, *nl;
	char *argv[] = { (char *)tu_python(), "-c", (char *)script, NULL,
		NULL };
	struct tu_run r;
	size_t i;

	path = tu_writes(dir, "table.yaml", text);
	argv[3] = path;
	tu_run(&r, argv, NULL, NULL, 0);
	if (r.status == 77 || r.status == 127) {
		tu_skip("test_typing_pyyaml", "no python3 with PyYAML "
		    "(python3-yaml) to compare with");
		goto out;
	}
	ck_assert_msg(r.status == 0, "python3 failed: %s", r.errout);
	/* Compare line by line so that a failure names the row. */
	line = r.out;
	for (i = 0; i < NTABLE; i++) {
		char *exp = xasprintf("%s\t%s", table[i].pytype,
		    table[i].text);

		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		*nl = '\0';
		ck_assert_msg(strcmp(line, exp) == 0,
		    "row '%s': PyYAML says '%s', table says '%s'",
		    table[i].yaml, line, exp);
		free(exp);
		line = nl + 1;
	}
	ck_assert_str_eq(line, "");
out:
	tu_run_free(&r);
	free(path);
	free(text);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_scalar_readers)
{
	struct ydoc *doc = load_ok(
	    "i: 0x7fffffffffffffff\n"
	    "big: 0x8000000000000000\n"
	    "neg: -9223372036854775808\n"
	    "b: Off\n"
	    "s: text\n"
	    "m: {a: 1}\n"
	    "l: [1]\n"
	    "n: ~\n"
	    "f: 1.5\n"
	    "bad: !!int nope\n");
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	const struct ynode *r = doc->root;
	long long v;
	int bv;

	ck_assert_int_eq(yscalar_int(ymap_get(r, "i"), &v), 0);
	ck_assert(v == 9223372036854775807LL);
	ck_assert_int_eq(yscalar_int(ymap_get(r, "neg"), &v), 0);
	ck_assert(v == -9223372036854775807LL - 1);
	ck_assert_int_eq(yscalar_int(ymap_get(r, "big"), &v),
	    ENVCTL_ETOOBIG);
	ck_assert_int_eq(yscalar_int(ymap_get(r, "s"), &v), ENVCTL_EINVALID);
	ck_assert_int_eq(yscalar_bool(ymap_get(r, "b"), &bv), 0);
	ck_assert_int_eq(bv, 0);
	ck_assert_int_eq(yscalar_bool(ymap_get(r, "s"), &bv),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(ynode_describe(ymap_get(r, "m")), "a mapping");
	ck_assert_str_eq(ynode_describe(ymap_get(r, "l")), "a list");
	ck_assert_str_eq(ynode_describe(ymap_get(r, "n")), "null");
	ck_assert_str_eq(ynode_describe(ymap_get(r, "f")), "a float");
	ck_assert_str_eq(ynode_describe(ymap_get(r, "b")), "a boolean");
	ck_assert_str_eq(ynode_describe(ymap_get(r, "i")), "an integer");
	ck_assert_str_eq(ynode_describe(ymap_get(r, "s")), "a string");
	ck_assert_str_eq(ynode_describe(NULL), "nothing");

	/* Errors name the node's position. */
	ck_assert_int_eq(yscalar_text(&b, ymap_get(r, "big"), &err),
	    ENVCTL_EINVALID);
	ck_assert_int_eq(err.line, 2);
	ck_assert_int_eq(err.col, 6);
	ck_assert_str_eq(err.msg, "integer '0x8000000000000000' is out of "
	    "range");
	ck_assert_int_eq(yscalar_text(&b, ymap_get(r, "bad"), &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "invalid integer 'nope'");
	ck_assert_int_eq(yscalar_text(&b, ymap_get(r, "m"), &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "expected a scalar, got a mapping");
	ck_assert_str_eq(err.path, "t.yaml");
	ck_assert_int_eq(err.line, 6);
	ck_assert_uint_eq(b.len, 0);
	/* A capped buffer: ETOOBIG, and the buffer is left as it was. */
	buf_release(&b);
	buf_init(&b, 3);
	ck_assert_int_eq(yscalar_text(&b, ymap_get(r, "s"), &err),
	    ENVCTL_ETOOBIG);
	ck_assert_uint_eq(b.len, 0);
	buf_release(&b);
	err_release(&err);
	ydoc_free(doc);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("yamldoc");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_anchor_alias);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_merge_errors);
	tcase_add_test(tc, test_recursive_alias);
	tcase_add_test(tc, test_alias_bomb);
	tcase_add_test(tc, test_many_anchors);
	tcase_add_test(tc, test_depth);
	tcase_add_test(tc, test_duplicate_key);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_files);
	tcase_add_test(tc, test_typing);
	tcase_add_test(tc, test_typing_pyyaml);
	tcase_add_test(tc, test_scalar_readers);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
