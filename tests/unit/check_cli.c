/*
 * check_cli.c - the envctl program itself: check, render, usage, exit
 * codes; and the rendered default playbook executed by the real python3.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/xmalloc.h"
#include "controller/hash.h"
#include "testutil.h"

/* Runs envctl with up to 8 arguments; r must be freed by the caller. */
static void
envctl(struct tu_run *r, const char *a1, const char *a2, const char *a3,
    const char *a4, const char *a5, const char *a6)
{
	char *argv[] = { (char *)tu_envctl(), (char *)a1, (char *)a2,
	    (char *)a3, (char *)a4, (char *)a5, (char *)a6, NULL };

	tu_run(r, argv, NULL, NULL, 0);
}

static char *
data(const char *name)
{
	char *rel = xasprintf("tests/data/cli/%s", name);
	char *p = tu_srcpath(rel);

	free(rel);
	return p;
}

#define NAMES "['CUDA_HOME', 'TRITON_PTXAS_PATH', " \
	"'TRITON_PTXAS_BLACKWELL_PATH', 'NCCL_PROTO', " \
	"'NCCL_ALGO', 'NCCL_P2P_LEVEL', 'NCCL_MAX_NCHANNELS', " \
	"'NCCL_BUFFSIZE', 'NCCL_NTHREADS']"

/*
 * Installs content as sitecustomize.py in a fresh directory and starts the
 * system python3 with a clean environment (plus one optional launcher
 * variable), printing the managed variables.  Returns python's stdout;
 * *errout gets its stderr.
 */
static char *
python_env(const char *content, size_t len, const char *launcher_var,
    char **errout)
{
	char *sub = xasprintf("%s/site.%d", tu_dir, rand());
	char *pp = xasprintf("PYTHONPATH=%s", sub);
	char *envp[] = { "PATH=/usr/bin:/bin", pp, (char *)launcher_var,
	    NULL };
	char *argv[] = { (char *)tu_python(), "-c",
	    "import os\n"
	    "for k in " NAMES ":\n"
	    "    print(k + '=' + repr(os.environ.get(k)))\n", NULL };
	struct tu_run r;
	char *out;

	ck_assert_int_eq(mkdir(sub, 0700), 0);
	free(tu_write(sub, "sitecustomize.py", content, len));
	tu_run(&r, argv, envp, NULL, 0);
	ck_assert_msg(r.status == 0, "python3 failed: %s", r.errout);
	out = r.out;
	*errout = r.errout;
	free(sub);
	free(pp);
	return out;
}

static void
assert_host_env(const char *host, const char *launcher_var, const char *want)
{
	char *inv = data("fleet.yaml"), *py, *perr;
	struct tu_run r;

	envctl(&r, "render", inv, "--host", host, NULL, NULL);
	ck_assert_msg(r.status == 0, "render %s: %s", host, r.errout);
	ck_assert_str_eq(r.errout, "");
	py = python_env(r.out, r.outlen, launcher_var, &perr);
	ck_assert_str_eq(perr, "");
	ck_assert_str_eq(py, want);
	free(py);
	free(perr);
	tu_run_free(&r);
	free(inv);
}

START_TEST(test_default_playbook_in_python)
{
	assert_host_env("h100-01", NULL,
	    "CUDA_HOME='/opt/cuda-13.0'\n"
	    "TRITON_PTXAS_PATH='/opt/cuda-13.0/bin/ptxas'\n"
	    "TRITON_PTXAS_BLACKWELL_PATH='/opt/cuda-13.0/bin/ptxas'\n"
	    "NCCL_PROTO='Simple'\n"
	    "NCCL_ALGO='Ring'\n"
	    "NCCL_P2P_LEVEL='SYS'\n"
	    "NCCL_MAX_NCHANNELS='16'\n"
	    "NCCL_BUFFSIZE='16777216'\n"
	    "NCCL_NTHREADS='512'\n");
	assert_host_env("rtx-01", NULL,
	    "CUDA_HOME='/usr/local/cuda-13.0'\n"
	    "TRITON_PTXAS_PATH='/usr/local/cuda-13.0/bin/ptxas'\n"
	    "TRITON_PTXAS_BLACKWELL_PATH='/usr/local/cuda-13.0/bin/ptxas'\n"
	    "NCCL_PROTO='LL'\n"
	    "NCCL_ALGO='Ring'\n"
	    "NCCL_P2P_LEVEL='SYS'\n"
	    "NCCL_MAX_NCHANNELS='16'\n"
	    "NCCL_BUFFSIZE='8388608'\n"
	    "NCCL_NTHREADS='512'\n");
	assert_host_env("rtx-02", NULL,
	    "CUDA_HOME='/usr/local/cuda-13.0'\n"
	    "TRITON_PTXAS_PATH='/usr/local/cuda-13.0/bin/ptxas'\n"
	    "TRITON_PTXAS_BLACKWELL_PATH='/usr/local/cuda-13.0/bin/ptxas'\n"
	    "NCCL_PROTO='LL'\n"
	    "NCCL_ALGO='Tree'\n"
	    "NCCL_P2P_LEVEL='SYS'\n"
	    "NCCL_MAX_NCHANNELS='16'\n"
	    "NCCL_BUFFSIZE='16777216'\n"
	    "NCCL_NTHREADS='512'\n");
	/* setdefault: whoever launches python wins. */
	assert_host_env("rtx-02", "NCCL_ALGO=CollnetDirect",
	    "CUDA_HOME='/usr/local/cuda-13.0'\n"
	    "TRITON_PTXAS_PATH='/usr/local/cuda-13.0/bin/ptxas'\n"
	    "TRITON_PTXAS_BLACKWELL_PATH='/usr/local/cuda-13.0/bin/ptxas'\n"
	    "NCCL_PROTO='LL'\n"
	    "NCCL_ALGO='CollnetDirect'\n"
	    "NCCL_P2P_LEVEL='SYS'\n"
	    "NCCL_MAX_NCHANNELS='16'\n"
	    "NCCL_BUFFSIZE='16777216'\n"
	    "NCCL_NTHREADS='512'\n");
}
END_TEST

START_TEST(test_seed_broken_is_silent_failure)
{
	char *seed = tu_fixture("seed-broken.sitecustomize.py"), *text;
	char *py, *perr;
	size_t len;

	text = tu_read(seed, &len);
	ck_assert_ptr_nonnull(text);
	py = python_env(text, len, NULL, &perr);
	/* Python exits 0, mutters on stderr, and sets nothing. */
	ck_assert_ptr_nonnull(strstr(perr, "Error in sitecustomize"));
	ck_assert_ptr_nonnull(strstr(perr,
	    "TypeError: str expected, not ellipsis"));
	ck_assert_ptr_nonnull(strstr(py, "NCCL_PROTO=None\n"));
	free(py);
	free(perr);
	free(text);
	free(seed);
}
END_TEST

START_TEST(test_override_policy_beats_launcher)
{
	char *inv = data("fleet.yaml"), *pb = data("block.yaml"), *py, *perr;
	struct tu_run r;

	envctl(&r, "render", inv, "--host", "rtx-02", "-p", pb);
	ck_assert_msg(r.status == 0, "%s", r.errout);
	ck_assert_ptr_nonnull(strstr(r.out,
	    "# BEGIN envctl managed block: tuning\n"));
	py = python_env(r.out, r.outlen, "NCCL_ALGO=CollnetDirect", &perr);
	ck_assert_ptr_nonnull(strstr(py, "NCCL_PROTO='LL'\n"));
	ck_assert_ptr_nonnull(strstr(py, "NCCL_ALGO='Tree'\n"));
	free(py);
	free(perr);
	tu_run_free(&r);
	free(inv);
	free(pb);
}
END_TEST

START_TEST(test_hostile_value)
{
	char *pwned = xasprintf("%s/pwned", tu_dir);
	char *hostile = xasprintf("\"); import os; os.system(\"touch %s\"); "
	    "(\"\\ \\n '''", pwned);
	/* CUDA_HOME: no value rule stands between it and the file. */
	char *inv_text = xasprintf("all:\n  hosts:\n    h1:\n"
	    "      cuda_home: |-\n        %s\n", hostile);
	char *inv = tu_writes(tu_dir, "hostile.yaml", inv_text);
	char *want = xasprintf("CUDA_HOME=%s\n", hostile), *py, *perr;
	char *argv[] = { (char *)tu_python(), "-c",
	    "import os; print('CUDA_HOME=' + os.environ['CUDA_HOME'])",
	    NULL };
	char *sub = xasprintf("%s/site", tu_dir), *pp;
	struct tu_run r, p;

	envctl(&r, "render", inv, "--host", "h1", NULL, NULL);
	ck_assert_msg(r.status == 0, "%s", r.errout);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	free(tu_write(sub, "sitecustomize.py", r.out, r.outlen));
	pp = xasprintf("PYTHONPATH=%s", sub);
	{
		char *envp[] = { "PATH=/usr/bin:/bin", pp, NULL };

		tu_run(&p, argv, envp, NULL, 0);
	}
	ck_assert_str_eq(p.errout, "");
	ck_assert_str_eq(p.out, want);
	ck_assert_int_eq(access(pwned, F_OK), -1);
	(void)py;
	(void)perr;
	tu_run_free(&p);
	tu_run_free(&r);
	free(pp);
	free(sub);
	free(want);
	free(inv);
	free(inv_text);
	free(hostile);
	free(pwned);
}
END_TEST

START_TEST(test_nul_refused)
{
	char *inv = tu_writes(tu_dir, "nul.yaml", "all:\n  hosts:\n    h1:\n"
	    "      nccl_proto: \"a\\0b\"\n");
	struct tu_run r;

	envctl(&r, "check", inv, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.errout, "h1: "));
	ck_assert_ptr_nonnull(strstr(r.errout, "nul.yaml:4:19: variable "
	    "'nccl_proto' contains a NUL byte"));
	tu_run_free(&r);
	free(inv);
	inv = tu_writes(tu_dir, "list.yaml", "all:\n  hosts:\n    h1:\n"
	    "      nccl_proto: [a, b]\n");
	envctl(&r, "check", inv, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.errout, "list.yaml:4:19: variable "
	    "'nccl_proto' is a list; only strings, numbers and booleans"));
	tu_run_free(&r);
	free(inv);
}
END_TEST

START_TEST(test_nested_variables)
{
	char *inv = tu_writes(tu_dir, "nested.yaml",
	    "all:\n"
	    "  vars:\n"
	    "    cuda_root: /opt\n"
	    "    cuda_home: \"{{ cuda_root }}/cuda-13.0\"\n"
	    "  hosts:\n"
	    "    h1:\n"
	    "    h2:\n"
	    "      cuda_root: /srv\n"
	    "    h3:\n"
	    "      cuda_home: !unsafe '{{ raw }}'\n"
	    "    loop:\n"
	    "      a: '{{ b }}'\n"
	    "      b: '{{ a }}'\n"
	    "      nccl_algo: '{{ a }}'\n"
	    "    vault:\n"
	    "      nccl_algo: !vault |\n"
	    "        $ANSIBLE_VAULT;1.1;AES256\n");
	struct tu_run r;

	envctl(&r, "render", inv, "--host", "h1", NULL, NULL);
	ck_assert_msg(r.status == 0, "%s", r.errout);
	ck_assert_ptr_nonnull(strstr(r.out, "\"CUDA_HOME\", "
	    "\"/opt/cuda-13.0\")"));
	tu_run_free(&r);
	/* The host's cuda_root wins inside the group's cuda_home. */
	envctl(&r, "render", inv, "--host", "h2", NULL, NULL);
	ck_assert_ptr_nonnull(strstr(r.out, "\"CUDA_HOME\", "
	    "\"/srv/cuda-13.0\")"));
	tu_run_free(&r);
	envctl(&r, "render", inv, "--host", "h3", NULL, NULL);
	ck_assert_msg(r.status == 0, "%s", r.errout);
	ck_assert_ptr_nonnull(strstr(r.out, "\"CUDA_HOME\", "
	    "\"{{ raw }}\")"));
	tu_run_free(&r);
	envctl(&r, "render", inv, "--host", "loop", NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.errout, "refers to itself, or nests more "
	    "than 16 deep") != NULL, "%s", r.errout);
	tu_run_free(&r);
	envctl(&r, "render", inv, "--host", "vault", NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.errout, "nested.yaml:16:18: variable "
	    "'nccl_algo' is vault-encrypted") != NULL, "%s", r.errout);
	tu_run_free(&r);
	free(inv);
}
END_TEST

START_TEST(test_render_masks_secrets)
{
	char *inv = tu_writes(tu_dir, "s.yaml", "all:\n  hosts:\n    h1:\n"
	    "      token: hunter2\n");
	char *pb = tu_writes(tu_dir, "secret.yaml", "env:\n  TOKEN:\n"
	    "    value: '{{ token }}'\n    secret: true\n  PLAIN: x\n");
	struct tu_run r;

	envctl(&r, "render", inv, "--host", "h1", "-p", pb);
	ck_assert_msg(r.status == 0, "%s", r.errout);
	ck_assert_ptr_null(strstr(r.out, "hunter2"));
	ck_assert_ptr_nonnull(strstr(r.out, "\"TOKEN\", \"********\")"));
	tu_run_free(&r);
	{
		char *argv[] = { (char *)tu_envctl(), "render", inv, "--host",
		    "h1", "-p", pb, "--show-secrets", NULL };

		tu_run(&r, argv, NULL, NULL, 0);
	}
	ck_assert_ptr_nonnull(strstr(r.out, "\"TOKEN\", \"hunter2\")"));
	tu_run_free(&r);
	envctl(&r, "check", inv, "-p", pb, "-v", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_null(strstr(r.out, "hunter2"));
	ck_assert_ptr_nonnull(strstr(r.out, "TOKEN=********"));
	tu_run_free(&r);
	free(inv);
	free(pb);
}
END_TEST

START_TEST(test_check_ok_and_verbose)
{
	char *inv = data("fleet.yaml");
	struct tu_run r;

	envctl(&r, "check", inv, NULL, NULL, NULL, NULL);
	ck_assert_msg(r.status == 0, "%s", r.errout);
	ck_assert_ptr_nonnull(strstr(r.out, ": 4 hosts, 4 selected\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "playbook 'cuda13-nccl', mode "
	    "file, policy setdefault, 9 variables\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "check: ok\n"));
	tu_run_free(&r);
	envctl(&r, "check", inv, "-l", "rtx,!rtx-01", "-v", NULL);
	ck_assert_msg(r.status == 0, "%s", r.errout);
	ck_assert_ptr_nonnull(strstr(r.out, ": 4 hosts, 1 selected\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "rtx-02: CUDA_HOME=/usr/local/"
	    "cuda-13.0 TRITON_PTXAS_PATH="));
	ck_assert_ptr_null(strstr(r.out, "rtx-01:"));
	tu_run_free(&r);
	envctl(&r, "check", inv, "-q", NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
	free(inv);
}
END_TEST

START_TEST(test_check_value_rules)
{
	/* The default playbook's NCCL_PROTO is "{{ nccl_proto }}". */
	char *inv = tu_writes(tu_dir, "rules.yaml", "all:\n  hosts:\n"
	    "    gpu-01:\n      nccl_proto: LL129\n"
	    "    gpu-02:\n      nccl_buffsize: 16M\n"), *want;
	struct tu_run r;

	envctl(&r, "check", inv, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	want = xasprintf("gpu-01: %s:4:19: NCCL_PROTO: 'LL129' is not a "
	    "protocol (LL, LL128, Simple); NCCL >= 2.24 refuses to "
	    "initialise with it\n", inv);
	ck_assert_msg(strstr(r.errout, want) != NULL, "%s", r.errout);
	free(want);
	want = xasprintf("gpu-02: %s:6:22: warning: NCCL_BUFFSIZE: '16M' is "
	    "read as 16 (NCCL parses integers with strtoll: no suffixes)\n",
	    inv);
	ck_assert_msg(strstr(r.errout, want) != NULL, "%s", r.errout);
	free(want);
	ck_assert_ptr_nonnull(strstr(r.errout, "check: 1 problem found\n"));
	tu_run_free(&r);
	/* A warning alone does not fail check; render says it on stderr. */
	envctl(&r, "check", inv, "-l", "gpu-02", NULL, NULL);
	ck_assert_msg(r.status == 0, "%s", r.errout);
	ck_assert_ptr_nonnull(strstr(r.out, "check: ok, 1 warning\n"));
	tu_run_free(&r);
	envctl(&r, "render", inv, "--host", "gpu-02", NULL, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.errout, "warning: NCCL_BUFFSIZE"));
	ck_assert_ptr_nonnull(strstr(r.out, "\"NCCL_BUFFSIZE\", \"16M\""));
	tu_run_free(&r);
	envctl(&r, "render", inv, "--host", "gpu-01", NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
	free(inv);
}
END_TEST

START_TEST(test_check_reports_every_undefined)
{
	char *inv = data("fleet.yaml"), *pb = data("undefined.yaml"), *want;
	struct tu_run r;

	envctl(&r, "check", inv, "-p", pb, NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	/* One line per problem, naming every host it affects. */
	want = xasprintf("h100-01, h100-02, rtx-01, rtx-02: %s:3:15: "
	    "undefined variable 'cuda_root'\n", pb);
	ck_assert_msg(strstr(r.errout, want) != NULL, "%s", r.errout);
	free(want);
	/* rtx-02 sets nccl_algo in the inventory. */
	want = xasprintf("h100-01, h100-02, rtx-01: %s:5:15: undefined "
	    "variable 'nccl_algo'\n", pb);
	ck_assert_msg(strstr(r.errout, want) != NULL, "%s", r.errout);
	free(want);
	ck_assert_ptr_nonnull(strstr(r.errout, "check: 7 problems found\n"));
	tu_run_free(&r);
	free(inv);
	free(pb);
}
END_TEST

static void
assert_bad_inventory(const char *text, const char *want)
{
	char *inv = tu_writes(tu_dir, "bad.yaml", text);
	char *full = xasprintf("%s%s", inv, want);
	struct tu_run r;

	envctl(&r, "check", inv, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.errout, full) != NULL, "want '%s' in:\n%s",
	    full, r.errout);
	tu_run_free(&r);
	free(full);
	free(inv);
}

START_TEST(test_bad_inventories)
{
	/* Bad indentation, a tab, an unclosed quote: libyaml's words. */
	assert_bad_inventory("all:\n  hosts:\n    h1:\n   h2:\n", ":4:");
	assert_bad_inventory("all:\n\thosts:\n", ":2:1: ");
	assert_bad_inventory("all:\n  hosts:\n    'h1:\n", ":");
	assert_bad_inventory("all:\n  hots:\n    h1:\n", ":2:3: unknown key "
	    "'hots'");
	assert_bad_inventory("all:\n  children:\n    a:\n      children:\n"
	    "        b:\n          children:\n            a:\n"
	    "          hosts: {h1: }\n", ":7:13: group cycle: a -> b -> a");
}
END_TEST

START_TEST(test_block_render_current)
{
	char *inv = data("fleet.yaml"), *pb = data("block.yaml");
	char *seed = tu_fixture("seed-broken.sitecustomize.py"), *orig, *again;
	size_t len;
	struct tu_run r, r2;

	orig = tu_read(seed, &len);
	envctl(&r, "render", inv, "--host", "h100-01", "-p", pb);
	tu_run_free(&r);
	{
		char *argv[] = { (char *)tu_envctl(), "render", inv, "--host",
		    "h100-01", "-p", pb, "--current", seed, NULL };

		tu_run(&r, argv, NULL, NULL, 0);
	}
	ck_assert_msg(r.status == 0, "%s", r.errout);
	/* The seed is kept byte for byte in front of the block. */
	ck_assert_int_eq(memcmp(r.out, orig, len), 0);
	ck_assert_ptr_nonnull(strstr(r.out + len,
	    "# BEGIN envctl managed block: tuning\n"));
	again = tu_write(tu_dir, "rendered.py", r.out, r.outlen);
	{
		char *argv[] = { (char *)tu_envctl(), "render", inv, "--host",
		    "h100-01", "-p", pb, "--current", again, NULL };

		tu_run(&r2, argv, NULL, NULL, 0);
	}
	ck_assert_uint_eq(r2.outlen, r.outlen);
	ck_assert_int_eq(memcmp(r2.out, r.out, r.outlen), 0);
	tu_run_free(&r2);
	tu_run_free(&r);
	free(again);
	free(orig);
	free(seed);
	free(inv);
	free(pb);
}
END_TEST

START_TEST(test_plan_local_connection)
{
	/*
	 * ansible_connection: local runs the agent as a child: this reads
	 * the machine's own sitecustomize.py through a wrapper interpreter
	 * that points python at a file in the temp dir, and changes nothing.
	 */
	char *site = xasprintf("%s/site", tu_dir), *wrapper, *inv_text, *inv;
	char *seed = tu_fixture("seed-broken.sitecustomize.py"), *text;
	char *before, *after;
	size_t len, blen, alen;
	struct tu_run r;

	ck_assert_int_eq(mkdir(site, 0700), 0);
	text = tu_read(seed, &len);
	free(tu_write(site, "sitecustomize.py", text, len));
	wrapper = xasprintf("%s/py", tu_dir);
	{
		char *script = xasprintf("#!/bin/sh\nexec env PYTHONPATH=%s "
		    "%s \"$@\"\n", site, tu_python());

		free(tu_writes(NULL, wrapper, script));
		free(script);
	}
	ck_assert_int_eq(chmod(wrapper, 0755), 0);
	inv_text = xasprintf("all:\n  hosts:\n    me:\n"
	    "      ansible_connection: local\n"
	    "      ansible_python_interpreter: %s\n", wrapper);
	inv = tu_writes(tu_dir, "local.yaml", inv_text);
	before = tu_read(seed, &blen);
	envctl(&r, "plan", inv, "--json", NULL, NULL, NULL);
	ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.errout);
	ck_assert_ptr_nonnull(strstr(r.out, "\"outcome\": \"pending\""));
	ck_assert_ptr_nonnull(strstr(r.out, "\"startup_error\": "
	    "\"TypeError: str expected, not ellipsis\""));
	ck_assert_ptr_nonnull(strstr(r.out, site));
	tu_run_free(&r);
	after = tu_read(seed, &alen);
	ck_assert_uint_eq(alen, blen);
	ck_assert_int_eq(memcmp(before, after, alen), 0);
	{
		char *p = xasprintf("%s/sitecustomize.py", site);
		char *now = tu_read(p, &alen);

		ck_assert_uint_eq(alen, len);
		ck_assert_int_eq(memcmp(now, text, len), 0);
		free(now);
		free(p);
	}
	free(before);
	free(after);
	free(inv);
	free(inv_text);
	free(wrapper);
	free(text);
	free(seed);
	free(site);
}
END_TEST

START_TEST(test_usage_and_exit_codes)
{
	struct tu_run r;
	char *inv = data("fleet.yaml");
	char hex[ENVCTL_SHA256_HEX], *bytes, *line;
	const char *agent;
	size_t len;

	envctl(&r, "--version", NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "envctl "));
	/* The agent it ships, by the digest a sudoers rule would pin. */
	if ((agent = getenv("ENVCTL_AGENT")) != NULL) {
		bytes = tu_read(agent, &len);
		ck_assert_ptr_nonnull(bytes);
		hash_sha256_hex(hex, bytes, len);
		line = xasprintf("agent   %s (", agent);
		ck_assert_msg(strstr(r.out, line) != NULL, "want '%s' in '%s'",
		    line, r.out);
		free(line);
		line = xasprintf(", sha256 %s)\n", hex);
		ck_assert_msg(strstr(r.out, line) != NULL, "want '%s' in '%s'",
		    line, r.out);
		free(line);
		free(bytes);
	}
	tu_run_free(&r);
	envctl(&r, "--help", NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "commands:"));
	ck_assert_ptr_nonnull(strstr(r.out, "render"));
	tu_run_free(&r);
	envctl(&r, "chek", inv, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 64);
	ck_assert_ptr_nonnull(strstr(r.errout, "unknown command 'chek' (did "
	    "you mean 'check'?)"));
	tu_run_free(&r);
	envctl(&r, "check", NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 64);
	ck_assert_ptr_nonnull(strstr(r.errout, "missing operand"));
	ck_assert_ptr_nonnull(strstr(r.errout, "usage: envctl check"));
	tu_run_free(&r);
	envctl(&r, "check", inv, "--bogus", NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 64);
	ck_assert_ptr_nonnull(strstr(r.errout, "unknown option '--bogus'"));
	tu_run_free(&r);
	envctl(&r, "render", "--help", NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "--current FILE"));
	tu_run_free(&r);
	envctl(&r, "render", inv, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 64);
	tu_run_free(&r);
	envctl(&r, "render", inv, "--host", "nope", NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.errout, "'nope' matches no host"));
	tu_run_free(&r);
	envctl(&r, "check", "/nonexistent/hosts.yaml", NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.errout, "/nonexistent/hosts.yaml"));
	tu_run_free(&r);
	free(inv);
}
END_TEST

/*
 * envctl inventory: one of --list, --host, --graph; --help teaches and
 * every option it shows is in envctl(1); --limit filters the hosts.
 */
/*
 * Every command of envctl --help is in envctl(1), and so is every option
 * its own --help lists (git's t0450): the two cannot drift apart.
 */
START_TEST(test_help_matches_man)
{
	struct tu_run r, c;
	struct buf missing = ENVCTL_BUF_INIT;
	char *man_path = tu_srcpath("docs/envctl.1"), *man, *line, *next;
	char *cmd, *opt, *p, *q;
	size_t len, ncmds = 0;

	man = tu_read(man_path, &len);
	ck_assert_ptr_nonnull(man);
	envctl(&r, "--help", NULL, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 0);
	line = strstr(r.out, "\ncommands:\n");
	ck_assert_ptr_nonnull(line);
	for (line = strchr(line + 1, '\n') + 1; strncmp(line, "    ", 4) == 0;
	    line = next) {
		next = strchr(line, '\n') + 1;
		for (p = line + 4; *p != ' ' && *p != '\n'; p++)
			;
		cmd = xstrndup(line + 4, (size_t)(p - line - 4));
		opt = xasprintf(".Cm %s\n", cmd);
		if (strstr(man, opt) == NULL)
			buf_addf(&missing, "command %s; ", cmd);
		free(opt);
		envctl(&c, cmd, "--help", NULL, NULL, NULL, NULL);
		ck_assert_msg(c.status == 0, "envctl %s --help: %s", cmd,
		    c.errout);
		for (p = strstr(c.out, "--"); p != NULL; p = strstr(q, "--")) {
			for (q = p + 2; (*q >= 'a' && *q <= 'z') || *q == '-';
			    q++)
				;
			if (q == p + 2)
				continue;
			opt = xasprintf("Fl -%.*s", (int)(q - p - 2), p + 2);
			if (strstr(man, opt) == NULL)
				buf_addf(&missing, "%s's --%.*s; ", cmd,
				    (int)(q - p - 2), p + 2);
			free(opt);
		}
		tu_run_free(&c);
		free(cmd);
		ncmds++;
	}
	ck_assert_uint_ge(ncmds, 9);
	ck_assert_msg(missing.len == 0, "not in docs/envctl.1: %s",
	    missing.data);
	tu_run_free(&r);
	buf_release(&missing);
	free(man);
	free(man_path);
}
END_TEST

START_TEST(test_inventory_command)
{
	struct tu_run r;
	char *inv = data("fleet.yaml"), *man_path = tu_srcpath("docs/envctl.1");
	char *man, *opt, *p;
	size_t len;
	static const char *const opts[] = { "--list", "--host", "--graph",
	    "--limit", NULL };
	size_t i;

	man = tu_read(man_path, &len);
	ck_assert_ptr_nonnull(man);
	ck_assert_ptr_nonnull(strstr(man, ".Cm inventory\n"));
	envctl(&r, "inventory", "--help", NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "usage: envctl inventory "
	    "INVENTORY --list"));
	ck_assert_ptr_nonnull(strstr(r.out, "ansible-inventory -i "
	    "hosts.yaml --list"));
	for (i = 0; opts[i] != NULL; i++) {
		ck_assert_msg(strstr(r.out, opts[i]) != NULL, "%s not in "
		    "--help", opts[i]);
		/* The man page spells --list as Fl -list. */
		opt = xasprintf("Fl %s", opts[i] + 1);
		ck_assert_msg(strstr(man, opt) != NULL, "%s not in envctl.1",
		    opt);
		free(opt);
	}
	tu_run_free(&r);
	envctl(&r, "--help", NULL, NULL, NULL, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(r.out, "    inventory "));
	tu_run_free(&r);
	envctl(&r, "inventory", inv, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 64);
	ck_assert_ptr_nonnull(strstr(r.errout, "give one of --list, --host "
	    "HOST, --graph"));
	tu_run_free(&r);
	envctl(&r, "inventory", inv, "--list", "--graph", NULL, NULL);
	ck_assert_int_eq(r.status, 64);
	tu_run_free(&r);
	envctl(&r, "inventory", inv, "--host", "rtx-01", "-l", "rtx");
	ck_assert_int_eq(r.status, 64);
	ck_assert_ptr_nonnull(strstr(r.errout, "--limit does not apply to "
	    "--host"));
	tu_run_free(&r);
	envctl(&r, "inventory", inv, "--host", "nope", NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.errout, "host 'nope' is not in"));
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
	envctl(&r, "inventory", inv, "--host", "rtx-02", NULL, NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "\n    \"ansible_host\": "
	    "\"127.0.0.2\",\n"));
	tu_run_free(&r);
	envctl(&r, "inventory", inv, "--graph", "-l", "rtx-01", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "@all:\n"));
	ck_assert_ptr_nonnull(strstr(r.out,
	    "  |  |--@rtx:\n  |  |  |--rtx-01\n"));
	ck_assert_ptr_null(strstr(r.out, "rtx-02"));
	ck_assert_ptr_null(strstr(r.out, "h100-01"));
	tu_run_free(&r);
	envctl(&r, "inventory", inv, "--list", "--limit", "h100", NULL);
	ck_assert_int_eq(r.status, 0);
	p = strstr(r.out, "\"hostvars\": {");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(strstr(p, "\"h100-01\": {"));
	ck_assert_ptr_null(strstr(r.out, "rtx-01"));
	tu_run_free(&r);
	free(man);
	free(man_path);
	free(inv);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, tu_dir_setup, tu_dir_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_default_playbook_in_python);
	tcase_add_test(tc, test_seed_broken_is_silent_failure);
	tcase_add_test(tc, test_override_policy_beats_launcher);
	tcase_add_test(tc, test_hostile_value);
	tcase_add_test(tc, test_nul_refused);
	tcase_add_test(tc, test_nested_variables);
	tcase_add_test(tc, test_render_masks_secrets);
	tcase_add_test(tc, test_check_ok_and_verbose);
	tcase_add_test(tc, test_check_reports_every_undefined);
	tcase_add_test(tc, test_check_value_rules);
	tcase_add_test(tc, test_bad_inventories);
	tcase_add_test(tc, test_block_render_current);
	tcase_add_test(tc, test_plan_local_connection);
	tcase_add_test(tc, test_usage_and_exit_codes);
	tcase_add_test(tc, test_inventory_command);
	tcase_add_test(tc, test_help_matches_man);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
