/*
 * check_repmerge.c - controller/repmerge and metrics_merge(): the reports
 * and metrics files of a sharded run joined as one run writes them, the
 * fleet's exit status, and every refusal with its message; and the
 * command, envctl report merge, on files.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/metrics.h"
#include "controller/repmerge.h"
#include "testutil.h"

#define INV_A	"aaaa000000000000000000000000000000000000000000000000000000000000"
#define INV_B	"bbbb000000000000000000000000000000000000000000000000000000000000"
#define PB_A	"cccc000000000000000000000000000000000000000000000000000000000000"
#define PB_B	"dddd000000000000000000000000000000000000000000000000000000000000"

/* "name:index:outcome[:NCCL_PROTO now]" per host, space-separated. */
static json_t *
envelope(const char *cmd, const char *inv, const char *pb, int k, int n,
    const char *hosts, double ts, double dur)
{
	json_t *doc, *hs = json_array(), *h;
	char *copy = xstrdup(hosts), *tok, *save = NULL, *f[4];
	int i;

	for (tok = strtok_r(copy, " ", &save); tok != NULL;
	    tok = strtok_r(NULL, " ", &save)) {
		for (i = 0; i < 4; i++) {
			f[i] = tok;
			if (tok != NULL && (tok = strchr(tok, ':')) != NULL)
				*tok++ = '\0';
		}
		h = json_pack("{s:s, s:s, s:f, s:I, s:[s]}", "name", f[0],
		    "outcome", f[2], "seconds", 0.5, "inventory_index",
		    (json_int_t)strtol(f[1], NULL, 10), "groups", "fleet");
		if (f[3] != NULL)
			json_object_set_new(h, "variables", json_pack("[{s:s, "
			    "s:s, s:s, s:b, s:b}]", "name", "NCCL_PROTO", "now",
			    f[3], "want", "LL", "in_effect", strcmp(f[3],
			    "LL") == 0, "secret", 0));
		json_array_append_new(hs, h);
	}
	free(copy);
	doc = json_pack("{s:i, s:s, s:s, s:{s:s, s:s, s:s}, s:{s:i, s:i, "
	    "s:i, s:i, s:i, s:i}, s:o, s:[], s:s, s:o}", "format", 1,
	    "command", cmd, "inventory", "hosts.yaml", "playbook", "name",
	    "cuda13-nccl", "path", "/p.yaml", "sha256", pb, "summary", "ok",
	    0, "changed", 0, "pending", 0, "failed", 0, "unreachable", 0,
	    "skipped", 0, "hosts", hs, "groups", "inventory_sha256", inv,
	    "shard", n > 0 ? json_pack("{s:i, s:i}", "index", k, "count", n) :
	    json_null());
	if (ts > 0)
		json_object_set_new(doc, "run", json_pack("{s:f, s:f}",
		    "timestamp", ts, "duration_seconds", dur));
	return doc;
}

/* Merges docs (taken) named a.json, b.json...; returns the result. */
static json_t *
merge(json_t **docs, size_t n, int *status, int want_rc, const char *msg)
{
	static const char *const names[] = { "a.json", "b.json", "c.json",
	    "d.json" };
	struct repmerge_input in[4];
	struct err err = ENVCTL_ERR_INIT;
	json_t *out = NULL;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		in[i].name = names[i];
		in[i].doc = docs[i];
	}
	rc = repmerge_reports(&out, status, in, n, &err);
	ck_assert_msg(rc == want_rc, "rc %d: %s", rc, err.msg);
	if (msg != NULL)
		ck_assert_msg(err.msg != NULL && strcmp(err.msg, msg) == 0,
		    "got '%s', want '%s'", err.msg, msg);
	else
		ck_assert_ptr_nonnull(out);
	for (i = 0; i < n; i++)
		json_decref(docs[i]);
	err_release(&err);
	return out;
}

static char *
names_of(const json_t *doc)
{
	struct buf b = ENVCTL_BUF_INIT;
	const json_t *h;
	size_t i;

	json_array_foreach(json_object_get(doc, "hosts"), i, h)
		buf_addf(&b, "%s%s", i > 0 ? " " : "",
		    json_string_value(json_object_get(h, "name")));
	return buf_detach(&b, NULL);
}

static json_int_t
count(const json_t *doc, const char *outcome)
{
	return json_integer_value(json_object_get(json_object_get(doc,
	    "summary"), outcome));
}

START_TEST(test_merge_drift)
{
	json_t *d[3], *out;
	char *names;
	int status;

	/* Given out of order: the merge sorts by inventory position. */
	d[0] = envelope("drift", INV_A, PB_A, 2, 3, "gpu-3:2:ok:LL",
	    1000.0, 2.0);
	d[1] = envelope("drift", INV_A, PB_A, 0, 3,
	    "gpu-1:0:ok:LL gpu-4:3:pending:Simple", 1001.0, 5.0);
	d[2] = envelope("drift", INV_A, PB_A, 1, 3,
	    "gpu-2:1:ok:LL gpu-5:4:unreachable", 999.5, 1.0);
	out = merge(d, 3, &status, 0, NULL);
	names = names_of(out);
	ck_assert_str_eq(names, "gpu-1 gpu-2 gpu-3 gpu-4 gpu-5");
	ck_assert_int_eq(status, 1);	/* unreachable beats drift */
	ck_assert_int_eq(count(out, "ok"), 3);
	ck_assert_int_eq(count(out, "pending"), 1);
	ck_assert_int_eq(count(out, "unreachable"), 1);
	ck_assert(json_is_null(json_object_get(out, "shard")));
	ck_assert_str_eq(json_string_value(json_object_get(out,
	    "inventory_sha256")), INV_A);
	ck_assert(json_real_value(json_object_get(json_object_get(out,
	    "run"), "timestamp")) == 999.5);
	ck_assert(json_real_value(json_object_get(json_object_get(out,
	    "run"), "duration_seconds")) == 1006.0 - 999.5);
	/* Seen together, the group disagrees: found again over shards. */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(out, "groups"), 0), "text")), "fleet: NCCL_PROTO "
	    "is LL on 3 hosts, Simple on 1 host now (mid-rollout?): ranks of "
	    "one job must agree");
	free(names);
	json_decref(out);

	d[0] = envelope("drift", INV_A, PB_A, 0, 2, "gpu-1:0:pending:x", 0, 0);
	d[1] = envelope("drift", INV_A, PB_A, 1, 2, "", 0, 0);
	out = merge(d, 2, &status, 0, NULL);
	ck_assert_int_eq(status, 2);
	ck_assert_ptr_null(json_object_get(out, "run"));
	json_decref(out);
	d[0] = envelope("drift", INV_A, PB_A, 0, 2, "gpu-1:0:ok", 0, 0);
	d[1] = envelope("drift", INV_A, PB_A, 1, 2, "gpu-2:1:changed", 0, 0);
	out = merge(d, 2, &status, 0, NULL);
	ck_assert_int_eq(status, 0);
	json_decref(out);
}
END_TEST

START_TEST(test_merge_status)
{
	json_t *d[2], *out;
	int status;

	d[0] = envelope("plan", INV_A, PB_A, 0, 2, "a:0:pending", 0, 0);
	d[1] = envelope("plan", INV_A, PB_A, 1, 2, "b:1:ok", 0, 0);
	out = merge(d, 2, &status, 0, NULL);
	ck_assert_int_eq(status, 2);
	json_decref(out);
	/* apply leaves hosts pending only when told no: exit 0. */
	d[0] = envelope("apply", INV_A, PB_A, 0, 2, "a:0:pending", 0, 0);
	d[1] = envelope("apply", INV_A, PB_A, 1, 2, "b:1:changed", 0, 0);
	out = merge(d, 2, &status, 0, NULL);
	ck_assert_int_eq(status, 0);
	ck_assert_ptr_null(json_object_get(out, "run"));
	json_decref(out);
	d[0] = envelope("apply", INV_A, PB_A, 0, 2, "a:0:failed", 0, 0);
	d[1] = envelope("apply", INV_A, PB_A, 1, 2, "b:1:changed", 0, 0);
	out = merge(d, 2, &status, 0, NULL);
	ck_assert_int_eq(status, 1);
	json_decref(out);
}
END_TEST

START_TEST(test_merge_refused)
{
	json_t *d[3];
	int status;

	d[0] = envelope("drift", INV_A, PB_A, 0, 2, "a:0:ok", 0, 0);
	d[1] = envelope("plan", INV_A, PB_A, 1, 2, "b:1:ok", 0, 0);
	merge(d, 2, &status, ENVCTL_EINVALID, "'b.json' is a plan report, "
	    "but 'a.json' is a drift report");
	ck_assert_int_eq(status, 1);
	d[0] = envelope("drift", INV_A, PB_A, 0, 2, "a:0:ok", 0, 0);
	d[1] = envelope("drift", INV_B, PB_A, 1, 2, "b:1:ok", 0, 0);
	merge(d, 2, &status, ENVCTL_EINVALID, "'b.json' read another "
	    "inventory (sha256 bbbb00000000...) than 'a.json' "
	    "(aaaa00000000...)");
	d[0] = envelope("drift", INV_A, PB_A, 0, 2, "a:0:ok", 0, 0);
	d[1] = envelope("drift", INV_A, PB_B, 1, 2, "b:1:ok", 0, 0);
	merge(d, 2, &status, ENVCTL_EINVALID, "'b.json' used another "
	    "playbook (sha256 dddd00000000...) than 'a.json' "
	    "(cccc00000000...)");
	d[0] = envelope("drift", INV_A, PB_A, 0, 4, "a:0:ok", 0, 0);
	d[1] = envelope("drift", INV_A, PB_A, 2, 4, "b:1:ok", 0, 0);
	merge(d, 2, &status, ENVCTL_EINVALID, "missing shards 1/4, 3/4 "
	    "(2 of 4 inputs given)");
	d[0] = envelope("drift", INV_A, PB_A, 0, 2, "a:0:ok", 0, 0);
	d[1] = envelope("drift", INV_A, PB_A, 1, 2, "b:1:ok", 0, 0);
	d[2] = envelope("drift", INV_A, PB_A, 1, 2, "b:1:ok", 0, 0);
	merge(d, 3, &status, ENVCTL_EINVALID, "shard 1/2 twice: 'b.json' "
	    "and 'c.json'");
	d[0] = envelope("drift", INV_A, PB_A, 0, 2, "a:0:ok", 0, 0);
	d[1] = envelope("drift", INV_A, PB_A, 0, 0, "b:1:ok", 0, 0);
	merge(d, 2, &status, ENVCTL_EINVALID, "'b.json' is not from a "
	    "sharded run (no --shard)");
	d[0] = json_pack("{s:i}", "format", 2);
	merge(d, 1, &status, ENVCTL_EPARSE, "'a.json' is not an envctl "
	    "report (a --json or --report document of format 1)");
	d[0] = envelope("drift", INV_A, PB_A, 0, 1, "a:0:ok", 0, 0);
	json_object_del(d[0], "inventory_sha256");
	merge(d, 1, &status, ENVCTL_EPARSE, "'a.json' has no "
	    "'inventory_sha256': written by an envctl without --shard");
	d[0] = envelope("drift", INV_A, PB_A, 0, 1, "a:0:fine", 0, 0);
	merge(d, 1, &status, ENVCTL_EPARSE, "host 'a': unknown outcome "
	    "'fine'");
}
END_TEST

#define HELP_SYNC "# HELP envctl_host_in_sync 1 when in sync.\n" \
	"# TYPE envctl_host_in_sync gauge\n"
#define H(name, text) "# HELP " name " " text "\n# TYPE " name " gauge\n"
#define H_DRIFT	H("envctl_drift_hosts", "Hosts out of sync.")
#define H_FAILED H("envctl_failed_hosts", "Hosts that failed.")
#define H_TS	H("envctl_last_run_timestamp_seconds", "When.")
#define H_DUR	H("envctl_run_duration_seconds", "How long.")

static int
metrics(struct buf *out, struct metrics_totals *t, const char *a,
    const char *b, const char *const *order, size_t norder,
    struct err *err)
{
	struct metrics_input in[2] = { { "a.prom", a }, { "b.prom", b } };

	return metrics_merge(out, t, in, 2, order, norder, err);
}

START_TEST(test_metrics_merge)
{
	static const char a[] = HELP_SYNC
	    "envctl_host_in_sync{host=\"gpu-3\",group=\"g\",shard=\"1/2\"} 1\n"
	    H_DRIFT "envctl_drift_hosts{shard=\"1/2\"} 0\n"
	    H_FAILED "envctl_failed_hosts{shard=\"1/2\"} 1\n"
	    H_TS "envctl_last_run_timestamp_seconds{shard=\"1/2\"} 1000.000\n"
	    H_DUR "envctl_run_duration_seconds{shard=\"1/2\"} 4.000\n";
	static const char b[] = HELP_SYNC
	    "envctl_host_in_sync{host=\"gpu-\\\"1\",group=\"g\",shard=\"0/2\"} "
	    "0\n"
	    "envctl_host_in_sync{host=\"gpu-2\",group=\"g\",shard=\"0/2\"} 1\n"
	    H_DRIFT "envctl_drift_hosts{shard=\"0/2\"} 1\n"
	    H_FAILED "envctl_failed_hosts{shard=\"0/2\"} 0\n"
	    H_TS "envctl_last_run_timestamp_seconds{shard=\"0/2\"} 998.500\n"
	    H_DUR "envctl_run_duration_seconds{shard=\"0/2\"} 2.000\n";
	static const char *const order[] = { "gpu-2", "gpu-3", "gpu-\"1" };
	static const char want_order[] = HELP_SYNC
	    "envctl_host_in_sync{host=\"gpu-2\",group=\"g\"} 1\n"
	    "envctl_host_in_sync{host=\"gpu-3\",group=\"g\"} 1\n"
	    "envctl_host_in_sync{host=\"gpu-\\\"1\",group=\"g\"} 0\n"
	    H_DRIFT "envctl_drift_hosts 1\n"
	    H_FAILED "envctl_failed_hosts 1\n"
	    H_TS "envctl_last_run_timestamp_seconds 998.500\n"
	    H_DUR "envctl_run_duration_seconds 5.500\n";
	struct buf out = ENVCTL_BUF_INIT;
	struct err err = ENVCTL_ERR_INIT;
	struct metrics_totals t;
	char *bad;

	ck_assert_msg(metrics(&out, &t, a, b, order, 3, &err) == 0, "%s",
	    err.msg);
	ck_assert_str_eq(out.data, want_order);
	ck_assert(t.drift_hosts == 1 && t.failed_hosts == 1);
	/* Without an order: shard order. */
	buf_reset(&out);
	ck_assert_int_eq(metrics(&out, &t, a, b, NULL, 0, &err), 0);
	ck_assert_ptr_nonnull(strstr(out.data, "gpu-\\\"1\",group=\"g\"} 0\n"
	    "envctl_host_in_sync{host=\"gpu-2\",group=\"g\"} 1\n"
	    "envctl_host_in_sync{host=\"gpu-3\""));
	/* HELP lines must agree. */
	bad = xstrdup(b);
	memcpy(strstr(bad, "1 when"), "0 when", 6);
	ck_assert_int_eq(metrics(&out, &t, a, bad, NULL, 0, &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "'b.prom': the # HELP line of "
	    "envctl_host_in_sync differs from 'a.prom''s");
	err_release(&err);
	free(bad);
	/* Not sharded, shards of two runs, a line that is no metric. */
	ck_assert_int_eq(metrics(&out, &t, a, HELP_SYNC
	    "envctl_host_in_sync{host=\"x\"} 1\n", NULL, 0, &err),
	    ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "'b.prom': envctl_host_in_sync has no "
	    "shard label: not from a sharded run (--shard)");
	err_release(&err);
	ck_assert_int_eq(metrics(&out, &t, a, "envctl_drift_hosts{shard="
	    "\"0/3\"} 1\n", NULL, 0, &err), ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "'b.prom' is shard 0/3, but 'a.prom' is "
	    "1/2");
	err_release(&err);
	ck_assert_int_eq(metrics(&out, &t, a, "envctl_drift_hosts{shard="
	    "\"1/2\"} 1\n", NULL, 0, &err), ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "shard 1/2 twice: 'a.prom' and 'b.prom'");
	err_release(&err);
	ck_assert_int_eq(metrics(&out, &t, a, "envctl_x{shard=\"0/2\" 1\n",
	    NULL, 0, &err), ENVCTL_EPARSE);
	ck_assert_str_eq(err.msg, "'b.prom': not a metric line: "
	    "'envctl_x{shard=\"0/2\" 1'");
	err_release(&err);
	ck_assert_int_eq(metrics(&out, &t, a, "# HELP other_total x\n"
	    "# TYPE other_total counter\nother_total{shard=\"0/2\"} 3\n",
	    NULL, 0, &err), ENVCTL_EINVALID);
	ck_assert_str_eq(err.msg, "cannot merge other_total: not a series "
	    "envctl writes");
	err_release(&err);
	buf_release(&out);
}
END_TEST

/* The command: files in, files out, the exit status, usage errors. */
START_TEST(test_command)
{
	char *dir = tu_mkdtemp(), *a, *b, *o, *text, *p;
	json_t *d;
	struct tu_run r;
	size_t len;

	d = envelope("drift", INV_A, PB_A, 0, 2, "gpu-1:0:pending:x", 0, 0);
	text = json_dumps(d, 0);
	a = tu_writes(dir, "a.json", text);
	free(text);
	json_decref(d);
	d = envelope("drift", INV_A, PB_A, 1, 2, "gpu-2:1:ok:LL", 0, 0);
	text = json_dumps(d, 0);
	b = tu_writes(dir, "b.json", text);
	free(text);
	json_decref(d);
	o = xasprintf("%s/all.json", dir);
	{
		char *argv[] = { (char *)tu_envctl(), "report", "merge", "-o",
		    o, a, b, NULL };

		tu_run(&r, argv, NULL, NULL, 0);
		ck_assert_msg(r.status == 2, "%d: %s", r.status, r.errout);
		ck_assert_str_eq(r.out, "drift, 2 shards: 1 to change, 1 in "
		    "sync\n");
		tu_run_free(&r);
		p = tu_read(o, &len);
		ck_assert_ptr_nonnull(strstr(p, "\"shard\": null"));
		free(p);
	}
	{
		char *argv[] = { (char *)tu_envctl(), "report", "merge", "-o",
		    o, a, NULL };

		tu_run(&r, argv, NULL, NULL, 0);
		ck_assert_int_eq(r.status, 1);
		ck_assert_str_eq(r.errout, "envctl report merge: missing shard "
		    "1/2 (1 of 2 inputs given)\n");
		tu_run_free(&r);
	}
	{
		char *argv[] = { (char *)tu_envctl(), "report", "merge", a, b,
		    NULL };

		tu_run(&r, argv, NULL, NULL, 0);
		ck_assert_int_eq(r.status, 64);
		ck_assert_str_eq(r.errout, "envctl report merge: give -o "
		    "OUT.json, --metrics-file OUT.prom or both\n");
		tu_run_free(&r);
	}
	{
		char *argv[] = { (char *)tu_envctl(), "report", "split", NULL };

		tu_run(&r, argv, NULL, NULL, 0);
		ck_assert_int_eq(r.status, 64);
		ck_assert_str_eq(r.errout, "envctl report: expected 'merge', "
		    "not 'split'\n");
		tu_run_free(&r);
	}
	tu_rmtree(dir);
	free(dir);
	free(a);
	free(b);
	free(o);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("repmerge");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_merge_drift);
	tcase_add_test(tc, test_merge_status);
	tcase_add_test(tc, test_merge_refused);
	tcase_add_test(tc, test_metrics_merge);
	tcase_add_test(tc, test_command);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
