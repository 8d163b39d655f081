/*
 * check_cudacheck.c - the CUDA checks' answers kept in the agent's cache
 * (agent/cudacheck.c, agent/cache.c), through the real agent started from
 * a cache directory as the controller starts it.
 *
 * The ptxas and nvcc the checks run are this very binary, copied: started
 * as "DIR/ptxas --version" it prints a release line and counts its runs in
 * DIR/ptxas.runs, so a test sees exactly which programs a read ran.  A
 * copy is an ELF file, as NVIDIA's tools are; a #! script is not, and its
 * answer is never kept.  Identities are only trusted once CUDACHECK_RACY_S
 * has passed since the files last changed, so each test makes its files,
 * waits that long once, and then changes them in different ways at once.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cudacheck.h"
#include "common/buf.h"
#include "common/proto.h"
#include "common/sha256.h"
#include "common/xmalloc.h"
#include "agenttest.h"
#include "testutil.h"

#define CUDA13		"/usr/local/cuda-13.0"
#define RELEASE		"Cuda compilation tools, release 12.4, V12.4.131\n"

/* ---- the fake tools: this binary as ptxas or nvcc ---- */

static int
is_tool(const char *argv0)
{
	const char *b = strrchr(argv0, '/');

	b = b != NULL ? b + 1 : argv0;
	return strcmp(b, "ptxas") == 0 || strcmp(b, "nvcc") == 0;
}

/* What a fake tool does: count the run, say the release. */
static int
fake_tool(const char *argv0)
{
	char *count = xasprintf("%s.runs", argv0);
	int fd;

	fd = open(count, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	free(count);
	if (fd == -1 || write(fd, "x", 1) != 1)
		return 3;
	close(fd);
	fputs("ptxas: NVIDIA (R) Ptx optimizing assembler\n" RELEASE, stdout);
	return 0;
}

/* Copies this binary to dir/rel (directories made), mode 0755. */
static char *
make_tool(const char *dir, const char *rel)
{
	char *bin, *path, *cmd;
	size_t len;

	cmd = xasprintf("mkdir -p \"$(dirname '%s/%s')\"", dir, rel);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	bin = tu_read("/proc/self/exe", &len);
	ck_assert_ptr_nonnull(bin);
	path = tu_write(dir, rel, bin, len);
	ck_assert_int_eq(chmod(path, 0755), 0);
	free(bin);
	return path;
}

/* How often the tool at path ran. */
static long
runs(const char *tool)
{
	char *count = xasprintf("%s.runs", tool);
	struct stat st;
	long n = stat(count, &st) == 0 ? (long)st.st_size : 0;

	free(count);
	return n;
}

#define ASSERT_RUNS(tool, n) \
	ck_assert_msg(runs(tool) == (long)(n), "%s ran %ld times, want %ld", \
	    (tool), runs(tool), (long)(n))

/* ---- asking the agent ---- */

static json_t *
one(const char *kind, const char *path)
{
	return json_pack("{s:s,s:s,s:s,s:i}", "name", "V", "kind", kind,
	    "path", path, "cuda_major", 12);
}

/*
 * A read with checks by the agent at agent_bin(); sudo_uid set makes it
 * privileged (agent/policy.h).  Its path is dir/site.py, or auto when dir
 * is NULL.
 */
static json_t *
ask_checks(const char *dir, json_t *checks, const char *sudo_uid)
{
	char *env = sudo_uid != NULL ? xasprintf("SUDO_UID=%s", sudo_uid) :
	    NULL;
	char *site = dir != NULL ? xasprintf("%s/site.py", dir) : NULL;
	json_t *req, *m;

	req = json_pack("{s:s,s:i,s:s,s:[],s:o,s:i}", "op", "read", "id", 1,
	    "interpreter", tu_python(), "vars", "checks", checks,
	    "timeout_ms", 20000);
	json_object_set_new(req, "path", site != NULL ? json_string(site) :
	    json_null());
	m = agent_ask(NULL, env, req);
	assert_ok(m);
	free(env);
	free(site);
	return m;
}

/* checks[i] passed (cuda_major 12) with this version. */
static void
assert_version(const json_t *rep, size_t i, const char *version)
{
	const json_t *c = json_array_get(jget(rep, "checks"), i);
	const char *v = json_string_value(json_object_get(c, "version"));

	ck_assert_msg(c != NULL, "no checks[%zu]", i);
	ck_assert_msg(v != NULL && strcmp(v, version) == 0,
	    "checks[%zu] (%s): version %s, want %s (reason %s)", i,
	    json_string_value(json_object_get(c, "path")), v, version,
	    json_string_value(json_object_get(c, "reason")));
	ck_assert_msg(json_is_true(json_object_get(c, "ok")) ==
	    (strncmp(version, "12.", 3) == 0), "checks[%zu]: ok", i);
}

/* A toolkit at dir/rel: bin/ptxas, and version.json when v is not NULL. */
static char *
make_toolkit(const char *dir, const char *rel, const char *v)
{
	char *home = xasprintf("%s/%s", dir, rel), *p, *json;

	p = xasprintf("%s/bin/ptxas", rel);
	free(make_tool(dir, p));
	free(p);
	if (v != NULL) {
		json = xasprintf("{\"cuda\": {\"name\": \"CUDA SDK\", "
		    "\"version\": \"%s\"}}\n", v);
		free(tu_writes(home, "version.json", json));
		free(json);
	}
	return home;
}

/* Replaces path with a copy of itself: the same bytes, a new inode. */
static void
replace(const char *path, const char *data)
{
	char *tmp = xasprintf("%s.new", path), *old;
	size_t len;
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	if (data != NULL)
		free(tu_writes(NULL, tmp, data));
	else {
		old = tu_read(path, &len);
		ck_assert_ptr_nonnull(old);
		free(tu_write(NULL, tmp, old, len));
		free(old);
	}
	ck_assert_int_eq(chmod(tmp, st.st_mode & 07777), 0);
	ck_assert_int_eq(rename(tmp, path), 0);
	free(tmp);
}

/* Overwrites the first byte of path with itself: same size, new mtime. */
static void
rewrite_in_place(const char *path)
{
	char c;
	int fd = open(path, O_RDWR);

	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(pread(fd, &c, 1, 0), 1);
	ck_assert_int_eq(pwrite(fd, &c, 1, 0), 1);
	close(fd);
}

/*
 * A second read whose files are as the first found them runs nothing,
 * and answers exactly as the first; every kind of change to a file an
 * answer depends on makes it run again; so does a change too recent to
 * trust, and a script ptxas always runs.
 */
START_TEST(test_kept)
{
	char *dir, *p[5], *script, *t[3], *tp[3], *f, *data;
	json_t *cs, *r1, *r2, *r3, *r4;
	struct stat st;
	size_t i;

	agent_cache();
	dir = tu_mkdtemp();
	free(tu_writes(dir, "site.py", "\n"));
	for (i = 0; i < 5; i++) {
		f = xasprintf("p%zu/ptxas", i);
		p[i] = make_tool(dir, f);
		free(f);
	}
	script = tu_writes(dir, "ptxas", "#!/bin/sh\nprintf x >>\"$0.runs\"\n"
	    "echo '" RELEASE "'\n");
	ck_assert_int_eq(chmod(script, 0755), 0);
	t[0] = make_toolkit(dir, "t0", "12.4.1");
	t[1] = make_toolkit(dir, "t1", "12.4.1");
	/* No version.json: the nvcc wheel's record says it. */
	t[2] = make_toolkit(dir, "t2", NULL);
	f = xasprintf("%s/dist-info", t[2]);
	ck_assert_int_eq(mkdir(f, 0755), 0);
	free(f);
	f = xasprintf("%s/dist-info/nvidia_cuda_nvcc-12.6.77.dist-info",
	    t[2]);
	ck_assert_int_eq(mkdir(f, 0755), 0);
	free(f);
	for (i = 0; i < 3; i++)
		tp[i] = xasprintf("%s/bin/ptxas", t[i]);
	sleep(CUDACHECK_RACY_S + 1);

	cs = json_array();
	for (i = 0; i < 5; i++)
		json_array_append_new(cs, one("ptxas", p[i]));
	json_array_append_new(cs, one("ptxas", script));
	for (i = 0; i < 3; i++)
		json_array_append_new(cs, one("cuda-toolkit", t[i]));
	r1 = ask_checks(dir, json_incref(cs), NULL);
	for (i = 0; i < 6; i++)
		assert_version(r1, i, "12.4");
	assert_version(r1, 6, "12.4");
	assert_version(r1, 7, "12.4");
	assert_version(r1, 8, "12.6");
	for (i = 0; i < 5; i++)
		ASSERT_RUNS(p[i], 1);
	ASSERT_RUNS(script, 1);
	/* gpuhost_toolkit() runs bin/ptxas for its facts, version or not. */
	for (i = 0; i < 3; i++)
		ASSERT_RUNS(tp[i], 1);
	f = xasprintf("%s/" AGENT_CACHED_NAME "." CUDACHECK_DATA,
	    agent_cache_dir());
	ck_assert_int_eq(lstat(f, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	data = tu_read(f, NULL);
	ck_assert_ptr_nonnull(data);
	free(f);
	f = xasprintf("\"kind\":\"ptxas\",\"path\":\"%s\"", p[0]);
	ck_assert_msg(strstr(data, f) != NULL, "%s", data);
	free(f);
	f = xasprintf("\"path\":\"%s\"", script);
	ck_assert_msg(strstr(data, f) == NULL, "a script's answer was kept");
	free(f);
	free(data);

	/* Nothing changed: nothing runs but the script, the same answers. */
	r2 = ask_checks(dir, json_incref(cs), NULL);
	ck_assert_msg(json_equal(jget(r1, "checks"), jget(r2, "checks")),
	    "a kept answer differs from the answer made");
	for (i = 0; i < 5; i++)
		ASSERT_RUNS(p[i], 1);
	ASSERT_RUNS(script, 2);
	for (i = 0; i < 3; i++)
		ASSERT_RUNS(tp[i], 1);

	/*
	 * Touched, replaced by the same bytes, chmod, written in place;
	 * p[4] left alone.  A toolkit's version.json touched, replaced by
	 * another version, created where dist-info told it.
	 */
	ck_assert_int_eq(utimensat(AT_FDCWD, p[0], NULL, 0), 0);
	replace(p[1], NULL);
	ck_assert_int_eq(chmod(p[2], 0700), 0);
	rewrite_in_place(p[3]);
	f = xasprintf("%s/version.json", t[0]);
	ck_assert_int_eq(utimensat(AT_FDCWD, f, NULL, 0), 0);
	free(f);
	f = xasprintf("%s/version.json", t[1]);
	replace(f, "{\"cuda\": {\"version\": \"12.8.93\"}}\n");
	free(f);
	free(tu_writes(t[2], "version.json",
	    "{\"cuda\": {\"version\": \"13.0.2\"}}\n"));
	r3 = ask_checks(dir, json_incref(cs), NULL);
	for (i = 0; i < 6; i++)
		assert_version(r3, i, "12.4");
	assert_version(r3, 6, "12.4");
	assert_version(r3, 7, "12.8");
	assert_version(r3, 8, "13.0");
	for (i = 0; i < 4; i++)
		ASSERT_RUNS(p[i], 2);
	ASSERT_RUNS(p[4], 1);
	ASSERT_RUNS(script, 3);
	for (i = 0; i < 3; i++)
		ASSERT_RUNS(tp[i], 2);

	/* Changed a moment ago: not kept yet, so they run again. */
	r4 = ask_checks(dir, cs, NULL);
	ck_assert(json_equal(jget(r3, "checks"), jget(r4, "checks")));
	for (i = 0; i < 4; i++)
		ASSERT_RUNS(p[i], 3);
	ASSERT_RUNS(p[4], 1);
	for (i = 0; i < 3; i++)
		ASSERT_RUNS(tp[i], 3);

	json_decref(r1);
	json_decref(r2);
	json_decref(r3);
	json_decref(r4);
	for (i = 0; i < 5; i++)
		free(p[i]);
	for (i = 0; i < 3; i++) {
		free(t[i]);
		free(tp[i]);
	}
	free(script);
	tu_rmtree(dir);
	free(dir);
	agent_uncache();
}
END_TEST

/* The data file's text with every "12.4" made "99.9": a forged answer. */
static char *
forged(const char *text)
{
	char *s = xstrdup(text), *q;

	while ((q = strstr(s, "\"12.4\"")) != NULL)
		memcpy(q + 1, "99.9", 4);
	return s;
}

/* Writes text as path, mode mode (a new inode). */
static void
plant(const char *path, const char *text, mode_t mode)
{
	unlink(path);
	free(tu_writes(NULL, path, text));
	ck_assert_int_eq(chmod(path, mode), 0);
}

/* The file at path still holds exactly text. */
static void
assert_holds(const char *path, const char *text)
{
	char *now = tu_read(path, NULL);

	ck_assert_msg(now != NULL && strcmp(now, text) == 0,
	    "%s was written over", path);
	free(now);
}

/*
 * The agent honours a data file only when it is its own user's alone: a
 * forged answer in a file of its user, mode 0600, is taken (the control);
 * the same file writable by group or others, with a second link, behind
 * a symlink, of another owner, or in a directory others may write to is
 * ignored, the tool runs, and the file is left as it was.
 */
START_TEST(test_untrusted)
{
	char *dir, *tool, *file, *text, *fake, *other, *d;
	json_t *rep;
	long n = 1;

	agent_cache();
	d = xstrdup(agent_cache_dir());
	dir = tu_mkdtemp();
	free(tu_writes(dir, "site.py", "\n"));
	tool = make_tool(dir, "bin/ptxas");
	sleep(CUDACHECK_RACY_S + 1);
	rep = ask_checks(dir, json_pack("[o]", one("ptxas", tool)), NULL);
	assert_version(rep, 0, "12.4");
	json_decref(rep);
	ASSERT_RUNS(tool, 1);
	file = xasprintf("%s/" AGENT_CACHED_NAME "." CUDACHECK_DATA, d);
	text = tu_read(file, NULL);
	ck_assert_ptr_nonnull(text);
	fake = forged(text);
	ck_assert_str_ne(fake, text);

#define EXPECT(version, nruns) do {					\
		rep = ask_checks(dir, json_pack("[o]", one("ptxas", tool)), \
		    NULL);						\
		assert_version(rep, 0, (version));			\
		json_decref(rep);					\
		ASSERT_RUNS(tool, (nruns));				\
	} while (0)
	/* The control: its own user's file is believed. */
	plant(file, fake, 0600);
	EXPECT("99.9", n);
	plant(file, fake, 0620);
	EXPECT("12.4", ++n);
	assert_holds(file, fake);
	plant(file, fake, 0602);
	EXPECT("12.4", ++n);
	assert_holds(file, fake);
	plant(file, fake, 0600);
	other = xasprintf("%s/second-link", dir);
	ck_assert_int_eq(link(file, other), 0);
	EXPECT("12.4", ++n);
	assert_holds(file, fake);
	ck_assert_int_eq(unlink(other), 0);
	free(other);
	other = xasprintf("%s/elsewhere", dir);
	plant(other, fake, 0600);
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(symlink(other, file), 0);
	EXPECT("12.4", ++n);
	assert_holds(other, fake);
	free(other);
	plant(file, fake, 0600);
	ck_assert_int_eq(chmod(d, 0770), 0);
	EXPECT("12.4", ++n);
	ck_assert_int_eq(chmod(d, 0700), 0);
	assert_holds(file, fake);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(file, 65534, 65534), 0);
		EXPECT("12.4", ++n);
		assert_holds(file, fake);
	} else
		tu_skip("test_untrusted (another owner)", "needs root");
	/* Back to its own: believed again, and a miss writes it anew. */
	plant(file, text, 0600);
	EXPECT("12.4", n);
#undef EXPECT
	free(text);
	free(fake);
	free(file);
	free(tool);
	free(d);
	tu_rmtree(dir);
	free(dir);
	agent_uncache();
}
END_TEST

/*
 * A privileged agent (root through sudo) uses no cache: an answer planted
 * in a root-owned 0600 file, which the same agent unprivileged believes,
 * is not believed, and the file is neither read nor written.  Its
 * programs must be root's on root-only paths, so this runs the real
 * CUDA 13.0 ptxas.
 */
START_TEST(test_privileged)
{
	char hex[ENVCTL_SHA256_HEX];
	char *dir, *name, *self, *file, *text, *bin, *saved;
	const char *ptxas = CUDA13 "/bin/ptxas";
	struct stat st;
	json_t *rep, *a;
	size_t len;

	if (geteuid() != 0 || access(ptxas, X_OK) != 0) {
		tu_skip("test_privileged", geteuid() != 0 ? "needs root" :
		    "no CUDA 13.0 ptxas in " CUDA13);
		return;
	}
	ck_assert_int_eq(stat(ptxas, &st), 0);
	dir = tu_mkdtemp();
	bin = tu_read(agent_bin(), &len);
	ck_assert_ptr_nonnull(bin);
	sha256_hex(hex, bin, len);
	name = xasprintf("envctl-agent-%s", hex);
	self = tu_write(dir, name, bin, len);
	ck_assert_int_eq(chmod(self, 0700), 0);
	free(bin);
	a = json_pack("{s:i,s:[{s:s,s:s,s:[[s,[I,I,I,I,I,I,I,I,I,I]]],s:s}]}",
	    "format", 1, "answers", "kind", "ptxas", "path", ptxas, "files",
	    ptxas, (json_int_t)st.st_dev, (json_int_t)st.st_ino,
	    (json_int_t)st.st_size, (json_int_t)st.st_mtim.tv_sec,
	    (json_int_t)st.st_mtim.tv_nsec, (json_int_t)st.st_ctim.tv_sec,
	    (json_int_t)st.st_ctim.tv_nsec, (json_int_t)st.st_mode,
	    (json_int_t)st.st_uid, (json_int_t)st.st_gid, "version", "99.9");
	text = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	file = xasprintf("%s/%s." CUDACHECK_DATA, dir, name);
	plant(file, text, 0600);
	saved = xstrdup(agent_bin());
	ck_assert_int_eq(setenv("ENVCTL_AGENT", self, 1), 0);

	/* The control: unprivileged, the planted answer is believed. */
	rep = ask_checks(NULL, json_pack("[o]", one("ptxas", ptxas)), NULL);
	assert_version(rep, 0, "99.9");
	json_decref(rep);
	rep = ask_checks(NULL, json_pack("[o]", one("ptxas", ptxas)),
	    "12345");
	assert_version(rep, 0, "13.0");
	json_decref(rep);
	assert_holds(file, text);
	ck_assert_int_eq(stat(file, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);

	ck_assert_int_eq(setenv("ENVCTL_AGENT", saved, 1), 0);
	free(saved);
	free(text);
	free(file);
	free(self);
	free(name);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

int
main(int argc, char *argv[])
{
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int failed;

	/* Started by the agent as a ptxas or nvcc (see above). */
	if (argc == 2 && strcmp(argv[1], "--version") == 0 &&
	    is_tool(argv[0]))
		return fake_tool(argv[0]);
	s = suite_create("cudacheck");
	tc = tcase_create("kept");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_kept);
	tcase_add_test(tc, test_untrusted);
	tcase_add_test(tc, test_privileged);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
