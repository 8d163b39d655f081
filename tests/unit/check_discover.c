/*
 * check_discover.c - facts --discover: the kind rules (agent/pykind.c,
 * compiled in below as check_policy does with policy.c), the controller's
 * strict reply parser and its text and JSON (controller/discover.c), and
 * the real agent's "discover" op over venvs made by python3 -m venv in a
 * temp dir given as "roots".  Temporary files only.
 */
#define _GNU_SOURCE	/* unshare(2) */
#include <check.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/pykind.c"	/* see above */
#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/discover.h"
#include "agenttest.h"
#include "testutil.h"

/* ---- the kind rules ---- */

START_TEST(test_python_name)
{
	/* CPython's ABI flags: t, d, m, u, each once, in that order. */
	static const char *const yes[] = { "python", "python3", "python3.11",
		"python3.13t", "python2.7", "python3d", "python3.13td",
		"python3.7m", "python3.7dm", "python3.2dmu", "python3t", NULL };
	static const char *const no[] = { "python3-config", "python3.11-config",
		"python3.12-gdb.py", "pythonw", "python3.", "ipython3", "py",
		"python3.x", "", "python3.11x", "python3.13dt", "python3.7mm",
		"pythont", "python3.12-dbg", NULL };
	size_t i;

	for (i = 0; yes[i] != NULL; i++)
		ck_assert_msg(pykind_python_name(yes[i]), "%s", yes[i]);
	for (i = 0; no[i] != NULL; i++)
		ck_assert_msg(!pykind_python_name(no[i]), "%s", no[i]);
}
END_TEST

/* dir/rel as an executable file (parents made). */
static char *
mkexe(const char *dir, const char *rel)
{
	char *p = xasprintf("%s/%s", dir, rel), *s;

	for (s = strchr(p + strlen(dir) + 1, '/'); s != NULL;
	    s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	free(tu_writes(NULL, p, "#!/bin/sh\n"));
	ck_assert_int_eq(chmod(p, 0755), 0);
	return p;
}

static void
mkd(const char *dir, const char *rel)
{
	char *p = xasprintf("%s/%s", dir, rel);

	ck_assert_int_eq(mkdir(p, 0755), 0);
	free(p);
}

static void
assert_kind(const char *path, const char *real, const char *want)
{
	const char *got = pykind_classify(path, real);

	ck_assert_msg(strcmp(got, want) == 0, "%s: %s, want %s", path, got,
	    want);
}

START_TEST(test_kinds)
{
	char *t = tu_mkdtemp(), *p, *venv;

	/* A venv: pyvenv.cfg in the prefix (or beside the executable). */
	p = mkexe(t, "v/bin/python3");
	free(tu_writes(t, "v/pyvenv.cfg", "home = /usr/bin\n"
	    "include-system-site-packages = false\n"));
	assert_kind(p, "/usr/bin/python3.11", "venv");
	venv = pykind_venv_dir(p);
	ck_assert_ptr_nonnull(venv);
	ck_assert_str_eq(strrchr(venv, '/'), "/v");
	free(venv);
	free(p);
	p = mkexe(t, "w/python3");
	free(tu_writes(t, "w/pyvenv.cfg", "home = /usr/bin\n"));
	assert_kind(p, NULL, "venv");
	free(p);
	/* uv writes its own key; "uv-python" or "uvx" are no such key. */
	p = mkexe(t, "u/bin/python3");
	free(tu_writes(t, "u/pyvenv.cfg", "home = /x/bin\nimplementation = "
	    "CPython\n  uv = 0.4.18\nversion_info = 3.12.6\n"));
	assert_kind(p, NULL, "uv-venv");
	free(p);
	p = mkexe(t, "u2/bin/python3");
	free(tu_writes(t, "u2/pyvenv.cfg", "uv-python = x\nuvx=1\n"));
	assert_kind(p, NULL, "venv");
	free(p);
	/* conda: conda-meta/ in the prefix, wherever it is. */
	p = mkexe(t, "c/bin/python3");
	mkd(t, "c/conda-meta");
	assert_kind(p, NULL, "conda");
	free(p);
	/* A venv made from a conda interpreter is a venv. */
	p = mkexe(t, "c/envs/x/bin/python3");
	mkd(t, "c/envs/x/conda-meta");
	assert_kind(p, NULL, "conda");
	free(p);
	/* pyenv and uv by their directories, on the path or the real one. */
	assert_kind("/home/a/.pyenv/versions/3.11.7/bin/python3",
	    "/home/a/.pyenv/versions/3.11.7/bin/python3.11", "pyenv");
	assert_kind("/usr/local/bin/python3",
	    "/home/a/.pyenv/versions/3.11.7/bin/python3.11", "pyenv");
	assert_kind("/home/a/.local/share/uv/python/cpython-3.12.6-linux-"
	    "x86_64-gnu/bin/python3.12", NULL, "uv");
	/* system: in /usr/bin, /usr/local/bin or /bin, and so is its file. */
	assert_kind("/usr/bin/python3", "/usr/bin/python3.11", "system");
	assert_kind("/bin/python3", "/usr/bin/python3.11", "system");
	assert_kind("/usr/local/bin/python3", "/opt/x/bin/python3.11",
	    "other");
	p = mkexe(t, "o/bin/python3");
	assert_kind(p, NULL, "other");
	free(p);
	tu_rmtree(t);
	free(t);
}
END_TEST

/* ---- the controller's parser ---- */

static const char good_reply[] =
    "{\"id\": 2, \"ok\": true, \"privileged\": false, \"entries\": 12,"
    " \"truncated\": null, \"candidates\": ["
    "{\"path\": \"/usr/bin/python3\", \"real\": \"/usr/bin/python3.11\","
    " \"kind\": \"system\", \"sources\": [\"system\", \"process\"],"
    " \"probed\": true, \"executable\": \"/usr/bin/python3\","
    " \"version\": \"3.11.2\","
    " \"sitecustomize\": \"/usr/lib/python3.11/sitecustomize.py\","
    " \"sitecustomize_real\": \"/etc/python3.11/sitecustomize.py\","
    " \"would_create\": null, \"startup_error\": null, \"failed\": null,"
    " \"error\": null},"
    "{\"path\": \"/opt/p/bin/python3\", \"real\": \"/opt/p/bin/python3.12\","
    " \"kind\": \"conda\", \"sources\": [\"opt\", \"conda\"],"
    " \"probed\": true, \"executable\": \"/opt/p/bin/python3\","
    " \"version\": \"3.12.1\", \"sitecustomize\": null,"
    " \"sitecustomize_real\": null,"
    " \"would_create\": \"/opt/p/lib/python3.12/site-packages/"
    "sitecustomize.py\", \"startup_error\": null, \"failed\": null,"
    " \"error\": null},"
    "{\"path\": \"/home/a/v/bin/python3\", \"real\": \"/usr/bin/python3.11\","
    " \"kind\": \"venv\", \"sources\": [\"venv\"], \"probed\": false,"
    " \"executable\": null, \"version\": null, \"sitecustomize\": null,"
    " \"sitecustomize_real\": null, \"would_create\": null,"
    " \"startup_error\": null, \"failed\": null,"
    " \"error\": \"not probed: interpreter '/home/a/v/bin/python3': "
    "'/home/a' is not owned by root\"}]}";

static json_t *
load(const char *s)
{
	json_error_t je;
	json_t *v = json_loads(s, JSON_ALLOW_NUL, &je);

	ck_assert_msg(v != NULL, "%s", je.text);
	return v;
}

START_TEST(test_parse_good)
{
	struct discover_host dh;
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	json_t *rep = load(good_reply), *j;

	memset(&dh, 0, sizeof(dh));
	dh.name = "gpu-01";
	ck_assert_int_eq(discover_parse(&dh, rep, &err), 0);
	ck_assert_uint_eq(dh.ninterps, 3);
	ck_assert_str_eq(dh.interps[0].site_real,
	    "/etc/python3.11/sitecustomize.py");
	ck_assert_uint_eq(dh.interps[0].nsources, 2);
	ck_assert_str_eq(dh.interps[1].kind, "conda");
	ck_assert_int_eq(dh.interps[2].probed, 0);
	dh.outcome = ENVCTL_OUT_OK;
	discover_text(&b, &dh);
	ck_assert_msg(strstr(b.data, "gpu-01: 3 interpreters\n") != NULL, "%s",
	    b.data);
	ck_assert_msg(strstr(b.data, "    /usr/bin/python3       3.11.2   "
	    "system  /etc/python3.11/sitecustomize.py  ") != NULL, "%s",
	    b.data);
	ck_assert_ptr_nonnull(strstr(b.data, "    /home/a/v/bin/python3  -"
	    "        venv    -  "));
	ck_assert_ptr_nonnull(strstr(b.data, "(none: would be /opt/p/lib/"
	    "python3.12/site-packages/sitecustomize.py)"));
	ck_assert_ptr_nonnull(strstr(b.data, "system,process\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "    /home/a/v/bin/python3: "
	    "not probed: interpreter"));
	/* The hint lists what ran, as YAML one can paste. */
	ck_assert_msg(strstr(b.data, "      interpreters: [/usr/bin/python3, "
	    "/opt/p/bin/python3]\n") != NULL, "%s", b.data);
	j = discover_json(&dh);
	ck_assert_str_eq(jstr(j, "outcome"), "ok");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(j, "interpreters"), 0),
	    "sitecustomize"), "real")), "/etc/python3.11/sitecustomize.py");
	ck_assert(json_is_null(json_object_get(json_array_get(
	    json_object_get(j, "interpreters"), 1), "sitecustomize")));
	json_decref(j);
	buf_release(&b);
	discover_host_release(&dh);
	json_decref(rep);
}
END_TEST

/* Each case breaks one member of good_reply; the message names it. */
static const struct {
	const char	*from, *to, *msg;
} broken[] = {
	{ "\"entries\": 12", "\"entries\": -1",
	    "agent reply: 'entries' is missing or not a count" },
	{ "\"privileged\": false", "\"privileged\": 0",
	    "agent reply: 'privileged' is missing or not a boolean" },
	{ "\"truncated\": null", "\"truncated\": 7",
	    "agent reply: 'truncated' is not a string" },
	{ "\"kind\": \"conda\"", "\"kind\": \"anaconda\"",
	    "agent reply: 'candidates[1].kind' is not a kind envctl knows" },
	{ "[\"opt\", \"conda\"]", "[\"opt\", \"cron\"]",
	    "agent reply: 'candidates[1].sources' holds a source envctl does "
	    "not know" },
	{ "[\"venv\"]", "[]", "agent reply: 'candidates[2].sources' is not "
	    "an array of 1 to 16 sources" },
	{ "\"path\": \"/usr/bin/python3\"", "\"path\": \"python3\"",
	    "agent reply: 'candidates[0].path' is not an absolute path" },
	{ "\"path\": \"/usr/bin/python3\"", "\"path\": \"/usr/bin/py\\nx\"",
	    "agent reply: 'candidates[0].path' holds a control character" },
	{ "\"path\": \"/usr/bin/python3\"", "\"path\": \"/usr/\\u0000x\"",
	    "agent reply: 'candidates[0].path' holds a NUL byte or is too "
	    "long" },
	{ ", \"version\": \"3.12.1\"", "",
	    "agent reply: 'candidates[1].version' is missing" },
	{ "\"would_create\": \"/opt/p/lib", "\"would_create\": \"opt/p/lib",
	    "agent reply: 'candidates[1].would_create' is not an absolute "
	    "path" },
	{ "\"probed\": false", "\"probed\": null",
	    "agent reply: 'candidates[2].probed' is missing or not a boolean" },
	{ "\"error\": \"not probed: interpreter '/home/a/v/bin/python3': "
	    "'/home/a' is not owned by root\"", "\"error\": null",
	    "agent reply: 'candidates[2].error' is null for an interpreter "
	    "not probed" },
	{ "\"version\": \"3.11.2\"", "\"version\": null",
	    "agent reply: 'candidates[0].version' or its sitecustomize is "
	    "missing for a probed interpreter" },
	{ "\"candidates\": [", "\"candidates\": {\"x\": [",
	    NULL },	/* not JSON any more: checked below */
};

START_TEST(test_parse_broken)
{
	struct discover_host dh;
	struct err err = ENVCTL_ERR_INIT;
	const char *at;
	char *s;
	json_t *rep;

	if (broken[_i].msg == NULL) {
		rep = load("{\"privileged\": false, \"entries\": 1, "
		    "\"truncated\": null, \"candidates\": {}}");
		memset(&dh, 0, sizeof(dh));
		ck_assert_int_eq(discover_parse(&dh, rep, &err), ENVCTL_EPARSE);
		ck_assert_str_eq(err.msg, "agent reply: 'candidates' is "
		    "missing or not an array of at most 256 interpreters");
		goto out;
	}
	at = strstr(good_reply, broken[_i].from);
	ck_assert_ptr_nonnull(at);
	s = xasprintf("%.*s%s%s", (int)(at - good_reply), good_reply,
	    broken[_i].to, at + strlen(broken[_i].from));
	rep = load(s);
	free(s);
	memset(&dh, 0, sizeof(dh));
	ck_assert_int_eq(discover_parse(&dh, rep, &err), ENVCTL_EPARSE);
	ck_assert_str_eq(err.msg, broken[_i].msg);
out:
	discover_host_release(&dh);
	err_release(&err);
	json_decref(rep);
}
END_TEST

START_TEST(test_request)
{
	json_t *r = discover_request(2, 1500);

	ck_assert_str_eq(jstr(r, "op"), "discover");
	ck_assert_int_eq(jint(r, "id"), 2);
	ck_assert_int_eq(jint(r, "timeout_ms"), 1500);
	ck_assert_uint_eq(json_object_size(r), 3);
	json_decref(r);
}
END_TEST

/* ---- the real agent ---- */

/*
 * A privileged agent without a digest to check must lie where only root
 * can change it, which a clone under /tmp is not: a copy on a tmpfs over
 * /mnt in this test's own mount namespace (never on the real /mnt), as
 * check_policy.c does.  NULL when there is none to be had.
 */
static char *
trusted_agent(void)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct stat st;
	char *p;

	if (stat("/mnt", &st) != 0 || st.st_uid != 0 ||
	    (st.st_mode & 022) != 0 || unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("envctl-test", "/mnt", "tmpfs", 0, "mode=0755") != 0)
		return NULL;
	ck_assert_int_eq(buf_read_file(&b, agent_bin(), NULL), 0);
	p = tu_write("/mnt", "envctl-agent", b.data, b.len);
	ck_assert_int_eq(chmod(p, 0755), 0);
	buf_release(&b);
	return p;
}

/* The agent the requests go to: the built one, or trusted_agent()'s. */
static const char *agent_path;

/* One request to that agent (env0: one more environment entry). */
static json_t *
ask_env(json_t *req, const char *env0)
{
	return agent_ask(agent_path, env0, req);
}

static const json_t *
find(const json_t *rep, const char *path)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(rep, "candidates"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "path")),
		    path) == 0)
			return c;
	return NULL;
}

static int
has_source(const json_t *c, const char *src)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(c, "sources"), i, v)
		if (strcmp(json_string_value(v), src) == 0)
			return 1;
	return 0;
}

/* What interp itself says it imports (the oracle), or "" for none. */
static char *
imports(const char *interp)
{
	char *argv[] = { (char *)interp, "-c", "import os, sys\n"
	    "m = sys.modules.get('sitecustomize')\n"
	    "f = getattr(m, '__file__', None)\n"
	    "print(os.path.realpath(f) if f else '')", NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	struct tu_run r;
	char *s;

	tu_run(&r, argv, envp, NULL, 0);
	ck_assert_msg(r.status == 0, "%s: %s", interp, r.errout);
	s = xstrndup(r.out, strcspn(r.out, "\n"));
	tu_run_free(&r);
	return s;
}

static void
mkvenv(const char *py, const char *dir, int system)
{
	char *argv[] = { (char *)py, "-m", "venv", "--without-pip",
	    system ? "--system-site-packages" : (char *)dir,
	    system ? (char *)dir : NULL, NULL };
	struct tu_run r;

	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_msg(r.status == 0, "%s -m venv: %s", py, r.errout);
	tu_run_free(&r);
}

START_TEST(test_agent_venvs)
{
	const char *py = "/usr/bin/python3";
	char *t, *a, *b, *c, *pa, *pb, *pc, *want, *ln, *data;
	size_t len;
	const json_t *ca, *cb, *cc;
	json_t *rep;

	if (access(py, X_OK) != 0 || access(agent_bin(), X_OK) != 0) {
		tu_skip("agent_venvs", "no /usr/bin/python3 or no agent");
		return;
	}
	t = tu_mkdtemp();
	a = xasprintf("%s/svc-a", t);
	b = xasprintf("%s/svc-b", t);
	c = xasprintf("%s/conda-y", t);
	mkvenv(py, a, 1);
	mkvenv(py, b, 0);
	/*
	 * A conda-style prefix: conda-meta/ and its own bin/python3, a copy
	 * (a link would be /usr/bin/python3 itself: Python finds its prefix
	 * from the resolved file, so discovery counts it as that one).
	 */
	mkd(t, "conda-y");
	mkd(t, "conda-y/conda-meta");
	mkd(t, "conda-y/bin");
	data = tu_read(py, &len);
	ck_assert_ptr_nonnull(data);
	ln = tu_write(c, "bin/python3", data, len);
	ck_assert_int_eq(chmod(ln, 0755), 0);
	free(data);
	free(ln);
	rep = ask_env(json_pack("{s:s, s:i, s:i, s:[s]}", "op", "discover",
	    "id", 1, "timeout_ms", 30000, "roots", t), NULL);
	assert_ok(rep);
	ck_assert_int_eq(jbool(rep, "privileged"), 0);
	pa = xasprintf("%s/bin/python3", a);
	pb = xasprintf("%s/bin/python3", b);
	pc = xasprintf("%s/bin/python3", c);
	ca = find(rep, pa);
	cb = find(rep, pb);
	cc = find(rep, pc);
	if (ca == NULL || cb == NULL || cc == NULL)
		json_dumpf(rep, stderr, JSON_INDENT(1));
	ck_assert(ca != NULL && cb != NULL && cc != NULL);
	/* One venv is one interpreter, though three names link to it. */
	ck_assert_str_eq(jstr(ca, "kind"), "venv");
	ck_assert_str_eq(jstr(cb, "kind"), "venv");
	ck_assert_str_eq(jstr(cc, "kind"), "conda");
	ck_assert(has_source(ca, "venv") && has_source(ca, "root"));
	ck_assert(has_source(cc, "root") && !has_source(cc, "venv"));
	ck_assert_ptr_null(find(rep, (want = xasprintf("%s/bin/python3.%s",
	    a, "11"))));
	free(want);
	ck_assert_int_eq(jbool(ca, "probed"), 1);
	assert_null(ca, "error");
	assert_null(cb, "error");
	ck_assert_str_eq(jstr(ca, "executable"), pa);
	ck_assert_str_eq(jstr(ca, "real"), jstr(cb, "real"));
	/* The sitecustomize each imports, as the interpreter says. */
	want = imports(pa);
	if (want[0] != '\0')
		ck_assert_str_eq(jstr(ca, "sitecustomize_real"), want);
	else
		ck_assert_ptr_nonnull(strstr(jstr(ca, "would_create"),
		    "/sitecustomize.py"));
	free(want);
	want = imports(pb);
	if (want[0] != '\0')
		ck_assert_str_eq(jstr(cb, "sitecustomize_real"), want);
	else {
		ck_assert_int_eq(strncmp(jstr(cb, "would_create"), b,
		    strlen(b)), 0);
		ck_assert_ptr_nonnull(strstr(jstr(cb, "would_create"),
		    "/site-packages/sitecustomize.py"));
	}
	free(want);
	/* The version is the interpreter's own. */
	ck_assert_str_eq(jstr(ca, "version"), jstr(cc, "version"));
	assert_null(rep, "truncated");
	json_decref(rep);
	free(pa);
	free(pb);
	free(pc);
	free(a);
	free(b);
	free(c);
	tu_rmtree(t);
	free(t);
}
END_TEST

START_TEST(test_agent_bounds)
{
	json_t *rep;

	if (access(agent_bin(), X_OK) != 0) {
		tu_skip("agent_bounds", "no agent");
		return;
	}
	/* One candidate at most: the rest is counted, not listed. */
	rep = ask_env(json_pack("{s:s, s:i, s:i, s:i}", "op", "discover",
	    "id", 1, "timeout_ms", 30000, "max", 1), NULL);
	assert_ok(rep);
	ck_assert_uint_le(json_array_size(jget(rep, "candidates")), 1);
	json_decref(rep);
	/* No time to search or run: said, not failed. */
	rep = ask_env(json_pack("{s:s, s:i, s:i}", "op", "discover", "id", 1,
	    "timeout_ms", 1), NULL);
	assert_ok(rep);
	ck_assert_str_eq(jstr(rep, "truncated"), "out of time while "
	    "searching");
	json_decref(rep);
	rep = ask_env(json_pack("{s:s, s:i, s:[s]}", "op", "discover", "id", 1,
	    "roots", "tmp"), NULL);
	assert_fail(rep, "EINVALID", "discover: roots[0] must be an absolute "
	    "path");
	json_decref(rep);
	rep = ask_env(json_pack("{s:s, s:i, s:i}", "op", "discover", "id", 1,
	    "max", 257), NULL);
	assert_fail_prefix(rep, "EINVALID", "discover: 'max' must be");
	json_decref(rep);
}
END_TEST

/* As sudo runs it: no "roots", and only root's interpreters run. */
START_TEST(test_agent_privileged)
{
	const json_t *c;
	json_t *rep;
	size_t i;

	char *trusted;

	if (geteuid() != 0) {
		tu_skip("agent_privileged", "not root");
		return;
	}
	if ((trusted = trusted_agent()) == NULL) {
		tu_skip("agent_privileged", "no private /mnt for a root-only "
		    "copy of the agent");
		return;
	}
	agent_path = trusted;
	rep = ask_env(json_pack("{s:s, s:i, s:[s]}", "op", "discover", "id", 1,
	    "roots", "/tmp"), "SUDO_UID=1000");
	assert_fail(rep, "EINVALID", "discover: a privileged agent searches "
	    "only its fixed places and refuses 'roots' (docs/security.md)");
	json_decref(rep);
	rep = ask_env(json_pack("{s:s, s:i, s:i}", "op", "discover", "id", 1,
	    "timeout_ms", 30000), "SUDO_UID=1000");
	assert_ok(rep);
	ck_assert_int_eq(jbool(rep, "privileged"), 1);
	json_array_foreach(jget(rep, "candidates"), i, c) {
		if (jbool(c, "probed"))
			continue;
		ck_assert_msg(strncmp(jstr(c, "error"), "not probed: ", 12) ==
		    0, "%s", jstr(c, "error"));
	}
	json_decref(rep);
	agent_path = NULL;
	free(trusted);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("discover");
	TCase *tc;
	SRunner *sr;
	int failed;

	tc = tcase_create("kinds");
	tcase_add_test(tc, test_python_name);
	tcase_add_test(tc, test_kinds);
	suite_add_tcase(s, tc);
	tc = tcase_create("parse");
	tcase_add_test(tc, test_parse_good);
	tcase_add_loop_test(tc, test_parse_broken, 0,
	    sizeof(broken) / sizeof(broken[0]));
	tcase_add_test(tc, test_request);
	suite_add_tcase(s, tc);
	tc = tcase_create("agent");
	tcase_add_test(tc, test_agent_venvs);
	tcase_add_test(tc, test_agent_bounds);
	tcase_add_test(tc, test_agent_privileged);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
