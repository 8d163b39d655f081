/* check_render.c - environment code, mode "file" and mode "block". */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/desired.h"
#include "controller/inventory.h"
#include "controller/playbook.h"
#include "controller/render.h"
#include "testutil.h"

#define OWNER	"cuda13-nccl"
#define B_M	"# BEGIN envctl managed block: " OWNER
#define E_M	"# END envctl managed block: " OWNER
#define OB_M	"# BEGIN envctl managed block: other"
#define OE_M	"# END envctl managed block: other"

#define S(s)	s, sizeof(s) - 1

/* ---- helpers ---- */

/* Appends s with controls and non-ASCII bytes escaped, for messages. */
static void
escape(struct buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			buf_addstr(b, "\\n");
		else if (c == '\\')
			buf_addstr(b, "\\\\");
		else if (c < 0x20 || c >= 0x7f)
			buf_addf(b, "\\x%02x", c);
		else
			buf_addch(b, c);
	}
}

/* Asserts got[0, gotlen) == want[0, wantlen), showing both on failure. */
static void
same(const char *what, const char *got, size_t gotlen, const char *want,
    size_t wantlen)
{
	struct buf g = ENVCTL_BUF_INIT, w = ENVCTL_BUF_INIT;

	if (gotlen == wantlen && memcmp(got, want, gotlen) == 0)
		return;
	escape(&g, got, gotlen);
	escape(&w, want, wantlen);
	ck_abort_msg("%s:\n got  \"%s\"\n want \"%s\"", what, g.data, w.data);
}

/* Asserts err holds code and formats as exactly want (one line). */
static void
err_is(struct err *err, int code, const char *want)
{
	struct buf f = ENVCTL_BUF_INIT;

	ck_assert_msg(err->code == code, "code %s, want %s (%s)",
	    err_codename(err->code), err_codename(code),
	    err->msg != NULL ? err->msg : "");
	err_format(err, &f);
	ck_assert_str_eq(f.data, want);
	buf_release(&f);
	err_release(err);
}

/* Appends the LF text s with each '\n' written as eol. */
static void
add_eol(struct buf *b, const char *s, size_t n, const char *eol)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\n')
			buf_addstr(b, eol);
		else
			buf_addch(b, s[i]);
}

static const char *
eol_of(const char *s, size_t n)
{
	const char *nl = memchr(s, '\n', n);

	return nl != NULL && nl > s && nl[-1] == '\r' ? "\r\n" : "\n";
}

static char *
python_or_skip(const char *suite)
{
	const char *py = tu_python();

	if (py[0] == '/' && access(py, X_OK) == 0)
		return xstrdup(py);
	tu_skip(suite, "no /usr/bin/python3 to compare with");
	return NULL;
}

/* ---- render_env_code ---- */

static const struct render_var golden_vars[] = {
	{ "CUDA_HOME", "/usr/local/cuda-13.0", NULL },
	{ "NCCL_PROTO", "LL", "NCCL tuning - known working config" },
	{ "QUOTED", "a\"b\\c\n\xc3\xa9", NULL },
	{ "EMPTY_COMMENT", "", "" },
};

START_TEST(test_env_setdefault)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_int_eq(render_env_code(&b, golden_vars, 4,
	    ENVCTL_POLICY_SETDEFAULT, &err), 0);
	ck_assert_str_eq(b.data,
	    "import os as _envctl_os\n"
	    "_envctl_os.environ.setdefault(\"CUDA_HOME\", "
	    "\"/usr/local/cuda-13.0\")\n"
	    "\n"
	    "# NCCL tuning - known working config\n"
	    "_envctl_os.environ.setdefault(\"NCCL_PROTO\", \"LL\")\n"
	    "_envctl_os.environ.setdefault(\"QUOTED\", "
	    "\"a\\\"b\\\\c\\n\\xe9\")\n"
	    "\n"
	    "#\n"
	    "_envctl_os.environ.setdefault(\"EMPTY_COMMENT\", \"\")\n"
	    "del _envctl_os\n");
	buf_release(&b);
}
END_TEST

START_TEST(test_env_override)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	buf_addstr(&b, "# before\n");
	ck_assert_int_eq(render_env_code(&b, golden_vars, 3,
	    ENVCTL_POLICY_OVERRIDE, &err), 0);
	ck_assert_str_eq(b.data,
	    "# before\n"
	    "import os as _envctl_os\n"
	    "_envctl_os.environ[\"CUDA_HOME\"] = \"/usr/local/cuda-13.0\"\n"
	    "\n"
	    "# NCCL tuning - known working config\n"
	    "_envctl_os.environ[\"NCCL_PROTO\"] = \"LL\"\n"
	    "_envctl_os.environ[\"QUOTED\"] = \"a\\\"b\\\\c\\n\\xe9\"\n"
	    "del _envctl_os\n");
	buf_release(&b);
}
END_TEST

START_TEST(test_env_empty)
{
	struct buf b = ENVCTL_BUF_INIT;

	ck_assert_int_eq(render_env_code(&b, NULL, 0,
	    ENVCTL_POLICY_SETDEFAULT, NULL), 0);
	ck_assert_str_eq(b.data, "import os as _envctl_os\ndel _envctl_os\n");
	buf_release(&b);
}
END_TEST

START_TEST(test_env_deterministic)
{
	struct buf a = ENVCTL_BUF_INIT, b = ENVCTL_BUF_INIT;

	ck_assert_int_eq(render_env_code(&a, golden_vars, 4,
	    ENVCTL_POLICY_OVERRIDE, NULL), 0);
	ck_assert_int_eq(render_env_code(&b, golden_vars, 4,
	    ENVCTL_POLICY_OVERRIDE, NULL), 0);
	same("second run", b.data, b.len, a.data, a.len);
	buf_release(&a);
	buf_release(&b);
}
END_TEST

struct env_err {
	struct render_var	 v[3];
	size_t			 n;
	const char		*msg;
};

static const struct env_err env_errs[] = {
	{ { { "", "x", NULL } }, 1, "invalid environment variable name '': "
	    "expected [A-Za-z_][A-Za-z0-9_]*" },
	{ { { "1A", "x", NULL } }, 1, "invalid environment variable name "
	    "'1A': expected [A-Za-z_][A-Za-z0-9_]*" },
	{ { { "OK", "x", NULL }, { "A-B", "x", NULL } }, 2, "invalid "
	    "environment variable name 'A-B': expected "
	    "[A-Za-z_][A-Za-z0-9_]*" },
	{ { { "A B", "x", NULL } }, 1, "invalid environment variable name "
	    "'A B': expected [A-Za-z_][A-Za-z0-9_]*" },
	{ { { "A=B", "x", NULL } }, 1, "invalid environment variable name "
	    "'A=B': expected [A-Za-z_][A-Za-z0-9_]*" },
	{ { { "A\n\"); x(\"", "x", NULL } }, 1, "invalid environment variable "
	    "name 'A\\n\"); x(\"': expected [A-Za-z_][A-Za-z0-9_]*" },
	{ { { "caf\xc3\xa9", "x", NULL } }, 1, "invalid environment variable "
	    "name 'caf\xc3\xa9': expected [A-Za-z_][A-Za-z0-9_]*" },
	{ { { "A", "1", NULL }, { "B", "2", NULL }, { "A", "3", NULL } }, 3,
	    "duplicate environment variable 'A' (entries 1 and 3)" },
	{ { { "A", "1", "one\ntwo" } }, 1,
	    "comment for 'A' contains a line break (one line only)" },
	{ { { "A", "1", "one\rtwo" } }, 1,
	    "comment for 'A' contains a line break (one line only)" },
	{ { { "A", "1", "bell\x07" } }, 1,
	    "comment for 'A' contains control character 0x07" },
	{ { { "A", "1", "caf\xe9" } }, 1,
	    "comment for 'A' is not valid UTF-8 (byte offset 3)" },
	{ { { "A", "a\xff", NULL } }, 1, "environment variable 'A': value is "
	    "not valid UTF-8: byte 0xff at byte offset 1 (byte never valid in "
	    "UTF-8)" },
	{ { { "A", NULL, NULL } }, 1, "environment variable 'A' has no value" },
	{ { { "A", "1", NULL }, { NULL, "2", NULL } }, 2,
	    "variable 2 has no name" },
};

START_TEST(test_env_errors)
{
	const struct env_err *t = &env_errs[_i];
	struct buf b = ENVCTL_BUF_INIT, f = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	char *want;

	buf_addstr(&b, "keep");
	ck_assert_int_eq(render_env_code(&b, t->v, t->n,
	    ENVCTL_POLICY_SETDEFAULT, &err), ENVCTL_EINVALID);
	want = xasprintf("%s\n", t->msg);
	err_is(&err, ENVCTL_EINVALID, want);
	ck_assert_str_eq(b.data, "keep");
	ck_assert_int_eq(render_env_code(&b, t->v, t->n,
	    ENVCTL_POLICY_OVERRIDE, NULL), ENVCTL_EINVALID);
	ck_assert_str_eq(b.data, "keep");
	free(want);
	buf_release(&f);
	buf_release(&b);
}
END_TEST

START_TEST(test_env_policy_and_cap)
{
	struct buf b;
	struct err err = ENVCTL_ERR_INIT;

	buf_init(&b, 40);
	ck_assert_int_eq(render_env_code(&b, golden_vars, 1,
	    (enum render_policy)7, &err), ENVCTL_EINVALID);
	err_is(&err, ENVCTL_EINVALID, "unknown policy 7\n");
	ck_assert_int_eq(render_env_code(&b, golden_vars, 1,
	    ENVCTL_POLICY_SETDEFAULT, &err), ENVCTL_ETOOBIG);
	err_is(&err, ENVCTL_ETOOBIG,
	    "environment code exceeds the 40-byte limit\n");
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(render_env_code(&b, NULL, 0,
	    ENVCTL_POLICY_SETDEFAULT, &err), 0);
	buf_release(&b);
}
END_TEST

/* ---- real Python: the rendered code in a fresh interpreter ---- */

#define PROBE \
	"import json, os, sys\n" \
	"e = os.environb\n" \
	"print(json.dumps({k: e[k.encode()].hex() if k.encode() in e " \
	"else None for k in sys.argv[1:]}))\n"

/*
 * Runs python3 in a clean environment with dir on PYTHONPATH (so that
 * dir/sitecustomize.py is imported) and extra (NULL or "NAME=value") set by
 * the launcher; prints the named variables as JSON of hex values.
 */
static void
probe(struct tu_run *r, const char *py, const char *dir, const char *extra,
    const char *const *names, size_t n)
{
	char *pp = xasprintf("PYTHONPATH=%s", dir);
	char *envp[] = { "PATH=/usr/bin:/bin", pp, (char *)extra, NULL };
	char **argv = xcalloc(n + 4, sizeof(*argv));
	size_t i;

	argv[0] = (char *)py;
	argv[1] = "-c";
	argv[2] = PROBE;
	for (i = 0; i < n; i++)
		argv[3 + i] = (char *)names[i];
	tu_run(r, argv, envp, NULL, 0);
	free(argv);
	free(pp);
}

/* The JSON PROBE prints when variable i has value want[i] (NULL: unset). */
static void
probe_json(struct buf *b, const char *const *names, const char *const *want,
    size_t n)
{
	size_t i, j;

	buf_addch(b, '{');
	for (i = 0; i < n; i++) {
		buf_addf(b, "%s\"%s\": ", i > 0 ? ", " : "", names[i]);
		if (want[i] == NULL) {
			buf_addstr(b, "null");
			continue;
		}
		buf_addch(b, '"');
		for (j = 0; want[i][j] != '\0'; j++)
			buf_addf(b, "%02x", (unsigned char)want[i][j]);
		buf_addch(b, '"');
	}
	buf_addstr(b, "}\n");
}

START_TEST(test_env_python)
{
	char *py = python_or_skip("check_render"), *dir, *pwned, *inject, *p;
	struct render_var v[12];
	const char *names[13], *want[13];
	struct buf code = ENVCTL_BUF_INIT, json = ENVCTL_BUF_INIT;
	struct tu_run r;
	size_t n = 0, i;
	int pass;

	if (py == NULL)
		return;
	dir = tu_mkdtemp();
	pwned = xasprintf("%s/pwned", dir);
	inject = xasprintf("\"); import os; os.system(\"touch %s\"); (\"",
	    pwned);
	v[n++] = (struct render_var){ "CUDA_HOME", "/usr/local/cuda-13.0",
	    "CUDA 13" };
	v[n++] = (struct render_var){ "NCCL_PROTO", "LL", NULL };
	v[n++] = (struct render_var){ "PRESET", "from-playbook", NULL };
	v[n++] = (struct render_var){ "HOSTILE", inject, "hostile value" };
	v[n++] = (struct render_var){ "BACKSLASH_N", "a\\nb", NULL };
	v[n++] = (struct render_var){ "NEWLINES", "l1\nl2\r\nl3\r", NULL };
	v[n++] = (struct render_var){ "QUOTES", "'''\"\"\"", NULL };
	v[n++] = (struct render_var){ "BRACES", "{{ cuda_root }}", NULL };
	v[n++] = (struct render_var){ "UNICODE",
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9" };
	v[n++] = (struct render_var){ "EMPTY", "", NULL };
	v[n++] = (struct render_var){ "TRAILING_BS", "C:\\", NULL };
	for (i = 0; i < n; i++) {
		names[i] = v[i].name;
		want[i] = v[i].value;
	}
	names[n] = "NOT_SET_BY_ANYONE";
	want[n] = NULL;

	for (pass = 0; pass < 3; pass++) {
		enum render_policy pol = pass == 1 ? ENVCTL_POLICY_OVERRIDE :
		    ENVCTL_POLICY_SETDEFAULT;
		const char *extra = pass < 2 ? "PRESET=from-launcher" : NULL;

		buf_reset(&code);
		ck_assert_int_eq(render_env_code(&code, v, n, pol, NULL), 0);
		p = tu_write(dir, "sitecustomize.py", code.data, code.len);
		free(p);
		/* setdefault: the launcher wins; override: the playbook. */
		want[2] = pass == 0 ? "from-launcher" : "from-playbook";
		probe(&r, py, dir, extra, names, n + 1);
		buf_reset(&json);
		probe_json(&json, names, want, n + 1);
		ck_assert_msg(r.status == 0, "pass %d: %s", pass, r.errout);
		ck_assert_msg(r.errlen == 0, "pass %d: stderr: %s", pass,
		    r.errout);
		ck_assert_str_eq(r.out, json.data);
		tu_run_free(&r);
		ck_assert_int_eq(access(pwned, F_OK), -1);
	}
	buf_release(&code);
	buf_release(&json);
	free(inject);
	free(pwned);
	tu_rmtree(dir);
	free(dir);
	free(py);
}
END_TEST

/* Both modes end to end: the rendered files work in a real interpreter. */
START_TEST(test_modes_python)
{
	static const struct render_var v[] = {
		{ "CUDA_HOME", "/usr/local/cuda-13.0", "CUDA" },
		{ "NCCL_ALGO", "Ring", NULL },
	};
	static const char *const names[] = { "CUDA_HOME", "NCCL_ALGO" };
	static const char *const want[] = { "/usr/local/cuda-13.0", "Ring" };
	static const char tmpl[] = "# generated\r\nimport sys\r\n"
	    "if True:\r\n    {{ envctl_env }}\r\nx = 1\r\n";
	char *py = python_or_skip("check_render"), *dir, *fx, *p, *cur;
	struct buf code = ENVCTL_BUF_INIT, out = ENVCTL_BUF_INIT;
	struct buf json = ENVCTL_BUF_INIT;
	struct tu_run r;
	size_t curlen;

	if (py == NULL)
		return;
	dir = tu_mkdtemp();
	ck_assert_int_eq(render_env_code(&code, v, 2, ENVCTL_POLICY_SETDEFAULT,
	    NULL), 0);
	probe_json(&json, names, want, 2);

	ck_assert_int_eq(render_file(&out, S(tmpl), "t.tmpl", code.data,
	    code.len, NULL), 0);
	p = tu_write(dir, "sitecustomize.py", out.data, out.len);
	free(p);
	probe(&r, py, dir, NULL, names, 2);
	ck_assert_msg(r.errlen == 0, "file mode: %s", r.errout);
	ck_assert_str_eq(r.out, json.data);
	tu_run_free(&r);

	fx = tu_fixture("seed-working.sitecustomize.py");
	cur = tu_read(fx, &curlen);
	ck_assert_ptr_nonnull(cur);
	buf_reset(&out);
	ck_assert_int_eq(render_block(&out, cur, curlen, fx, OWNER, code.data,
	    code.len, NULL), 0);
	p = tu_write(dir, "sitecustomize.py", out.data, out.len);
	free(p);
	probe(&r, py, dir, NULL, names, 2);
	ck_assert_msg(r.errlen == 0, "block mode: %s", r.errout);
	ck_assert_str_eq(r.out, json.data);
	tu_run_free(&r);

	free(cur);
	free(fx);
	buf_release(&code);
	buf_release(&out);
	buf_release(&json);
	tu_rmtree(dir);
	free(dir);
	free(py);
}
END_TEST

/* ---- render_file ---- */

static const char envcode[] =
    "import os as _envctl_os\n"
    "_envctl_os.environ.setdefault(\"A\", \"1\")\n"
    "\n"
    "# c\n"
    "_envctl_os.environ.setdefault(\"B\", \"2\")\n"
    "del _envctl_os\n";

/* Renders tmpl (len bytes) in mode "file"; must give want. */
static void
file_gives(const char *tmpl, size_t len, const char *want, size_t wantlen)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_msg(render_file(&b, tmpl, len, "t.tmpl", S(envcode), &err)
	    == 0, "%s", err.msg);
	same("render_file", b.data, b.len, want, wantlen);
	buf_release(&b);
}

START_TEST(test_file_golden)
{
	struct buf want = ENVCTL_BUF_INIT;

	buf_addstr(&want, "# header\nimport sys\n");
	buf_add(&want, S(envcode));
	buf_addstr(&want, "print('x')  # {not a template} }}\n");
	file_gives(S("# header\nimport sys\n{{ envctl_env }}\n"
	    "print('x')  # {not a template} }}\n"), want.data, want.len);
	file_gives(S("{{ envctl_env }}"), S(envcode));
	file_gives(S("{{envctl_env}}\n"), S(envcode));
	file_gives(S("{{   envctl_env\t}} \t\n"), S(envcode));
	buf_reset(&want);
	buf_addstr(&want, "# h\n");
	buf_add(&want, S(envcode));
	file_gives(S("# h\n{{ envctl_env }}"), want.data, want.len);
	buf_release(&want);
}
END_TEST

START_TEST(test_file_indent)
{
	file_gives(S("if True:\n\t  {{ envctl_env }}\npass\n"),
	    S("if True:\n"
	    "\t  import os as _envctl_os\n"
	    "\t  _envctl_os.environ.setdefault(\"A\", \"1\")\n"
	    "\n"
	    "\t  # c\n"
	    "\t  _envctl_os.environ.setdefault(\"B\", \"2\")\n"
	    "\t  del _envctl_os\n"
	    "pass\n"));
}
END_TEST

START_TEST(test_file_crlf)
{
	struct buf want = ENVCTL_BUF_INIT;

	buf_addstr(&want, "# h\r\n");
	add_eol(&want, S(envcode), "\r\n");
	buf_addstr(&want, "x = 1\r\n");
	file_gives(S("# h\r\n{{ envctl_env }}\r\nx = 1\r\n"), want.data,
	    want.len);
	/* The first line decides, as for blocks. */
	buf_reset(&want);
	add_eol(&want, S(envcode), "\r\n");
	buf_addstr(&want, "x = 1\n");
	file_gives(S("{{ envctl_env }}\r\nx = 1\n"), want.data, want.len);
	buf_release(&want);
}
END_TEST

START_TEST(test_file_bytes_kept)
{
	static const char tmpl[] = "# caf\xe9\0\x01\n{{ envctl_env }}\n\xff\0";
	struct buf want = ENVCTL_BUF_INIT;

	buf_add(&want, S("# caf\xe9\0\x01\n"));
	buf_add(&want, S(envcode));
	buf_add(&want, S("\xff\0"));
	file_gives(S(tmpl), want.data, want.len);
	buf_release(&want);
}
END_TEST

struct file_err {
	const char	*tmpl;
	size_t		 len;
	int		 code;
	const char	*msg;	/* the formatted error */
};

#define LITERAL "template files are literal except for the " \
	"'{{ envctl_env }}' line; put values in the playbook's env: map"
#define ALONE "'{{ envctl_env }}' must stand alone on its line " \
	"(only spaces or tabs around it)"
#define NOLINE "t.tmpl: template has no '{{ envctl_env }}' line: it " \
	"marks where the environment code goes\n"

static const struct file_err file_errs[] = {
	{ S(""), ENVCTL_EINVALID, NOLINE },
	{ S("x = 1\n"), ENVCTL_EINVALID, NOLINE },
	{ S("{{ envctl }}\n"), ENVCTL_EUNSUPPORTED, "t.tmpl:1:1: " LITERAL
	    "\n" },
	{ S("a\n{{ envctl_env }}\nb\n  {{envctl_env}}\n"), ENVCTL_EINVALID,
	    "t.tmpl:4:3: duplicate '{{ envctl_env }}' line, first at line "
	    "2\n" },
	{ S("a\nb = '{{ x }}'\n{{ envctl_env }}\n"), ENVCTL_EUNSUPPORTED,
	    "t.tmpl:2:6: " LITERAL "\n" },
	{ S("{% if x %}\n{{ envctl_env }}\n{% endif %}\n"),
	    ENVCTL_EUNSUPPORTED, "t.tmpl:1:1: " LITERAL "\n" },
	{ S("{{ envctl_env }}\n  {# c #}\n"), ENVCTL_EUNSUPPORTED,
	    "t.tmpl:2:3: " LITERAL "\n" },
	{ S("x = {{ envctl_env }}\n"), ENVCTL_EUNSUPPORTED,
	    "t.tmpl:1:5: " ALONE "\n" },
	{ S("{{ envctl_env }} # here\n"), ENVCTL_EUNSUPPORTED,
	    "t.tmpl:1:1: " ALONE "\n" },
	{ S("{{ envctl_env | default('') }}\n"), ENVCTL_EUNSUPPORTED,
	    "t.tmpl:1:1: " LITERAL "\n" },
	{ S("# a\r\n{{ envctl_env }}\r\nv = \"{{ cuda_root }}\"\r\n"),
	    ENVCTL_EUNSUPPORTED, "t.tmpl:3:6: " LITERAL "\n" },
	{ S("\xff\0\n{{ envctl_env }}\n\xe9{{x}}\n"), ENVCTL_EUNSUPPORTED,
	    "t.tmpl:3:2: " LITERAL "\n" },
};

START_TEST(test_file_errors)
{
	const struct file_err *t = &file_errs[_i];
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	buf_addstr(&b, "keep");
	ck_assert_int_eq(render_file(&b, t->tmpl, t->len, "t.tmpl",
	    S(envcode), &err), t->code);
	ck_assert_str_eq(err.path, "t.tmpl");
	err_is(&err, t->code, t->msg);
	ck_assert_str_eq(b.data, "keep");
	buf_release(&b);
}
END_TEST

/* ---- render_block ---- */

static const char body1[] =
    "import os as _envctl_os\n"
    "_envctl_os.environ.setdefault(\"NCCL_PROTO\", \"LL\")\n"
    "del _envctl_os\n";

static const char body2[] =
    "import os as _envctl_os\n"
    "_envctl_os.environ[\"NCCL_PROTO\"] = \"Simple\"\n"
    "\n"
    "# tuning\n"
    "_envctl_os.environ[\"NCCL_ALGO\"] = \"Ring\"\n"
    "del _envctl_os\n";

/* The block render_block should write for body, in line ending eol. */
static void
block_text(struct buf *b, const char *body, const char *eol)
{
	buf_reset(b);
	buf_addf(b, "%s%s", B_M, eol);
	add_eol(b, body, strlen(body), eol);
	buf_addf(b, "%s%s", E_M, eol);
}

static void
render_ok(struct buf *out, const char *cur, size_t curlen, const char *body)
{
	struct err err = ENVCTL_ERR_INIT;

	buf_reset(out);
	ck_assert_msg(render_block(out, cur, curlen, "site.py", OWNER, body,
	    strlen(body), &err) == 0, "render_block: %s", err.msg);
}

/* Finds the block in s, which must have one; returns its range. */
static void
find_ok(const char *s, size_t len, size_t *b, size_t *e)
{
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_msg(render_find_block(s, len, "site.py", OWNER, b, e,
	    &err) == 1, "render_find_block: %s", err.msg);
}

/* s without [b, e). */
static void
outside(struct buf *o, const char *s, size_t len, size_t b, size_t e)
{
	buf_reset(o);
	buf_add(o, s, b);
	buf_add(o, s + e, len - e);
}

/*
 * The invariants of mode "block" on cur: the block holds exactly the body
 * in cur's line ending; every byte outside it is cur's (plus the separator
 * when the block is appended); rendering again is a no-op; a new body
 * changes only the block; and going back gives the first result.
 */
static void
block_invariants(const char *what, const char *cur, size_t curlen)
{
	struct buf r1 = ENVCTL_BUF_INIT, r2 = ENVCTL_BUF_INIT;
	struct buf o1 = ENVCTL_BUF_INIT, o3 = ENVCTL_BUF_INIT;
	struct buf want = ENVCTL_BUF_INIT, blk = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	const char *eol = eol_of(cur, curlen);
	size_t cb = 0, ce = 0, b1, e1, b3, e3;
	int had;
	char *ctx;

	had = render_find_block(cur, curlen, "site.py", OWNER, &cb, &ce, &err);
	ck_assert_msg(had >= 0, "%s: %s", what, err.msg);

	render_ok(&r1, cur, curlen, body1);
	find_ok(r1.data, r1.len, &b1, &e1);
	block_text(&want, body1, eol);
	ctx = xasprintf("%s: block", what);
	same(ctx, r1.data + b1, e1 - b1, want.data, want.len);
	free(ctx);

	outside(&o1, r1.data, r1.len, b1, e1);
	if (had) {
		ck_assert_uint_eq(b1, cb);
		outside(&want, cur, curlen, cb, ce);
	} else {
		ck_assert_uint_eq(e1, r1.len);
		buf_reset(&want);
		buf_add(&want, cur, curlen);
		if (curlen > 0 && cur[curlen - 1] != '\n')
			buf_addstr(&want, eol);
		if (curlen > 0)
			buf_addstr(&want, eol);
	}
	ctx = xasprintf("%s: bytes outside the block", what);
	same(ctx, o1.data, o1.len, want.data, want.len);
	free(ctx);

	render_ok(&r2, r1.data, r1.len, body1);
	ctx = xasprintf("%s: second render", what);
	same(ctx, r2.data, r2.len, r1.data, r1.len);
	free(ctx);

	render_ok(&r2, r1.data, r1.len, body2);
	find_ok(r2.data, r2.len, &b3, &e3);
	ck_assert_uint_eq(b3, b1);
	block_text(&blk, body2, eol);
	ctx = xasprintf("%s: new block", what);
	same(ctx, r2.data + b3, e3 - b3, blk.data, blk.len);
	free(ctx);
	outside(&o3, r2.data, r2.len, b3, e3);
	ctx = xasprintf("%s: outside after a new body", what);
	same(ctx, o3.data, o3.len, o1.data, o1.len);
	free(ctx);

	buf_reset(&want);
	buf_add(&want, r2.data, r2.len);
	render_ok(&r2, want.data, want.len, body1);
	ctx = xasprintf("%s: back to the first body", what);
	same(ctx, r2.data, r2.len, r1.data, r1.len);
	free(ctx);

	buf_release(&r1);
	buf_release(&r2);
	buf_release(&o1);
	buf_release(&o3);
	buf_release(&want);
	buf_release(&blk);
}

struct input {
	const char	*what;
	const char	*s;
	size_t		 len;
};

static const struct input inputs[] = {
	{ "empty", S("") },
	{ "lf", S("import os\nx = 1\n") },
	{ "only a newline", S("\n") },
	{ "blank line at end", S("a\n\n") },
	{ "crlf", S("# a\r\nimport x\r\n") },
	{ "crlf without final newline", S("# a\r\nimport x") },
	{ "no final newline", S("import x") },
	{ "no final newline, two lines", S("a\nb") },
	{ "mixed endings", S("a\nb\r\nc\r") },
	{ "latin-1", S("# caf\xe9\n\xff\xfe = 1\n\xe9") },
	{ "nul", S("a\0b\n\0\n") },
	{ "nul without final newline", S("x\0") },
	{ "block in the middle", S("head\n" B_M "\nold\n" E_M "\ntail\n") },
	{ "block first", S(B_M "\n" E_M "\ntail") },
	{ "empty block at end", S("head\n" B_M "\n" E_M "\n") },
	{ "block at end without final newline",
	    S("head\n" B_M "\nold\n" E_M) },
	{ "crlf block with odd bytes", S("h\xe9\0\r\n" B_M "\r\nold\r\n" E_M
	    "\r\ntail\xff\r\nno final") },
	{ "markers with trailing blanks", S("head\n" B_M "  \r\nold\n" E_M
	    "\t \ntail\n") },
	{ "other owner", S("x\n" OB_M "\nfoo\n" OE_M "\ny\n") },
	{ "other owner after ours", S(B_M "\nold\n" E_M "\n" OB_M "\nfoo\n"
	    OE_M "\n") },
	{ "owner with a longer name", S(B_M "-x\nfoo\n" E_M "-x\n") },
	{ "indented marker is text", S("  " B_M "\n") },
};

START_TEST(test_block_inputs)
{
	block_invariants(inputs[_i].what, inputs[_i].s, inputs[_i].len);
}
END_TEST

static const char *const fixtures[] = {
	"debian-default.sitecustomize.py",
	"seed-broken.sitecustomize.py",
	"seed-working.sitecustomize.py",
};

/* Each fixture as it is, in CRLF, without its final newline, with a block. */
START_TEST(test_block_fixtures)
{
	char *path = tu_fixture(fixtures[_i]), *data, *ctx;
	const char *nl;
	struct buf v = ENVCTL_BUF_INIT;
	size_t len;

	data = tu_read(path, &len);
	ck_assert_msg(data != NULL, "cannot read %s", path);
	ck_assert_uint_gt(len, 0);
	block_invariants(fixtures[_i], data, len);

	add_eol(&v, data, len, "\r\n");
	ctx = xasprintf("%s in CRLF", fixtures[_i]);
	block_invariants(ctx, v.data, v.len);
	free(ctx);

	ck_assert_int_eq(data[len - 1], '\n');
	ctx = xasprintf("%s without its final newline", fixtures[_i]);
	block_invariants(ctx, data, len - 1);
	free(ctx);

	/* An old block after the first line, then the rest of the file. */
	nl = memchr(data, '\n', len);
	buf_reset(&v);
	buf_add(&v, data, (size_t)(nl + 1 - data));
	buf_addstr(&v, B_M "\nold = 1\n" E_M "\n");
	buf_add(&v, nl + 1, len - (size_t)(nl + 1 - data));
	ctx = xasprintf("%s with a block inside", fixtures[_i]);
	block_invariants(ctx, v.data, v.len);
	free(ctx);

	buf_release(&v);
	free(data);
	free(path);
}
END_TEST

/* Renders cur in mode "block" with body1; must give want. */
static void
block_gives(const char *cur, size_t len, const char *body, const char *want,
    size_t wantlen)
{
	struct buf b = ENVCTL_BUF_INIT;

	render_ok(&b, cur, len, body);
	same("render_block", b.data, b.len, want, wantlen);
	buf_release(&b);
}

#define BODY1_CRLF \
	"import os as _envctl_os\r\n" \
	"_envctl_os.environ.setdefault(\"NCCL_PROTO\", \"LL\")\r\n" \
	"del _envctl_os\r\n"

START_TEST(test_block_golden)
{
	block_gives(S(""), body1, S(B_M "\n" "import os as _envctl_os\n"
	    "_envctl_os.environ.setdefault(\"NCCL_PROTO\", \"LL\")\n"
	    "del _envctl_os\n" E_M "\n"));
	block_gives(S("a"), "x = 1", S("a\n\n" B_M "\nx = 1\n" E_M "\n"));
	block_gives(S("a\n"), "", S("a\n\n" B_M "\n" E_M "\n"));
	block_gives(S("a\r\nb"), body1, S("a\r\nb\r\n\r\n" B_M "\r\n"
	    BODY1_CRLF E_M "\r\n"));
	block_gives(S("head\n" B_M "\nold\n" E_M "\ntail\n"), "new\n",
	    S("head\n" B_M "\nnew\n" E_M "\ntail\n"));
	/* A CRLF body is written in the file's ending. */
	block_gives(S("head\n" B_M " \r\nold\n" E_M "\r\ntail"), "a\r\nb\n",
	    S("head\n" B_M "\na\nb\n" E_M "\ntail"));
	block_gives(S("x\n" OB_M "\nfoo\n" OE_M "\n"), "new\n",
	    S("x\n" OB_M "\nfoo\n" OE_M "\n\n" B_M "\nnew\n" E_M "\n"));
}
END_TEST

START_TEST(test_find_block)
{
	static const char cur[] = "a\n" B_M "\nx\n" E_M "\nb\n";
	struct err err = ENVCTL_ERR_INIT;
	size_t b = 99, e = 99;

	ck_assert_int_eq(render_find_block(S("a\nb\n"), "site.py", OWNER, &b,
	    &e, &err), 0);
	ck_assert_uint_eq(b, 99);
	ck_assert_int_eq(render_find_block(S(""), "site.py", OWNER, &b, &e,
	    &err), 0);
	ck_assert_int_eq(render_find_block(S(cur), "site.py", OWNER, &b, &e,
	    &err), 1);
	ck_assert_uint_eq(b, 2);
	ck_assert_uint_eq(e, sizeof(cur) - 1 - 2);
	ck_assert_int_eq(render_find_block(S(cur), "site.py", "other", &b,
	    &e, &err), 0);
	ck_assert_int_eq(err.code, 0);
}
END_TEST

struct marker_err {
	const char	*cur;
	size_t		 len;
	const char	*msg;	/* formatted */
};

#define DUP_B "duplicate '" B_M "' marker, first at line "
#define DUP_E "duplicate '" E_M "' marker, first at line "

static const struct marker_err marker_errs[] = {
	{ S("x\n" B_M "\n" B_M "\n" E_M "\n"),
	    "site.py:3:1: " DUP_B "2\n" },
	{ S(B_M "\na\n" E_M "\n" B_M "\nb\n" E_M "\n"),
	    "site.py:4:1: " DUP_B "1\n" },
	{ S("x\r\n" B_M "\r\n" B_M "\r\n"), "site.py:3:1: " DUP_B "2\n" },
	{ S(E_M "\nx\n" B_M "\n" E_M "\n"), "site.py:1:1: '" E_M "' marker "
	    "before its BEGIN marker at line 3\n" },
	{ S("a\n" B_M "\nb\n"), "site.py:2:1: '" B_M "' marker without a "
	    "matching END marker\n" },
	{ S("\xff\0\n\xe9\n" B_M " \t\r\n"), "site.py:3:1: '" B_M "' marker "
	    "without a matching END marker\n" },
	{ S("a\nb\n" E_M "\n"), "site.py:3:1: '" E_M "' marker without a "
	    "BEGIN marker\n" },
	{ S(B_M "\n" E_M "\n" E_M "\n"), "site.py:3:1: " DUP_E "2\n" },
	{ S(B_M "\n" OB_M "\n" OE_M "\n" E_M "\n"), "site.py:2:1: '" OB_M
	    "' marker inside the block of '" OWNER "' (begun at line 1): "
	    "blocks cannot nest or overlap\n" },
	{ S(OB_M "\n" B_M "\n" OE_M "\n" E_M "\n"), "site.py:3:1: '" OE_M
	    "' marker inside the block of '" OWNER "' (begun at line 2): "
	    "blocks cannot nest or overlap\n" },
	{ S(B_M "\n# BEGIN envctl managed block: a\x01\xff \n" E_M "\n"),
	    "site.py:2:1: '# BEGIN envctl managed block: a\\x01\\xff' marker "
	    "inside the block of '" OWNER "' (begun at line 1): blocks "
	    "cannot nest or overlap\n" },
};

START_TEST(test_marker_errors)
{
	const struct marker_err *t = &marker_errs[_i];
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	size_t bb = 7, ee = 7;

	ck_assert_int_eq(render_find_block(t->cur, t->len, "site.py", OWNER,
	    &bb, &ee, &err), ENVCTL_EPARSE);
	ck_assert_str_eq(err.path, "site.py");
	ck_assert_int_eq(err.col, 1);
	err_is(&err, ENVCTL_EPARSE, t->msg);
	ck_assert_uint_eq(bb, 7);

	buf_addstr(&b, "keep");
	ck_assert_int_eq(render_block(&b, t->cur, t->len, "site.py", OWNER,
	    S(body1), &err), ENVCTL_EPARSE);
	err_is(&err, ENVCTL_EPARSE, t->msg);
	ck_assert_str_eq(b.data, "keep");
	buf_release(&b);
}
END_TEST

START_TEST(test_block_invalid)
{
	static const char *const owners[] = {
		"a b", "x\ny", "coding:latin-1", "a#b", "caf\xc3\xa9", "a/b",
	};
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	size_t i, bb, ee;
	char *want;

	buf_addstr(&b, "keep");
	for (i = 0; i < sizeof(owners) / sizeof(owners[0]); i++) {
		ck_assert_int_eq(render_block(&b, S("x\n"), "site.py",
		    owners[i], S(body1), &err), ENVCTL_EINVALID);
		want = xasprintf("invalid block owner name '%s': expected "
		    "letters, digits and ._+@-\n",
		    i == 1 ? "x\\ny" : owners[i]);
		err_is(&err, ENVCTL_EINVALID, want);
		free(want);
	}
	ck_assert_int_eq(render_block(&b, S("x\n"), "site.py", "", S(body1),
	    &err), ENVCTL_EINVALID);
	err_is(&err, ENVCTL_EINVALID, "empty block owner name\n");
	ck_assert_int_eq(render_find_block(S("x\n"), "site.py", NULL, &bb,
	    &ee, &err), ENVCTL_EINVALID);
	err_is(&err, ENVCTL_EINVALID, "empty block owner name\n");
	ck_assert_int_eq(render_block(&b, S("x\n"), "site.py", OWNER,
	    S("a = 1\n" E_M "\n"), &err), ENVCTL_EINVALID);
	err_is(&err, ENVCTL_EINVALID, "block body line 2 is an envctl marker '"
	    E_M "'\n");
	ck_assert_int_eq(render_block(&b, S("x\n"), "site.py", OWNER,
	    S(OB_M "\r\n"), &err), ENVCTL_EINVALID);
	err_is(&err, ENVCTL_EINVALID, "block body line 1 is an envctl marker '"
	    OB_M "'\n");
	ck_assert_str_eq(b.data, "keep");
	buf_release(&b);
}
END_TEST

START_TEST(test_block_cap)
{
	struct buf b;
	struct err err = ENVCTL_ERR_INIT;

	buf_init(&b, 60);
	buf_addstr(&b, "keep");
	ck_assert_int_eq(render_block(&b, S("x\n"), "site.py", OWNER,
	    S(body1), &err), ENVCTL_ETOOBIG);
	err_is(&err, ENVCTL_ETOOBIG,
	    "rendered file exceeds the 60-byte limit\n");
	ck_assert_str_eq(b.data, "keep");
	ck_assert_int_eq(render_file(&b, S("{{ envctl_env }}\n"), "t.tmpl",
	    S(envcode), &err), ENVCTL_ETOOBIG);
	err_is(&err, ENVCTL_ETOOBIG,
	    "rendered file exceeds the 60-byte limit\n");
	ck_assert_str_eq(b.data, "keep");
	buf_release(&b);
}
END_TEST

/* ---- desired: a host's values, and real Ansible as the oracle ---- */

/* Appends s as a YAML double-quoted scalar. */
static void
yaml_quote(struct buf *b, const char *s)
{
	buf_addch(b, '"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			buf_addch(b, '\\');
		if (*s == '\n')
			buf_addstr(b, "\\n");
		else if (*s == '\r')
			buf_addstr(b, "\\r");
		else
			buf_addch(b, *s);
	}
	buf_addch(b, '"');
}

/*
 * The oracle's inventory: every kind of value, templates in values,
 * hostvars and groups.
 */
static const char oracle_inventory[] =
    "all:\n"
    "  vars:\n"
    "    x: \"1\"\n"
    "    n: 42\n"
    "    zero: 0\n"
    "    b: yes\n"
    "    nul: null\n"
    "    emp: \"\"\n"
    "    fl: 1.50\n"
    "    sp: \"  pad  \"\n"
    "    hexs: \"0x1F\"\n"
    "    lst: [a, \"b\", 3, null]\n"
    "    mp: {k: v, \"n\": 5, inner: {z: deep}, 1: one}\n"
    "    nested: \"{{ x }}-n\"\n"
    "    undef_nested: \"{{ nope }}\"\n"
    "    unsafe: !unsafe \"{{ x }}\"\n"
    "    selfref: \"{{ selfref }}\"\n"
    "    trimmed: \"{{ '/opt/cuda-13.0' | trim }}\"\n"
    "    truestr: \"True\"\n"
    "    boolish: \"{{ truestr }}\"\n"
    "    listy: \"{{ '[1, 2]' }}\"\n"
    "    nzero: \"{{ zero }}\"\n"
    "    nnull: \"{{ nul }}\"\n"
    "    nnl: \"{{ zero }}\\n\"\n"
    "    mnested: {a: \"{{ x }}\", u: \"{{ nope }}\"}\n"
    "    lst2: [\"{{ x }}\", \"{{ b }}\", \"[3]\"]\n"
    "    dtpl: \"{{ x }}{'a': 1}\"\n"
    "    crlf: \"a\\r\\nb{{ x }}\\rc\"\n"
    "    h2ref: \"{{ hostvars['h2'].y }}\"\n"
    "    bs: \"{{ 'a\\\\nb' }}\"\n"
    "  hosts:\n"
    "    h1.example.com:\n"
    "  children:\n"
    "    gpu:\n"
    "      hosts:\n"
    "        h2:\n"
    "          y: \"{{ inventory_hostname }}-y\"\n"
    "          yx: \"{{ x | default('nox') }}\"\n"
    "          yu: \"{{ nope }}\"\n"
    "          x: \"2\"\n"
    "      children:\n"
    "        sub:\n"
    "          hosts:\n"
    "            h4:\n";

/* envctl's verdict on an expression Ansible evaluates. */
enum oracle_want {
	ORACLE_SAME,		/* both give the same bytes, or both fail */
	ORACLE_REFUSED,		/* envctl refuses what Ansible evaluates */
};

static const struct oracle_case {
	const char	*tpl;
	enum oracle_want want;
} oracle_cases[] = {
	{ "{{ x }}", ORACLE_SAME },
	{ "{{ nul }}|{{ nul | default('d') }}|{{ nul | default('d', true) }}",
	    ORACLE_SAME },
	{ "{{ emp | default('d', true) }}|{{ emp | d('d') }}", ORACLE_SAME },
	{ "{{ b }} {{ n }} {{ fl }} {{ zero }}", ORACLE_SAME },
	{ "{{ lst[0] }}{{ lst[-1] }}{{ lst.1 }}", ORACLE_SAME },
	{ "{{ lst[9] | default('oob') }}", ORACLE_SAME },
	{ "{{ mp.k }}{{ mp['n'] }}{{ mp.inner.z }}{{ mp[1] }}", ORACLE_SAME },
	{ "{{ mp['1'] | default('s') }}{{ mp.nokey | default('nk') }}",
	    ORACLE_SAME },
	{ "{{ mp.nokey.deeper | default('d') }}", ORACLE_SAME },
	{ "{{ nope.k | default('d') }}{{ nope['k'] | default('d') }}",
	    ORACLE_SAME },
	{ "{{ mp.keys }}", ORACLE_REFUSED },
	{ "{{ x.upper }}", ORACLE_REFUSED },
	{ "{{ nested }}", ORACLE_SAME },
	{ "{{ undef_nested | default('und') }}", ORACLE_SAME },
	{ "{{ undef_nested }}", ORACLE_SAME },
	{ "{{ unsafe }}", ORACLE_SAME },
	{ "{{ selfref | default('s') }}", ORACLE_SAME },
	{ "{{ trimmed | default('/usr/local/cuda-12.4') }}", ORACLE_SAME },
	{ "{{ boolish | int }}|{{ truestr | int }}", ORACLE_SAME },
	{ "{{ listy | first }}|{{ listy[1] }}", ORACLE_SAME },
	{ "{{ nzero | default('z', true) }}|{{ zero | default('z', true) }}",
	    ORACLE_SAME },
	{ "{{ nnull | default('z', true) }}|{{ nnull ~ 'a' }}", ORACLE_SAME },
	{ "{{ nzero | first }}", ORACLE_SAME },
	{ "{{ nnl | first }}", ORACLE_SAME },
	{ "{{ mnested.a }}", ORACLE_SAME },
	{ "{{ mnested | default('md') }}", ORACLE_SAME },
	{ "{{ lst2[0] }}|{{ lst2[1] | int }}|{{ lst2[2] | first }}",
	    ORACLE_SAME },
	{ "{{ dtpl }}", ORACLE_SAME },
	{ "{{ crlf }}", ORACLE_SAME },
	{ "{{ bs }}|{{ 'c\\d' }}", ORACLE_SAME },
	{ "{{ hostvars['h2'].y }}|{{ hostvars.h2['y'] }}|{{ h2ref }}",
	    ORACLE_SAME },
	{ "{{ hostvars['h2'].yx }}|{{ hostvars['h2'].x }}", ORACLE_SAME },
	{ "{{ hostvars['h2'].yu }}", ORACLE_REFUSED },
	{ "{{ hostvars['nohost'] | default('nh') }}", ORACLE_SAME },
	{ "{{ hostvars['h2'].nov | default('nv') }}", ORACLE_SAME },
	{ "{{ hostvars['h4'].group_names | join(',') }}", ORACLE_SAME },
	{ "{{ hostvars['h2'].inventory_hostname_short }}", ORACLE_SAME },
	{ "{{ groups['gpu'] | join(',') }}|{{ groups.sub | first }}",
	    ORACLE_SAME },
	{ "{{ groups.all | join(',') }}|{{ groups.gpu | last }}",
	    ORACLE_SAME },
	{ "{{ groups['nog'] | default('ng') }}", ORACLE_SAME },
	{ "{{ group_names | join(',') }}", ORACLE_SAME },
	{ "{{ inventory_hostname }} {{ inventory_hostname_short }}",
	    ORACLE_SAME },
	{ "{{ inventory_file }} {{ inventory_dir }}", ORACLE_SAME },
	{ "{{ lst }}", ORACLE_REFUSED },
	{ "{{ 'a' ~ lst }}|{{ lst | string }}|{{ mp | string }}",
	    ORACLE_SAME },
	{ "{{ nul | lower }}|{{ nul | string }}|{{ nul ~ 'a' }}",
	    ORACLE_SAME },
	{ "{{ n | lower }}|{{ b | upper }}|{{ lst | upper }}", ORACLE_SAME },
	{ "[{{ sp | trim }}]|{{ sp | trim('p ') }}|{{ ' xx ' | trim(' x') }}",
	    ORACLE_SAME },
	{ "{{ x | replace('1', 'one') }}|{{ 'aaaa' | replace('a', 'b', 2) }}",
	    ORACLE_SAME },
	{ "{{ n | replace('4', 'x') }}|{{ 'ab' | replace('', '-') }}",
	    ORACLE_SAME },
	{ "{{ '42' | int }}|{{ ' 42 ' | int }}|{{ '1_000' | int }}",
	    ORACLE_SAME },
	{ "{{ '1.9' | int }}|{{ '-1.9' | int }}|{{ '1e3' | int }}",
	    ORACLE_SAME },
	{ "{{ 'abc' | int }}|{{ 'abc' | int(7) }}|{{ 'abc' | int('zz') }}",
	    ORACLE_SAME },
	{ "{{ hexs | int }}|{{ hexs | int(base=16) }}|{{ '1F' | int(0, 16) }}",
	    ORACLE_SAME },
	{ "{{ '0x1F' | int(0, 0) }}|{{ '010' | int(0, 0) }}|"
	    "{{ '0b101' | int(0, 2) }}", ORACLE_SAME },
	{ "{{ '010' | int(7, 0) }}|{{ '0_0' | int(7, 0) }}|"
	    "{{ '0x_f' | int(7, 16) }}", ORACLE_SAME },
	{ "{{ fl | int }}|{{ b | int }}|{{ nul | int }}|{{ lst | int }}",
	    ORACLE_SAME },
	{ "{{ '99999999999999999999999' | int }}|{{ '1e20' | int }}",
	    ORACLE_SAME },
	{ "{{ 'nan' | int }}|{{ '  ' | int }}|{{ '+5' | int }}|"
	    "{{ '1__0' | int }}", ORACLE_SAME },
	{ "{{ '.5' | int }}|{{ '5.' | int }}|{{ '-0' | int }}|"
	    "{{ '1_0.5' | int }}|{{ '1e' | int }}", ORACLE_SAME },
	{ "{{ 'inf' | int }}", ORACLE_SAME },
	{ "{{ x | int(default=5) }}|{{ 'q' | int(default=5) }}",
	    ORACLE_SAME },
	{ "{{ lst | join(',') }}|{{ lst | join }}|{{ 'abc' | join('-') }}",
	    ORACLE_SAME },
	{ "{{ mp | join(',') }}|{{ [1, 2] | join(d='+') }}", ORACLE_REFUSED },
	{ "{{ mp | join(',') }}|{{ lst | join(d='+') }}", ORACLE_SAME },
	{ "{{ lst | first }}{{ lst | last }}{{ 'abc' | first }}", ORACLE_SAME },
	{ "{{ mp | first }}{{ mp | last }}", ORACLE_SAME },
	{ "{{ emp | first | default('e2') }}", ORACLE_SAME },
	{ "{{ n | first }}", ORACLE_SAME },
	{ "{{ nope | lower | default('d') }}", ORACLE_SAME },
	{ "{{ (nope ~ 'a') | default('d') }}", ORACLE_SAME },
	{ "{{ nope | first | default('d') }}", ORACLE_SAME },
	{ "{{ x ~ n ~ b ~ fl }}|{{ 'a' ~ 'b' | upper }}", ORACLE_SAME },
	{ "{{ x | default('a') ~ 'b' }}|{{ (lst2) [0] }}", ORACLE_SAME },
	{ "{{ x[0] }}{{ 'h\xc3\xa9llo'[1] }}{{ x.nosuch | default('ns') }}",
	    ORACLE_SAME },
	{ "{{ none }}|{{ None | default('x') }}|{{ true }}|{{ True ~ none }}",
	    ORACLE_SAME },
	{ "{{ 'a\\nb' }}|{{ 'a\\\\b' }}|{{ \"d'q\" }}|{{ 1_0 }}|{{ -1 }}",
	    ORACLE_SAME },
	{ "{{ 0 | default('z', true) }}|{{ '0' | default('z', true) }}",
	    ORACLE_SAME },
	{ "{{ x | d }}|{{ nope | default }}|"
	    "{{ nope | default('a', boolean=true) }}", ORACLE_SAME },
	{ "{{ x | upper(1) }}", ORACLE_SAME },
	{ "{{ 007 }}", ORACLE_SAME },
	{ "{{ x | regex_replace('1', '2') }}", ORACLE_REFUSED },
	{ "{{ x if x }}", ORACLE_REFUSED },
	{ "{{ x ~ }}", ORACLE_SAME },
	{ "{{ undefined_var }}", ORACLE_SAME },
};

/* Runs ansible-playbook on every case for every host: msgs[host][i]. */
static int
oracle_run(const char *dir, const char *inv, json_t **results)
{
	struct buf pb = ENVCTL_BUF_INIT;
	struct tu_run r;
	char *pbpath, *home = xasprintf("HOME=%s", dir), *line, *save = NULL;
	char *tmp = xasprintf("ANSIBLE_LOCAL_TEMP=%s/tmp", dir);
	char *rtmp = xasprintf("ANSIBLE_REMOTE_TEMP=%s/tmp", dir);
	char *argv[] = { "/usr/bin/ansible-playbook", "-i", (char *)inv,
	    "-c", "local", NULL, NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", home, tmp, rtmp,
	    "ANSIBLE_STDOUT_CALLBACK=oneline", "ANSIBLE_LOCALHOST_WARNING=0",
	    "ANSIBLE_NOCOLOR=1", "ANSIBLE_FORKS=1",
	    NULL };
	size_t i;
	json_t *j;

	buf_addstr(&pb, "- hosts: all\n  gather_facts: false\n  tasks:\n");
	for (i = 0; i < sizeof(oracle_cases) / sizeof(oracle_cases[0]); i++) {
		char *w = xasprintf("<%s>", oracle_cases[i].tpl);

		buf_addstr(&pb, "  - debug:\n      msg: ");
		yaml_quote(&pb, w);
		buf_addstr(&pb, "\n    ignore_errors: true\n");
		free(w);
	}
	pbpath = tu_writes(dir, "oracle-play.yml", pb.data);
	argv[5] = pbpath;
	tu_run(&r, argv, envp, NULL, 0);
	ck_assert_msg(r.status == 0, "ansible-playbook exited %d: %s%s",
	    r.status, r.out, r.errout);
	*results = json_object();
	for (line = strtok_r(r.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *bar = strstr(line, " | "), *arrow = strstr(line, " => ");
		json_t *list;

		if (bar == NULL || arrow == NULL)
			continue;
		*bar = '\0';
		if ((j = json_loads(arrow + 4, 0, NULL)) == NULL)
			continue;
		json_object_set_new(j, "envctl_ok",
		    json_boolean(strncmp(bar + 3, "SUCCESS", 7) == 0));
		if ((list = json_object_get(*results, line)) == NULL) {
			list = json_array();
			json_object_set_new(*results, line, list);
		}
		json_array_append_new(list, j);
	}
	tu_run_free(&r);
	buf_release(&pb);
	free(pbpath);
	free(home);
	free(tmp);
	free(rtmp);
	return 0;
}

START_TEST(test_desired_oracle)
{
	const size_t ncases = sizeof(oracle_cases) / sizeof(oracle_cases[0]);
	struct buf pbtext = ENVCTL_BUF_INIT, errs = ENVCTL_BUF_INIT;
	struct inventory *inv = NULL;
	struct playbook *pb = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct desired d;
	char *dir, *invpath, *pbpath;
	const char *hosts[] = { "h1.example.com", "h2", "h4" };
	json_t *results = NULL, *list, *res;
	size_t h, i, compared = 0;

	if (access("/usr/bin/ansible-playbook", X_OK) != 0) {
		tu_skip("check_render oracle", "no ansible-playbook to "
		    "compare with");
		return;
	}
	dir = tu_mkdtemp();
	invpath = tu_writes(dir, "inv.yml", oracle_inventory);
	buf_addstr(&pbtext, "name: oracle\nmode: block\npolicy: override\n"
	    "env:\n");
	for (i = 0; i < ncases; i++) {
		char *w = xasprintf("<%s>", oracle_cases[i].tpl);

		buf_addf(&pbtext, "  V%zu: ", i);
		yaml_quote(&pbtext, w);
		buf_addch(&pbtext, '\n');
		free(w);
	}
	pbpath = tu_writes(dir, "oracle.yaml", pbtext.data);
	ck_assert_int_eq(inventory_load(&inv, invpath, &err), 0);
	ck_assert_int_eq(playbook_load(&pb, pbpath, &err), 0);
	oracle_run(dir, invpath, &results);
	for (h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++) {
		const struct host *host = inventory_find(inv, hosts[h]);

		ck_assert_ptr_nonnull(host);
		list = json_object_get(results, hosts[h]);
		ck_assert_msg(list != NULL && json_array_size(list) == ncases,
		    "ansible gave %zu results for %s, want %zu",
		    list != NULL ? json_array_size(list) : 0, hosts[h],
		    ncases);
		buf_reset(&errs);
		desired_values(&d, pb, host, &err);
		err_format(&err, &errs);
		err_release(&err);
		for (i = 0; i < ncases; i++) {
			const char *got = d.vars[i].value;
			const char *msg;
			int ok;

			res = json_array_get(list, i);
			ok = json_is_true(json_object_get(res, "envctl_ok"));
			msg = json_string_value(json_object_get(res, "msg"));
			if (oracle_cases[i].want == ORACLE_REFUSED) {
				ck_assert_msg(ok, "%s: %s: Ansible failed, "
				    "not a refusal case", hosts[h],
				    oracle_cases[i].tpl);
				ck_assert_msg(got == NULL, "%s: %s: envctl "
				    "gave '%s' where it must refuse "
				    "(Ansible: '%s')", hosts[h],
				    oracle_cases[i].tpl, got, msg);
				continue;
			}
			if (!ok) {
				ck_assert_msg(got == NULL, "%s: %s: envctl "
				    "gave '%s' where Ansible fails: %s",
				    hosts[h], oracle_cases[i].tpl, got, msg);
				continue;
			}
			ck_assert_msg(got != NULL, "%s: %s: envctl failed "
			    "where Ansible gives '%s'; envctl's errors:\n%s",
			    hosts[h], oracle_cases[i].tpl, msg, errs.data);
			ck_assert_msg(msg != NULL && strcmp(got, msg) == 0,
			    "%s: %s: envctl '%s', Ansible '%s'", hosts[h],
			    oracle_cases[i].tpl, got, msg);
			compared++;
		}
		desired_release(&d);
	}
	ck_assert_uint_gt(compared, 150);
	json_decref(results);
	playbook_free(pb);
	inventory_free(inv);
	tu_rmtree(dir);
	buf_release(&pbtext);
	buf_release(&errs);
	free(invpath);
	free(pbpath);
	free(dir);
}
END_TEST

/* A host's values and errors from an inventory and a playbook text. */
static int
desired_of(const char *inv_text, const char *pb_text, const char *host,
    struct desired *d, struct buf *errs)
{
	struct inventory *inv = NULL;
	struct playbook *pb = NULL;
	struct err err = ENVCTL_ERR_INIT;
	char *dir = tu_mkdtemp(), *pbpath, *invpath;
	int r;

	invpath = tu_writes(dir, "hosts.yaml", inv_text);
	pbpath = tu_writes(dir, "pb.yaml", pb_text);
	ck_assert_int_eq(inventory_load(&inv, invpath, &err), 0);
	ck_assert_msg(playbook_load(&pb, pbpath, &err) == 0, "%s", err.msg);
	r = desired_values(d, pb, inventory_find(inv, host), &err);
	err_format(&err, errs);
	/* Paths in messages: relative to the test's directory. */
	for (;;) {
		char *at = strstr(errs->data, dir);
		size_t n = strlen(dir) + 1;

		if (at == NULL)
			break;
		memmove(at, at + n, strlen(at + n) + 1);
		errs->len -= n;
	}
	err_release(&err);
	playbook_free(pb);
	inventory_free(inv);
	tu_rmtree(dir);
	free(dir);
	free(pbpath);
	free(invpath);
	return r;
}

static const char desired_inv[] =
    "all:\n"
    "  vars:\n"
    "    cuda_home: \"{{ '/opt/cuda-13.0' | trim }}\"\n"
    "    nccl_algo: \"{{ x | regex_replace('a', 'b') }}\"\n"
    "    lst: [a, b]\n"
    "    secret: !vault |\n"
    "      $ANSIBLE_VAULT;1.1;AES256\n"
    "      3132\n"
    "    nested_undef: \"{{ nope }}\"\n"
    "  hosts:\n"
    "    gpu-03:\n"
    "      from_default: \"{{ dflt }}-x\"\n"
    "    gpu-04:\n";

START_TEST(test_desired_values)
{
	struct desired d;
	struct buf errs = ENVCTL_BUF_INIT;

	ck_assert_int_eq(desired_of(desired_inv,
	    "name: t\nmode: block\n"
	    "defaults:\n"
	    "  dflt: \"{{ inventory_hostname }}\"\n"
	    "  unused: \"{{ broken | nosuchfilter }}\"\n"
	    "env:\n"
	    "  CUDA_HOME: \"{{ cuda_home | default('/usr/local/cuda-12.4') "
	    "}}\"\n"
	    "  A: \"{{ from_default }}\"\n"
	    "  B: \"{{ nested_undef | default('d') }}\"\n"
	    "  C: \"{{ hostvars['gpu-04'].inventory_hostname }}\"\n"
	    "  D: \"{{ lst | join(',') }}\"\n",
	    "gpu-03", &d, &errs), 0);
	ck_assert_str_eq(errs.data, "");
	ck_assert_str_eq(d.vars[0].value, "/opt/cuda-13.0");
	/* Defaults are templates; a broken one nobody uses is no error. */
	ck_assert_str_eq(d.vars[1].value, "gpu-03-x");
	ck_assert_str_eq(d.vars[2].value, "d");
	ck_assert_str_eq(d.vars[3].value, "gpu-04");
	ck_assert_str_eq(d.vars[4].value, "a,b");
	desired_release(&d);
	buf_release(&errs);
}
END_TEST

START_TEST(test_desired_errors)
{
	struct desired d;
	struct buf errs = ENVCTL_BUF_INIT;

	ck_assert_int_eq(desired_of(desired_inv,
	    "name: t\nmode: block\n"
	    "env:\n"
	    "  NCCL_ALGO: \"{{ nccl_algo | default('Ring') }}\"\n"
	    "  L: \"{{ lst }}\"\n"
	    "  S: \"{{ secret | default('x') }}\"\n"
	    "  U: \"{{ nested_undef }}\"\n"
	    "  H: \"{{ hostvars['gpu-03'].from_default }}\"\n"
	    "  N: \"{{ 'a' ~ nope }}\"\n",
	    "gpu-03", &d, &errs), ENVCTL_EUNSUPPORTED);
	ck_assert_str_eq(errs.data,
	    "gpu-03: hosts.yaml:4:17: variable 'nccl_algo': unsupported "
	    "template syntax '{{ x | regex_replace('a', 'b') }}' (filter "
	    "'regex_replace') (used at pb.yaml:4 in '{{ nccl_algo | "
	    "default('Ring') }}')\n"
	    "gpu-03: hosts.yaml:5:10: variable 'lst' is a list; only "
	    "strings, numbers and booleans can be used (used at pb.yaml:5 in "
	    "'{{ lst }}')\n"
	    "gpu-03: hosts.yaml:6:13: variable 'secret' is vault-encrypted, "
	    "which envctl cannot decrypt (used at pb.yaml:6 in '{{ secret | "
	    "default('x') }}')\n"
	    "gpu-03: hosts.yaml:9:20: variable 'nested_undef': undefined "
	    "variable 'nope' (used at pb.yaml:7 in '{{ nested_undef }}')\n"
	    "gpu-03: hosts.yaml:12:22: variable "
	    "'hostvars['gpu-03']['from_default']': undefined variable 'dflt'; "
	    "through hostvars Ansible would keep the template's text "
	    "unexpanded (used at pb.yaml:8 in '{{ "
	    "hostvars['gpu-03'].from_default }}')\n"
	    "gpu-03: pb.yaml:9:7: undefined variable 'nope'\n");
	ck_assert_ptr_null(d.vars[0].value);
	desired_release(&d);
	buf_release(&errs);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("render");
	TCase *env = tcase_create("env");
	TCase *file = tcase_create("file");
	TCase *block = tcase_create("block");
	TCase *des = tcase_create("desired");
	SRunner *sr;
	int failed;

	tcase_add_test(env, test_env_setdefault);
	tcase_add_test(env, test_env_override);
	tcase_add_test(env, test_env_empty);
	tcase_add_test(env, test_env_deterministic);
	tcase_add_loop_test(env, test_env_errors, 0,
	    sizeof(env_errs) / sizeof(env_errs[0]));
	tcase_add_test(env, test_env_policy_and_cap);
	tcase_add_test(env, test_env_python);
	tcase_add_test(env, test_modes_python);
	suite_add_tcase(s, env);

	tcase_add_test(file, test_file_golden);
	tcase_add_test(file, test_file_indent);
	tcase_add_test(file, test_file_crlf);
	tcase_add_test(file, test_file_bytes_kept);
	tcase_add_loop_test(file, test_file_errors, 0,
	    sizeof(file_errs) / sizeof(file_errs[0]));
	suite_add_tcase(s, file);

	tcase_add_loop_test(block, test_block_inputs, 0,
	    sizeof(inputs) / sizeof(inputs[0]));
	tcase_add_loop_test(block, test_block_fixtures, 0,
	    sizeof(fixtures) / sizeof(fixtures[0]));
	tcase_add_test(block, test_block_golden);
	tcase_add_test(block, test_find_block);
	tcase_add_loop_test(block, test_marker_errors, 0,
	    sizeof(marker_errs) / sizeof(marker_errs[0]));
	tcase_add_test(block, test_block_invalid);
	tcase_add_test(block, test_block_cap);
	suite_add_tcase(s, block);

	tcase_add_test(des, test_desired_values);
	tcase_add_test(des, test_desired_errors);
	tcase_add_test(des, test_desired_oracle);
	tcase_set_timeout(des, 120);
	suite_add_tcase(s, des);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
