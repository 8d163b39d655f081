/*
 * check_sshargs.c - controller/ssh/sshargs: ansible_ssh_common_args and the
 * proxy commands made of it.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/ssh/sshargs.h"

/* Parses args, which must succeed. */
static void
parse_ok(struct ssh_args *a, const char *args)
{
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_msg(sshargs_parse(a, args, &err) == 0, "%s: %s", args,
	    err.msg != NULL ? err.msg : "");
	err_release(&err);
}

/* Parses args, which must fail with code and a message holding words. */
static void
parse_fails(const char *args, int code, const char *words)
{
	struct err err = ENVCTL_ERR_INIT;
	struct ssh_args a;

	ck_assert_int_eq(sshargs_parse(&a, args, &err), code);
	ck_assert_int_eq(err.code, code);
	ck_assert_msg(strstr(err.msg, words) != NULL, "%s: '%s' lacks '%s'",
	    args, err.msg, words);
	ck_assert_ptr_nonnull(strstr(err.msg, "ansible_ssh_common_args: "));
	sshargs_release(&a);
	err_release(&err);
}

START_TEST(test_proxies)
{
	struct ssh_args a;

	parse_ok(&a, NULL);
	ck_assert_ptr_null(a.proxy_command);
	ck_assert_ptr_null(a.proxy_jump);
	ck_assert_int_eq(a.alive_interval, -1);
	sshargs_release(&a);

	parse_ok(&a, "-o ProxyCommand=\"ssh -W %h:%p -q bastion\"");
	ck_assert_str_eq(a.proxy_command, "ssh -W %h:%p -q bastion");
	ck_assert_ptr_null(a.proxy_jump);
	sshargs_release(&a);

	parse_ok(&a, "  -oProxyCommand='nc -X connect -x proxy:3128 %h %p' ");
	ck_assert_str_eq(a.proxy_command, "nc -X connect -x proxy:3128 %h %p");
	sshargs_release(&a);

	parse_ok(&a, "-J ops@bastion:2222");
	ck_assert_str_eq(a.proxy_jump, "ops@bastion:2222");
	sshargs_release(&a);

	parse_ok(&a, "-Ja,b");
	ck_assert_str_eq(a.proxy_jump, "a,b");
	sshargs_release(&a);

	parse_ok(&a, "-o \"ProxyJump bastion\"");
	ck_assert_str_eq(a.proxy_jump, "bastion");
	sshargs_release(&a);

	/* As with ssh -o: the first of ProxyCommand and ProxyJump wins. */
	parse_ok(&a, "-J first -o ProxyCommand=\"ssh -W %h:%p second\" -J third");
	ck_assert_str_eq(a.proxy_jump, "first");
	ck_assert_ptr_null(a.proxy_command);
	sshargs_release(&a);

	parse_ok(&a, "-o ProxyCommand=none -J x");
	ck_assert_str_eq(a.proxy_command, "none");
	ck_assert_ptr_null(a.proxy_jump);
	sshargs_release(&a);

	/* shlex.split: backslashes and quotes joined into one word. */
	parse_ok(&a, "-o ProxyCommand=ssh\\ -W\\ %h:%p\\ \"b\"'1'");
	ck_assert_str_eq(a.proxy_command, "ssh -W %h:%p b1");
	sshargs_release(&a);
}
END_TEST

START_TEST(test_others)
{
	struct ssh_args a;

	parse_ok(&a, "-o UserKnownHostsFile=/etc/envctl/known_hosts "
	    "-o StrictHostKeyChecking=yes -o ServerAliveInterval=15 "
	    "-o serveralivecountmax=4 -o ServerAliveInterval=99");
	ck_assert_str_eq(a.known_hosts, "/etc/envctl/known_hosts");
	ck_assert_int_eq(a.alive_interval, 15);
	ck_assert_int_eq(a.alive_count, 4);
	ck_assert_ptr_null(a.proxy_jump);
	sshargs_release(&a);
}
END_TEST

START_TEST(test_refused)
{
	parse_fails("-o ControlMaster=auto -o ControlPersist=60s",
	    ENVCTL_EUNSUPPORTED, "ssh option 'ControlMaster' is not supported");
	parse_fails("-J b -C", ENVCTL_EUNSUPPORTED, "ssh option '-C'");
	parse_fails("-o StrictHostKeyChecking=no", ENVCTL_EUNSUPPORTED,
	    "StrictHostKeyChecking no is not supported");
	parse_fails("-J b bastion", ENVCTL_EUNSUPPORTED,
	    "'bastion' is not an ssh option");
	parse_fails("-o UserKnownHostsFile='/a /b'", ENVCTL_EUNSUPPORTED,
	    "several values");
	parse_fails("-o ProxyCommand=\"ssh -W %h:%p b", ENVCTL_EPARSE,
	    "no closing quotation (\")");
	parse_fails("-J b\\", ENVCTL_EPARSE, "last backslash");
	parse_fails("-J", ENVCTL_EINVALID, "'-J' needs an argument");
	parse_fails("-o ServerAliveInterval=often", ENVCTL_EINVALID,
	    "ServerAliveInterval wants a number");
	parse_fails("-o ProxyJump=", ENVCTL_EINVALID, "has no value");
}
END_TEST

static void
jump_is(const char *hops, const char *config, const char *want)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_int_eq(sshargs_jump_command(&b, hops, config, &err), 0);
	ck_assert_str_eq(b.data, want);
	buf_release(&b);
}

START_TEST(test_jump_command)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;

	jump_is("bastion", NULL, "ssh -o BatchMode=yes -W '[%h]:%p' bastion");
	jump_is("bastion", "/etc/envctl/ssh config",
	    "ssh -o BatchMode=yes -F '/etc/envctl/ssh config' -W '[%h]:%p' "
	    "bastion");
	jump_is("u@a:2200,ops@c:22", NULL, "ssh -o BatchMode=yes -l ops "
	    "-p 22 -J u@a:2200 -W '[%h]:%p' c");
	jump_is("ssh://ops@[fe80::1]:2222", NULL, "ssh -o BatchMode=yes "
	    "-l ops -p 2222 -W '[%h]:%p' fe80::1");
	ck_assert_int_eq(sshargs_jump_command(&b, "a,b:22x", NULL, &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "ProxyJump: 'b:22x' is not "
	    "[user@]host[:port]");
	err_release(&err);
	ck_assert_int_eq(sshargs_jump_command(&b, "a,", NULL, &err),
	    ENVCTL_EINVALID);
	err_release(&err);
	buf_release(&b);
}
END_TEST

static void
batch_is(const char *pc, const char *want)
{
	struct buf b = ENVCTL_BUF_INIT;

	sshargs_batch_command(&b, pc);
	ck_assert_str_eq(b.data, want);
	buf_release(&b);
}

static void
hop_is(const char *pc, const char *want)
{
	char *hop = sshargs_first_hop(pc);

	if (want == NULL)
		ck_assert_msg(hop == NULL, "%s: '%s'", pc, hop);
	else {
		ck_assert_msg(hop != NULL, "%s: no hop", pc);
		ck_assert_str_eq(hop, want);
	}
	free(hop);
}

START_TEST(test_commands)
{
	batch_is("ssh -W %h:%p bastion",
	    "ssh -o BatchMode=yes -W %h:%p bastion");
	batch_is("/usr/bin/ssh -W %h:%p b",
	    "/usr/bin/ssh -o BatchMode=yes -W %h:%p b");
	batch_is("nc %h %p", "nc %h %p");
	batch_is("sshpass x", "sshpass x");

	hop_is("ssh -W %h:%p -q bastion", "bastion");
	hop_is("ssh -qW %h:%p ops@bastion", "bastion");
	hop_is("exec ssh -p2222 -W %h:%p bastion", "bastion:2222");
	hop_is("ssh -o BatchMode=yes -F /c -l u -p 2222 -W '[%h]:%p' jump",
	    "jump:2222");
	hop_is("ssh -o BatchMode=yes -J u@a:2200,b -W '[%h]:%p' c", "a:2200");
	hop_is("ssh bastion nc %h %p", "bastion");
	hop_is("nc -X connect -x proxy:3128 %h %p", NULL);
	hop_is("ssh -W %h:%p", NULL);
	hop_is("ssh 'open", NULL);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sshargs");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_proxies);
	tcase_add_test(tc, test_others);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_jump_command);
	tcase_add_test(tc, test_commands);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
