/*
 * check_inv_ini.c - INI inventories, read by inventory_load() and by the
 * real ansible-inventory, compared.
 *
 * Each case is written to hosts.ini in a private directory; Ansible's ini
 * plugin alone reads it (ANSIBLE_INVENTORY_ENABLED=ini, an empty
 * ansible.cfg, a private HOME) with --list, its JSON is parsed with
 * jansson, and envctl must have the same hosts, the same members and
 * children for every group Ansible lists, and every host variable with
 * the same value and type.  Where Ansible fails (unparsed sources fail),
 * envctl must fail too, at the line Ansible names.  Without
 * ansible-inventory the comparing tests skip (tu_skip: a failure under
 * CI=true).
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/inventory.h"
#include "controller/pyvalue.h"
#include "controller/yamldoc.h"
#include "testutil.h"

#define ANSIBLE_INVENTORY	"/usr/bin/ansible-inventory"

struct ansible {
	int	 status;
	char	*out;
	char	*errout;
};

/* Runs ansible-inventory --list on path; 0 after a skip. */
static int
run_ansible(const char *path, struct ansible *a)
{
	char *argv[] = { ANSIBLE_INVENTORY, "-i", (char *)path, "--list",
	    NULL };
	char *extra[] = { "ANSIBLE_INVENTORY_ENABLED=ini",
	    "ANSIBLE_INVENTORY_UNPARSED_FAILED=True", "ANSIBLE_NOCOLOR=1",
	    NULL };
	struct tu_run r;
	size_t i;

	memset(a, 0, sizeof(*a));
	if (tu_ansible(&r, "inv_ini", argv, extra) != 0)
		return 0;
	/* Ansible wraps its warnings at 80 columns. */
	for (i = 0; i < r.errlen; i++)
		if (r.errout[i] == '\n')
			r.errout[i] = ' ';
	a->status = r.status;
	a->out = xstrdup(r.out);
	a->errout = xstrdup(r.errout);
	tu_run_free(&r);
	return 1;
}

static void
ansible_release(struct ansible *a)
{
	free(a->out);
	free(a->errout);
}

/* The value envctl holds, as the JSON Ansible prints for it. */
static json_t *
to_json(const struct ynode *v)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *j = NULL;
	long long n;
	size_t i;
	int t;

	switch (v->type) {
	case ENVCTL_YSEQ:
		j = json_array();
		for (i = 0; i < v->nitems; i++)
			json_array_append_new(j, to_json(v->items[i]));
		return j;
	case ENVCTL_YMAP:
		j = json_object();
		for (i = 0; i < v->npairs; i++) {
			buf_reset(&b);
			ck_assert_int_eq(pyvalue_str(&b, v->pairs[i].key,
			    NULL), 0);
			json_object_set_new(j, b.data,
			    to_json(v->pairs[i].value));
		}
		buf_release(&b);
		return j;
	case ENVCTL_YSCALAR:
		break;
	}
	if (v->tag != NULL && strcmp(v->tag, ENVCTL_YTAG_UNUSABLE) == 0)
		return json_sprintf("UNUSABLE: %s", v->str);
	switch (yscalar_kind(v)) {
	case ENVCTL_YINT:
		ck_assert_int_eq(yscalar_int(v, &n), 0);
		return json_integer(n);
	case ENVCTL_YFLOAT:
		return json_real(strtod(v->str, NULL));
	case ENVCTL_YBOOL:
		ck_assert_int_eq(yscalar_bool(v, &t), 0);
		return json_boolean(t);
	case ENVCTL_YNULL:
		return json_null();
	case ENVCTL_YSTR:
		break;
	}
	return json_stringn(v->str, v->len);
}

static void
json_show(struct buf *msg, const json_t *j)
{
	char *s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT |
	    JSON_SORT_KEYS);

	buf_addstr(msg, s != NULL ? s : "?");
	free(s);
}

static const struct host **
members(const struct inventory *inv, const char *group, size_t *n)
{
	const struct host **hs = NULL;
	size_t i;

	*n = 0;
	for (i = 0; i < inventory_ngroups(inv); i++)
		if (strcmp(inventory_group(inv, i), group) == 0) {
			*n = inventory_group_members(inv, i, &hs);
			break;
		}
	return hs;
}

static size_t
group_index(const struct inventory *inv, const char *group)
{
	size_t i;

	for (i = 0; i < inventory_ngroups(inv); i++)
		if (strcmp(inventory_group(inv, i), group) == 0)
			return i;
	return (size_t)-1;
}

/* Appends to msg every way inv differs from Ansible's --list output. */
static void
diff_list(const struct inventory *inv, json_t *list, struct buf *msg)
{
	json_t *hostvars = json_object_get(json_object_get(list, "_meta"),
	    "hostvars"), *g, *arr, *want, *got;
	const struct host **hs, *h;
	const char *gname, *vname;
	size_t i, n, k, gi;

	json_object_foreach(list, gname, g) {
		if (strcmp(gname, "_meta") == 0)
			continue;
		if ((gi = group_index(inv, gname)) == (size_t)-1) {
			buf_addf(msg, "group '%s' missing\n", gname);
			continue;
		}
		arr = json_object_get(g, "hosts");
		hs = members(inv, gname, &n);
		if (json_array_size(arr) != n)
			buf_addf(msg, "group '%s': %zu hosts, envctl %zu\n",
			    gname, json_array_size(arr), n);
		for (k = 0; k < n && k < json_array_size(arr); k++)
			if (strcmp(hs[k]->name, json_string_value(
			    json_array_get(arr, k))) != 0)
				buf_addf(msg, "group '%s' host %zu: '%s', "
				    "envctl '%s'\n", gname, k,
				    json_string_value(json_array_get(arr, k)),
				    hs[k]->name);
		free(hs);
		arr = json_object_get(g, "children");
		n = inventory_group_nchildren(inv, gi);
		if (json_array_size(arr) != n)
			buf_addf(msg, "group '%s': %zu children, envctl "
			    "%zu\n", gname, json_array_size(arr), n);
		for (k = 0; k < n && k < json_array_size(arr); k++)
			if (strcmp(inventory_group(inv,
			    inventory_group_child(inv, gi, k)),
			    json_string_value(json_array_get(arr, k))) != 0)
				buf_addf(msg, "group '%s' child %zu differs\n",
				    gname, k);
	}
	/* Every host, with every variable and its type. */
	for (i = 0; i < inventory_nhosts(inv); i++) {
		json_t *vars;

		h = inventory_host(inv, i);
		vars = json_object_get(hostvars, h->name);
		n = host_nvars(h);
		if (json_object_size(vars) != n)
			buf_addf(msg, "host '%s': %zu variables, envctl %zu\n",
			    h->name, json_object_size(vars), n);
		for (k = 0; k < n; k++) {
			const struct ynode *v = host_var_at(h, k, &vname);

			want = json_object_get(vars, vname);
			got = to_json(v);
			if (want == NULL || !json_equal(want, got)) {
				buf_addf(msg, "host '%s' variable '%s': "
				    "ansible ", h->name, vname);
				json_show(msg, want);
				buf_addstr(msg, ", envctl ");
				json_show(msg, got);
				buf_addch(msg, '\n');
			}
			json_decref(got);
		}
	}
	json_object_foreach(hostvars, gname, g)
		if (inventory_find(inv, gname) == NULL)
			buf_addf(msg, "host '%s' missing\n", gname);
}

/* Loads text as hosts.ini both ways and asserts they agree. */
static void
same_as_ansible(const char *text, size_t len)
{
	char *dir = tu_mkdtemp(), *path;
	struct ansible a;
	struct inventory *inv = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT, e = ENVCTL_BUF_INIT;
	json_error_t je;
	json_t *list;
	int r;

	path = tu_write(dir, "hosts.ini", text, len);
	if (!run_ansible(path, &a))
		goto out;
	ck_assert_msg(a.status == 0, "ansible-inventory failed on\n%s\n%s",
	    text, a.errout);
	list = json_loads(a.out, 0, &je);
	ck_assert_msg(list != NULL, "ansible's JSON: %s", je.text);
	r = inventory_load(&inv, path, &err);
	err_format(&err, &e);
	ck_assert_msg(r == 0, "envctl failed on\n%s\n%s", text, e.data);
	diff_list(inv, list, &msg);
	ck_assert_msg(msg.len == 0, "envctl reads\n%s\nunlike Ansible:\n%s",
	    text, msg.data);
	json_decref(list);
	inventory_free(inv);
	ansible_release(&a);
out:
	err_release(&err);
	buf_release(&msg);
	buf_release(&e);
	tu_rmtree(dir);
	free(dir);
	free(path);
}

struct ok_case {
	const char	*what;
	const char	*text;
	size_t		 len;
};

#define OK(what, text)	{ what, text, sizeof(text) - 1 }

static const struct ok_case ok_cases[] = {
	OK("sections, ungrouped, comments",
	    "# a comment\n"
	    "; another\n"
	    "h0\n"
	    "\n"
	    "[web]\n"
	    "w1\n"
	    "  w2   # indented, commented\n"
	    "[db] # comment after a section\n"
	    "d1\n"
	    "[db:hosts]\n"
	    "d2\n"
	    "[all:vars]\n"
	    "site=main\n"),
	OK("children and vars named before their group",
	    "[top:children]\n"
	    "web\n"
	    "db # comment\n"
	    "[web:vars]\n"
	    "x=1\n"
	    "[web]\n"
	    "w1\n"
	    "[db:children]\n"
	    "leaf\n"
	    "[leaf]\n"
	    "l1\n"),
	OK("ranges and ports",
	    "[g]\n"
	    "node[01:03]\n"
	    "db-[a:c]:2222\n"
	    "h1:22\n"
	    "h1:33 p=1\n"
	    "[h]\n"
	    "h1:44\n"
	    "h2:2200 ansible_port=2201\n"
	    "[::1]:22\n"
	    "x[1:6:2]\n"),
	OK("inline values typed by literal_eval",
	    "[g]\n"
	    "h1 i=1 u=1_000 x=-0x10 o=0o17 b=0b11 f=1.5 e=1e3 t=True "
	    "n=None s=\"'1'\" l=\"[1, 'a', None]\" d=\"{'k': [1, (2, 3)]}\" "
	    "tu=\"(1,)\" em=\"()\" oct=0777 tr=true cat=\"'a' 'b'\" "
	    "by=\"b'abc'\" neg=-1.5 pl=+3 sp=' 1' nm=abc ws=\"1 \" "
	    "dup=\"{1: 'a', True: 'b'}\" c1='1 # x' big=123456789012\n"),
	OK("shlex words",
	    "[g]\n"
	    "h1 a=\"x y\" b='c d' c=x\\ y d=\"a\\\"b\" e='a\\b' f=\"a\\b\" "
	    "g=a'b'c h=1#comment i=2\n"
	    "'h 2' k=\"a=b\" m== n=x=y e1= e2='' e3=\"\"\n"
	    "h3 k='03#pa33w0rd' q=\"'03#pa33w0rd'\" # a comment\n"),
	OK(":vars values",
	    "[g]\n"
	    "h1\n"
	    "[g:vars]\n"
	    "a=23\n"
	    "b=FALSE\n"
	    "c='quoted'\n"
	    "d = [1, 2]\n"
	    "e=1 # a Python comment\n"
	    "f=abc # kept\n"
	    "g = \"double\" ; kept\n"
	    "h=x=y\n"
	    "i=\n"
	    "=empty name\n"
	    "my var = 1\n"
	    "j = True\n"
	    "k = {'a': None}\n"
	    "l = 1.0\n"),
	OK("later values replace earlier ones; hosts in two groups",
	    "[g]\n"
	    "h1 a=1 a=2 b=1\n"
	    "[h]\n"
	    "h1 b=2 c=3\n"
	    "h2\n"
	    "[g:vars]\n"
	    "a=9\n"
	    "z=1\n"
	    "[h:vars]\n"
	    "z=2\n"),
	OK("Python's line breaks and whitespace",
	    "[g]\r\n"
	    "h1 a=1\r\n"
	    "h2\fh3\vh4\x1ch5\r"
	    "h6 b=2\xc2\x85h7\xe2\x80\xa8h8\xe2\x80\xa9h9\n"
	    "\xc2\xa0h10 c=3\xc2\xa0\n"
	    "h11\xc2\xa0" "d=4\n"
	    "\t h12 e=5 \t\n"),
	OK("odd group names",
	    "[g#x]\n"
	    "h1\n"
	    "[[g]\n"
	    "h2\n"
	    "[p:children]\n"
	    "g#x\n"
	    "c#d # comment\n"
	    "[c#d]\n"
	    "h3\n"),
	OK("a file that is not UTF-8 in its comment lines only",
	    "[g]\n"
	    "h1\n"
	    "# caf\xe9\n"
	    "; \xff\xfe\n"
	    "h2 a=1\fb\n"),
};

START_TEST(test_same_as_ansible)
{
	same_as_ansible(ok_cases[_i].text, ok_cases[_i].len);
}
END_TEST

struct fail_case {
	const char	*text;
	int		 line;		/* where Ansible reports it */
	const char	*ansible;	/* in Ansible's message */
	const char	*ours;		/* in envctl's */
};

static const struct fail_case fail_cases[] = {
	{ "[g:foo]\nh1\n", 1, "has unknown type: foo", "unknown type" },
	{ "h1\n[g:VARS]\n", 2, "has unknown type: VARS", "unknown type" },
	{ "[ g ]\nh1\n", 1, "Invalid section entry", "invalid section" },
	{ "[g:]\nh1\n", 1, "Invalid section entry", "invalid section" },
	{ "[a:b:c]\nh1\n", 1, "Invalid section entry", "invalid section" },
	{ "h1\n[g:vars]\nx=1\n", 2, "not valid for undefined group: g",
	    "not valid for undefined group" },
	{ "h1\n[p:children]\nc\n[q:children]\nc\n", 3,
	    "[q:children] includes undefined group: c",
	    "[q:children] includes undefined group: 'c'" },
	{ "[g]\nh1 a\n", 2, "Expected key=value host variable assignment, "
	    "got: a", "expected key=value host variable assignment" },
	{ "[g]\nh1 a#b=1\n", 2, "got: a", "got: 'a'" },
	{ "[g]\nh1 ; x\n", 2, "got: ;", "got: ';'" },
	{ "[g]\nh1 a=\"unterminated\n", 2, "No closing quotation",
	    "No closing quotation" },
	{ "[g]\nh1 a=b\\\n", 2, "No escaped character",
	    "No escaped character" },
	{ "[g]\nh1\n[g:vars]\nx\n", 4, "Expected key=value, got: x",
	    "expected key=value" },
	{ "[p:children]\nc # x\nd ; x\n[c]\nh1\n[d]\n", 3,
	    "Expected group name, got: d ; x", "expected group name" },
	{ "[g]\n---\n", 0, "'---' is normally a sign this is a YAML file",
	    "'---'" },
	{ "[g]\nh1:\n", 0, "ending in ':' is not allowed", "ending in ':'" },
	{ "[g]\nh1 x=\"{[1]: 2}\"\n", 0, "unhashable type: 'list'",
	    "unhashable type: 'list'" },
	{ "[g]\nh1 x=\"{'a': [{}, {{}: 1}]}\"\n", 0,
	    "unhashable type: 'dict'", "unhashable type: 'dict'" },
};

/* Ansible fails on the text; envctl must fail too, at the same line. */
START_TEST(test_fails_like_ansible)
{
	const struct fail_case *c = &fail_cases[_i];
	char *dir = tu_mkdtemp(), *path, *at;
	struct ansible a;
	struct inventory *inv = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct buf e = ENVCTL_BUF_INIT;
	int r;

	path = tu_writes(dir, "hosts.ini", c->text);
	if (!run_ansible(path, &a))
		goto out;
	ck_assert_msg(a.status != 0, "ansible-inventory read\n%s", c->text);
	ck_assert_msg(strstr(a.errout, c->ansible) != NULL, "ansible said "
	    "%s", a.errout);
	r = inventory_load(&inv, path, &err);
	err_format(&err, &e);
	ck_assert_msg(r != 0, "envctl read\n%s", c->text);
	ck_assert_msg(strstr(e.data, c->ours) != NULL, "envctl said %s",
	    e.data);
	if (c->line != 0) {
		at = xasprintf("hosts.ini:%d:", c->line);
		ck_assert_msg(strstr(a.errout, at) != NULL, "ansible: %s",
		    a.errout);
		ck_assert_msg(strstr(e.data, at) != NULL, "envctl: %s",
		    e.data);
		free(at);
	}
	ansible_release(&a);
out:
	inventory_free(inv);
	err_release(&err);
	buf_release(&e);
	tu_rmtree(dir);
	free(dir);
	free(path);
}
END_TEST

/*
 * Values Ansible holds but envctl cannot (Ansible's own --list fails on
 * them: "Object of type set is not JSON serializable"): the host loads,
 * the variable is unusable and says why.
 */
START_TEST(test_unusable_values)
{
	static const char text[] =
	    "[g]\n"
	    "h1 ok=1 s=\"{1, 2}\" c=1+2j e=... n=\"[b'a']\" "
	    "x=\"b'\\xff'\"\n";
	static const struct {
		const char	*var;
		const char	*why;
	} want[] = {
		{ "s", "'s' in t.ini:2 is a Python set, which envctl cannot "
		    "use" },
		{ "c", "'c' in t.ini:2 is a Python complex number, which "
		    "envctl cannot use" },
		{ "e", "'e' in t.ini:2 is Python's Ellipsis (...), which "
		    "envctl cannot use" },
		{ "n", "'n' in t.ini:2 is a value holding bytes inside a "
		    "list, tuple, set or dict, which envctl cannot use" },
		{ "x", "'x' in t.ini:2 is bytes that are not UTF-8, which "
		    "envctl cannot use" },
	};
	struct inventory *inv = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	const struct host *h;
	const struct ynode *v;
	size_t i;

	ck_assert_int_eq(inventory_load_string(&inv, text, sizeof(text) - 1,
	    "t.ini", &err), 0);
	h = inventory_find(inv, "h1");
	ck_assert_ptr_nonnull(h);
	v = host_var(h, "ok");
	ck_assert_int_eq(yscalar_kind(v), ENVCTL_YINT);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		v = host_var(h, want[i].var);
		ck_assert_ptr_nonnull(v);
		ck_assert_ptr_nonnull(v->tag);
		ck_assert_str_eq(v->tag, ENVCTL_YTAG_UNUSABLE);
		ck_assert_str_eq(v->str, want[i].why);
		ck_assert_int_eq(pyvalue_str(&b, v, &err),
		    ENVCTL_EUNSUPPORTED);
		ck_assert_str_eq(err.msg, want[i].why);
		err_release(&err);
	}
	inventory_free(inv);
	buf_release(&b);
}
END_TEST

/* A line that is not UTF-8 (and no comment) is refused by name. */
START_TEST(test_not_utf8)
{
	static const char text[] = "[g]\nh1 a=\xff\n  # ok \xfe\n";
	struct inventory *inv = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct buf e = ENVCTL_BUF_INIT;

	ck_assert_int_ne(inventory_load_string(&inv, text, sizeof(text) - 1,
	    "t.ini", &err), 0);
	err_format(&err, &e);
	ck_assert_msg(strstr(e.data, "t.ini:2:") != NULL &&
	    strstr(e.data, "not valid UTF-8") != NULL, "%s", e.data);
	ck_assert_msg(strstr(e.data, "t.ini:3:") == NULL, "%s", e.data);
	inventory_free(inv);
	err_release(&err);
	buf_release(&e);
}
END_TEST

/* Positions: the variable's word, the host's pattern. */
START_TEST(test_positions)
{
	static const char text[] = "[g]\n  h1  a=1 b='x'\n[g:vars]\n c = 2\n";
	struct inventory *inv = NULL;
	struct err err = ENVCTL_ERR_INIT;
	const struct host *h;
	const struct ynode *v;

	ck_assert_int_eq(inventory_load_string(&inv, text, sizeof(text) - 1,
	    "t.ini", &err), 0);
	h = inventory_find(inv, "h1");
	v = host_var(h, "b");
	ck_assert_int_eq(v->line, 2);
	ck_assert_int_eq(v->col, 11);
	ck_assert_str_eq(v->path, "t.ini");
	v = host_var(h, "c");
	ck_assert_int_eq(v->line, 4);
	ck_assert_int_eq(v->col, 6);
	ck_assert_int_eq(yscalar_kind(v), ENVCTL_YINT);
	inventory_free(inv);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("inv_ini");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_same_as_ansible, 0,
	    sizeof(ok_cases) / sizeof(ok_cases[0]));
	tcase_add_loop_test(tc, test_fails_like_ansible, 0,
	    sizeof(fail_cases) / sizeof(fail_cases[0]));
	tcase_add_test(tc, test_unusable_values);
	tcase_add_test(tc, test_not_utf8);
	tcase_add_test(tc, test_positions);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
