/* plan.c - one host's plan (see plan.h). */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/diff.h"
#include "controller/inventory.h"
#include "controller/playbook.h"

#define DIFF_MAX	(32u * 1024 * 1024)

const char *
outcome_name(enum outcome o)
{
	static const char *const names[] = { "ok", "changed", "pending",
		"failed", "unreachable", "skipped" };

	return names[o];
}

/* Sends hello and read together, then takes both replies. */
static int
exchange(struct host_plan *hp, struct agentlink *l, const struct playbook *pb,
    int fork, int timeout_ms, json_t **hello,
    json_t **read, struct err *err)
{
	json_t *req;
	int r;

	req = json_pack("{s:s, s:i, s:i}", "op", "hello", "id", 1,
	    "protocol", ENVCTL_PROTO_VERSION);
	r = agentlink_send(l, req, err);
	json_decref(req);
	if (r != 0)
		return r;
	req = hoststate_request(pb, hp->host, &hp->d, 2, timeout_ms);
	if (fork)
		json_object_set_new(req, "fork", json_true());
	r = agentlink_send(l, req, err);
	json_decref(req);
	if (r != 0)
		return r;
	if ((r = agentlink_recv(l, hello, err)) != 0 ||
	    (r = proto_reply_error(*hello, err)) != 0)
		return r;
	if ((r = agentlink_recv(l, read, err)) != 0 ||
	    (r = proto_reply_error(*read, err)) != 0)
		return r;
	return 0;
}

static void
compare(struct host_plan *hp, const struct playbook *pb)
{
	const struct host_state *st = &hp->st;
	size_t i;

	hash_sha256_hex(hp->want_sha256, hp->d.content.data,
	    hp->d.content.len);
	hp->file_matches = st->exists &&
	    strcmp(st->sha256, hp->want_sha256) == 0;
	hp->effects = xcalloc(hp->d.nvars + 1, sizeof(*hp->effects));
	hp->neffects = hp->d.nvars;
	hp->all_in_effect = st->startup_error == NULL &&
	    st->start_failed == NULL;
	for (i = 0; i < hp->d.nvars; i++) {
		struct var_effect *e = &hp->effects[i];

		e->name = hp->d.vars[i].name;
		e->want = hp->d.vars[i].value;
		e->secret = hp->d.vars[i].secret;
		e->now = hoststate_value(st, e->name);
		e->in_effect = e->now != NULL && e->want != NULL &&
		    strcmp(e->now, e->want) == 0;
		if (!e->in_effect)
			hp->all_in_effect = 0;
	}
	for (i = 0; i < st->nchecks; i++)
		if (!st->checks[i].ok)
			hp->checks_failed++;
	(void)pb;
}

static const struct hs_check *
first_failed(const struct host_state *st)
{
	size_t i;

	for (i = 0; i < st->nchecks; i++)
		if (!st->checks[i].ok)
			return &st->checks[i];
	return NULL;
}

int
plan_begin(struct host_plan *hp, const struct host *h,
    const struct playbook *pb)
{
	hp->host = h;
	hp->block_mode = pb->mode == ENVCTL_MODE_BLOCK;
	hp->outcome = ENVCTL_OUT_FAILED;
	buf_init(&hp->diff, DIFF_MAX);
	return desired_values(&hp->d, pb, hp->host, &hp->err);
}

int
plan_read(struct host_plan *hp, const struct playbook *pb,
    const json_t *hello, const json_t *read)
{
	struct buf la = ENVCTL_BUF_INIT, lb = ENVCTL_BUF_INIT;
	int r;

	if ((r = hoststate_parse(&hp->st, hello, read, &hp->err)) != 0)
		goto out;
	hp->have_state = 1;
	r = desired_content(&hp->d, pb, hp->host, hp->st.exists ?
	    hp->st.content.data : NULL, hp->st.content.len, hp->st.path,
	    &hp->err);
	if (r != 0)
		goto out;
	compare(hp, pb);
	buf_addf(&la, "a%s", hp->st.path);
	buf_addf(&lb, "b%s", hp->st.path);
	if ((r = diff_unified(&hp->diff, hp->st.content.data,
	    hp->st.content.len, hp->d.content.data, hp->d.content.len,
	    la.data, lb.data, &hp->err)) != 0)
		goto out;
	hp->outcome = hp->file_matches && hp->all_in_effect ?
	    ENVCTL_OUT_OK : ENVCTL_OUT_PENDING;
	if (hp->checks_failed > 0) {
		/* A value that points nowhere is not installed, nor in sync. */
		const struct hs_check *k = first_failed(&hp->st);

		hp->outcome = ENVCTL_OUT_FAILED;
		r = err_set(&hp->err, ENVCTL_EINVALID, "%d check%s failed: %s "
		    "'%s' %s (check: %s)", hp->checks_failed,
		    hp->checks_failed == 1 ? "" : "s", k->name, k->path,
		    k->reason != NULL ? k->reason : "failed", k->kind);
	}
out:
	buf_release(&la);
	buf_release(&lb);
	return r;
}

int
plan_fetch(struct host_plan *hp, struct agentlink *l,
    const struct playbook *pb, int fork)
{
	json_t *hello = NULL, *read = NULL;
	int r;

	/* The probe's deadline on the host ends before the controller's. */
	if ((r = exchange(hp, l, pb, fork, agentlink_host_ms(l), &hello,
	    &read, &hp->err)) == 0)
		r = plan_read(hp, pb, hello, read);
	json_decref(hello);
	json_decref(read);
	return r;
}

void
plan_release(struct host_plan *hp)
{
	err_release(&hp->err);
	if (hp->have_state)
		hoststate_release(&hp->st);
	desired_release(&hp->d);
	free(hp->effects);
	buf_release(&hp->diff);
	memset(hp, 0, sizeof(*hp));
}
