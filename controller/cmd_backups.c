/* cmd_backups.c - envctl backups: the backups each host keeps. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/backups.h"
#include "controller/cmd.h"
#include "controller/context.h"
#include "controller/inventory.h"
#include "controller/opts.h"
#include "controller/output.h"
#include "controller/plan.h"
#include "controller/playbook.h"
#include "controller/report.h"

static const char *const usage[] = {
	"envctl backups INVENTORY [-p PLAYBOOK] [-l LIMIT] [-j N] [--json]",
	NULL
};

struct slot {
	struct backup_list bl;
	struct err	 err;
};

struct run {
	const struct playbook *pb;
	struct slot	*slots;		/* by inventory host */
	struct report_opts ro;
	int		 json;
};

static void
fetch(void *arg, struct host_plan *hp, struct agentlink *l)
{
	struct run *r = arg;
	struct slot *s = &r->slots[hp->host->index];

	if (backups_fetch(&s->bl, l, hp->st.path, r->pb, &s->err) != 0)
		err_sethost(&s->err, hp->host->name);
}

static void
print_host(void *arg, struct host_plan *hp)
{
	struct run *r = arg;
	struct slot *s = &r->slots[hp->host->index];
	struct buf b = ENVCTL_BUF_INIT;
	struct vis v = ENVCTL_VIS_INIT;

	if (r->json)
		return;
	if (!hp->have_state) {
		report_plan_host(&b, hp, &r->ro);
	} else if (s->err.code != 0) {
		err_format(&s->err, &b);
	} else {
		buf_addf(&b, "%s: %zu backup%s of %s\n",
		    vis_str(&v, hp->host->name), s->bl.n, s->bl.n == 1 ? "" :
		    "s", vis_str(&v, s->bl.real != NULL ? s->bl.real :
		    hp->st.real));
		backups_text(&b, &s->bl);
	}
	out_write(b.data, b.len);
	buf_release(&b);
	vis_release(&v);
}

static json_t *
host_json(const struct host_plan *hp, const struct slot *s)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *h, *list;
	size_t i;

	h = json_pack("{s:s}", "name", hp->host->name);
	if (!hp->have_state || s->err.code != 0) {
		err_format(hp->have_state ? &s->err : &hp->err, &b);
		if (b.len > 0)
			buf_truncate(&b, b.len - 1);
		json_object_set_new(h, "error", json_string(b.data));
		buf_release(&b);
		return h;
	}
	list = json_array();
	for (i = 0; i < s->bl.n; i++) {
		const struct backup_entry *e = &s->bl.v[i];

		json_array_append_new(list, json_pack("{s:s, s:s?, s:b, s:I, "
		    "s:s?, s:s?, s:s?}", "id", e->id, "time", e->time,
		    "absent", e->absent, "size", (json_int_t)e->size,
		    "sha256", e->sha256, "playbook", e->playbook,
		    "controller", e->controller));
	}
	json_object_set_new(h, "path", json_string(s->bl.real != NULL ?
	    s->bl.real : hp->st.real));
	json_object_set_new(h, "backups", list);
	json_object_set_new(h, "error", json_null());
	return h;
}

int
cmd_backups(int argc, char **argv)
{
	struct fleet_args a;
	struct opt opts[ENVCTL_FLEET_NOPTS + 1];
	struct context ctx = { 0 };
	struct agent_binary ab = { 0 };
	struct host_plan **hps = NULL;
	struct run r;
	struct plan_then then = { fetch, NULL, 0 };
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	json_t *root, *hosts;
	size_t n = 0, i, nh = 0;
	int nops, code, failed = 0;

	memset(&r, 0, sizeof(r));
	cmd_fleet_options(opts, &a);
	opts[ENVCTL_FLEET_NOPTS] = (struct opt)ENVCTL_OPT_END_ENTRY;
	if (!cmd_parse(usage, opts, argc, argv, operands, &nops, 1, 1, &code))
		goto out;
	if ((r.ro.color = cmd_use_color(a.color, STDOUT_FILENO)) < 0) {
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	r.json = a.json;
	if ((code = cmd_load(&ctx, operands[0], &a)) != ENVCTL_EXIT_OK)
		goto out;
	r.pb = ctx.pb;
	nh = inventory_nhosts(ctx.inv);
	r.slots = xcalloc(nh + 1, sizeof(*r.slots));
	then.arg = &r;
	code = cmd_run_plans(&ctx, operands[0], &a, &ab, &then, &hps, &n,
	    print_host, &r);
	if (code != ENVCTL_EXIT_OK)
		goto out;
	hosts = json_array();
	for (i = 0; i < n; i++) {
		if (!hps[i]->have_state ||
		    r.slots[hps[i]->host->index].err.code != 0)
			failed++;
		json_array_append_new(hosts, host_json(hps[i],
		    &r.slots[hps[i]->host->index]));
	}
	if (a.json) {
		root = json_pack("{s:i, s:s, s:o}", "format", 1, "command",
		    "backups", "hosts", hosts);
		out_json(root);
	} else
		json_decref(hosts);
	code = failed > 0 ? ENVCTL_EXIT_FAIL : ENVCTL_EXIT_OK;
out:
	for (i = 0; i < nh; i++) {
		backup_list_release(&r.slots[i].bl);
		err_release(&r.slots[i].err);
	}
	free(r.slots);
	cmd_plans_free(hps, n);
	agent_binary_release(&ab);
	context_release(&ctx);
	free(operands);
	return code;
}
