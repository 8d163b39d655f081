/*
 * check_valrules.c - the value rules of NCCL and Triton, value by value.
 *
 * Each case cites the NVIDIA/nccl (or triton-lang/triton) source and tag
 * whose parsing it restates; "tuning.cc:93 v2.29.7-1" means that line of
 * src/graph/tuning.cc at that tag.  No real NCCL can be asked: parseList,
 * ncclGetLevel and ncclLoadParam are not exported by libnccl.so.2, so the
 * integer cases use the C library's own strtoll() as the oracle.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/desired.h"
#include "controller/inventory.h"
#include "controller/playbook.h"
#include "controller/valrules.h"
#include "testutil.h"

#define V(a, b, c)	ENVCTL_VERNUM(a, b, c)

enum want { OK, WARNS, FAILS };

/*
 * Checks name=value at NCCL version ver (0: unknown) and GPU sm; the
 * outcome must be want, and when sub is not NULL some message holds it.
 */
static void
judge(unsigned ver, int sm, const char *name, const char *value,
    enum want want, const char *sub)
{
	struct valrules_ctx c = { ver, 0, sm };
	struct valrules_value v = { name, value, 0, NULL };
	struct valrules_result res = ENVCTL_VALRULES_RESULT_INIT;
	struct err err = ENVCTL_ERR_INIT;
	struct buf all = ENVCTL_BUF_INIT;
	size_t i;
	int r;

	r = valrules_check(&res, &c, &v, &err);
	for (i = 0; i < res.n; i++)
		buf_addf(&all, "[%s] %s\n", res.items[i].severity ==
		    ENVCTL_VALRULE_ERROR ? "error" : "warning",
		    res.items[i].msg);
	switch (want) {
	case OK:
		ck_assert_msg(res.n == 0 && r == 0, "%s=%s at %u: want ok, "
		    "got\n%s", name, value, ver, all.data);
		break;
	case WARNS:
		ck_assert_msg(r == 0 && res.n > 0, "%s=%s at %u: want a "
		    "warning, got\n%s", name, value, ver, all.data);
		break;
	case FAILS:
		ck_assert_msg(r == ENVCTL_EINVALID && res.nerrors > 0 &&
		    err_count(&err) == (int)res.nerrors, "%s=%s at %u: want "
		    "an error, got\n%s", name, value, ver, all.data);
		break;
	}
	if (sub != NULL)
		ck_assert_msg(strstr(all.data, sub) != NULL, "%s=%s at %u: "
		    "want '%s' in\n%s", name, value, ver, sub, all.data);
	buf_release(&all);
	valrules_result_release(&res);
	err_release(&err);
}

/* The message, exactly, for the field (unknown) and 2.24.3. */
START_TEST(test_proto_message_exact)
{
	struct valrules_ctx c = { 0, 0, 0 };
	struct valrules_value v = { "NCCL_PROTO", "LL129", 0, NULL };
	struct valrules_result res = ENVCTL_VALRULES_RESULT_INIT;
	struct err err = ENVCTL_ERR_INIT;
	const char *want = "NCCL_PROTO: 'LL129' is not a protocol (LL, "
	    "LL128, Simple); NCCL >= 2.24 refuses to initialise with it";

	ck_assert_int_eq(valrules_check(&res, &c, &v, &err),
	    ENVCTL_EINVALID);
	ck_assert_uint_eq(res.n, 1);
	ck_assert_str_eq(res.items[0].msg, want);
	ck_assert_str_eq(err.msg, want);
	ck_assert_ptr_null(err.path);
	ck_assert_int_eq(res.items[0].rule->kind,
	    ENVCTL_VALRULE_LIST_STRICT);
	valrules_result_release(&res);
	err_release(&err);
}
END_TEST

/*
 * NCCL_PROTO: parseList over ncclProtoStr { "LL", "LL128", "Simple" }
 * (init.cc:48 v2.29.7-1), strcasecmp (tuning.cc:99 v2.29.7-1).
 */
START_TEST(test_proto_versions)
{
	/* tuning.cc:105 v2.24.3..v2.29.7: "Unrecognized element token". */
	judge(V(2, 24, 3), 0, "NCCL_PROTO", "LL129", FAILS, "refuses");
	judge(V(2, 28, 9), 0, "NCCL_PROTO", "LL129", FAILS, NULL);
	/* tuning.cc:47 v2.23.4-1: an unknown token is skipped silently. */
	judge(V(2, 23, 4), 0, "NCCL_PROTO", "LL,LL129", WARNS,
	    "NCCL before 2.24.3 drops it silently");
	/* ... and without '^' the list starts empty (tuning.cc:36-41), so
	 * nothing is enabled: enqueue.cc:1848 "no algorithm/protocol". */
	judge(V(2, 23, 4), 0, "NCCL_PROTO", "LL129", FAILS,
	    "enables no protocol");
	judge(V(2, 23, 4), 0, "NCCL_PROTO", "", FAILS, "enables no");
	/* strcasecmp: any case (tuning.cc:47 v2.23.4, :99 v2.29.7). */
	judge(V(2, 23, 4), 0, "NCCL_PROTO", "simple", OK, NULL);
	judge(0, 0, "NCCL_PROTO", "sIMPLE,ll128", OK, NULL);
	judge(0, 0, "NCCL_PROTO", "LL", OK, NULL);
	/* '^' excludes (tuning.cc:78-82 v2.29.7-1). */
	judge(0, 0, "NCCL_PROTO", "^LL128", OK, NULL);
	judge(0, 0, "NCCL_PROTO", "^", OK, NULL);
	/* Tokens are not trimmed: " Simple" is not "Simple". */
	judge(0, 0, "NCCL_PROTO", "LL, Simple", FAILS, "' Simple'");
	/* The empty string: parseList finds no entry, defaults stay. */
	judge(0, 0, "NCCL_PROTO", "", WARNS, "is empty");
	/* Everything excluded: no protocol for any collective. */
	judge(0, 0, "NCCL_PROTO", "^LL,LL128,Simple", FAILS,
	    "enables no protocol for Broadcast, Reduce");
	judge(0, 0, "NCCL_PROTO", "LL;broadcast:^LL,LL128,Simple", WARNS,
	    "enables no protocol for Broadcast:");
}
END_TEST

/*
 * The prefix syntax of 2.24.3 (tuning.cc:35-52 comment, v2.24.3-1):
 * ';' between entries, "collective:" before a list, only the first
 * entry may lack it; ncclFuncStr (init.cc:46 v2.29.7-1).
 */
START_TEST(test_prefixes)
{
	judge(V(2, 24, 3), 0, "NCCL_PROTO", "^LL128;allreduce:LL128", OK,
	    NULL);
	judge(0, 0, "NCCL_PROTO", "LL,Simple;allreduce:^LL", OK, NULL);
	judge(0, 0, "NCCL_ALGO", "ring,collnetdirect;allreduce:tree,"
	    "collnetdirect;broadcast:ring", OK, NULL);
	/* tuning.cc:72 v2.29.7-1: "All entries except the first must have
	 * a prefix". */
	judge(0, 0, "NCCL_PROTO", "LL;Simple", FAILS,
	    "'Simple' in 'LL;Simple' has no collective prefix");
	/* tuning.cc:115 v2.29.7-1: "Unrecognized prefix token". */
	judge(0, 0, "NCCL_PROTO", "allreduc:LL", FAILS,
	    "'allreduc' in 'allreduc:LL' is not a collective (Broadcast, "
	    "Reduce, AllGather, ReduceScatter, AllReduce)");
	judge(0, 0, "NCCL_PROTO", "SendRecv:LL", FAILS, "not a collective");
	/* strtok_r on ':' twice (tuning.cc:66-67): the rest is lost. */
	judge(0, 0, "NCCL_PROTO", "allreduce:LL:Simple", WARNS,
	    "':Simple' in 'allreduce:LL:Simple' is ignored");
	/* "allreduce:" has no list: strtok_r makes it a prefix-less entry
	 * whose one element is "allreduce". */
	judge(0, 0, "NCCL_PROTO", "allreduce:", FAILS,
	    "'allreduce' in 'allreduce:' is not a protocol");
	/* Up to 2.23 there is no prefix syntax: ';' and ':' stay inside
	 * one ','-token, which is dropped (tuning.cc:44 v2.23.4-1). */
	judge(V(2, 23, 4), 0, "NCCL_PROTO", "^LL128;allreduce:LL128", WARNS,
	    "collective prefixes need NCCL >= 2.24");
}
END_TEST

/*
 * NCCL_ALGO: ncclAlgoStr gains PAT in v2.23.4-1 (init.cc:40), has six
 * names from v2.18.1-1; strict from v2.24.3-1.
 */
START_TEST(test_algo_versions)
{
	judge(V(2, 22, 3), 0, "NCCL_ALGO", "Ring,PAT", WARNS,
	    "'PAT' in 'Ring,PAT' is not an algorithm (Tree, Ring, "
	    "CollNetDirect, CollNetChain, NVLS, NVLSTree); NCCL before 2.23 "
	    "drops it silently");
	judge(V(2, 22, 3), 0, "NCCL_ALGO", "PAT", FAILS,
	    "enables no algorithm");
	judge(V(2, 23, 4), 0, "NCCL_ALGO", "PAT", OK, NULL);
	judge(V(2, 24, 3), 0, "NCCL_ALGO", "pat", OK, NULL);
	judge(V(2, 23, 4), 0, "NCCL_ALGO", "Ring,Trees", WARNS,
	    "drops it silently");
	judge(V(2, 24, 3), 0, "NCCL_ALGO", "Ring,Trees", FAILS,
	    "'Trees' in 'Ring,Trees' is not an algorithm");
	judge(0, 0, "NCCL_ALGO", "NVLSTree", OK, NULL);
	judge(0, 0, "NCCL_ALGO", "^NVLS,NVLSTree", OK, NULL);
	judge(0, 0, "NCCL_ALGO", "CollNet", FAILS, NULL);
	/* No rule before v2.18.1-1: not checked. */
	judge(V(2, 17, 1), 0, "NCCL_ALGO", "Bogus", OK, NULL);
}
END_TEST

/*
 * NCCL_P2P_LEVEL: ncclGetLevel (paths.cc:221-257 v2.29.7-1) compares
 * with strcmp against topoPathTypeStr up to PATH_SYS (topo.cc:29), then
 * a leading digit is a legacy level via levelsOldToNew, capped at 5;
 * anything else leaves the level unset (-2) without a word.
 */
START_TEST(test_p2p_level)
{
	judge(0, 0, "NCCL_P2P_LEVEL", "NVL", OK, NULL);
	judge(0, 0, "NCCL_P2P_LEVEL", "SYS", OK, NULL);
	judge(0, 0, "NCCL_P2P_LEVEL", "nvl", FAILS,
	    "NCCL treats it as unset, without a warning (names are "
	    "case-sensitive: 'NVL')");
	judge(0, 0, "NCCL_P2P_LEVEL", "NET", FAILS, "not a P2P level");
	judge(0, 0, "NCCL_P2P_LEVEL", "", FAILS, "not a P2P level");
	/* C2C from v2.26.2-1, P2C from v2.27.3-1 (topo.cc). */
	judge(V(2, 25, 1), 0, "NCCL_P2P_LEVEL", "C2C", FAILS,
	    "(LOC, NVL, NVB, PIX, PXB, PXN, PHB, SYS)");
	judge(V(2, 26, 2), 0, "NCCL_P2P_LEVEL", "C2C", OK, NULL);
	judge(V(2, 26, 2), 0, "NCCL_P2P_LEVEL", "P2C", FAILS, NULL);
	judge(V(2, 27, 3), 0, "NCCL_P2P_LEVEL", "P2C", OK, NULL);
	judge(0, 0, "NCCL_P2P_LEVEL", "P2C", OK, NULL);
	/* Legacy numbers 0-5 (paths.cc:219 levelsOldToNew). */
	judge(0, 0, "NCCL_P2P_LEVEL", "0", OK, NULL);
	judge(0, 0, "NCCL_P2P_LEVEL", "5", OK, NULL);
	judge(0, 0, "NCCL_P2P_LEVEL", "7", WARNS,
	    "'7' is read as the legacy level 5 (SYS)");
	/* strtol(str, NULL, 0): "08" is octal 0 then a stray '8'. */
	judge(0, 0, "NCCL_P2P_LEVEL", "08", WARNS, "legacy level 0 (LOC)");
	judge(0, 0, "NCCL_P2P_LEVEL", "2x", WARNS, "legacy level 2 (PXB)");
	judge(0, 0, "NCCL_P2P_LEVEL", "99999999999", FAILS, "overflows");
}
END_TEST

/* Asserts that strtoll(s, NULL, 0), the C library's, gives want. */
static void
oracle(const char *s, long long want)
{
	errno = 0;
	ck_assert_int_eq(strtoll(s, NULL, 0), want);
	ck_assert_int_eq(errno, 0);
}

/*
 * Integers: ncclLoadParam, strtoll(str, nullptr, 0) with errno checked
 * and an empty string left unset (param.cc:122-131 v2.29.7-1, :79-88
 * v2.23.4-1).  The value in each message is strtoll()'s.
 */
START_TEST(test_integers)
{
	oracle("16M", 16);
	judge(0, 0, "NCCL_BUFFSIZE", "16M", WARNS, "NCCL_BUFFSIZE: '16M' is "
	    "read as 16 (NCCL parses integers with strtoll: no suffixes)");
	oracle("0100", 64);
	judge(0, 0, "NCCL_BUFFSIZE", "0100", WARNS,
	    "NCCL_BUFFSIZE: '0100' is octal: 64");
	oracle("016777216", 3931790);
	judge(0, 0, "NCCL_BUFFSIZE", "016777216", WARNS, "'016777216' is "
	    "octal: 3931790");
	oracle("0198", 1);
	judge(0, 0, "NCCL_BUFFSIZE", "0198", WARNS, "'0198' is read as 1 "
	    "(NCCL parses integers with strtoll: no suffixes; a leading 0 "
	    "means octal)");
	oracle("0x1000000", 16777216);
	judge(0, 0, "NCCL_BUFFSIZE", "0x1000000", OK, NULL);
	oracle(" 4194304", 4194304);
	judge(0, 0, "NCCL_BUFFSIZE", " 4194304", OK, NULL);
	judge(0, 0, "NCCL_BUFFSIZE", "16777216", OK, NULL);
	oracle("abc", 0);
	judge(0, 0, "NCCL_BUFFSIZE", "abc", WARNS, "is not a number: NCCL "
	    "reads it as 0");
	judge(0, 0, "NCCL_BUFFSIZE", "", WARNS, "'' is empty: NCCL uses its "
	    "default");
	/* ERANGE: the default (param.cc:125). */
	judge(0, 0, "NCCL_BUFFSIZE", "99999999999999999999", WARNS,
	    "out of range: NCCL uses its default");
	/* -2 is every NCCL_PARAM's "unset" (init.cc:756, computeBuffSizes
	 * "envs[p] != -2"). */
	judge(0, 0, "NCCL_BUFFSIZE", "-2", WARNS, "mark for unset");
	judge(0, 0, "NCCL_BUFFSIZE", "0", WARNS, "unchecked");
}
END_TEST

/*
 * NCCL_NTHREADS: getNthreads(…, 2*WARP_SIZE, NCCL_SIMPLE_MAX_NTHREADS
 * 512, …) (tuning.cc:17-33, :234 v2.29.7-1): not a multiple of 32 -> max,
 * above max -> max, below 64 -> 64, <= 0 -> default.  WARN up to
 * v2.26.6-1, INFO from v2.27.3-1.
 */
START_TEST(test_nthreads)
{
	judge(0, 0, "NCCL_NTHREADS", "512", OK, NULL);
	judge(0, 0, "NCCL_NTHREADS", "64", OK, NULL);
	judge(0, 0, "NCCL_NTHREADS", "256", OK, NULL);
	judge(0, 0, "NCCL_NTHREADS", "500", WARNS, "'500' is not a multiple "
	    "of 32: NCCL notes only at INFO level and uses 512");
	judge(V(2, 26, 6), 0, "NCCL_NTHREADS", "500", WARNS,
	    "NCCL warns and uses 512");
	judge(0, 0, "NCCL_NTHREADS", "1024", WARNS, "is above 512");
	judge(0, 0, "NCCL_NTHREADS", "32", WARNS, "is below 64");
	judge(0, 0, "NCCL_NTHREADS", "0", WARNS, "NCCL uses its default");
	/* int nt = env: the int64 is cut to an int (2^32 + 64 -> 64). */
	judge(0, 0, "NCCL_NTHREADS", "4294967360", WARNS,
	    "does not fit an int: NCCL uses 64");
	judge(0, 0, "NCCL_NTHREADS", "0400", WARNS, "is octal: 256");
}
END_TEST

/*
 * NCCL_MAX_NCHANNELS: ncclMaxNchannels caps at MAXCHANNELS and raises
 * below 1 to 1 (connect.cc:343-354 v2.29.7-1); MAXCHANNELS is 32 up to
 * v2.24.3-1 and 64 from v2.25.1-1 (device.h).
 */
START_TEST(test_max_nchannels)
{
	judge(0, 0, "NCCL_MAX_NCHANNELS", "64", OK, NULL);
	judge(0, 0, "NCCL_MAX_NCHANNELS", "65", WARNS, "is above 64: NCCL "
	    "caps it at 64");
	judge(V(2, 24, 3), 0, "NCCL_MAX_NCHANNELS", "64", WARNS,
	    "is above 32: NCCL caps it at 32");
	judge(V(2, 25, 1), 0, "NCCL_MAX_NCHANNELS", "64", OK, NULL);
	judge(0, 0, "NCCL_MAX_NCHANNELS", "0", WARNS, "NCCL uses 1");
	judge(0, 0, "NCCL_MAX_NCHANNELS", "16", OK, NULL);
}
END_TEST

/*
 * Removed variables: NCCL_PARAM(LlThreshold, "LL_THRESHOLD") and
 * TreeThreshold are in src/init.cc at v2.4.8-1 and nowhere at v2.5.6-1.
 */
START_TEST(test_removed)
{
	judge(0, 0, "NCCL_LL_THRESHOLD", "0", WARNS, "removed in NCCL 2.5.6");
	judge(0, 0, "NCCL_TREE_THRESHOLD", "0", WARNS, "NCCL_ALGO");
	judge(V(2, 4, 8), 0, "NCCL_LL_THRESHOLD", "0", OK, NULL);
	/* A variable without a rule. */
	judge(0, 0, "NCCL_SOCKET_IFNAME", "whatever", OK, NULL);
}
END_TEST

/*
 * Triton: get_ptxas(arch) returns knobs.nvidia.ptxas_blackwell when
 * arch >= 100 (third_party/nvidia/backend/compiler.py), whose variable
 * is TRITON_PTXAS_BLACKWELL_PATH (python/triton/knobs.py); PR #8959.
 */
START_TEST(test_triton_ptxas)
{
	judge(0, 0, "TRITON_PTXAS_PATH", "/usr/local/cuda/bin/ptxas", OK,
	    NULL);
	judge(0, 90, "TRITON_PTXAS_PATH", "/usr/local/cuda/bin/ptxas", OK,
	    NULL);
	judge(0, 100, "TRITON_PTXAS_PATH", "/usr/local/cuda/bin/ptxas",
	    WARNS, "sm_100");
	judge(0, 120, "TRITON_PTXAS_PATH", "/usr/local/cuda/bin/ptxas",
	    WARNS, "TRITON_PTXAS_PATH: Triton >= 3.6 does not use it on "
	    "sm_120 (sm >= 100): it reads TRITON_PTXAS_BLACKWELL_PATH");
}
END_TEST

START_TEST(test_secret_never_quoted)
{
	struct valrules_ctx c = { 0, 0, 0 };
	struct valrules_value v = { "NCCL_PROTO", "hunter2", 1, NULL };
	struct valrules_result res = ENVCTL_VALRULES_RESULT_INIT;
	struct err err = ENVCTL_ERR_INIT;

	ck_assert_int_eq(valrules_check(&res, &c, &v, &err),
	    ENVCTL_EINVALID);
	ck_assert_ptr_null(strstr(res.items[0].msg, "hunter2"));
	ck_assert_ptr_nonnull(strstr(res.items[0].msg, "'********'"));
	valrules_result_release(&res);
	err_release(&err);
}
END_TEST

/* Every row names a source, a sane range, and its kind's parameters. */
START_TEST(test_table_rows)
{
	size_t n, i;
	const struct valrule *t = valrules_table(&n);
	struct valrules_ctx field = { 0, 0, 120 }, old = { V(2, 20, 3), 0,
		0 };
	int nfield = 0, nold = 0;

	ck_assert_uint_ge(n, 15);
	for (i = 0; i < n; i++) {
		ck_assert(strstr(t[i].source, "src/") != NULL ||
		    strstr(t[i].source, "triton-lang/triton") != NULL);
		ck_assert(t[i].until == 0 || t[i].until > t[i].since);
		if (t[i].kind <= ENVCTL_VALRULE_LEVEL)
			ck_assert_ptr_nonnull(t[i].words);
		nfield += valrules_applies(&t[i], &field);
		nold += valrules_applies(&t[i], &old);
	}
	/* The field: one row per variable, eight variables plus Triton. */
	ck_assert_int_eq(nfield, 9);
	ck_assert_int_eq(nold, 8);
}
END_TEST

START_TEST(test_parse_version)
{
	struct err err = ENVCTL_ERR_INIT;
	unsigned v;

	ck_assert_int_eq(valrules_parse_version(&v, "2.28.9", &err), 0);
	ck_assert_uint_eq(v, V(2, 28, 9));
	ck_assert_int_eq(valrules_parse_version(&v, "2.23", &err), 0);
	ck_assert_uint_eq(v, V(2, 23, 0));
	ck_assert_int_eq(valrules_parse_version(&v, "2.24.3-1", &err), 0);
	ck_assert_uint_eq(v, V(2, 24, 3));
	ck_assert_int_eq(valrules_parse_version(&v, "12.0", &err), 0);
	ck_assert_uint_eq(v, V(12, 0, 0));
	ck_assert_int_eq(valrules_parse_version(&v, "2", &err),
	    ENVCTL_EINVALID);
	ck_assert_int_eq(valrules_parse_version(&v, "2.x", &err),
	    ENVCTL_EINVALID);
	ck_assert_int_eq(valrules_parse_version(&v, "2.28.9.1", &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "'2.28.9.1' is not a version (N.N or "
	    "N.N.N)");
	err_release(&err);
}
END_TEST

/* Loads playbook and inventory text, expands host's values into d. */
static int
desire(struct desired *d, const char *pbtext, const char *invtext,
    const char *host, char **pbpath, char **invpath, struct buf *errs)
{
	struct playbook *pb;
	struct inventory *inv;
	struct err err = ENVCTL_ERR_INIT;
	int r;

	*pbpath = tu_writes(tu_dir, "pb.yaml", pbtext);
	*invpath = tu_writes(tu_dir, "hosts.yaml", invtext);
	ck_assert_int_eq(playbook_load(&pb, *pbpath, &err), 0);
	ck_assert_int_eq(inventory_load(&inv, *invpath, &err), 0);
	r = desired_values(d, pb, inventory_find(inv, host), &err);
	err_format(&err, errs);
	err_release(&err);
	/* The messages are formatted: the nodes may go. */
	inventory_free(inv);
	playbook_free(pb);
	return r;
}

START_TEST(test_desired_positions)
{
	static const char pb[] =
	    "name: t\n"
	    "defaults:\n"
	    "  nccl_proto: LL\n"
	    "env:\n"
	    "  NCCL_PROTO: \"{{ nccl_proto }}\"\n"
	    "  NCCL_ALGO: \"{{ algo }},Bogus\"\n"
	    "  NCCL_BUFFSIZE: 16M\n";
	static const char inv[] =
	    "all:\n"
	    "  hosts:\n"
	    "    gpu-01:\n"
	    "      nccl_proto: LL129\n"
	    "      algo: Ring\n"
	    "    gpu-02:\n"
	    "      algo: Tree\n"
	    "      envctl_nccl_version: '2.23.4'\n";
	struct desired d;
	struct buf errs = ENVCTL_BUF_INIT, w = ENVCTL_BUF_INIT;
	char *pbp, *invp, *want;

	/* The inventory line the value comes from; the playbook's when the
	 * value is built from pieces. */
	ck_assert_int_eq(desire(&d, pb, inv, "gpu-01", &pbp, &invp, &errs),
	    ENVCTL_EINVALID);
	want = xasprintf("gpu-01: %s:4:19: NCCL_PROTO: 'LL129' is not a "
	    "protocol (LL, LL128, Simple); NCCL >= 2.24 refuses to "
	    "initialise with it\n", invp);
	ck_assert_msg(strstr(errs.data, want) != NULL, "%s", errs.data);
	free(want);
	want = xasprintf("gpu-01: %s:6:15: NCCL_ALGO: 'Bogus' in "
	    "'Ring,Bogus' is not an algorithm", pbp);
	ck_assert_msg(strstr(errs.data, want) != NULL, "%s", errs.data);
	free(want);
	ck_assert_ptr_null(d.vars[0].value);
	ck_assert_ptr_null(d.vars[1].value);
	ck_assert_str_eq(d.vars[2].value, "16M");
	err_format(&d.warnings, &w);
	want = xasprintf("gpu-01: %s:7:18: warning: NCCL_BUFFSIZE: '16M' is "
	    "read as 16", pbp);
	ck_assert_msg(strstr(w.data, want) != NULL, "%s", w.data);
	free(want);
	desired_release(&d);
	free(pbp);
	free(invp);
	/* gpu-02 loads NCCL 2.23.4: Bogus is dropped, a warning; its
	 * NCCL_PROTO comes from the playbook's defaults, and is fine. */
	buf_reset(&errs);
	buf_reset(&w);
	ck_assert_int_eq(desire(&d, pb, inv, "gpu-02", &pbp, &invp, &errs),
	    0);
	ck_assert_str_eq(errs.data, "");
	err_format(&d.warnings, &w);
	want = xasprintf("gpu-02: %s:6:15: warning: NCCL_ALGO: 'Bogus' in "
	    "'Tree,Bogus' is not an algorithm", pbp);
	ck_assert_msg(strstr(w.data, want) != NULL, "%s", w.data);
	free(want);
	desired_release(&d);
	free(pbp);
	free(invp);
	buf_release(&errs);
	buf_release(&w);
}
END_TEST

/* A bad version fact is an error at its own line; a GPU fact arms the
 * Triton rule. */
START_TEST(test_desired_facts)
{
	static const char pb[] =
	    "name: t\n"
	    "env:\n"
	    "  TRITON_PTXAS_PATH: /usr/local/cuda/bin/ptxas\n";
	struct desired d;
	struct buf errs = ENVCTL_BUF_INIT, w = ENVCTL_BUF_INIT;
	char *pbp, *invp, *want;

	ck_assert_int_eq(desire(&d, pb, "all:\n  hosts:\n    h:\n"
	    "      envctl_nccl_version: two\n", "h", &pbp, &invp, &errs),
	    ENVCTL_EINVALID);
	want = xasprintf("h: %s:4:28: envctl_nccl_version: 'two' is not a "
	    "version", invp);
	ck_assert_msg(strstr(errs.data, want) != NULL, "%s", errs.data);
	free(want);
	desired_release(&d);
	free(pbp);
	free(invp);
	buf_reset(&errs);
	ck_assert_int_eq(desire(&d, pb, "all:\n  hosts:\n    h:\n"
	    "      envctl_gpu_compute_cap: '12.0'\n", "h", &pbp, &invp, &errs),
	    0);
	err_format(&d.warnings, &w);
	ck_assert_msg(strstr(w.data, "warning: TRITON_PTXAS_PATH: Triton >= "
	    "3.6 does not use it on sm_120") != NULL, "%s", w.data);
	desired_release(&d);
	free(pbp);
	free(invp);
	buf_release(&errs);
	buf_release(&w);
}
END_TEST

/* A playbook's rule: adds to the table's rule, in both directions. */
START_TEST(test_desired_custom_rules)
{
	static const char pb[] =
	    "name: t\n"
	    "env:\n"
	    "  NCCL_PROTO:\n"
	    "    value: \"{{ p }}\"\n"
	    "    rule:\n"
	    "      allowed: [LL, Simple]\n"
	    "  NCCL_MAX_NCHANNELS:\n"
	    "    value: \"{{ n }}\"\n"
	    "    rule: { min: 4, max: 32, severity: warning }\n"
	    "  NCCL_SOCKET_IFNAME:\n"
	    "    value: \"{{ i }}\"\n"
	    "    rule: { pattern: 'eth[0-9]+|ib[0-9]', case: insensitive }\n";
	struct desired d;
	struct buf errs = ENVCTL_BUF_INIT, w = ENVCTL_BUF_INIT;
	char *pbp, *invp, *want;

	/* LL128 passes NCCL's rule, not the playbook's; LL129 fails both;
	 * 100 is above both 32 (playbook) and 64 (NCCL). */
	ck_assert_int_eq(desire(&d, pb, "all:\n  hosts:\n    h:\n"
	    "      p: LL128\n      n: 100\n      i: eth0x\n", "h", &pbp,
	    &invp, &errs), ENVCTL_EINVALID);
	want = xasprintf("h: %s:4:10: NCCL_PROTO: 'LL128' is not one of LL, "
	    "Simple (playbook rule at %s:6:7)", invp, pbp);
	ck_assert_msg(strstr(errs.data, want) != NULL, "%s", errs.data);
	free(want);
	ck_assert_msg(strstr(errs.data, "NCCL_SOCKET_IFNAME: 'eth0x' does "
	    "not match 'eth[0-9]+|ib[0-9]'") != NULL, "%s", errs.data);
	err_format(&d.warnings, &w);
	ck_assert_msg(strstr(w.data, "NCCL_MAX_NCHANNELS: '100' is out of "
	    "range (4 to 32) (playbook rule") != NULL, "%s", w.data);
	ck_assert_msg(strstr(w.data, "NCCL_MAX_NCHANNELS: '100' is above 64")
	    != NULL, "%s", w.data);
	desired_release(&d);
	free(pbp);
	free(invp);
	buf_reset(&errs);
	buf_reset(&w);
	ck_assert_int_eq(desire(&d, pb, "all:\n  hosts:\n    h:\n"
	    "      p: LL129\n      n: 8\n      i: IB1\n", "h", &pbp, &invp,
	    &errs), ENVCTL_EINVALID);
	ck_assert_msg(strstr(errs.data, "'LL129' is not one of") != NULL,
	    "%s", errs.data);
	ck_assert_msg(strstr(errs.data, "'LL129' is not a protocol") != NULL,
	    "%s", errs.data);
	ck_assert_msg(strstr(errs.data, "IFNAME") == NULL, "%s", errs.data);
	desired_release(&d);
	free(pbp);
	free(invp);
	buf_release(&errs);
	buf_release(&w);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("valrules");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, tu_dir_setup, tu_dir_teardown);
	tcase_add_test(tc, test_proto_message_exact);
	tcase_add_test(tc, test_proto_versions);
	tcase_add_test(tc, test_prefixes);
	tcase_add_test(tc, test_algo_versions);
	tcase_add_test(tc, test_p2p_level);
	tcase_add_test(tc, test_integers);
	tcase_add_test(tc, test_nthreads);
	tcase_add_test(tc, test_max_nchannels);
	tcase_add_test(tc, test_removed);
	tcase_add_test(tc, test_triton_ptxas);
	tcase_add_test(tc, test_secret_never_quoted);
	tcase_add_test(tc, test_table_rows);
	tcase_add_test(tc, test_parse_version);
	tcase_add_test(tc, test_desired_positions);
	tcase_add_test(tc, test_desired_facts);
	tcase_add_test(tc, test_desired_custom_rules);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
