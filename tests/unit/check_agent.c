/*
 * check_agent.c - the real envctl-agent binary ($ENVCTL_AGENT), fed frames
 * on stdin, against the host's real python3.  Temporary files only; the
 * system's own sitecustomize.py is read, never written.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/probe.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "agenttest.h"
#include "testutil.h"

#define MINPATH	\
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *const nccl[] = {
	"NCCL_PROTO", "NCCL_ALGO", "NCCL_P2P_LEVEL", "NCCL_MAX_NCHANNELS",
	"NCCL_BUFFSIZE", "NCCL_NTHREADS",
};

/*
 * The probe tests run four times: with fresh interpreters, then (the
 * "probe-forked" case) with every read asking for the fork server, where
 * a successful read must also say it was served by it; both again with
 * the agent run from a cache directory, where the scripts are files
 * (agent/cache.h).
 */
static int forked;

static void
set_forked(void)
{
	forked = 1;
}

static void
set_forked_cached(void)
{
	forked = 1;
	agent_cache();
}

/* Appends a frame of the JSON text js. */
static void
add_frame(struct buf *b, const char *js)
{
	json_t *v = json_loads(js, 0, NULL);

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(proto_encode(b, v, NULL), 0);
	json_decref(v);
}

/* Runs the agent on in; returns the array of decoded replies. */
static json_t *
run_agent(struct tu_run *r, const struct buf *in)
{
	char *argv[] = { (char *)agent_bin(), NULL };
	struct buf out = ENVCTL_BUF_INIT;
	json_t *replies = json_array(), *m;
	int rc;

	tu_run(r, argv, NULL, in->data, in->len);
	buf_add(&out, r->out, r->outlen);
	while ((rc = proto_decode(&m, &out, NULL)) == 1)
		json_array_append_new(replies, m);
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(out.len == 0, "stdout holds %zu bytes that are not "
	    "a frame", out.len);
	buf_release(&out);
	return replies;
}

/* Sends one request (taking it) in a session of its own; the reply. */
static json_t *
ask(json_t *req)
{
	struct buf in = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *replies, *reply;

	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(proto_encode(&in, req, NULL), 0);
	json_decref(req);
	replies = run_agent(&r, &in);
	ck_assert_msg(r.status == 0, "agent exited %d: %s", r.status,
	    r.errout);
	ck_assert_uint_eq(json_array_size(replies), 1);
	reply = json_incref(json_array_get(replies, 0));
	ck_assert_int_eq(jint(reply, "id"), 1);
	/* A start-up that failed was run afresh (forkserver.h). */
	if (jget(reply, "probe") != NULL &&
	    json_is_null(jget(reply, "probe.failed")))
		ck_assert_int_eq(jbool(reply, "probe.forked"), forked);
	json_decref(replies);
	tu_run_free(&r);
	buf_release(&in);
	return reply;
}

/* A read request with id 1 for the six NCCL variables, no checks. */
static json_t *
read_req(const char *interp, const char *path)
{
	return json_pack("{s:s,s:i,s:s,s:o,s:[ssssss],s:[],s:i,s:b}",
	    "op", "read", "id", 1, "interpreter", interp,
	    "path", path != NULL ? json_string(path) : json_null(),
	    "vars", nccl[0], nccl[1], nccl[2], nccl[3], nccl[4], nccl[5],
	    "checks", "timeout_ms", 10000, "fork", forked);
}

/* The decoded bytes of target.data. */
static void
target_bytes(struct buf *out, const json_t *reply)
{
	const char *s = jstr(reply, "target.data");

	ck_assert_int_eq(proto_b64_decode(out, s, strlen(s), NULL), 0);
}

static char *
real(const char *path)
{
	char *p = realpath(path, NULL);

	ck_assert_ptr_nonnull(p);
	return p;
}

/*
 * A temporary directory holding sitecustomize.py and an "interpreter": a
 * wrapper that records its pid (python's, after exec) and adds the
 * directory to PYTHONPATH itself, since the agent runs it in a clean
 * environment.
 */
struct pyenv {
	char	*dir;
	char	*interp;
	char	*site;
	char	*pidfile;
	int	 classic;	/* pyenv_venv(): its fork server would be */
};

/* (Re)writes e's wrapper, running python. */
static void
pyenv_wrap(struct pyenv *e, const char *python)
{
	char *wrapper = xasprintf("#!/bin/sh\necho $$ > %s\n"
	    "exec env PYTHONPATH=%s %s \"$@\"\n", e->pidfile, e->dir, python);

	free(e->interp);
	e->interp = tu_writes(e->dir, "python", wrapper);
	ck_assert_int_eq(chmod(e->interp, 0755), 0);
	free(wrapper);
}

static void
pyenv_init(struct pyenv *e, const char *site_text)
{
	e->dir = tu_mkdtemp();
	e->classic = 0;
	e->interp = NULL;
	e->site = tu_writes(e->dir, "sitecustomize.py", site_text);
	e->pidfile = xasprintf("%s/pid", e->dir);
	pyenv_wrap(e, tu_python());
}

static void
pyenv_fixture(struct pyenv *e, const char *name)
{
	char *path = tu_fixture(name), *text = tu_read(path, NULL);

	ck_assert_msg(text != NULL, "cannot read fixture %s", path);
	pyenv_init(e, text);
	free(text);
	free(path);
}

static void
pyenv_release(struct pyenv *e)
{
	tu_rmtree(e->dir);
	free(e->dir);
	free(e->interp);
	free(e->site);
	free(e->pidfile);
}

/* The pid the wrapper recorded, or -1 before it ran. */
static pid_t
pyenv_pid(const struct pyenv *e)
{
	char *s = tu_read(e->pidfile, NULL);
	pid_t pid = -1;

	if (s != NULL && s[0] != '\0')
		pid = (pid_t)strtol(s, NULL, 10);
	free(s);
	return pid;
}

/*
 * reply is a read of e whose start-up failed with msg: the target was
 * found all the same (-S), no value was learnt.
 */
static void
assert_start_failed(const json_t *reply, const struct pyenv *e,
    const char *msg)
{
	ck_assert_msg(jbool(reply, "ok"), "read failed: %s",
	    jstr(reply, "message"));
	ck_assert_str_eq(jstr(reply, "probe.failed"), msg);
	ck_assert_str_eq(jstr(reply, "target.path"), e->site);
	ck_assert_str_eq(jstr(reply, "target.source"), "auto");
	ck_assert(jbool(reply, "target.exists"));
	ck_assert_str_eq(jstr(reply, "probe.origin"), e->site);
	ck_assert_uint_eq(json_object_size(jget(reply, "probe.values")), 0);
}

/* A running process whose command line holds token, or 0. */
static pid_t
token_pid(const char *token)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t len, tlen = strlen(token), i;
	char *path, *cmd;
	pid_t found = 0;

	ck_assert_ptr_nonnull(d);
	while (!found && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		path = xasprintf("/proc/%s/cmdline", de->d_name);
		cmd = tu_read(path, &len);
		free(path);
		for (i = 0; cmd != NULL && i + tlen <= len && !found; i++)
			if (memcmp(cmd + i, token, tlen) == 0)
				found = (pid_t)strtol(de->d_name, NULL, 10);
		free(cmd);
	}
	closedir(d);
	return found;
}

START_TEST(test_version)
{
	char *argv[] = { (char *)agent_bin(), "--version", NULL };
	char *bad[] = { (char *)agent_bin(), "--bogus", NULL };
	struct tu_run r;

	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "envctl-agent " ENVCTL_VERSION "\n");
	tu_run_free(&r);
	tu_run(&r, bad, NULL, NULL, 0);
	ck_assert_int_eq(r.status, 64);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strstr(r.errout, "usage: envctl-agent"));
	tu_run_free(&r);
}
END_TEST

/*
 * --requests: the frames that came with the exec are answered first, in
 * order, then stdin's; bad base64 is refused before anything is served.
 */
START_TEST(test_requests_arg)
{
	struct buf first = ENVCTL_BUF_INIT, b64 = ENVCTL_BUF_INIT;
	struct buf in = ENVCTL_BUF_INIT, out = ENVCTL_BUF_INIT;
	char *argv[] = { (char *)agent_bin(), "--requests", NULL, NULL };
	char *bad[] = { (char *)agent_bin(), "--requests", "a$b=", NULL };
	char *twice[] = { (char *)agent_bin(), "--requests", "", "--requests",
		"", NULL };
	json_t *req, *m;
	struct tu_run r;
	int i;

	for (i = 1; i <= 2; i++) {
		req = json_pack("{s:s,s:i,s:i}", "op", "hello", "id", i,
		    "protocol", 1);
		ck_assert_int_eq(proto_encode(&first, req, NULL), 0);
		json_decref(req);
	}
	req = json_pack("{s:s,s:i,s:i}", "op", "hello", "id", 3, "protocol",
	    1);
	ck_assert_int_eq(proto_encode(&in, req, NULL), 0);
	json_decref(req);
	proto_b64_encode(&b64, first.data, first.len);
	argv[2] = b64.data;
	tu_run(&r, argv, NULL, in.data, in.len);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.errout);
	buf_add(&out, r.out, r.outlen);
	for (i = 1; i <= 3; i++) {
		ck_assert_int_eq(proto_decode(&m, &out, NULL), 1);
		ck_assert_int_eq(jint(m, "id"), i);
		assert_ok(m);
		json_decref(m);
	}
	ck_assert_uint_eq(out.len, 0);
	tu_run_free(&r);

	tu_run(&r, bad, NULL, in.data, in.len);
	ck_assert_int_eq(r.status, 2);
	ck_assert_uint_eq(r.outlen, 0);
	ck_assert_ptr_nonnull(strstr(r.errout, "envctl-agent: --requests: "));
	tu_run_free(&r);
	tu_run(&r, twice, NULL, NULL, 0);
	ck_assert_int_eq(r.status, 64);
	tu_run_free(&r);
	buf_release(&first);
	buf_release(&b64);
	buf_release(&in);
	buf_release(&out);
}
END_TEST

START_TEST(test_empty_session)
{
	struct buf in = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *replies = run_agent(&r, &in);

	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(json_array_size(replies), 0);
	ck_assert_str_eq(r.errout, "");
	json_decref(replies);
	tu_run_free(&r);
}
END_TEST

START_TEST(test_hello)
{
	json_t *reply = ask(json_pack("{s:s,s:i,s:i}", "op", "hello", "id", 1,
	    "protocol", 1));
	struct utsname u;
	struct passwd *pw;

	ck_assert_int_eq(uname(&u), 0);
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "agent"), ENVCTL_VERSION);
	ck_assert_int_eq(jint(reply, "protocol"), 1);
	ck_assert_str_eq(jstr(reply, "arch"), u.machine);
	ck_assert_str_eq(jstr(reply, "hostname"), u.nodename);
	ck_assert_int_eq(jint(reply, "uid"), getuid());
	ck_assert_int_eq(jint(reply, "euid"), geteuid());
	if (geteuid() == 0)
		ck_assert_str_eq(jstr(reply, "user"), "root");
	else if ((pw = getpwuid(geteuid())) != NULL)
		ck_assert_str_eq(jstr(reply, "user"), pw->pw_name);
	ck_assert_int_gt(jint(reply, "pid"), 1);
	ck_assert_int_ne(jint(reply, "pid"), getpid());
	json_decref(reply);
}
END_TEST

START_TEST(test_hello_protocol)
{
	json_t *reply;

	reply = ask(json_pack("{s:s,s:i,s:i}", "op", "hello", "id", 1,
	    "protocol", 2));
	assert_fail(reply, "EUNSUPPORTED", "protocol 2 is not supported "
	    "(envctl-agent " ENVCTL_VERSION " speaks protocol 1)");
	json_decref(reply);
	reply = ask(json_pack("{s:s,s:i}", "op", "hello", "id", 1));
	assert_fail(reply, "EINVALID", "hello: 'protocol' must be an integer");
	json_decref(reply);
}
END_TEST

START_TEST(test_unknown_op)
{
	struct buf in = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *replies;

	add_frame(&in, "{\"op\":\"frobnicate\",\"id\":1}");
	add_frame(&in, "{\"op\":\"hello\",\"id\":2,\"protocol\":1}");
	replies = run_agent(&r, &in);
	ck_assert_int_eq(r.status, 0);	/* the session goes on */
	ck_assert_uint_eq(json_array_size(replies), 2);
	assert_fail(json_array_get(replies, 0), "EUNSUPPORTED",
	    "unknown op 'frobnicate'");
	ck_assert_int_eq(jint(json_array_get(replies, 0), "id"), 1);
	assert_ok(json_array_get(replies, 1));
	json_decref(replies);
	tu_run_free(&r);
	buf_release(&in);
}
END_TEST

/*
 * Each malformed input: one error reply (id as given, else null), the
 * message on stderr, exit status 2, and the hello after it unanswered.
 * A case has a JSON body framed here, or raw bytes when body is NULL.
 */
START_TEST(test_malformed)
{
	static const struct {
		const char	*body;
		const char	*raw;
		size_t		 rawlen;
		json_int_t	 id;	/* -1: null */
		const char	*code;
		const char	*msg;	/* NULL: bad JSON */
	} v[] = {
		{ "hello", NULL, 0, -1, "EPARSE", NULL },
		{ "{\"id\":1", NULL, 0, -1, "EPARSE", NULL },
		{ NULL, "\xff\xff\xff\xff", 4, -1, "ETOOBIG", "frame of "
		    "4294967295 bytes exceeds the 50331648-byte limit" },
		{ NULL, "\x03\x00\x00\x01", 4, -1, "ETOOBIG", "frame of "
		    "50331649 bytes exceeds the 50331648-byte limit" },
		{ NULL, "\0\0\0\0", 4, -1, "EPARSE", "empty frame" },
		{ "[1]", NULL, 0, -1, "EPARSE",
		    "frame holds a JSON array, not an object" },
		{ "{\"op\":\"hello\"}", NULL, 0, -1, "EPARSE",
		    "request has no integer 'id'" },
		{ "{\"op\":\"hello\",\"id\":\"7\"}", NULL, 0, -1, "EPARSE",
		    "request has no integer 'id'" },
		{ "{\"id\":7}", NULL, 0, 7, "EPARSE",
		    "request 7 has no string 'op'" },
		{ "{\"id\":8,\"op\":null}", NULL, 0, 8, "EPARSE",
		    "request 8 has no string 'op'" },
		/* No op sees a NUL byte in a string (request.h, too). */
		{ "{\"op\":\"read\",\"id\":9,\"path\":\"/a\\u0000b\"}",
		    NULL, 0, -1, "EPARSE", NULL },
	};
	struct buf in = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *replies, *reply;
	unsigned char h[4];
	size_t i, len;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		buf_reset(&in);
		if (v[i].body != NULL) {
			len = strlen(v[i].body);
			h[0] = h[1] = h[2] = 0;
			h[3] = (unsigned char)len;
			buf_add(&in, h, 4);
			buf_addstr(&in, v[i].body);
		} else
			buf_add(&in, v[i].raw, v[i].rawlen);
		add_frame(&in, "{\"op\":\"hello\",\"id\":99,\"protocol\":1}");
		replies = run_agent(&r, &in);
		ck_assert_msg(r.status == 2, "case %zu: exit %d", i, r.status);
		ck_assert_uint_eq(json_array_size(replies), 1);
		reply = json_array_get(replies, 0);
		if (v[i].id < 0)
			assert_null(reply, "id");
		else
			ck_assert_int_eq(jint(reply, "id"), v[i].id);
		ck_assert(json_is_false(json_object_get(reply, "ok")));
		ck_assert_str_eq(jstr(reply, "code"), v[i].code);
		if (v[i].msg != NULL)
			ck_assert_str_eq(jstr(reply, "message"), v[i].msg);
		else
			ck_assert_msg(strncmp(jstr(reply, "message"),
			    "bad JSON in frame: ", 19) == 0, "%s",
			    jstr(reply, "message"));
		ck_assert_ptr_nonnull(strstr(r.errout, "envctl-agent: "));
		ck_assert_ptr_nonnull(strstr(r.errout,
		    jstr(reply, "message")));
		json_decref(replies);
		tu_run_free(&r);
	}
	buf_release(&in);
}
END_TEST

START_TEST(test_truncated_input)
{
	static const struct {
		const char	*in;
		size_t		 len;
		const char	*msg;
	} v[] = {
		{ "\0\0", 2, "truncated frame: input ended after 2 header "
		    "bytes" },
		{ "\0\0\0\20{\"op\"", 9, "truncated frame: input ended after "
		    "5 of 16 bytes" },
	};
	struct buf in = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *replies;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		buf_reset(&in);
		add_frame(&in, "{\"op\":\"hello\",\"id\":1,\"protocol\":1}");
		buf_add(&in, v[i].in, v[i].len);
		replies = run_agent(&r, &in);
		ck_assert_int_eq(r.status, 2);
		ck_assert_uint_eq(json_array_size(replies), 2);
		assert_ok(json_array_get(replies, 0));
		assert_fail(json_array_get(replies, 1), "EPARSE", v[i].msg);
		assert_null(json_array_get(replies, 1), "id");
		json_decref(replies);
		tu_run_free(&r);
	}
	buf_release(&in);
}
END_TEST

START_TEST(test_pipelined)
{
	struct buf in = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *replies, *req;
	char *dir = tu_mkdtemp(), *f = tu_writes(dir, "f.py", "x = 1\n");
	size_t i;

	/* All four in one write; a slow read between quick ones. */
	add_frame(&in, "{\"op\":\"hello\",\"id\":1,\"protocol\":1}");
	req = read_req(tu_python(), f);
	json_object_set_new(req, "id", json_integer(2));
	proto_encode(&in, req, NULL);
	json_decref(req);
	add_frame(&in, "{\"op\":\"nope\",\"id\":3}");
	add_frame(&in, "{\"op\":\"hello\",\"id\":4,\"protocol\":1}");
	replies = run_agent(&r, &in);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(json_array_size(replies), 4);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(jint(json_array_get(replies, i), "id"),
		    (json_int_t)i + 1);
	assert_ok(json_array_get(replies, 1));
	ck_assert_str_eq(jstr(json_array_get(replies, 1), "target.path"), f);
	assert_fail(json_array_get(replies, 2), "EUNSUPPORTED",
	    "unknown op 'nope'");
	json_decref(replies);
	tu_run_free(&r);
	buf_release(&in);
	tu_rmtree(dir);
	free(dir);
	free(f);
}
END_TEST

START_TEST(test_read_explicit)
{
	static const char bytes[] = "\xff\xfe\0abc\n\x80 caf\xc3\xa9\n";
	char *dir = tu_mkdtemp(), *f, *rf;
	struct buf got = ENVCTL_BUF_INIT;
	struct stat st;
	struct passwd *pw;
	struct group *gr;
	json_t *reply;

	f = tu_write(dir, "site.py", bytes, sizeof(bytes) - 1);
	ck_assert_int_eq(chmod(f, 0640), 0);
	ck_assert_int_eq(stat(f, &st), 0);
	reply = ask(read_req(tu_python(), f));
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "target.path"), f);
	ck_assert_str_eq(jstr(reply, "target.source"), "explicit");
	ck_assert_uint_eq(json_array_size(jget(reply, "target.chain")), 1);
	ck_assert_str_eq(json_string_value(json_array_get(jget(reply,
	    "target.chain"), 0)), f);
	rf = real(f);
	ck_assert_str_eq(jstr(reply, "target.real"), rf);
	ck_assert(jbool(reply, "target.exists"));
	ck_assert_int_eq(jint(reply, "target.mode"), 0640);
	ck_assert_int_eq(jint(reply, "target.uid"), st.st_uid);
	ck_assert_int_eq(jint(reply, "target.gid"), st.st_gid);
	ck_assert_int_eq(jint(reply, "target.size"), sizeof(bytes) - 1);
	if (st.st_uid == 0)
		ck_assert_str_eq(jstr(reply, "target.owner"), "root");
	else if ((pw = getpwuid(st.st_uid)) != NULL)
		ck_assert_str_eq(jstr(reply, "target.owner"), pw->pw_name);
	if ((gr = getgrgid(st.st_gid)) != NULL)
		ck_assert_str_eq(jstr(reply, "target.group"), gr->gr_name);
	target_bytes(&got, reply);
	ck_assert_uint_eq(got.len, sizeof(bytes) - 1);
	ck_assert_mem_eq(got.data, bytes, sizeof(bytes) - 1);
	ck_assert_str_ne(jstr(reply, "interpreter.version"), "");
	ck_assert_int_eq(json_array_size(jget(reply, "checks")), 0);
	buf_release(&got);
	json_decref(reply);
	tu_rmtree(dir);
	free(dir);
	free(f);
	free(rf);
}
END_TEST

START_TEST(test_read_missing)
{
	char *dir = tu_mkdtemp(), *rdir = real(dir), *f, *want;
	json_t *reply;

	f = xasprintf("%s/nope.py", dir);
	want = xasprintf("%s/nope.py", rdir);
	reply = ask(read_req(tu_python(), f));
	assert_ok(reply);
	ck_assert(!jbool(reply, "target.exists"));
	ck_assert_str_eq(jstr(reply, "target.real"), want);
	ck_assert_uint_eq(json_array_size(jget(reply, "target.chain")), 1);
	ck_assert_ptr_null(jget(reply, "target.data"));
	ck_assert_ptr_null(jget(reply, "target.mode"));
	json_decref(reply);
	free(f);

	/* The directory is missing too: real is the path as given. */
	f = xasprintf("%s/nodir/x.py", dir);
	reply = ask(read_req(tu_python(), f));
	assert_ok(reply);
	ck_assert(!jbool(reply, "target.exists"));
	ck_assert_str_eq(jstr(reply, "target.real"), f);
	json_decref(reply);
	free(f);

	reply = ask(read_req(tu_python(), "relative/x.py"));
	assert_fail(reply, "EINVALID",
	    "read: 'path' must be null or an absolute path");
	json_decref(reply);
	tu_rmtree(dir);
	free(dir);
	free(rdir);
	free(want);
}
END_TEST

START_TEST(test_read_chain)
{
	char *dir = tu_mkdtemp(), *rdir = real(dir), *a, *sub, *c, *want[3];
	struct buf got = ENVCTL_BUF_INIT;
	json_t *reply, *chain;
	size_t i;

	/* a -> sub/b -> ../c, both relative. */
	sub = xasprintf("%s/sub", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	c = tu_writes(dir, "c", "import os\n");
	a = xasprintf("%s/a", dir);
	want[0] = xstrdup(a);
	want[1] = xasprintf("%s/sub/b", dir);
	want[2] = xasprintf("%s/sub/../c", dir);
	ck_assert_int_eq(symlink("sub/b", a), 0);
	ck_assert_int_eq(symlink("../c", want[1]), 0);
	reply = ask(read_req(tu_python(), a));
	assert_ok(reply);
	chain = jget(reply, "target.chain");
	ck_assert_uint_eq(json_array_size(chain), 3);
	for (i = 0; i < 3; i++)
		ck_assert_str_eq(json_string_value(json_array_get(chain, i)),
		    want[i]);
	free(want[2]);
	want[2] = xasprintf("%s/c", rdir);
	ck_assert_str_eq(jstr(reply, "target.real"), want[2]);
	ck_assert(jbool(reply, "target.exists"));
	target_bytes(&got, reply);
	ck_assert_str_eq(got.data, "import os\n");
	json_decref(reply);

	/* A dangling link: exists false, real where it points. */
	free(a);
	a = xasprintf("%s/dangling", dir);
	ck_assert_int_eq(symlink("gone.py", a), 0);
	reply = ask(read_req(tu_python(), a));
	assert_ok(reply);
	ck_assert(!jbool(reply, "target.exists"));
	ck_assert_uint_eq(json_array_size(jget(reply, "target.chain")), 2);
	free(want[2]);
	want[2] = xasprintf("%s/gone.py", rdir);
	ck_assert_str_eq(jstr(reply, "target.real"), want[2]);
	json_decref(reply);
	for (i = 0; i < 3; i++)
		free(want[i]);
	buf_release(&got);
	tu_rmtree(dir);
	free(dir);
	free(rdir);
	free(sub);
	free(a);
	free(c);
}
END_TEST

START_TEST(test_read_loop)
{
	char *dir = tu_mkdtemp(), *a, *b, *msg;
	json_t *reply;

	a = xasprintf("%s/a", dir);
	b = xasprintf("%s/b", dir);
	ck_assert_int_eq(symlink("b", a), 0);
	ck_assert_int_eq(symlink(a, b), 0);
	reply = ask(read_req(tu_python(), a));
	msg = xasprintf("symlink loop: '%s' leads through more than 40 links",
	    a);
	assert_fail(reply, "EINVALID", msg);
	json_decref(reply);
	free(msg);
	tu_rmtree(dir);
	free(dir);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_read_not_regular)
{
	char *dir = tu_mkdtemp(), *rdir = real(dir), *sub, *fifo, *msg;
	json_t *reply;

	sub = xasprintf("%s/sub", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	reply = ask(read_req(tu_python(), sub));
	msg = xasprintf("'%s/sub' is a directory, not a regular file", rdir);
	assert_fail(reply, "EINVALID", msg);
	json_decref(reply);
	free(msg);

	/* A FIFO must neither hang the agent nor be read. */
	fifo = xasprintf("%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	reply = ask(read_req(tu_python(), fifo));
	msg = xasprintf("'%s/fifo' is not a regular file", rdir);
	assert_fail(reply, "EINVALID", msg);
	json_decref(reply);
	free(msg);
	tu_rmtree(dir);
	free(dir);
	free(rdir);
	free(sub);
	free(fifo);
}
END_TEST

static char *
sparse(const char *dir, const char *name, off_t size)
{
	char *p = xasprintf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	close(fd);
	return p;
}

START_TEST(test_read_too_big)
{
	char *dir = tu_mkdtemp(), *rdir = real(dir), *big, *max, *msg;
	json_t *reply;

	big = sparse(dir, "big", 9 << 20);
	reply = ask(read_req(tu_python(), big));
	msg = xasprintf("'%s/big' is larger than 8 MiB", rdir);
	assert_fail(reply, "ETOOBIG", msg);
	json_decref(reply);

	/* Exactly the cap still travels. */
	max = sparse(dir, "max", 8 << 20);
	reply = ask(read_req(tu_python(), max));
	assert_ok(reply);
	ck_assert_int_eq(jint(reply, "target.size"), 8 << 20);
	ck_assert_uint_eq(strlen(jstr(reply, "target.data")), 11184812);
	json_decref(reply);
	tu_rmtree(dir);
	free(dir);
	free(rdir);
	free(big);
	free(max);
	free(msg);
}
END_TEST

START_TEST(test_probe_broken)
{
	struct pyenv e;
	struct buf got = ENVCTL_BUF_INIT;
	char *fixture = tu_fixture("seed-broken.sitecustomize.py"), *text;
	json_t *reply;
	size_t i, len;

	pyenv_fixture(&e, "seed-broken.sitecustomize.py");
	reply = ask(read_req(e.interp, NULL));
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "probe.startup_error.message"),
	    "Error in sitecustomize; set PYTHONVERBOSE for traceback:");
	ck_assert_str_eq(jstr(reply, "probe.startup_error.exception"),
	    "TypeError: str expected, not ellipsis");
	for (i = 0; i < 6; i++)
		ck_assert_msg(json_is_null(json_object_get(jget(reply,
		    "probe.values"), nccl[i])), "%s is set", nccl[i]);
	ck_assert_uint_eq(json_object_size(jget(reply, "probe.values")), 6);
	assert_null(reply, "probe.imported");
	ck_assert_str_eq(jstr(reply, "probe.origin"), e.site);
	ck_assert_int_eq(jint(reply, "probe.exit"), 0);
	ck_assert(!jbool(reply, "probe.shadowed"));
	ck_assert_ptr_nonnull(strstr(jstr(reply, "probe.stderr"),
	    "TypeError: str expected, not ellipsis\n"));
	ck_assert_str_eq(jstr(reply, "target.path"), e.site);
	ck_assert_str_eq(jstr(reply, "target.source"), "auto");
	ck_assert_str_eq(jstr(reply, "interpreter.path"), tu_python());
	ck_assert_ptr_nonnull(strchr(jstr(reply, "interpreter.version"),
	    '.'));
	text = tu_read(fixture, &len);
	target_bytes(&got, reply);
	ck_assert_uint_eq(got.len, len);
	ck_assert_mem_eq(got.data, text, len);
	buf_release(&got);
	json_decref(reply);
	pyenv_release(&e);
	free(fixture);
	free(text);
}
END_TEST

START_TEST(test_probe_working)
{
	static const char *const want[] = {
		"LL", "Ring", "SYS", "16", "16777216", "512",
	};
	struct pyenv e;
	json_t *reply;
	size_t i;

	pyenv_fixture(&e, "seed-working.sitecustomize.py");
	reply = ask(read_req(e.interp, NULL));
	assert_ok(reply);
	for (i = 0; i < 6; i++)
		ck_assert_str_eq(json_string_value(json_object_get(jget(reply,
		    "probe.values"), nccl[i])), want[i]);
	ck_assert_str_eq(jstr(reply, "probe.imported"), e.site);
	ck_assert_str_eq(jstr(reply, "probe.origin"), e.site);
	assert_null(reply, "probe.startup_error");
	ck_assert_str_eq(jstr(reply, "probe.stderr"), "");
	ck_assert(!jbool(reply, "probe.truncated"));
	ck_assert_str_eq(jstr(reply, "target.path"), e.site);
	ck_assert_uint_ge(json_array_size(jget(reply, "probe.site_packages")),
	    1);
	json_decref(reply);
	pyenv_release(&e);
}
END_TEST

START_TEST(test_probe_junk)
{
	struct pyenv e;
	json_t *reply;

	/* A fake report on stdout, before and at exit; noise on stderr. */
	pyenv_init(&e, "import atexit, os, sys\n"
	    "print('junk before')\n"
	    "print('" ENVCTL_PROBE_MARKER "')\n"
	    "print('{\"executable\": \"/fake\", \"version\": \"0\", "
	    "\"origin\": null, \"imported\": null, \"site_packages\": [], "
	    "\"values\": {\"NCCL_PROTO\": \"FAKE\"}}')\n"
	    "sys.stdout.write('no newline at the end')\n"
	    "sys.stderr.write('noise on stderr\\n')\n"
	    "atexit.register(lambda: print('\\n" ENVCTL_PROBE_MARKER
	    "\\n{}'))\n"
	    "os.environ['NCCL_PROTO'] = 'LL'\n");
	reply = ask(read_req(e.interp, NULL));
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "probe.values.NCCL_PROTO"), "LL");
	assert_null(reply, "probe.values.NCCL_ALGO");
	ck_assert_str_eq(jstr(reply, "interpreter.path"), tu_python());
	ck_assert_str_eq(jstr(reply, "probe.imported"), e.site);
	ck_assert_str_eq(jstr(reply, "probe.stderr"), "noise on stderr\n");
	assert_null(reply, "probe.startup_error");
	json_decref(reply);
	pyenv_release(&e);
}
END_TEST

/* Values survive the trip whatever their characters. */
START_TEST(test_probe_unicode)
{
	struct pyenv e;
	json_t *req, *reply;

	pyenv_init(&e, "import os\n"
	    "os.environ['U'] = "
	    "'caf\\u00e9 \\U0001f600 \"q\" \\\\ \\n\\t\\x01'\n"
	    "os.environ['B'] = b'a\\xffb'.decode('utf-8', 'surrogateescape')\n"
	    "os.environ['E'] = ''\n");
	req = json_pack("{s:s,s:i,s:s,s:[ssss],s:b}", "op", "read", "id", 1,
	    "interpreter", e.interp, "vars", "U", "B", "E", "U", "fork",
	    forked);
	reply = ask(req);
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "probe.values.U"),
	    "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\ \n\t\x01");
	ck_assert_str_eq(jstr(reply, "probe.values.B"), "a\xef\xbf\xbd" "b");
	ck_assert_str_eq(jstr(reply, "probe.values.E"), "");
	ck_assert_uint_eq(json_object_size(jget(reply, "probe.values")), 3);
	json_decref(reply);
	pyenv_release(&e);
}
END_TEST

START_TEST(test_probe_timeout)
{
	struct pyenv e;
	json_t *req, *reply;
	char *token, *site, *msg;
	long long t0, ms;
	pid_t pid;

	token = xasprintf("envctl-leftover-%ld-%lld", (long)getpid(),
	    now_ms());
	site = xasprintf("import subprocess, time\n"
	    "subprocess.Popen(['/bin/sh', '-c', 'sleep 30; echo %s'])\n"
	    "time.sleep(30)\n", token);
	pyenv_init(&e, site);
	req = read_req(e.interp, NULL);
	json_object_set_new(req, "timeout_ms", json_integer(1000));
	t0 = now_ms();
	reply = ask(req);
	ms = now_ms() - t0;
	/* Half of the 1 s is kept to find the file without start-up. */
	msg = xasprintf("%s did not finish starting in 0.5 s (sitecustomize "
	    "hangs?)", e.interp);
	assert_start_failed(reply, &e, msg);
	ck_assert_int_eq(jint(reply, "probe.exit"), 128 + SIGKILL);
	ck_assert_msg(ms < 2000, "took %lld ms", ms);
	/* python was reaped by the agent; its group was killed. */
	ck_assert_int_gt((pid = pyenv_pid(&e)), 0);
	ck_assert_int_eq(kill(pid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	while ((pid = token_pid(token)) > 0)
		ck_assert_msg(tu_wait_gone(pid, 2000) == 0,
		    "a child of the probe survived");
	json_decref(reply);
	pyenv_release(&e);
	free(token);
	free(site);
	free(msg);
}
END_TEST

/*
 * A daemon that escaped the process group keeps the pipes open: the agent
 * answers once python itself is gone, not when the daemon is.
 */
START_TEST(test_probe_daemon)
{
	struct pyenv e;
	json_t *reply;
	long long t0;

	pyenv_init(&e, "import os, subprocess\n"
	    "subprocess.Popen(['/bin/sleep', '3'], start_new_session=True)\n"
	    "os.environ['NCCL_PROTO'] = 'LL'\n");
	t0 = now_ms();
	reply = ask(read_req(e.interp, NULL));
	assert_ok(reply);
	ck_assert_int_lt(now_ms() - t0, 2000);
	ck_assert_str_eq(jstr(reply, "probe.values.NCCL_PROTO"), "LL");
	json_decref(reply);
	pyenv_release(&e);
}
END_TEST

START_TEST(test_probe_flood)
{
	struct pyenv e;
	json_t *reply;
	long long t0;

	pyenv_init(&e, "import os, sys\n"
	    "sys.stdout.write('x' * (10 << 20))\n"
	    "sys.stdout.flush()\n"
	    "sys.stderr.write('e' * (1 << 20))\n"
	    "os.environ['NCCL_PROTO'] = 'LL'\n");
	t0 = now_ms();
	reply = ask(read_req(e.interp, NULL));
	assert_ok(reply);
	ck_assert_int_lt(now_ms() - t0, 10000);
	ck_assert(jbool(reply, "probe.truncated"));
	ck_assert_uint_eq(strlen(jstr(reply, "probe.stderr")), 64 * 1024);
	ck_assert_str_eq(jstr(reply, "probe.values.NCCL_PROTO"), "LL");
	json_decref(reply);
	pyenv_release(&e);
}
END_TEST

START_TEST(test_probe_clean_env)
{
	static const char *const allowed[] = {
		"PATH", "PYTHONPATH",	/* the agent's; the wrapper's */
		"LC_CTYPE",		/* python's C locale coercion */
		"PWD",			/* the wrapper's /bin/sh */
	};
	struct pyenv e;
	json_t *req, *reply;
	char *keys, *k, *comma, *home;
	size_t i;
	int ok;

	/* None of the caller's environment may reach the interpreter. */
	home = getenv("HOME") != NULL ? xstrdup(getenv("HOME")) : NULL;
	setenv("PYTHONVERBOSE", "1", 1);
	setenv("PYTHONSTARTUP", "/nonexistent", 1);
	setenv("HOME", "/root-of-the-test", 1);
	setenv("NCCL_PROTO", "FROM-CALLER", 1);
	pyenv_init(&e, "import os\n"
	    "os.environ['ENVKEYS'] = ','.join(sorted(os.environ))\n"
	    "os.environ['CWD'] = os.getcwd()\n");
	req = json_pack("{s:s,s:i,s:s,s:[sssss],s:b}", "op", "read", "id",
	    1, "interpreter", e.interp, "vars", "ENVKEYS", "PATH", "HOME",
	    "CWD", "NCCL_PROTO", "fork", forked);
	reply = ask(req);
	unsetenv("PYTHONVERBOSE");
	unsetenv("PYTHONSTARTUP");
	unsetenv("NCCL_PROTO");
	if (home != NULL)
		setenv("HOME", home, 1);
	free(home);
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "probe.values.PATH"), MINPATH);
	ck_assert_str_eq(jstr(reply, "probe.values.CWD"), "/");
	assert_null(reply, "probe.values.HOME");
	assert_null(reply, "probe.values.NCCL_PROTO");
	ck_assert_str_eq(jstr(reply, "probe.stderr"), "");
	keys = xstrdup(jstr(reply, "probe.values.ENVKEYS"));
	ck_assert_ptr_nonnull(strstr(keys, "PATH"));
	for (k = keys; k != NULL; k = comma) {
		if ((comma = strchr(k, ',')) != NULL)
			*comma++ = '\0';
		for (ok = 0, i = 0; i < sizeof(allowed) / sizeof(*allowed); i++)
			ok |= strcmp(k, allowed[i]) == 0;
		ck_assert_msg(ok, "'%s' reached the interpreter", k);
	}
	free(keys);
	json_decref(reply);
	pyenv_release(&e);
}
END_TEST

/*
 * sitecustomize sees the modules of a fresh start: the fork server's own
 * imports (_socket for its socket, gc for gc.freeze()) are not left in
 * sys.modules of a forked run, and its names are gone from __main__;
 * SIGTERM, which the server catches, is back at its default, unblocked.
 */
START_TEST(test_probe_fresh_modules)
{
	struct pyenv e;
	json_t *req, *reply;

	pyenv_init(&e, "import os, sys\n"
	    "os.environ['MODS'] = ','.join(m for m in ('_socket', 'gc', "
	    "'signal', 'site') if m in sys.modules)\n"
	    "os.environ['MAIN'] = ','.join(sorted(k for k in "
	    "vars(sys.modules['__main__']) if k[:2] != '__')) or '-'\n"
	    "import signal\n"
	    "os.environ['TERM'] = '%s %s' % (signal.getsignal("
	    "signal.SIGTERM) == signal.SIG_DFL, "
	    "signal.pthread_sigmask(signal.SIG_BLOCK, []) == set())\n");
	req = json_pack("{s:s,s:i,s:s,s:[sss],s:b}", "op", "read", "id", 1,
	    "interpreter", e.interp, "vars", "MODS", "MAIN", "TERM", "fork",
	    forked);
	reply = ask(req);
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "probe.values.MODS"), "site");
	ck_assert_str_eq(jstr(reply, "probe.values.MAIN"), "-");
	ck_assert_str_eq(jstr(reply, "probe.values.TERM"), "True True");
	json_decref(reply);
	pyenv_release(&e);
}
END_TEST

START_TEST(test_probe_cannot_run)
{
	char *dir = tu_mkdtemp(), *noexec, *msg;
	json_t *reply;

	reply = ask(read_req("python9-envctl-none", NULL));
	assert_fail(reply, "EPROBE", "cannot run 'python9-envctl-none': "
	    "No such file or directory");
	json_decref(reply);
	reply = ask(read_req("/nonexistent/python3", NULL));
	assert_fail(reply, "EPROBE",
	    "cannot run '/nonexistent/python3': No such file or directory");
	json_decref(reply);
	noexec = tu_writes(dir, "python", "#!/bin/sh\n");
	reply = ask(read_req(noexec, NULL));
	msg = xasprintf("cannot run '%s': Permission denied", noexec);
	assert_fail(reply, "EPROBE", msg);
	json_decref(reply);
	reply = ask(read_req("bin/python3", NULL));
	assert_fail(reply, "EINVALID", "read: 'interpreter' must be a command "
	    "name or an absolute path");
	json_decref(reply);
	tu_rmtree(dir);
	free(dir);
	free(noexec);
	free(msg);
}
END_TEST

START_TEST(test_probe_no_report)
{
	char *dir = tu_mkdtemp(), *fails, *dies, *msg;
	json_t *reply;

	fails = tu_writes(dir, "fails", "#!/bin/sh\necho boom >&2\nexit 3\n");
	dies = tu_writes(dir, "dies", "#!/bin/sh\nkill -SEGV $$\n");
	chmod(fails, 0755);
	chmod(dies, 0755);
	reply = ask(read_req(fails, NULL));
	msg = xasprintf("%s exited with status 3 without a probe report: "
	    "boom", fails);
	assert_fail(reply, "EPROBE", msg);
	ck_assert_int_eq(jint(reply, "detail.exit"), 3);
	ck_assert_str_eq(jstr(reply, "detail.stderr"), "boom\n");
	json_decref(reply);
	free(msg);
	reply = ask(read_req(dies, NULL));
	msg = xasprintf("%s was killed by signal %d without a probe report: "
	    "(nothing on stderr)", dies, SIGSEGV);
	assert_fail(reply, "EPROBE", msg);
	ck_assert_int_eq(jint(reply, "detail.exit"), 128 + SIGSEGV);
	json_decref(reply);
	tu_rmtree(dir);
	free(dir);
	free(fails);
	free(dies);
	free(msg);
}
END_TEST

/*
 * A sitecustomize that ends start-up itself: Python's fatal error, exit
 * status 1.  (Through the fork server, which leaves this to a fresh run.)
 */
START_TEST(test_probe_site_exits)
{
	struct pyenv e;
	json_t *reply;
	char *msg;

	pyenv_init(&e, "import sys\nsys.exit(3)\n");
	reply = ask(read_req(e.interp, NULL));
	msg = xasprintf("%s exited with status 1 without a probe report: "
	    "SystemExit: 3", e.interp);
	assert_start_failed(reply, &e, msg);
	ck_assert_int_eq(jint(reply, "probe.exit"), 1);
	ck_assert_ptr_nonnull(strstr(jstr(reply, "probe.stderr"),
	    "Failed to import the site module"));
	json_decref(reply);
	pyenv_release(&e);
	free(msg);
}
END_TEST

/*
 * A sitecustomize that kills its parent: a waiter, not the agent (nor the
 * fork server, whose loss sends the run afresh): the agent lives, names
 * the signal, and finds the file without start-up.
 */
START_TEST(test_probe_kills_parent)
{
	struct pyenv e;
	json_t *reply;
	char *msg;

	pyenv_init(&e, "import os\nos.kill(os.getppid(), 9)\n");
	reply = ask(read_req(e.interp, NULL));
	/* Whether it got as far as its report before it died is a race. */
	msg = xasprintf("%s was killed by signal 9 without a probe report: "
	    "(nothing on stderr)", e.interp);
	if (jstr(reply, "probe.failed") != NULL &&
	    strcmp(jstr(reply, "probe.failed"), msg) != 0) {
		free(msg);
		msg = xasprintf("%s was killed by signal 9 at start-up "
		    "(sitecustomize kills its parent?)", e.interp);
	}
	assert_start_failed(reply, &e, msg);
	ck_assert_int_eq(jint(reply, "probe.exit"), 128 + SIGKILL);
	json_decref(reply);
	pyenv_release(&e);
	free(msg);
}
END_TEST

START_TEST(test_shadowed)
{
	struct pyenv e;
	json_t *reply;
	char *other, *link;

	pyenv_fixture(&e, "seed-working.sitecustomize.py");
	other = tu_writes(e.dir, "other.py", "# managed elsewhere\n");
	reply = ask(read_req(e.interp, other));
	assert_ok(reply);
	ck_assert(jbool(reply, "probe.shadowed"));
	ck_assert_str_eq(jstr(reply, "target.source"), "explicit");
	ck_assert_str_eq(jstr(reply, "target.path"), other);
	ck_assert_str_eq(jstr(reply, "probe.origin"), e.site);
	json_decref(reply);
	reply = ask(read_req(e.interp, e.site));
	assert_ok(reply);
	ck_assert(!jbool(reply, "probe.shadowed"));
	json_decref(reply);
	/* Through a symlink it is still the imported file. */
	link = xasprintf("%s/link.py", e.dir);
	ck_assert_int_eq(symlink("sitecustomize.py", link), 0);
	reply = ask(read_req(e.interp, link));
	assert_ok(reply);
	ck_assert(!jbool(reply, "probe.shadowed"));
	ck_assert_uint_eq(json_array_size(jget(reply, "target.chain")), 2);
	json_decref(reply);
	pyenv_release(&e);
	free(other);
	free(link);
}
END_TEST

START_TEST(test_checks)
{
	static const char *const kinds[] = {
		"dir", "dir", "dir", "file", "file", "executable",
		"executable", "executable", "file", "dir",
	};
	static const char *const names[] = {
		"d", "f", "missing", "f", "d", "e", "f", "d", "rel", "f/x",
	};
	static const char *const reasons[] = {
		NULL, "not a directory", "does not exist", NULL,
		"not a regular file", NULL, "not executable",
		"not a regular file", "not an absolute path", "does not exist",
	};
	char *dir = tu_mkdtemp(), *d, *f, *e, *p;
	json_t *req, *checks = json_array(), *reply, *res;
	size_t i;

	d = xasprintf("%s/d", dir);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	f = tu_writes(dir, "f", "data\n");
	e = tu_writes(dir, "e", "#!/bin/sh\n");
	chmod(f, 0644);
	chmod(e, 0755);
	for (i = 0; i < 10; i++) {
		p = strcmp(names[i], "rel") == 0 ? xstrdup("relative/path") :
		    xasprintf("%s/%s", dir, names[i]);
		json_array_append_new(checks, json_pack("{s:s,s:s,s:s}",
		    "name", names[i], "kind", kinds[i], "path", p));
		free(p);
	}
	req = read_req(tu_python(), f);
	json_object_set(req, "checks", checks);
	reply = ask(req);
	assert_ok(reply);
	ck_assert_uint_eq(json_array_size(jget(reply, "checks")), 10);
	for (i = 0; i < 10; i++) {
		res = json_array_get(jget(reply, "checks"), i);
		ck_assert_str_eq(jstr(res, "name"), names[i]);
		ck_assert_str_eq(jstr(res, "kind"), kinds[i]);
		ck_assert_str_eq(jstr(res, "path"), json_string_value(
		    json_object_get(json_array_get(checks, i), "path")));
		ck_assert_msg(jbool(res, "ok") == (reasons[i] == NULL),
		    "check %zu", i);
		if (reasons[i] != NULL)
			ck_assert_str_eq(jstr(res, "reason"), reasons[i]);
		else
			ck_assert_ptr_null(json_object_get(res, "reason"));
	}
	json_decref(reply);

	req = read_req(tu_python(), f);
	json_object_set_new(req, "checks", json_pack("[{s:s,s:s,s:s}]",
	    "name", "X", "kind", "socket", "path", "/x"));
	reply = ask(req);
	assert_fail(reply, "EINVALID", "read: checks[0]: unknown kind "
	    "'socket' (dir, file, executable, cuda-toolkit or ptxas)");
	json_decref(reply);
	json_decref(checks);
	tu_rmtree(dir);
	free(dir);
	free(d);
	free(f);
	free(e);
}
END_TEST

START_TEST(test_bad_args)
{
	static const struct {
		const char	*req;
		const char	*msg;
	} v[] = {
		{ "\"vars\":\"NCCL_PROTO\"",
		    "read: 'vars' must be an array of at most 1024 names" },
		{ "\"vars\":[\"A\",\"B=C\"]", "read: vars[1] is not a "
		    "variable name" },
		{ "\"vars\":[\"\"]", "read: vars[0] is not a variable name" },
		{ "\"vars\":[1]", "read: vars[0] is not a variable name" },
		{ "\"timeout_ms\":0", "read: 'timeout_ms' must be an integer "
		    "from 1 to 3600000" },
		{ "\"timeout_ms\":\"5\"", "read: 'timeout_ms' must be an "
		    "integer from 1 to 3600000" },
		{ "\"interpreter\":\"\"", "read: 'interpreter' must be a "
		    "command name or an absolute path" },
		{ "\"path\":5", "read: 'path' must be null or an absolute "
		    "path" },
		{ "\"fork\":1", "read: 'fork' must be true or false" },
		{ "\"checks\":{}", "read: 'checks' must be an array" },
		{ "\"checks\":[{\"name\":\"A\",\"kind\":\"dir\"}]",
		    "read: checks[0] must have string 'name', 'kind' and "
		    "'path'" },
	};
	struct buf in = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *replies;
	char *js;
	size_t i, n = sizeof(v) / sizeof(v[0]);

	/* All in one session: argument errors do not end it. */
	for (i = 0; i < n; i++) {
		js = xasprintf("{\"op\":\"read\",\"id\":%zu,%s}", i, v[i].req);
		add_frame(&in, js);
		free(js);
	}
	replies = run_agent(&r, &in);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(json_array_size(replies), n);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(jint(json_array_get(replies, i), "id"),
		    (json_int_t)i);
		assert_fail(json_array_get(replies, i), "EINVALID", v[i].msg);
	}
	json_decref(replies);
	tu_run_free(&r);
	buf_release(&in);
}
END_TEST

/* With no sitecustomize anywhere, auto picks site-packages. */
START_TEST(test_auto_site_packages)
{
	struct pyenv e;
	struct stat st;
	json_t *reply, *sp;
	const char *dir = NULL, *d;
	char *want;
	size_t i;

	/* Hides every sitecustomize from the probe, then fails its import
	 * so that sys.modules forgets it. */
	pyenv_init(&e, "import sys, json, importlib.util\n"
	    "sys.path[:] = [p for p in sys.path if p.endswith('-packages')]\n"
	    "raise RuntimeError('hidden')\n");
	reply = ask(read_req(e.interp, NULL));
	assert_ok(reply);
	assert_null(reply, "probe.origin");
	assert_null(reply, "probe.imported");
	ck_assert_str_eq(jstr(reply, "probe.startup_error.exception"),
	    "RuntimeError: hidden");
	ck_assert_str_eq(jstr(reply, "target.source"), "site-packages");
	sp = jget(reply, "probe.site_packages");
	for (i = 0; i < json_array_size(sp); i++) {
		d = json_string_value(json_array_get(sp, i));
		if (dir == NULL)
			dir = d;
		if (stat(d, &st) == 0 && S_ISDIR(st.st_mode)) {
			dir = d;
			break;
		}
	}
	ck_assert_ptr_nonnull(dir);
	want = xasprintf("%s/sitecustomize.py", dir);
	ck_assert_str_eq(jstr(reply, "target.path"), want);
	json_decref(reply);
	pyenv_release(&e);
	free(want);
}
END_TEST

/* This machine's own Debian layout, read only. */
START_TEST(test_auto_system)
{
	static const char link[] = "/usr/lib/python3.11/sitecustomize.py";
	static const char dest[] = "/etc/python3.11/sitecustomize.py";
	struct buf got = ENVCTL_BUF_INIT;
	struct stat st;
	json_t *reply, *chain;
	char *text;
	size_t len;

	if (lstat(link, &st) != 0 || !S_ISLNK(st.st_mode) ||
	    access("/usr/bin/python3", X_OK) != 0) {
		tu_skip("check_agent", "no Debian python3 sitecustomize "
		    "symlink here");
		return;
	}
	reply = ask(read_req("/usr/bin/python3", NULL));
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "target.path"), link);
	ck_assert_str_eq(jstr(reply, "target.source"), "auto");
	chain = jget(reply, "target.chain");
	ck_assert_uint_eq(json_array_size(chain), 2);
	ck_assert_str_eq(json_string_value(json_array_get(chain, 0)), link);
	ck_assert_str_eq(json_string_value(json_array_get(chain, 1)), dest);
	ck_assert_str_eq(jstr(reply, "target.real"), dest);
	ck_assert_str_eq(jstr(reply, "interpreter.path"), "/usr/bin/python3");
	ck_assert(!jbool(reply, "probe.shadowed"));
	ck_assert_int_eq(stat(dest, &st), 0);
	ck_assert_int_eq(jint(reply, "target.mode"), st.st_mode & 07777);
	ck_assert_int_eq(jint(reply, "target.uid"), st.st_uid);
	text = tu_read(dest, &len);
	ck_assert_ptr_nonnull(text);
	target_bytes(&got, reply);
	ck_assert_uint_eq(got.len, len);
	ck_assert_mem_eq(got.data, text, len);
	json_decref(reply);

	/* A bare name is looked up in the minimal PATH. */
	reply = ask(read_req("python3", NULL));
	assert_ok(reply);
	ck_assert_int_eq(jstr(reply, "interpreter.path")[0], '/');
	json_decref(reply);
	buf_release(&got);
	free(text);
}
END_TEST

/* SIGTERM during a probe: the probe's group dies, the agent answers and
 * exits 128 + SIGTERM. */
START_TEST(test_sigterm)
{
	struct pyenv e;
	struct buf out = ENVCTL_BUF_INIT;
	json_t *req, *reply = NULL;
	char chunk[4096], *msg;
	int to, from, st = 0;
	pid_t agent, py;
	ssize_t n;

	pyenv_init(&e, "import time\ntime.sleep(30)\n");
	req = read_req(e.interp, NULL);
	json_object_set_new(req, "timeout_ms", json_integer(30000));
	agent = agent_start(req, &to, &from);
	/*
	 * python runs: the agent waits for it, and the stop signals, blocked
	 * but in that wait, are held pending until it is there.
	 */
	ck_assert_int_eq(tu_wait_file(e.pidfile, 5000), 0);
	ck_assert_int_gt((py = pyenv_pid(&e)), 0);
	ck_assert_int_eq(kill(agent, SIGTERM), 0);
	while ((n = read(from, chunk, sizeof(chunk))) > 0)
		buf_add(&out, chunk, (size_t)n);
	ck_assert_int_eq(waitpid(agent, &st, 0), agent);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 128 + SIGTERM);
	ck_assert_int_eq(proto_decode(&reply, &out, NULL), 1);
	msg = xasprintf("'%s' was stopped: the agent is shutting down",
	    e.interp);
	assert_fail(reply, "ESYS", msg);
	ck_assert_int_eq(kill(py, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	close(to);
	close(from);
	json_decref(reply);
	buf_release(&out);
	pyenv_release(&e);
	free(msg);
}
END_TEST

/*
 * One session, two reads asking for the fork server: it starts once (the
 * wrapper runs once), serves both, and is gone when the agent is.
 */
START_TEST(test_fork_session)
{
	struct buf in = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *replies, *req, *reply;
	char *wrapper, *interp, *dir, *starts, *text;
	size_t i, len, lines = 0;
	pid_t pid;

	dir = tu_mkdtemp();
	free(tu_writes(dir, "sitecustomize.py", "import os\n"
	    "os.environ.setdefault('NCCL_PROTO', 'LL')\n"));
	starts = xasprintf("%s/starts", dir);
	wrapper = xasprintf("#!/bin/sh\necho $$ >> %s\n"
	    "exec env PYTHONPATH=%s %s \"$@\"\n", starts, dir, tu_python());
	interp = tu_writes(dir, "python", wrapper);
	ck_assert_int_eq(chmod(interp, 0755), 0);
	for (i = 0; i < 2; i++) {
		req = read_req(interp, NULL);
		json_object_set_new(req, "id", json_integer((json_int_t)i + 1));
		json_object_set_new(req, "fork", json_true());
		ck_assert_int_eq(proto_encode(&in, req, NULL), 0);
		json_decref(req);
	}
	replies = run_agent(&r, &in);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(json_array_size(replies), 2);
	for (i = 0; i < 2; i++) {
		reply = json_array_get(replies, i);
		assert_ok(reply);
		ck_assert(jbool(reply, "probe.forked"));
		ck_assert_str_eq(jstr(reply, "probe.values.NCCL_PROTO"), "LL");
		assert_null(reply, "probe.values.NCCL_ALGO");
		assert_null(reply, "probe.startup_error");
	}
	text = tu_read(starts, &len);
	for (i = 0; i < len; i++)
		lines += text[i] == '\n';
	ck_assert_uint_eq(lines, 1);
	pid = (pid_t)strtol(text, NULL, 10);
	ck_assert_int_eq(kill(pid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	json_decref(replies);
	tu_run_free(&r);
	buf_release(&in);
	tu_rmtree(dir);
	free(dir);
	free(starts);
	free(wrapper);
	free(interp);
	free(text);
}
END_TEST

/* 1 while pid runs: neither gone nor a zombie nobody reaped yet. */
static int
pid_running(pid_t pid)
{
	char *path = xasprintf("/proc/%ld/stat", (long)pid), *st;
	const char *end;
	int running = 0;

	if ((st = tu_read(path, NULL)) != NULL &&
	    (end = strrchr(st, ')')) != NULL)
		running = end[1] == ' ' && end[2] != 'Z' && end[2] != 'X';
	free(st);
	free(path);
	return running;
}

/*
 * The agent SIGKILLed while a forked run hangs in e's sitecustomize: the
 * server, told by its death signal, kills the run and goes too.
 */
static void
assert_dies_with_agent(const struct pyenv *e)
{
	json_t *req;
	char *site, *runfile, *text = NULL;
	int to, from;
	pid_t agent, server, run = -1;

	runfile = xasprintf("%s/run.pid", e->dir);
	site = xasprintf("import os, time\n"
	    "open('%s.tmp', 'w').write(str(os.getpid()))\n"
	    "os.rename('%s.tmp', '%s')\n"
	    "time.sleep(30)\n", runfile, runfile, runfile);
	free(tu_writes(e->dir, "sitecustomize.py", site));
	req = read_req(e->interp, NULL);
	json_object_set_new(req, "fork", json_true());
	json_object_set_new(req, "timeout_ms", json_integer(30000));
	agent = agent_start(req, &to, &from);
	ck_assert_int_eq(tu_wait_file(runfile, 10000), 0);
	ck_assert_ptr_nonnull(text = tu_read(runfile, NULL));
	run = (pid_t)strtol(text, NULL, 10);
	server = pyenv_pid(e);
	ck_assert_int_gt(run, 0);
	ck_assert_int_gt(server, 0);
	ck_assert_int_ne(run, server);
	ck_assert(pid_running(run));
	ck_assert_int_eq(kill(agent, SIGKILL), 0);
	ck_assert_int_eq(waitpid(agent, NULL, 0), agent);
	ck_assert_msg(tu_wait_gone(run, 3000) == 0,
	    "the run %ld outlived the agent", (long)run);
	ck_assert_msg(tu_wait_gone(server, 3000) == 0,
	    "the server %ld outlived the agent", (long)server);
	close(to);
	close(from);
	free(site);
	free(runfile);
	free(text);
}

START_TEST(test_fork_agent_killed)
{
	struct pyenv e;

	pyenv_init(&e, "");
	assert_dies_with_agent(&e);
	pyenv_release(&e);
}
END_TEST

/*
 * A wrapper that drops -S would let site (and the file) run in the
 * server: it refuses to serve, and the read starts afresh, right.
 */
START_TEST(test_fork_no_site)
{
	struct pyenv e;
	json_t *req, *reply;
	char *wrapper;

	pyenv_init(&e, "import os\nos.environ['NCCL_PROTO'] = 'LL'\n");
	wrapper = xasprintf("#!/bin/sh\n[ \"$1\" = -S ] && shift\n"
	    "exec env PYTHONPATH=%s %s \"$@\"\n", e.dir, tu_python());
	free(tu_writes(e.dir, "python", wrapper));
	req = read_req(e.interp, NULL);
	json_object_set_new(req, "fork", json_true());
	reply = ask(req);	/* which asserts probe.forked is false */
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "probe.values.NCCL_PROTO"), "LL");
	assert_null(reply, "probe.startup_error");
	json_decref(reply);
	pyenv_release(&e);
	free(wrapper);
}
END_TEST

/*
 * e's wrapper hangs (as sleep, its pid in e->pidfile) when asked to start
 * the fork server, and runs the interpreter otherwise.
 */
static void
wrap_hung_server(struct pyenv *e)
{
	char *wrapper = xasprintf("#!/bin/sh\n[ \"$1\" = -S ] && echo $$ > %s "
	    "&& exec sleep 30\nexec env PYTHONPATH=%s %s \"$@\"\n",
	    e->pidfile, e->dir, tu_python());

	free(tu_writes(e->dir, "python", wrapper));
	free(wrapper);
}

/* The hung server (the sleep) was killed and reaped. */
static void
assert_server_reaped(const struct pyenv *e)
{
	pid_t pid;

	ck_assert_int_gt((pid = pyenv_pid(e)), 0);
	ck_assert_int_eq(kill(pid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
}

/*
 * A wrapper that hangs when it is asked to start the server: past the
 * run's timeout the agent gives up on the server, kills it, and the read
 * starts afresh (which the wrapper lets through), right and in time.
 */
START_TEST(test_fork_server_hangs)
{
	struct pyenv e;
	json_t *req, *reply;
	long long t0, ms;

	pyenv_init(&e, "import os\nos.environ['NCCL_PROTO'] = 'LL'\n");
	wrap_hung_server(&e);
	req = read_req(e.interp, NULL);
	json_object_set_new(req, "fork", json_true());
	json_object_set_new(req, "timeout_ms", json_integer(1000));
	t0 = now_ms();
	reply = ask(req);	/* which asserts probe.forked is false */
	ms = now_ms() - t0;
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "probe.values.NCCL_PROTO"), "LL");
	ck_assert_msg(ms < 5000, "took %lld ms", ms);
	assert_server_reaped(&e);
	json_decref(reply);
	pyenv_release(&e);
}
END_TEST

/*
 * Sends read requests for e's interpreter in one session, each with the
 * flag it is given ("fork", "prefork") and its timeout_ms; the replies.
 */
static json_t *
read_session(struct tu_run *r, const struct pyenv *e, const char *const *flag,
    const int *timeout_ms, size_t n)
{
	struct buf in = ENVCTL_BUF_INIT;
	json_t *req, *replies;
	size_t i;

	for (i = 0; i < n; i++) {
		req = read_req(e->interp, NULL);
		json_object_set_new(req, "id", json_integer((json_int_t)i + 1));
		json_object_set_new(req, "fork", json_false());
		json_object_set_new(req, flag[i], json_true());
		json_object_set_new(req, "timeout_ms",
		    json_integer(timeout_ms[i]));
		ck_assert_int_eq(proto_encode(&in, req, NULL), 0);
		json_decref(req);
	}
	replies = run_agent(r, &in);
	ck_assert_msg(r->status == 0, "agent exited %d: %s", r->status,
	    r->errout);
	ck_assert_uint_eq(json_array_size(replies), n);
	buf_release(&in);
	return replies;
}

/*
 * "prefork": the read runs afresh while the server starts, and the next
 * run is served by it: one server start (the -S line), one fresh start.
 */
START_TEST(test_prefork_session)
{
	static const char *const flags[] = { "prefork", "fork", "fork" };
	static const int ms[] = { 10000, 10000, 10000 };
	struct tu_run r;
	struct pyenv e;
	json_t *replies, *reply;
	char *wrapper, *starts, *text;
	size_t i, len, lines = 0, servers = 0;

	pyenv_init(&e, "import os\nos.environ.setdefault('NCCL_PROTO', "
	    "'LL')\n");
	starts = xasprintf("%s/starts", e.dir);
	wrapper = xasprintf("#!/bin/sh\necho \"$$ $1\" >> %s\n"
	    "exec env PYTHONPATH=%s %s \"$@\"\n", starts, e.dir, tu_python());
	free(tu_writes(e.dir, "python", wrapper));
	replies = read_session(&r, &e, flags, ms, 3);
	for (i = 0; i < 3; i++) {
		reply = json_array_get(replies, i);
		assert_ok(reply);
		ck_assert_int_eq(jbool(reply, "probe.forked"), i > 0);
		ck_assert_str_eq(jstr(reply, "probe.values.NCCL_PROTO"), "LL");
		assert_null(reply, "probe.startup_error");
	}
	text = tu_read(starts, &len);
	for (i = 0; i < len; i++) {
		lines += text[i] == '\n';
		servers += strncmp(text + i, " -S\n", 4) == 0;
	}
	ck_assert_msg(lines == 2 && servers == 1, "starts:\n%s", text);
	json_decref(replies);
	tu_run_free(&r);
	pyenv_release(&e);
	free(starts);
	free(wrapper);
	free(text);
}
END_TEST

/*
 * A server that hangs as it starts does not hold up the read that
 * prestarted it (whose 20 s would let it wait 10 s); the next run waits
 * for it only up to its own timeout, then starts afresh, right; the hung
 * server is killed and reaped.
 */
START_TEST(test_prefork_server_hangs)
{
	static const char *const flags[] = { "prefork", "fork" };
	static const int timeouts[] = { 20000, 1000 };
	struct tu_run r;
	struct pyenv e;
	json_t *replies, *reply;
	long long t0, ms;
	size_t i;

	pyenv_init(&e, "import os\nos.environ['NCCL_PROTO'] = 'LL'\n");
	wrap_hung_server(&e);
	t0 = now_ms();
	replies = read_session(&r, &e, flags, timeouts, 2);
	ms = now_ms() - t0;
	for (i = 0; i < 2; i++) {
		reply = json_array_get(replies, i);
		assert_ok(reply);
		ck_assert(!jbool(reply, "probe.forked"));
		ck_assert_str_eq(jstr(reply, "probe.values.NCCL_PROTO"), "LL");
	}
	ck_assert_msg(ms < 8000, "took %lld ms", ms);
	assert_server_reaped(&e);
	json_decref(replies);
	tu_run_free(&r);
	pyenv_release(&e);
}
END_TEST

/*
 * Makes e's wrapper run a virtual environment of the test python (a
 * symlink and pyvenv.cfg under e->dir/venv) whose site-packages holds
 * test.pth, the line pth.  e->classic: the fork server cannot keep what
 * site-packages printed there (no os.memfd_create(), before 3.8), so
 * each of its runs processes them itself.
 */
static void
pyenv_venv(struct pyenv *e, const char *pth)
{
	char *argv[] = { (char *)tu_python(), "-I", "-c", "import os, sys\n"
	    "print(sys.executable)\nprint('%d.%d' % sys.version_info[:2])\n"
	    "print(hasattr(os, 'memfd_create'))", NULL };
	const char *const dirs[] = { "venv", "venv/bin", "venv/lib", NULL };
	struct tu_run r;
	char *nl, *p, *sp, *text;
	size_t i;

	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull((nl = strchr(r.out, '\n')));
	*nl = '\0';
	nl[strcspn(nl + 1, "\n") + 1] = '\0';
	e->classic = strstr(nl + 1 + strlen(nl + 1) + 1, "True") == NULL;
	for (i = 0; dirs[i] != NULL; i++) {
		p = xasprintf("%s/%s", e->dir, dirs[i]);
		ck_assert_int_eq(mkdir(p, 0755), 0);
		free(p);
	}
	p = xasprintf("%s/venv/lib/python%s", e->dir, nl + 1);
	sp = xasprintf("%s/site-packages", p);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(mkdir(sp, 0755), 0);
	free(p);
	p = xasprintf("%s/venv/bin/python3", e->dir);
	ck_assert_int_eq(symlink(r.out, p), 0);
	text = xasprintf("home = %.*s\ninclude-system-site-packages = "
	    "false\n", (int)(strrchr(r.out, '/') - r.out), r.out);
	free(tu_writes(e->dir, "venv/pyvenv.cfg", text));
	free(text);
	text = xasprintf("%s\n", pth);
	free(tu_writes(sp, "test.pth", text));
	pyenv_wrap(e, p);
	free(text);
	free(sp);
	free(p);
	tu_run_free(&r);
}

/*
 * pyenv_init() with an empty sitecustomize.py and pyenv_venv() with a .pth
 * line that logs its pid to DIR/pth.log and sets PTH, then runs more.
 */
static void
pyenv_pth(struct pyenv *e, const char *more)
{
	char *line;

	pyenv_init(e, "");
	line = xasprintf("import os, sys; open('%s/pth.log', 'a').write("
	    "'%%d\\n' %% os.getpid()); os.environ['PTH'] = 'set'; %s",
	    e->dir, more);
	pyenv_venv(e, line);
	free(line);
}

/* How many times the .pth ran (lines of its log). */
static size_t
pth_runs(const struct pyenv *e)
{
	char *path = xasprintf("%s/pth.log", e->dir), *text;
	size_t len = 0, i, n = 0;

	text = tu_read(path, &len);
	for (i = 0; i < len; i++)
		n += text[i] == '\n';
	free(text);
	free(path);
	return n;
}

/* The pid on line i (from 0) of the .pth file's log, or -1. */
static pid_t
pth_pid(const struct pyenv *e, size_t i)
{
	char *path = xasprintf("%s/pth.log", e->dir), *text;
	const char *s;
	pid_t pid = -1;

	s = text = tu_read(path, NULL);
	while (s != NULL && i-- > 0)
		if ((s = strchr(s, '\n')) != NULL)
			s++;
	if (s != NULL && *s != '\0')
		pid = (pid_t)strtol(s, NULL, 10);
	free(text);
	free(path);
	return pid;
}

/* The replies of one session of n reads of PTH. */
static json_t *
pth_session(const struct pyenv *e, size_t n, int fork)
{
	struct buf in = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *req, *replies;
	size_t i;

	for (i = 0; i < n; i++) {
		req = json_pack("{s:s,s:I,s:s,s:[s],s:b}", "op", "read",
		    "id", (json_int_t)i + 1, "interpreter", e->interp,
		    "vars", "PTH", "fork", fork);
		ck_assert_int_eq(proto_encode(&in, req, NULL), 0);
		json_decref(req);
	}
	replies = run_agent(&r, &in);
	ck_assert_msg(r.status == 0, "agent exited %d: %s", r.status,
	    r.errout);
	ck_assert_uint_eq(json_array_size(replies), n);
	tu_run_free(&r);
	buf_release(&in);
	return replies;
}

/* Each reply read PTH through the fork server; with stderr, that too. */
static void
assert_pth_forked(const json_t *replies, const char *stderr_text)
{
	const json_t *reply;
	size_t i;

	for (i = 0; i < json_array_size(replies); i++) {
		reply = json_array_get(replies, i);
		assert_ok(reply);
		ck_assert(jbool(reply, "probe.forked"));
		ck_assert_str_eq(jstr(reply, "probe.values.PTH"), "set");
		if (stderr_text != NULL)
			ck_assert_str_eq(jstr(reply, "probe.stderr"),
			    stderr_text);
	}
}

/*
 * The fork server processes site-packages once for the session's runs:
 * in a session of two forked reads the .pth file runs as often as in one
 * fresh start (twice, in a virtual environment: CPython's venv() and
 * main() both process its site-packages), and each run sees what it did
 * (the variable it set, what it wrote on stderr) as a fresh start does.
 * The .pth file reads stdin too: /dev/null, as in a fresh start, not the
 * server's socket.
 */
START_TEST(test_fork_pth_once)
{
	struct pyenv e;
	json_t *fresh, *replies, *one;
	size_t k;

	pyenv_pth(&e, "print('pth out'); sys.stderr.write('pth err\\n'); "
	    "sys.stdin.read()");
	fresh = pth_session(&e, 1, 0);
	one = json_array_get(fresh, 0);
	assert_ok(one);
	ck_assert(!jbool(one, "probe.forked"));
	ck_assert_str_eq(jstr(one, "probe.values.PTH"), "set");
	ck_assert_ptr_nonnull(strstr(jstr(one, "probe.stderr"), "pth err\n"));
	ck_assert_uint_gt((k = pth_runs(&e)), 0);
	replies = pth_session(&e, 2, 1);
	assert_pth_forked(replies, jstr(one, "probe.stderr"));
	ck_assert_uint_eq(pth_runs(&e), (e.classic ? 3 : 2) * k);
	json_decref(fresh);
	json_decref(replies);
	pyenv_release(&e);
}
END_TEST

/*
 * A .pth file that starts a thread: forking after it could deadlock on
 * the thread's locks, so the server is started again without processing
 * site-packages (killing the first), and each run does it itself.
 */
START_TEST(test_fork_pth_thread)
{
	struct pyenv e;
	json_t *fresh, *replies;
	size_t k;
	pid_t first, server;

	pyenv_pth(&e, "import threading, time; threading.Thread("
	    "target=time.sleep, args=(30,), daemon=True).start()");
	fresh = pth_session(&e, 1, 0);
	assert_ok(json_array_get(fresh, 0));
	k = pth_runs(&e);
	first = pth_pid(&e, 0);
	replies = pth_session(&e, 2, 1);
	assert_pth_forked(replies, NULL);
	/* The first server's processing, then each run's. */
	ck_assert_uint_eq(pth_runs(&e), (e.classic ? 3 : 4) * k);
	if (e.classic)
		goto out;
	server = pth_pid(&e, k);
	ck_assert_int_gt(server, 0);
	ck_assert_int_ne(server, first);
	ck_assert_int_ne(server, pth_pid(&e, 2 * k));
	ck_assert_int_eq(kill(server, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
out:
	json_decref(fresh);
	json_decref(replies);
	pyenv_release(&e);
}
END_TEST

/*
 * A .pth file that ends start-up (SystemExit): the server dies with it,
 * and the reads start afresh and fail as a fresh start does.
 */
START_TEST(test_fork_pth_exits)
{
	struct pyenv e;
	json_t *fresh, *replies, *reply;
	size_t i;

	pyenv_pth(&e, "sys.exit(3)");
	fresh = pth_session(&e, 1, 0);
	reply = json_array_get(fresh, 0);
	ck_assert_ptr_nonnull(jstr(reply, "probe.failed"));
	ck_assert_msg(strncmp(jstr(reply, "probe.failed"), e.interp,
	    strlen(e.interp)) == 0, "%s", jstr(reply, "probe.failed"));
	replies = pth_session(&e, 2, 1);
	for (i = 0; i < 2; i++)
		assert_start_failed(json_array_get(replies, i), &e,
		    jstr(reply, "probe.failed"));
	json_decref(fresh);
	json_decref(replies);
	pyenv_release(&e);
}
END_TEST

/*
 * A .pth file that ignores SIGTERM: the server takes SIGTERM (its death
 * signal) only after site-packages, so it still dies with the agent and
 * kills the run, which inherits what the .pth file set.
 */
START_TEST(test_fork_pth_sigterm)
{
	struct pyenv e;

	pyenv_pth(&e, "import signal; signal.signal(signal.SIGTERM, "
	    "signal.SIG_IGN)");
	assert_dies_with_agent(&e);
	pyenv_release(&e);
}
END_TEST

/* Sets path's mtime (and atime) to days ago. */
static void
age(const char *path, int days)
{
	struct timespec ts[2];

	ts[0].tv_sec = ts[1].tv_sec = time(NULL) - (time_t)days * 86400;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW),
	    0);
}

static int
exists(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct stat st;
	int r = lstat(p, &st) == 0;

	free(p);
	return r;
}

/* Runs the agent at path on an empty session: it answers nothing. */
static void
run_empty(const char *path)
{
	char *argv[] = { (char *)path, NULL };
	struct tu_run r;

	tu_run(&r, argv, NULL, "", 0);
	ck_assert_msg(r.status == 0, "%s exited %d: %s", path, r.status,
	    r.errout);
	tu_run_free(&r);
}

/*
 * An agent started from its cache file marks it used and removes the
 * versions unused for 30 days and day-old upload temps; nothing else.
 */
START_TEST(test_cache_tidy)
{
	static const char *const hex =
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	static const char scripts[] = { '1', '2', '3', '9', 'a' };
	char *dir = tu_mkdtemp(), *bin, *self, *p, *name, *tmp, *link, *pyc;
	char *sname;
	struct stat st;
	size_t len, i;
	int gone;

	bin = tu_read(agent_bin(), &len);
	ck_assert_ptr_nonnull(bin);
	name = xasprintf("envctl-agent-%.63s1", hex);
	self = tu_write(dir, name, bin, len);
	ck_assert_int_eq(chmod(self, 0700), 0);
	age(self, 3);
	free(name);
#define MAKE(n, days) do {						\
		p = tu_writes(dir, (n), "x");				\
		age(p, (days));						\
		free(p);						\
	} while (0)
	name = xasprintf("envctl-agent-%.63s2", hex);
	MAKE(name, 40);			/* another version, unused: goes */
	free(name);
	name = xasprintf("envctl-agent-%.63s3", hex);
	MAKE(name, 5);			/* used 5 days ago: stays */
	free(name);
	tmp = xasprintf(".envctl-agent-%.63s4.tmp-a1b2c3d4e5f6", hex);
	MAKE(tmp, 2);			/* a dead upload: goes */
	free(tmp);
	tmp = xasprintf(".envctl-agent-%.63s5.tmp-a1b2c3d4e5f6", hex);
	MAKE(tmp, 0);			/* an upload in progress: stays */
	free(tmp);
	MAKE("envctl-agent-notes", 400);	/* not an agent name: stays */
	name = xasprintf("envctl-agent-%.63sZ", hex);
	MAKE(name, 400);			/* not hex: stays */
	free(name);
	name = xasprintf("envctl-agent-%.63s6", hex);	/* a directory */
	p = xasprintf("%s/%s", dir, name);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	age(p, 400);
	free(p);
	free(name);
	name = xasprintf("envctl-agent-%.63s7", hex);	/* a symlink */
	link = xasprintf("%s/%s", dir, name);
	ck_assert_int_eq(symlink("/nonexistent", link), 0);
	age(link, 400);
	/*
	 * Scripts and their bytecode, unused for two days: of a version
	 * removed now (2) or gone before (9) they go, of a kept one (3) and
	 * its own (1) they stay; of a gone one used today (a), they stay.
	 */
	pyc = xasprintf("%s/__pycache__", dir);
	ck_assert_int_eq(mkdir(pyc, 0755), 0);
	for (i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		sname = xasprintf("envctl-agent-%.63s%c.probe.py", hex,
		    scripts[i]);
		MAKE(sname, scripts[i] == 'a' ? 0 : 2);
		free(sname);
		sname = xasprintf("envctl-agent-%.63s%c.probe.cpython-311.pyc",
		    hex, scripts[i]);
		free(tu_writes(pyc, sname, "x"));
		free(sname);
		/* Data files (the checks' answers) go with their version. */
		sname = xasprintf("envctl-agent-%.63s%c.checks", hex,
		    scripts[i]);
		MAKE(sname, scripts[i] == 'a' ? 0 : 2);
		free(sname);
	}
	tmp = xasprintf(".envctl-agent-%.63s3.server.py.tmp-a1b2c3d4e5f6",
	    hex);
	MAKE(tmp, 2);			/* a dead script temp: goes */
	free(tmp);
	tmp = xasprintf(".envctl-agent-%.63s3.checks.tmp-a1b2c3d4e5f6", hex);
	MAKE(tmp, 2);			/* a dead data temp: goes */
	free(tmp);
	MAKE("envctl-agent-notes.checks", 400);	/* no agent name */
	MAKE("envctl-agent-notes.probe.py", 400);	/* no agent name */

	run_empty(self);
	for (i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		gone = scripts[i] == '2' || scripts[i] == '9';
		sname = xasprintf("envctl-agent-%.63s%c.probe.py", hex,
		    scripts[i]);
		ck_assert_msg(exists(dir, sname) == !gone, "%s", sname);
		free(sname);
		sname = xasprintf("envctl-agent-%.63s%c.probe.cpython-311.pyc",
		    hex, scripts[i]);
		ck_assert_msg(exists(pyc, sname) == !gone, "%s", sname);
		free(sname);
		sname = xasprintf("envctl-agent-%.63s%c.checks", hex,
		    scripts[i]);
		ck_assert_msg(exists(dir, sname) == !gone, "%s", sname);
		free(sname);
	}
	ck_assert(!exists(dir, ".envctl-agent-0123456789abcdef0123456789abc"
	    "def0123456789abcdef0123456789abcde3.server.py.tmp-a1b2c3d4e5f6"));
	ck_assert(exists(dir, "envctl-agent-notes.probe.py"));
	ck_assert(!exists(dir, ".envctl-agent-0123456789abcdef0123456789abc"
	    "def0123456789abcdef0123456789abcde3.checks.tmp-a1b2c3d4e5f6"));
	ck_assert(exists(dir, "envctl-agent-notes.checks"));
	free(pyc);
	ck_assert_int_eq(stat(self, &st), 0);
	ck_assert_msg(time(NULL) - st.st_mtime < 600, "own mtime not renewed");
	ck_assert(!exists(dir, "envctl-agent-0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcde2"));
	ck_assert(exists(dir, "envctl-agent-0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcde3"));
	ck_assert(!exists(dir, ".envctl-agent-0123456789abcdef0123456789abcd"
	    "ef0123456789abcdef0123456789abcde4.tmp-a1b2c3d4e5f6"));
	ck_assert(exists(dir, ".envctl-agent-0123456789abcdef0123456789abcde"
	    "f0123456789abcdef0123456789abcde5.tmp-a1b2c3d4e5f6"));
	ck_assert(exists(dir, "envctl-agent-notes"));
	ck_assert(exists(dir, "envctl-agent-0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdeZ"));
	ck_assert(exists(dir, "envctl-agent-0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcde6"));
	ck_assert(exists(dir, name));
	free(name);

	/* Started from any other name (an install, a test build): nothing. */
	name = xasprintf("envctl-agent-%.63s8", hex);
	MAKE(name, 40);
	free(self);
	self = tu_write(dir, "envctl-agent", bin, len);
	ck_assert_int_eq(chmod(self, 0700), 0);
	run_empty(self);
	ck_assert(exists(dir, name));
#undef MAKE
	tu_rmtree(dir);
	free(dir);
	free(bin);
	free(self);
	free(name);
	free(link);
}
END_TEST

/* The name in dir that starts with prefix and ends with suffix, or NULL. */
static char *
find_name(const char *dir, const char *prefix, const char *suffix)
{
	size_t np = strlen(prefix), ns = strlen(suffix), n;
	struct dirent *de;
	char *found = NULL;
	DIR *dp;

	if ((dp = opendir(dir)) == NULL)
		return NULL;
	while (found == NULL && (de = readdir(dp)) != NULL) {
		n = strlen(de->d_name);
		if (n >= np + ns && strncmp(de->d_name, prefix, np) == 0 &&
		    strcmp(de->d_name + n - ns, suffix) == 0)
			found = xstrdup(de->d_name);
	}
	closedir(dp);
	return found;
}

/* dir/AGENT_CACHED_NAME.name.py holds a script that starts with head. */
static void
assert_script(const char *dir, const char *name, const char *head)
{
	char *path = xasprintf("%s/" AGENT_CACHED_NAME ".%s.py", dir, name);
	struct stat st;
	size_t len;
	char *text;

	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_uid, geteuid());
	text = tu_read(path, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strncmp(text, head, strlen(head)) == 0, "%s starts "
	    "with '%.40s'", path, text);
	free(text);
	free(path);
}

/* The probe of seed-working through the agent as it is set up now. */
static void
probe_working(void)
{
	struct pyenv e;
	json_t *reply;

	pyenv_fixture(&e, "seed-working.sitecustomize.py");
	reply = ask(read_req(e.interp, NULL));
	assert_ok(reply);
	ck_assert_str_eq(json_string_value(json_object_get(jget(reply,
	    "probe.values"), "NCCL_PROTO")), "LL");
	ck_assert_str_eq(jstr(reply, "probe.imported"), e.site);
	json_decref(reply);
	pyenv_release(&e);
}

/*
 * Run from its cache, the agent keeps the probe as a file there, and the
 * fork server's script once a server starts; Python keeps their bytecode
 * in __pycache__ beside them.
 */
START_TEST(test_cache_scripts)
{
	const char *dir;
	struct stat st;
	char *pyc, *name;

	agent_cache();
	dir = agent_cache_dir();
	pyc = xasprintf("%s/__pycache__", dir);
	probe_working();
	assert_script(dir, "probe", "# probe.py - ");
	ck_assert(!exists(dir, AGENT_CACHED_NAME ".server.py"));
	name = find_name(pyc, AGENT_CACHED_NAME ".probe.", ".pyc");
	ck_assert_msg(name != NULL, "no bytecode of the probe in %s", pyc);
	free(name);

	forked = 1;
	probe_working();
	assert_script(dir, "server", "# forkserver.py - ");
	name = find_name(pyc, AGENT_CACHED_NAME ".server.", ".pyc");
	ck_assert_msg(name != NULL, "no bytecode of the server in %s", pyc);
	free(name);
	/*
	 * Served from that bytecode next time, with the same outcome; a
	 * script used again after a day is marked used (cache_tidy).
	 */
	name = xasprintf("%s/" AGENT_CACHED_NAME ".probe.py", dir);
	age(name, 3);
	probe_working();
	ck_assert_int_eq(stat(name, &st), 0);
	ck_assert_msg(time(NULL) - st.st_mtime < 600, "script not marked used");
	free(name);
	free(pyc);
	agent_uncache();
}
END_TEST

/*
 * A script file that differs from the agent's (damaged, or a crash mid
 * write) is written again, and bytecode kept for it is removed: only its
 * own, never another version's.
 */
START_TEST(test_cache_script_damaged)
{
	static const char other[] = "envctl-agent-"
	    "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	    ".probe.cpython-19.pyc";
	const char *dir;
	char *pyc;

	agent_cache();
	dir = agent_cache_dir();
	free(tu_writes(dir, AGENT_CACHED_NAME ".probe.py",
	    "raise SystemExit(3)\n"));
	pyc = xasprintf("%s/__pycache__", dir);
	ck_assert_int_eq(mkdir(pyc, 0755), 0);
	free(tu_writes(pyc, AGENT_CACHED_NAME ".probe.cpython-19.pyc", "x"));
	free(tu_writes(pyc, other, "x"));

	probe_working();
	assert_script(dir, "probe", "# probe.py - ");
	ck_assert(!exists(pyc, AGENT_CACHED_NAME ".probe.cpython-19.pyc"));
	ck_assert(exists(pyc, other));
	free(pyc);
	agent_uncache();
}
END_TEST

/* Overwrites what follows the 16-byte header of dir/name with junk. */
static void
damage_bytecode(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name), *data;
	size_t len;

	data = tu_read(path, &len);
	ck_assert_ptr_nonnull(data);
	ck_assert_uint_gt(len, 32);
	memset(data + 16, 0xff, len - 16);
	free(tu_write(dir, name, data, len));
	free(data);
	free(path);
}

/*
 * Bytecode that cannot be loaded (a crash cut it, the disk damaged it)
 * costs a compile, not the probe: a fresh run and the fork server (its
 * own script and the probe) both fall back to the file.
 */
START_TEST(test_cache_bad_bytecode)
{
	const char *names[] = { "probe", "server" };
	char *pyc, *prefix, *name;
	size_t i;

	agent_cache();
	pyc = xasprintf("%s/__pycache__", agent_cache_dir());
	forked = 1;
	probe_working();
	for (i = 0; i < 2; i++) {
		prefix = xasprintf(AGENT_CACHED_NAME ".%s.", names[i]);
		name = find_name(pyc, prefix, ".pyc");
		ck_assert_msg(name != NULL, "no bytecode of the %s", names[i]);
		damage_bytecode(pyc, name);
		free(name);
		free(prefix);
	}
	probe_working();
	forked = 0;
	probe_working();
	free(pyc);
	agent_uncache();
}
END_TEST

/* root running a user's cache (through sudo) leaves no files of its own. */
START_TEST(test_cache_other_owner)
{
	char *self;

	if (geteuid() != 0) {
		tu_skip("test_cache_other_owner", "needs root");
		return;
	}
	agent_cache();
	self = xasprintf("%s/" AGENT_CACHED_NAME, agent_cache_dir());
	ck_assert_int_eq(chown(self, 65534, 65534), 0);
	forked = 1;
	probe_working();
	ck_assert(!exists(agent_cache_dir(), AGENT_CACHED_NAME ".probe.py"));
	ck_assert(!exists(agent_cache_dir(), AGENT_CACHED_NAME ".server.py"));
	ck_assert(!exists(agent_cache_dir(), "__pycache__"));
	free(self);
	agent_uncache();
}
END_TEST

static void
add_probe_tests(TCase *tc)
{
	tcase_add_test(tc, test_probe_broken);
	tcase_add_test(tc, test_probe_working);
	tcase_add_test(tc, test_probe_junk);
	tcase_add_test(tc, test_probe_unicode);
	tcase_add_test(tc, test_probe_timeout);
	tcase_add_test(tc, test_probe_flood);
	tcase_add_test(tc, test_probe_daemon);
	tcase_add_test(tc, test_probe_clean_env);
	tcase_add_test(tc, test_probe_fresh_modules);
	tcase_add_test(tc, test_probe_cannot_run);
	tcase_add_test(tc, test_probe_no_report);
	tcase_add_test(tc, test_probe_site_exits);
	tcase_add_test(tc, test_probe_kills_parent);
	tcase_add_test(tc, test_shadowed);
	tcase_add_test(tc, test_auto_site_packages);
	tcase_add_test(tc, test_auto_system);
}

int
main(void)
{
	Suite *s = suite_create("agent");
	TCase *proto = tcase_create("session");
	TCase *rd = tcase_create("read");
	TCase *pr = tcase_create("probe");
	TCase *prf = tcase_create("probe-forked");
	TCase *prc = tcase_create("probe-cached");
	TCase *prfc = tcase_create("probe-forked-cached");
	SRunner *sr;
	int failed;

	tcase_add_test(proto, test_version);
	tcase_add_test(proto, test_empty_session);
	tcase_add_test(proto, test_requests_arg);
	tcase_add_test(proto, test_hello);
	tcase_add_test(proto, test_hello_protocol);
	tcase_add_test(proto, test_unknown_op);
	tcase_add_test(proto, test_malformed);
	tcase_add_test(proto, test_truncated_input);
	tcase_add_test(proto, test_pipelined);
	tcase_add_test(proto, test_sigterm);
	tcase_add_test(proto, test_cache_tidy);
	tcase_add_test(proto, test_cache_scripts);
	tcase_add_test(proto, test_cache_script_damaged);
	tcase_add_test(proto, test_cache_bad_bytecode);
	tcase_add_test(proto, test_cache_other_owner);
	tcase_add_test(rd, test_read_explicit);
	tcase_add_test(rd, test_read_missing);
	tcase_add_test(rd, test_read_chain);
	tcase_add_test(rd, test_read_loop);
	tcase_add_test(rd, test_read_not_regular);
	tcase_add_test(rd, test_read_too_big);
	tcase_add_test(rd, test_checks);
	tcase_add_test(rd, test_bad_args);
	add_probe_tests(pr);
	tcase_add_test(pr, test_fork_session);
	tcase_add_test(pr, test_fork_no_site);
	tcase_add_test(pr, test_fork_agent_killed);
	tcase_add_test(pr, test_fork_server_hangs);
	tcase_add_test(pr, test_prefork_session);
	tcase_add_test(pr, test_prefork_server_hangs);
	tcase_add_test(pr, test_fork_pth_once);
	tcase_add_test(pr, test_fork_pth_thread);
	tcase_add_test(pr, test_fork_pth_exits);
	tcase_add_test(pr, test_fork_pth_sigterm);
	add_probe_tests(prf);
	tcase_add_checked_fixture(prf, set_forked, NULL);
	add_probe_tests(prc);
	tcase_add_checked_fixture(prc, agent_cache, agent_uncache);
	add_probe_tests(prfc);
	tcase_add_test(prfc, test_fork_pth_once);
	tcase_add_test(prfc, test_fork_pth_thread);
	tcase_add_checked_fixture(prfc, set_forked_cached, agent_uncache);
	suite_add_tcase(s, proto);
	suite_add_tcase(s, rd);
	suite_add_tcase(s, pr);
	suite_add_tcase(s, prf);
	suite_add_tcase(s, prc);
	suite_add_tcase(s, prfc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
