/* check_playbook.c - playbook loading, validation and lookup. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/inventory.h"
#include "controller/playbook.h"
#include "controller/yamldoc.h"
#include "testutil.h"

/* Loads text as pb.yaml in the temp dir; returns the code, err filled. */
static int
load(const char *text, struct playbook **pb, struct err *err)
{
	char *p = tu_writes(tu_dir, "pb.yaml", text);
	int r = playbook_load(pb, p, err);

	free(p);
	return r;
}

/* Asserts that err's chain holds a line containing want. */
static void
assert_err(const struct err *err, const char *want)
{
	struct buf b = ENVCTL_BUF_INIT;

	err_format(err, &b);
	ck_assert_msg(strstr(b.data, want) != NULL, "want '%s' in:\n%s", want,
	    b.data);
	buf_release(&b);
}

START_TEST(test_default_playbook)
{
	char *p = tu_srcpath("playbooks/cuda13-nccl.yaml");
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;
	static const char *const names[] = { "CUDA_HOME",
		"TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH",
		"NCCL_PROTO", "NCCL_ALGO",
		"NCCL_P2P_LEVEL", "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE",
		"NCCL_NTHREADS" };
	size_t i;

	ck_assert_int_eq(playbook_load(&pb, p, &err), 0);
	ck_assert_str_eq(pb->name, "cuda13-nccl");
	ck_assert_int_eq(pb->mode, ENVCTL_MODE_FILE);
	ck_assert_int_eq(pb->policy, ENVCTL_POLICY_SETDEFAULT);
	ck_assert_ptr_null(pb->target);
	ck_assert_str_eq(pb->interpreter, "python3");
	ck_assert_uint_eq(pb->nenv, 9);
	for (i = 0; i < 9; i++)
		ck_assert_str_eq(pb->env[i].name, names[i]);
	ck_assert_int_eq(pb->env[0].check, ENVCTL_CHECK_CUDA_TOOLKIT);
	ck_assert_int_eq(pb->env[1].check, ENVCTL_CHECK_PTXAS);
	ck_assert_int_eq(pb->env[2].check, ENVCTL_CHECK_PTXAS);
	ck_assert_int_eq(pb->cuda_major, 13);
	ck_assert_int_eq(pb->env[3].check, ENVCTL_CHECK_NONE);
	ck_assert_str_eq(pb->env[0].value->str, "{{ cuda_home }}");
	ck_assert_ptr_nonnull(strstr(pb->template.data, "{{ envctl_env }}"));
	ck_assert_ptr_nonnull(strstr(pb->template.data, "apport_python_hook"));
	ck_assert_str_eq(pb->backup_dir, "/var/backups/envctl");
	ck_assert_int_eq(pb->backup_keep, 10);
	ck_assert_int_eq(pb->create_mode, 0644);
	playbook_free(pb);
	free(p);
}
END_TEST

START_TEST(test_minimal_block_defaults)
{
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;

	ck_assert_int_eq(load("env:\n  A: x\n  B:\n    value: '{{ b }}'\n"
	    "    secret: yes\n    comment: the b\n", &pb, &err), 0);
	ck_assert_str_eq(pb->name, "pb");
	ck_assert_int_eq(pb->mode, ENVCTL_MODE_BLOCK);
	ck_assert_uint_eq(pb->nenv, 2);
	ck_assert_int_eq(pb->env[1].secret, 1);
	ck_assert_str_eq(pb->env[1].comment, "the b");
	ck_assert_int_eq(pb->backup_keep, ENVCTL_BACKUP_KEEP);
	playbook_free(pb);
}
END_TEST

START_TEST(test_unknown_key_suggests)
{
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;

	ck_assert_int_eq(load("env:\n  A: x\npolicyy: override\n", &pb, &err),
	    ENVCTL_EINVALID);
	ck_assert_ptr_null(pb);
	assert_err(&err, "pb.yaml:3:1: unknown key 'policyy' in the playbook "
	    "(did you mean 'policy'?)");
	err_release(&err);
}
END_TEST

START_TEST(test_every_problem_reported)
{
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;

	ck_assert_int_eq(load(
	    "mode: blok\n"
	    "policy: 3\n"
	    "env:\n"
	    "  1BAD: x\n"
	    "  GOOD:\n"
	    "    value: v\n"
	    "    check: directory\n"
	    "    secret: maybe\n"
	    "  LIST: [a]\n"
	    "  MULTI:\n"
	    "    value: v\n"
	    "    comment: \"two\\nlines\"\n"
	    "backup:\n"
	    "  dir: relative/dir\n"
	    "  keep: 0\n"
	    "create:\n"
	    "  mode: \"0999\"\n", &pb, &err), ENVCTL_EINVALID);
	assert_err(&err, "pb.yaml:1:7: invalid mode 'blok' (expected one of "
	    "block, file; did you mean 'block'?)");
	assert_err(&err, "pb.yaml:2:9: invalid policy '3'");
	assert_err(&err, "pb.yaml:4:3: invalid environment variable name "
	    "'1BAD'");
	assert_err(&err, "pb.yaml:7:12: invalid check 'directory'");
	assert_err(&err, "pb.yaml:8:13: 'secret' must be true or false, not "
	    "a string");
	assert_err(&err, "pb.yaml:9:9: value of 'LIST' must be a string, not "
	    "a list");
	assert_err(&err, "pb.yaml:12:14: 'comment' must be one line");
	assert_err(&err, "pb.yaml:14:8: backup 'dir' must be an absolute "
	    "path, not 'relative/dir'");
	assert_err(&err, "pb.yaml:15:9: backup 'keep' must be an integer from "
	    "1 to 10000, not '0'");
	assert_err(&err, "pb.yaml:17:9: create 'mode' must be an octal file "
	    "mode");
	ck_assert_int_eq(err_count(&err), 10);
	err_release(&err);
}
END_TEST

START_TEST(test_create_mode_is_octal)
{
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;
	static const char *const forms[] = { "\"0644\"", "0644", "644",
		"'640'" };
	static const int want[] = { 0644, 0644, 0644, 0640 };
	char *text;
	size_t i;

	for (i = 0; i < 4; i++) {
		text = xasprintf("env: {A: x}\ncreate:\n  mode: %s\n",
		    forms[i]);
		ck_assert_int_eq(load(text, &pb, &err), 0);
		ck_assert_int_eq(pb->create_mode, want[i]);
		playbook_free(pb);
		free(text);
	}
	ck_assert_int_eq(load("env: {A: x}\ncreate:\n  mode: 0x1a4\n", &pb,
	    &err), ENVCTL_EINVALID);
	assert_err(&err, "create 'mode' must be an octal file mode");
	err_release(&err);
	ck_assert_int_eq(load("name: ''\nenv: {A: x}\n", &pb, &err),
	    ENVCTL_EINVALID);
	assert_err(&err, "pb.yaml:1:7: playbook name '' may only hold");
	err_release(&err);
}
END_TEST

START_TEST(test_template_rules)
{
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;

	ck_assert_int_eq(load("mode: file\nenv: {A: x}\n", &pb, &err),
	    ENVCTL_EINVALID);
	assert_err(&err, "'mode: file' needs a 'template'");
	err_release(&err);
	ck_assert_int_eq(load("template: t.tmpl\nenv: {A: x}\n", &pb, &err),
	    ENVCTL_EINVALID);
	assert_err(&err, "pb.yaml:1:11: 'template' is only used with "
	    "'mode: file'");
	err_release(&err);
	ck_assert_int_eq(load("mode: file\ntemplate: missing.tmpl\n"
	    "env: {A: x}\n", &pb, &err), ENVCTL_ENOTFOUND);
	assert_err(&err, "pb.yaml:2:11: template: cannot open '");
	assert_err(&err, "missing.tmpl': No such file or directory");
	err_release(&err);
	free(tu_writes(tu_dir, "t.tmpl", "# hi\n{{ envctl_env }}\n"));
	ck_assert_int_eq(load("mode: file\ntemplate: t.tmpl\nenv: {A: x}\n",
	    &pb, &err), 0);
	ck_assert_str_eq(pb->template.data, "# hi\n{{ envctl_env }}\n");
	playbook_free(pb);
}
END_TEST

START_TEST(test_structure_errors)
{
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;

	ck_assert_int_eq(load("- a\n- b\n", &pb, &err), ENVCTL_EINVALID);
	assert_err(&err, "pb.yaml:1:1: a playbook must be a mapping, not a "
	    "list");
	err_release(&err);
	ck_assert_int_eq(load("name: x\n", &pb, &err), ENVCTL_EINVALID);
	assert_err(&err, "the playbook has no 'env'");
	err_release(&err);
	ck_assert_int_eq(load("env:\n\tA: x\n", &pb, &err), ENVCTL_EPARSE);
	assert_err(&err, "pb.yaml:2:1: ");
	assert_err(&err, "tab");
	err_release(&err);
	ck_assert_int_eq(load("name: 'unclosed\nenv: {}\n", &pb, &err),
	    ENVCTL_EPARSE);
	assert_err(&err, "pb.yaml:");
	err_release(&err);
	ck_assert_int_eq(load("interpreter: '{{ py }}'\nenv: {A: x}\n", &pb,
	    &err), ENVCTL_EUNSUPPORTED);
	assert_err(&err, "pb.yaml:1:14: 'interpreter' cannot be templated");
	err_release(&err);
	ck_assert_int_eq(load("path: site.py\nenv: {A: x}\n", &pb, &err),
	    ENVCTL_EINVALID);
	assert_err(&err, "'path' must be 'auto' or an absolute path");
	err_release(&err);
}
END_TEST

/* cuda: a major version, quoted or not; the CUDA check kinds. */
START_TEST(test_cuda_key)
{
	static const char *const bad[] = { "\"13.0\"", "013", "0", "\"\"",
		"130", "thirteen", "[13]" };
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;
	char *y;
	size_t i;

	ck_assert_int_eq(load("cuda: \"13\"\nenv:\n  H:\n    value: /c\n"
	    "    check: cuda-toolkit\n  P:\n    value: /c/bin/ptxas\n"
	    "    check: ptxas\n", &pb, &err), 0);
	ck_assert_int_eq(pb->cuda_major, 13);
	ck_assert_int_eq(pb->env[0].check, ENVCTL_CHECK_CUDA_TOOLKIT);
	ck_assert_int_eq(pb->env[1].check, ENVCTL_CHECK_PTXAS);
	ck_assert_str_eq(playbook_check_name(pb->env[0].check),
	    "cuda-toolkit");
	ck_assert_str_eq(playbook_check_name(pb->env[1].check), "ptxas");
	playbook_free(pb);
	ck_assert_int_eq(load("cuda: 12\nenv: {A: x}\n", &pb, &err), 0);
	ck_assert_int_eq(pb->cuda_major, 12);
	playbook_free(pb);
	ck_assert_int_eq(load("env: {A: x}\n", &pb, &err), 0);
	ck_assert_int_eq(pb->cuda_major, 0);
	playbook_free(pb);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		y = xasprintf("cuda: %s\nenv: {A: x}\n", bad[i]);
		ck_assert_int_eq(load(y, &pb, &err), ENVCTL_EINVALID);
		assert_err(&err, "pb.yaml:1:7: 'cuda' must be ");
		err_release(&err);
		free(y);
	}
	ck_assert_int_eq(load("env:\n  A:\n    value: x\n    check: ptxa\n",
	    &pb, &err), ENVCTL_EINVALID);
	assert_err(&err, "invalid check 'ptxa' (expected one of none, dir, "
	    "file, executable, cuda-toolkit, ptxas; did you mean 'ptxas'?)");
	err_release(&err);
}
END_TEST

/*
 * interpreters: a list (duplicates once), or one string; the inventory's
 * list wins over it, and 'interpreter' with it is refused.
 */
START_TEST(test_interpreters)
{
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;
	struct host h;
	const char *const *in;
	const char *mine[] = { "/opt/x/bin/python3" };
	size_t n;

	ck_assert_int_eq(load("interpreters: [python3, /opt/v/bin/python3, "
	    "python3]\nenv: {A: x}\n", &pb, &err), 0);
	memset(&h, 0, sizeof(h));
	in = playbook_interpreters(pb, &h, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(in[0], "python3");
	ck_assert_str_eq(in[1], "/opt/v/bin/python3");
	h.interpreters = mine;
	h.ninterpreters = 1;
	in = playbook_interpreters(pb, &h, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(in[0], "/opt/x/bin/python3");
	playbook_free(pb);

	ck_assert_int_eq(load("env: {A: x}\n", &pb, &err), 0);
	in = playbook_interpreters(pb, NULL, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(in[0], "python3");
	playbook_free(pb);

	ck_assert_int_eq(load("interpreter: python3\ninterpreters: [a]\n"
	    "env: {A: x}\n", &pb, &err), ENVCTL_EINVALID);
	assert_err(&err, "pb.yaml:2:15: give 'interpreter' or 'interpreters', "
	    "not both");
	err_release(&err);
	ck_assert_int_eq(load("interpreters: []\nenv: {A: x}\n", &pb,
	    &err), ENVCTL_EINVALID);
	assert_err(&err, "pb.yaml:1:15: 'interpreters' must list from 1 to 16 "
	    "entries, not 0");
	err_release(&err);
	ck_assert_int_eq(load("interpreters: [a, '{{ b }}', {c: 1}]\n"
	    "env: {A: x}\n", &pb, &err), ENVCTL_EUNSUPPORTED);
	assert_err(&err, "pb.yaml:1:19: 'interpreters' cannot be templated");
	assert_err(&err, "pb.yaml:1:30: 'interpreters' entries must be "
	    "non-empty strings, not a mapping");
	err_release(&err);
}
END_TEST

START_TEST(test_find)
{
	struct err err = ENVCTL_ERR_INIT;
	char *out, *want;

	ck_assert_int_eq(playbook_find(&out, "x/pb.yaml", "/base", &err), 0);
	ck_assert_str_eq(out, "/base/x/pb.yaml");
	free(out);
	ck_assert_int_eq(playbook_find(&out, "/abs/pb.yml", "/base", &err), 0);
	ck_assert_str_eq(out, "/abs/pb.yml");
	free(out);
	free(tu_writes(tu_dir, "mine.yaml", "env: {A: x}\n"));
	setenv("ENVCTL_PLAYBOOK_PATH", tu_dir, 1);
	ck_assert_int_eq(playbook_find(&out, "mine", NULL, &err), 0);
	want = xasprintf("%s/mine.yaml", tu_dir);
	ck_assert_str_eq(out, want);
	free(out);
	free(want);
	ck_assert_int_eq(playbook_find(&out, "nosuch", NULL, &err),
	    ENVCTL_ENOTFOUND);
	assert_err(&err, "playbook 'nosuch' not found (looked in ");
	assert_err(&err, tu_dir);
	err_release(&err);
	unsetenv("ENVCTL_PLAYBOOK_PATH");
}
END_TEST

/* An explicit path with '..' or a NUL byte is refused where it is. */
/* rule: on an env entry: the three forms, and each way to get it wrong. */
START_TEST(test_rule_key)
{
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;
	const struct valrules_custom *cr;

	ck_assert_int_eq(load("env:\n"
	    "  A:\n    value: x\n    rule:\n      allowed: [x, 'y', 3]\n"
	    "      case: insensitive\n"
	    "  B:\n    value: '4'\n    rule: { min: 1, max: 8, severity: "
	    "warning }\n"
	    "  C:\n    value: eth0\n    rule: { pattern: 'eth[0-9]+' }\n"
	    "  D: plain\n", &pb, &err), 0);
	cr = pb->env[0].rule;
	ck_assert_int_eq(cr->kind, ENVCTL_VALRULE_ALLOWED);
	ck_assert_uint_eq(cr->nallowed, 3);
	ck_assert_str_eq(cr->allowed[2], "3");
	ck_assert_int_eq(cr->icase, 1);
	ck_assert_int_eq(cr->severity, ENVCTL_VALRULE_ERROR);
	ck_assert_ptr_nonnull(strstr(cr->where, "pb.yaml:5:7"));
	cr = pb->env[1].rule;
	ck_assert_int_eq(cr->kind, ENVCTL_VALRULE_RANGE);
	ck_assert(cr->has_min && cr->has_max && cr->min == 1 && cr->max == 8);
	ck_assert_int_eq(cr->severity, ENVCTL_VALRULE_WARNING);
	cr = pb->env[2].rule;
	ck_assert_int_eq(cr->kind, ENVCTL_VALRULE_PATTERN);
	ck_assert_int_eq(cr->compiled, 1);
	ck_assert_ptr_null(pb->env[3].rule);
	playbook_free(pb);

	ck_assert_int_eq(load("env:\n"
	    "  A:\n    value: x\n    rule: [x]\n"
	    "  B:\n    value: x\n    rule: { allowed: [x], min: 1 }\n"
	    "  C:\n    value: x\n    rule: { pattern: 'a(' }\n"
	    "  D:\n    value: x\n    rule: { min: 9, max: 2 }\n"
	    "  E:\n    value: x\n    rule: { allowd: [x] }\n"
	    "  F:\n    value: x\n    rule: { min: one }\n"
	    "  G:\n    value: x\n    rule: { allowed: [] }\n"
	    "  H:\n    value: x\n    rule: { min: 1, case: insensitive }\n"
	    "  I:\n    value: x\n    rule: { allowed: [x], severity: fatal "
	    "}\n"
	    "  J:\n    value: x\n    rule: {}\n", &pb, &err),
	    ENVCTL_EINVALID);
	assert_err(&err, "pb.yaml:4:11: 'rule' of 'A' must be a mapping");
	assert_err(&err, "pb.yaml:7:11: the rule of 'B' needs exactly one "
	    "of 'allowed', 'min'/'max' or 'pattern'");
	assert_err(&err, "pb.yaml:10:22: invalid pattern 'a(': ");
	assert_err(&err, "pb.yaml:13:26: rule 'max' 2 is below 'min' 9");
	assert_err(&err, "pb.yaml:16:13: unknown key 'allowd' in a rule "
	    "(did you mean 'allowed'?)");
	assert_err(&err, "pb.yaml:19:18: rule 'min' must be an integer, not "
	    "one");
	assert_err(&err, "pb.yaml:22:22: 'allowed' must list from 1 to 256 "
	    "values, not 0");
	assert_err(&err, "pb.yaml:25:27: 'case' goes with 'allowed' or "
	    "'pattern'");
	assert_err(&err, "pb.yaml:28:37: invalid severity 'fatal' (expected "
	    "one of warning, error)");
	assert_err(&err, "pb.yaml:31:11: the rule of 'J' needs exactly one");
	/* E's misspelt key also leaves it without a rule. */
	ck_assert_int_eq(err_count(&err), 11);
	err_release(&err);
}
END_TEST

START_TEST(test_path_refused)
{
	static const struct {
		const char	*text;
		const char	*want;
	} cases[] = {
		{ "env: {A: x}\npath: /usr/lib/../../etc/shadow\n",
		  "pb.yaml:2:7: 'path' must not have a '..' component, not "
		  "'/usr/lib/../../etc/shadow'" },
		{ "env: {A: x}\npath: /usr/lib/python3/..\n",
		  "pb.yaml:2:7: 'path' must not have a '..' component" },
		{ "env: {A: x}\npath: \"/usr/lib/\\0/sitecustomize.py\"\n",
		  "pb.yaml:2:7: 'path' must not hold a NUL byte" },
		{ "env: {A: x}\npath: \"auto\\0\"\n",
		  "pb.yaml:2:7: 'path' must not hold a NUL byte" },
	};
	struct err err = ENVCTL_ERR_INIT;
	struct playbook *pb;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(load(cases[i].text, &pb, &err),
		    ENVCTL_EINVALID);
		assert_err(&err, cases[i].want);
		err_release(&err);
	}
	/* '..' inside a name is a name; auto stays auto. */
	ck_assert_int_eq(load("env: {A: x}\npath: /opt/a..b/x.py\n", &pb,
	    &err), 0);
	ck_assert_str_eq(pb->target, "/opt/a..b/x.py");
	playbook_free(pb);
	ck_assert_int_eq(load("env: {A: x}\npath: auto\n", &pb, &err), 0);
	ck_assert_ptr_null(pb->target);
	playbook_free(pb);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("playbook");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, tu_dir_setup, tu_dir_teardown);
	tcase_add_test(tc, test_default_playbook);
	tcase_add_test(tc, test_minimal_block_defaults);
	tcase_add_test(tc, test_unknown_key_suggests);
	tcase_add_test(tc, test_every_problem_reported);
	tcase_add_test(tc, test_create_mode_is_octal);
	tcase_add_test(tc, test_template_rules);
	tcase_add_test(tc, test_structure_errors);
	tcase_add_test(tc, test_cuda_key);
	tcase_add_test(tc, test_find);
	tcase_add_test(tc, test_interpreters);
	tcase_add_test(tc, test_path_refused);
	tcase_add_test(tc, test_rule_key);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
