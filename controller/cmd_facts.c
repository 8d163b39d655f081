/* cmd_facts.c - envctl facts: what each host runs and what is in effect. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/plan.h"
#include "controller/playbook.h"
#include "controller/report.h"

static const char *const usage[] = {
	"envctl facts INVENTORY [-p PLAYBOOK] [-l LIMIT] [-j N] [--json]",
	NULL
};

struct printer {
	struct report_opts ro;
	int		 json;
};

static void
print_host(void *arg, struct host_plan *hp)
{
	struct printer *p = arg;
	struct buf b = ENVCTL_BUF_INIT;

	if (p->json)
		return;
	report_facts_host(&b, hp, &p->ro);
	out_write(b.data, b.len);
	buf_wipe(&b);
}

int
cmd_facts(int argc, char **argv)
{
	struct fleet_args a;
	struct opt opts[ENVCTL_FLEET_NOPTS + 1];
	struct context ctx = { 0 };
	struct agent_binary ab = { 0 };
	struct host_plan **hps = NULL;
	struct printer p;
	json_t *root, *hosts;
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	size_t n = 0, i;
	int nops, code, failed = 0;

	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	memset(&p, 0, sizeof(p));
	p.json = a.json;
	if ((p.ro.color = cmd_use_color(a.color, STDOUT_FILENO)) < 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	p.ro.color = p.ro.color && !a.json;
	code = cmd_run_plans(&ctx, operands[0], &a, &ab, NULL, &hps, &n,
	    print_host, &p);
	if (code != ENVCTL_EXIT_OK)
		goto out;
	for (i = 0; i < n; i++)
		if (hps[i]->outcome == ENVCTL_OUT_FAILED ||
		    hps[i]->outcome == ENVCTL_OUT_UNREACHABLE)
			failed++;
	if (a.json) {
		hosts = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(hosts,
			    report_plan_json(hps[i]));
		root = json_pack("{s:i, s:s, s:o}", "format", 1, "command",
		    "facts", "hosts", hosts);
		out_json(root);
	}
	code = failed > 0 ? ENVCTL_EXIT_FAIL : ENVCTL_EXIT_OK;
out:
	cmd_plans_free(hps, n);
	agent_binary_release(&ab);
	context_release(&ctx);
	free(operands);
	return code;
}
