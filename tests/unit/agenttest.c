/* agenttest.c - helpers for the suites that run the agent (agenttest.h). */
#include "agenttest.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "testutil.h"

const char *
agent_bin(void)
{
	const char *s = getenv("ENVCTL_AGENT");

	return s != NULL ? s : "build/envctl-agent";
}

static char *cache_dir, *uncached_bin;

void
agent_cache(void)
{
	char *bin, *path;
	size_t len;

	bin = tu_read(agent_bin(), &len);
	ck_assert_ptr_nonnull(bin);
	uncached_bin = xstrdup(agent_bin());
	cache_dir = tu_mkdtemp();
	path = tu_write(cache_dir, AGENT_CACHED_NAME, bin, len);
	ck_assert_int_eq(chmod(path, 0700), 0);
	ck_assert_int_eq(setenv("ENVCTL_AGENT", path, 1), 0);
	free(path);
	free(bin);
}

void
agent_uncache(void)
{
	if (cache_dir == NULL)
		return;
	ck_assert_int_eq(setenv("ENVCTL_AGENT", uncached_bin, 1), 0);
	tu_rmtree(cache_dir);
	free(cache_dir);
	free(uncached_bin);
	cache_dir = uncached_bin = NULL;
}

const char *
agent_cache_dir(void)
{
	return cache_dir;
}

pid_t
agent_start(json_t *req, int *in, int *out)
{
	struct buf b = ENVCTL_BUF_INIT;
	int inp[2], outp[2];
	pid_t pid;

	ck_assert_int_eq(proto_encode(&b, req, NULL), 0);
	json_decref(req);
	ck_assert_int_eq(pipe(inp), 0);
	ck_assert_int_eq(pipe(outp), 0);
	if ((pid = fork()) == 0) {
		dup2(inp[0], 0);
		dup2(outp[1], 1);
		close(inp[1]);
		close(outp[0]);
		/*
		 * The agent as its caller: under "sudo make check" these would
		 * make it privileged (agent/policy.h), which these suites do
		 * not test; check_policy does.
		 */
		unsetenv("SUDO_UID");
		unsetenv("PKEXEC_UID");
		unsetenv("DOAS_USER");
		execl(agent_bin(), "envctl-agent", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	close(inp[0]);
	close(outp[1]);
	ck_assert_int_eq(write(inp[1], b.data, b.len), (ssize_t)b.len);
	buf_release(&b);
	*in = inp[1];
	*out = outp[0];
	return pid;
}

json_t *
agent_ask(const char *agent, const char *env, json_t *req)
{
	struct buf in = ENVCTL_BUF_INIT, out = ENVCTL_BUF_INIT;
	char *argv[] = { (char *)(agent != NULL ? agent : agent_bin()), NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", (char *)env, NULL };
	struct tu_run r;
	json_t *reply = NULL;

	ck_assert_int_eq(proto_encode(&in, req, NULL), 0);
	json_decref(req);
	tu_run(&r, argv, envp, in.data, in.len);
	ck_assert_msg(r.status == 0, "agent exited %d: %s", r.status,
	    r.errout);
	buf_add(&out, r.out, r.outlen);
	ck_assert_int_eq(proto_decode(&reply, &out, NULL), 1);
	tu_run_free(&r);
	buf_release(&in);
	buf_release(&out);
	return reply;
}

long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

json_t *
jget(const json_t *o, const char *path)
{
	char *copy = xstrdup(path), *key, *dot;
	json_t *v = (json_t *)o;

	for (key = copy; v != NULL && key != NULL; key = dot) {
		if ((dot = strchr(key, '.')) != NULL)
			*dot++ = '\0';
		v = json_object_get(v, key);
	}
	free(copy);
	return v;
}

const char *
jstr(const json_t *o, const char *path)
{
	json_t *v = jget(o, path);

	ck_assert_msg(json_is_string(v), "'%s' is not a string", path);
	return json_string_value(v);
}

json_int_t
jint(const json_t *o, const char *path)
{
	json_t *v = jget(o, path);

	ck_assert_msg(json_is_integer(v), "'%s' is not an integer", path);
	return json_integer_value(v);
}

int
jbool(const json_t *o, const char *path)
{
	json_t *v = jget(o, path);

	ck_assert_msg(json_is_boolean(v), "'%s' is not a boolean", path);
	return json_is_true(v);
}

void
assert_null(const json_t *o, const char *path)
{
	ck_assert_msg(json_is_null(jget(o, path)), "'%s' is not null", path);
}

void
assert_ok(const json_t *reply)
{
	ck_assert_msg(json_is_true(json_object_get(reply, "ok")),
	    "reply failed: %s: %s",
	    json_string_value(json_object_get(reply, "code")),
	    json_string_value(json_object_get(reply, "message")));
}

void
assert_fail(const json_t *reply, const char *code, const char *msg)
{
	ck_assert_msg(json_is_false(json_object_get(reply, "ok")),
	    "expected %s: %s", code, msg);
	ck_assert_str_eq(jstr(reply, "code"), code);
	ck_assert_str_eq(jstr(reply, "message"), msg);
}

/* As assert_fail, for a message that starts with prefix. */
void
assert_fail_prefix(const json_t *reply, const char *code, const char *prefix)
{
	ck_assert_msg(json_is_false(json_object_get(reply, "ok")),
	    "expected %s: %s...", code, prefix);
	ck_assert_str_eq(jstr(reply, "code"), code);
	ck_assert_msg(strncmp(jstr(reply, "message"), prefix,
	    strlen(prefix)) == 0, "message '%s' does not start with '%s'",
	    jstr(reply, "message"), prefix);
}
