/*
 * check_shard.c - controller/shard: the stable split of --shard K/N, its
 * `auto` from Slurm's and Kubernetes' variables, and the check that a set
 * of inputs is every shard of one run once.
 *
 * The oracle of the split is python3 running the published algorithms
 * (hashlib's SHA-256, Lamping & Veach's jump hash as their paper gives
 * it), not a table typed here.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/inventory.h"
#include "controller/shard.h"
#include "testutil.h"

#define NAMES	1000

static const char *const slurm_vars[] = {
	"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
	"SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_STEP",
	"JOB_COMPLETION_INDEX", NULL
};

static void
clear_env(void)
{
	size_t i;

	for (i = 0; slurm_vars[i] != NULL; i++)
		unsetenv(slurm_vars[i]);
}

static char *
name(size_t i)
{
	return xasprintf("gpu-%04zu", i);
}

/* python3 computes the shard of gpu-0000..gpu-0999 for n shards. */
static char *
python_shards(unsigned n)
{
	static const char prog[] =
	    "import hashlib, sys\n"
	    "def jump(key, n):\n"
	    "    b, j = -1, 0\n"
	    "    while j < n:\n"
	    "        b = j\n"
	    "        key = (key * 2862933555777941757 + 1) % 2**64\n"
	    "        j = int((b + 1) * (float(1 << 31) / "
	    "float((key >> 33) + 1)))\n"
	    "    return b\n"
	    "n = int(sys.argv[1])\n"
	    "for i in range(1000):\n"
	    "    d = hashlib.sha256(b'gpu-%04d' % i).digest()\n"
	    "    print(jump(int.from_bytes(d[:8], 'big'), n))\n";
	char num[16];
	char *argv[] = { (char *)tu_python(), "-c", (char *)prog, num, NULL };
	struct tu_run r;
	char *out;

	snprintf(num, sizeof(num), "%u", n);
	tu_run(&r, argv, NULL, NULL, 0);
	if (r.status != 0) {
		tu_run_free(&r);
		return NULL;
	}
	out = xstrdup(r.out);
	tu_run_free(&r);
	return out;
}

START_TEST(test_split_matches_python)
{
	static const unsigned counts[] = { 1, 2, 3, 4, 7, 16, 100 };
	struct buf got = ENVCTL_BUF_INIT;
	char *want, *nm;
	size_t c, i;

	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		want = python_shards(counts[c]);
		if (want == NULL) {
			tu_skip("split_matches_python", "python3 is missing");
			break;
		}
		buf_reset(&got);
		for (i = 0; i < NAMES; i++) {
			nm = name(i);
			buf_addf(&got, "%u\n", shard_of(nm, counts[c]));
			free(nm);
		}
		ck_assert_msg(strcmp(got.data, want) == 0, "N=%u differs from "
		    "python3's", counts[c]);
		free(want);
	}
	buf_release(&got);
}
END_TEST

/* Every host in exactly one shard, balanced within reason. */
START_TEST(test_split_balanced)
{
	static const unsigned counts[] = { 2, 4, 8, 10 };
	unsigned per[10], k, n;
	size_t c, i;
	char *nm;

	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		n = counts[c];
		memset(per, 0, sizeof(per));
		for (i = 0; i < NAMES; i++) {
			nm = name(i);
			k = shard_of(nm, n);
			ck_assert_uint_lt(k, n);
			per[k]++;
			free(nm);
		}
		/* Binomial: 4 standard deviations of 1000 names. */
		for (k = 0; k < n; k++)
			ck_assert_msg(per[k] > NAMES / n * 75 / 100 &&
			    per[k] < NAMES / n * 125 / 100, "N=%u: shard %u has "
			    "%u hosts", n, k, per[k]);
	}
}
END_TEST

/* Growing N from 4 to 5 moves about a fifth of the hosts, never more. */
START_TEST(test_split_consistent)
{
	size_t i, moved = 0;
	unsigned a, b;
	char *nm;

	for (i = 0; i < NAMES; i++) {
		nm = name(i);
		a = shard_of(nm, 4);
		b = shard_of(nm, 5);
		if (a != b) {
			ck_assert_uint_eq(b, 4);	/* only to the new one */
			moved++;
		}
		free(nm);
	}
	ck_assert_uint_lt(moved, NAMES * 30 / 100);
	ck_assert_uint_gt(moved, NAMES * 10 / 100);
}
END_TEST

/* Selection: after --limit, independent of inventory order. */
START_TEST(test_select_order)
{
	static const char fwd[] = "all:\n  hosts:\n    a:\n    b:\n    c:\n"
	    "    d:\n    e:\n    f:\n    g:\n    h:\n";
	static const char rev[] = "all:\n  hosts:\n    h:\n    g:\n    f:\n"
	    "    e:\n    d:\n    c:\n    b:\n    a:\n";
	struct inventory *x = NULL, *y = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct shard s = { 0, 3 };
	unsigned char sx[9], sy[9];
	size_t nx, ny, i, total = 0;
	const struct host *h;

	ck_assert_int_eq(inventory_load_string(&x, fwd, strlen(fwd),
	    "f.yaml", &err), 0);
	ck_assert_int_eq(inventory_load_string(&y, rev, strlen(rev),
	    "r.yaml", &err), 0);
	for (s.index = 0; s.index < 3; s.index++) {
		memset(sx, 1, sizeof(sx));
		memset(sy, 1, sizeof(sy));
		sx[0] = 0;	/* as --limit '!a' would */
		sy[7] = 0;
		shard_select(&s, x, sx, &nx);
		shard_select(&s, y, sy, &ny);
		ck_assert_uint_eq(nx, ny);
		for (i = 0; i < 8; i++) {
			h = inventory_host(x, i);
			ck_assert_int_eq(sx[i], i > 0 &&
			    shard_of(h->name, 3) == s.index);
			ck_assert_int_eq(sy[7 - i], i > 0 &&
			    shard_of(h->name, 3) == s.index);
		}
		total += nx;
	}
	ck_assert_uint_eq(total, 7);
	inventory_free(x);
	inventory_free(y);
}
END_TEST

static void
resolve_fails(const char *spec, int shards, const char *msg)
{
	struct err err = ENVCTL_ERR_INIT;
	struct shard s;

	ck_assert_int_eq(shard_resolve(&s, spec, shards, &err), ENVCTL_EUSAGE);
	ck_assert_msg(strcmp(err.msg, msg) == 0, "'%s': got '%s'", spec,
	    err.msg);
	err_release(&err);
}

static void
resolve_is(const char *spec, int shards, unsigned k, unsigned n)
{
	struct err err = ENVCTL_ERR_INIT;
	struct shard s;

	ck_assert_msg(shard_resolve(&s, spec, shards, &err) == 0, "%s: %s",
	    spec != NULL ? spec : "(none)", err.msg);
	ck_assert_uint_eq(s.index, k);
	ck_assert_uint_eq(s.count, n);
}

START_TEST(test_resolve_explicit)
{
	char label[ENVCTL_SHARD_LABEL];
	struct shard s = { 3, 4 };

	clear_env();
	resolve_is(NULL, 0, 0, 0);
	resolve_is("0/1", 0, 0, 1);
	resolve_is("3/4", 0, 3, 4);
	resolve_is("65535/65536", 0, 65535, 65536);
	ck_assert_str_eq(shard_label(label, &s), "3/4");
	s.count = 0;
	ck_assert_str_eq(shard_label(label, &s), "");
	resolve_fails("4/4", 0, "--shard expects K/N (0 <= K < N <= 65536) "
	    "or auto, not '4/4'");
	resolve_fails("1/0", 0, "--shard expects K/N (0 <= K < N <= 65536) "
	    "or auto, not '1/0'");
	resolve_fails("-1/4", 0, "--shard expects K/N (0 <= K < N <= 65536) "
	    "or auto, not '-1/4'");
	resolve_fails("1/4x", 0, "--shard expects K/N (0 <= K < N <= 65536) "
	    "or auto, not '1/4x'");
	resolve_fails("0/65537", 0, "--shard expects K/N (0 <= K < N <= "
	    "65536) or auto, not '0/65537'");
	resolve_fails("2", 0, "--shard expects K/N (0 <= K < N <= 65536) or "
	    "auto, not '2'");
	resolve_fails(NULL, 4, "--shards is for --shard auto (Kubernetes "
	    "Indexed Jobs)");
	resolve_fails("1/4", 4, "--shards is for --shard auto, not --shard "
	    "1/4");
}
END_TEST

START_TEST(test_resolve_slurm)
{
	clear_env();
	resolve_fails("auto", 0, "--shard auto: neither SLURM_ARRAY_TASK_ID "
	    "(a Slurm array job) nor JOB_COMPLETION_INDEX (a Kubernetes "
	    "Indexed Job) is set; give --shard K/N");
	/* --array=0-3 */
	setenv("SLURM_ARRAY_TASK_ID", "2", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
	setenv("SLURM_ARRAY_TASK_MAX", "3", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
	resolve_is("auto", 0, 2, 4);
	resolve_is("auto", 4, 2, 4);
	resolve_fails("auto", 5, "--shard auto: --shards 5, but the Slurm "
	    "array has 4 tasks");
	/* --array=1-4%2 */
	setenv("SLURM_ARRAY_TASK_ID", "1", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
	setenv("SLURM_ARRAY_TASK_MAX", "4", 1);
	resolve_is("auto", 0, 0, 4);
	setenv("SLURM_ARRAY_TASK_ID", "4", 1);
	resolve_is("auto", 0, 3, 4);
	/* --array=10-16:2 */
	setenv("SLURM_ARRAY_TASK_ID", "14", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "10", 1);
	setenv("SLURM_ARRAY_TASK_MAX", "16", 1);
	setenv("SLURM_ARRAY_TASK_STEP", "2", 1);
	resolve_is("auto", 0, 2, 4);
	/* --array=0,3,7: no range */
	setenv("SLURM_ARRAY_TASK_ID", "3", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
	setenv("SLURM_ARRAY_TASK_MAX", "7", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "3", 1);
	unsetenv("SLURM_ARRAY_TASK_STEP");
	resolve_fails("auto", 0, "--shard auto: the Slurm array is no range "
	    "A-B[:S] (SLURM_ARRAY_TASK_ID 3, _MIN 0, _MAX 7, _STEP 1, _COUNT "
	    "3)");
	unsetenv("SLURM_ARRAY_TASK_COUNT");
	resolve_fails("auto", 0, "--shard auto: SLURM_ARRAY_TASK_ID is set "
	    "but SLURM_ARRAY_TASK_COUNT is not");
	setenv("SLURM_ARRAY_TASK_COUNT", "four", 1);
	resolve_fails("auto", 0, "--shard auto: SLURM_ARRAY_TASK_COUNT is "
	    "'four', not a number");
	clear_env();
}
END_TEST

START_TEST(test_resolve_kubernetes)
{
	clear_env();
	setenv("JOB_COMPLETION_INDEX", "0", 1);
	resolve_is("auto", 4, 0, 4);
	setenv("JOB_COMPLETION_INDEX", "3", 1);
	resolve_is("auto", 4, 3, 4);
	resolve_fails("auto", 0, "--shard auto: JOB_COMPLETION_INDEX is set: "
	    "give the Indexed Job's completions as --shards N");
	resolve_fails("auto", 3, "--shard auto: JOB_COMPLETION_INDEX is '3', "
	    "not 0..2");
	/* Slurm's variables win: a Slurm job inside a pod is Slurm's. */
	setenv("SLURM_ARRAY_TASK_ID", "1", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "2", 1);
	resolve_is("auto", 0, 1, 2);
	clear_env();
}
END_TEST

static void
set_fails(const struct shard *s, size_t n, const char *msg)
{
	static const char *const names[] = { "a", "b", "c", "d", "e" };
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_int_ne(shard_check_set(s, names, n, &err), 0);
	ck_assert_msg(strcmp(err.msg, msg) == 0, "got '%s'", err.msg);
	err_release(&err);
}

START_TEST(test_check_set)
{
	static const char *const names[] = { "a", "b", "c", "d" };
	struct err err = ENVCTL_ERR_INIT;
	struct shard all[] = { { 2, 4 }, { 0, 4 }, { 3, 4 }, { 1, 4 } };
	struct shard miss[] = { { 2, 4 }, { 0, 4 } };
	struct shard dup[] = { { 2, 4 }, { 0, 4 }, { 2, 4 } };
	struct shard other[] = { { 0, 4 }, { 1, 3 } };
	struct shard none[] = { { 0, 4 }, { 0, 0 } };

	ck_assert_int_eq(shard_check_set(all, names, 4, &err), 0);
	set_fails(miss, 2, "missing shards 1/4, 3/4 (2 of 4 inputs given)");
	set_fails(miss, 1, "missing shards 0/4, 1/4, 3/4 (1 of 4 inputs "
	    "given)");
	set_fails(dup, 3, "shard 2/4 twice: 'a' and 'c'");
	set_fails(other, 2, "'b' is shard 1/3, but 'a' is 0/4");
	set_fails(none, 2, "'b' is not from a sharded run (no --shard)");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("shard");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_split_matches_python);
	tcase_add_test(tc, test_split_balanced);
	tcase_add_test(tc, test_split_consistent);
	tcase_add_test(tc, test_select_order);
	tcase_add_test(tc, test_resolve_explicit);
	tcase_add_test(tc, test_resolve_slurm);
	tcase_add_test(tc, test_resolve_kubernetes);
	tcase_add_test(tc, test_check_set);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
