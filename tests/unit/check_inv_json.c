/*
 * check_inv_json.c - JSON inventories and dynamic inventory scripts: the
 * reader (through inventory_load, as operators reach it), the script
 * runner, and the writers of `envctl inventory`, compared byte for byte
 * with what the real ansible-inventory prints for the same inventory.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/inv_json.h"
#include "controller/inventory.h"
#include "controller/invscript.h"
#include "controller/yamldoc.h"
#include "testutil.h"

/* Writes an executable script into tu_dir; returns its path. */
static char *
script(const char *name, const char *text)
{
	char *p = tu_writes(tu_dir, name, text);

	ck_assert_int_eq(chmod(p, 0755), 0);
	return p;
}

/* Loads path; *msgs gets every error, one per line.  Returns the code. */
static int
load(const char *path, struct inventory **inv, struct buf *msgs)
{
	struct err err = ENVCTL_ERR_INIT;
	int r;

	*inv = NULL;
	r = inventory_load(inv, path, &err);
	buf_reset(msgs);
	err_format(&err, msgs);
	err_release(&err);
	return r;
}

/* The text of host h's variable name, as templates see it. */
static char *
var_text(const struct inventory *inv, const char *h, const char *name)
{
	const struct host *host = inventory_find(inv, h);
	const struct ynode *v;
	struct buf b = ENVCTL_BUF_INIT;

	ck_assert_msg(host != NULL, "no host %s", h);
	v = host_var(host, name);
	ck_assert_msg(v != NULL, "host %s: no variable %s", h, name);
	if (v->type != ENVCTL_YSCALAR)
		return xstrdup(v->type == ENVCTL_YSEQ ? "(list)" : "(map)");
	ck_assert_int_eq(yscalar_text(&b, v, NULL), 0);
	return buf_detach(&b, NULL);
}

#define VAR_IS(inv, h, name, want) do {					\
	char *got_ = var_text((inv), (h), (name));			\
	ck_assert_msg(strcmp(got_, (want)) == 0, "%s.%s: got '%s', want "\
	    "'%s'", (h), (name), got_, (want));				\
	free(got_);							\
} while (0)

START_TEST(test_read_types)
{
	struct inventory *inv;
	struct buf msgs = ENVCTL_BUF_INIT;
	const struct ynode *v;
	char *p = tu_writes(tu_dir, "inv.json",
	    "{\"gpu\": {\"hosts\": [\"g1\", \"g2\"], \"vars\": "
	    "{\"s\": \"x{{ y }}\", \"i\": -42, \"r\": 1e5, \"t\": 1E-7, "
	    "\"z\": -0.0, \"b\": true, \"f\": false, \"n\": null, "
	    "\"l\": [1, \"two\", {\"k\": null}]}, "
	    "\"children\": [\"sub\"]},\n"
	    " \"sub\": [\"g3\"],\n"
	    " \"_meta\": {\"hostvars\": {\"g1\": {\"i\": 7, "
	    "\"ansible_host\": \"10.0.0.1\"}, \"nohost\": {\"x\": 1}}}}\n");

	ck_assert_msg(load(p, &inv, &msgs) == 0, "%s", msgs.data);
	ck_assert_uint_eq(inventory_nhosts(inv), 3);
	ck_assert_ptr_null(inventory_find(inv, "nohost"));
	VAR_IS(inv, "g2", "s", "x{{ y }}");
	VAR_IS(inv, "g2", "i", "-42");
	VAR_IS(inv, "g1", "i", "7");		/* the host's own wins */
	VAR_IS(inv, "g2", "r", "100000.0");
	VAR_IS(inv, "g2", "t", "1e-07");
	VAR_IS(inv, "g2", "z", "-0.0");
	VAR_IS(inv, "g2", "b", "True");
	VAR_IS(inv, "g2", "f", "False");
	VAR_IS(inv, "g2", "n", "None");
	VAR_IS(inv, "g3", "b", "True");		/* from the parent group */
	ck_assert_str_eq(inventory_find(inv, "g1")->address, "10.0.0.1");
	v = host_var(inventory_find(inv, "g2"), "l");
	ck_assert_int_eq(v->type, ENVCTL_YSEQ);
	ck_assert_uint_eq(v->nitems, 3);
	ck_assert_int_eq(yscalar_kind(v->items[0]), ENVCTL_YINT);
	ck_assert_int_eq(yscalar_kind(v->items[1]), ENVCTL_YSTR);
	ck_assert_int_eq(v->items[2]->type, ENVCTL_YMAP);
	ck_assert_int_eq(yscalar_kind(ymap_get(v->items[2], "k")),
	    ENVCTL_YNULL);
	ck_assert(host_in_group(inventory_find(inv, "g3"), "gpu"));
	inventory_free(inv);
	buf_release(&msgs);
	free(p);
}
END_TEST

/* Every error path of the reader: its code and what the message names. */
static const struct {
	const char	*json;
	int		 code;
	const char	*msg;
} bad[] = {
	{ "{\"_meta\": {}, \"g\": [\"a\",]}", ENVCTL_EPARSE,
	    "in the output of --list: line 1 column 25: unexpected token "
	    "near ']'" },
	{ "{\"_meta\": {}, \"g\": {\"hosts\": \"a\"}}", ENVCTL_EINVALID,
	    "group 'g': hosts must be a list, got a string" },
	{ "{\"_meta\": {}, \"g\": null}", ENVCTL_EINVALID,
	    "group 'g': hosts must be a list, got null" },
	{ "{\"_meta\": {}, \"g\": {\"vars\": [1]}}", ENVCTL_EINVALID,
	    "group 'g': vars must be a mapping, got a list" },
	{ "{\"_meta\": {}, \"g\": {\"children\": \"ab\"}}", ENVCTL_EINVALID,
	    "group 'g': children must be a list, got a string" },
	{ "{\"_meta\": {}, \"g\": {\"children\": [1]}}", ENVCTL_EINVALID,
	    "group 'g': a child group name must be a non-empty string, got "
	    "an integer" },
	{ "{\"_meta\": {}, \"g\": {\"hosts\": [7]}}", ENVCTL_EINVALID,
	    "group 'g': a host name must be a string, got an integer" },
	{ "{\"_meta\": {}, \"g\": [\"a\\u0000b\"]}", ENVCTL_EINVALID,
	    "group 'g': a host name holds a NUL byte" },
	{ "{\"_meta\": {}, \"g\": {\"hosts\": [\"\"]}}", ENVCTL_EINVALID,
	    "group 'g' lists an empty host name" },
	{ "{\"_meta\": {}, \"g\": {\"hosts\": [null]}}", ENVCTL_EINVALID,
	    "group 'g' lists an empty host name" },
	{ "{\"_meta\": {}, \"\": [\"a\"]}", ENVCTL_EINVALID,
	    "a group has an empty name" },
	{ "{\"_meta\": {}, \"g\": {\"hosts\": [], \"var\": {}}}",
	    ENVCTL_EINVALID, "group 'g': unknown key 'var'" },
	{ "{\"_meta\": [1], \"g\": [\"a\"]}", ENVCTL_EINVALID,
	    "_meta must be a mapping, got a list" },
	{ "{\"_meta\": {\"hostvars\": []}, \"g\": [\"a\"]}", ENVCTL_EINVALID,
	    "_meta.hostvars must be a mapping of hosts, got a list" },
	{ "{\"_meta\": {\"hostvars\": {\"a\": null}}, \"g\": [\"a\"]}",
	    ENVCTL_EINVALID, "_meta.hostvars: host 'a' must map to a mapping "
	    "of variables, got null" },
	{ "{\"_meta\": {}, \"g\": {\"vars\": {\"big\": "
	    "123456789012345678901234567890}}}", ENVCTL_EUNSUPPORTED,
	    "line 1 column 66: too big integer (envctl reads 64-bit integers "
	    "and finite reals)" },
	{ "{\"_meta\": {}, \"g\": {\"vars\": {\"x\": NaN}}}",
	    ENVCTL_EUNSUPPORTED, "NaN and Infinity are not JSON" },
	{ "{\"_meta\": {}, \"g\": {\"vars\": {\"a\\u0000b\": 1}}}",
	    ENVCTL_EUNSUPPORTED, "line 1 column 39: NUL byte in object key "
	    "not supported" },
	{ "{\"_meta\": {}, \"all\": {\"x\": 1}}", ENVCTL_EINVALID,
	    "group 'all' has none of hosts, vars, children" },
	{ "{\"_meta\": {}, \"a\": {\"children\": [\"b\"]}, "
	    "\"b\": {\"children\": [\"a\"]}}", ENVCTL_EINVALID,
	    "group cycle: a -> b -> a" },
	{ "{\"_meta\": {}, \"g\": {\"vars\": {\"ansible_group_priority\": "
	    "\"x\"}}}", ENVCTL_EINVALID, "ansible_group_priority of group "
	    "'g' must be an integer" },
};

/* A script's host names are literal: no ranges, no port (as Ansible). */
START_TEST(test_literal_names)
{
	struct inventory *inv;
	struct buf msgs = ENVCTL_BUF_INIT;
	char *p = script("inv.sh", "#!/bin/sh\necho '{\"_meta\": {}, "
	    "\"g\": [\"a:22\", \"gpu-[01:02]\"]}'\n");
	const struct host *h;

	ck_assert_int_eq(load(p, &inv, &msgs), 0);
	ck_assert_uint_eq(inventory_nhosts(inv), 2);
	h = inventory_find(inv, "a:22");
	ck_assert_ptr_nonnull(h);
	ck_assert_ptr_null(host_var(h, "ansible_port"));
	ck_assert_ptr_nonnull(inventory_find(inv, "gpu-[01:02]"));
	inventory_free(inv);
	buf_release(&msgs);
	free(p);
}
END_TEST

/* Each case as a script prints it, so that the JSON reader gets it. */
START_TEST(test_read_errors)
{
	struct inventory *inv;
	struct buf msgs = ENVCTL_BUF_INIT;
	char *data = tu_writes(tu_dir, "out.json", bad[_i].json);
	char *text = xasprintf("#!/bin/sh\nexec cat '%s'\n", data);
	char *p = script("inv.sh", text);
	int r = load(p, &inv, &msgs);

	ck_assert_msg(r == bad[_i].code, "%s: code %d, want %d: %s",
	    bad[_i].json, r, bad[_i].code, msgs.data);
	ck_assert_msg(strstr(msgs.data, bad[_i].msg) != NULL,
	    "%s: want '%s' in '%s'", bad[_i].json, bad[_i].msg, msgs.data);
	ck_assert_msg(strstr(msgs.data, p) != NULL, "no file in '%s'",
	    msgs.data);
	inventory_free(inv);
	buf_release(&msgs);
	free(p);
	free(text);
	free(data);
}
END_TEST

/* A --list file: errors name the file (jansson gives no value positions). */
START_TEST(test_read_file_errors)
{
	struct inventory *inv;
	struct buf msgs = ENVCTL_BUF_INIT;
	char *p = tu_writes(tu_dir, "inv.json",
	    "{\"_meta\": {\"hostvars\": {}}, \"g\": {\"hosts\": [\"a\"], "
	    "\"vars\": [1]}}\n");
	char *want = xasprintf("%s: group 'g': vars must be a mapping, got a "
	    "list", p);

	ck_assert_int_eq(load(p, &inv, &msgs), ENVCTL_EINVALID);
	ck_assert_msg(strstr(msgs.data, want) != NULL, "want '%s' in '%s'",
	    want, msgs.data);
	inventory_free(inv);
	buf_release(&msgs);
	free(want);
	free(p);
}
END_TEST

/* A NUL in a JSON string is kept (the value's length says so). */
START_TEST(test_read_nul)
{
	struct inventory *inv;
	struct buf msgs = ENVCTL_BUF_INIT;
	const struct ynode *v;
	char *p = script("nul.sh", "#!/bin/sh\n"
	    "echo '{\"g\": [\"a\"], \"_meta\": {\"hostvars\": {\"a\": "
	    "{\"nul\": \"a\\u0000b\"}}}}'\n");

	ck_assert_msg(load(p, &inv, &msgs) == 0, "%s", msgs.data);
	v = host_var(inventory_find(inv, "a"), "nul");
	ck_assert_uint_eq(v->len, 3);
	ck_assert_int_eq(memcmp(v->str, "a\0b", 3), 0);
	inventory_free(inv);
	buf_release(&msgs);
	free(p);
}
END_TEST

/* Deeper than the nesting cap: refused, not read. */
START_TEST(test_read_too_deep)
{
	struct inventory *inv;
	struct buf msgs = ENVCTL_BUF_INIT, j = ENVCTL_BUF_INIT;
	char *p;
	int i;

	buf_addstr(&j, "{\"_meta\": {}, \"g\": {\"hosts\": [\"a\"], "
	    "\"vars\": {\"deep\": ");
	for (i = 0; i < 1100; i++)
		buf_addch(&j, '[');
	for (i = 0; i < 1100; i++)
		buf_addch(&j, ']');
	buf_addstr(&j, "}}}");
	free(tu_writes(tu_dir, "deep.json", j.data));
	p = script("deep.sh", "#!/bin/sh\nexec cat \"$(dirname \"$0\")/"
	    "deep.json\"\n");
	ck_assert_int_eq(load(p, &inv, &msgs), ENVCTL_ETOOBIG);
	ck_assert_msg(strstr(msgs.data, "variable 'deep' of group 'g' is "
	    "nested more than 1000 levels") != NULL, "%s", msgs.data);
	inventory_free(inv);
	buf_release(&msgs);
	buf_release(&j);
	free(p);
}
END_TEST

/*
 * A script without _meta is asked --host for each host, as Ansible's
 * script plugin does; one with _meta.hostvars is not.
 */
START_TEST(test_script_per_host)
{
	struct inventory *inv;
	struct buf msgs = ENVCTL_BUF_INIT;
	char *log = xasprintf("%s/calls", tu_dir), *text, *p, *got;
	size_t len;

	text = xasprintf("#!/bin/sh\n"
	    "echo \"$*\" >> '%s'\n"
	    "case \"$1\" in\n"
	    "--list) echo '{\"web\": {\"hosts\": [\"w1\", \"w2\"], "
	    "\"vars\": {\"v\": 1}}, \"all\": {\"hosts\": [\"lone\"]}}' ;;\n"
	    "--host) echo \"{\\\"me\\\": \\\"$2\\\", \\\"v\\\": 2}\" ;;\n"
	    "esac\n", log);
	p = script("inv.sh", text);
	ck_assert_msg(load(p, &inv, &msgs) == 0, "%s", msgs.data);
	VAR_IS(inv, "w1", "me", "w1");
	VAR_IS(inv, "w2", "me", "w2");
	VAR_IS(inv, "w2", "v", "2");		/* the host's own wins */
	VAR_IS(inv, "lone", "me", "lone");
	ck_assert_str_eq(host_group(inventory_find(inv, "lone"), 0),
	    "ungrouped");
	got = tu_read(log, &len);
	ck_assert_str_eq(got, "--list\n--host w1\n--host w2\n--host lone\n");
	free(got);
	inventory_free(inv);
	free(p);
	free(text);

	/* With _meta.hostvars: --list only. */
	unlink(log);
	text = xasprintf("#!/bin/sh\n"
	    "echo \"$*\" >> '%s'\n"
	    "echo '{\"web\": [\"w1\"], \"_meta\": {\"hostvars\": "
	    "{\"w1\": {\"me\": \"meta\"}}}}'\n", log);
	p = script("inv2.sh", text);
	ck_assert_msg(load(p, &inv, &msgs) == 0, "%s", msgs.data);
	VAR_IS(inv, "w1", "me", "meta");
	got = tu_read(log, &len);
	ck_assert_str_eq(got, "--list\n");
	free(got);
	inventory_free(inv);
	free(p);
	free(text);

	/* A failing --host names the host and shows the script's stderr. */
	p = script("inv3.sh", "#!/bin/sh\n"
	    "[ \"$1\" = --list ] && { echo '{\"g\": [\"a\"]}'; exit 0; }\n"
	    "echo \"no such host $2\" >&2; exit 4\n");
	ck_assert_int_eq(load(p, &inv, &msgs), ENVCTL_EINVALID);
	ck_assert_msg(strstr(msgs.data, "inv3.sh --host a' exited with "
	    "status 4; stderr: no such host a") != NULL, "%s", msgs.data);
	inventory_free(inv);
	free(p);

	/* --host output that is no object. */
	p = script("inv4.sh", "#!/bin/sh\n"
	    "[ \"$1\" = --list ] && { echo '{\"g\": [\"a\"]}'; exit 0; }\n"
	    "echo '[]'\n");
	ck_assert_int_eq(load(p, &inv, &msgs), ENVCTL_EINVALID);
	ck_assert_msg(strstr(msgs.data, "in the output of --host a: the "
	    "variables of host 'a' must be a JSON object, got a list") !=
	    NULL, "%s", msgs.data);
	inventory_free(inv);
	free(p);
	buf_release(&msgs);
	free(log);
}
END_TEST

START_TEST(test_script_errors)
{
	struct inventory *inv;
	struct buf msgs = ENVCTL_BUF_INIT;
	char *p;

	p = script("fail.sh", "#!/bin/sh\necho 'cannot reach the API' >&2\n"
	    "exit 3\n");
	ck_assert_int_eq(load(p, &inv, &msgs), ENVCTL_EINVALID);
	ck_assert_msg(strstr(msgs.data, "fail.sh --list' exited with status "
	    "3; stderr: cannot reach the API") != NULL, "%s", msgs.data);
	inventory_free(inv);
	free(p);

	p = script("notjson.sh", "#!/bin/sh\necho '{\"g\": [\"a\"'\n");
	ck_assert_int_eq(load(p, &inv, &msgs), ENVCTL_EPARSE);
	ck_assert_msg(strstr(msgs.data, "notjson.sh: in the output of "
	    "--list: line 2 column 0: ") != NULL, "%s", msgs.data);
	inventory_free(inv);
	free(p);

	p = script("empty.sh", "#!/bin/sh\nexit 0\n");
	ck_assert_int_eq(load(p, &inv, &msgs), ENVCTL_EPARSE);
	ck_assert_msg(strstr(msgs.data, "in the output of --list: no JSON: "
	    "empty") != NULL, "%s", msgs.data);
	inventory_free(inv);
	free(p);

	p = script("list.sh", "#!/bin/sh\necho '[1]'\n");
	ck_assert_int_eq(load(p, &inv, &msgs), ENVCTL_EINVALID);
	ck_assert_msg(strstr(msgs.data, "an inventory must be a JSON object "
	    "of groups, got a list") != NULL, "%s", msgs.data);
	inventory_free(inv);
	free(p);
	buf_release(&msgs);
}
END_TEST

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1 when pid is gone (or a zombie), within two seconds. */
static int
gone(pid_t pid)
{
	return tu_wait_gone(pid, 2000) == 0;
}

START_TEST(test_run_deadline)
{
	struct buf out, errout = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	long long deadline;
	char *pidfile = xasprintf("%s/bg.pid", tu_dir), *text, *p, *pid;
	double t0;
	size_t len;

	text = xasprintf("#!/bin/sh\necho started >&2\n"
	    "sleep 30 & echo $! > '%s'\nsleep 30\n", pidfile);
	p = script("slow.sh", text);
	buf_init(&out, 1024);
	deadline = deadline_now_ms() + 1000;
	t0 = now_s();
	ck_assert_int_eq(invscript_run(&out, &errout, p, "--list", NULL,
	    deadline, &err), ENVCTL_ETIMEOUT);
	ck_assert_msg(now_s() - t0 < 5, "took %.1f s", now_s() - t0);
	ck_assert_msg(strstr(err.msg, "slow.sh --list' did not finish in time "
	    "and was killed; stderr: started") != NULL, "%s", err.msg);
	ck_assert_str_eq(errout.data, "started\n");
	/* Its whole process group went with it. */
	pid = tu_read(pidfile, &len);
	ck_assert_ptr_nonnull(pid);
	ck_assert_msg(gone((pid_t)strtol(pid, NULL, 10)), "background "
	    "child %s still runs", pid);
	free(pid);
	err_release(&err);
	buf_release(&out);
	buf_release(&errout);
	free(p);
	free(text);
	free(pidfile);
}
END_TEST

START_TEST(test_run_caps)
{
	struct buf out, errout = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	long long deadline;
	char *p;

	buf_init(&out, ENVCTL_INVSCRIPT_MAX_OUT);
	p = script("yes.sh", "#!/bin/sh\nexec yes\n");
	deadline = deadline_now_ms() + 30000;
	ck_assert_int_eq(invscript_run(&out, NULL, p, "--list", NULL,
	    deadline, &err), ENVCTL_ETOOBIG);
	ck_assert_msg(strstr(err.msg, "yes.sh --list' printed more than "
	    "16777216 bytes and was killed") != NULL, "%s", err.msg);
	ck_assert_uint_le(out.len, ENVCTL_INVSCRIPT_MAX_OUT);
	err_release(&err);
	free(p);

	/* stderr is kept up to its cap, the rest read and dropped. */
	p = script("noisy.sh", "#!/bin/sh\nhead -c 200000 /dev/zero | "
	    "tr '\\0' e >&2\necho '{}'\n");
	ck_assert_int_eq(invscript_run(&out, &errout, p, "--list", NULL,
	    deadline, &err), 0);
	ck_assert_str_eq(out.data, "{}\n");
	ck_assert_uint_eq(errout.len, ENVCTL_INVSCRIPT_MAX_ERR);
	buf_release(&out);
	buf_release(&errout);
	free(p);
}
END_TEST

START_TEST(test_run_env)
{
	struct buf out, want = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	long long deadline;
	char cwd[4096], *p, *missing;
	int fd;

	buf_init(&out, ENVCTL_INVSCRIPT_MAX_OUT);
	deadline = deadline_now_ms() + 30000;
	/* A descriptor without close-on-exec must not reach the script. */
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 3);
	ck_assert_int_ne(dup2(fd, 9), -1);
	p = script("env.sh", "#!/bin/sh\n"
	    "[ -e /proc/self/fd/9 ] && echo fd9-open\n"
	    "cat\n"				/* stdin: /dev/null, no wait */
	    "pwd\n"
	    "echo \"$1|$2|$3\"\n");
	ck_assert_int_eq(invscript_run(&out, NULL, p, "--host", "a b",
	    deadline, &err), 0);
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	/* Ansible runs it in the caller's directory, not the script's. */
	buf_addf(&want, "%s\n--host|a b|\n", cwd);
	ck_assert_str_eq(out.data, want.data);
	close(9);
	close(fd);
	free(p);

	missing = xasprintf("%s/missing.sh", tu_dir);
	ck_assert_int_eq(invscript_run(&out, NULL, missing, "--list", NULL,
	    deadline, &err), ENVCTL_ENOTFOUND);
	ck_assert_msg(strstr(err.msg, "missing.sh': no such file") != NULL,
	    "%s", err.msg);
	err_release(&err);
	free(missing);

	p = script("sig.sh", "#!/bin/sh\nkill -9 $$\n");
	ck_assert_int_eq(invscript_run(&out, NULL, p, "--list", NULL,
	    deadline, &err), ENVCTL_EINVALID);
	ck_assert_msg(strstr(err.msg, "sig.sh --list' was killed by signal "
	    "9") != NULL, "%s", err.msg);
	err_release(&err);
	free(p);
	buf_release(&out);
	buf_release(&want);
}
END_TEST

/*
 * Runs ansible-inventory -i path with args; returns its stdout, or NULL
 * after tu_skip() when it is not installed (a failure under CI=true).
 */
static char *
ansible(const char *path, const char *a1, const char *a2)
{
	char *argv[] = { "/usr/bin/ansible-inventory", "-i", (char *)path,
	    (char *)a1, (char *)a2, NULL };
	char *out = NULL;
	struct tu_run r;

	if (tu_ansible(&r, "ansible", argv, NULL) != 0)
		return NULL;
	ck_assert_msg(r.status == 0, "ansible-inventory -i %s %s: %s", path,
	    a1, r.errout);
	out = xstrdup(r.out);
	tu_run_free(&r);
	return out;
}

/* Runs the built envctl inventory path a1 [a2]; returns its stdout. */
static char *
envctl_inventory(const char *path, const char *a1, const char *a2)
{
	char *argv[] = { (char *)tu_envctl(), "inventory", (char *)path,
	    (char *)a1, (char *)a2, NULL };
	struct tu_run r;
	char *out;

	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_msg(r.status == 0, "envctl inventory %s %s: %s", path, a1,
	    r.errout);
	out = xstrdup(r.out);
	tu_run_free(&r);
	return out;
}

static void
same(const char *what, const char *want, const char *got)
{
	ck_assert_msg(strcmp(want, got) == 0, "%s differs:\n"
	    "--- ansible-inventory\n%s\n--- envctl\n%s", what, want, got);
}

/*
 * --list, --host for every host, and --graph of path, byte for byte
 * against ansible-inventory; 0 after a skip.
 */
static int
compare(const char *path)
{
	struct inventory *inv;
	struct buf msgs = ENVCTL_BUF_INIT, b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	char *want, *got, *what;
	size_t i;

	if ((want = ansible(path, "--list", NULL)) == NULL)
		return 0;
	ck_assert_msg(load(path, &inv, &msgs) == 0, "%s", msgs.data);
	ck_assert_int_eq(inv_json_write_list(&b, inv, NULL, &err), 0);
	same("--list", want, b.data);
	free(want);
	for (i = 0; i < inventory_nhosts(inv); i++) {
		buf_reset(&b);
		ck_assert_int_eq(inv_json_write_host(&b,
		    inventory_host(inv, i), &err), 0);
		want = ansible(path, "--host", inventory_host(inv, i)->name);
		what = xasprintf("--host %s", inventory_host(inv, i)->name);
		same(what, want, b.data);
		free(what);
		free(want);
	}
	want = ansible(path, "--graph", NULL);
	got = envctl_inventory(path, "--graph", NULL);
	same("--graph", want, got);
	free(want);
	free(got);
	want = ansible(path, "--list", NULL);
	got = envctl_inventory(path, "--list", NULL);
	same("envctl inventory --list", want, got);
	free(want);
	free(got);
	inventory_free(inv);
	buf_release(&msgs);
	buf_release(&b);
	return 1;
}

START_TEST(test_writers_yaml)
{
	char *p = tu_writes(tu_dir, "hosts.yaml",
	    "all:\n"
	    "  vars:\n"
	    "    av: 1\n"
	    "    inventory_dir: mine\n"
	    "    groups: mine\n"
	    "  hosts:\n"
	    "    h0:\n"
	    "      u: \"\\u00e9\\U0001F600\\x7f\\x01\\n\\t\\\"\\\\/<>&\"\n"
	    "      nested: {z: [1, 2.5, {b: null, a: true}], a: []}\n"
	    "      empty: {}\n"
	    "      floats: [1.0e+16, 0.00001, -0.0, 1.5, .inf, -.inf, .nan]\n"
	    "      big: 123456789012345678901234567890\n"
	    "      hex: 0x1F\n"
	    "    z1:\n"
	    "  children:\n"
	    "    empty: {}\n"
	    "    onlyvars:\n"
	    "      vars: {x: 1}\n"
	    "    b:\n"
	    "      hosts:\n"
	    "        h1:\n"
	    "        h2: {ansible_port: 2222}\n"
	    "    a:\n"
	    "      hosts:\n"
	    "        h2:\n"
	    "        h1:\n"
	    "        z1:\n"
	    "      children:\n"
	    "        zz:\n"
	    "        aa:\n"
	    "          hosts:\n"
	    "            h3: {f: 1.0e+16, s: 'x{{ y }}'}\n"
	    "        b:\n");

	compare(p);
	free(p);
}
END_TEST

START_TEST(test_writers_script)
{
	char *p = script("inv.py", "#!/usr/bin/python3\n"
	    "import json, sys\n"
	    "if sys.argv[1] == '--list':\n"
	    "    print(json.dumps({'web': {'hosts': ['w1', 'w2'], 'vars': "
	    "{'a': 1, 'f': 1.5, 'b': True, 'n': None}, 'children': ['db']},\n"
	    "        'db': ['d1'], 'all': {'vars': {'z': 3}, 'hosts': "
	    "['lone', 'w1']},\n"
	    "        'other': {'hosts': ['w1']}, 'self': {'q': 'r'}, "
	    "'gone': {}}))\n"
	    "else:\n"
	    "    print(json.dumps({'hv': sys.argv[2], 'ansible_port': 22}))\n");

	compare(p);
	free(p);
}
END_TEST

/* Each name ansible-inventory leaves out, and some it keeps. */
START_TEST(test_internal_vars)
{
	static const char *const names[] = {
		"ansible_config_file", "ansible_diff_mode", "ansible_facts",
		"ansible_forks", "ansible_inventory_sources", "ansible_limit",
		"ansible_playbook_python", "ansible_run_tags",
		"ansible_skip_tags", "ansible_verbosity", "ansible_version",
		"group_names", "groups", "inventory_dir", "inventory_file",
		"inventory_hostname", "inventory_hostname_short", "omit",
		"playbook_dir", "ansible_check_mode", "hostvars", "vars",
		"role_names", "play_hosts", "environment", NULL
	};
	struct buf yaml = ENVCTL_BUF_INIT;
	char *p;
	size_t i;
	int n = 0;

	buf_addstr(&yaml, "all:\n  hosts:\n    h:\n");
	for (i = 0; names[i] != NULL; i++) {
		buf_addf(&yaml, "      %s: 1\n", names[i]);
		n += inv_json_internal_var(names[i]);
	}
	ck_assert_int_eq(n, 19);
	p = tu_writes(tu_dir, "internal.yaml", yaml.data);
	compare(p);
	buf_release(&yaml);
	free(p);
}
END_TEST

START_TEST(test_write_refusals)
{
	struct inventory *inv;
	struct buf msgs = ENVCTL_BUF_INIT, b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	char *p = tu_writes(tu_dir, "keys.yaml",
	    "all:\n  hosts:\n    h:\n      m: {1: a, b: c}\n");

	ck_assert_msg(load(p, &inv, &msgs) == 0, "%s", msgs.data);
	ck_assert_int_eq(inv_json_write_host(&b, inventory_find(inv, "h"),
	    &err), ENVCTL_EUNSUPPORTED);
	ck_assert_msg(strstr(err.msg, "host 'h': variable 'm': a mapping key "
	    "that is an integer, not a string") != NULL, "%s", err.msg);
	err_release(&err);
	buf_reset(&b);
	ck_assert_int_eq(inv_json_write_list(&b, inv, NULL, &err),
	    ENVCTL_EUNSUPPORTED);
	err_release(&err);
	inventory_free(inv);
	buf_release(&msgs);
	buf_release(&b);
	free(p);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("inv_json");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, tu_dir_setup, tu_dir_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_read_types);
	tcase_add_test(tc, test_literal_names);
	tcase_add_loop_test(tc, test_read_errors, 0,
	    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_read_file_errors);
	tcase_add_test(tc, test_read_too_deep);
	tcase_add_test(tc, test_read_nul);
	tcase_add_test(tc, test_script_per_host);
	tcase_add_test(tc, test_script_errors);
	tcase_add_test(tc, test_run_deadline);
	tcase_add_test(tc, test_run_caps);
	tcase_add_test(tc, test_run_env);
	tcase_add_test(tc, test_writers_yaml);
	tcase_add_test(tc, test_writers_script);
	tcase_add_test(tc, test_internal_vars);
	tcase_add_test(tc, test_write_refusals);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
