/* check_buf.c - struct buf and struct err. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "testutil.h"

START_TEST(test_buf_basic)
{
	struct buf b = ENVCTL_BUF_INIT;
	char *p;
	size_t len;

	ck_assert_str_eq(b.data, "");
	buf_addstr(&b, "abc");
	buf_addch(&b, '\0');
	buf_addf(&b, "%d-%s", 42, "x");
	ck_assert_uint_eq(b.len, 8);
	ck_assert_mem_eq(b.data, "abc\0" "42-x", 8);
	ck_assert_int_eq(b.data[b.len], '\0');
	buf_truncate(&b, 2);
	ck_assert_str_eq(b.data, "ab");
	p = buf_detach(&b, &len);
	ck_assert_uint_eq(len, 2);
	ck_assert_str_eq(p, "ab");
	ck_assert_str_eq(b.data, "");
	free(p);
	buf_release(&b);
}
END_TEST

START_TEST(test_buf_cap)
{
	struct buf b;

	buf_init(&b, 10);
	ck_assert_int_eq(buf_addstr(&b, "0123456789"), 0);
	ck_assert_int_eq(buf_addch(&b, 'x'), ENVCTL_ETOOBIG);
	ck_assert_uint_eq(b.len, 10);
	ck_assert_str_eq(b.data, "0123456789");
	ck_assert_int_eq(buf_addf(&b, "%s", "y"), ENVCTL_ETOOBIG);
	buf_release(&b);
}
END_TEST

START_TEST(test_buf_read_file)
{
	struct buf b;
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	char *dir = tu_mkdtemp(), *p, *missing;

	p = tu_writes(dir, "f", "hello\n");
	buf_init(&b, 0);
	ck_assert_int_eq(buf_read_file(&b, p, &err), 0);
	ck_assert_str_eq(b.data, "hello\n");
	buf_release(&b);

	buf_init(&b, 3);
	ck_assert_int_eq(buf_read_file(&b, p, &err), ENVCTL_ETOOBIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "larger than 3 bytes"));
	buf_release(&b);
	err_release(&err);

	missing = xasprintf("%s/nope", dir);
	ck_assert_int_eq(buf_read_file(&b, missing, &err), ENVCTL_ENOTFOUND);
	ck_assert_int_eq(err.cause, ENOENT);
	err_format(&err, &msg);
	ck_assert_ptr_nonnull(strstr(msg.data, "nope"));
	ck_assert_ptr_nonnull(strstr(msg.data, "No such file"));
	buf_release(&msg);
	err_release(&err);
	free(missing);
	free(p);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_err_chain)
{
	struct err err = ENVCTL_ERR_INIT, other = ENVCTL_ERR_INIT;
	struct buf out = ENVCTL_BUF_INIT;

	ck_assert_int_eq(err_count(&err), 0);
	ck_assert_int_eq(err_addat(&err, ENVCTL_EPARSE, "a.yaml", 3, 7,
	    "expected %s", "a mapping"), ENVCTL_EPARSE);
	err_addat(&err, ENVCTL_EINVALID, "a.yaml", 9, 1, "unknown key 'x'");
	err_setat(&other, ENVCTL_EUNDEFINED, "p.yaml", 12, 7,
	    "undefined variable 'cuda_root'");
	err_sethost(&other, "gpu-03");
	err_move(&err, &other);
	ck_assert_int_eq(other.code, 0);
	ck_assert_int_eq(err_count(&err), 3);
	err_context(&err, "while checking");
	err_format(&err, &out);
	ck_assert_str_eq(out.data,
	    "a.yaml:3:7: while checking: expected a mapping\n"
	    "a.yaml:9:1: while checking: unknown key 'x'\n"
	    "gpu-03: p.yaml:12:7: while checking: "
	    "undefined variable 'cuda_root'\n");
	ck_assert_str_eq(err_codename(ENVCTL_EUNDEFINED), "EUNDEFINED");
	ck_assert_int_eq(err_set(NULL, ENVCTL_ESYS, "x"), ENVCTL_ESYS);
	buf_release(&out);
	err_release(&err);
}
END_TEST

START_TEST(test_err_grouped)
{
	struct err err = ENVCTL_ERR_INIT, e = ENVCTL_ERR_INIT;
	struct buf out = ENVCTL_BUF_INIT;
	char host[16];
	int i;

	for (i = 1; i <= 7; i++) {
		err_setat(&e, ENVCTL_EUNDEFINED, "p.yaml", 3, 15,
		    "undefined variable 'x'");
		snprintf(host, sizeof(host), "gpu-%02d", i);
		err_sethost(&e, host);
		err_move(&err, &e);
		if (i == 2) {
			err_setat(&e, ENVCTL_EINVALID, "p.yaml", 9, 1, "other");
			err_sethost(&e, "gpu-02");
			err_move(&err, &e);
		}
	}
	err_addat(&err, ENVCTL_EPARSE, "inv.yaml", 1, 1, "no host here");
	err_format_grouped(&err, &out, 5);
	ck_assert_str_eq(out.data,
	    "gpu-01, gpu-02, gpu-03, gpu-04, gpu-05 and 2 more hosts: "
	    "p.yaml:3:15: undefined variable 'x'\n"
	    "gpu-02: p.yaml:9:1: other\n"
	    "inv.yaml:1:1: no host here\n");
	ck_assert_int_eq(err_count(&err), 9);
	buf_release(&out);
	err_release(&err);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_buf_basic);
	tcase_add_test(tc, test_buf_cap);
	tcase_add_test(tc, test_buf_read_file);
	tcase_add_test(tc, test_err_chain);
	tcase_add_test(tc, test_err_grouped);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
