/*
 * check_layers.c - controller/layers.c: the agent's "layers" reply (in
 * the shapes agent/unitenv.c, ncclconf.c and procenv.c write, which
 * tests/e2e/t-layers.sh checks against a real host) judged against a
 * host's desired values: shadowing units, nccl.conf lines, workers to
 * restart, secrets masked, malformed replies never trusted.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "controller/desired.h"
#include "controller/hoststate.h"
#include "controller/inventory.h"
#include "controller/layers.h"
#include "controller/playbook.h"
#include "testutil.h"

static struct desired_var vars[] = {
	{ "NCCL_PROTO", "LL", 0, ENVCTL_CHECK_NONE },
	{ "NCCL_ALGO", "Ring", 0, ENVCTL_CHECK_NONE },
	{ "API_TOKEN", "s3cret", 1, ENVCTL_CHECK_NONE },
};

static struct desired d = { vars, 3, ENVCTL_BUF_INIT, ENVCTL_ERR_INIT };

static const char svc_reply[] =
    "{\"id\": 3, \"ok\": true, \"services\": [{\"unit\": \"vllm.service\","
    " \"found\": true, \"masked\": false, \"exec\": {\"path\":"
    " \"/opt/venv/bin/python3\", \"python\": true}, \"systemctl\":"
    " {\"checked\": true, \"agrees\": false, \"differences\":"
    " [\"Environment: systemd has NCCL_PROTO=LL128\"]},"
    " \"errors\": [\"EnvironmentFile="
    "/etc/vllm.env is missing\"], \"env\": {"
    "\"NCCL_PROTO\": {\"value\": \"Simple\", \"from\": \"/etc/systemd/system/"
    "vllm.service.d/nccl.conf:2\", \"directive\": \"Environment\"},"
    "\"NCCL_ALGO\": {\"value\": \"Ring\", \"from\": \"/etc/vllm.env:1\","
    " \"directive\": \"EnvironmentFile\"},"
    "\"PYTHONPATH\": {\"value\": \"/srv/lib\", \"from\": \"/etc/vllm.env:3\","
    " \"directive\": \"EnvironmentFile\"},"
    "\"PYTHONHOME\": {\"value\": null, \"unknown\": null, \"from\": null,"
    " \"overrides\": []},"
    "\"API_TOKEN\": {\"value\": \"other\", \"from\": \"/etc/vllm.env:2\","
    " \"directive\": \"EnvironmentFile\"}},"
    " \"nccl\": {\"files\": [{\"path\": \"/etc/nccl.conf\", \"misreads\":"
    " [{\"line\": 1, \"kind\": \"space-around-equals\", \"message\":"
    " \"NCCL does not trim spaces\"}]}], \"values\": {\"NCCL_ALGO\":"
    " {\"value\": \"Tree\", \"from\": \"/etc/nccl.conf:2\"},"
    " \"NCCL_SOCKET_IFNAME\": {\"value\": \"eth0\", \"from\":"
    " \"/etc/nccl.conf:3\"}, \"NCCL_IB_HCA \": {\"value\": \" mlx5\","
    " \"from\": \"/etc/nccl.conf:4\"}}}}],"
    " \"nccl\": {\"files\": []}, \"processes\": {\"processes\": ["
    "{\"pid\": 10, \"unit\": \"vllm.service\", \"started\": 1000,"
    " \"env\": {\"NCCL_PROTO\": \"LL128\", \"NCCL_ALGO\": null}},"
    "{\"pid\": 11, \"unit\": null, \"started\": 1000, \"env\": {}},"
    "{\"pid\": 12, \"unit\": null, \"started\": 3000, \"env\": {}},"
    "{\"pid\": 13, \"started\": 900, \"env\": {}, \"error\":"
    " \"permission denied\"}], \"withheld\": 2}}";

static int
has(const struct layers *ly, const char *text, int drift)
{
	size_t i;

	for (i = 0; i < ly->n; i++)
		if (strcmp(ly->f[i].text, text) == 0 &&
		    ly->f[i].kind == drift)
			return 1;
	return 0;
}

static void
dump(const struct layers *ly)
{
	size_t i;

	for (i = 0; i < ly->n; i++)
		fprintf(stderr, "  [%d] %s\n", ly->f[i].kind, ly->f[i].text);
}

#define ASSERT_HAS(ly, t, dr)	do {					\
	if (!has(ly, t, dr)) {						\
		dump(ly);						\
		ck_abort_msg("no finding of kind %d: %s", dr, t);	\
	}								\
} while (0)

START_TEST(test_findings)
{
	struct playbook pb;
	struct host_state st;
	struct layers ly;
	json_t *r = json_loads(svc_reply, 0, NULL);

	ck_assert_ptr_nonnull(r);
	memset(&pb, 0, sizeof(pb));
	memset(&st, 0, sizeof(st));
	pb.policy = ENVCTL_POLICY_SETDEFAULT;
	st.mtime = 2000;
	layers_parse(&ly, r, &pb, &d, &st, NULL, 0);
	ASSERT_HAS(&ly, "vllm.service sets NCCL_PROTO=Simple (Environment= in "
	    "/etc/systemd/system/vllm.service.d/nccl.conf:2): envctl's LL is "
	    "shadowed (policy: setdefault)", 1);
	/* A secret is masked on both sides. */
	ASSERT_HAS(&ly, "vllm.service sets API_TOKEN=******** "
	    "(EnvironmentFile= in /etc/vllm.env:2): envctl's ******** is "
	    "shadowed (policy: setdefault)", 1);
	ASSERT_HAS(&ly, "vllm.service: EnvironmentFile=/etc/vllm.env is "
	    "missing", 0);
	ASSERT_HAS(&ly, "vllm.service: /etc/nccl.conf:1: NCCL does not trim "
	    "spaces", 0);
	ASSERT_HAS(&ly, "vllm.service: /etc/nccl.conf:2 sets NCCL_ALGO=Tree, "
	    "which NCCL ignores: the environment (envctl's Ring) wins", 0);
	ASSERT_HAS(&ly, "worker 10 (vllm.service) runs with NCCL_PROTO=LL128, "
	    "want LL: restart it", 1);
	/* 13's environment could not be read; its age is enough. */
	ASSERT_HAS(&ly, "2 workers started before the file last changed "
	    "(1970-01-01T00:33:20Z) and run the old one: restart them (pid "
	    "11, 13)", 1);
	ASSERT_HAS(&ly, "worker 13: permission denied", 0);
	ASSERT_HAS(&ly, "2 workers of services the agent's policy does not "
	    "list were not read", 0);
	ASSERT_HAS(&ly, "vllm.service: systemctl show disagrees: Environment: "
	    "systemd has NCCL_PROTO=LL128", 0);
	ASSERT_HAS(&ly, "vllm.service runs /opt/venv/bin/python3, which is not "
	    "an interpreter envctl manages on this host: list it in "
	    "interpreters:", 0);
	ASSERT_HAS(&ly, "vllm.service sets PYTHONPATH=/srv/lib "
	    "(/etc/vllm.env:3): its Python may import another sitecustomize "
	    "than the one envctl manages", 0);
	/* Where each value comes from (facts). */
	ASSERT_HAS(&ly, "vllm.service: NCCL_ALGO=Ring, set by the unit too "
	    "(EnvironmentFile= in /etc/vllm.env:1)", 2);
	ASSERT_HAS(&ly, "vllm.service: /etc/nccl.conf:3 gives "
	    "NCCL_SOCKET_IFNAME=eth0 to workers whose environment does not "
	    "set it", 2);
	ck_assert_uint_eq(ly.ndrift, 4);
	ck_assert_uint_eq(ly.n, 14);
	layers_release(&ly);

	/* A service that runs a managed interpreter is not named. */
	{
		const char *in[] = { "python3", "/opt/venv/bin/python3" };

		layers_parse(&ly, r, &pb, &d, &st, in, 2);
		ck_assert_uint_eq(ly.n, 13);
	}
	/* 10 by its value, 11 and 13 by their age; 12 is newer. */
	ck_assert_uint_eq(ly.stale, 3);
	ck_assert_uint_eq(ly.workers, 4);
	layers_release(&ly);

	/* override: the unit's value loses, which is not drift. */
	pb.policy = ENVCTL_POLICY_OVERRIDE;
	layers_parse(&ly, r, &pb, &d, &st, NULL, 0);
	ASSERT_HAS(&ly, "vllm.service sets NCCL_PROTO=Simple (Environment= in "
	    "/etc/systemd/system/vllm.service.d/nccl.conf:2): sitecustomize "
	    "overrides it with LL (policy: override)", 0);
	ck_assert_uint_eq(ly.ndrift, 2);
	layers_release(&ly);
	json_decref(r);
}
END_TEST

/* Errors and malformed replies are warnings, never trusted, never fatal. */
START_TEST(test_bad_replies)
{
	static const char *const bad[] = {
		"{\"ok\": false, \"code\": \"EINVALID\", \"message\": "
		    "\"service 'x.service': not listed in /etc/envctl/agent.conf\"}",
		"{\"ok\": true, \"services\": [{\"found\": true}]}",
		"{\"ok\": true, \"services\": [{\"unit\": \"a.service\"}]}",
		"{\"ok\": true, \"services\": 3, \"processes\": [1, 2]}",
		"{\"ok\": true, \"processes\": {\"processes\": [{\"pid\": \"x\","
		    " \"env\": {\"NCCL_PROTO\": 5}}]}}",
		"{}",
	};
	static const char *const first[] = {
		"layers: service 'x.service': not listed in "
		    "/etc/envctl/agent.conf",
		"layers: a service without 'unit' in the reply",
		"a.service: no unit file found (services:)",
		NULL,
		NULL,
		"layers: reply has no boolean 'ok'",
	};
	struct playbook pb;
	struct layers ly;
	size_t i;
	json_t *r;

	memset(&pb, 0, sizeof(pb));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = json_loads(bad[i], 0, NULL);
		ck_assert_ptr_nonnull(r);
		layers_parse(&ly, r, &pb, &d, NULL, NULL, 0);
		ck_assert_uint_eq(ly.ndrift, 0);
		if (first[i] != NULL) {
			ck_assert_uint_eq(ly.n, 1);
			ck_assert_str_eq(ly.f[0].text, first[i]);
		}
		layers_release(&ly);
		json_decref(r);
	}
}
END_TEST

START_TEST(test_request)
{
	struct playbook pb;
	char *svcs[] = { "vllm.service" };
	const char *mine[] = { "sglang.service", "a@1.service" };
	struct host h;
	json_t *q;
	char *s;

	memset(&pb, 0, sizeof(pb));
	q = layers_request(&pb, NULL, &d, 4);
	s = json_dumps(q, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(s, "{\"id\":4,\"op\":\"layers\",\"processes\":[],"
	    "\"services\":[],\"vars\":[\"NCCL_PROTO\",\"NCCL_ALGO\","
	    "\"API_TOKEN\"]}");
	free(s);
	json_decref(q);
	pb.services = svcs;
	pb.nservices = 1;
	q = layers_request(&pb, NULL, &d, 4);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(q,
	    "services"), 0)), "vllm.service");
	json_decref(q);
	/* The inventory's envctl_services win. */
	memset(&h, 0, sizeof(h));
	h.services = mine;
	h.nservices = 2;
	q = layers_request(&pb, &h, &d, 4);
	s = json_dumps(json_object_get(q, "services"), JSON_COMPACT);
	ck_assert_str_eq(s, "[\"sglang.service\",\"a@1.service\"]");
	free(s);
	json_decref(q);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("layers");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_findings);
	tcase_add_test(tc, test_bad_replies);
	tcase_add_test(tc, test_request);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
