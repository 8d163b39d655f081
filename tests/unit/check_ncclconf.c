/*
 * check_ncclconf.c - NCCL's configuration files (agent/ncclconf.c).
 *
 * agent/ncclconf.c is compiled into this suite directly, as check_policy.c
 * does with agent/policy.c.  The table cites, for each case, the line of
 * github.com/NVIDIA/nccl src/misc/param.cc setEnvFile() it comes from;
 * the oracle check then hands the same lines to the real libnccl.so.2 of
 * this machine (tests/unit/nccl_oracle.py runs NCCL's initEnv() through
 * ncclGetUniqueId(), no GPU needed) and compares what it setenv()s.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/ncclconf.c"	/* see above */
#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "testutil.h"

/* "LINE NAME=VALUE\n" per entry ('!' before NAME when not effective),
 * then "LINE kind\n" per misread after a "--\n". */
static char *
render(const struct ncclconf_file *f)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	for (i = 0; i < f->nentries; i++)
		buf_addf(&b, "%d %s%s=%s\n", f->entries[i].line,
		    f->entries[i].effective ? "" : "!", f->entries[i].name,
		    f->entries[i].value);
	buf_addstr(&b, "--\n");
	for (i = 0; i < f->nmisreads; i++)
		buf_addf(&b, "%d %s\n", f->misreads[i].line,
		    f->misreads[i].kind);
	return buf_detach(&b, NULL);
}

#define V_DEF	0		/* 2.26.2 to 2.29 */
#define V_2_22	22203
#define V_2_25	22503
#define V_2_30	23007

static const struct {
	const char	*what;	/* where in param.cc it comes from */
	int		 version;
	const char	*data;
	size_t		 len;	/* 0: strlen(data) */
	const char	*want;
} cases[] = {
	{ "setenv(envVar, envValue, 0) per line", V_DEF,
	    "NCCL_PROTO=Simple\nNCCL_ALGO=Ring\n", 0,
	    "1 NCCL_PROTO=Simple\n2 NCCL_ALGO=Ring\n--\n" },
	{ "name is line[0..s) before the first '=', no trim", V_DEF,
	    "NCCL_PROTO = Simple\n", 0,
	    "1 !NCCL_PROTO = Simple\n--\n1 space-around-equals\n" },
	{ "value is line+s+1: a leading blank is kept", V_DEF,
	    "NCCL_PROTO=\tSimple\n", 0,
	    "1 NCCL_PROTO=\tSimple\n--\n1 space-around-equals\n" },
	{ "only line[read-1] == '\\n' is stripped (2.29)", V_DEF,
	    "NCCL_ALGO=Ring\r\n", 0,
	    "1 NCCL_ALGO=Ring\r\n--\n1 cr\n" },
	{ "2.30: '\\r' before '\\n' dropped too", V_2_30,
	    "NCCL_ALGO=Ring\r\n", 0,
	    "1 NCCL_ALGO=Ring\n--\n" },
	{ "a CR on the last line, no '\\n'", V_DEF,
	    "A=1\r", 0, "1 A=1\r\n--\n1 cr\n" },
	{ "2.26.2: if (line[0] == '#') continue", V_DEF,
	    "#NCCL_X=1\nNCCL_Y=2\n", 0, "2 NCCL_Y=2\n--\n" },
	{ "before 2.26.2 '#' is part of the name", V_2_25,
	    "#NCCL_X=1\nNCCL_Y=2\n", 0,
	    "1 !#NCCL_X=1\n2 NCCL_Y=2\n--\n1 comment\n" },
	{ "'#' only in column 0", V_DEF,
	    "  #NCCL_X=1\n", 0,
	    "1 !  #NCCL_X=1\n--\n1 indented-comment\n" },
	{ "if (line[s] == '\\0') continue: no '='", V_DEF,
	    "NCCL_PROTO Simple\n\n   \n  # note\n", 0,
	    "--\n1 no-equals\n" },
	{ "s == 0: setenv(\"\") fails with EINVAL", V_DEF,
	    "=Simple\n", 0, "--\n1 empty-name\n" },
	{ "setenv(..., 0): the first line wins", V_DEF,
	    "A=1\nA=2\n", 0, "1 A=1\n2 A=2\n--\n2 duplicate\n" },
	{ "getline() returns the last line without '\\n'", V_DEF,
	    "A=1", 0, "1 A=1\n--\n" },
	{ "the value is everything after the first '='", V_DEF,
	    "A=b=c\n", 0, "1 A=b=c\n--\n" },
	{ "an empty value is set", V_DEF,
	    "A=\n", 0, "1 A=\n--\n" },
	{ "strncpy() stops at a NUL", V_DEF,
	    "A=x\0y\nB=2\n", 10, "1 A=x\n2 B=2\n--\n1 nul\n" },
	{ "no trim at the end either", V_DEF,
	    "A=1 \n", 0, "1 A=1 \n--\n1 trailing-space\n" },
	{ "any bytes form a name", V_DEF,
	    "NCCL-PROTO=1\n", 0, "1 !NCCL-PROTO=1\n--\n1 invalid-name\n" },
	{ "getenv() is case-sensitive", V_DEF,
	    "nccl_proto=Simple\n", 0,
	    "1 !nccl_proto=Simple\n--\n1 case\n" },
	{ "other variables are set as well", V_DEF,
	    "CUDA_VISIBLE_DEVICES=0,1\n", 0,
	    "1 CUDA_VISIBLE_DEVICES=0,1\n--\n" },
	{ "an empty file", V_DEF, "", 0, "--\n" },
};

START_TEST(test_parse_table)
{
	struct ncclconf_file f;
	size_t len = cases[_i].len ? cases[_i].len : strlen(cases[_i].data);
	char *got;

	memset(&f, 0, sizeof(f));
	ncclconf_parse(&f, cases[_i].data, len, cases[_i].version);
	got = render(&f);
	ck_assert_msg(strcmp(got, cases[_i].want) == 0,
	    "%s: got\n%swant\n%s", cases[_i].what, got, cases[_i].want);
	free(got);
	ncclconf_file_release(&f);
}
END_TEST

START_TEST(test_parse_messages)
{
	struct ncclconf_file f;

	memset(&f, 0, sizeof(f));
	ncclconf_parse(&f, "NCCL_PROTO = Simple\nA=1\r\nA=2\n", 29, V_DEF);
	ck_assert_uint_eq(f.nmisreads, 3);
	ck_assert_str_eq(f.misreads[0].message, "NCCL does not trim spaces: "
	    "this sets 'NCCL_PROTO ' to ' Simple'");
	ck_assert_str_eq(f.misreads[1].message, "the line ends in CR (a DOS "
	    "line end): NCCL before 2.30 keeps it in the value, so the value "
	    "NCCL reads is '1\\r'");
	ck_assert_str_eq(f.misreads[2].message, "line 2 already sets 'A': "
	    "NCCL keeps the first line, this one has no effect");
	ncclconf_file_release(&f);
}
END_TEST

/* envVar[std::min(1023,s)], envValue[1023] = '\0' (2.23.4 on). */
START_TEST(test_parse_bounds)
{
	struct ncclconf_file f;
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < 1023; i++)
		buf_addch(&b, 'N');
	buf_addstr(&b, "=1\n");		/* 1023: kept whole */
	for (i = 0; i < 1024; i++)
		buf_addch(&b, 'M');
	buf_addstr(&b, "=2\nV=");	/* 1024: cut */
	for (i = 0; i < 1024; i++)
		buf_addch(&b, 'v');
	buf_addstr(&b, "\n");
	ncclconf_parse(&f, b.data, b.len, V_DEF);
	ck_assert_uint_eq(f.nentries, 3);
	ck_assert_uint_eq(strlen(f.entries[0].name), 1023);
	ck_assert_int_eq(f.entries[0].effective, 1);
	ck_assert_uint_eq(strlen(f.entries[1].name), 1023);
	ck_assert_int_eq(f.entries[1].effective, 0);
	ck_assert_uint_eq(strlen(f.entries[2].value), 1023);
	ck_assert_uint_eq(f.nmisreads, 2);
	ck_assert_str_eq(f.misreads[0].kind, "truncated");
	ck_assert_str_eq(f.misreads[0].message,
	    "the name is 1024 bytes: NCCL keeps the first 1023");
	ck_assert_str_eq(f.misreads[1].message,
	    "the value is 1024 bytes: NCCL keeps the first 1023");
	ncclconf_file_release(&f);

	/* Before 2.23.4, envVar[s] = '\0' wrote past the buffer. */
	memset(&f, 0, sizeof(f));
	ncclconf_parse(&f, b.data, b.len, V_2_22);
	ck_assert_str_eq(f.misreads[0].message, "the name is 1024 bytes: "
	    "NCCL before 2.23.4 overflows its 1024-byte buffer");
	ncclconf_file_release(&f);

	/* 2.30: fgets(line, 4096): the 4096th byte starts a new line. */
	buf_reset(&b);
	buf_addstr(&b, "A=");
	for (i = 0; i < 4093; i++)
		buf_addch(&b, 'a');
	buf_addstr(&b, "NCCL_PROTO=LL\nB=1\n");
	memset(&f, 0, sizeof(f));
	ncclconf_parse(&f, b.data, b.len, V_2_30);
	ck_assert_uint_eq(f.nentries, 3);
	ck_assert_str_eq(f.entries[1].name, "NCCL_PROTO");
	ck_assert_int_eq(f.entries[1].line, 1);
	ck_assert_str_eq(f.entries[2].name, "B");
	ck_assert_int_eq(f.entries[2].line, 2);
	ck_assert_str_eq(f.misreads[0].kind, "long-line");
	ncclconf_file_release(&f);
	/* ... where getline() reads the whole line. */
	memset(&f, 0, sizeof(f));
	ncclconf_parse(&f, b.data, b.len, V_DEF);
	ck_assert_uint_eq(f.nentries, 2);
	ncclconf_file_release(&f);

	/* Misreads stop at the cap, with one saying so. */
	buf_reset(&b);
	for (i = 0; i < 300; i++)
		buf_addstr(&b, "x\n");
	memset(&f, 0, sizeof(f));
	ncclconf_parse(&f, b.data, b.len, V_DEF);
	ck_assert_uint_eq(f.nmisreads, ENVCTL_NCCLCONF_MISREAD_MAX + 1);
	ck_assert_str_eq(f.misreads[ENVCTL_NCCLCONF_MISREAD_MAX].kind,
	    "too-many");
	ncclconf_file_release(&f);
	buf_release(&b);
}
END_TEST

static void
mkdirs(const char *root, const char *rel)
{
	char *p = xasprintf("%s/%s", root, rel), *s;

	for (s = p + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
	free(p);
}

static void
put(const char *root, const char *rel, const char *data)
{
	char *p = xasprintf("%s/%s", root, rel);

	free(tu_writes(NULL, p, data));
	free(p);
}

/* initEnvFunc(): NCCL_CONF_FILE or ~/.nccl.conf, then /etc/nccl.conf. */
START_TEST(test_read_order)
{
	struct ncclconf c = NCCLCONF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	char *dir = tu_mkdtemp(), *s;
	json_t *j, *v;

	mkdirs(dir, "etc");
	mkdirs(dir, "home/u");
	mkdirs(dir, "conf");
	put(dir, "etc/nccl.conf", "NCCL_PROTO=Simple\nNCCL_ALGO=Tree\n"
	    "NCCL_DEBUG=WARN\n");
	put(dir, "home/u/.nccl.conf", "NCCL_ALGO=Ring\n");
	put(dir, "conf/x.conf", "NCCL_DEBUG=INFO\nNCCL_DEBUG=TRACE\n");

	/* The home file, then /etc: the earlier file wins. */
	ck_assert_int_eq(ncclconf_read(&c, dir, "/home/u", NULL, -1, 0,
	    &err), 0);
	ck_assert_uint_eq(c.nfiles, 2);
	ck_assert_str_eq(c.files[0].path, "/home/u/.nccl.conf");
	ck_assert_str_eq(c.files[1].path, "/etc/nccl.conf");
	j = ncclconf_json(&c);
	v = json_object_get(json_object_get(j, "values"), "NCCL_ALGO");
	ck_assert_str_eq(json_string_value(json_object_get(v, "value")),
	    "Ring");
	ck_assert_str_eq(json_string_value(json_object_get(v, "from")),
	    "/home/u/.nccl.conf:1");
	v = json_object_get(json_object_get(j, "values"), "NCCL_PROTO");
	ck_assert_str_eq(json_string_value(json_object_get(v, "from")),
	    "/etc/nccl.conf:1");
	s = json_dumps(json_array_get(json_object_get(j, "files"), 0),
	    JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(s, "{\"entries\":[{\"effective\":true,\"line\":1,"
	    "\"name\":\"NCCL_ALGO\",\"value\":\"Ring\"}],\"error\":null,"
	    "\"exists\":true,\"misreads\":[],\"path\":\"/home/u/.nccl.conf\"}");
	free(s);
	json_decref(j);
	ncclconf_release(&c);

	/* NCCL_CONF_FILE replaces the home file (2.23.4 on). */
	ck_assert_int_eq(ncclconf_read(&c, dir, "/home/u", "/conf/x.conf",
	    -1, 0, &err), 0);
	ck_assert_str_eq(c.files[0].path, "/conf/x.conf");
	j = ncclconf_json(&c);
	v = json_object_get(json_object_get(j, "values"), "NCCL_DEBUG");
	ck_assert_str_eq(json_string_value(json_object_get(v, "value")),
	    "INFO");
	v = json_object_get(json_object_get(j, "values"), "NCCL_ALGO");
	ck_assert_str_eq(json_string_value(json_object_get(v, "from")),
	    "/etc/nccl.conf:2");
	json_decref(j);
	ncclconf_release(&c);
	/* An empty NCCL_CONF_FILE is as unset (strlen(userFile) > 0). */
	ck_assert_int_eq(ncclconf_read(&c, dir, "/home/u", "", -1, 0, &err),
	    0);
	ck_assert_str_eq(c.files[0].path, "/home/u/.nccl.conf");
	ncclconf_release(&c);
	/* Before 2.23.4 NCCL_CONF_FILE is not looked at. */
	ck_assert_int_eq(ncclconf_read(&c, dir, "/home/u", "/conf/x.conf",
	    -1, V_2_22, &err), 0);
	ck_assert_str_eq(c.files[0].path, "/home/u/.nccl.conf");
	ncclconf_release(&c);
	/* No home: /etc alone. */
	ck_assert_int_eq(ncclconf_read(&c, dir, NULL, NULL, -1, 0, &err), 0);
	ck_assert_uint_eq(c.nfiles, 1);
	ck_assert_str_eq(c.files[0].path, "/etc/nccl.conf");
	ncclconf_release(&c);
	ck_assert_int_eq(ncclconf_read(&c, NULL, NULL, NULL, -1, 0, &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "ncclconf: root must be a path or \"\"");
	err_release(&err);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_read_problems)
{
	struct ncclconf c = NCCLCONF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	struct buf big = ENVCTL_BUF_INIT, longp = ENVCTL_BUF_INIT;
	char *dir = tu_mkdtemp(), *p;
	size_t i;

	mkdirs(dir, "etc/nccl.conf");		/* a directory */
	mkdirs(dir, "home/u");
	for (i = 0; i < ENVCTL_NCCLCONF_FILE_MAX / 8 + 1; i++)
		buf_addstr(&big, "A=12345\n");
	put(dir, "home/u/big.conf", big.data);
	put(dir, "home/u/.nccl.conf", "NCCL_PROTO=Simple\n");
	p = xasprintf("%s/home/u/.nccl.conf", dir);
	ck_assert_int_eq(chmod(p, 0600), 0);
	free(p);

	/* Missing: fine, no error. */
	ck_assert_int_eq(ncclconf_read(&c, dir, "/nowhere", NULL, -1, 0,
	    &err), 0);
	ck_assert_int_eq(c.files[0].exists, 0);
	ck_assert_ptr_null(c.files[0].error);
	ck_assert_int_eq(c.files[1].exists, 1);
	ck_assert_str_eq(c.files[1].error, "not a regular file");
	ncclconf_release(&c);
	/* Too big: not read at all. */
	ck_assert_int_eq(ncclconf_read(&c, dir, NULL, "/home/u/big.conf",
	    -1, 0, &err), 0);
	ck_assert_str_eq(c.files[0].error, "larger than 65536 bytes: not "
	    "read");
	ck_assert_uint_eq(c.files[0].nentries, 0);
	ncclconf_release(&c);
	/* A file the worker's user may not read is not applied. */
	ck_assert_int_eq(ncclconf_read(&c, dir, "/home/u", NULL,
	    (long)getuid() + 1, 0, &err), 0);
	ck_assert_str_eq(c.files[0].error, "the worker's user may not read "
	    "it: NCCL skips it");
	ck_assert_uint_eq(c.files[0].nentries, 0);
	ncclconf_release(&c);
	ck_assert_int_eq(ncclconf_read(&c, dir, "/home/u", NULL,
	    (long)getuid(), 0, &err), 0);
	ck_assert_uint_eq(c.files[0].nentries, 1);
	ncclconf_release(&c);
	/* Relative: fopen() from the worker's cwd, unknown here. */
	ck_assert_int_eq(ncclconf_read(&c, dir, NULL, "my.conf", -1, 0,
	    &err), 0);
	ck_assert_str_eq(c.files[0].path, "my.conf");
	ck_assert_ptr_nonnull(strstr(c.files[0].error, "relative path"));
	ncclconf_release(&c);
	/* snprintf(confFilePath[1024]) cuts a long path. */
	buf_addch(&longp, '/');
	for (i = 0; i < 1100; i++)
		buf_addch(&longp, 'p');
	ck_assert_int_eq(ncclconf_read(&c, dir, NULL, longp.data, -1, 0,
	    &err), 0);
	ck_assert_uint_eq(strlen(c.files[0].path), 1023);
	ck_assert_str_eq(c.files[0].misreads[0].kind, "truncated");
	ck_assert_int_eq(c.files[0].misreads[0].line, 0);
	ncclconf_release(&c);
	buf_release(&big);
	buf_release(&longp);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
 * Every default-version case of the table in one file, plus a variable
 * already in the environment, given to the real NCCL: what it adds must
 * be this module's "values" less what the environment holds.
 */
START_TEST(test_oracle)
{
	struct ncclconf c = NCCLCONF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	struct buf data = ENVCTL_BUF_INIT, want = ENVCTL_BUF_INIT;
	struct buf got = ENVCTL_BUF_INIT;
	struct tu_run r;
	const char *nccl = getenv("ENVCTL_TEST_NCCL");
	char *dir = tu_mkdtemp(), *oracle = tu_srcpath(
	    "tests/unit/nccl_oracle.py"), *conf, *confenv, *p, *end;
	char *argv[4];
	char *envp[4];
	const char *key;
	json_t *j, *v;
	int version;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (cases[i].version == V_DEF)
			buf_add(&data, cases[i].data, cases[i].len ?
			    cases[i].len : strlen(cases[i].data));
	buf_addstr(&data, "\nNCCL_IB_HCA=mlx5_0\nNCCL_SOCKET_IFNAME==ens1\n");
	conf = tu_write(dir, "nccl.conf", data.data, data.len);
	confenv = xasprintf("NCCL_CONF_FILE=%s", conf);
	argv[0] = (char *)tu_python();
	argv[1] = oracle;
	argv[2] = (char *)(nccl != NULL ? nccl : "");
	argv[3] = NULL;
	envp[0] = confenv;
	envp[1] = "NCCL_IB_HCA=mlx5_1";	/* the environment wins */
	envp[2] = "HOME=/nonexistent";
	envp[3] = NULL;
	tu_run(&r, argv, envp, NULL, 0);
	if (r.status == 77) {
		tu_skip("test_oracle", "no libnccl.so.2 (set ENVCTL_TEST_NCCL)");
		goto out;
	}
	ck_assert_msg(r.status == 0, "nccl_oracle: %s", r.errout);
	ck_assert_int_eq(sscanf(r.out, "version %d\n", &version), 1);
	/* The oracle's entries, sorted by the order NCCL added them,
	 * which is the order of the lines. */
	p = strchr(r.out, '\n') + 1;
	for (end = r.out + r.outlen; p < end; p += strlen(p) + 1) {
		buf_addstr(&got, p);
		buf_addch(&got, '\n');
	}
	/* /etc/nccl.conf of this machine is read by both. */
	ck_assert_int_eq(ncclconf_read(&c, "", "/nonexistent", conf, -1,
	    version, &err), 0);
	j = ncclconf_json(&c);
	json_object_foreach(json_object_get(j, "values"), key, v) {
		if (strcmp(key, "NCCL_IB_HCA") == 0)
			continue;
		buf_addf(&want, "%s=%s\n", key, json_string_value(
		    json_object_get(v, "value")));
	}
	ck_assert_msg(strcmp(got.data, want.data) == 0,
	    "NCCL %d set\n%s\nncclconf says\n%s", version, got.data,
	    want.data);
	ck_assert_ptr_nonnull(strstr(got.data, "NCCL_PROTO = Simple\n"));
	ck_assert_ptr_nonnull(strstr(got.data,
	    "NCCL_SOCKET_IFNAME==ens1\n"));
	json_decref(j);
	ncclconf_release(&c);
out:
	tu_run_free(&r);
	buf_release(&data);
	buf_release(&want);
	buf_release(&got);
	free(confenv);
	free(conf);
	free(oracle);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ncclconf");
	TCase *tc = tcase_create("parse");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_parse_table, 0,
	    sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_parse_messages);
	tcase_add_test(tc, test_parse_bounds);
	suite_add_tcase(s, tc);
	tc = tcase_create("read");
	tcase_add_test(tc, test_read_order);
	tcase_add_test(tc, test_read_problems);
	suite_add_tcase(s, tc);
	tc = tcase_create("oracle");
	tcase_add_test(tc, test_oracle);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
