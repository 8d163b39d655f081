/*
 * check_agent_apply.c - the agent's write side: apply, rollback, backups,
 * run as the real envctl-agent binary ($ENVCTL_AGENT) fed frames on stdin,
 * against the host's real python3.  Every file, lock and backup lives in a
 * private temporary directory; the tests that mount (ENOSPC, EROFS) do it
 * in a mount namespace of their own.  Fault points need an agent built with
 * -DENVCTL_FAULTS: $ENVCTL_AGENT_FAULTS, or $ENVCTL_AGENT when it has them.
 */
#define _GNU_SOURCE	/* unshare(2) */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "agenttest.h"
#include "controller/hash.h"
#include "testutil.h"

static const char *const nccl[] = {
	"NCCL_PROTO", "NCCL_ALGO", "NCCL_P2P_LEVEL", "NCCL_MAX_NCHANNELS",
	"NCCL_BUFFSIZE", "NCCL_NTHREADS",
};
static const char *const want[] = {
	"LL", "Ring", "SYS", "16", "16777216", "512",
};

/* ---- running the agent ---- */

/*
 * Runs bin with req (taken) in a session of its own; *status gets its exit
 * status.  Returns the one reply, or NULL when it sent none.
 */
static json_t *
ask_bin(const char *bin, json_t *req, int *status)
{
	char *argv[] = { (char *)bin, NULL };
	struct buf in = ENVCTL_BUF_INIT, out = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *reply = NULL, *extra = NULL;
	int rc;

	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(proto_encode(&in, req, NULL), 0);
	json_decref(req);
	tu_run(&r, argv, NULL, in.data, in.len);
	*status = r.status;
	buf_add(&out, r.out, r.outlen);
	if (out.len > 0) {
		ck_assert_int_eq(proto_decode(&reply, &out, NULL), 1);
		rc = proto_decode(&extra, &out, NULL);
		ck_assert_msg(rc == 0 && out.len == 0,
		    "more than one reply, or junk after it");
		ck_assert_int_eq(jint(reply, "id"), 1);
	}
	tu_run_free(&r);
	buf_release(&in);
	buf_release(&out);
	return reply;
}

static json_t *
ask(json_t *req)
{
	json_t *reply;
	int status;

	reply = ask_bin(agent_bin(), req, &status);
	ck_assert_msg(status == 0, "agent exited %d", status);
	ck_assert_ptr_nonnull(reply);
	return reply;
}

/* ---- files ---- */

static char *
hex_sha256(const char *data, size_t len)
{
	char *s = xmalloc(ENVCTL_SHA256_HEX);

	hash_sha256_hex(s, data, len);
	return s;
}

static void
assert_file(const char *path, const char *data, size_t len)
{
	size_t got;
	char *s = tu_read(path, &got);

	ck_assert_msg(s != NULL, "cannot read '%s'", path);
	ck_assert_msg(got == len && memcmp(s, data, len) == 0,
	    "'%s' does not hold the expected %zu bytes (it has %zu)", path,
	    len, got);
	free(s);
}

static void
mkdirs(const char *path)
{
	char *p = xstrdup(path), *s;

	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		ck_assert_msg(mkdir(p, 0700) == 0 || errno == EEXIST,
		    "mkdir %s: %s", p, strerror(errno));
		*s = '/';
	}
	ck_assert_msg(mkdir(p, 0700) == 0 || errno == EEXIST, "mkdir %s: %s",
	    p, strerror(errno));
	free(p);
}

static void
assert_absent(const char *path)
{
	struct stat st;

	ck_assert_msg(lstat(path, &st) == -1 && errno == ENOENT,
	    "'%s' exists", path);
}

/* Entries of dir whose name holds needle (all but . and .. for ""). */
static int
count_entries(const char *dir, const char *needle)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    strstr(de->d_name, needle) != NULL)
			n++;
	closedir(d);
	return n;
}

static char *
fixture_text(const char *name, size_t *lenp)
{
	char *path = tu_fixture(name), *text = tu_read(path, lenp);

	ck_assert_msg(text != NULL, "cannot read fixture %s", path);
	free(path);
	return text;
}

/* A working sitecustomize.py setting the six NCCL values, revision n. */
static char *
good_file(int n)
{
	return xasprintf("# revision %d\nimport os as _os\n"
	    "for _k, _v in [(\"NCCL_PROTO\", \"LL\"), (\"NCCL_ALGO\", "
	    "\"Ring\"), (\"NCCL_P2P_LEVEL\", \"SYS\"),\n"
	    "               (\"NCCL_MAX_NCHANNELS\", \"16\"), "
	    "(\"NCCL_BUFFSIZE\", \"16777216\"),\n"
	    "               (\"NCCL_NTHREADS\", \"512\")]:\n"
	    "    _os.environ.setdefault(_k, _v)\n", n);
}

/* 1 when this test must be skipped for lack of root; fails under CI. */
static int
need_root(const char *what)
{
	if (geteuid() == 0)
		return 0;
	tu_skip(what, "needs root");
	return 1;
}

/* ---- a managed site in a temp dir ---- */

/*
 * dir/python is the interpreter: a wrapper that puts dir/shadow and
 * dir/site after whatever PYTHONPATH it is given, so that the agent's
 * validation run still imports its candidate first.  The managed path is
 * dir/site/sitecustomize.py; when linked it is a symlink to
 * ../etc/sitecustomize.py, as on Debian.  Backups, the lock directory and
 * the agent's TMPDIR are inside dir too.
 */
struct site {
	char	*dir;
	char	*rdir;		/* realpath of dir */
	char	*sitedir;
	char	*shadow;
	char	*etc;
	char	*target;	/* the path sent */
	char	*real;		/* where the bytes are */
	char	*interp;
	char	*backups;
	char	*lockdir;
	char	*tmp;
	char	*store;		/* backups + real */
	char	*old_tmpdir;
	int	 linked;
};

static void
site_put(const struct site *s, const char *text, size_t len)
{
	free(tu_write(NULL, s->real, text, len));
}

static void
site_init(struct site *s, const char *text, int linked)
{
	char *wrapper, *rdir;

	memset(s, 0, sizeof(*s));
	s->dir = tu_mkdtemp();
	rdir = realpath(s->dir, NULL);
	ck_assert_ptr_nonnull(rdir);
	s->rdir = rdir;
	s->linked = linked;
	s->sitedir = xasprintf("%s/site", s->dir);
	s->shadow = xasprintf("%s/shadow", s->dir);
	s->etc = xasprintf("%s/etc", s->dir);
	s->tmp = xasprintf("%s/tmp", s->dir);
	ck_assert_int_eq(mkdir(s->sitedir, 0755), 0);
	ck_assert_int_eq(mkdir(s->shadow, 0755), 0);
	ck_assert_int_eq(mkdir(s->etc, 0755), 0);
	ck_assert_int_eq(mkdir(s->tmp, 0700), 0);
	s->target = xasprintf("%s/sitecustomize.py", s->sitedir);
	if (linked) {
		s->real = xasprintf("%s/etc/sitecustomize.py", rdir);
		ck_assert_int_eq(symlink("../etc/sitecustomize.py",
		    s->target), 0);
	} else
		s->real = xasprintf("%s/site/sitecustomize.py", rdir);
	if (text != NULL)
		site_put(s, text, strlen(text));
	wrapper = xasprintf("#!/bin/sh\nexec env "
	    "PYTHONPATH=\"${PYTHONPATH:+$PYTHONPATH:}%s:%s\" %s \"$@\"\n",
	    s->shadow, s->sitedir, tu_python());
	s->interp = tu_writes(s->dir, "python", wrapper);
	ck_assert_int_eq(chmod(s->interp, 0755), 0);
	free(wrapper);
	s->backups = xasprintf("%s/backups", s->dir);
	s->lockdir = xasprintf("%s/lock", s->dir);
	s->store = xasprintf("%s%s", s->backups, s->real);
	/* The agent's validation directory goes here, where it is seen. */
	if (getenv("TMPDIR") != NULL)
		s->old_tmpdir = xstrdup(getenv("TMPDIR"));
	setenv("TMPDIR", s->tmp, 1);
}

static void
site_release(struct site *s)
{
	if (s->old_tmpdir != NULL)
		setenv("TMPDIR", s->old_tmpdir, 1);
	else
		unsetenv("TMPDIR");
	tu_rmtree(s->dir);
	free(s->dir);
	free(s->rdir);
	free(s->sitedir);
	free(s->shadow);
	free(s->etc);
	free(s->target);
	free(s->real);
	free(s->interp);
	free(s->backups);
	free(s->lockdir);
	free(s->tmp);
	free(s->store);
	free(s->old_tmpdir);
}

/*
 * Where the agent makes its validation directories: its cache when it
 * runs from one (the "apply-cached" case), else $TMPDIR.
 */
static const char *
validation_parent(const struct site *s)
{
	return agent_cache_dir() != NULL ? agent_cache_dir() : s->tmp;
}

/* Nothing of an apply is left where it should not be. */
static void
assert_no_leftovers(const struct site *s)
{
	char *dir = xstrdup(s->real);

	*strrchr(dir, '/') = '\0';
	ck_assert_int_eq(count_entries(dir, ".envctl-tmp."), 0);
	ck_assert_int_eq(count_entries(s->tmp, ""), 0);
	if (agent_cache_dir() != NULL)
		ck_assert_int_eq(count_entries(agent_cache_dir(),
		    "envctl-validate."), 0);
	free(dir);
}

/* Sets "expect" and "sha256_old" of req from what the file holds now. */
static void
set_expect(json_t *req, const struct site *s)
{
	size_t len;
	char *data = tu_read(s->real, &len), *sha;

	if (data == NULL) {
		json_object_set_new(req, "expect", json_pack("{s:b}",
		    "exists", 0));
		json_object_set_new(req, "sha256_old", json_null());
		return;
	}
	sha = hex_sha256(data, len);
	json_object_set_new(req, "expect", json_pack("{s:b,s:o}", "exists",
	    1, "data", proto_b64_json(data, len)));
	json_object_set_new(req, "sha256_old", json_string(sha));
	free(sha);
	free(data);
}

static json_t *
want_vars(void)
{
	json_t *v = json_object();
	size_t i;

	for (i = 0; i < 6; i++)
		json_object_set_new(v, nccl[i], json_string(want[i]));
	return v;
}

static char *
user_name(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);

	return pw != NULL ? xstrdup(pw->pw_name) :
	    xasprintf("%lu", (unsigned long)uid);
}

static char *
group_name(gid_t gid)
{
	struct group *gr = getgrgid(gid);

	return gr != NULL ? xstrdup(gr->gr_name) :
	    xasprintf("%lu", (unsigned long)gid);
}

/* An apply of data (len bytes) against the file as it is now. */
static json_t *
apply_reqn(const struct site *s, const char *data, size_t len)
{
	char *sha = hex_sha256(data, len), *owner = user_name(geteuid());
	char *group = group_name(getegid());
	json_t *req;

	req = json_pack("{s:s,s:i,s:s,s:s,s:o,s:s,s:{s:i,s:s,s:s},s:o,"
	    "s:{s:s,s:i},s:s,s:s,s:s,s:i,s:i}",
	    "op", "apply", "id", 1, "interpreter", s->interp,
	    "path", s->target, "data", proto_b64_json(data, len),
	    "sha256_new", sha,
	    "create", "mode", 0640, "owner", owner, "group", group,
	    "vars", want_vars(),
	    "backup", "dir", s->backups, "keep", 10,
	    "playbook", "cuda13-nccl", "controller", "ctl-test",
	    "lock_dir", s->lockdir, "lock_timeout_ms", 5000,
	    "timeout_ms", 20000);
	ck_assert_ptr_nonnull(req);
	set_expect(req, s);
	free(sha);
	free(owner);
	free(group);
	return req;
}

static json_t *
apply_req(const struct site *s, const char *text)
{
	return apply_reqn(s, text, strlen(text));
}

static json_t *
rollback_req(const struct site *s, const char *to)
{
	json_t *req;

	req = json_pack("{s:s,s:i,s:s,s:s,s:s,s:{s:s,s:i},s:s,s:s,s:s,"
	    "s:i,s:i,s:[ssssss]}",
	    "op", "rollback", "id", 1, "interpreter", s->interp,
	    "path", s->target, "to", to,
	    "backup", "dir", s->backups, "keep", 10,
	    "playbook", "cuda13-nccl", "controller", "ctl-test",
	    "lock_dir", s->lockdir, "lock_timeout_ms", 5000,
	    "timeout_ms", 20000,
	    "vars", nccl[0], nccl[1], nccl[2], nccl[3], nccl[4], nccl[5]);
	ck_assert_ptr_nonnull(req);
	set_expect(req, s);
	return req;
}

static json_t *
backups_req(const struct site *s)
{
	return json_pack("{s:s,s:i,s:s,s:{s:s}}", "op", "backups", "id", 1,
	    "path", s->target, "backup", "dir", s->backups);
}

/* The backups the agent lists, newest first (a new reference). */
static json_t *
list_backups(const struct site *s)
{
	json_t *reply = ask(backups_req(s)), *list;

	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "real"), s->real);
	list = json_incref(jget(reply, "backups"));
	ck_assert(json_is_array(list));
	json_decref(reply);
	return list;
}

/* How many backups the agent lists. */
static size_t
count_backups(const struct site *s)
{
	json_t *list = list_backups(s);
	size_t n = json_array_size(list);

	json_decref(list);
	return n;
}

/* What a fresh interpreter gets from the site now (the read op). */
static json_t *
probe_site(const struct site *s)
{
	json_t *reply = ask(json_pack("{s:s,s:i,s:s,s:s,s:[ssssss],s:[],"
	    "s:i}", "op", "read", "id", 1, "interpreter", s->interp,
	    "path", s->target, "vars", nccl[0], nccl[1], nccl[2], nccl[3],
	    nccl[4], nccl[5], "checks", "timeout_ms", 20000));

	assert_ok(reply);
	return reply;
}

static void
assert_values(const json_t *values)
{
	size_t i;

	for (i = 0; i < 6; i++) {
		ck_assert_msg(json_is_string(json_object_get(values,
		    nccl[i])), "%s is not set", nccl[i]);
		ck_assert_str_eq(json_string_value(json_object_get(values,
		    nccl[i])), want[i]);
	}
}

/* The backup id shape: 20261202T133501Z-ada22e26fcb9[-N]. */
static void
assert_id(const char *id, const char *tail)
{
	size_t i;

	ck_assert_msg(strlen(id) >= 17, "bad backup id '%s'", id);
	for (i = 0; i < 16; i++)
		ck_assert_msg(i == 8 ? id[i] == 'T' : i == 15 ? id[i] == 'Z' :
		    id[i] >= '0' && id[i] <= '9', "bad backup id '%s'", id);
	ck_assert_int_eq(id[16], '-');
	ck_assert_str_eq(id + 17, tail);
}

/* ---- apply ---- */

START_TEST(test_apply_converges)
{
	struct site s;
	struct stat st, st0, bst;
	json_t *reply, *list, *m;
	char *seed, *good, *sha_old, *bpath, *tail, *meta, *owner, *group;
	char link[4096], *lockfile, *lock, *id;
	size_t seedlen, goodlen, n;
	ssize_t ln;

	seed = fixture_text("seed-broken.sitecustomize.py", &seedlen);
	good = fixture_text("seed-working.sitecustomize.py", &goodlen);
	site_init(&s, seed, 1);
	if (geteuid() == 0)
		ck_assert_int_eq(chown(s.real, 1, 1), 0);
	ck_assert_int_eq(chmod(s.real, 0604), 0);
	ck_assert_int_eq(stat(s.real, &st0), 0);

	/* The seed is broken: nothing set, a start-up error. */
	reply = probe_site(&s);
	ck_assert_str_eq(jstr(reply, "probe.startup_error.exception"),
	    "TypeError: str expected, not ellipsis");
	json_decref(reply);

	reply = ask(apply_reqn(&s, good, goodlen));
	assert_ok(reply);
	ck_assert(jbool(reply, "changed"));
	ck_assert_str_eq(jstr(reply, "real"), s.real);
	/* Verified in a child of the session's fork server. */
	ck_assert(jbool(reply, "verify.forked"));
	assert_values(jget(reply, "verify.values"));
	assert_null(reply, "verify.startup_error");
	sha_old = hex_sha256(seed, seedlen);
	tail = xstrndup(sha_old, 12);
	assert_id(jstr(reply, "backup.id"), tail);
	bpath = xasprintf("%s/%s", s.store, jstr(reply, "backup.id"));
	ck_assert_str_eq(jstr(reply, "backup.path"), bpath);
	id = xstrdup(jstr(reply, "backup.id"));
	json_decref(reply);

	/* The symlink is still a symlink; the file behind it changed, with
	 * its mode and owner. */
	ck_assert_int_eq(lstat(s.target, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ln = readlink(s.target, link, sizeof(link) - 1);
	ck_assert_int_gt(ln, 0);
	link[ln] = '\0';
	ck_assert_str_eq(link, "../etc/sitecustomize.py");
	assert_file(s.real, good, goodlen);
	ck_assert_int_eq(stat(s.real, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0604);
	ck_assert_int_eq(st.st_uid, st0.st_uid);
	ck_assert_int_eq(st.st_gid, st0.st_gid);
	ck_assert_int_ne(st.st_ino, st0.st_ino);	/* renamed over */
	assert_no_leftovers(&s);

	/* A fresh interpreter now gets every value. */
	reply = probe_site(&s);
	assert_values(jget(reply, "probe.values"));
	assert_null(reply, "probe.startup_error");
	json_decref(reply);

	/* The backup: the seed byte for byte, 0600, in a 0700 store. */
	assert_file(bpath, seed, seedlen);
	ck_assert_int_eq(stat(bpath, &bst), 0);
	ck_assert_int_eq(bst.st_mode & 07777, 0600);
	ck_assert_int_eq(stat(s.store, &bst), 0);
	ck_assert_int_eq(bst.st_mode & 07777, 0700);
	meta = xasprintf("%s.json", bpath);
	ck_assert_int_eq(stat(meta, &bst), 0);
	ck_assert_int_eq(bst.st_mode & 07777, 0600);
	list = list_backups(&s);
	ck_assert_uint_eq(json_array_size(list), 1);
	m = json_array_get(list, 0);
	ck_assert_str_eq(jstr(m, "id"), id);
	ck_assert_int_eq(jint(m, "seq"), 1);
	ck_assert_str_eq(jstr(m, "op"), "apply");
	ck_assert_str_eq(jstr(m, "path"), s.target);
	ck_assert_str_eq(jstr(m, "real"), s.real);
	ck_assert(!jbool(m, "absent"));
	ck_assert_int_eq(jint(m, "size"), seedlen);
	ck_assert_str_eq(jstr(m, "sha256"), sha_old);
	ck_assert_int_eq(jint(m, "mode"), 0604);
	ck_assert_int_eq(jint(m, "uid"), st0.st_uid);
	ck_assert_int_eq(jint(m, "gid"), st0.st_gid);
	owner = user_name(st0.st_uid);
	group = group_name(st0.st_gid);
	ck_assert_str_eq(jstr(m, "owner"), owner);
	ck_assert_str_eq(jstr(m, "group"), group);
	ck_assert_str_eq(jstr(m, "playbook"), "cuda13-nccl");
	ck_assert_str_eq(jstr(m, "controller"), "ctl-test");
	/* 2026-12-02T13:35:01Z, the same second as the id */
	ck_assert_uint_eq(strlen(jstr(m, "time")), 20);
	ck_assert_int_eq(jstr(m, "time")[10], 'T');
	ck_assert_int_eq(strncmp(jstr(m, "time"), jstr(m, "id"), 4), 0);
	json_decref(list);

	/* The lock file says who held it last. */
	n = strlen(s.real);
	lock = xasprintf("%s.lock", s.real);
	for (size_t i = 0; i < n; i++)
		if (lock[i] == '/')
			lock[i] = '%';
	lockfile = xasprintf("%s/%s", s.lockdir, lock);
	free(lock);
	lock = tu_read(lockfile, NULL);
	ck_assert_ptr_nonnull(lock);
	ck_assert_msg(strncmp(lock, "pid=", 4) == 0 &&
	    strstr(lock, " controller=ctl-test time=") != NULL &&
	    lock[strlen(lock) - 1] == '\n', "lock file says '%s'", lock);
	ck_assert_int_eq(stat(s.lockdir, &bst), 0);
	ck_assert_int_eq(bst.st_mode & 07777, 0700);
	ck_assert_int_eq(stat(lockfile, &bst), 0);
	ck_assert_int_eq(bst.st_mode & 07777, 0600);

	/* Again: nothing to do, no new backup. */
	reply = ask(apply_reqn(&s, good, goodlen));
	assert_ok(reply);
	ck_assert(!jbool(reply, "changed"));
	ck_assert_ptr_null(jget(reply, "backup"));
	assert_values(jget(reply, "verify.values"));
	json_decref(reply);
	ck_assert_uint_eq(count_backups(&s), 1);
	assert_file(s.real, good, goodlen);

	site_release(&s);
	free(seed);
	free(good);
	free(sha_old);
	free(tail);
	free(bpath);
	free(meta);
	free(owner);
	free(group);
	free(lockfile);
	free(lock);
	free(id);
}
END_TEST

/*
 * The verification is the session's last run: the fork server does it
 * itself instead of forking, and is gone with it.  The new file logs, in
 * each run, its pid and its parent's name: the verification's parent is
 * the agent, not python (as a forked run's is), it was served by the fork
 * server all the same, and nothing of it is left once the agent exited.
 */
START_TEST(test_verify_by_server)
{
	struct site s;
	json_t *reply;
	char *good = good_file(1), *text, *log, *got, *last;
	char parent[64];
	long pid;

	site_init(&s, "import os\n", 0);
	log = xasprintf("%s/runs.log", s.dir);
	text = xasprintf("%simport os as _o\n"
	    "_p = open('/proc/%%d/comm' %% _o.getppid()).read().strip()\n"
	    "open('%s', 'a').write('%%d %%s\\n' %% (_o.getpid(), _p))\n",
	    good, log);
	reply = ask(apply_req(&s, text));
	assert_ok(reply);
	ck_assert(jbool(reply, "changed"));
	ck_assert(jbool(reply, "verify.forked"));
	got = tu_read(log, NULL);
	ck_assert_ptr_nonnull(got);
	/* The validation's line, then the verification's. */
	ck_assert_ptr_nonnull(last = strchr(got, '\n'));
	ck_assert_int_eq(sscanf(last + 1, "%ld %63s", &pid, parent), 2);
	/* The agent (or valgrind running it), not the python3 server. */
	ck_assert_msg(strncmp(parent, "python", 6) != 0,
	    "the verification ran under '%s', not the agent", parent);
	ck_assert_int_eq(kill((pid_t)pid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	assert_file(s.real, text, strlen(text));
	json_decref(reply);
	site_release(&s);
	free(good);
	free(text);
	free(log);
	free(got);
}
END_TEST

START_TEST(test_apply_plain_file)
{
	struct site s;
	struct stat st;
	json_t *reply;
	char *good = good_file(1);

	/* No symlink: the file itself is replaced, mode kept. */
	site_init(&s, "import os\n", 0);
	ck_assert_int_eq(chmod(s.real, 0640), 0);
	reply = ask(apply_req(&s, good));
	assert_ok(reply);
	ck_assert(jbool(reply, "changed"));
	assert_file(s.target, good, strlen(good));
	ck_assert_int_eq(lstat(s.target, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0640);
	assert_no_leftovers(&s);
	json_decref(reply);
	site_release(&s);
	free(good);
}
END_TEST

START_TEST(test_cas)
{
	struct site s;
	json_t *req, *reply;
	char *good = good_file(1), *msg, *dir, *path;

	site_init(&s, "import os\n", 1);

	/* What the controller read differs from what is there now. */
	req = apply_req(&s, good);
	json_object_set_new(req, "expect", json_pack("{s:b,s:o}", "exists", 1,
	    "data", proto_b64_json("import sys\n", 11)));
	reply = ask(req);
	msg = xasprintf("'%s' changed since it was read (now 10 bytes)",
	    s.real);
	assert_fail(reply, "ECHANGED", msg);
	json_decref(reply);
	free(msg);

	/* It read "absent", but the file exists. */
	req = apply_req(&s, good);
	json_object_set_new(req, "expect", json_pack("{s:b}", "exists", 0));
	json_object_set_new(req, "sha256_old", json_null());
	reply = ask(req);
	msg = xasprintf("'%s' changed since it was read (now 10 bytes)",
	    s.real);
	assert_fail(reply, "ECHANGED", msg);
	json_decref(reply);
	free(msg);

	/* It read a file that is gone now. */
	req = apply_req(&s, good);
	ck_assert_int_eq(unlink(s.real), 0);
	reply = ask(req);
	msg = xasprintf("'%s' changed since it was read (now absent)",
	    s.real);
	assert_fail(reply, "ECHANGED", msg);
	json_decref(reply);
	free(msg);
	assert_absent(s.real);

	/* Untouched: no backup made, no temp left. */
	site_put(&s, "import os\n", 10);
	req = apply_req(&s, good);
	site_put(&s, "import os  \n", 12);
	reply = ask(req);
	msg = xasprintf("'%s' changed since it was read (now 12 bytes)",
	    s.real);
	assert_fail(reply, "ECHANGED", msg);
	json_decref(reply);
	assert_file(s.real, "import os  \n", 12);
	assert_absent(s.backups);
	assert_no_leftovers(&s);
	free(msg);

	/* The backup cannot be made: nothing is installed. */
	req = apply_req(&s, good);
	free(tu_writes(s.dir, "plainfile", ""));
	dir = xasprintf("%s/plainfile/backups", s.dir);
	json_object_set_new(jget(req, "backup"), "dir", json_string(dir));
	reply = ask(req);
	msg = xasprintf("cannot make the directory '%s/plainfile': Not a "
	    "directory", s.dir);
	assert_fail(reply, "ESYS", msg);
	json_decref(reply);
	free(msg);
	free(dir);
	assert_file(s.real, "import os  \n", 12);
	assert_no_leftovers(&s);

	/* The target's directory does not exist. */
	req = apply_req(&s, good);
	dir = xasprintf("%s/nodir", s.dir);
	path = xasprintf("%s/sitecustomize.py", dir);
	json_object_set_new(req, "path", json_string(path));
	json_object_set_new(req, "expect", json_pack("{s:b}", "exists", 0));
	json_object_set_new(req, "sha256_old", json_null());
	reply = ask(req);
	msg = xasprintf("cannot open the directory '%s': No such file or "
	    "directory", dir);
	assert_fail(reply, "ESYS", msg);
	json_decref(reply);
	assert_absent(dir);
	site_release(&s);
	free(good);
	free(msg);
	free(dir);
	free(path);
}
END_TEST

/*
 * A candidate that fails validation fails the same way whether it ran in
 * a child of the fork server (forked: the interpreter is run through a
 * wrapper that changes nothing) or afresh (the site's wrapper changes
 * PYTHONPATH, so the server may not apply the candidate's).
 */
static void
validate_fails(int forked)
{
	static const struct {
		const char	*text;
		const char	*msg;	/* NULL: the timeout's */
		int		 prefix;
	} v[] = {
		{ "raise RuntimeError('boom')\n",
		    "the new file does not work: RuntimeError: boom", 0 },
		{ "import os\nos.environ['NCCL_PROTO'] = 'Simple'\n",
		    "the new file does not work: NCCL_PROTO is 'Simple', "
		    "want 'LL' (and 5 more)", 0 },
		{ "import os\nfor _k, _v in [('NCCL_PROTO', 'LL'), "
		    "('NCCL_ALGO', 'Ring'), ('NCCL_P2P_LEVEL', 'SYS'),\n"
		    "  ('NCCL_MAX_NCHANNELS', '16'), ('NCCL_BUFFSIZE', '1'),\n"
		    "  ('NCCL_NTHREADS', '512')]:\n"
		    "    os.environ.setdefault(_k, _v)\n",
		    "the new file does not work: NCCL_BUFFSIZE is '1', want "
		    "'16777216'", 0 },
		{ "import os\nos.environ['NCCL_PROTO'] = 'a\\nb\\'c'\n",
		    "the new file does not work: NCCL_PROTO is 'a\\x0ab\\'c', "
		    "want 'LL' (and 5 more)", 0 },
		{ "def (:\n", "the new file does not work: "
		    "SyntaxError: ", 1 },
		{ "import time\ntime.sleep(30)\n", NULL, 0 },
	};
	struct site s;
	json_t *req, *reply;
	char *msg, *wrapper;
	size_t i;

	site_init(&s, "import os\n", 1);
	if (forked) {
		free(s.interp);
		wrapper = xasprintf("#!/bin/sh\nexec %s \"$@\"\n",
		    tu_python());
		s.interp = tu_writes(s.dir, "python-same", wrapper);
		ck_assert_int_eq(chmod(s.interp, 0755), 0);
		free(wrapper);
	}
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		req = apply_req(&s, v[i].text);
		/* The change's budget: a third of it, less the up to
		 * 270 ms spent before the lock, is 1.5 s a run. */
		if (v[i].msg == NULL)
			json_object_set_new(req, "timeout_ms",
			    json_integer(4770));
		reply = ask(req);
		if (v[i].msg == NULL) {
			msg = xasprintf("the new file does not work: %s did "
			    "not finish starting in 1.5 s (sitecustomize "
			    "hangs?)", s.interp);
			assert_fail(reply, "EVERIFY", msg);
			free(msg);
		} else if (v[i].prefix)
			assert_fail_prefix(reply, "EVERIFY", v[i].msg);
		else
			assert_fail(reply, "EVERIFY", v[i].msg);
		ck_assert_str_eq(jstr(reply, "detail.stage"), "validate");
		ck_assert_int_eq(jbool(reply, "detail.verify.forked"),
		    forked);
		json_decref(reply);
		/* Nothing touched: the file, no backup, no temp. */
		assert_file(s.real, "import os\n", 10);
		assert_absent(s.backups);
		assert_no_leftovers(&s);
	}

	/* Secret values stay out of the message. */
	req = apply_req(&s, "import os\nos.environ['NCCL_PROTO'] = 'pw'\n");
	json_object_set_new(req, "secret", json_pack("[s]", "NCCL_PROTO"));
	reply = ask(req);
	assert_fail(reply, "EVERIFY", "the new file does not work: "
	    "NCCL_PROTO is '********', want '********' (and 5 more)");
	json_decref(reply);
	site_release(&s);
}

START_TEST(test_validate_fails)
{
	validate_fails(0);
}
END_TEST

START_TEST(test_validate_fails_forked)
{
	validate_fails(1);
}
END_TEST

/* A dead agent's validation directory goes; a live one's stays. */
START_TEST(test_validate_stale)
{
	struct site s;
	json_t *reply;
	char *stale, *live;
	pid_t dead;
	int st;

	site_init(&s, "import os\n", 0);
	if ((dead = fork()) == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(dead, &st, 0), dead);
	stale = xasprintf("%s/envctl-validate.%ld.AbC123",
	    validation_parent(&s), (long)dead);
	live = xasprintf("%s/envctl-validate.%ld.AbC123",
	    validation_parent(&s), (long)getpid());
	ck_assert_int_eq(mkdir(stale, 0700), 0);
	ck_assert_int_eq(mkdir(live, 0700), 0);
	free(tu_writes(stale, "sitecustomize.py", "secret = 1\n"));
	reply = ask(apply_req(&s, "raise RuntimeError('boom')\n"));
	assert_fail(reply, "EVERIFY", "the new file does not work: "
	    "RuntimeError: boom");
	json_decref(reply);
	assert_absent(stale);
	ck_assert_int_eq(rmdir(live), 0);
	assert_no_leftovers(&s);
	site_release(&s);
	free(stale);
	free(live);
}
END_TEST

/*
 * The candidate is validated from a new directory in the agent's cache
 * when it runs from one, else in $TMPDIR (missing: the cache serves), and
 * the directory is gone afterwards.  The candidate tells where it ran.
 */
START_TEST(test_validate_where)
{
	const char *where;
	struct site s;
	json_t *reply;
	char *prefix;

	site_init(&s, "import os\n", 0);
	prefix = xasprintf("%s/envctl-validate.", validation_parent(&s));
	if (agent_cache_dir() != NULL)
		setenv("TMPDIR", "/nonexistent/envctl-tmp", 1);
	reply = ask(apply_req(&s, "import os\nos.environ['NCCL_PROTO'] = "
	    "os.path.dirname(__file__)\n"));
	setenv("TMPDIR", s.tmp, 1);
	ck_assert_str_eq(jstr(reply, "detail.stage"), "validate");
	where = jstr(reply, "detail.verify.values.NCCL_PROTO");
	ck_assert_msg(strncmp(where, prefix, strlen(prefix)) == 0,
	    "validated in '%s', not in '%s*'", where, prefix);
	assert_absent(where);
	json_decref(reply);
	assert_file(s.real, "import os\n", 10);
	assert_no_leftovers(&s);
	site_release(&s);
	free(prefix);
}
END_TEST

/* An interpreter wrapper that replaces PYTHONPATH cannot validate. */
START_TEST(test_validate_wrapper)
{
	struct site s;
	json_t *req, *reply;
	char *wrapper, *interp, *good = good_file(1), *msg;
	int status;

	site_init(&s, "import os\n", 0);
	wrapper = xasprintf("#!/bin/sh\nexec env PYTHONPATH=%s %s \"$@\"\n",
	    s.sitedir, tu_python());
	interp = tu_writes(s.dir, "python-replaces", wrapper);
	ck_assert_int_eq(chmod(interp, 0755), 0);
	req = apply_req(&s, good);
	json_object_set_new(req, "interpreter", json_string(interp));
	reply = ask(req);
	msg = xasprintf("cannot validate the new file: %s imported '%s' "
	    "instead (does it replace PYTHONPATH?)", interp, s.real);
	assert_fail(reply, "EVERIFY", msg);
	json_decref(reply);
	assert_file(s.real, "import os\n", 10);
	assert_no_leftovers(&s);

	req = apply_req(&s, good);
	json_object_set_new(req, "interpreter",
	    json_string("/nonexistent/python3"));
	reply = ask(req);
	assert_fail(reply, "EPROBE", "cannot run '/nonexistent/python3': "
	    "No such file or directory");
	json_decref(reply);
	assert_no_leftovers(&s);

	/*
	 * No place for the candidate (unless the agent itself cannot start
	 * so, as under valgrind, which needs $TMPDIR too).  An agent run
	 * from its cache validates there instead: test_validate_where.
	 */
	setenv("TMPDIR", "/nonexistent/envctl-tmp", 1);
	reply = ask_bin(agent_bin(), json_pack("{s:s,s:i,s:i}", "op",
	    "hello", "id", 1, "protocol", 1), &status);
	json_decref(reply);
	if (status == 0 && agent_cache_dir() == NULL) {
		reply = ask(apply_req(&s, good));
		assert_fail(reply, "ESYS", "cannot make a directory to "
		    "validate the new file in '/nonexistent/envctl-tmp': No "
		    "such file or directory");
		json_decref(reply);
	} else if (status != 0)
		fprintf(stderr, "check_agent_apply: %s does not start with "
		    "TMPDIR missing, skipped that case\n", agent_bin());
	setenv("TMPDIR", s.tmp, 1);
	assert_file(s.real, "import os\n", 10);
	assert_absent(s.backups);
	site_release(&s);
	free(wrapper);
	free(interp);
	free(good);
	free(msg);
}
END_TEST

/*
 * "also": every further interpreter that imports the file validates and
 * verifies it too; one whose environment pins a value refuses it, named,
 * and the file stays as it was.
 */
START_TEST(test_also)
{
	struct site s;
	json_t *req, *reply;
	char *wrapper, *same, *pinned, *good = good_file(1), *msg;

	site_init(&s, "import os\n", 0);
	wrapper = xasprintf("#!/bin/sh\nexec env "
	    "PYTHONPATH=\"${PYTHONPATH:+$PYTHONPATH:}%s:%s\" %s \"$@\"\n",
	    s.shadow, s.sitedir, tu_python());
	same = tu_writes(s.dir, "python-same", wrapper);
	free(wrapper);
	wrapper = xasprintf("#!/bin/sh\nexport NCCL_PROTO=Simple\nexec env "
	    "PYTHONPATH=\"${PYTHONPATH:+$PYTHONPATH:}%s:%s\" %s \"$@\"\n",
	    s.shadow, s.sitedir, tu_python());
	pinned = tu_writes(s.dir, "python-pinned", wrapper);
	ck_assert_int_eq(chmod(same, 0755), 0);
	ck_assert_int_eq(chmod(pinned, 0755), 0);

	req = apply_req(&s, good);
	json_object_set_new(req, "also", json_pack("[s]", pinned));
	reply = ask(req);
	msg = xasprintf("in %s: the new file does not work: NCCL_PROTO is "
	    "'Simple', want 'LL'", pinned);
	assert_fail(reply, "EVERIFY", msg);
	json_decref(reply);
	assert_file(s.real, "import os\n", 10);
	assert_no_leftovers(&s);

	req = apply_req(&s, good);
	json_object_set_new(req, "also", json_pack("[s]",
	    "/nonexistent/python3"));
	reply = ask(req);
	assert_fail(reply, "EPROBE", "cannot run '/nonexistent/python3': No "
	    "such file or directory");
	json_decref(reply);
	assert_file(s.real, "import os\n", 10);

	req = apply_req(&s, good);
	json_object_set_new(req, "also", json_pack("[s]", "bin/python3"));
	reply = ask(req);
	assert_fail(reply, "EINVALID", "apply: 'also[0]' must be a command "
	    "name or an absolute path");
	json_decref(reply);
	req = apply_req(&s, good);
	json_object_set_new(req, "also", json_pack("[]"));
	reply = ask(req);
	assert_fail(reply, "EINVALID", "apply: 'also' must be an array of 1 "
	    "to 15 interpreters");
	json_decref(reply);

	req = apply_req(&s, good);
	json_object_set_new(req, "also", json_pack("[s]", same));
	reply = ask(req);
	assert_ok(reply);
	ck_assert(jbool(reply, "changed"));
	json_decref(reply);
	assert_file(s.real, good, strlen(good));
	site_release(&s);
	free(wrapper);
	free(same);
	free(pinned);
	free(good);
	free(msg);
}
END_TEST

/* The installed file does not take effect: the original comes back. */
START_TEST(test_verify_restores)
{
	struct site s;
	struct stat st0, st;
	json_t *req, *reply, *list;
	char *seed, *good = good_file(1), *msg;
	size_t seedlen;
	int i;

	seed = fixture_text("seed-broken.sitecustomize.py", &seedlen);
	site_init(&s, seed, 1);
	ck_assert_int_eq(chmod(s.real, 0640), 0);
	ck_assert_int_eq(stat(s.real, &st0), 0);
	/* Earlier on the path, so a plain run imports it instead. */
	free(tu_writes(s.shadow, "sitecustomize.py", "import os\n"
	    "os.environ['NCCL_PROTO'] = 'Simple'\n"));
	reply = ask(apply_req(&s, good));
	assert_fail(reply, "EVERIFY", "verification failed: NCCL_PROTO is "
	    "'Simple', want 'LL' (and 5 more); the previous file was "
	    "restored");
	ck_assert(jbool(reply, "detail.restored"));
	ck_assert(!jbool(reply, "detail.changed"));
	ck_assert_str_eq(jstr(reply, "detail.stage"), "verify");
	ck_assert_str_eq(jstr(reply, "detail.verify.values.NCCL_PROTO"),
	    "Simple");
	assert_file(s.real, seed, seedlen);
	ck_assert_int_eq(lstat(s.target, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(stat(s.real, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0640);
	ck_assert_int_eq(st.st_uid, st0.st_uid);
	assert_no_leftovers(&s);
	/* The backup made before the install went with the change. */
	list = list_backups(&s);
	ck_assert_uint_eq(json_array_size(list), 0);
	ck_assert_ptr_null(jget(reply, "detail.backup"));
	json_decref(list);
	json_decref(reply);

	/*
	 * Tried again and again (drift --fix from cron), each failed try
	 * leaves the store as it was (test_failed_keeps_history).
	 */
	for (i = 0; i < 4; i++) {
		req = apply_req(&s, good);
		json_object_set_new(json_object_get(req, "backup"), "keep",
		    json_integer(2));
		reply = ask(req);
		ck_assert(jbool(reply, "detail.restored"));
		json_decref(reply);
	}
	ck_assert_uint_eq(count_backups(&s), 0);
	assert_file(s.real, seed, seedlen);

	/* The file already holds the new bytes, yet does not work. */
	site_put(&s, good, strlen(good));
	reply = ask(apply_req(&s, good));
	msg = xasprintf("'%s' already holds the new bytes, but NCCL_PROTO is "
	    "'Simple', want 'LL' (and 5 more)", s.real);
	assert_fail(reply, "EVERIFY", msg);
	ck_assert(!jbool(reply, "detail.restored"));
	json_decref(reply);
	assert_file(s.real, good, strlen(good));
	site_release(&s);
	free(seed);
	free(good);
	free(msg);
}
END_TEST

START_TEST(test_absent)
{
	struct site s;
	struct stat st;
	json_t *req, *reply, *list, *m;
	char *good = good_file(1), *id, *bpath;

	site_init(&s, NULL, 1);
	reply = ask(apply_req(&s, good));
	assert_ok(reply);
	ck_assert(jbool(reply, "changed"));
	assert_id(jstr(reply, "backup.id"), "absent");
	id = xstrdup(jstr(reply, "backup.id"));
	json_decref(reply);
	assert_file(s.real, good, strlen(good));
	ck_assert_int_eq(stat(s.real, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0640);	/* create.mode */
	ck_assert_int_eq(st.st_uid, geteuid());
	ck_assert_int_eq(lstat(s.target, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));

	list = list_backups(&s);
	ck_assert_uint_eq(json_array_size(list), 1);
	m = json_array_get(list, 0);
	ck_assert(jbool(m, "absent"));
	ck_assert_int_eq(jint(m, "size"), 0);
	assert_null(m, "sha256");
	assert_null(m, "mode");
	assert_null(m, "owner");
	bpath = xasprintf("%s/%s", s.store, id);
	assert_file(bpath, "", 0);
	json_decref(list);

	/* Rolling back removes the file again. */
	reply = ask(rollback_req(&s, "latest"));
	assert_ok(reply);
	ck_assert(jbool(reply, "changed"));
	ck_assert_str_eq(jstr(reply, "restored"), id);
	assert_null(reply, "verify.startup_error");
	assert_null(reply, "verify.values.NCCL_PROTO");
	assert_absent(s.real);
	ck_assert_int_eq(lstat(s.target, &st), 0);	/* dangling link */
	list = list_backups(&s);
	ck_assert_uint_eq(json_array_size(list), 2);
	ck_assert_str_eq(jstr(json_array_get(list, 0), "id"),
	    jstr(reply, "backup.id"));
	assert_file(jstr(reply, "backup.path"), good, strlen(good));
	json_decref(list);
	json_decref(reply);

	/* A new file that fails verification is removed again. */
	free(tu_writes(s.shadow, "sitecustomize.py", "import os\n"
	    "os.environ['NCCL_PROTO'] = 'Simple'\n"));
	reply = ask(apply_req(&s, good));
	assert_fail(reply, "EVERIFY", "verification failed: NCCL_PROTO is "
	    "'Simple', want 'LL' (and 5 more); the previous file was "
	    "restored");
	ck_assert(jbool(reply, "detail.restored"));
	json_decref(reply);
	assert_absent(s.real);
	assert_no_leftovers(&s);

	/* create names a user the host does not have. */
	req = apply_req(&s, good);
	json_object_set_new(req, "create", json_pack("{s:i,s:s,s:s}", "mode",
	    0644, "owner", "no-such-user-envctl", "group", "root"));
	reply = ask(req);
	assert_fail(reply, "EINVALID", "apply: 'create.owner': no user "
	    "'no-such-user-envctl' in /etc/passwd");
	json_decref(reply);
	req = apply_req(&s, good);
	json_object_set_new(req, "create", json_pack("{s:i,s:s,s:s}", "mode",
	    0644, "owner", "root", "group", "no-such-group-envctl"));
	reply = ask(req);
	assert_fail(reply, "EINVALID", "apply: 'create.group': no group "
	    "'no-such-group-envctl' in /etc/group");
	json_decref(reply);
	site_release(&s);
	free(good);
	free(id);
	free(bpath);
}
END_TEST

/* Owner and mode of a file made through create, by name and number. */
START_TEST(test_absent_owner)
{
	struct site s;
	struct stat st;
	json_t *req, *reply;
	char *good = good_file(1);

	if (need_root("creating a file for another owner"))
		return;
	site_init(&s, NULL, 0);
	req = apply_req(&s, good);
	json_object_set_new(req, "create", json_pack("{s:i,s:s,s:s}", "mode",
	    0604, "owner", "1", "group", "2"));
	reply = ask(req);
	assert_ok(reply);
	json_decref(reply);
	ck_assert_int_eq(stat(s.real, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0604);
	ck_assert_int_eq(st.st_uid, 1);
	ck_assert_int_eq(st.st_gid, 2);
	site_release(&s);
	free(good);
}
END_TEST

/* Python's cached bytecode of the old file must not survive. */
START_TEST(test_pycache)
{
	struct site s;
	json_t *reply;
	char *good = good_file(1), *cmd, *pyc_dir, *pyc = NULL, *data;
	char *argv[4];
	struct tu_run r;
	DIR *d;
	struct dirent *de;
	size_t len;

	site_init(&s, "import os\nos.environ['NCCL_PROTO'] = 'Simple'\n", 1);
	/* An unchecked-hash .pyc beside the imported path: Python runs it
	 * without looking at the source at all. */
	cmd = xasprintf("import py_compile, importlib.util as u\n"
	    "py_compile.compile('%s', cfile=u.cache_from_source('%s'), "
	    "invalidation_mode=py_compile.PycInvalidationMode."
	    "UNCHECKED_HASH, doraise=True)\n", s.real, s.target);
	argv[0] = (char *)tu_python();
	argv[1] = "-c";
	argv[2] = cmd;
	argv[3] = NULL;
	tu_run(&r, argv, NULL, NULL, 0);
	ck_assert_msg(r.status == 0, "py_compile: %s", r.errout);
	tu_run_free(&r);
	pyc_dir = xasprintf("%s/__pycache__", s.sitedir);
	ck_assert_int_eq(count_entries(pyc_dir, "sitecustomize."), 1);

	reply = ask(apply_req(&s, good));
	assert_ok(reply);
	assert_values(jget(reply, "verify.values"));
	json_decref(reply);
	/* Whatever is cached now is an ordinary, checked .pyc. */
	if ((d = opendir(pyc_dir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (strncmp(de->d_name, "sitecustomize.", 14) == 0)
				pyc = xasprintf("%s/%s", pyc_dir, de->d_name);
		closedir(d);
	}
	if (pyc != NULL) {
		data = tu_read(pyc, &len);
		ck_assert_ptr_nonnull(data);
		ck_assert_uint_ge(len, 8);
		ck_assert_int_eq(data[4], 0);	/* flags: not hash-based */
		free(data);
	}
	site_release(&s);
	free(good);
	free(cmd);
	free(pyc_dir);
	free(pyc);
}
END_TEST

/*
 * A new file of the old size installed in the old file's mtime second
 * gets the next second, so that no timestamp .pyc of the old file can
 * pass Python's check (mtime second and size) even if its unlink is lost.
 * An apply that ends in another second proves nothing: up to 5 tries.
 */
START_TEST(test_same_second_mtime)
{
	struct timespec ts[2];
	struct site s;
	struct stat st;
	json_t *reply;
	char *rev[2];
	int i, tried = 0;
	time_t t;

	rev[0] = good_file(1);
	rev[1] = good_file(2);
	site_init(&s, rev[0], 0);
	for (i = 1; i <= 5 && !tried; i++) {
		ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &ts[1]), 0);
		t = ts[1].tv_sec;
		ts[1].tv_nsec = 0;
		ts[0] = ts[1];
		ck_assert_int_eq(utimensat(AT_FDCWD, s.real, ts, 0), 0);
		reply = ask(apply_req(&s, rev[i % 2]));
		assert_ok(reply);
		ck_assert(jbool(reply, "changed"));
		json_decref(reply);
		if (time(NULL) != t)
			continue;
		tried = 1;
		ck_assert_int_eq(stat(s.real, &st), 0);
		ck_assert_int_eq(st.st_mtim.tv_sec, t + 1);
	}
	ck_assert_msg(tried, "no apply within one second in 5 tries");
	site_release(&s);
	free(rev[0]);
	free(rev[1]);
}
END_TEST

/* ---- ENOSPC and EROFS on a tmpfs of our own ---- */

/* Puts a tiny tmpfs on the site's directory, in a private namespace. */
static int
private_tmpfs(const char *dir, const char *what)
{
	if (need_root(what))
		return -1;
	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1) {
		tu_skip(what, "no mount namespace");
		return -1;
	}
	ck_assert_msg(mount("none", dir, "tmpfs", 0, "size=8k,mode=0755") ==
	    0, "mount tmpfs: %s", strerror(errno));
	return 0;
}

START_TEST(test_enospc)
{
	struct site s;
	json_t *reply;
	struct buf big = ENVCTL_BUF_INIT;
	char *msg, *good = good_file(1);
	int i;

	site_init(&s, NULL, 0);
	if (private_tmpfs(s.sitedir, "ENOSPC") != 0) {
		site_release(&s);
		free(good);
		return;
	}
	site_put(&s, "import os\n", 10);
	buf_addstr(&big, good);
	for (i = 0; i < 2000; i++)
		buf_addstr(&big, "# padding padding padding padding\n");
	reply = ask(apply_reqn(&s, big.data, big.len));
	msg = xasprintf("cannot write a temp file beside '%s': No space left "
	    "on device", s.real);
	assert_fail(reply, "ESYS", msg);
	json_decref(reply);
	assert_file(s.real, "import os\n", 10);
	assert_no_leftovers(&s);
	/* The backup made for it went with it. */
	ck_assert_uint_eq(count_backups(&s), 0);
	ck_assert_int_eq(umount(s.sitedir), 0);
	site_release(&s);
	buf_release(&big);
	free(msg);
	free(good);
}
END_TEST

START_TEST(test_erofs)
{
	struct site s;
	json_t *reply;
	char *msg, *good = good_file(1);

	site_init(&s, NULL, 0);
	if (private_tmpfs(s.sitedir, "EROFS") != 0) {
		site_release(&s);
		free(good);
		return;
	}
	site_put(&s, "import os\n", 10);
	ck_assert_msg(mount(NULL, s.sitedir, NULL, MS_REMOUNT | MS_RDONLY,
	    NULL) == 0, "remount ro: %s", strerror(errno));
	reply = ask(apply_req(&s, good));
	msg = xasprintf("cannot create a temp file beside '%s': Read-only "
	    "file system", s.real);
	assert_fail(reply, "ESYS", msg);
	json_decref(reply);
	assert_file(s.real, "import os\n", 10);
	assert_no_leftovers(&s);
	ck_assert_uint_eq(count_backups(&s), 0);
	ck_assert_int_eq(umount(s.sitedir), 0);
	site_release(&s);
	free(msg);
	free(good);
}
END_TEST

/* ---- fault points ---- */

/* An agent with fault points, or NULL (skipped; fails under CI). */
static const char *
fault_bin(void)
{
	const char *bin = getenv("ENVCTL_AGENT_FAULTS");
	json_t *reply;
	int status, has;

	if (bin == NULL)
		bin = agent_bin();
	reply = ask_bin(bin, json_pack("{s:s,s:i,s:s}", "op", "apply", "id",
	    1, "fault", "after-lock"), &status);
	ck_assert_ptr_nonnull(reply);
	has = strcmp(jstr(reply, "message"),
	    "fault points are not compiled in") != 0;
	json_decref(reply);
	if (has)
		return bin;
	tu_skip("faults_agent", "no agent with fault points: set "
	    "ENVCTL_AGENT_FAULTS to one built with -DENVCTL_FAULTS");
	return NULL;
}

START_TEST(test_faults)
{
	static const char *const steps[] = {
		"after-lock", "after-cas", "after-validate", "after-backup",
		"after-temp-write", "after-fsync", "after-rename",
		"after-dirsync", "after-verify",
	};
	const char *bin = fault_bin();
	struct site s;
	json_t *req, *reply;
	char *seed, *good, *dir;
	size_t seedlen, i;
	int status, is_new;

	if (bin == NULL)
		return;
	good = good_file(1);
	seed = fixture_text("seed-broken.sitecustomize.py", &seedlen);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		site_init(&s, seed, 1);
		req = apply_req(&s, good);
		json_object_set_new(req, "fault", json_string(steps[i]));
		reply = ask_bin(bin, req, &status);
		ck_assert_msg(status == 99 && reply == NULL,
		    "%s: status %d", steps[i], status);
		/* Old before the rename, new from it on; never a mix. */
		is_new = i >= 6;
		if (is_new)
			assert_file(s.real, good, strlen(good));
		else
			assert_file(s.real, seed, seedlen);
		dir = xasprintf("%s/etc", s.dir);
		ck_assert_int_eq(count_entries(dir, ".envctl-tmp."),
		    strcmp(steps[i], "after-temp-write") == 0 ||
		    strcmp(steps[i], "after-fsync") == 0);
		free(dir);

		/* The lock died with the agent: no waiting at all; the
		 * stale temp goes; the apply completes. */
		req = apply_req(&s, good);
		json_object_set_new(req, "lock_timeout_ms", json_integer(0));
		reply = ask_bin(bin, req, &status);
		ck_assert_int_eq(status, 0);
		assert_ok(reply);
		ck_assert_msg(jbool(reply, "changed") == !is_new, "%s",
		    steps[i]);
		assert_values(jget(reply, "verify.values"));
		json_decref(reply);
		assert_file(s.real, good, strlen(good));
		assert_no_leftovers(&s);
		site_release(&s);
	}

	/* Rollback passes the same points. */
	site_init(&s, seed, 1);
	reply = ask(apply_req(&s, good));
	assert_ok(reply);
	json_decref(reply);
	req = rollback_req(&s, "latest");
	json_object_set_new(req, "fault", json_string("after-fsync"));
	reply = ask_bin(bin, req, &status);
	ck_assert_int_eq(status, 99);
	ck_assert_ptr_null(reply);
	assert_file(s.real, good, strlen(good));
	req = rollback_req(&s, "latest");
	json_object_set_new(req, "fault", json_string("after-rename"));
	reply = ask_bin(bin, req, &status);
	ck_assert_int_eq(status, 99);
	assert_file(s.real, seed, seedlen);
	req = rollback_req(&s, "latest");
	json_object_set_new(req, "lock_timeout_ms", json_integer(0));
	reply = ask_bin(bin, req, &status);
	assert_ok(reply);
	json_decref(reply);
	assert_file(s.real, good, strlen(good));
	assert_no_leftovers(&s);

	req = apply_req(&s, good);
	json_object_set_new(req, "fault", json_string("after-nothing"));
	reply = ask_bin(bin, req, &status);
	assert_fail(reply, "EINVALID", "apply: unknown fault point "
	    "'after-nothing'");
	json_decref(reply);
	site_release(&s);
	free(seed);
	free(good);
}
END_TEST

/* Without -DENVCTL_FAULTS the field is refused. */
START_TEST(test_faults_not_compiled)
{
	struct site s;
	json_t *req, *reply;
	char *good = good_file(1);
	int status;

	site_init(&s, "import os\n", 0);
	req = apply_req(&s, good);
	json_object_set_new(req, "fault", json_string("after-rename"));
	reply = ask_bin(agent_bin(), req, &status);
	if (reply == NULL) {
		/* A fault build: it died where told. */
		ck_assert_int_eq(status, 99);
		fprintf(stderr, "check_agent_apply: %s has fault points, "
		    "their refusal not tested\n", agent_bin());
	} else {
		assert_fail(reply, "EINVALID",
		    "fault points are not compiled in");
		assert_file(s.real, "import os\n", 10);
	}
	json_decref(reply);
	site_release(&s);
	free(good);
}
END_TEST

/* ---- the lock ---- */

struct holder {
	pid_t	pid;
	char	*who;	/* what it wrote into the lock file */
	char	*path;	/* the lock file */
};

/*
 * Starts a process that holds the site's lock for ms milliseconds, named
 * comm ("envctl-agent": as another agent would; NULL: the test's own).
 */
static void
hold_lock(struct holder *h, const struct site *s, int ms, const char *comm)
{
	char *name = xasprintf("%s.lock", s->real), *path, *p;
	int fd, sync[2];
	char c;

	for (p = name; *p != '\0'; p++)
		if (*p == '/')
			*p = '%';
	mkdir(s->lockdir, 0700);
	path = xasprintf("%s/%s", s->lockdir, name);
	ck_assert_int_eq(pipe(sync), 0);
	if ((h->pid = fork()) == 0) {
		close(sync[0]);
		if (comm != NULL)
			prctl(PR_SET_NAME, comm, 0, 0, 0);
		fd = open(path, O_RDWR | O_CREAT, 0600);
		if (fd == -1 || flock(fd, LOCK_EX) == -1)
			_exit(1);
		dprintf(fd, "pid=%ld controller=helper "
		    "time=2026-12-02T13:35:01Z\n", (long)getpid());
		if (write(sync[1], "x", 1) != 1)
			_exit(1);
		/* How long it holds the lock is what the tests are about. */
		usleep((useconds_t)ms * 1000);
		_exit(0);
	}
	close(sync[1]);
	ck_assert_int_eq(read(sync[0], &c, 1), 1);
	close(sync[0]);
	h->who = xasprintf("pid=%ld controller=helper "
	    "time=2026-12-02T13:35:01Z", (long)h->pid);
	h->path = path;
	free(name);
}

static void
holder_end(struct holder *h)
{
	int st;

	kill(h->pid, SIGKILL);
	waitpid(h->pid, &st, 0);
	free(h->who);
	free(h->path);
}

START_TEST(test_lock)
{
	struct site s;
	struct holder h;
	struct stat st;
	json_t *req, *reply;
	char *good = good_file(1), *msg, *name, *p, *fallback;
	long long t0, dt;

	site_init(&s, "import os\n", 1);

	/* Held for long: the apply gives up after lock_timeout_ms. */
	hold_lock(&h, &s, 20000, "envctl-agent");
	req = apply_req(&s, good);
	json_object_set_new(req, "lock_timeout_ms", json_integer(300));
	t0 = now_ms();
	reply = ask(req);
	dt = now_ms() - t0;
	msg = xasprintf("'%s' is locked by another envctl (%s)", s.real,
	    h.who);
	assert_fail(reply, "ELOCKED", msg);
	ck_assert_int_ge(dt, 300);
	json_decref(reply);
	holder_end(&h);
	assert_file(s.real, "import os\n", 10);
	assert_absent(s.backups);

	/* Held for a while: the apply waits, then goes ahead. */
	hold_lock(&h, &s, 700, "envctl-agent");
	t0 = now_ms();
	reply = ask(apply_req(&s, good));
	dt = now_ms() - t0;
	assert_ok(reply);
	ck_assert(jbool(reply, "changed"));
	ck_assert_msg(dt >= 500, "did not wait: %lld ms", dt);
	json_decref(reply);
	holder_end(&h);
	assert_file(s.real, good, strlen(good));

	/* No usable lock directory: the lock goes into the backup dir. */
	name = xasprintf("%s.lock", s.real);
	for (p = name; *p != '\0'; p++)
		if (*p == '/')
			*p = '%';
	fallback = xasprintf("%s/%s", s.backups, name);
	free(good);
	good = good_file(2);
	req = apply_req(&s, good);
	json_object_set_new(req, "lock_dir", json_string("/nonexistent/"
	    "envctl-lock"));
	reply = ask(req);
	assert_ok(reply);
	json_decref(reply);
	ck_assert_int_eq(stat(fallback, &st), 0);
	/* A lock directory others may enter is refused, never used. */
	ck_assert_int_eq(unlink(fallback), 0);
	ck_assert_int_eq(chmod(s.lockdir, 0755), 0);
	free(good);
	good = good_file(3);
	reply = ask(apply_req(&s, good));
	free(msg);
	msg = xasprintf("lock directory '%s' has mode 0755, which lets "
	    "others open its lock files (want 0700): refusing it", s.lockdir);
	assert_fail(reply, "EINVALID", msg);
	json_decref(reply);
	ck_assert_int_ne(stat(fallback, &st), 0);
	ck_assert_int_eq(chmod(s.lockdir, 0700), 0);
	site_release(&s);
	free(good);
	free(msg);
	free(name);
	free(fallback);
}
END_TEST

/*
 * Held by something that is not envctl: named by pid, user and command.
 * A symlink planted at the lock file's path is never followed.
 */
START_TEST(test_lock_foreign)
{
	struct site s;
	struct holder h;
	struct passwd *pw = getpwuid(geteuid());
	json_t *req, *reply;
	char *good = good_file(1), *msg, *cmd, *name, *path, *p, *victim;
	size_t n, i;

	site_init(&s, "import os\n", 0);
	hold_lock(&h, &s, 20000, NULL);
	req = apply_req(&s, good);
	json_object_set_new(req, "lock_timeout_ms", json_integer(100));
	reply = ask(req);
	/* The holder is a fork of this test: its cmdline is ours. */
	cmd = tu_read("/proc/self/cmdline", &n);
	ck_assert_ptr_nonnull(cmd);
	while (n > 0 && cmd[n - 1] == '\0')
		n--;
	for (i = 0; i < n; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	cmd[n] = '\0';
	ck_assert_ptr_nonnull(pw);
	msg = xasprintf("the lock of '%s' is held by pid %ld (user %s: %s), "
	    "not by envctl", s.real, (long)h.pid, pw->pw_name, cmd);
	assert_fail(reply, "ELOCKED", msg);
	json_decref(reply);
	holder_end(&h);
	assert_file(s.real, "import os\n", 10);

	/* A symlink at the lock path: not followed, nothing made there. */
	name = xasprintf("%s.lock", s.real);
	for (p = name; *p != '\0'; p++)
		if (*p == '/')
			*p = '%';
	path = xasprintf("%s/%s", s.lockdir, name);
	victim = xasprintf("%s/victim", s.dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink(victim, path), 0);
	reply = ask(apply_req(&s, good));
	free(msg);
	msg = xasprintf("cannot open the lock file '%s/%s'", s.lockdir,
	    name);
	assert_fail_prefix(reply, "ESYS", msg);
	json_decref(reply);
	assert_absent(victim);
	assert_file(s.real, "import os\n", 10);
	site_release(&s);
	free(good);
	free(msg);
	free(cmd);
	free(name);
	free(path);
	free(victim);
}
END_TEST

/* SIGTERM while waiting: the agent answers and exits 128 + SIGTERM. */
START_TEST(test_lock_sigterm)
{
	struct site s;
	struct holder h;
	struct buf out = ENVCTL_BUF_INIT;
	json_t *req, *reply = NULL;
	char chunk[4096], *msg, *good = good_file(1);
	char ev[sizeof(struct inotify_event) + NAME_MAX + 1];
	int to, from, st = 0, ino;
	struct pollfd pfd;
	pid_t agent;
	ssize_t n;

	site_init(&s, "import os\n", 0);
	hold_lock(&h, &s, 20000, "envctl-agent");
	req = apply_req(&s, good);
	json_object_set_new(req, "lock_timeout_ms", json_integer(20000));
	/*
	 * The agent opens the lock file only to wait on it, with the stop
	 * signals already blocked: once it has, SIGTERM lands in the wait.
	 */
	ino = inotify_init1(IN_CLOEXEC);
	ck_assert_int_ge(ino, 0);
	ck_assert_int_ge(inotify_add_watch(ino, h.path, IN_OPEN), 0);
	agent = agent_start(req, &to, &from);
	pfd.fd = ino;
	pfd.events = POLLIN;
	ck_assert_msg(poll(&pfd, 1, 30000) == 1,
	    "the agent did not open the lock file in 30 s");
	ck_assert_int_gt(read(ino, ev, sizeof(ev)), 0);
	close(ino);
	ck_assert_int_eq(kill(agent, SIGTERM), 0);
	while ((n = read(from, chunk, sizeof(chunk))) > 0)
		buf_add(&out, chunk, (size_t)n);
	ck_assert_int_eq(waitpid(agent, &st, 0), agent);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 128 + SIGTERM);
	ck_assert_int_eq(proto_decode(&reply, &out, NULL), 1);
	msg = xasprintf("stopped while waiting for the lock on '%s': the "
	    "agent is shutting down", s.real);
	assert_fail(reply, "ESYS", msg);
	holder_end(&h);
	assert_file(s.real, "import os\n", 10);
	close(to);
	close(from);
	json_decref(reply);
	buf_release(&out);
	site_release(&s);
	free(msg);
	free(good);
}
END_TEST

/* ---- backups, prune, rollback ---- */

START_TEST(test_prune_keep)
{
	struct site s;
	json_t *req, *reply, *list;
	char *text, *ids[5], *dir, *orphan;
	int i;

	site_init(&s, "import os\n", 1);
	for (i = 0; i < 5; i++) {
		text = good_file(i + 1);
		req = apply_req(&s, text);
		json_object_set_new(jget(req, "backup"), "keep",
		    json_integer(3));
		if (i == 3) {
			/* A leftover of an interrupted backup goes too. */
			dir = xstrdup(s.store);
			orphan = tu_writes(dir, "20200101T000000Z-absent",
			    "");
			free(orphan);
			orphan = tu_writes(dir,
			    "20200101T000000Z-absent.json.tmp", "{");
			free(orphan);
			free(dir);
		}
		reply = ask(req);
		free(text);
		assert_ok(reply);
		ids[i] = xstrdup(jstr(reply, "backup.id"));
		json_decref(reply);
	}
	list = list_backups(&s);
	ck_assert_uint_eq(json_array_size(list), 3);
	for (i = 0; i < 3; i++) {
		ck_assert_str_eq(jstr(json_array_get(list, i), "id"),
		    ids[4 - i]);
		ck_assert_int_eq(jint(json_array_get(list, i), "seq"), 5 - i);
	}
	json_decref(list);
	/* Exactly three pairs remain on disk. */
	ck_assert_int_eq(count_entries(s.store, ""), 6);
	ck_assert_int_eq(count_entries(s.store, ".json"), 3);
	site_release(&s);
	for (i = 0; i < 5; i++)
		free(ids[i]);
}
END_TEST

/* Two backups in one second of the same bytes get distinct ids. */
START_TEST(test_same_second)
{
	struct site s;
	json_t *reply;
	char *good = good_file(1), *sha, *id, *meta, *js;
	char stamp[32];
	struct tm tm;
	time_t now;
	int k;

	site_init(&s, "import os\n", 0);
	ck_assert_int_eq(chmod(s.real, 0644), 0);
	sha = hex_sha256("import os\n", 10);
	/* Complete backups already hold this second's id and the next. */
	now = time(NULL);
	mkdirs(s.store);
	for (k = 0; k < 3; k++) {
		time_t t = now + k;

		gmtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
		id = xasprintf("%s-%.12s", stamp, sha);
		free(tu_writes(s.store, id, "import os\n"));
		meta = xasprintf("%s.json", id);
		/* Mode 0600: another version than the file (0644). */
		js = xasprintf("{\"id\":\"%s\",\"seq\":%d,\"absent\":false,"
		    "\"size\":10,\"mode\":384,\"uid\":0,\"gid\":0}", id,
		    k + 1);
		free(tu_writes(s.store, meta, js));
		free(id);
		free(meta);
		free(js);
	}
	reply = ask(apply_req(&s, good));
	assert_ok(reply);
	id = xstrdup(jstr(reply, "backup.id"));
	ck_assert_uint_eq(strlen(id), 17 + 12 + 2);
	ck_assert_str_eq(id + 29, "-2");
	ck_assert_int_eq(strncmp(id + 17, sha, 12), 0);
	json_decref(reply);
	site_release(&s);
	free(good);
	free(sha);
	free(id);
}
END_TEST

START_TEST(test_rollback)
{
	struct site s;
	struct stat st;
	json_t *req, *reply, *list;
	char *seed, *good = good_file(1), *b1, *b2, *b3, *msg, *sha;
	size_t seedlen, i;
	int root = geteuid() == 0;

	seed = fixture_text("seed-broken.sitecustomize.py", &seedlen);
	site_init(&s, seed, 1);
	if (root)
		ck_assert_int_eq(chown(s.real, 1, 1), 0);
	ck_assert_int_eq(chmod(s.real, 0604), 0);
	reply = ask(apply_req(&s, good));
	assert_ok(reply);
	b1 = xstrdup(jstr(reply, "backup.id"));
	json_decref(reply);
	/* Someone changes the mode; compare-and-swap looks at bytes only. */
	ck_assert_int_eq(chmod(s.real, 0600), 0);

	/* latest: back to the broken seed, whose start-up error is
	 * reported, not fatal. */
	reply = ask(rollback_req(&s, "latest"));
	assert_ok(reply);
	ck_assert(jbool(reply, "changed"));
	ck_assert_str_eq(jstr(reply, "restored"), b1);
	ck_assert_str_eq(jstr(reply, "real"), s.real);
	ck_assert_str_eq(jstr(reply, "verify.startup_error.exception"),
	    "TypeError: str expected, not ellipsis");
	for (i = 0; i < 6; i++)
		ck_assert(json_is_null(json_object_get(jget(reply,
		    "verify.values"), nccl[i])));
	b2 = xstrdup(jstr(reply, "backup.id"));
	sha = hex_sha256(good, strlen(good));
	msg = xstrndup(sha, 12);
	assert_id(b2, msg);
	free(msg);
	assert_file(jstr(reply, "backup.path"), good, strlen(good));
	json_decref(reply);
	assert_file(s.real, seed, seedlen);
	ck_assert_int_eq(lstat(s.target, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(stat(s.real, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0604);
	if (root) {
		ck_assert_int_eq(st.st_uid, 1);
		ck_assert_int_eq(st.st_gid, 1);
	}
	list = list_backups(&s);
	ck_assert_uint_eq(json_array_size(list), 2);
	ck_assert_str_eq(jstr(json_array_get(list, 0), "id"), b2);
	ck_assert_str_eq(jstr(json_array_get(list, 0), "op"), "rollback");
	ck_assert_str_eq(jstr(json_array_get(list, 0), "sha256"), sha);
	ck_assert_int_eq(jint(json_array_get(list, 0), "mode"), 0600);
	json_decref(list);

	/* By id: the working file again, with the mode it had. */
	reply = ask(rollback_req(&s, b2));
	assert_ok(reply);
	ck_assert(jbool(reply, "changed"));
	ck_assert_str_eq(jstr(reply, "restored"), b2);
	assert_values(jget(reply, "verify.values"));
	assert_null(reply, "verify.startup_error");
	b3 = xstrdup(jstr(reply, "backup.id"));
	json_decref(reply);
	assert_file(s.real, good, strlen(good));
	ck_assert_int_eq(stat(s.real, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);

	/* The same again: nothing to do, no backup. */
	reply = ask(rollback_req(&s, b2));
	assert_ok(reply);
	ck_assert(!jbool(reply, "changed"));
	ck_assert_ptr_null(jget(reply, "backup"));
	json_decref(reply);

	reply = ask(rollback_req(&s, "nope"));
	msg = xasprintf("no backup 'nope' of '%s' (newest: %s, %s, %s)",
	    s.real, b3, b2, b1);
	assert_fail(reply, "ENOTFOUND", msg);
	json_decref(reply);
	free(msg);

	req = rollback_req(&s, b1);
	json_object_set_new(req, "expect", json_pack("{s:b}", "exists", 0));
	json_object_set_new(req, "sha256_old", json_null());
	reply = ask(req);
	msg = xasprintf("'%s' changed since it was read (now %zu bytes)",
	    s.real, strlen(good));
	assert_fail(reply, "ECHANGED", msg);
	json_decref(reply);
	free(msg);
	assert_file(s.real, good, strlen(good));
	ck_assert_uint_eq(count_backups(&s), 3);
	assert_no_leftovers(&s);
	site_release(&s);
	free(seed);
	free(good);
	free(b1);
	free(b2);
	free(b3);
	free(sha);
}
END_TEST

START_TEST(test_rollback_nothing)
{
	struct site s;
	json_t *reply;
	char *good = good_file(1), *msg, *id;

	site_init(&s, "import os\n", 0);
	reply = ask(rollback_req(&s, "latest"));
	msg = xasprintf("no backups of '%s' in '%s'", s.real, s.backups);
	assert_fail(reply, "ENOTFOUND", msg);
	json_decref(reply);
	free(msg);

	/* The only backup holds what the file holds again. */
	reply = ask(apply_req(&s, good));
	assert_ok(reply);
	id = xstrdup(jstr(reply, "backup.id"));
	json_decref(reply);
	site_put(&s, "import os\n", 10);
	reply = ask(rollback_req(&s, "latest"));
	msg = xasprintf("no backup of '%s' differs from the current file "
	    "(newest: %s)", s.real, id);
	assert_fail(reply, "ENOTFOUND", msg);
	json_decref(reply);
	assert_file(s.real, "import os\n", 10);
	site_release(&s);
	free(good);
	free(msg);
	free(id);
}
END_TEST

START_TEST(test_backups_list)
{
	struct site s;
	json_t *reply, *list, *m, *ign;
	char *a = good_file(1), *b = good_file(2), *ids[2];
	static const char *const fields[] = {
		"id", "seq", "time", "op", "path", "real", "absent", "size",
		"sha256", "mode", "uid", "gid", "owner", "group", "playbook",
		"controller",
	};
	size_t i;

	site_init(&s, "import os\n", 1);
	reply = ask(backups_req(&s));
	assert_ok(reply);
	ck_assert_uint_eq(json_array_size(jget(reply, "backups")), 0);
	ck_assert_uint_eq(json_array_size(jget(reply, "ignored")), 0);
	json_decref(reply);
	assert_absent(s.backups);

	reply = ask(apply_req(&s, a));
	assert_ok(reply);
	ids[0] = xstrdup(jstr(reply, "backup.id"));
	json_decref(reply);
	reply = ask(apply_req(&s, b));
	assert_ok(reply);
	ids[1] = xstrdup(jstr(reply, "backup.id"));
	json_decref(reply);

	/* Damaged entries are named, leftovers are not listed. */
	free(tu_writes(s.store, "bogus.json", "{"));
	free(tu_writes(s.store, "20200101T000000Z-nodata.json",
	    "{\"id\":\"20200101T000000Z-nodata\",\"seq\":9,"
	    "\"absent\":true,\"size\":0}"));
	free(tu_writes(s.store, "20200101T000000Z-short", "abc"));
	free(tu_writes(s.store, "20200101T000000Z-short.json",
	    "{\"id\":\"20200101T000000Z-short\",\"seq\":9,"
	    "\"absent\":true,\"size\":4}"));
	free(tu_writes(s.store, "20200101T000000Z-leftover", "abc"));

	reply = ask(backups_req(&s));
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "dir"), s.store);
	list = jget(reply, "backups");
	ck_assert_uint_eq(json_array_size(list), 2);
	ck_assert_str_eq(jstr(json_array_get(list, 0), "id"), ids[1]);
	ck_assert_str_eq(jstr(json_array_get(list, 1), "id"), ids[0]);
	m = json_array_get(list, 0);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		ck_assert_msg(json_object_get(m, fields[i]) != NULL,
		    "no '%s'", fields[i]);
	ck_assert_int_eq(jint(m, "size"), strlen(a));
	ign = jget(reply, "ignored");
	ck_assert_uint_eq(json_array_size(ign), 3);
	for (i = 0; i < 3; i++) {
		m = json_array_get(ign, i);
		if (strcmp(jstr(m, "name"), "bogus.json") == 0)
			ck_assert_str_eq(jstr(m, "reason"),
			    "metadata is not a JSON object");
		else if (strstr(jstr(m, "name"), "nodata") != NULL)
			ck_assert_str_eq(jstr(m, "reason"),
			    "the data file is missing");
		else
			ck_assert_str_eq(jstr(m, "reason"),
			    "the data file's size differs from the metadata");
	}
	json_decref(reply);

	reply = ask(json_pack("{s:s,s:i,s:s,s:{s:s}}", "op", "backups", "id",
	    1, "path", "rel/x.py", "backup", "dir", s.backups));
	assert_fail(reply, "EINVALID",
	    "backups: 'path' must be an absolute path");
	json_decref(reply);
	reply = ask(json_pack("{s:s,s:i,s:s}", "op", "backups", "id", 1,
	    "path", s.target));
	assert_fail(reply, "EINVALID",
	    "backups: 'backup.dir' must be an absolute path");
	json_decref(reply);
	site_release(&s);
	free(a);
	free(b);
	free(ids[0]);
	free(ids[1]);
}
END_TEST

/*
 * A read that asks for the backups (rollback, envctl backups) lists what
 * the backups op lists, in the same reply.
 */
START_TEST(test_read_lists_backups)
{
	struct site s;
	json_t *reply, *op, *bk;
	char *a = good_file(1);

	site_init(&s, "import os\n", 1);
	reply = ask(apply_req(&s, a));
	assert_ok(reply);
	json_decref(reply);
	op = ask(backups_req(&s));
	assert_ok(op);
	reply = ask(json_pack("{s:s,s:i,s:s,s:s,s:[s],s:i,s:{s:s}}", "op",
	    "read", "id", 1, "interpreter", s.interp, "path", s.target, "vars",
	    "NCCL_PROTO", "timeout_ms", 20000, "backups", "dir", s.backups));
	assert_ok(reply);
	bk = jget(reply, "backups");
	ck_assert_ptr_nonnull(bk);
	assert_ok(bk);
	ck_assert_str_eq(jstr(bk, "real"), s.real);
	ck_assert_str_eq(jstr(bk, "dir"), s.store);
	ck_assert(json_equal(jget(bk, "backups"), jget(op, "backups")));
	ck_assert_uint_eq(json_array_size(jget(bk, "backups")), 1);
	json_decref(reply);
	json_decref(op);

	/* A relative directory: the read stands, the request is refused. */
	reply = ask(json_pack("{s:s,s:i,s:s,s:s,s:[s],s:i,s:{s:s}}", "op",
	    "read", "id", 1, "interpreter", s.interp, "path", s.target, "vars",
	    "NCCL_PROTO", "timeout_ms", 20000, "backups", "dir", "rel"));
	assert_fail(reply, "EINVALID",
	    "read: 'backups.dir' must be null or an absolute path");
	json_decref(reply);
	site_release(&s);
	free(a);
}
END_TEST

/* Each case: a change to a valid request, and the EINVALID message. */
START_TEST(test_bad_args)
{
	static const struct {
		const char	*op;	/* "apply" or "rollback" */
		const char	*key;
		const char	*json;	/* NULL: key removed */
		const char	*msg;
	} v[] = {
		{ "apply", "path", NULL, "apply: 'path' must be an absolute "
		    "path" },
		{ "apply", "path", "\"rel/x.py\"", "apply: 'path' must be an "
		    "absolute path" },
		{ "rollback", "path", "\"rel/x.py\"", "rollback: 'path' must "
		    "be an absolute path" },
		{ "apply", "interpreter", "\"bin/python3\"", "apply: "
		    "'interpreter' must be a command name or an absolute "
		    "path" },
		{ "apply", "expect", NULL, "apply: 'expect' must be an object "
		    "with a boolean 'exists'" },
		{ "apply", "expect", "{\"exists\":1}", "apply: 'expect' must "
		    "be an object with a boolean 'exists'" },
		{ "apply", "expect", "{\"exists\":true}", "apply: "
		    "'expect.data' must be a base64 string" },
		{ "apply", "expect", "{\"exists\":true,\"data\":\"!!!!\"}",
		    "apply: 'expect.data' is not valid base64" },
		{ "apply", "sha256_old", "\"ABC\"", "apply: 'sha256_old' must "
		    "be a SHA-256 in lowercase hex when 'expect.exists' is "
		    "true" },
		{ "apply", "backup", NULL, "apply: 'backup.dir' must be an "
		    "absolute path" },
		{ "apply", "backup", "{\"dir\":\"/x\",\"keep\":0}", "apply: "
		    "'backup.keep' must be an integer from 1 to 10000" },
		{ "apply", "backup", "{\"dir\":\"/x\"}", "apply: "
		    "'backup.keep' must be an integer from 1 to 10000" },
		{ "apply", "controller", "\"\"", "apply: 'playbook' and "
		    "'controller' must be strings of 1 to 256 printable "
		    "bytes" },
		{ "apply", "playbook", "\"a\\nb\"", "apply: 'playbook' and "
		    "'controller' must be strings of 1 to 256 printable "
		    "bytes" },
		{ "apply", "lock_dir", "\"run/lock\"", "apply: 'lock_dir' "
		    "must be null or an absolute path" },
		{ "apply", "lock_timeout_ms", "-1", "apply: "
		    "'lock_timeout_ms' must be an integer from 0 to "
		    "3600000" },
		{ "apply", "timeout_ms", "0", "apply: 'timeout_ms' must be an "
		    "integer from 1 to 3600000" },
		{ "apply", "secret", "\"NCCL_PROTO\"", "apply: 'secret' must "
		    "be an array of variable names" },
		{ "apply", "data", NULL, "apply: 'data' must be a base64 "
		    "string" },
		{ "apply", "sha256_new", "null", "apply: 'sha256_new' must be "
		    "a SHA-256 in lowercase hex" },
		{ "apply", "vars", "[\"NCCL_PROTO\"]", "apply: 'vars' must be "
		    "an object of at most 1024 variables" },
		{ "apply", "vars", "{\"A=B\":\"x\"}", "apply: vars: 'A=B' is "
		    "not a variable name" },
		{ "apply", "vars", "{\"A\":1}", "apply: vars: 'A' must be a "
		    "string" },
		{ "apply", "create", "\"0644\"", "apply: 'create' must be an "
		    "object with an integer 'mode' (0 to 4095) and string "
		    "'owner' and 'group'" },
		{ "apply", "create", "{\"mode\":4096}", "apply: 'create' must "
		    "be an object with an integer 'mode' (0 to 4095) and "
		    "string 'owner' and 'group'" },
		{ "rollback", "to", NULL, "rollback: 'to' must be \"latest\" "
		    "or a backup id" },
		{ "rollback", "to", "\"../x\"", "rollback: 'to' must be "
		    "\"latest\" or a backup id" },
		{ "rollback", "vars", "\"NCCL_PROTO\"", "rollback: 'vars' "
		    "must be an array of at most 1024 names" },
		{ "rollback", "vars", "[\"\"]", "rollback: vars[0] is not a "
		    "variable name" },
		{ "rollback", "backup", "{\"dir\":\"x\",\"keep\":1}",
		    "rollback: 'backup.dir' must be an absolute path" },
	};
	struct site s;
	struct buf in = ENVCTL_BUF_INIT, out = ENVCTL_BUF_INIT;
	struct tu_run r;
	char *argv[] = { (char *)agent_bin(), NULL }, *good = good_file(1);
	json_t *req, *reply;
	size_t i, n = sizeof(v) / sizeof(v[0]);

	site_init(&s, "import os\n", 0);
	/* All in one session: argument errors do not end it. */
	for (i = 0; i < n; i++) {
		req = strcmp(v[i].op, "apply") == 0 ? apply_req(&s, good) :
		    rollback_req(&s, "latest");
		if (v[i].json == NULL)
			json_object_del(req, v[i].key);
		else
			json_object_set_new(req, v[i].key,
			    json_loads(v[i].json, JSON_DECODE_ANY, NULL));
		json_object_set_new(req, "id", json_integer((json_int_t)i));
		ck_assert_int_eq(proto_encode(&in, req, NULL), 0);
		json_decref(req);
	}
	tu_run(&r, argv, NULL, in.data, in.len);
	ck_assert_int_eq(r.status, 0);
	buf_add(&out, r.out, r.outlen);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(proto_decode(&reply, &out, NULL), 1);
		ck_assert_int_eq(jint(reply, "id"), (json_int_t)i);
		assert_fail(reply, "EINVALID", v[i].msg);
		json_decref(reply);
	}
	ck_assert_uint_eq(out.len, 0);
	tu_run_free(&r);
	assert_file(s.real, "import os\n", 10);
	assert_absent(s.backups);
	assert_absent(s.lockdir);

	/* A new file past the cap. */
	buf_reset(&in);
	for (i = 0; i < (9u << 20) / 64; i++)
		buf_addstr(&in, "# 64 bytes of padding .................."
		    "......................\n");
	reply = ask(apply_reqn(&s, in.data, in.len));
	assert_fail(reply, "ETOOBIG", "apply: 'data' is larger than 8 MiB");
	json_decref(reply);
	site_release(&s);
	buf_release(&in);
	buf_release(&out);
	free(good);
}
END_TEST

/* ---- backups keep history (issue 16) ---- */

/* Applies text with keep; returns the reply (asserted ok). */
static json_t *
apply_keep(const struct site *s, const char *text, int keep)
{
	json_t *req = apply_req(s, text), *reply;

	json_object_set_new(jget(req, "backup"), "keep", json_integer(keep));
	reply = ask(req);
	assert_ok(reply);
	return reply;
}

/* The ids the agent lists, newest first, as one "a b c" string. */
static char *
backup_ids(const struct site *s)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *list = list_backups(s), *m;
	size_t i;

	json_array_foreach(list, i, m)
		buf_addf(&b, "%s%s", i > 0 ? " " : "", jstr(m, "id"));
	json_decref(list);
	return buf_detach(&b, NULL);
}

/* Puts (text) or removes (NULL) the file that shadows the site's. */
static void
shadow_put(const struct site *s, const char *text)
{
	char *path = xasprintf("%s/sitecustomize.py", s->shadow);

	if (text != NULL)
		free(tu_writes(s->shadow, "sitecustomize.py", text));
	else
		ck_assert_int_eq(unlink(path), 0);
	free(path);
}

#define SHADOW_SIMPLE	"import os\nos.environ['NCCL_PROTO'] = 'Simple'\n"

/*
 * Eleven failed verifications (drift --fix on a shadowed host) leave
 * every older distinct backup and add none.
 */
START_TEST(test_failed_keeps_history)
{
	struct site s;
	json_t *reply, *req;
	char *text, *before, *after, *cur;
	int i;

	site_init(&s, "import os\n", 1);
	for (i = 1; i <= 3; i++) {
		text = good_file(i);
		json_decref(apply_keep(&s, text, 3));
		free(text);
	}
	before = backup_ids(&s);
	ck_assert_uint_eq(count_backups(&s), 3);
	cur = good_file(3);
	shadow_put(&s, SHADOW_SIMPLE);
	text = good_file(4);
	for (i = 0; i < 11; i++) {
		req = apply_req(&s, text);
		json_object_set_new(jget(req, "backup"), "keep",
		    json_integer(3));
		reply = ask(req);
		assert_fail_prefix(reply, "EVERIFY", "verification failed: ");
		ck_assert(jbool(reply, "detail.restored"));
		/* Made for the change, removed with it. */
		ck_assert_ptr_null(jget(reply, "detail.backup"));
		json_decref(reply);
		assert_file(s.real, cur, strlen(cur));
	}
	after = backup_ids(&s);
	ck_assert_str_eq(after, before);
	/* Exactly the three pairs, no leftover. */
	ck_assert_int_eq(count_entries(s.store, ""), 6);
	assert_no_leftovers(&s);
	site_release(&s);
	free(text);
	free(cur);
	free(before);
	free(after);
}
END_TEST

/*
 * A file identical to the newest backup (bytes, mode, owner) is not saved
 * again: the change names that backup, and a failed change keeps it.  The
 * same bytes with another mode are another version.
 */
START_TEST(test_backup_not_twice)
{
	struct site s;
	json_t *reply, *list;
	char *g1 = good_file(1), *g2 = good_file(2), *id0;

	site_init(&s, g2, 0);
	ck_assert_int_eq(chmod(s.real, 0644), 0);
	reply = apply_keep(&s, g1, 10);
	id0 = xstrdup(jstr(reply, "backup.id"));
	json_decref(reply);
	/* Someone puts the old file back, same mode. */
	site_put(&s, g2, strlen(g2));
	reply = apply_keep(&s, g1, 10);
	ck_assert(jbool(reply, "changed"));
	ck_assert_str_eq(jstr(reply, "backup.id"), id0);
	json_decref(reply);
	ck_assert_uint_eq(count_backups(&s), 1);
	ck_assert_int_eq(count_entries(s.store, ""), 2);

	/* A failed change names the backup it reused, and keeps it. */
	site_put(&s, g2, strlen(g2));
	shadow_put(&s, SHADOW_SIMPLE);
	reply = ask(apply_req(&s, g1));
	assert_fail_prefix(reply, "EVERIFY", "verification failed: ");
	ck_assert(jbool(reply, "detail.restored"));
	ck_assert_str_eq(jstr(reply, "detail.backup.id"), id0);
	json_decref(reply);
	ck_assert_uint_eq(count_backups(&s), 1);
	ck_assert_int_eq(count_entries(s.store, ""), 2);
	assert_file(s.real, g2, strlen(g2));
	shadow_put(&s, NULL);

	/* The same bytes, another mode: a new version. */
	ck_assert_int_eq(chmod(s.real, 0600), 0);
	reply = apply_keep(&s, g1, 10);
	ck_assert_str_ne(jstr(reply, "backup.id"), id0);
	json_decref(reply);
	list = list_backups(&s);
	ck_assert_int_eq(jint(json_array_get(list, 0), "mode"), 0600);
	json_decref(list);
	ck_assert_uint_eq(count_backups(&s), 2);
	site_release(&s);
	free(g1);
	free(g2);
	free(id0);
}
END_TEST

/*
 * Backups of versions C, A, B, A (oldest first) with keep 3: the older A
 * goes, C stays; counting entries instead of versions would drop C.
 */
START_TEST(test_prune_distinct)
{
	struct site s;
	json_t *reply, *list;
	char *text, *ids[4], *expect;
	static const int order[] = { 1, 2, 1, 4 };
	char *pa, *pb, *da, *db;
	size_t i, j, la, lb;

	text = good_file(3);
	site_init(&s, text, 0);
	free(text);
	for (i = 0; i < 4; i++) {
		text = good_file(order[i]);
		reply = apply_keep(&s, text, 3);
		ids[i] = xstrdup(jstr(reply, "backup.id"));
		json_decref(reply);
		free(text);
	}
	/* Newest A (ids[3]), B (ids[2]), C (ids[0]); the old A is gone. */
	expect = xasprintf("%s %s %s", ids[3], ids[2], ids[0]);
	text = backup_ids(&s);
	ck_assert_str_eq(text, expect);
	free(text);
	free(expect);
	ck_assert_int_eq(count_entries(s.store, ""), 6);
	/* The three kept are three versions, byte for byte. */
	list = list_backups(&s);
	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++) {
			pa = xasprintf("%s/%s", s.store,
			    jstr(json_array_get(list, i), "id"));
			pb = xasprintf("%s/%s", s.store,
			    jstr(json_array_get(list, j), "id"));
			da = tu_read(pa, &la);
			db = tu_read(pb, &lb);
			ck_assert(da != NULL && db != NULL);
			ck_assert(la != lb || memcmp(da, db, la) != 0);
			free(da);
			free(db);
			free(pa);
			free(pb);
		}
	json_decref(list);
	site_release(&s);
	for (i = 0; i < 4; i++)
		free(ids[i]);
}
END_TEST

/*
 * The loser of two applies: under the lock it finds not what it read but
 * what it wanted, installed by the winner.  That is ok, not a conflict;
 * no backup is made.  Other bytes are still a conflict (test_cas).
 */
START_TEST(test_cas_loser)
{
	struct site s;
	json_t *req, *reply;
	char *good = good_file(1);

	site_init(&s, "import os\n", 1);
	req = apply_req(&s, good);
	/* The winner's change, made between our read and our lock. */
	site_put(&s, good, strlen(good));
	reply = ask(req);
	assert_ok(reply);
	ck_assert(!jbool(reply, "changed"));
	ck_assert_str_eq(jstr(reply, "note"), "already as desired; changed "
	    "by another run meanwhile");
	ck_assert_str_eq(jstr(reply, "real"), s.real);
	assert_values(jget(reply, "verify.values"));
	json_decref(reply);
	assert_absent(s.backups);
	assert_file(s.real, good, strlen(good));
	assert_no_leftovers(&s);

	/* It read "absent"; the winner created the file. */
	ck_assert_int_eq(unlink(s.real), 0);
	req = apply_req(&s, good);
	site_put(&s, good, strlen(good));
	reply = ask(req);
	assert_ok(reply);
	ck_assert(!jbool(reply, "changed"));
	ck_assert_ptr_nonnull(jstr(reply, "note"));
	json_decref(reply);
	assert_absent(s.backups);
	site_release(&s);
	free(good);
}
END_TEST

/* ---- an apply sent with its read ("after_read") ---- */

/* Sends reqs (taken) in one session; the replies, one per request. */
static json_t *
ask_session(json_t **reqs, size_t n)
{
	char *argv[] = { (char *)agent_bin(), NULL };
	struct buf in = ENVCTL_BUF_INIT, out = ENVCTL_BUF_INIT;
	struct tu_run r;
	json_t *replies = json_array(), *m;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(reqs[i]);
		ck_assert_int_eq(proto_encode(&in, reqs[i], NULL), 0);
		json_decref(reqs[i]);
	}
	tu_run(&r, argv, NULL, in.data, in.len);
	ck_assert_msg(r.status == 0, "agent exited %d", r.status);
	buf_add(&out, r.out, r.outlen);
	while ((rc = proto_decode(&m, &out, NULL)) == 1)
		json_array_append_new(replies, m);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(json_array_size(replies), n);
	tu_run_free(&r);
	buf_release(&in);
	buf_release(&out);
	return replies;
}

/* The read envctl sends first (id 2), with checks (taken) or none. */
static json_t *
first_read(const struct site *s, json_t *checks)
{
	return json_pack("{s:s,s:i,s:s,s:s,s:[ssssss],s:o,s:i,s:b}",
	    "op", "read", "id", 2, "interpreter", s->interp,
	    "path", s->target, "vars", nccl[0], nccl[1], nccl[2], nccl[3],
	    nccl[4], nccl[5], "checks", checks != NULL ? checks :
	    json_array(), "timeout_ms", 20000, "prefork", 1);
}

/* The apply of text sent with read 2: no target, no expected bytes. */
static json_t *
after_read_req(const struct site *s, const char *text)
{
	json_t *req = apply_req(s, text);

	json_object_del(req, "path");
	json_object_del(req, "expect");
	json_object_del(req, "sha256_old");
	json_object_set_new(req, "id", json_integer(3));
	json_object_set_new(req, "after_read", json_integer(2));
	return req;
}

/* The read, then the apply of text after it, in one session. */
static json_t *
read_then_apply(const struct site *s, const char *text)
{
	json_t *reqs[2];

	reqs[0] = first_read(s, NULL);
	reqs[1] = after_read_req(s, text);
	return ask_session(reqs, 2);
}

/* The apply after the read (the second of replies) was skipped, for why. */
static void
assert_skipped(const json_t *replies, const char *why)
{
	const json_t *reply = json_array_get(replies, 1);

	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "skipped"), why);
}

/* What a host's file looks like, to see that nothing touched it. */
static void
assert_same_file(const char *path, const struct stat *st0)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_ino, st0->st_ino);
	ck_assert_int_eq(st.st_mtim.tv_sec, st0->st_mtim.tv_sec);
	ck_assert_int_eq(st.st_mtim.tv_nsec, st0->st_mtim.tv_nsec);
}

/* The broken seed is replaced as by a plain apply, in one flight. */
START_TEST(test_after_read_changes)
{
	struct site s;
	json_t *replies, *reply;
	char *seed, *good, *sha_old, *tail;
	size_t seedlen, goodlen;

	seed = fixture_text("seed-broken.sitecustomize.py", &seedlen);
	good = fixture_text("seed-working.sitecustomize.py", &goodlen);
	site_init(&s, seed, 1);
	replies = read_then_apply(&s, good);
	reply = json_array_get(replies, 0);
	assert_ok(reply);
	ck_assert_str_eq(jstr(reply, "probe.startup_error.exception"),
	    "TypeError: str expected, not ellipsis");
	reply = json_array_get(replies, 1);
	assert_ok(reply);
	ck_assert_int_eq(jint(reply, "id"), 3);
	ck_assert(jbool(reply, "changed"));
	ck_assert_ptr_null(json_object_get(reply, "skipped"));
	ck_assert_str_eq(jstr(reply, "real"), s.real);
	assert_values(jget(reply, "verify.values"));
	/* The backup is of the bytes the read found. */
	sha_old = hex_sha256(seed, seedlen);
	tail = xstrndup(sha_old, 12);
	assert_id(jstr(reply, "backup.id"), tail);
	assert_file(s.real, good, goodlen);
	ck_assert_uint_eq(count_backups(&s), 1);
	assert_no_leftovers(&s);
	json_decref(replies);
	site_release(&s);
	free(seed);
	free(good);
	free(sha_old);
	free(tail);
}
END_TEST

/*
 * A host already as wanted is not touched: no lock, no backup, no run.
 * The same bytes with a value not in effect are checked, as by a plain
 * apply.
 */
START_TEST(test_after_read_in_sync)
{
	struct site s;
	struct stat st0;
	json_t *reqs[2], *replies, *reply;
	char *good = good_file(1), *msg;

	site_init(&s, good, 1);
	ck_assert_int_eq(stat(s.real, &st0), 0);
	replies = read_then_apply(&s, good);
	assert_ok(json_array_get(replies, 0));
	assert_skipped(replies, "in-sync");
	reply = json_array_get(replies, 1);
	ck_assert(!jbool(reply, "changed"));
	ck_assert_ptr_null(json_object_get(reply, "verify"));
	json_decref(replies);
	assert_same_file(s.real, &st0);
	assert_absent(s.lockdir);
	assert_absent(s.backups);
	assert_no_leftovers(&s);

	/* The file is right, but the interpreter gets another value. */
	reqs[0] = first_read(&s, NULL);
	reqs[1] = after_read_req(&s, good);
	json_object_set_new(jget(reqs[1], "vars"), "NCCL_PROTO",
	    json_string("Simple"));
	replies = ask_session(reqs, 2);
	reply = json_array_get(replies, 1);
	msg = xasprintf("'%s' already holds the new bytes, but NCCL_PROTO "
	    "is 'LL', want 'Simple'", s.real);
	assert_fail(reply, "EVERIFY", msg);
	json_decref(replies);
	assert_same_file(s.real, &st0);
	assert_absent(s.backups);

	/* Every value set, then an error: not as wanted either. */
	free(msg);
	msg = xasprintf("%sraise RuntimeError('late')\n", good);
	site_put(&s, msg, strlen(msg));
	replies = read_then_apply(&s, msg);
	assert_values(jget(json_array_get(replies, 0), "probe.values"));
	free(msg);
	msg = xasprintf("'%s' already holds the new bytes, but "
	    "RuntimeError: late", s.real);
	assert_fail(json_array_get(replies, 1), "EVERIFY", msg);
	json_decref(replies);
	assert_absent(s.backups);
	site_release(&s);
	free(good);
	free(msg);
}
END_TEST

/* A read that failed, or whose check failed, makes the change skip. */
START_TEST(test_after_read_read_failed)
{
	struct site s;
	struct stat st0;
	json_t *reqs[2], *replies, *reply, *checks;
	char *good = good_file(1), *missing;

	site_init(&s, "import os\n", 1);
	ck_assert_int_eq(stat(s.real, &st0), 0);
	missing = xasprintf("%s/no-cuda", s.dir);
	checks = json_pack("[{s:s,s:s,s:s}]", "name", "CUDA_HOME", "kind",
	    "dir", "path", missing);
	reqs[0] = first_read(&s, checks);
	reqs[1] = after_read_req(&s, good);
	replies = ask_session(reqs, 2);
	reply = json_array_get(replies, 0);
	assert_ok(reply);
	ck_assert(!jbool(json_array_get(jget(reply, "checks"), 0), "ok"));
	assert_skipped(replies, "read-failed");
	json_decref(replies);

	/* Neither names the interpreter: both mean the default one. */
	reqs[0] = first_read(&s, json_pack("[{s:s,s:s,s:s}]", "name",
	    "CUDA_HOME", "kind", "dir", "path", missing));
	reqs[1] = after_read_req(&s, good);
	json_object_del(reqs[0], "interpreter");
	json_object_del(reqs[1], "interpreter");
	replies = ask_session(reqs, 2);
	assert_skipped(replies, "read-failed");
	json_decref(replies);

	/* The read itself fails: the interpreter is not there. */
	reqs[0] = first_read(&s, NULL);
	reqs[1] = after_read_req(&s, good);
	json_object_set_new(reqs[0], "interpreter", json_string(missing));
	json_object_set_new(reqs[1], "interpreter", json_string(missing));
	replies = ask_session(reqs, 2);
	ck_assert(!jbool(json_array_get(replies, 0), "ok"));
	assert_skipped(replies, "read-failed");
	json_decref(replies);
	assert_same_file(s.real, &st0);
	assert_absent(s.lockdir);
	assert_absent(s.backups);
	site_release(&s);
	free(good);
	free(missing);
}
END_TEST

/* Only the session's last read can be named, and only by apply. */
START_TEST(test_after_read_refused)
{
	struct site s;
	struct stat st0;
	json_t *reqs[3], *replies, *req;
	char *good = good_file(1), *msg;

	site_init(&s, "import os\n", 1);
	ck_assert_int_eq(stat(s.real, &st0), 0);
	/* No read at all. */
	reqs[0] = after_read_req(&s, good);
	replies = ask_session(reqs, 1);
	msg = xasprintf("apply: 'after_read': read 2 of '%s' is not this "
	    "session's last read", s.interp);
	assert_fail(json_array_get(replies, 0), "EINVALID", msg);
	json_decref(replies);
	/* Another id, another interpreter, an earlier read. */
	reqs[0] = first_read(&s, NULL);
	reqs[1] = after_read_req(&s, good);
	json_object_set_new(reqs[1], "after_read", json_integer(7));
	replies = ask_session(reqs, 2);
	assert_fail_prefix(json_array_get(replies, 1), "EINVALID",
	    "apply: 'after_read': read 7 of '");
	json_decref(replies);
	reqs[0] = first_read(&s, NULL);
	reqs[1] = after_read_req(&s, good);
	json_object_set_new(reqs[1], "interpreter", json_string(tu_python()));
	replies = ask_session(reqs, 2);
	assert_fail_prefix(json_array_get(replies, 1), "EINVALID",
	    "apply: 'after_read': read 2 of '");
	json_decref(replies);
	reqs[0] = first_read(&s, NULL);
	reqs[1] = first_read(&s, NULL);
	json_object_set_new(reqs[1], "id", json_integer(4));
	reqs[2] = after_read_req(&s, good);
	replies = ask_session(reqs, 3);
	assert_fail(json_array_get(replies, 2), "EINVALID", msg);
	json_decref(replies);
	/* The read's findings are never the request's. */
	reqs[0] = first_read(&s, NULL);
	reqs[1] = after_read_req(&s, good);
	json_object_set_new(reqs[1], "path", json_string(s.target));
	replies = ask_session(reqs, 2);
	assert_fail(json_array_get(replies, 1), "EINVALID", "apply: with "
	    "'after_read', 'path', 'expect' and 'sha256_old' come from the "
	    "read");
	json_decref(replies);
	req = rollback_req(&s, "latest");
	json_object_set_new(req, "after_read", json_integer(2));
	reqs[0] = first_read(&s, NULL);
	reqs[1] = req;
	replies = ask_session(reqs, 2);
	assert_fail(json_array_get(replies, 1), "EINVALID", "rollback: "
	    "'after_read' must be a read's id (apply only)");
	json_decref(replies);
	assert_same_file(s.real, &st0);
	assert_absent(s.backups);
	site_release(&s);
	free(good);
	free(msg);
}
END_TEST

/* Reads one reply from fd (the agent's stdout). */
static json_t *
next_reply(int fd, struct buf *b)
{
	char chunk[4096];
	json_t *m = NULL;
	ssize_t n;

	while (proto_decode(&m, b, NULL) == 0) {
		n = read(fd, chunk, sizeof(chunk));
		ck_assert_msg(n > 0, "the agent closed its stdout");
		buf_add(b, chunk, (size_t)n);
	}
	ck_assert_ptr_nonnull(m);
	return m;
}

/* The file changes between the read and the change: compare and swap. */
START_TEST(test_after_read_cas)
{
	struct site s;
	struct buf out = ENVCTL_BUF_INIT, b = ENVCTL_BUF_INIT;
	json_t *reply, *req;
	char *good = good_file(1), *msg;
	int in, fd, status;
	pid_t pid;

	site_init(&s, "import os\n", 1);
	pid = agent_start(first_read(&s, NULL), &in, &fd);
	reply = next_reply(fd, &out);
	assert_ok(reply);
	json_decref(reply);
	site_put(&s, "import sys\n", 11);
	req = after_read_req(&s, good);
	ck_assert_int_eq(proto_encode(&b, req, NULL), 0);
	json_decref(req);
	ck_assert_int_eq(write(in, b.data, b.len), (ssize_t)b.len);
	reply = next_reply(fd, &out);
	msg = xasprintf("'%s' changed since it was read (now 11 bytes)",
	    s.real);
	assert_fail(reply, "ECHANGED", msg);
	json_decref(reply);
	close(in);
	close(fd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	assert_file(s.real, "import sys\n", 11);
	assert_absent(s.backups);
	assert_no_leftovers(&s);
	buf_release(&out);
	buf_release(&b);
	site_release(&s);
	free(good);
	free(msg);
}
END_TEST

static void
add_apply_tests(TCase *tc)
{
	tcase_add_test(tc, test_apply_converges);
	tcase_add_test(tc, test_apply_plain_file);
	tcase_add_test(tc, test_cas);
	tcase_add_test(tc, test_validate_fails);
	tcase_add_test(tc, test_validate_stale);
	tcase_add_test(tc, test_validate_where);
	tcase_add_test(tc, test_validate_wrapper);
	tcase_add_test(tc, test_also);
	tcase_add_test(tc, test_validate_fails_forked);
	tcase_add_test(tc, test_verify_by_server);
	tcase_add_test(tc, test_verify_restores);
	tcase_add_test(tc, test_absent);
	tcase_add_test(tc, test_absent_owner);
	tcase_add_test(tc, test_pycache);
	tcase_add_test(tc, test_same_second_mtime);
	tcase_add_test(tc, test_bad_args);
}

int
main(void)
{
	Suite *s = suite_create("agent_apply");
	TCase *ap = tcase_create("apply");
	TCase *apc = tcase_create("apply-cached");
	TCase *fs = tcase_create("filesystems");
	TCase *fa = tcase_create("faults");
	TCase *lk = tcase_create("lock");
	TCase *bk = tcase_create("backups");
	TCase *ar = tcase_create("after-read");
	SRunner *sr;
	int failed;

	add_apply_tests(ap);
	/* Again with the agent run from a cache: its scripts are files. */
	add_apply_tests(apc);
	tcase_add_checked_fixture(apc, agent_cache, agent_uncache);
	tcase_add_test(fs, test_enospc);
	tcase_add_test(fs, test_erofs);
	tcase_add_test(fa, test_faults);
	tcase_add_test(fa, test_faults_not_compiled);
	tcase_add_test(lk, test_lock);
	tcase_add_test(lk, test_lock_foreign);
	tcase_add_test(lk, test_lock_sigterm);
	tcase_add_test(bk, test_prune_keep);
	tcase_add_test(bk, test_same_second);
	tcase_add_test(bk, test_rollback);
	tcase_add_test(bk, test_read_lists_backups);
	tcase_add_test(bk, test_rollback_nothing);
	tcase_add_test(bk, test_backups_list);
	tcase_add_test(bk, test_failed_keeps_history);
	tcase_add_test(bk, test_backup_not_twice);
	tcase_add_test(bk, test_prune_distinct);
	tcase_add_test(bk, test_cas_loser);
	tcase_add_test(ar, test_after_read_changes);
	tcase_add_test(ar, test_after_read_in_sync);
	tcase_add_test(ar, test_after_read_read_failed);
	tcase_add_test(ar, test_after_read_refused);
	tcase_add_test(ar, test_after_read_cas);
	suite_add_tcase(s, ap);
	suite_add_tcase(s, apc);
	suite_add_tcase(s, fs);
	suite_add_tcase(s, fa);
	suite_add_tcase(s, lk);
	suite_add_tcase(s, bk);
	suite_add_tcase(s, ar);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
