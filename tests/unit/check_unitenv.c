/*
 * check_unitenv.c - a service's launch environment read from its unit
 * files (agent/unitenv.c).
 *
 * agent/unitenv.c is compiled into this suite directly, with the agent
 * files it calls (agent/child.c, agent/policy.c, agent/unitpath.c,
 * agent/unitsyntax.c): the Makefile links agent objects only into the
 * agent.  Every test writes real unit files, drop-ins and environment
 * files under a private root and reads them back.  The oracle test runs
 * systemd's own loader (systemd-analyze --offline=true --root=ROOT
 * security UNIT) over the same tree and compares the order in which it
 * parses the files, through the warnings both print for a deliberately
 * invalid assignment in each file.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/child.c"	/* see above */
#include "agent/policy.c"
#include "agent/unitenv.c"
#include "agent/unitpath.c"
#include "agent/unitsyntax.c"
#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "testutil.h"

#define ETC	"/etc/systemd/system"
#define RUN	"/run/systemd/system"
#define LIB	"/lib/systemd/system"
#define USR	"/usr/lib/systemd/system"

/* Writes text at root/rel, making the directories on the way. */
static void
put(const char *root, const char *rel, const char *text)
{
	char *p = xasprintf("%s%s", root, rel), *s;

	for (s = strchr(p + strlen(root) + 1, '/'); s != NULL;
	    s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			ck_abort_msg("mkdir %s: %s", p, strerror(errno));
		*s = '/';
	}
	free(tu_writes(NULL, p, text));
	free(p);
}

/* A link at root/rel to target. */
static void
link_to(const char *root, const char *rel, const char *target)
{
	char *p = xasprintf("%s%s", root, rel);

	put(root, rel, "");
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(symlink(target, p), 0);
	free(p);
}

static void
load_ok(struct unitenv *u, const char *root, const char *unit)
{
	struct err err = ENVCTL_ERR_INIT;

	if (unitenv_load(u, root, unit, NULL, &err) != 0)
		ck_abort_msg("unitenv_load %s: %s", unit, err.msg);
	err_release(&err);
}

/* The value of name, which must be set and known. */
static const char *
val(const struct unitenv *u, const char *name)
{
	const struct unitenv_var *v = unitenv_get(u, name);

	ck_assert_msg(v != NULL, "%s is not set", name);
	ck_assert_msg(v->now.value != NULL, "%s is unknown: %s", name,
	    v->now.unknown);
	return v->now.value;
}

static int
has(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

#define SVC	"[Service]\nExecStart=/usr/bin/python3 -m app\n"

START_TEST(test_names)
{
	static const struct {
		const char	*name;
		const char	*msg;
	} bad[] = {
		{ "a/b", "unit name 'a/b' holds a character systemd does not "
		    "allow in unit names" },
		{ "", "unit name '' has an empty prefix" },
		{ "@x.service", "unit name '@x.service' has an empty prefix" },
		{ "foo@.service", "unit 'foo@.service' is a template: name an "
		    "instance (NAME@INSTANCE.service)" },
		{ "foo.socket", "unit 'foo.socket' is not a service" },
		{ "fo o", "unit name 'fo o' holds a character systemd does "
		    "not allow in unit names" },
		{ "../x", "unit name '../x' holds a character systemd does "
		    "not allow in unit names" },
	};
	struct unitenv u;
	struct err err = ENVCTL_ERR_INIT;
	char *root = tu_mkdtemp(), *lng;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(unitenv_load(&u, root, bad[i].name, NULL,
		    &err), ENVCTL_EINVALID);
		ck_assert_str_eq(err.msg, bad[i].msg);
		err_release(&err);
		unitenv_release(&u);
	}
	/* 255 characters pass, 256 do not. */
	lng = xmalloc(300);
	memset(lng, 'a', 247);
	strcpy(lng + 247, ".service");
	load_ok(&u, root, lng);
	ck_assert_int_eq(u.found, 0);
	unitenv_release(&u);
	memset(lng, 'a', 248);
	strcpy(lng + 248, ".service");
	ck_assert_int_eq(unitenv_load(&u, root, lng, NULL, &err),
	    ENVCTL_EINVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "is longer than 255"));
	err_release(&err);
	unitenv_release(&u);
	free(lng);
	/* A bare name is a service; "a.b" has no unit type suffix. */
	load_ok(&u, root, "vllm");
	ck_assert_str_eq(u.unit, "vllm.service");
	unitenv_release(&u);
	load_ok(&u, root, "my.app");
	ck_assert_str_eq(u.unit, "my.app.service");
	unitenv_release(&u);
	ck_assert_int_eq(unitenv_load(&u, "rel/root", "x", NULL, &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "root 'rel/root' is not an absolute path "
	    "free of glob characters");
	err_release(&err);
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_priority)
{
	struct unitenv u;
	char *root = tu_mkdtemp();

	put(root, USR "/a.service", SVC "Environment=FROM=usr\n");
	put(root, LIB "/a.service", SVC "Environment=FROM=lib\n");
	load_ok(&u, root, "a");
	ck_assert_int_eq(u.found, 1);
	ck_assert_str_eq(u.fragment, LIB "/a.service");
	ck_assert_str_eq(val(&u, "FROM"), "lib");
	unitenv_release(&u);
	put(root, ETC "/a.service", SVC "Environment=FROM=etc\n");
	put(root, RUN "/a.service", SVC "Environment=FROM=run\n");
	load_ok(&u, root, "a.service");
	ck_assert_str_eq(u.fragment, ETC "/a.service");
	ck_assert_str_eq(val(&u, "FROM"), "etc");
	unitenv_release(&u);
	put(root, "/run/systemd/system.control/a.service", SVC
	    "Environment=FROM=control\n");
	load_ok(&u, root, "a");
	ck_assert_str_eq(val(&u, "FROM"), "control");
	unitenv_release(&u);
	/* Masked: a link to /dev/null, or an empty file, highest first. */
	link_to(root, "/etc/systemd/system.control/a.service", "/dev/null");
	load_ok(&u, root, "a");
	ck_assert_int_eq(u.found, 1);
	ck_assert_int_eq(u.masked, 1);
	ck_assert_ptr_null(unitenv_get(&u, "FROM"));
	unitenv_release(&u);
	put(root, ETC "/b.service", "");
	put(root, USR "/b.service", SVC);
	load_ok(&u, root, "b");
	ck_assert_int_eq(u.masked, 1);
	unitenv_release(&u);
	/* Not found. */
	load_ok(&u, root, "none");
	ck_assert_int_eq(u.found, 0);
	ck_assert_ptr_null(u.fragment);
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_dropins)
{
	struct unitenv u;
	char *root = tu_mkdtemp();

	put(root, USR "/a-b-c.service", SVC "Environment=X=frag Y=frag\n");
	put(root, USR "/a-b-c.service.d/10-x.conf",
	    "[Service]\nEnvironment=X=usr10\n");
	/* Same name higher up masks it. */
	put(root, ETC "/a-b-c.service.d/10-x.conf",
	    "[Service]\nEnvironment=X=etc10\n");
	/* Sorted by file name across directories. */
	put(root, RUN "/a-b-c.service.d/05-x.conf",
	    "[Service]\nEnvironment=X=run05 Y=run05\n");
	put(root, USR "/a-b-c.service.d/20-y.conf",
	    "[Service]\nEnvironment=Y=usr20\n");
	/* Hierarchical and top-level ones; the specific one wins a name. */
	put(root, ETC "/a-.service.d/30-h.conf",
	    "[Service]\nEnvironment=H=a-\n");
	put(root, ETC "/a-b-.service.d/31-h.conf",
	    "[Service]\nEnvironment=H=a-b-\n");
	put(root, ETC "/service.d/31-h.conf",
	    "[Service]\nEnvironment=H=type\n");
	put(root, USR "/service.d/40-t.conf",
	    "[Service]\nEnvironment=T=type\n");
	/* A drop-in linked to /dev/null masks that name below it. */
	link_to(root, ETC "/a-b-c.service.d/50-m.conf", "/dev/null");
	put(root, USR "/a-b-c.service.d/50-m.conf",
	    "[Service]\nEnvironment=M=masked\n");
	put(root, USR "/a-b-c.service.d/.hidden.conf",
	    "[Service]\nEnvironment=HIDDEN=1\n");
	put(root, USR "/a-b-c.service.d/60.txt",
	    "[Service]\nEnvironment=TXT=1\n");
	load_ok(&u, root, "a-b-c");
	ck_assert_uint_eq(u.ndropins, 7);
	ck_assert_str_eq(u.dropins[0], RUN "/a-b-c.service.d/05-x.conf");
	ck_assert_str_eq(u.dropins[1], ETC "/a-b-c.service.d/10-x.conf");
	ck_assert_str_eq(u.dropins[2], USR "/a-b-c.service.d/20-y.conf");
	ck_assert_str_eq(u.dropins[3], ETC "/a-.service.d/30-h.conf");
	ck_assert_str_eq(u.dropins[4], ETC "/a-b-.service.d/31-h.conf");
	ck_assert_str_eq(u.dropins[5], USR "/service.d/40-t.conf");
	ck_assert_str_eq(u.dropins[6], ETC "/a-b-c.service.d/50-m.conf");
	ck_assert_str_eq(val(&u, "X"), "etc10");
	ck_assert_str_eq(val(&u, "Y"), "usr20");
	ck_assert_str_eq(val(&u, "H"), "a-b-");
	ck_assert_str_eq(val(&u, "T"), "type");
	ck_assert_ptr_null(unitenv_get(&u, "M"));
	ck_assert_ptr_null(unitenv_get(&u, "HIDDEN"));
	ck_assert_ptr_null(unitenv_get(&u, "TXT"));
	/* X's history, oldest first. */
	ck_assert_uint_eq(unitenv_get(&u, "X")->nover, 2);
	ck_assert_str_eq(unitenv_get(&u, "X")->over[0].value, "frag");
	ck_assert_str_eq(unitenv_get(&u, "X")->over[1].value, "run05");
	ck_assert_str_eq(unitenv_get(&u, "X")->now.file,
	    ETC "/a-b-c.service.d/10-x.conf");
	ck_assert_int_eq(unitenv_get(&u, "X")->now.line, 2);
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_template)
{
	struct unitenv u;
	char *root = tu_mkdtemp();

	put(root, USR "/w-x@.service", SVC
	    "Environment=\"A=%i %I %n %N %p %P %j %%\"\n");
	put(root, USR "/w-x@.service.d/10.conf",
	    "[Service]\nEnvironment=T=template\n");
	put(root, ETC "/w-x@gpu-0.service.d/20.conf",
	    "[Service]\nEnvironment=I=instance\n");
	put(root, ETC "/w-@gpu-0.service.d/30.conf",
	    "[Service]\nEnvironment=D=dash-instance\n");
	load_ok(&u, root, "w-x@gpu-0");
	ck_assert_str_eq(u.fragment, USR "/w-x@.service");
	ck_assert_str_eq(val(&u, "A"), "gpu-0 gpu/0 w-x@gpu-0.service "
	    "w-x@gpu-0 w-x w/x x %");
	ck_assert_str_eq(val(&u, "T"), "template");
	ck_assert_str_eq(val(&u, "I"), "instance");
	ck_assert_str_eq(val(&u, "D"), "dash-instance");
	unitenv_release(&u);
	/* An instance's own file beats its template, wherever it lies. */
	put(root, "/run/systemd/generator.late/w-x@gpu-0.service", SVC
	    "Environment=A=own\n");
	load_ok(&u, root, "w-x@gpu-0.service");
	ck_assert_str_eq(u.fragment,
	    "/run/systemd/generator.late/w-x@gpu-0.service");
	ck_assert_str_eq(val(&u, "A"), "own");
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_quoting)
{
	struct unitenv u;
	const struct unitenv_var *v;
	char *root = tu_mkdtemp();

	put(root, ETC "/q.service",
	    "# comment\n"
	    "; another\n"
	    "[Unit]\n"
	    "Environment=NOT=service-section\n"
	    "[Service]\n"
	    "Environment=\"VAR1=word1 word2\" VAR2=word3 \"VAR3=$word 5 6\"\n"
	    "Environment=Q='single \"q\"' E=a\\tb\\x41\\u00e9\\101\\s!\n"
	    "  Environment  =  MID=\"x y\"z  \n"
	    "Environment=\"C=one \\\n"
	    "# skipped inside a continuation\n"
	    "  two\"\n"
	    "Environment=1BAD=x NOEQ GOOD=yes\n"
	    "Environment=OK1=1 \"UNBAL=x OK2=2\n"
	    "Environment=BADESC=\\q AFTER=1\n"
	    "Environment=H=%H-x L=%l\n"
	    "Environment=SPEC=%Z\n"
	    "Environment=CRED=%d/k PCT=100%\n"
	    "NoEquals\n");
	load_ok(&u, root, "q");
	ck_assert_ptr_null(unitenv_get(&u, "NOT"));
	ck_assert_str_eq(val(&u, "VAR1"), "word1 word2");
	ck_assert_str_eq(val(&u, "VAR2"), "word3");
	ck_assert_str_eq(val(&u, "VAR3"), "$word 5 6");
	ck_assert_str_eq(val(&u, "Q"), "single \"q\"");
	ck_assert_str_eq(val(&u, "E"), "a\tbA\xc3\xa9" "A !");
	ck_assert_str_eq(val(&u, "MID"), "x yz");
	ck_assert_str_eq(val(&u, "C"), "one    two");
	ck_assert_int_eq(unitenv_get(&u, "C")->now.line, 9);
	ck_assert_str_eq(val(&u, "GOOD"), "yes");
	ck_assert_str_eq(val(&u, "OK1"), "1");
	ck_assert_ptr_null(unitenv_get(&u, "OK2"));
	ck_assert_ptr_null(unitenv_get(&u, "AFTER"));
	ck_assert_str_eq(val(&u, "CRED"), "/run/credentials/q.service/k");
	ck_assert_str_eq(val(&u, "PCT"), "100%");
	v = unitenv_get(&u, "H");
	ck_assert_ptr_nonnull(v);
	ck_assert_ptr_null(v->now.value);
	ck_assert_str_eq(v->now.unknown, "specifier %H needs the host's "
	    "identity at run time");
	ck_assert_ptr_null(unitenv_get(&u, "SPEC"));
	ck_assert(has(u.warnings, u.nwarnings, ETC "/q.service:12: invalid "
	    "environment assignment, ignoring: 1BAD=x"));
	ck_assert(has(u.warnings, u.nwarnings, ETC "/q.service:12: invalid "
	    "environment assignment, ignoring: NOEQ"));
	ck_assert(has(u.warnings, u.nwarnings, ETC "/q.service:13: invalid "
	    "syntax, ignoring: OK1=1 \"UNBAL=x OK2=2"));
	ck_assert(has(u.warnings, u.nwarnings, ETC "/q.service:14: invalid "
	    "syntax, ignoring: BADESC=\\q AFTER=1"));
	ck_assert(has(u.warnings, u.nwarnings, ETC "/q.service:16: failed "
	    "to resolve specifiers in SPEC=%Z, ignoring"));
	ck_assert(has(u.warnings, u.nwarnings, ETC "/q.service:18: missing "
	    "'=', ignoring line"));
	ck_assert_uint_eq(u.nerrors, 0);
	unitenv_release(&u);
	/* A bad section header: the unit does not load. */
	put(root, ETC "/h.service", "[Service\nEnvironment=A=1\n");
	load_ok(&u, root, "h");
	ck_assert_uint_eq(u.nerrors, 1);
	ck_assert_str_eq(u.errors[0], ETC "/h.service:1: invalid section "
	    "header '[Service': the unit fails to load");
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_reset)
{
	struct unitenv u;
	char *root = tu_mkdtemp();

	put(root, ETC "/r.service", "[Service]\n"
	    "Environment=A=1 B=2\n"
	    "EnvironmentFile=/e1\n"
	    "ExecStart=/bin/first\n"
	    "UnsetEnvironment=A\n");
	put(root, ETC "/r.service.d/1.conf", "[Service]\n"
	    "Environment=\n"
	    "Environment=C=3\n"
	    "EnvironmentFile=\n"
	    "EnvironmentFile=-/e2\n"
	    "ExecStart=\n"
	    "ExecStart=/usr/bin/python3.12 -m x\n"
	    "UnsetEnvironment=\n");
	put(root, "/e1", "FROM1=1\n");
	put(root, "/e2", "FROM2=2\nA=back\n");
	load_ok(&u, root, "r");
	ck_assert_ptr_null(unitenv_get(&u, "B"));
	ck_assert_str_eq(val(&u, "C"), "3");
	ck_assert_ptr_null(unitenv_get(&u, "FROM1"));
	ck_assert_str_eq(val(&u, "FROM2"), "2");
	ck_assert_str_eq(val(&u, "A"), "back");
	ck_assert_uint_eq(u.nenvfiles, 1);
	ck_assert_str_eq(u.envfiles[0], "-/e2");
	ck_assert_uint_eq(u.nunset, 0);
	ck_assert_str_eq(u.exec->path, "/usr/bin/python3.12");
	ck_assert_int_eq(u.exec->python, 1);
	ck_assert_uint_eq(u.nerrors, 0);
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_envfile)
{
	struct unitenv u;
	const struct unitenv_var *v;
	char *root = tu_mkdtemp();

	/* EnvironmentFile= before Environment= in the file still wins. */
	put(root, ETC "/e.service", "[Service]\n"
	    "EnvironmentFile=/etc/default/e\n"
	    "EnvironmentFile=-/etc/default/missing\n"
	    "EnvironmentFile=-/etc/e.d/*.env\n"
	    "Environment=NCCL_PROTO=Simple KEEP=env\n"
	    "ExecStart=/usr/bin/python3 -m x\n");
	put(root, "/etc/default/e",
	    "# comment\n"
	    "; comment\n"
	    "NCCL_PROTO=LL128\n"
	    "  SPACED  =  a b  \n"
	    "SQ='  x \\n y '\n"
	    "DQ=\"a \\\"q\\\" \\$ \\n\"\n"
	    "ESC=a\\ b\\\\c\n"
	    "CONT=one\\\n"
	    "two\n"
	    "MULTI=\"l1\n"
	    "l2\"\n"
	    "INNER=a\"b\"c\n"
	    "export EXP=1\n"
	    "1X=bad\n"
	    "NOEQ\n"
	    "EMPTY=\n"
	    "LAST=z");
	put(root, "/etc/e.d/b.env", "ORDER=b\n");
	put(root, "/etc/e.d/a.env", "ORDER=a\nNCCL_PROTO=Simple\n");
	load_ok(&u, root, "e");
	ck_assert_uint_eq(u.nerrors, 0);
	ck_assert_str_eq(val(&u, "SPACED"), "a b");
	ck_assert_str_eq(val(&u, "SQ"), "  x \\n y ");
	ck_assert_str_eq(val(&u, "DQ"), "a \"q\" $ \\n");
	ck_assert_str_eq(val(&u, "ESC"), "a b\\c");
	ck_assert_str_eq(val(&u, "CONT"), "onetwo");
	ck_assert_str_eq(val(&u, "MULTI"), "l1\nl2");
	ck_assert_str_eq(val(&u, "INNER"), "a\"b\"c");
	ck_assert_ptr_null(unitenv_get(&u, "EXP"));
	ck_assert_str_eq(val(&u, "EMPTY"), "");
	ck_assert_str_eq(val(&u, "LAST"), "z");
	ck_assert_str_eq(val(&u, "KEEP"), "env");
	ck_assert_str_eq(val(&u, "ORDER"), "b");
	ck_assert(has(u.warnings, u.nwarnings, "/etc/default/e:13: ignoring "
	    "invalid environment assignment 'export EXP=1'"));
	ck_assert(has(u.warnings, u.nwarnings, "/etc/default/e:14: ignoring "
	    "invalid environment assignment '1X=bad'"));
	/* Environment= first, then the files in order, globs sorted. */
	v = unitenv_get(&u, "NCCL_PROTO");
	ck_assert_str_eq(v->now.value, "Simple");
	ck_assert_str_eq(v->now.file, "/etc/e.d/a.env");
	ck_assert_int_eq(v->now.line, 2);
	ck_assert_str_eq(v->now.directive, "EnvironmentFile");
	ck_assert_uint_eq(v->nover, 2);
	ck_assert_str_eq(v->over[0].value, "Simple");
	ck_assert_str_eq(v->over[0].directive, "Environment");
	ck_assert_str_eq(v->over[0].file, ETC "/e.service");
	ck_assert_int_eq(v->over[0].line, 5);
	ck_assert_str_eq(v->over[1].value, "LL128");
	ck_assert_int_eq(v->over[1].line, 3);
	unitenv_release(&u);

	/* A required file that is missing: the service fails to start. */
	put(root, ETC "/f.service", "[Service]\n"
	    "EnvironmentFile=/etc/default/none\n"
	    "EnvironmentFile=relative\n"
	    "Environment=A=1\n");
	load_ok(&u, root, "f");
	ck_assert_uint_eq(u.nerrors, 1);
	ck_assert_str_eq(u.errors[0], ETC "/f.service:2: EnvironmentFile="
	    "/etc/default/none: no such file: the service fails to start");
	ck_assert(has(u.warnings, u.nwarnings, ETC "/f.service:3: "
	    "EnvironmentFile= path 'relative' is not absolute and "
	    "normalized, ignoring"));
	ck_assert_str_eq(val(&u, "A"), "1");
	unitenv_release(&u);

	/* A directory, or invalid UTF-8: fails, or is skipped with "-". */
	put(root, "/etc/default/bad", "A=\xff\n");
	put(root, ETC "/g.service", "[Service]\n"
	    "EnvironmentFile=/etc/default\n"
	    "EnvironmentFile=-/etc/default/bad\n");
	load_ok(&u, root, "g");
	ck_assert_uint_eq(u.nerrors, 1);
	ck_assert_str_eq(u.errors[0], ETC "/g.service:2: EnvironmentFile="
	    "/etc/default: '/etc/default' is not a regular file: the service "
	    "fails to start");
	ck_assert(has(u.warnings, u.nwarnings, ETC "/g.service:3: "
	    "EnvironmentFile=-/etc/default/bad not read: invalid UTF-8 at "
	    "line 1"));
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_unset_home)
{
	struct unitenv u;
	const struct unitenv_var *v;
	char *root = tu_mkdtemp();

	put(root, ETC "/u.service", "[Service]\n"
	    "User=ml\n"
	    "Group=ml\n"
	    "PassEnvironment=LANG TERM\n"
	    "Environment=A=1 B=2 C=3 TERM=vt100\n"
	    "EnvironmentFile=/env\n"
	    "UnsetEnvironment=A B=9 C=3 1BAD\n");
	put(root, "/env", "A=file\n");
	load_ok(&u, root, "u");
	ck_assert_str_eq(u.user, "ml");
	ck_assert_str_eq(u.group, "ml");
	ck_assert_ptr_null(unitenv_get(&u, "A"));
	ck_assert_str_eq(val(&u, "B"), "2");
	ck_assert_ptr_null(unitenv_get(&u, "C"));
	ck_assert_str_eq(val(&u, "TERM"), "vt100");
	v = unitenv_get(&u, "HOME");
	ck_assert_ptr_null(v->now.value);
	ck_assert_str_eq(v->now.unknown, "systemd sets it from the passwd "
	    "entry of User=ml");
	v = unitenv_get(&u, "LANG");
	ck_assert_ptr_null(v->now.value);
	ck_assert_str_eq(v->now.directive, "PassEnvironment");
	ck_assert_uint_eq(u.nunset, 3);
	ck_assert(has(u.warnings, u.nwarnings, ETC "/u.service:7: invalid "
	    "environment name for UnsetEnvironment, ignoring: 1BAD"));
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_exec)
{
	static const struct {
		const char	*line;
		const char	*path;
		int		 python;
		const char	*argv1;
	} cases[] = {
		{ "/usr/bin/python3 -m vllm", "/usr/bin/python3", 1, "-m" },
		{ "-@/usr/bin/python3.11 worker x", "/usr/bin/python3.11", 1,
		    "x" },
		{ "!!/opt/venv/bin/python serve", "/opt/venv/bin/python", 1,
		    "serve" },
		{ ":+\"/opt/my app/run\" 'a b'", "/opt/my app/run", 0,
		    "a b" },
		{ "/usr/bin/env NCCL_PROTO=LL -u DROP python3 -u s.py",
		    "/usr/bin/python3", 1, "-u" },
		{ "env -i ONLY=1 /opt/py/bin/python3.12 m",
		    "/opt/py/bin/python3.12", 1, "m" },
		{ "python3 -c x ; /bin/other", "/usr/bin/python3", 1, "-c" },
		{ "/usr/bin/pythonista", "/usr/bin/pythonista", 0, NULL },
	};
	struct unitenv u;
	char *root = tu_mkdtemp(), *text;
	const struct unitenv_var *v;

	put(root, "/usr/bin/python3", "");
	text = xasprintf("[Service]\nEnvironment=DROP=1 KEEP=1\n"
	    "ExecStart=%s\n", cases[_i].line);
	put(root, ETC "/x.service", text);
	free(text);
	load_ok(&u, root, "x");
	ck_assert_ptr_nonnull(u.exec);
	ck_assert_str_eq(u.exec->path, cases[_i].path);
	ck_assert_int_eq(u.exec->python, cases[_i].python);
	if (cases[_i].argv1 == NULL)
		ck_assert_uint_eq(u.exec->argc, 0);
	else
		ck_assert_str_eq(u.exec->argv[0], cases[_i].argv1);
	if (_i == 4) {
		ck_assert_str_eq(u.exec->command, "/usr/bin/env");
		ck_assert_ptr_null(unitenv_get(&u, "DROP"));
		v = unitenv_get(&u, "NCCL_PROTO");
		ck_assert_str_eq(v->now.value, "LL");
		ck_assert_str_eq(v->now.directive, "ExecStart");
		ck_assert_str_eq(val(&u, "KEEP"), "1");
	}
	if (_i == 5) {
		ck_assert_ptr_null(unitenv_get(&u, "KEEP"));
		ck_assert_str_eq(val(&u, "ONLY"), "1");
	}
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_exec_many)
{
	struct unitenv u;
	char *root = tu_mkdtemp();

	put(root, ETC "/m.service", "[Service]\nExecStart=/bin/a\n"
	    "ExecStart=/bin/b\n");
	load_ok(&u, root, "m");
	ck_assert_uint_eq(u.nerrors, 1);
	ck_assert_str_eq(u.errors[0], ETC "/m.service:2: service has more "
	    "than one ExecStart= setting, which is only allowed for "
	    "Type=oneshot services: the unit fails to load");
	unitenv_release(&u);
	put(root, ETC "/m.service.d/t.conf", "[Service]\nType=oneshot\n");
	load_ok(&u, root, "m");
	ck_assert_uint_eq(u.nerrors, 0);
	ck_assert_str_eq(u.exec->path, "/bin/a");
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_bounds)
{
	struct unitenv u;
	struct err err = ENVCTL_ERR_INIT;
	char *root = tu_mkdtemp(), *big, *rel;
	int i;

	big = xmalloc(UNITENV_FILE_MAX + 2);
	memset(big, '#', UNITENV_FILE_MAX + 1);
	big[UNITENV_FILE_MAX + 1] = '\0';
	put(root, ETC "/big.service", big);
	ck_assert_int_eq(unitenv_load(&u, root, "big", NULL, &err),
	    ENVCTL_ETOOBIG);
	ck_assert_str_eq(err.msg, "'" ETC "/big.service' is larger than "
	    "1048576 bytes");
	err_release(&err);
	unitenv_release(&u);
	/* Exactly the cap is read. */
	big[UNITENV_FILE_MAX] = '\0';
	put(root, ETC "/cap.service", big);
	load_ok(&u, root, "cap");
	unitenv_release(&u);
	/* A big environment file is as fatal. */
	big[UNITENV_FILE_MAX] = '#';
	put(root, "/big.env", big);
	put(root, ETC "/be.service", "[Service]\nEnvironmentFile=-/big.env\n");
	ck_assert_int_eq(unitenv_load(&u, root, "be", NULL, &err),
	    ENVCTL_ETOOBIG);
	err_release(&err);
	unitenv_release(&u);
	free(big);
	/* More files than the cap. */
	for (i = 0; i < UNITENV_FILES_MAX + 1; i++) {
		rel = xasprintf(ETC "/many.service.d/%03d.conf", i);
		put(root, rel, "[Service]\n");
		free(rel);
	}
	put(root, ETC "/many.service", SVC);
	ck_assert_int_eq(unitenv_load(&u, root, "many", NULL, &err),
	    ENVCTL_ETOOBIG);
	ck_assert_str_eq(err.msg, "unit 'many.service' needs more than 64 "
	    "files");
	err_release(&err);
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_json)
{
	struct unitenv u;
	char *root = tu_mkdtemp(), *s;
	char *names[] = { "NCCL_PROTO", "NOT_SET" };
	json_t *j;

	put(root, ETC "/vllm.service", SVC "User=ml\n"
	    "Environment=NCCL_PROTO=LL PYTHONPATH=/opt/p SECRET=x\n");
	put(root, ETC "/vllm.service.d/nccl.conf", "[Service]\n\n"
	    "Environment=NCCL_PROTO=Simple\n");
	load_ok(&u, root, "vllm");
	j = unitenv_json(&u, names, 2);
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	ck_assert_str_eq(s, "{\"dropins\":[\"" ETC "/vllm.service.d/nccl.conf"
	    "\"],\"env\":{"
	    "\"HOME\":{\"directive\":\"User\",\"from\":\"" ETC "/vllm.service:"
	    "0\",\"overrides\":[],\"unknown\":\"systemd sets it from the "
	    "passwd entry of User=ml\",\"value\":null},"
	    "\"NCCL_CONF_FILE\":{\"directive\":null,\"from\":null,"
	    "\"overrides\":[],\"unknown\":null,\"value\":null},"
	    "\"NCCL_PROTO\":{\"directive\":\"Environment\",\"from\":\"" ETC
	    "/vllm.service.d/nccl.conf:3\",\"overrides\":[{\"directive\":"
	    "\"Environment\",\"from\":\"" ETC "/vllm.service:4\",\"unknown\":"
	    "null,\"value\":\"LL\"}],\"unknown\":null,\"value\":\"Simple\"},"
	    "\"NOT_SET\":{\"directive\":null,\"from\":null,\"overrides\":[],"
	    "\"unknown\":null,\"value\":null},"
	    "\"PYTHONHOME\":{\"directive\":null,\"from\":null,\"overrides\":[],"
	    "\"unknown\":null,\"value\":null},"
	    "\"PYTHONNOUSERSITE\":{\"directive\":null,\"from\":null,"
	    "\"overrides\":[],\"unknown\":null,\"value\":null},"
	    "\"PYTHONPATH\":{\"directive\":\"Environment\",\"from\":\"" ETC
	    "/vllm.service:4\",\"overrides\":[],\"unknown\":null,\"value\":"
	    "\"/opt/p\"},"
	    "\"PYTHONSAFEPATH\":{\"directive\":null,\"from\":null,"
	    "\"overrides\":[],\"unknown\":null,\"value\":null},"
	    "\"PYTHONSTARTUP\":{\"directive\":null,\"from\":null,"
	    "\"overrides\":[],\"unknown\":null,\"value\":null},"
	    "\"PYTHONUSERBASE\":{\"directive\":null,\"from\":null,"
	    "\"overrides\":[],\"unknown\":null,\"value\":null}},"
	    "\"errors\":[],\"exec\":{\"argv\":[\"-m\",\"app\"],\"command\":"
	    "\"/usr/bin/python3\",\"path\":\"/usr/bin/python3\",\"python\":"
	    "true},\"found\":true,\"fragment\":\"" ETC "/vllm.service\","
	    "\"group\":null,\"masked\":false,\"systemctl\":{\"agrees\":null,"
	    "\"checked\":false,\"differences\":[],\"reason\":null},\"unit\":"
	    "\"vllm.service\",\"unset\":[],\"user\":\"ml\",\"warnings\":[]}");
	free(s);
	json_decref(j);
	/* Not checked: the reason says why. */
	ck_assert_int_eq(unitenv_systemctl(&u, NULL), 0);
	ck_assert_int_eq(u.sc_checked, 0);
	ck_assert_ptr_nonnull(strstr(u.sc_reason, "not the running system"));
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

/*
 * Recorded `systemctl show --property=Environment,EnvironmentFiles,
 * ExecStart,User,FragmentPath,DropInPaths,LoadState -- vllm.service`
 * output: the format of systemd 252's systemctl (src/systemctl/
 * systemctl-show.c: strv properties shell-quoted and space-separated,
 * EnvironmentFiles one line each as "PATH (ignore_errors=yes|no)",
 * ExecStart as "{ path=... ; argv[]=... ; ... }").
 */
static const char show_rec[] =
    "User=ml\n"
    "Environment=NCCL_PROTO=LL \"MSG=a b\" \"D=\\$x\"\n"
    "EnvironmentFiles=/etc/default/vllm (ignore_errors=no)\n"
    "EnvironmentFiles=/etc/vllm.env (ignore_errors=yes)\n"
    "ExecStart={ path=/usr/bin/python3 ; argv[]=/usr/bin/python3 -m vllm ;"
    " ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ;"
    " code=(null) ; status=0/0 }\n"
    "FragmentPath=/etc/systemd/system/vllm.service\n"
    "DropInPaths=/etc/systemd/system/vllm.service.d/nccl.conf\n"
    "LoadState=loaded\n";

START_TEST(test_systemctl_parse)
{
	struct unitenv u;
	struct err err = ENVCTL_ERR_INIT;
	char *root = tu_mkdtemp();

	put(root, ETC "/vllm.service", "[Service]\nUser=ml\n"
	    "Environment=NCCL_PROTO=LL \"MSG=a b\" D=$x\n"
	    "EnvironmentFile=/etc/default/vllm\n"
	    "EnvironmentFile=-/etc/vllm.env\n"
	    "ExecStart=/usr/bin/python3 -m vllm\n");
	put(root, ETC "/vllm.service.d/nccl.conf", "[Service]\n");
	put(root, "/etc/default/vllm", "X=1\n");
	load_ok(&u, root, "vllm");
	ck_assert_int_eq(unitenv_systemctl_parse(&u, show_rec,
	    strlen(show_rec), &err), 0);
	ck_assert_int_eq(u.sc_checked, 1);
	ck_assert_msg(u.sc_agrees, "%s", u.sc_ndiffs > 0 ? u.sc_diffs[0] :
	    "");
	unitenv_release(&u);
	/* Differences are named. */
	put(root, ETC "/vllm.service.d/nccl.conf",
	    "[Service]\nEnvironment=NCCL_PROTO=Simple\nUser=other\n");
	load_ok(&u, root, "vllm");
	ck_assert_int_eq(unitenv_systemctl_parse(&u, show_rec,
	    strlen(show_rec), &err), 0);
	ck_assert_int_eq(u.sc_agrees, 0);
	ck_assert_uint_eq(u.sc_ndiffs, 2);
	ck_assert_str_eq(u.sc_diffs[0], "User: envctl reads 'other', systemd "
	    "has 'ml'");
	ck_assert_str_eq(u.sc_diffs[1], "Environment: envctl reads "
	    "'NCCL_PROTO=Simple MSG=a b D=$x', systemd has 'NCCL_PROTO=LL "
	    "MSG=a b D=$x'");
	ck_assert_int_eq(unitenv_systemctl_parse(&u, "garbage\n", 8, &err),
	    ENVCTL_EPARSE);
	ck_assert_str_eq(err.msg, "systemctl show:1: not PROPERTY=VALUE: "
	    "'garbage'");
	err_release(&err);
	unitenv_release(&u);
	/* Here: systemd is not PID 1 (or it is, and then it is asked). */
	load_ok(&u, "", "envctl-test-none");
	ck_assert_int_eq(unitenv_systemctl(&u, &err), 0);
	if (access("/run/systemd/system", F_OK) != 0) {
		ck_assert_int_eq(u.sc_checked, 0);
		ck_assert_str_eq(u.sc_reason, "systemd is not running on this "
		    "host (no /run/systemd/system)");
	} else
		ck_assert_int_eq(u.sc_checked, 1);
	unitenv_release(&u);
	tu_rmtree(root);
	free(root);
}
END_TEST

START_TEST(test_privileged)
{
	struct unitenv u;
	struct policy pol;
	struct err err = ENVCTL_ERR_INIT;
	char *root = tu_mkdtemp(), *conf, *want;

	memset(&pol, 0, sizeof(pol));
	pol.privileged = 1;
	pol.file = "/etc/envctl/agent.conf";
	put(root, ETC "/v.service", "[Service]\nEnvironmentFile=/v.env\n"
	    "Environment=A=1\n");
	put(root, "/v.env", "SECRET=x\n");
	ck_assert_int_eq(unitenv_load(&u, root, "v", &pol, &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "service 'v.service' is not listed in "
	    "/etc/envctl/agent.conf: a privileged agent reads only the "
	    "services listed there (docs/security.md)");
	err_release(&err);
	unitenv_release(&u);
	/* Listed, but its environment file lies under /tmp. */
	conf = tu_writes(root, "agent.conf", "service v\n");
	ck_assert_int_eq(policy_load(&pol, 0, conf, &err), 0);
	pol.privileged = 1;
	ck_assert_int_eq(parse(&pol, "service v\n", 10, &err), 0);
	load_ok(&u, root, "v");
	ck_assert_str_eq(val(&u, "SECRET"), "x");
	unitenv_release(&u);
	ck_assert_int_eq(unitenv_load(&u, root, "v", &pol, &err), 0);
	ck_assert_str_eq(val(&u, "A"), "1");
	ck_assert_ptr_null(unitenv_get(&u, "SECRET"));
	ck_assert_uint_eq(u.nerrors, 1);
	want = xasprintf(ETC "/v.service:2: EnvironmentFile=/v.env: "
	    "environment file '%s/v.env': '/tmp' is writable by group or "
	    "others (mode 1777): a privileged agent reads a unit's "
	    "environment files only where only root can change them "
	    "(docs/security.md): the service fails to start", root);
	if (strncmp(root, "/tmp/", 5) == 0)
		ck_assert_str_eq(u.errors[0], want);
	free(want);
	unitenv_release(&u);
	policy_release(&pol);
	free(conf);
	tu_rmtree(root);
	free(root);
}
END_TEST

/* ---- systemd's own loader as the oracle ---- */

/* The ORDER_* names, in the order systemd-analyze parsed the files. */
static char *
oracle_order(const char *root, const char *unit, const char *test)
{
	static const char *const sa[] = { "/usr/bin/systemd-analyze",
	    "/bin/systemd-analyze" };
	char *argv[6], *envp[3], *rootopt, *p, *q;
	struct buf out = ENVCTL_BUF_INIT;
	struct tu_run r;
	size_t i;

	for (i = 0; i < 2 && access(sa[i], X_OK) != 0; i++)
		;
	if (i == 2) {
		tu_skip(test, "no systemd-analyze (apt-get install systemd)");
		return NULL;
	}
	rootopt = xasprintf("--root=%s", root);
	argv[0] = (char *)sa[i];
	argv[1] = "--offline=true";
	argv[2] = rootopt;
	argv[3] = "security";
	argv[4] = (char *)unit;
	argv[5] = NULL;
	envp[0] = "SYSTEMD_LOG_LEVEL=debug";
	envp[1] = "PATH=/usr/bin:/bin";
	envp[2] = NULL;
	tu_run(&r, argv, envp, NULL, 0);
	for (p = r.errout; (p = strstr(p, "Invalid environment assignment, "
	    "ignoring: ORDER_")) != NULL; p = q) {
		p += strlen("Invalid environment assignment, ignoring: ");
		q = p + strcspn(p, "\n");
		buf_addf(&out, "%.*s ", (int)(q - p), p);
	}
	if (out.len == 0)
		tu_skip(test, r.errout);
	tu_run_free(&r);
	free(rootopt);
	return out.len == 0 ? (buf_release(&out), NULL) : buf_detach(&out,
	    NULL);
}

/* The same from our warnings. */
static char *
our_order(const char *root, const char *unit)
{
	struct unitenv u;
	struct buf out = ENVCTL_BUF_INIT;
	const char *p;
	size_t i;

	load_ok(&u, root, unit);
	for (i = 0; i < u.nwarnings; i++)
		if ((p = strstr(u.warnings[i], "ignoring: ORDER_")) != NULL)
			buf_addf(&out, "%s ", p + strlen("ignoring: "));
	unitenv_release(&u);
	return buf_detach(&out, NULL);
}

START_TEST(test_oracle)
{
	char *root = tu_mkdtemp(), *theirs, *ours;

	put(root, USR "/o-p-q@.service",
	    "[Service]\nType=oneshot\nExecStart=/bin/true\n"
	    "Environment=ORDER_template\n");
	put(root, ETC "/o-p-q@i.service.d/50.conf",
	    "[Service]\nEnvironment=ORDER_etc_instance_50\n");
	put(root, RUN "/o-p-q@i.service.d/50.conf",
	    "[Service]\nEnvironment=ORDER_run_instance_50_masked\n");
	put(root, USR "/o-p-q@.service.d/10.conf",
	    "[Service]\nEnvironment=ORDER_usr_template_10\n");
	put(root, LIB "/o-p-@i.service.d/20.conf",
	    "[Service]\nEnvironment=ORDER_lib_dash_instance_20\n");
	put(root, ETC "/o-.service.d/05.conf",
	    "[Service]\nEnvironment=ORDER_etc_dash_05\n");
	put(root, ETC "/o-p-.service.d/05.conf",
	    "[Service]\nEnvironment=ORDER_etc_dash2_05\n");
	put(root, ETC "/service.d/05.conf",
	    "[Service]\nEnvironment=ORDER_etc_type_05\n");
	put(root, USR "/service.d/99.conf",
	    "[Service]\nEnvironment=ORDER_usr_type_99\n");
	put(root, RUN "/service.d/10.conf",
	    "[Service]\nEnvironment=ORDER_run_type_10_masked\n");
	put(root, "/usr/local/lib/systemd/system/o-p-q@i.service.d/30.conf",
	    "[Service]\nEnvironment=ORDER_local_instance_30 "
	    "\"ORDER_quoted x\"\n");
	link_to(root, ETC "/o-p-q@i.service.d/40.conf", "/dev/null");
	put(root, USR "/o-p-q@i.service.d/40.conf",
	    "[Service]\nEnvironment=ORDER_usr_40_masked\n");
	if ((theirs = oracle_order(root, "o-p-q@i.service",
	    "oracle")) != NULL) {
		ours = our_order(root, "o-p-q@i.service");
		ck_assert_str_eq(ours, theirs);
		free(ours);
		free(theirs);
	}
	/* A plain unit with a fragment in /etc beating /usr/lib's. */
	put(root, ETC "/plain-x.service", "[Service]\nExecStart=/bin/true\n"
	    "Environment=ORDER_etc_fragment\n");
	put(root, USR "/plain-x.service", "[Service]\nExecStart=/bin/true\n"
	    "Environment=ORDER_usr_fragment_masked\n");
	put(root, USR "/plain-.service.d/01.conf",
	    "[Service]\nEnvironment=ORDER_usr_dash_01\n");
	if ((theirs = oracle_order(root, "plain-x.service",
	    "oracle")) != NULL) {
		ours = our_order(root, "plain-x.service");
		ck_assert_str_eq(ours, theirs);
		free(ours);
		free(theirs);
	}
	tu_rmtree(root);
	free(root);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("unitenv");
	TCase *tc = tcase_create("unitenv");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_priority);
	tcase_add_test(tc, test_dropins);
	tcase_add_test(tc, test_template);
	tcase_add_test(tc, test_quoting);
	tcase_add_test(tc, test_reset);
	tcase_add_test(tc, test_envfile);
	tcase_add_test(tc, test_unset_home);
	tcase_add_loop_test(tc, test_exec, 0, 8);
	tcase_add_test(tc, test_exec_many);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_systemctl_parse);
	tcase_add_test(tc, test_privileged);
	tcase_add_test(tc, test_oracle);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
