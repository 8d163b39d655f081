/*
 * check_policy.c - the privileged agent's boundary (agent/policy.c) and
 * the SHA-256 it checks its own program with (common/sha256.c).
 *
 * agent/policy.c is compiled into this suite directly (below): the
 * Makefile links agent objects only into the agent, and policy.c needs
 * nothing of the agent but headers.  The rules are about root's files, so
 * most checks need root and a directory only root can change: one made
 * under $ENVCTL_SRCDIR/build, or, when the tree itself lies under a
 * directory others can write (a clone in /tmp), one on a tmpfs mounted
 * over /mnt in the test's own mount namespace (never on the real /mnt).
 * Without either those checks are skipped.  The
 * last checks run the built agent as root with SUDO_UID set, as sudo runs
 * it, and send it the requests a login user would send by hand.
 */
#define _GNU_SOURCE	/* unshare(2) */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/policy.c"	/* see above */
#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/sha256.h"
#include "common/xmalloc.h"
#include "agenttest.h"
#include "testutil.h"

#define USER_UID	1000
#define RULE_INTERP	"a privileged agent runs only root-owned " \
	"interpreters (docs/security.md)"

/* ---- SHA-256 ---- */

/* FIPS 180-4's examples (csrc.nist.gov, SHA256.pdf) and the empty one. */
static const struct {
	const char	*in;
	const char	*hex;
} vectors[] = {
	{ "",
	    "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855" },
	{ "abc",
	    "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	    "248d6a61d20638b8e5c026930c3e6039"
	    "a33ce45964ff2167f6ecedd419db06c1" },
	{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
	    "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
	    "cf5b16a778af8380036ce59e7b049237"
	    "0b249b11e8f07a51afac45037afee9d1" },
};

START_TEST(test_sha256_vectors)
{
	char hex[ENVCTL_SHA256_HEX];

	sha256_hex(hex, vectors[_i].in, strlen(vectors[_i].in));
	ck_assert_str_eq(hex, vectors[_i].hex);
}
END_TEST

START_TEST(test_sha256_million)
{
	struct sha256 s;
	unsigned char d[ENVCTL_SHA256_LEN], chunk[1000];
	char hex[ENVCTL_SHA256_HEX];
	int i;

	memset(chunk, 'a', sizeof(chunk));
	sha256_init(&s);
	for (i = 0; i < 1000; i++)
		sha256_update(&s, chunk, sizeof(chunk));
	sha256_final(&s, d);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	ck_assert_str_eq(hex,
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

/* Every length around the block and padding edges, in odd pieces, and
 * files of those lengths, against sha256sum(1). */
START_TEST(test_sha256_sum)
{
	struct tu_run run;
	struct sha256 s;
	unsigned char d[ENVCTL_SHA256_LEN], data[300];
	char hex[ENVCTL_SHA256_HEX], one[ENVCTL_SHA256_HEX], name[32];
	char *dir = tu_mkdtemp(), *path, *argv[3];
	size_t len, off, step;
	int i;

	for (len = 0; len < sizeof(data); len++)
		data[len] = (unsigned char)(len * 131 + 7);
	for (len = 0; len <= sizeof(data); len += len < 130 ? 1 : 17) {
		sha256_hex(one, data, len);
		for (step = 1; step <= 70; step += 23) {
			sha256_init(&s);
			for (off = 0; off < len; off += step)
				sha256_update(&s, data + off, len - off < step ?
				    len - off : step);
			sha256_final(&s, d);
			for (i = 0; i < 32; i++)
				snprintf(hex + 2 * i, 3, "%02x", d[i]);
			ck_assert_str_eq(hex, one);
		}
		snprintf(name, sizeof(name), "f%zu", len);
		path = tu_write(dir, name, (const char *)data, len);
		ck_assert_int_eq(sha256_file_hex(hex, path, NULL), 0);
		ck_assert_str_eq(hex, one);
		argv[0] = "sha256sum";
		argv[1] = path;
		argv[2] = NULL;
		tu_run(&run, argv, NULL, NULL, 0);
		if (run.status == 127) {
			tu_run_free(&run);
			free(path);
			tu_skip("sha256_sum", "sha256sum is not installed");
			break;
		}
		ck_assert_int_eq(run.status, 0);
		ck_assert_int_eq(strncmp(run.out, one, 64), 0);
		tu_run_free(&run);
		free(path);
	}
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* The agent program itself, as main() hashes it, against sha256sum. */
START_TEST(test_sha256_agent)
{
	struct tu_run run;
	struct err err = ENVCTL_ERR_INIT;
	char hex[ENVCTL_SHA256_HEX], *argv[3];

	if (access(agent_bin(), R_OK) != 0) {
		tu_skip("sha256_agent", "the agent is not built");
		return;
	}
	ck_assert_int_eq(sha256_file_hex(hex, agent_bin(), &err), 0);
	argv[0] = "sha256sum";
	argv[1] = (char *)agent_bin();
	argv[2] = NULL;
	tu_run(&run, argv, NULL, NULL, 0);
	if (run.status == 127)
		tu_skip("sha256_agent", "sha256sum is not installed");
	else
		ck_assert_int_eq(strncmp(run.out, hex, 64), 0);
	tu_run_free(&run);
	ck_assert_int_eq(sha256_file_hex(hex, "/nonexistent/x", &err),
	    ENVCTL_ESYS);
	ck_assert_int_eq(err.cause, ENOENT);
	err_release(&err);
}
END_TEST

/* ---- who is privileged ---- */

START_TEST(test_privileged)
{
	struct policy_ids ids;

	memset(&ids, 0, sizeof(ids));
	ids.ruid = ids.euid = 1000;
	ids.rgid = ids.egid = 1000;
	ck_assert_int_eq(policy_privileged(&ids), 0);	/* for itself */
	ids.euid = 0;
	ck_assert_int_eq(policy_privileged(&ids), 1);	/* setuid root */
	ids.euid = 1000;
	ids.egid = 0;
	ck_assert_int_eq(policy_privileged(&ids), 1);	/* setgid */
	ids.egid = 1000;
	ids.secure = 1;
	ck_assert_int_eq(policy_privileged(&ids), 1);	/* file caps */
	ids.secure = 0;
	ids.ruid = ids.euid = ids.rgid = ids.egid = 0;
	ck_assert_int_eq(policy_privileged(&ids), 0);	/* root itself */
	ids.sudo_uid = "1000";
	ck_assert_int_eq(policy_privileged(&ids), 1);	/* sudo -u root */
	ids.sudo_uid = "0";
	ck_assert_int_eq(policy_privileged(&ids), 0);	/* root's sudo */
	ids.sudo_uid = "x";
	ck_assert_int_eq(policy_privileged(&ids), 1);	/* not a number */
	ids.sudo_uid = "1000";
	ids.ruid = ids.euid = ids.rgid = ids.egid = 65534;
	ck_assert_int_eq(policy_privileged(&ids), 1);	/* sudo -u nobody */
	ids.sudo_uid = NULL;
	ids.ruid = ids.euid = 0;
	ids.pkexec_uid = "1000";
	ck_assert_int_eq(policy_privileged(&ids), 1);
	ids.pkexec_uid = NULL;
	ids.doas_user = "ops";
	ck_assert_int_eq(policy_privileged(&ids), 1);
	ids.doas_user = "root";
	ck_assert_int_eq(policy_privileged(&ids), 0);
}
END_TEST

/* ---- root's files ---- */

/*
 * A tmpfs over /mnt (root's, 0755) in a mount namespace of this test's
 * own: 0, or -1 when there is none to be had.
 */
static int
private_mnt(void)
{
	struct stat st;

	if (stat("/mnt", &st) != 0 || st.st_uid != 0 ||
	    (st.st_mode & 022) != 0 || unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("envctl-test", "/mnt", "tmpfs", 0, "mode=0755") != 0)
		return -1;
	return 0;
}

/* A new directory only root can change (see the top), or NULL. */
static char *
trusted_dir(const char *test)
{
	struct err err = ENVCTL_ERR_INIT;
	char *base, *tmpl, *inside, *real = NULL;
	int exists;

	if (geteuid() != 0) {
		tu_skip(test, "needs root (the rules are about root's files)");
		return NULL;
	}
	base = tu_srcpath("build");
	tmpl = xasprintf("%s/envctl-test.policy.XXXXXX", base);
	free(base);
	if (mkdtemp(tmpl) == NULL) {
		tu_skip(test, "cannot make a directory under build/");
		free(tmpl);
		return NULL;
	}
	inside = xasprintf("%s/x", tmpl);
	if (walk(&real, &exists, inside, &K_TARGET, &err) != 0) {
		err_release(&err);
		if (private_mnt() == 0) {
			/* The tree is under a directory others can write. */
			rmdir(tmpl);
			free(tmpl);
			free(inside);
			tmpl = xstrdup("/mnt/envctl-test.policy.XXXXXX");
			ck_assert_ptr_nonnull(mkdtemp(tmpl));
			inside = xasprintf("%s/x", tmpl);
		}
	}
	if (real == NULL && walk(&real, &exists, inside, &K_TARGET,
	    &err) != 0) {
		tu_skip(test, err.msg);
		rmdir(tmpl);
		real = NULL;
	} else	/* the checks compare real paths: work in the real one */
		*strrchr(real, '/') = '\0';
	free(inside);
	free(tmpl);
	err_release(&err);
	return real;
}

static char *
mkfile(const char *dir, const char *name, const char *text, mode_t mode,
    uid_t uid)
{
	char *p = tu_writes(dir, name, text);

	ck_assert_int_eq(chmod(p, mode), 0);
	ck_assert_int_eq(chown(p, uid, 0), 0);
	return p;
}

static char *
mkdir_in(const char *dir, const char *name, mode_t mode, uid_t uid)
{
	char *p = xasprintf("%s/%s", dir, name);

	ck_assert_int_eq(mkdir(p, mode), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
	ck_assert_int_eq(chown(p, uid, 0), 0);
	return p;
}

static void
load(struct policy *pol, const char *file)
{
	struct err err = ENVCTL_ERR_INIT;

	if (policy_load(pol, 1, file, &err) != 0)
		ck_abort_msg("policy_load: %s", err.msg);
	err_release(&err);
}

/* policy_load fails with code and exactly msg. */
static void
load_fails(const char *file, int code, const char *msg)
{
	struct policy pol;
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_int_eq(policy_load(&pol, 1, file, &err), code);
	ck_assert_str_eq(err.msg, msg);
	policy_release(&pol);
	err_release(&err);
}

START_TEST(test_policy_file)
{
	struct policy pol;
	char *dir = trusted_dir("policy_file"), *f, *want, *tmp;

	if (dir == NULL)
		return;
	/* Missing: the defaults. */
	f = xasprintf("%s/none.conf", dir);
	load(&pol, f);
	ck_assert_int_eq(pol.loaded, 0);
	ck_assert_ptr_null(pol.backup_dir);
	policy_release(&pol);
	free(f);
	/* Unprivileged: not even read. */
	ck_assert_int_eq(policy_load(&pol, 0, "/nonexistent/x", NULL), 0);
	ck_assert_int_eq(pol.privileged, 0);
	policy_release(&pol);

	f = mkfile(dir, "agent.conf", "# envctl's agent policy\n\n"
	    "target /etc/python3.11/sitecustomize.py\n"
	    "  interpreter\t/opt/conda/bin/python3  \r\n"
	    "target /opt/conda/lib/python3.11/site-packages/sitecustomize.py\n"
	    "backup_dir /srv/backups/envctl\n", 0644, 0);
	load(&pol, f);
	ck_assert_int_eq(pol.loaded, 1);
	ck_assert_uint_eq(pol.ntargets, 2);
	ck_assert_str_eq(pol.targets[0], "/etc/python3.11/sitecustomize.py");
	ck_assert_str_eq(pol.targets[1],
	    "/opt/conda/lib/python3.11/site-packages/sitecustomize.py");
	ck_assert_uint_eq(pol.ninterps, 1);
	ck_assert_str_eq(pol.interps[0], "/opt/conda/bin/python3");
	ck_assert_str_eq(pol.backup_dir, "/srv/backups/envctl");
	policy_release(&pol);
	free(f);

	f = mkfile(dir, "bad1.conf", "target /x\nbackup /y\n", 0644, 0);
	want = xasprintf("%s:2: unknown keyword 'backup' (target, "
	    "interpreter, backup_dir or service)", f);
	load_fails(f, ENVCTL_EPARSE, want);
	free(want);
	free(f);
	f = mkfile(dir, "bad2.conf", "target etc/x\n", 0644, 0);
	want = xasprintf("%s:1: 'target' needs an absolute path", f);
	load_fails(f, ENVCTL_EPARSE, want);
	free(want);
	free(f);
	f = mkfile(dir, "bad3.conf", "backup_dir /a\nbackup_dir /b\n", 0644,
	    0);
	want = xasprintf("%s:2: backup_dir given twice", f);
	load_fails(f, ENVCTL_EPARSE, want);
	free(want);
	free(f);

	f = mkfile(dir, "user.conf", "target /etc/shadow\n", 0644, USER_UID);
	want = xasprintf("policy file '%s' is not owned by root (uid %d): a "
	    "privileged agent reads only a root-owned policy file "
	    "(docs/security.md)", f, USER_UID);
	load_fails(f, ENVCTL_EINVALID, want);
	free(want);
	free(f);
	f = mkfile(dir, "gw.conf", "target /etc/shadow\n", 0664, 0);
	want = xasprintf("policy file '%s' is writable by group or others "
	    "(mode 0664): a privileged agent reads only a root-owned policy "
	    "file (docs/security.md)", f);
	load_fails(f, ENVCTL_EINVALID, want);
	free(want);
	free(f);
	/* In a directory anyone may write to (/tmp), even a missing one. */
	tmp = tu_mkdtemp();
	f = xasprintf("%s/agent.conf", tmp);
	want = xasprintf("policy file '%s': '/tmp' is writable by group or "
	    "others (mode 1777): a privileged agent reads only a root-owned "
	    "policy file (docs/security.md)", f);
	if (strncmp(tmp, "/tmp/", 5) == 0)
		load_fails(f, ENVCTL_EINVALID, want);
	free(want);
	free(f);
	tu_rmtree(tmp);
	free(tmp);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* policy_interpreter refuses interp with exactly msg. */
static void
interp_fails(struct policy *pol, const char *interp, const char *msg)
{
	struct err err = ENVCTL_ERR_INIT;
	const char *p = interp;

	ck_assert_int_eq(policy_interpreter(pol, &p, &err), ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, msg);
	ck_assert_ptr_eq(p, interp);
	err_release(&err);
}

/*
 * The names policy_interpreter() runs without interpreter lines (and
 * unitenv marks as Python's): "python" then only digits and dots, in the
 * last path component.  Pinned: a change here widens or narrows what a
 * privileged agent runs.
 */
static const struct {
	const char	*path;
	int		 python;
} python_names[] = {
	{ "python", 1 },
	{ "python3", 1 },
	{ "python3.11", 1 },
	{ "python27", 1 },
	{ "/usr/bin/python3", 1 },
	{ "/opt/conda/bin/python3.12", 1 },
	{ "venv/bin/python", 1 },
	{ "/python", 1 },
	{ "python3.", 1 },
	{ "python.3", 1 },
	{ "python..", 1 },
	{ "", 0 },
	{ "/", 0 },
	{ "/usr/bin/", 0 },
	{ "/usr/bin/python3/", 0 },
	{ "/usr/lib/python3/sh", 0 },
	{ "py", 0 },
	{ "pytho", 0 },
	{ "Python3", 0 },
	{ "PYTHON", 0 },
	{ "ipython", 0 },
	{ "ipython3", 0 },
	{ "pythonw", 0 },
	{ "python3m", 0 },
	{ "python3.13t", 0 },
	{ "python3.11d", 0 },
	{ "python-3", 0 },
	{ "python3-config", 0 },
	{ "python3.11-config", 0 },
	{ "python3.12-gdb.py", 0 },
	{ "python3 ", 0 },
	{ " python3", 0 },
	{ "/usr/bin/python3\n", 0 },
	{ "python3/", 0 },
};

START_TEST(test_python_name)
{
	ck_assert_msg(policy_python_name(python_names[_i].path) ==
	    python_names[_i].python, "'%s': want %d", python_names[_i].path,
	    python_names[_i].python);
}
END_TEST

START_TEST(test_interpreter)
{
	struct policy pol;
	struct err err = ENVCTL_ERR_INIT;
	char *dir = trusted_dir("interpreter"), *py, *user, *udir, *upy, *gw;
	char *link, *tmp, *tpy, *want, *conf;
	const char *p;

	if (dir == NULL)
		return;
	policy_load(&pol, 0, "/nonexistent", NULL);
	p = "/home/ops/py";
	ck_assert_int_eq(policy_interpreter(&pol, &p, NULL), 0);
	ck_assert_str_eq(p, "/home/ops/py");	/* unprivileged: as is */
	policy_release(&pol);

	py = mkfile(dir, "python3", "#!/bin/sh\n", 0755, 0);
	user = mkfile(dir, "py", "#!/bin/sh\n", 0755, USER_UID);
	udir = mkdir_in(dir, "home", 0755, USER_UID);
	upy = mkfile(udir, "python3", "#!/bin/sh\n", 0755, 0);
	gw = mkfile(dir, "python3.11", "#!/bin/sh\n", 0775, 0);
	tmp = tu_mkdtemp();
	tpy = mkfile(tmp, "python3", "#!/bin/sh\n", 0755, 0);
	link = xasprintf("%s/python", dir);
	ck_assert_int_eq(symlink(tpy, link), 0);

	load(&pol, "/nonexistent/agent.conf");
	p = py;
	if (policy_interpreter(&pol, &p, &err) != 0)
		ck_abort_msg("%s", err.msg);
	ck_assert_str_eq(p, py);
	p = "python3";		/* a command name: found where the probe runs */
	if (access("/usr/bin/python3", X_OK) == 0) {
		if (policy_interpreter(&pol, &p, &err) != 0)
			ck_abort_msg("%s", err.msg);
		ck_assert_int_eq(p[0], '/');
		ck_assert_str_eq(strrchr(p, '/'), "/python3");
	}
	want = xasprintf("interpreter '%s' is not owned by root (uid %d): "
	    RULE_INTERP, user, USER_UID);
	interp_fails(&pol, user, want);
	free(want);
	want = xasprintf("interpreter '%s': '%s' is not owned by root "
	    "(uid %d): " RULE_INTERP, upy, udir, USER_UID);
	interp_fails(&pol, upy, want);
	free(want);
	want = xasprintf("interpreter '%s' is writable by group or others "
	    "(mode 0775): " RULE_INTERP, gw);
	interp_fails(&pol, gw, want);
	free(want);
	/* A root-owned link to a file in /tmp: the link's target counts. */
	if (strncmp(tmp, "/tmp/", 5) == 0) {
		want = xasprintf("interpreter '%s': '/tmp' is writable by "
		    "group "
		    "or others (mode 1777): " RULE_INTERP, link);
		interp_fails(&pol, link, want);
		free(want);
	}
	interp_fails(&pol, "/bin/sh", "interpreter '/bin/sh' is not named "
	    "python*, and /nonexistent/agent.conf lists no interpreters: a "
	    "privileged agent runs only Python interpreters or the listed "
	    "ones (docs/security.md)");
	interp_fails(&pol, "no-such-python", "interpreter 'no-such-python' "
	    "is not found in " ENVCTL_PROBE_PATH);
	policy_release(&pol);

	/* With interpreter lines, only those. */
	want = xasprintf("interpreter %s\n", py);
	conf = mkfile(dir, "agent.conf", want, 0644, 0);
	free(want);
	load(&pol, conf);
	p = py;
	ck_assert_int_eq(policy_interpreter(&pol, &p, NULL), 0);
	want = xasprintf("interpreter '/bin/sh' is not listed in %s: a "
	    "privileged agent runs only the interpreters listed there "
	    "(docs/security.md)", conf);
	interp_fails(&pol, "/bin/sh", want);
	free(want);
	policy_release(&pol);

	free(conf);
	free(link);
	free(tpy);
	tu_rmtree(tmp);
	free(tmp);
	free(py);
	free(user);
	free(udir);
	free(upy);
	free(gw);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_target)
{
	struct policy pol;
	struct probe p;
	struct err err = ENVCTL_ERR_INIT;
	char *dir = trusted_dir("target"), *site, *link, *other, *sp, *want;
	char *conf, *tmp, *tfile;

	if (dir == NULL)
		return;
	memset(&p, 0, sizeof(p));
	site = mkfile(dir, "sitecustomize.py", "x = 1\n", 0644, 0);
	other = mkfile(dir, "other.py", "x = 2\n", 0644, 0);
	link = xasprintf("%s/usr-link.py", dir);
	ck_assert_int_eq(symlink("sitecustomize.py", link), 0);
	p.origin = site;
	load(&pol, "/nonexistent/agent.conf");
	ck_assert_int_eq(policy_target(&pol, site, &p, NULL), 0);
	ck_assert_int_eq(policy_target(&pol, link, &p, NULL), 0);
	ck_assert_int_eq(policy_target(&pol, "/etc/shadow", &p, &err),
	    ENVCTL_EINVALID);
	want = xasprintf("target '/etc/shadow' is neither the sitecustomize of "
	    "the interpreter ('%s') nor a target listed in "
	    "/nonexistent/agent.conf: a privileged agent changes only those "
	    "(docs/security.md)", site);
	ck_assert_str_eq(err.msg, want);
	free(want);
	err_release(&err);
	ck_assert_int_eq(policy_target(&pol, other, &p, NULL),
	    ENVCTL_EINVALID);
	/* No sitecustomize imported: the one auto mode would create. */
	p.origin = NULL;
	p.site_packages = json_pack("[s,s]", "/nonexistent/site", dir);
	sp = xasprintf("%s/sitecustomize.py", dir);
	ck_assert_int_eq(policy_target(&pol, sp, &p, NULL), 0);
	json_decref(p.site_packages);
	p.site_packages = NULL;
	ck_assert_int_eq(policy_target(&pol, site, NULL, NULL),
	    ENVCTL_EINVALID);
	/* A file in /tmp: refused for its path, whatever lists it. */
	tmp = tu_mkdtemp();
	tfile = mkfile(tmp, "sitecustomize.py", "", 0644, 0);
	p.origin = tfile;
	if (strncmp(tmp, "/tmp/", 5) == 0) {
		ck_assert_int_eq(policy_target(&pol, tfile, &p, &err),
		    ENVCTL_EINVALID);
		want = xasprintf("target '%s': '/tmp' is writable by group or "
		    "others (mode 1777): a privileged agent changes only files "
		    "on paths that only root can change (docs/security.md)",
		    tfile);
		ck_assert_str_eq(err.msg, want);
		free(want);
		err_release(&err);
	}
	policy_release(&pol);
	/* Listed in the policy file (a missing one may be created). */
	want = xasprintf("target %s\ntarget %s/new.py\n", other, dir);
	conf = mkfile(dir, "agent.conf", want, 0644, 0);
	free(want);
	load(&pol, conf);
	p.origin = site;
	ck_assert_int_eq(policy_target(&pol, other, &p, NULL), 0);
	want = xasprintf("%s/new.py", dir);
	ck_assert_int_eq(policy_target(&pol, want, &p, NULL), 0);
	free(want);
	policy_release(&pol);
	/* Unprivileged: anything. */
	policy_load(&pol, 0, conf, NULL);
	ck_assert_int_eq(policy_target(&pol, "/etc/shadow", &p, NULL), 0);
	policy_release(&pol);

	free(conf);
	free(tfile);
	tu_rmtree(tmp);
	free(tmp);
	free(sp);
	free(site);
	free(other);
	free(link);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_backup_lock_dirs)
{
	struct policy pol;
	struct err err = ENVCTL_ERR_INIT;

	memset(&pol, 0, sizeof(pol));
	pol.privileged = 1;
	pol.file = ENVCTL_POLICY_FILE;
	ck_assert_int_eq(policy_backup_dir(&pol, "/var/backups/envctl", NULL),
	    0);
	ck_assert_int_eq(policy_backup_dir(&pol, "/var/backups/envctl//",
	    NULL), 0);
	ck_assert_int_eq(policy_backup_dir(&pol, "/home/ops/b", &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "backup directory '/home/ops/b' is not "
	    "'/var/backups/envctl' (the default): a privileged agent keeps "
	    "backups only in the backup_dir of /etc/envctl/agent.conf "
	    "(docs/security.md)");
	err_release(&err);
	ck_assert_int_eq(policy_backup_dir(&pol, "/var/backups/envctlx",
	    NULL), ENVCTL_EINVALID);
	pol.backup_dir = xstrdup("/srv/b");
	ck_assert_int_eq(policy_backup_dir(&pol, "/srv/b", NULL), 0);
	ck_assert_int_eq(policy_backup_dir(&pol, "/var/backups/envctl",
	    NULL), ENVCTL_EINVALID);
	ck_assert_int_eq(policy_lock_dir(&pol, NULL, NULL), 0);
	ck_assert_int_eq(policy_lock_dir(&pol, ENVCTL_LOCK_DIR, NULL), 0);
	ck_assert_int_eq(policy_lock_dir(&pol, "/home/ops/l", &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "lock directory '/home/ops/l' is not '"
	    ENVCTL_LOCK_DIR "': a privileged agent takes its locks only "
	    "there (docs/security.md)");
	err_release(&err);
	policy_release(&pol);
	pol.privileged = 0;
	ck_assert_int_eq(policy_backup_dir(&pol, "/tmp", NULL), 0);
	ck_assert_int_eq(policy_lock_dir(&pol, "/tmp", NULL), 0);
}
END_TEST

/* "service" lines, policy_service() and policy_root_file(). */
START_TEST(test_services)
{
	struct policy pol;
	struct err err = ENVCTL_ERR_INIT;
	char *dir = trusted_dir("services"), *f, *sub, *want, *env;

	if (dir == NULL)
		return;
	f = mkfile(dir, "agent.conf", "service vllm\n"
	    "  service\ttriton@0.service \n", 0644, 0);
	load(&pol, f);
	ck_assert_uint_eq(pol.nservices, 2);
	ck_assert_str_eq(pol.services[0], "vllm.service");
	ck_assert_str_eq(pol.services[1], "triton@0.service");
	ck_assert_int_eq(policy_service(&pol, "vllm.service", &err), 0);
	ck_assert_int_eq(policy_service(&pol, "triton@0.service", &err), 0);
	ck_assert_int_eq(policy_service(&pol, "triton@1.service", &err),
	    ENVCTL_EINVALID);
	want = xasprintf("service 'triton@1.service' is not listed in %s: a "
	    "privileged agent reads only the services listed there "
	    "(docs/security.md)", f);
	ck_assert_str_eq(err.msg, want);
	free(want);
	err_release(&err);
	/* Environment files: only where only root can change them. */
	env = mkfile(dir, "vllm.env", "A=1\n", 0644, 0);
	ck_assert_int_eq(policy_root_file(&pol, env, &err), 0);
	free(env);
	env = xasprintf("%s/missing.env", dir);
	ck_assert_int_eq(policy_root_file(&pol, env, &err), 0);
	free(env);
	env = mkfile(dir, "user.env", "A=1\n", 0644, USER_UID);
	ck_assert_int_eq(policy_root_file(&pol, env, &err), ENVCTL_EINVALID);
	want = xasprintf("environment file '%s' is not owned by root (uid "
	    "%d): a privileged agent reads a unit's environment files only "
	    "where only root can change them (docs/security.md)", env,
	    USER_UID);
	ck_assert_str_eq(err.msg, want);
	free(want);
	err_release(&err);
	free(env);
	sub = mkdir_in(dir, "open", 0777, 0);
	env = mkfile(sub, "x.env", "A=1\n", 0644, 0);
	ck_assert_int_eq(policy_root_file(&pol, env, &err), ENVCTL_EINVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "is writable by group or "
	    "others (mode 0777)"));
	err_release(&err);
	free(env);
	free(sub);
	policy_release(&pol);
	free(f);
	/* Unprivileged: every service and file passes. */
	ck_assert_int_eq(policy_load(&pol, 0, "/nonexistent/x", NULL), 0);
	ck_assert_int_eq(policy_service(&pol, "any.service", NULL), 0);
	ck_assert_int_eq(policy_root_file(&pol, "/tmp/x", NULL), 0);
	policy_release(&pol);
	f = mkfile(dir, "bad.conf", "service /etc/x\n", 0644, 0);
	want = xasprintf("%s:1: 'service' needs one unit name", f);
	load_fails(f, ENVCTL_EPARSE, want);
	free(want);
	free(f);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_digest)
{
	struct err err = ENVCTL_ERR_INIT;
	char hex[ENVCTL_SHA256_HEX], *tmp = tu_mkdtemp(), *name, *good, *bad;
	char *want;
	int mismatch;

	sha256_hex(hex, "agent", 5);
	name = xasprintf("envctl-agent-%s", hex);
	good = tu_writes(tmp, name, "agent");
	bad = tu_writes(tmp, "envctl-agent-"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    "agent");
	ck_assert_int_eq(policy_check_digest(&mismatch, good, good, NULL,
	    NULL), 0);
	ck_assert_int_eq(policy_check_digest(&mismatch, good, good, hex,
	    NULL), 0);
	ck_assert_int_eq(policy_check_digest(&mismatch, bad, bad, NULL, &err),
	    ENVCTL_EINVALID);
	ck_assert_int_eq(mismatch, 1);
	want = xasprintf("the agent '%s' does not match its digest (sha256 %s, "
	    "expected 0123456789abcdef0123456789abcdef0123456789abcdef0123456"
	    "789abcdef): tampered or foreign; a privileged agent runs only as "
	    "the program it is named after (docs/security.md)", bad, hex);
	ck_assert_str_eq(err.msg, want);
	free(want);
	err_release(&err);
	/* The right name, another --sha256. */
	ck_assert_int_eq(policy_check_digest(&mismatch, good, good,
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    NULL), ENVCTL_EINVALID);
	ck_assert_int_eq(mismatch, 1);
	ck_assert_int_eq(policy_check_digest(&mismatch, good, good, "ABC",
	    NULL), ENVCTL_EINVALID);
	ck_assert_int_eq(mismatch, 0);
	/* No digest anywhere: only a program only root can change. */
	free(good);
	good = tu_writes(tmp, "envctl-agent", "agent");
	if (strncmp(tmp, "/tmp/", 5) == 0) {
		ck_assert_int_eq(policy_check_digest(&mismatch, good, good,
		    NULL, NULL), ENVCTL_EINVALID);
		ck_assert_int_eq(mismatch, 0);
	}
	ck_assert_int_eq(policy_check_digest(&mismatch, good, good, hex,
	    NULL), 0);
	free(good);
	free(bad);
	free(name);
	tu_rmtree(tmp);
	free(tmp);
}
END_TEST

/* ---- the built agent, run as sudo runs it ---- */

/* Runs the agent as root with SUDO_UID set, one request; *reply. */
static int
run_agent(json_t **reply, const char *prog, json_t *req, struct tu_run *run)
{
	struct buf in = ENVCTL_BUF_INIT, out = ENVCTL_BUF_INIT;
	char *argv[2], *envp[3];
	int r;

	argv[0] = (char *)prog;
	argv[1] = NULL;
	envp[0] = "SUDO_UID=1000";
	envp[1] = "PATH=/usr/bin:/bin";
	envp[2] = NULL;
	ck_assert_int_eq(proto_encode(&in, req, NULL), 0);
	json_decref(req);
	tu_run(run, argv, envp, in.data, in.len);
	buf_init(&out, 0);
	buf_add(&out, run->out, run->outlen);
	*reply = NULL;
	r = proto_decode(reply, &out, NULL);
	buf_release(&in);
	buf_release(&out);
	return r;
}

/* The agent's program copied to dir/name, root's, mode 0755. */
static char *
agent_copy(const char *dir, const char *name)
{
	size_t len;
	char *data = tu_read(agent_bin(), &len), *p;

	ck_assert_ptr_nonnull(data);
	p = tu_write(dir, name, data, len);
	free(data);
	ck_assert_int_eq(chmod(p, 0755), 0);
	return p;
}

START_TEST(test_agent_privileged)
{
	struct tu_run run;
	char hex[ENVCTL_SHA256_HEX], *dir = trusted_dir("agent_privileged");
	char *prog, *name, *script, *msg;
	json_t *reply;

	if (dir == NULL)
		return;
	if (access(agent_bin(), R_OK) != 0) {
		tu_skip("agent_privileged", "the agent is not built");
		tu_rmtree(dir);
		free(dir);
		return;
	}
	ck_assert_int_eq(sha256_file_hex(hex, agent_bin(), NULL), 0);
	name = xasprintf("envctl-agent-%s", hex);
	prog = agent_copy(dir, name);
	/* A login user's script, the request naming it and /etc/shadow. */
	script = mkfile(dir, "py", "#!/bin/sh\ncat /etc/shadow\n", 0755,
	    USER_UID);
	ck_assert_int_eq(run_agent(&reply, prog, json_pack("{s:i,s:s,s:s,"
	    "s:s}", "id", 1, "op", "read", "interpreter", script, "path",
	    "/etc/shadow"), &run), 1);
	assert_fail(reply, "EINVALID", (msg = xasprintf("interpreter '%s' is "
	    "not owned by root (uid 1000): " RULE_INTERP, script)));
	ck_assert_ptr_null(strstr(run.out, "root:"));
	free(msg);
	json_decref(reply);
	tu_run_free(&run);
	/* A root-owned Python cannot read /etc/shadow either. */
	if (access("/usr/bin/python3", X_OK) == 0) {
		ck_assert_int_eq(run_agent(&reply, prog, json_pack("{s:i,s:s,"
		    "s:s,s:s}", "id", 1, "op", "read", "interpreter",
		    "/usr/bin/python3", "path", "/etc/shadow"), &run), 1);
		assert_fail_prefix(reply, "EINVALID", "target '/etc/shadow' is "
		    "neither the sitecustomize of the interpreter");
		ck_assert_ptr_null(strstr(run.out, "root:"));
		json_decref(reply);
		tu_run_free(&run);
	}
	/* Backups elsewhere. */
	ck_assert_int_eq(run_agent(&reply, prog, json_pack("{s:i,s:s,s:s,"
	    "s:{s:s}}", "id", 1, "op", "backups", "path", "/etc/shadow",
	    "backup", "dir", "/tmp"), &run), 1);
	assert_fail_prefix(reply, "EINVALID", "backup directory '/tmp' is not "
	    "'/var/backups/envctl'");
	json_decref(reply);
	tu_run_free(&run);
	/* A program that is not what its name says: refuses to start. */
	ck_assert_int_eq(unlink(prog), 0);
	free(prog);
	prog = agent_copy(dir, "envctl-agent-"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	run_agent(&reply, prog, json_pack("{s:i,s:s,s:i}", "id", 1, "op",
	    "hello", "protocol", 1), &run);
	ck_assert_ptr_null(reply);
	ck_assert_int_eq(run.status, ENVCTL_POLICY_EXIT_DIGEST);
	ck_assert_ptr_nonnull(strstr(run.errout, "does not match its digest"));
	ck_assert_ptr_nonnull(strstr(run.errout, "tampered or foreign"));
	tu_run_free(&run);
	free(script);
	free(prog);
	free(name);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("sha256");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_sha256_vectors, 0,
	    sizeof(vectors) / sizeof(vectors[0]));
	tcase_add_test(tc, test_sha256_million);
	tcase_add_test(tc, test_sha256_sum);
	tcase_add_test(tc, test_sha256_agent);
	suite_add_tcase(s, tc);
	tc = tcase_create("policy");
	tcase_add_test(tc, test_privileged);
	tcase_add_test(tc, test_policy_file);
	tcase_add_loop_test(tc, test_python_name, 0,
	    sizeof(python_names) / sizeof(python_names[0]));
	tcase_add_test(tc, test_interpreter);
	tcase_add_test(tc, test_target);
	tcase_add_test(tc, test_backup_lock_dirs);
	tcase_add_test(tc, test_digest);
	tcase_add_test(tc, test_services);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	tc = tcase_create("agent");
	tcase_add_test(tc, test_agent_privileged);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
