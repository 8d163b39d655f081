/*
 * check_consistency.c - controller/consistency.c: NCCL values that differ
 * inside an inventory group, desired or now, with secrets masked.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/consistency.h"
#include "controller/inventory.h"
#include "controller/plan.h"
#include "testutil.h"

static const char inv_text[] =
    "all:\n"
    "  children:\n"
    "    a100:\n"
    "      hosts: {g1: {}, g2: {}, g3: {}}\n"
    "    h100:\n"
    "      hosts: {g4: {}, g5: {}}\n"
    "  hosts:\n"
    "    lone: {}\n";

/* A row for host name whose variable name is want now now. */
static void
row(struct host_plan *hp, const struct inventory *inv, const char *host,
    const char *name, const char *want, const char *now, int secret)
{
	memset(hp, 0, sizeof(*hp));
	hp->host = inventory_find(inv, host);
	ck_assert_ptr_nonnull(hp->host);
	hp->have_state = 1;
	hp->effects = calloc(1, sizeof(*hp->effects));
	hp->neffects = 1;
	hp->effects[0].name = name;
	hp->effects[0].want = want;
	hp->effects[0].now = now;
	hp->effects[0].secret = secret;
}

static struct inventory *
load(void)
{
	struct err err = ENVCTL_ERR_INIT;
	struct inventory *inv = NULL;

	ck_assert_int_eq(inventory_load_string(&inv, inv_text,
	    strlen(inv_text), "hosts.yaml", &err), 0);
	return inv;
}

START_TEST(test_groups)
{
	struct inventory *inv = load();
	struct host_plan hp[6], *hps[6];
	struct consistency c;
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	/* a100: desired Ring, Ring, Tree; h100: agree on Ring, one not
	   yet there; lone is in no group but ungrouped. */
	row(&hp[0], inv, "g1", "NCCL_ALGO", "Ring", "Ring", 0);
	row(&hp[1], inv, "g2", "NCCL_ALGO", "Ring", "Ring", 0);
	row(&hp[2], inv, "g3", "NCCL_ALGO", "Tree", NULL, 0);
	row(&hp[3], inv, "g4", "NCCL_ALGO", "Ring", "Ring", 0);
	row(&hp[4], inv, "g5", "NCCL_ALGO", "Ring", "Tree", 0);
	row(&hp[5], inv, "lone", "NCCL_ALGO", "Tree", NULL, 0);
	for (i = 0; i < 6; i++)
		hps[i] = &hp[i];
	consistency_find(&c, hps, 6);
	consistency_text(&b, &c);
	ck_assert_str_eq(b.data,
	    "warning: group a100: NCCL_ALGO would be Ring on 2 hosts, Tree "
	    "on 1 host: ranks of one job must agree\n"
	    "warning: group h100: NCCL_ALGO is Ring on 1 host, Tree on 1 "
	    "host now (mid-rollout?): ranks of one job must agree\n");
	consistency_release(&c);
	buf_reset(&b);

	/* Not NCCL: not looked at; a secret is masked; a host's second row
	   (file) counts once. */
	hp[0].effects[0].name = "CUDA_HOME";
	hp[1].effects[0].name = "CUDA_HOME";
	hp[2].effects[0].name = "CUDA_HOME";
	hp[3].effects[0].secret = hp[4].effects[0].secret = 1;
	hps[5] = &hp[4];
	consistency_find(&c, hps, 6);
	consistency_text(&b, &c);
	ck_assert_str_eq(b.data,
	    "warning: group h100: NCCL_ALGO is ******** on 1 host, ******** "
	    "on 1 host now (mid-rollout?): ranks of one job must agree\n");
	consistency_release(&c);
	buf_release(&b);
	for (i = 0; i < 6; i++)
		free(hp[i].effects);
	inventory_free(inv);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("consistency");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_groups);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
