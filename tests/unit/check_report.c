/*
 * check_report.c - golden files of the formats envctl writes: the plan
 * file, the one --json envelope (plan and apply), the drift text and the
 * Prometheus textfile, for three hosts read from agent replies as a host
 * sends them (gpu-01 in sync, gpu-02 drifted, gpu-03 unreachable).  Each
 * is compared byte for byte with tests/data/golden/; ENVCTL_UPDATE_GOLDEN=1
 * writes them instead (see the README there).
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/apply.h"
#include "controller/context.h"
#include "controller/engine.h"
#include "controller/inventory.h"
#include "controller/metrics.h"
#include "controller/plan.h"
#include "controller/planfile.h"
#include "controller/playbook.h"
#include "controller/report.h"
#include "testutil.h"

#define TARGET	"/etc/python3.11/sitecustomize.py"
#define OLD	"import os\n"
#define STARTED	1767225600.0

static const char inventory[] =
    "all:\n"
    "  vars:\n"
    "    cuda_home: /usr/local/cuda-13.0\n"
    "    token: s3cr3t-T0ken\n"
    "    nccl_proto: LL\n"
    "  children:\n"
    "    gpus:\n"
    "      hosts:\n"
    "        gpu-01: {ansible_host: 10.0.0.1}\n"
    "        gpu-02: {ansible_host: 10.0.0.2}\n"
    "        gpu-03: {ansible_host: 10.0.0.3}\n";

struct fixture {
	struct context	 ctx;
	struct engine_policy p;
	struct engine	 e;
	char		*srcdir;
};

static json_t *
hello(const char *name)
{
	return json_pack("{s:i, s:b, s:s, s:i, s:s, s:i, s:i, s:s, s:s, s:i}",
	    "id", 1, "ok", 1, "agent", "0.1.0", "protocol", 1, "arch",
	    "x86_64", "uid", 0, "euid", 0, "user", "root", "hostname", name,
	    "pid", 4711);
}

/* The agent's read reply: the file holds data, the probe sees proto. */
static json_t *
read_reply(const char *data, size_t len, const char *proto)
{
	return json_pack("{s:i, s:b, s:{s:s, s:s}, s:{s:s, s:s, s:[s], s:s, "
	    "s:b, s:i, s:i, s:i, s:s, s:s, s:I, s:o}, s:{s:s, s:s, s:n, s:s, "
	    "s:b, s:i, s:b, s:{s:s, s:s, s:s}, s:b, s:[]}, s:[]}",
	    "id", 2, "ok", 1,
	    "interpreter", "path", "/usr/bin/python3", "version", "3.11.2",
	    "target", "path", TARGET, "source", "explicit", "chain", TARGET,
	    "real", TARGET, "exists", 1, "mode", 0644, "uid", 0, "gid", 0,
	    "owner", "root", "group", "root", "size", (json_int_t)len,
	    "data", proto_b64_json(data, len),
	    "probe", "origin", TARGET, "imported", TARGET, "startup_error",
	    "stderr", "", "truncated", 0, "exit", 0, "forked", 0,
	    "values", "CUDA_HOME", "/usr/local/cuda-13.0", "API_TOKEN",
	    "s3cr3t-T0ken", "NCCL_PROTO", proto, "shadowed", 0,
	    "site_packages", "checks");
}

/* Reads host name from the replies into eh, as the engine would. */
static void
read_host(struct fixture *fx, struct engine_host *eh, const char *name,
    const char *data, size_t len, const char *proto)
{
	json_t *h = hello(name), *r = read_reply(data, len, proto);

	eh->name = name;
	eh->host = inventory_find(fx->ctx.inv, name);
	eh->read = 1;
	ck_assert_int_eq(plan_begin(&eh->hp, eh->host, fx->ctx.pb), 0);
	eh->nrows = 1;
	ck_assert_msg(plan_read(&eh->hp, fx->ctx.pb, h,
	    (const json_t *const *)&r, 1) == 0, "%s",
	    eh->hp.err.msg);
	eh->outcome = eh->found = eh->hp.outcome;
	json_decref(h);
	json_decref(r);
}

static void
fixture_init(struct fixture *fx)
{
	struct err err = ENVCTL_ERR_INIT;
	struct engine_host *eh;
	struct engine_host probe = { 0 };
	char *pbpath = tu_srcpath("tests/data/golden/golden.yaml");
	size_t i;

	memset(fx, 0, sizeof(*fx));
	fx->srcdir = tu_srcpath("");
	ck_assert_int_eq(inventory_load_string(&fx->ctx.inv, inventory,
	    strlen(inventory), "hosts.yaml", &err), 0);
	ck_assert_msg(playbook_load(&fx->ctx.pb, pbpath, &err) == 0, "%s",
	    err.msg);
	free(pbpath);
	fx->p.cmd = ENVCTL_CMD_PLAN;
	fx->p.inventory = "hosts.yaml";
	fx->e.p = &fx->p;
	fx->e.ctx = &fx->ctx;
	fx->e.nhosts = 3;
	fx->e.hosts = xcalloc(4, sizeof(*fx->e.hosts));
	fx->e.plans = xcalloc(4, sizeof(*fx->e.plans));
	/* gpu-01 holds what the playbook renders into OLD: in sync. */
	read_host(fx, &probe, "gpu-01", OLD, strlen(OLD), "LL");
	read_host(fx, &fx->e.hosts[0], "gpu-01", probe.hp.d.content.data,
	    probe.hp.d.content.len, "LL");
	plan_release(&probe.hp);
	read_host(fx, &fx->e.hosts[1], "gpu-02", OLD, strlen(OLD), "Simple");
	eh = &fx->e.hosts[2];
	eh->name = "gpu-03";
	eh->host = inventory_find(fx->ctx.inv, "gpu-03");
	eh->read = 1;
	ck_assert_int_eq(plan_begin(&eh->hp, eh->host, fx->ctx.pb), 0);
	eh->hp.outcome = eh->outcome = eh->found = ENVCTL_OUT_UNREACHABLE;
	err_set(&eh->hp.err, ENVCTL_ECONNECT, "cannot connect to "
	    "'10.0.0.3' port 22: Connection refused");
	err_sethost(&eh->hp.err, "gpu-03");
	for (i = 0; i < 3; i++) {
		fx->e.plans[fx->e.nplans++] = &fx->e.hosts[i].hp;
		report_count_outcome(&fx->e.counts, fx->e.hosts[i].outcome);
	}
	ck_assert_int_eq(fx->e.hosts[0].outcome, ENVCTL_OUT_OK);
	ck_assert_int_eq(fx->e.hosts[1].outcome, ENVCTL_OUT_PENDING);
}

static void
fixture_release(struct fixture *fx)
{
	engine_release(&fx->e);
	context_release(&fx->ctx);
	free(fx->srcdir);
}

/* Every from in b replaced with to. */
static void
replace_all(struct buf *b, const char *from, const char *to)
{
	struct buf out = ENVCTL_BUF_INIT;
	const char *p = b->data, *hit;
	size_t n = strlen(from);

	if (n == 0)
		return;
	while ((hit = strstr(p, from)) != NULL) {
		buf_add(&out, p, (size_t)(hit - p));
		buf_addstr(&out, to);
		p = hit + n;
	}
	buf_addstr(&out, p);
	buf_reset(b);
	buf_add(b, out.data, out.len);
	buf_release(&out);
}

/* Compares got with tests/data/golden/name byte for byte (or writes it). */
static void
golden(const char *name, const struct buf *got)
{
	char *rel = xasprintf("tests/data/golden/%s", name);
	char *path = tu_srcpath(rel), *want;
	size_t len, i;
	FILE *f;

	if (getenv("ENVCTL_UPDATE_GOLDEN") != NULL) {
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(got->data, 1, got->len, f), got->len);
		ck_assert_int_eq(fclose(f), 0);
	}
	want = tu_read(path, &len);
	ck_assert_msg(want != NULL, "cannot read %s", path);
	for (i = 0; i < len && i < got->len && want[i] == got->data[i]; i++)
		;
	ck_assert_msg(len == got->len && i == len, "%s differs at byte %zu "
	    "(want %zu bytes, got %zu): got \"%.60s\"", rel, i, len,
	    got->len, got->data + i);
	free(want);
	free(path);
	free(rel);
}

static void
golden_json(const struct fixture *fx, const char *name, json_t *doc)
{
	struct buf b = ENVCTL_BUF_INIT;
	char *text = json_dumps(doc, JSON_INDENT(2));

	buf_addstr(&b, text);
	buf_addch(&b, '\n');
	replace_all(&b, fx->srcdir, "@SRCDIR@/");
	golden(name, &b);
	free(text);
	json_decref(doc);
	buf_release(&b);
}

START_TEST(test_planfile)
{
	struct fixture fx;
	struct err err = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	char *dir = tu_mkdtemp(), *path = xasprintf("%s/plan.json", dir);
	char *text, *at, *end;
	size_t len;

	fixture_init(&fx);
	ck_assert_int_eq(planfile_write(path, fx.ctx.inv, fx.ctx.pb,
	    fx.e.plans, fx.e.nplans, &err), 0);
	text = tu_read(path, &len);
	buf_add(&b, text, len);
	free(text);
	text = xstrdup(b.data);
	/* What differs by run and checkout: when, which envctl, where. */
	ck_assert_ptr_nonnull(at = strstr(text, "\"created\": \""));
	ck_assert_ptr_nonnull(end = strchr(at + 12, '"'));
	*end = '\0';
	replace_all(&b, at + 12, "@CREATED@");
	replace_all(&b, "\"envctl\": \"" ENVCTL_VERSION "\"",
	    "\"envctl\": \"@VERSION@\"");
	replace_all(&b, fx.srcdir, "@SRCDIR@/");
	golden("plan.json", &b);
	free(text);
	buf_release(&b);
	tu_rmtree(dir);
	free(dir);
	free(path);
	fixture_release(&fx);
}
END_TEST

START_TEST(test_envelope_plan)
{
	struct fixture fx;

	fixture_init(&fx);
	golden_json(&fx, "envelope-plan.json", engine_json(&fx.e));
	fixture_release(&fx);
}
END_TEST

/* gpu-02 applied, gpu-01 in sync, gpu-03 unreachable when read. */
START_TEST(test_envelope_apply)
{
	struct fixture fx;
	struct engine_host *eh;
	json_t *reply;

	fixture_init(&fx);
	fx.p.cmd = ENVCTL_CMD_APPLY;
	fx.p.change = ENVCTL_CHANGE_APPLY;
	eh = &fx.e.hosts[1];
	eh->chosen = eh->tried = 1;
	eh->ar.host = eh->host;
	reply = json_pack("{s:i, s:b, s:b, s:{s:s, s:s}, s:s, s:{s:n}, "
	    "s:[s]}", "id", 1, "ok", 1, "changed", 1, "backup", "id",
	    "20260101T000000.000000Z", "path",
	    "/var/backups/envctl" TARGET "/20260101T000000.000000Z",
	    "real", TARGET, "verify", "startup_error", "warnings",
	    "cannot remove an old backup");
	apply_reply(&eh->ar, reply);
	json_decref(reply);
	ck_assert_int_eq(eh->ar.outcome, ENVCTL_OUT_CHANGED);
	eh->outcome = ENVCTL_OUT_CHANGED;
	memset(&fx.e.counts, 0, sizeof(fx.e.counts));
	report_count_outcome(&fx.e.counts, ENVCTL_OUT_OK);
	report_count_outcome(&fx.e.counts, ENVCTL_OUT_CHANGED);
	report_count_outcome(&fx.e.counts, ENVCTL_OUT_UNREACHABLE);
	golden_json(&fx, "envelope-apply.json", engine_json(&fx.e));
	fixture_release(&fx);
}
END_TEST

START_TEST(test_drift_text)
{
	struct fixture fx;
	struct buf b = ENVCTL_BUF_INIT;

	fixture_init(&fx);
	report_drift_line(&b, &fx.e.hosts[1].hp);
	report_drift_summary(&b, fx.e.plans, fx.e.nplans);
	golden("drift.txt", &b);
	buf_release(&b);
	fixture_release(&fx);
}
END_TEST

START_TEST(test_metrics)
{
	struct fixture fx;
	struct buf b = ENVCTL_BUF_INIT;

	fixture_init(&fx);
	metrics_textfile(&b, fx.e.plans, fx.e.nplans, STARTED, 1.5, NULL);
	golden("metrics.prom", &b);
	buf_release(&b);
	fixture_release(&fx);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("golden");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_planfile);
	tcase_add_test(tc, test_envelope_plan);
	tcase_add_test(tc, test_envelope_apply);
	tcase_add_test(tc, test_drift_text);
	tcase_add_test(tc, test_metrics);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
