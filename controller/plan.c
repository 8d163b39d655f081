/* plan.c - one host's plan (see plan.h). */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/diff.h"
#include "controller/gpufacts.h"
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

/*
 * Sends hello and a read per interpreter together, then takes the
 * replies: hello checked, each read as it came (ok:false included).
 */
static int
exchange(struct agentlink *l, const struct host_plan *hp,
    const struct playbook *pb, const char *const *interps, size_t n,
    int fork, const char *backup_dir, const json_t *then, json_t **hello,
    json_t **reads, json_t **layers, struct err *err)
{
	json_t *req;
	size_t i;
	int r = 0, ms = agentlink_host_ms(l);

	/* plan_facts() said hello already. */
	if (*hello == NULL) {
		req = json_pack("{s:s, s:i, s:i}", "op", "hello", "id", 1,
		    "protocol", ENVCTL_PROTO_VERSION);
		r = agentlink_send(l, req, err);
		json_decref(req);
	}
	for (i = 0; r == 0 && i < n; i++) {
		/* The probe's deadline on the host ends before ours. */
		req = hoststate_request(pb, interps[i], &hp->d,
		    (json_int_t)i + PLAN_READ_ID, ms);
		/* A change follows: the fork server starts meanwhile. */
		if (fork && i == 0)
			json_object_set_new(req, "prefork", json_true());
		if (backup_dir != NULL)
			json_object_set_new(req, "backups", json_pack("{s:s}",
			    "dir", backup_dir));
		r = agentlink_send(l, req, err);
		json_decref(req);
	}
	if (r == 0) {
		/* The same round trip: what else decides the values. */
		req = layers_request(pb, hp->host, &hp->d,
		    (json_int_t)n + PLAN_READ_ID);
		r = agentlink_send(l, req, err);
		json_decref(req);
	}
	if (r == 0 && then != NULL)
		r = agentlink_send(l, then, err);
	if (r != 0)
		return r;
	if (*hello == NULL && ((r = agentlink_recv(l, hello, err)) != 0 ||
	    (r = proto_reply_error(*hello, err)) != 0))
		return r;
	for (i = 0; i < n; i++)
		if ((r = agentlink_recv(l, &reads[i], err)) != 0)
			return r;
	return agentlink_recv(l, layers, err);
}

static int
same(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static void
compare(struct host_plan *hp, const struct playbook *pb)
{
	const struct host_state *st = &hp->st;
	const char *v;
	size_t i, k;

	hash_sha256_hex(hp->want_sha256, hp->d.content.data,
	    hp->d.content.len);
	hp->file_matches = st->exists &&
	    strcmp(st->sha256, hp->want_sha256) == 0;
	hp->effects = xcalloc(hp->d.nvars + 1, sizeof(*hp->effects));
	hp->neffects = hp->d.nvars;
	hp->all_in_effect = 1;
	for (k = 0; k < hoststate_ninterps(st); k++)
		if (hoststate_startup_error(st, k) != NULL ||
		    hoststate_start_failed(st, k) != NULL)
			hp->all_in_effect = 0;
	for (i = 0; i < hp->d.nvars; i++) {
		struct var_effect *e = &hp->effects[i];

		e->name = hp->d.vars[i].name;
		e->want = hp->d.vars[i].value;
		e->secret = hp->d.vars[i].secret;
		e->now = hoststate_value(st, e->name);
		e->in_effect = same(e->now, e->want) && e->want != NULL;
		for (k = 1; k < hoststate_ninterps(st) && e->other == 0; k++) {
			v = hoststate_value_in(st, k, e->name);
			if (!same(v, e->now)) {
				e->other = k;
				e->other_now = v;
				e->in_effect = 0;
			}
		}
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

/* plan_begin() with the facts of gf (NULL: none) as variables. */
static int
begin(struct host_plan *hp, const struct host *h, const struct playbook *pb,
    const struct gpufacts *gf)
{
	struct desired_fact *f = NULL;
	size_t i, n = 0;
	int r;

	hp->host = h;
	hp->block_mode = pb->mode == ENVCTL_MODE_BLOCK;
	hp->outcome = ENVCTL_OUT_FAILED;
	if (hp->diff.alloc == 0)
		buf_init(&hp->diff, DIFF_MAX);
	if (gf != NULL) {
		f = xcalloc(gpufacts_nvars() + 1, sizeof(*f));
		for (i = 0; i < gpufacts_nvars(); i++)
			if ((f[n].value = gpufacts_var(gf, i,
			    &f[n].name)) != NULL)
				n++;
	}
	r = desired_values_facts(&hp->d, pb, hp->host, f, n, &hp->err);
	free(f);
	return r;
}

int
plan_begin(struct host_plan *hp, const struct host *h,
    const struct playbook *pb)
{
	return begin(hp, h, pb, NULL);
}

int
plan_facts(struct host_plan *hp, struct agentlink *l, const struct host *h,
    const struct playbook *pb, unsigned mask, const char *const *interps,
    size_t n)
{
	json_t *req, *rep = NULL;
	int r;

	hp->host = h;
	hp->outcome = ENVCTL_OUT_FAILED;
	buf_init(&hp->diff, DIFF_MAX);
	req = json_pack("{s:s, s:i, s:i}", "op", "hello", "id", 1,
	    "protocol", ENVCTL_PROTO_VERSION);
	r = agentlink_send(l, req, &hp->err);
	json_decref(req);
	if (r == 0) {
		req = gpufacts_request(9, mask, interps, n, NULL,
		    agentlink_host_ms(l));
		r = agentlink_send(l, req, &hp->err);
		json_decref(req);
	}
	if (r == 0 && ((r = agentlink_recv(l, &hp->hello, &hp->err)) != 0 ||
	    (r = proto_reply_error(hp->hello, &hp->err)) != 0))
		goto out;
	if (r == 0 && (r = agentlink_recv(l, &rep, &hp->err)) == 0 &&
	    (r = gpufacts_parse(&hp->gf, rep, &hp->err)) == 0)
		r = begin(hp, h, pb, hp->gf);
out:
	json_decref(rep);
	return r;
}

int
plan_read(struct host_plan *hp, const struct playbook *pb,
    const json_t *hello, const json_t *const *reads, size_t n)
{
	struct buf la = ENVCTL_BUF_INIT, lb = ENVCTL_BUF_INIT;
	int r;

	if ((r = hoststate_parse(&hp->st, hello, reads, n, &hp->err)) != 0)
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

static int
read_ok(const json_t *reply)
{
	return json_is_true(json_object_get(reply, "ok"));
}

/*
 * The layers reply judged for the host's first row: its drift makes an
 * otherwise right row pending, with nothing for apply to change.
 */
static void
plan_layers(struct host_plan **rows, size_t nrows,
    const struct playbook *pb, const char *const *interps, size_t n,
    const json_t *reply)
{
	struct host_plan *hp = rows[0];
	const char **paths;
	size_t i, k, m = 0;

	if (reply == NULL)
		return;
	/* The interpreters as named, and as each reported itself. */
	paths = xcalloc(n + 2 * ENVCTL_PLAYBOOK_MAX_INTERPRETERS + 1,
	    sizeof(*paths));
	for (i = 0; i < n; i++)
		paths[m++] = interps[i];
	for (i = 0; i < nrows; i++)
		for (k = 0; rows[i]->have_state &&
		    k < hoststate_ninterps(&rows[i]->st) && m < n +
		    2 * ENVCTL_PLAYBOOK_MAX_INTERPRETERS; k++)
			paths[m++] = hoststate_interp(&rows[i]->st, k);
	layers_parse(&hp->ly, reply, pb, &hp->d, hp->have_state ? &hp->st :
	    NULL, paths, m);
	free(paths);
	if (hp->ly.ndrift > 0 && hp->outcome == ENVCTL_OUT_OK) {
		hp->outcome = ENVCTL_OUT_PENDING;
		hp->layer_only = 1;
	}
}

/* Row k of rows, begun for h when it is not row 0. */
static struct host_plan *
row(struct host_plan **rows, size_t k, const struct playbook *pb,
    const char *const *interps)
{
	struct host_plan *hp = rows[k];

	if (k > 0)
		begin(hp, rows[0]->host, pb, rows[0]->gf);
	hp->interps = interps;
	hp->ninterps = 0;
	return hp;
}

int
plan_fetch(struct host_plan **rows, size_t *nrows, struct agentlink *l,
    const struct playbook *pb, const char *const *interps, size_t n,
    int fork, const char *backup_dir, const json_t *then)
{
	json_t *hello = NULL, *layers = NULL;
	json_t **reads = xcalloc(n + 1, sizeof(*reads));
	const json_t **mine = xcalloc(n + 1, sizeof(*mine));
	const char **names = xcalloc(n + 1, sizeof(*names));
	size_t *of = xcalloc(n + 1, sizeof(*of)), i, j, k;
	const char *real;
	int r;

	*nrows = 1;
	rows[0]->interps = interps;
	rows[0]->ninterps = n;
	hello = json_incref(rows[0]->hello);
	if ((r = exchange(l, rows[0], pb, interps, n, fork, backup_dir, then,
	    &hello, reads, &layers, &rows[0]->err)) != 0)
		goto out;
	/* Each interpreter joins the row of the first that shares its file. */
	for (i = 0; i < n; i++) {
		of[i] = *nrows;
		real = read_ok(reads[i]) ?
		    hoststate_read_real(reads[i]) : NULL;
		for (j = 0; real != NULL && j < i; j++)
			if (read_ok(reads[j]) &&
			    hoststate_read_real(reads[j]) != NULL &&
			    strcmp(hoststate_read_real(reads[j]), real) == 0) {
				of[i] = of[j];
				break;
			}
		if (i == 0)
			of[i] = 0;
		else if (of[i] == *nrows)
			(*nrows)++;
	}
	/* Interpreter names are kept per row, in a copy of interps' order. */
	for (k = 0, j = 0; k < *nrows; k++) {
		struct host_plan *hp = row(rows, k, pb, names + j);
		size_t m = 0;

		for (i = 0; i < n; i++)
			if (of[i] == k) {
				names[j++] = interps[i];
				mine[m++] = reads[i];
			}
		hp->ninterps = m;
		hp->backups = json_incref(json_object_get(mine[0],
		    "backups"));
		if (proto_reply_error(mine[0], &hp->err) != 0) {
			err_context(&hp->err, "interpreter '%s'",
			    hp->interps[0]);
			continue;
		}
		plan_read(hp, pb, hello, mine, m);
	}
	plan_layers(rows, *nrows, pb, interps, n, layers);
	r = rows[0]->err.code;
out:
	json_decref(hello);
	json_decref(layers);
	for (i = 0; i < n; i++)
		json_decref(reads[i]);
	free(reads);
	free(mine);
	free(of);
	/* names is the rows': freed with rows[0] by plan_release(). */
	rows[0]->names = names;
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
	free(hp->names);
	layers_release(&hp->ly);
	gpufacts_free(hp->gf);
	json_decref(hp->hello);
	json_decref(hp->backups);
	buf_release(&hp->diff);
	memset(hp, 0, sizeof(*hp));
}
