/*
 * check_planfile.c - the plan file: what is one, every way a plan is
 * refused when read (broken, cut short, wrong kind or format, missing or
 * mistyped fields, bytes that do not match their digests), written then
 * read back, and checked against today's inputs and the host's read.
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
#include "controller/desired.h"
#include "controller/hash.h"
#include "controller/hoststate.h"
#include "controller/inventory.h"
#include "controller/plan.h"
#include "controller/planfile.h"
#include "controller/playbook.h"
#include "testutil.h"

#define LABEL	"plan.json"
#define OLD	"import os\n"
#define NEW	"import os\nos.environ.setdefault('A', 'b')\n"

/* ---- helpers ---- */

/* {"sha256": ..., "data_b64": ...} of s, optionally "exists". */
static json_t *
file_json(const char *s, int with_exists)
{
	char hex[ENVCTL_SHA256_HEX];
	json_t *o;

	hash_sha256_hex(hex, s, strlen(s));
	o = json_pack("{s:s, s:o}", "sha256", hex, "data_b64",
	    proto_b64_json(s, strlen(s)));
	if (with_exists)
		json_object_set_new(o, "exists", json_true());
	return o;
}

/* A valid plan of format 1: gpu-01 pending, gpu-02 ok, gpu-03 failed. */
static json_t *
valid_doc(void)
{
	json_t *pending = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:o, "
	    "s:o}", "name", "gpu-01", "address", "10.0.0.1", "port", 22,
	    "outcome", "pending", "target", "/usr/lib/python3/sitecustomize.py",
	    "real", "/etc/python3/sitecustomize.py",
	    "current", file_json(OLD, 1), "desired", file_json(NEW, 0));

	return json_pack("{s:s, s:i, s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, "
	    "s:s}, s:[o, {s:s, s:s}, {s:s, s:s}]}", "kind", "envctl-plan",
	    "format", 1, "envctl", "0.1", "created", "2026-01-01T00:00:00Z",
	    "inventory", "path", "hosts.yaml", "sha256",
	    "1111111111111111111111111111111111111111111111111111111111111111",
	    "playbook", "path", "pb.yaml", "name", "pb", "sha256",
	    "2222222222222222222222222222222222222222222222222222222222222222",
	    "hosts", pending, "name", "gpu-02", "outcome", "ok", "name",
	    "gpu-03", "outcome", "failed");
}

static json_t *
host0(json_t *doc)
{
	return json_array_get(json_object_get(doc, "hosts"), 0);
}

/* Parses text; asserts is_plan, the code and the one-line message. */
static void
expect_text(const char *text, size_t len, int want_plan, int code,
    const char *want)
{
	struct planfile pf = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct buf f = ENVCTL_BUF_INIT;
	int is_plan = -1, r;

	r = planfile_parse(&pf, &is_plan, LABEL, text, len, &err);
	err_format(&err, &f);
	ck_assert_msg(r == code, "code %s, want %s (%s)", err_codename(r),
	    err_codename(code), f.data);
	ck_assert_int_eq(is_plan, want_plan);
	ck_assert_int_eq(err.code, code);
	if (want != NULL)
		ck_assert_str_eq(f.data, want);
	else
		ck_assert_uint_eq(f.len, 0);
	if (!want_plan)
		ck_assert_uint_eq(pf.nhosts, 0);
	planfile_release(&pf);
	err_release(&err);
	buf_release(&f);
}

#define expect_str(s, p, c, w)	expect_text(s, strlen(s), p, c, w)

/* Dumps doc (taking it), then as expect_text. */
static void
expect_doc(json_t *doc, int code, const char *want)
{
	char *text = json_dumps(doc, JSON_INDENT(1));

	json_decref(doc);
	expect_str(text, 1, code, want);
	free(text);
}

/* ---- what is a plan ---- */

static const char *const not_plans[] = {
	"all:\n  hosts:\n    gpu-01:\n",
	"[gpu]\ngpu-01 ansible_host=10.0.0.1\n",
	"#!/bin/sh\necho '{}'\n",
	"",
	"   \n",
	/* ansible-inventory --list */
	"{\"_meta\": {\"hostvars\": {}}, \"all\": {\"children\": "
	    "[\"ungrouped\"]}}",
	/* a YAML inventory written as JSON, and one in flow style */
	"{\"all\": {\"hosts\": {\"gpu-01\": null}}}",
	"{all: {hosts: {gpu-01: }}}",
	/* a JSON inventory cut short: the inventory reader says so */
	"{\"_meta\": {\"hostvars\": {",
	/* a group called kind or hosts is no plan either */
	"{\"kind\": {\"hosts\": {\"a\": null}}}",
	"{\"hosts\": {\"hosts\": {\"a\": null}}}",
};

START_TEST(test_not_plan)
{
	expect_str(not_plans[_i], 0, 0, NULL);
}
END_TEST

/* ---- broken and cut-short plans: jansson's position ---- */

START_TEST(test_truncated)
{
	json_t *doc = valid_doc();
	char *text = json_dumps(doc, JSON_INDENT(1));
	size_t cut[] = { 30, strlen(text) / 2, strlen(text) - 2 };
	struct planfile pf = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	json_error_t je;
	struct buf f = ENVCTL_BUF_INIT, want = ENVCTL_BUF_INIT;
	size_t i;
	int is_plan;

	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		/* The oracle: jansson's own position for the same bytes. */
		ck_assert_ptr_null(json_loadb(text, cut[i], 0, &je));
		buf_reset(&want);
		buf_addf(&want, LABEL ":%d:%d: not a valid plan file: %s\n",
		    je.line, je.column, je.text);
		ck_assert_int_eq(planfile_parse(&pf, &is_plan, LABEL, text,
		    cut[i], &err), ENVCTL_EPARSE);
		ck_assert_int_eq(is_plan, 1);
		ck_assert_int_gt(err.line, 1);
		ck_assert_int_gt(err.col, 0);
		buf_reset(&f);
		err_format(&err, &f);
		ck_assert_str_eq(f.data, want.data);
		ck_assert_ptr_null(strstr(f.data, "YAML"));
		planfile_release(&pf);
		err_release(&err);
	}
	buf_release(&f);
	buf_release(&want);
	json_decref(doc);
	free(text);
}
END_TEST

static const struct {
	const char	*text;
	const char	*want;
} broken[] = {
	/* this version writes "kind" first */
	{ "{\n \"kind\": \"envctl-plan\",\n \"format\": 1,\n \"hosts\": [\n",
	  LABEL ":5: not a valid plan file: ']' expected near end of file\n" },
	/* format 1 files of earlier builds had sorted keys */
	{ "{\n \"created\": \"2026-01-01T00:00:00Z\",\n \"envctl\": ",
	  LABEL ":3:11: not a valid plan file: unexpected token near end of "
	  "file\n" },
	{ "{\"kind\": \"envctl-plan\", \"format\": 1,}",
	  LABEL ":1:37: not a valid plan file: string or '}' expected near "
	  "'}'\n" },
	{ "{\"format\": 1 \"kind\": \"x\"}",
	  LABEL ":1:19: not a valid plan file: '}' expected near '\"kind\"'"
	  "\n" },
	/* two readers must not see two plans */
	{ "{\"kind\": \"envctl-plan\", \"kind\": \"envctl-plan\"}",
	  LABEL ":1:30: not a valid plan file: duplicate object key near "
	  "'\"kind\"'\n" },
};

START_TEST(test_broken)
{
	expect_str(broken[_i].text, 1, ENVCTL_EPARSE, broken[_i].want);
}
END_TEST

/* ---- kind and format ---- */

START_TEST(test_kind)
{
	json_t *doc = valid_doc();

	json_object_set_new(doc, "kind", json_string("envctl-report"));
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: 'kind' "
	    "is 'envctl-report', not 'envctl-plan'\n");
	doc = valid_doc();
	json_object_del(doc, "kind");
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: 'kind' "
	    "is missing (an envctl plan has \"kind\": \"envctl-plan\")\n");
	/* Any one of a plan's own members names it. */
	expect_str("{\"format\": 1}", 1, ENVCTL_EPARSE, LABEL ": not a valid "
	    "plan file: 'kind' is missing (an envctl plan has \"kind\": "
	    "\"envctl-plan\")\n");
	expect_str("{\"envctl\": \"0.1\", \"kind\": 7}", 1, ENVCTL_EPARSE,
	    LABEL ": not a valid plan file: 'kind' must be a string (an "
	    "envctl plan has \"kind\": \"envctl-plan\")\n");
	expect_str("{\"hosts\": []}", 1, ENVCTL_EPARSE, LABEL ": not a valid "
	    "plan file: 'kind' is missing (an envctl plan has \"kind\": "
	    "\"envctl-plan\")\n");
}
END_TEST

START_TEST(test_format)
{
	json_t *doc = valid_doc();

	json_object_set_new(doc, "format", json_integer(2));
	expect_doc(doc, ENVCTL_EUNSUPPORTED, LABEL ": not a valid plan file: "
	    "format 2 is not supported (this envctl reads format 1); run "
	    "envctl plan again\n");
	doc = valid_doc();
	json_object_set_new(doc, "format", json_string("1"));
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: "
	    "'format' must be an integer\n");
	doc = valid_doc();
	json_object_del(doc, "format");
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: "
	    "'format' is missing\n");
}
END_TEST

/* ---- missing and mistyped fields ---- */

enum where { TOP, INV, PB, HOST, CUR, WANT };

static const struct {
	enum where	 where;
	const char	*key;
	json_t		*(*value)(void);	/* NULL: delete the key */
	const char	*want;
} fields[] = {
	{ TOP, "inventory", NULL, "'inventory' is missing" },
	{ TOP, "inventory", json_true, "'inventory' must be an object" },
	{ INV, "path", NULL, "'inventory.path' is missing" },
	{ INV, "sha256", json_null, "'inventory.sha256' must be a string" },
	{ TOP, "playbook", NULL, "'playbook' is missing" },
	{ PB, "path", json_true, "'playbook.path' must be a string" },
	{ PB, "sha256", NULL, "'playbook.sha256' is missing" },
	{ TOP, "hosts", NULL, "'hosts' is missing" },
	{ TOP, "hosts", json_object, "'hosts' must be an array" },
	{ HOST, "name", NULL, "'hosts[0].name' is missing" },
	{ HOST, "name", json_array, "'hosts[0].name' must be a string" },
	{ HOST, "outcome", NULL, "'hosts[0].outcome' is missing" },
	{ HOST, "target", NULL, "'hosts[0].target' is missing" },
	{ HOST, "target", json_false, "'hosts[0].target' must be a string" },
	{ HOST, "real", NULL, "'hosts[0].real' is missing" },
	{ HOST, "current", NULL, "'hosts[0].current' is missing" },
	{ HOST, "current", json_array, "'hosts[0].current' must be an "
	  "object" },
	{ HOST, "desired", NULL, "'hosts[0].desired' is missing" },
	{ CUR, "exists", NULL, "'hosts[0].current.exists' is missing" },
	{ CUR, "exists", json_null, "'hosts[0].current.exists' must be true "
	  "or false" },
	{ CUR, "data_b64", NULL, "'hosts[0].current.data_b64' is missing" },
	{ CUR, "sha256", NULL, "'hosts[0].current.sha256' is missing" },
	{ WANT, "sha256", json_true, "'hosts[0].desired.sha256' must be a "
	  "string" },
	{ WANT, "data_b64", NULL, "'hosts[0].desired.data_b64' is missing" },
};

START_TEST(test_fields)
{
	json_t *doc = valid_doc(), *o = NULL;
	struct buf want = ENVCTL_BUF_INIT;

	switch (fields[_i].where) {
	case TOP: o = doc; break;
	case INV: o = json_object_get(doc, "inventory"); break;
	case PB: o = json_object_get(doc, "playbook"); break;
	case HOST: o = host0(doc); break;
	case CUR: o = json_object_get(host0(doc), "current"); break;
	case WANT: o = json_object_get(host0(doc), "desired"); break;
	}
	if (fields[_i].value == NULL)
		json_object_del(o, fields[_i].key);
	else
		json_object_set_new(o, fields[_i].key, fields[_i].value());
	buf_addf(&want, LABEL ": not a valid plan file: %s\n",
	    fields[_i].want);
	expect_doc(doc, ENVCTL_EPARSE, want.data);
	buf_release(&want);
}
END_TEST

/* Values of the right type that a plan cannot hold. */
START_TEST(test_values)
{
	json_t *doc = valid_doc();

	json_array_set_new(json_object_get(doc, "hosts"), 1, json_string("x"));
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: "
	    "'hosts[1]' must be an object\n");
	doc = valid_doc();
	json_object_set_new(host0(doc), "outcome", json_string("changed"));
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: "
	    "'hosts[0].outcome' is 'changed', not ok, pending, failed or "
	    "unreachable\n");
	doc = valid_doc();
	json_object_set_new(host0(doc), "target",
	    json_string("sitecustomize.py"));
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: "
	    "'hosts[0].target' must be an absolute path\n");
	doc = valid_doc();
	json_object_set_new(host0(doc), "real", json_string(""));
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: "
	    "'hosts[0].real' must be an absolute path\n");
	doc = valid_doc();
	json_object_set_new(json_array_get(json_object_get(doc, "hosts"), 2),
	    "name", json_string("gpu-01"));
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: host "
	    "'gpu-01' is listed twice ('hosts[0]' and 'hosts[2]')\n");
	doc = valid_doc();
	json_object_set_new(json_object_get(host0(doc), "desired"), "sha256",
	    json_string("ABC"));
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: "
	    "'hosts[0].desired.sha256' is not a SHA-256 in hex\n");
}
END_TEST

/*
 * A host has a row per file its interpreters import: rows of one host
 * must each name their interpreters, none twice, and different files.
 */
START_TEST(test_rows)
{
	struct planfile pf = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	json_t *doc, *row2;
	char *text;
	int is_plan;

	doc = valid_doc();
	json_object_set_new(host0(doc), "interpreters", json_pack("[s,s]",
	    "/usr/bin/python3", "/opt/v/bin/python3"));
	row2 = json_deep_copy(host0(doc));
	json_object_set_new(row2, "interpreters", json_pack("[s]",
	    "/opt/uv/bin/python3"));
	json_object_set_new(row2, "target", json_string("/opt/uv/lib/"
	    "python3.12/site-packages/sitecustomize.py"));
	json_object_set_new(row2, "real", json_string("/opt/uv/lib/"
	    "python3.12/site-packages/sitecustomize.py"));
	json_array_append(json_object_get(doc, "hosts"), row2);
	text = json_dumps(doc, 0);
	ck_assert_int_eq(planfile_parse(&pf, &is_plan, LABEL, text,
	    strlen(text), &err), 0);
	ck_assert_uint_eq(pf.nhosts, 4);
	ck_assert_uint_eq(pf.hosts[0].ninterpreters, 2);
	ck_assert_str_eq(pf.hosts[0].interpreters[1], "/opt/v/bin/python3");
	ck_assert_str_eq(pf.hosts[3].name, "gpu-01");
	ck_assert_uint_eq(pf.hosts[3].ninterpreters, 1);
	planfile_release(&pf);
	free(text);

	/* The same interpreter in two rows. */
	json_object_set_new(row2, "interpreters", json_pack("[s]",
	    "/opt/v/bin/python3"));
	expect_doc(json_deep_copy(doc), ENVCTL_EPARSE, LABEL ": not a valid "
	    "plan file: host 'gpu-01': interpreter '/opt/v/bin/python3' is in "
	    "'hosts[0]' and 'hosts[3]'\n");
	/* The same file in two rows. */
	json_object_set_new(row2, "interpreters", json_pack("[s]",
	    "/opt/uv/bin/python3"));
	json_object_set_new(row2, "real", json_string(
	    "/etc/python3/sitecustomize.py"));
	expect_doc(json_deep_copy(doc), ENVCTL_EPARSE, LABEL ": not a valid "
	    "plan file: host 'gpu-01' is listed twice ('hosts[0]' and "
	    "'hosts[3]')\n");
	/* A row without interpreters: an old plan lists a host once. */
	json_object_del(row2, "interpreters");
	expect_doc(json_deep_copy(doc), ENVCTL_EPARSE, LABEL ": not a valid "
	    "plan file: host 'gpu-01' is listed twice ('hosts[0]' and "
	    "'hosts[3]')\n");
	json_object_set_new(host0(doc), "interpreters", json_pack("[]"));
	expect_doc(json_deep_copy(doc), ENVCTL_EPARSE, LABEL ": not a valid "
	    "plan file: 'hosts[0].interpreters' must be a list of 1 to 16 "
	    "interpreters\n");
	json_object_set_new(host0(doc), "interpreters", json_pack("[s]", ""));
	expect_doc(doc, ENVCTL_EPARSE, LABEL ": not a valid plan file: "
	    "'hosts[0].interpreters[0]' must be a non-empty string\n");
	json_decref(row2);
	err_release(&err);
}
END_TEST

/* A bad base64 string: EPARSE naming the member, then proto's reason. */
START_TEST(test_base64)
{
	json_t *doc = valid_doc();
	char *text;
	struct planfile pf = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	int is_plan;

	json_object_set_new(json_object_get(host0(doc), "current"),
	    "data_b64", json_string("a*=="));
	text = json_dumps(doc, 0);
	ck_assert_int_eq(planfile_parse(&pf, &is_plan, LABEL, text,
	    strlen(text), &err), ENVCTL_EPARSE);
	ck_assert_str_eq(err.path, LABEL);
	ck_assert_str_eq(err.msg, "not a valid plan file: "
	    "'hosts[0].current.data_b64': invalid base64 at byte 1");
	planfile_release(&pf);
	err_release(&err);
	json_decref(doc);
	free(text);
}
END_TEST

/* ---- digests that do not match the bytes ---- */

START_TEST(test_digests)
{
	char hex[ENVCTL_SHA256_HEX], other[ENVCTL_SHA256_HEX];
	struct buf want = ENVCTL_BUF_INIT;
	json_t *doc = valid_doc();

	/* Hand-edited digest: 64 hex digits, of something else. */
	hash_sha256_hex(hex, NEW, strlen(NEW));
	hash_sha256_hex(other, "x", 1);
	json_object_set_new(json_object_get(host0(doc), "desired"), "sha256",
	    json_string(other));
	buf_addf(&want, LABEL ": not a valid plan file: 'hosts[0].desired."
	    "sha256' is %.12s..., but the bytes of 'hosts[0].desired."
	    "data_b64' have SHA-256 %.12s...\n", other, hex);
	expect_doc(doc, ENVCTL_EINVALID, want.data);
	/* Bytes changed, digest kept. */
	doc = valid_doc();
	hash_sha256_hex(hex, OLD, strlen(OLD));
	hash_sha256_hex(other, "evil\n", 5);
	json_object_set_new(json_object_get(host0(doc), "current"),
	    "data_b64", proto_b64_json("evil\n", 5));
	buf_reset(&want);
	buf_addf(&want, LABEL ": not a valid plan file: 'hosts[0].current."
	    "sha256' is %.12s..., but the bytes of 'hosts[0].current."
	    "data_b64' have SHA-256 %.12s...\n", hex, other);
	expect_doc(doc, ENVCTL_EINVALID, want.data);
	buf_release(&want);
}
END_TEST

/* ---- a valid plan, read ---- */

START_TEST(test_valid)
{
	char *text;
	json_t *doc = valid_doc();
	struct planfile pf = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	const struct planfile_host *h;
	int is_plan;

	/* An absent file has no bytes and no digest. */
	json_object_set_new(json_array_get(json_object_get(doc, "hosts"), 1),
	    "outcome", json_string("unreachable"));
	text = json_dumps(doc, JSON_INDENT(2));
	ck_assert_int_eq(planfile_parse(&pf, &is_plan, LABEL, text,
	    strlen(text), &err), 0);
	ck_assert_int_eq(is_plan, 1);
	ck_assert_str_eq(pf.inventory_path, "hosts.yaml");
	ck_assert_str_eq(pf.playbook_path, "pb.yaml");
	ck_assert_uint_eq(pf.nhosts, 3);
	h = &pf.hosts[0];
	ck_assert_str_eq(h->name, "gpu-01");
	ck_assert_int_eq(h->outcome, ENVCTL_OUT_PENDING);
	ck_assert_str_eq(h->target, "/usr/lib/python3/sitecustomize.py");
	ck_assert_str_eq(h->real, "/etc/python3/sitecustomize.py");
	ck_assert_int_eq(h->cur_exists, 1);
	ck_assert_str_eq(h->cur.data, OLD);
	ck_assert_str_eq(h->want.data, NEW);
	ck_assert_int_eq(pf.hosts[1].outcome, ENVCTL_OUT_UNREACHABLE);
	ck_assert_int_eq(pf.hosts[2].outcome, ENVCTL_OUT_FAILED);
	ck_assert_ptr_null(pf.hosts[2].target);
	planfile_release(&pf);
	free(text);
	/* An absent file: "exists": false and nothing else. */
	json_object_set_new(host0(doc), "current", json_pack("{s:b}",
	    "exists", 0));
	text = json_dumps(doc, 0);
	ck_assert_int_eq(planfile_parse(&pf, &is_plan, LABEL, text,
	    strlen(text), &err), 0);
	ck_assert_int_eq(pf.hosts[0].cur_exists, 0);
	ck_assert_uint_eq(pf.hosts[0].cur.len, 0);
	ck_assert_str_eq(pf.hosts[0].cur_sha256, "");
	planfile_release(&pf);
	free(text);
	json_decref(doc);
}
END_TEST

START_TEST(test_load_missing)
{
	struct planfile pf = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	int is_plan = -1;

	/* Not readable: the inventory reader names the problem. */
	ck_assert_int_eq(planfile_read(&pf, &is_plan, "/nonexistent/p.json",
	    &err), 0);
	ck_assert_int_eq(is_plan, 0);
	ck_assert_int_eq(planfile_read(&pf, &is_plan, "/", &err), 0);
	ck_assert_int_eq(is_plan, 0);
	ck_assert_int_eq(err.code, 0);
}
END_TEST

/* ---- written by plan, read by apply, verified ---- */

struct fixture {
	char		*dir;
	char		*invpath;
	struct inventory *inv;
	struct playbook	*pb;
	struct host_plan hp;
	struct host_plan *hps[1];
	char		*planpath;
};

/* A one-host inventory, the shipped playbook, a plan of gpu-01. */
static void
fixture_init(struct fixture *fx)
{
	struct err err = ENVCTL_ERR_INIT;
	char *pbpath = tu_srcpath("playbooks/cuda13-nccl.yaml");
	struct host_state *st = &fx->hp.st;

	memset(fx, 0, sizeof(*fx));
	fx->dir = tu_mkdtemp();
	fx->invpath = tu_writes(fx->dir, "hosts.yaml",
	    "all:\n  hosts:\n    gpu-01:\n      nccl_proto: Simple\n"
	    "    gpu-02:\n      nccl_proto: LL\n");
	ck_assert_int_eq(inventory_load(&fx->inv, fx->invpath, &err), 0);
	ck_assert_msg(playbook_load(&fx->pb, pbpath, &err) == 0, "%s",
	    err.msg);
	fx->hp.host = inventory_find(fx->inv, "gpu-01");
	fx->hp.outcome = ENVCTL_OUT_PENDING;
	fx->hp.have_state = 1;
	st->path = xstrdup("/usr/lib/python3/dist-packages/sitecustomize.py");
	st->real = xstrdup("/etc/python3/sitecustomize.py");
	st->exists = 1;
	st->mode = 0644;
	buf_init(&st->content, 0);
	buf_addstr(&st->content, OLD);
	hash_sha256_hex(st->sha256, OLD, strlen(OLD));
	ck_assert_int_eq(desired_render(&fx->hp.d, fx->pb, fx->hp.host,
	    st->content.data, st->content.len, st->path, &err), 0);
	hash_sha256_hex(fx->hp.want_sha256, fx->hp.d.content.data,
	    fx->hp.d.content.len);
	buf_init(&fx->hp.diff, 0);
	fx->hps[0] = &fx->hp;
	fx->planpath = tu_writes(fx->dir, "plan.json", "");
	ck_assert_int_eq(planfile_write(fx->planpath, fx->inv, fx->pb,
	    fx->hps, 1, &err), 0);
	free(pbpath);
}

static void
fixture_release(struct fixture *fx)
{
	plan_release(&fx->hp);
	inventory_free(fx->inv);
	playbook_free(fx->pb);
	tu_rmtree(fx->dir);
	free(fx->dir);
	free(fx->invpath);
	free(fx->planpath);
}

START_TEST(test_round_trip)
{
	struct fixture fx;
	struct planfile pf = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct desired d = { 0 };
	const struct planfile_host *ph;
	char *text;
	size_t len;
	int is_plan;

	fixture_init(&fx);
	/* Written with "kind" and "format" first, mode 0600. */
	text = tu_read(fx.planpath, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strncmp(text, "{\n \"kind\": \"envctl-plan\",\n "
	    "\"format\": 1,\n", 38) == 0, "%.60s", text);
	free(text);
	ck_assert_int_eq(planfile_read(&pf, &is_plan, fx.planpath, &err), 0);
	ck_assert_int_eq(is_plan, 1);
	ck_assert_str_eq(pf.inventory_path, fx.invpath);
	ck_assert_str_eq(pf.inventory_sha256, inventory_digest(fx.inv));
	ck_assert_uint_eq(pf.nhosts, 1);
	ph = &pf.hosts[0];
	ck_assert_str_eq(ph->target, fx.hp.st.path);
	ck_assert_str_eq(ph->real, fx.hp.st.real);
	ck_assert_str_eq(ph->cur_sha256, fx.hp.st.sha256);
	ck_assert_str_eq(ph->want_sha256, fx.hp.want_sha256);
	ck_assert_uint_eq(ph->want.len, fx.hp.d.content.len);
	/* Today's inputs are the plan's: everything checks. */
	ck_assert_int_eq(planfile_check_inputs(&pf, fx.inv, fx.pb, &err), 0);
	ck_assert_int_eq(planfile_verify_host(&d, ph, fx.pb, fx.hp.host,
	    &err), 0);
	ck_assert_int_eq(planfile_check_read(ph, &fx.hp.st, &err), 0);
	ck_assert_int_eq(err.code, 0);
	desired_release(&d);
	planfile_release(&pf);
	fixture_release(&fx);
}
END_TEST

START_TEST(test_verify_refuses)
{
	char hex[ENVCTL_SHA256_HEX];
	struct fixture fx;
	struct planfile pf = { 0 };
	struct err err = ENVCTL_ERR_INIT;
	struct desired d = { 0 };
	struct buf want = ENVCTL_BUF_INIT, f = ENVCTL_BUF_INIT;
	struct planfile_host *ph;
	int is_plan;

	fixture_init(&fx);
	ck_assert_int_eq(planfile_read(&pf, &is_plan, fx.planpath, &err), 0);
	ph = &pf.hosts[0];
	/* Desired bytes (and their digest) changed by hand. */
	buf_addstr(&ph->want, "import evil\n");
	hash_sha256_hex(ph->want_sha256, ph->want.data, ph->want.len);
	ck_assert_int_eq(planfile_verify_host(&d, ph, fx.pb, fx.hp.host,
	    &err), ENVCTL_EINVALID);
	buf_addf(&want, "the plan's desired file differs from what the "
	    "inventory and playbook give today (sha256 %.12s... in the "
	    "plan, %.12s... today); run envctl plan again\n",
	    ph->want_sha256, fx.hp.want_sha256);
	err_format(&err, &f);
	ck_assert_str_eq(f.data, want.data);
	err_release(&err);
	desired_release(&d);
	/* Another host's entry, bytes and digests and all, copied over. */
	ck_assert_int_eq(desired_render(&d, fx.pb, inventory_find(fx.inv,
	    "gpu-02"), ph->cur.data, ph->cur.len, ph->target, &err), 0);
	buf_reset(&ph->want);
	buf_add(&ph->want, d.content.data, d.content.len);
	hash_sha256_hex(ph->want_sha256, d.content.data, d.content.len);
	desired_release(&d);
	ck_assert_str_ne(ph->want_sha256, fx.hp.want_sha256);
	ck_assert_int_eq(planfile_verify_host(&d, ph, fx.pb, fx.hp.host,
	    &err), ENVCTL_EINVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "differs from what the "
	    "inventory and playbook give today"));
	err_release(&err);
	desired_release(&d);
	/* The target redirected: the host's read says otherwise. */
	free(ph->target);
	ph->target = xstrdup("/etc/cron.d/evil");
	ck_assert_int_eq(planfile_check_read(ph, &fx.hp.st, &err),
	    ENVCTL_EINVALID);
	buf_reset(&f);
	err_format(&err, &f);
	ck_assert_str_eq(f.data, "the plan's target '/etc/cron.d/evil' is "
	    "not the file the host's interpreter imports ('/usr/lib/python3/"
	    "dist-packages/sitecustomize.py'); run envctl plan again\n");
	err_release(&err);
	free(ph->target);
	ph->target = xstrdup(fx.hp.st.path);
	free(ph->real);
	ph->real = xstrdup("/etc/other.py");
	ck_assert_int_eq(planfile_check_read(ph, &fx.hp.st, &err),
	    ENVCTL_ECHANGED);
	buf_reset(&f);
	err_format(&err, &f);
	ck_assert_str_eq(f.data, "'/usr/lib/python3/dist-packages/"
	    "sitecustomize.py' changed since the plan was made (it now leads "
	    "to '/etc/python3/sitecustomize.py', not '/etc/other.py')\n");
	err_release(&err);
	/* Inputs that changed since. */
	hash_sha256_hex(hex, "x", 1);
	free(pf.playbook_sha256);
	pf.playbook_sha256 = xstrdup(hex);
	ck_assert_int_eq(planfile_check_inputs(&pf, fx.inv, fx.pb, &err),
	    ENVCTL_ECHANGED);
	ck_assert_ptr_nonnull(strstr(err.msg, "the playbook '"));
	ck_assert_ptr_nonnull(strstr(err.msg, "' has changed since the plan "
	    "was made; run envctl plan again"));
	err_release(&err);
	free(pf.inventory_sha256);
	pf.inventory_sha256 = xstrdup(hex);
	ck_assert_int_eq(planfile_check_inputs(&pf, fx.inv, fx.pb, &err),
	    ENVCTL_ECHANGED);
	buf_reset(&want);
	buf_addf(&want, "the inventory '%s' has changed since the plan was "
	    "made; run envctl plan again", fx.invpath);
	ck_assert_str_eq(err.msg, want.data);
	err_release(&err);
	buf_release(&want);
	buf_release(&f);
	planfile_release(&pf);
	fixture_release(&fx);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("planfile");
	TCase *what = tcase_create("what");
	TCase *read = tcase_create("read");
	TCase *verify = tcase_create("verify");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(what, test_not_plan, 0,
	    sizeof(not_plans) / sizeof(not_plans[0]));
	tcase_add_test(what, test_load_missing);
	suite_add_tcase(s, what);

	tcase_add_test(read, test_truncated);
	tcase_add_loop_test(read, test_broken, 0,
	    sizeof(broken) / sizeof(broken[0]));
	tcase_add_test(read, test_kind);
	tcase_add_test(read, test_format);
	tcase_add_loop_test(read, test_fields, 0,
	    sizeof(fields) / sizeof(fields[0]));
	tcase_add_test(read, test_values);
	tcase_add_test(read, test_rows);
	tcase_add_test(read, test_base64);
	tcase_add_test(read, test_digests);
	tcase_add_test(read, test_valid);
	suite_add_tcase(s, read);

	tcase_add_test(verify, test_round_trip);
	tcase_add_test(verify, test_verify_refuses);
	suite_add_tcase(s, verify);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
