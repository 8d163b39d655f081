/* repmerge.c - the reports of a sharded run as one (see repmerge.h). */
#include "repmerge.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/consistency.h"
#include "controller/shard.h"

/* The outcome words of the summary, as every output says them. */
static const char *const outcomes[] = {
	"ok", "changed", "pending", "failed", "unreachable", "skipped"
};
#define NOUTCOMES	(sizeof(outcomes) / sizeof(outcomes[0]))

/* A host row of some input, and where it sorts. */
struct row {
	json_t		*host;		/* borrowed from its input */
	json_int_t	 index;		/* inventory order; -1: unknown */
	unsigned	 shard;
	size_t		 seq;
};

static const char *
str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The shard of envelope doc; EPARSE when it has none that reads. */
static int
get_shard(struct shard *s, const json_t *doc, const char *name,
    struct err *err)
{
	const json_t *o = json_object_get(doc, "shard");
	json_int_t k, n;

	memset(s, 0, sizeof(*s));
	if (o == NULL)
		return err_set(err, ENVCTL_EPARSE, "'%s' has no 'shard': "
		    "written by an envctl without --shard", name);
	if (json_is_null(o))
		return 0;
	k = json_integer_value(json_object_get(o, "index"));
	n = json_integer_value(json_object_get(o, "count"));
	if (!json_is_integer(json_object_get(o, "index")) ||
	    !json_is_integer(json_object_get(o, "count")) || n < 1 ||
	    n > ENVCTL_SHARD_MAX || k < 0 || k >= n)
		return err_set(err, ENVCTL_EPARSE, "'%s': 'shard' is no "
		    "{index, count} with 0 <= index < count", name);
	s->index = (unsigned)k;
	s->count = (unsigned)n;
	return 0;
}

/* in[i] against in[0]: one command, inventory and playbook. */
static int
same_run(const struct repmerge_input *a, const struct repmerge_input *b,
    struct err *err)
{
	const char *x, *y;

	if (strcmp(str(a->doc, "command"), str(b->doc, "command")) != 0)
		return err_set(err, ENVCTL_EINVALID, "'%s' is a %s report, "
		    "but '%s' is a %s report", b->name, str(b->doc, "command"),
		    a->name, str(a->doc, "command"));
	x = str(a->doc, "inventory_sha256");
	y = str(b->doc, "inventory_sha256");
	if (strcmp(x, y) != 0)
		return err_set(err, ENVCTL_EINVALID, "'%s' read another "
		    "inventory (sha256 %.12s...) than '%s' (%.12s...)",
		    b->name, y, a->name, x);
	x = str(json_object_get(a->doc, "playbook"), "sha256");
	y = str(json_object_get(b->doc, "playbook"), "sha256");
	if (x == NULL || y == NULL || strcmp(x, y) != 0)
		return err_set(err, ENVCTL_EINVALID, "'%s' used another "
		    "playbook (sha256 %.12s...) than '%s' (%.12s...)", b->name,
		    y != NULL ? y : "unknown", a->name,
		    x != NULL ? x : "unknown");
	return 0;
}

/* One input's envelope: the fields the merge reads must be there. */
static int
check_envelope(const struct repmerge_input *in, struct err *err)
{
	const json_t *d = in->doc, *h;
	size_t i;

	if (!json_is_object(d) || json_integer_value(json_object_get(d,
	    "format")) != 1 || str(d, "command") == NULL ||
	    !json_is_array(json_object_get(d, "hosts")) ||
	    !json_is_object(json_object_get(d, "summary")) ||
	    !json_is_object(json_object_get(d, "playbook")))
		return err_set(err, ENVCTL_EPARSE, "'%s' is not an envctl "
		    "report (a --json or --report document of format 1)",
		    in->name);
	if (str(d, "inventory_sha256") == NULL)
		return err_set(err, ENVCTL_EPARSE, "'%s' has no "
		    "'inventory_sha256': written by an envctl without --shard",
		    in->name);
	json_array_foreach(json_object_get(d, "hosts"), i, h)
		if (str(h, "name") == NULL || str(h, "outcome") == NULL)
			return err_set(err, ENVCTL_EPARSE, "'%s': host %zu has "
			    "no name or outcome", in->name, i);
	return 0;
}

static int
row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	/* Unknown positions last, then shard order. */
	if (x->index != y->index) {
		if (x->index < 0 || y->index < 0)
			return x->index < 0 ? 1 : -1;
		return x->index < y->index ? -1 : 1;
	}
	if (x->shard != y->shard)
		return x->shard < y->shard ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The group warnings of plan and drift, found again over all hosts. */
static json_t *
groups_json(const json_t *hosts)
{
	struct consistency c;
	struct consistency_obs *o = NULL;
	const json_t *h, *g, *v, *prev;
	size_t i, k, j, gi, vi, no = 0, ao = 0;
	json_t *out;

	json_array_foreach(hosts, i, h) {
		if (!json_is_array(json_object_get(h, "variables")))
			continue;
		/* A host counts once, by its first row that was read. */
		for (k = 0; k < i; k++) {
			prev = json_array_get(hosts, k);
			if (json_is_array(json_object_get(prev, "variables")) &&
			    strcmp(str(prev, "name"), str(h, "name")) == 0)
				break;
		}
		if (k < i)
			continue;
		json_array_foreach(json_object_get(h, "groups"), gi, g) {
			json_array_foreach(json_object_get(h, "variables"),
			    vi, v) {
				if (json_string_value(g) == NULL ||
				    str(v, "name") == NULL)
					continue;
				j = no;
				ENVCTL_GROW(o, no + 1, ao);
				o[j].group = json_string_value(g);
				o[j].var = str(v, "name");
				o[j].want = str(v, "want");
				o[j].now = str(v, "now");
				o[j].secret = json_is_true(json_object_get(v,
				    "secret"));
				o[j].host = str(h, "name");
				no++;
			}
		}
	}
	consistency_find_obs(&c, o, no);
	out = consistency_json(&c);
	consistency_release(&c);
	free(o);
	return out;
}

/* The run: the earliest start, and the span to the latest end. */
static json_t *
run_json(const struct repmerge_input *in, size_t n)
{
	double start = 0, end = 0, ts, dur;
	const json_t *r;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		r = json_object_get(in[i].doc, "run");
		if (!json_is_object(r))
			continue;
		ts = json_number_value(json_object_get(r, "timestamp"));
		dur = json_number_value(json_object_get(r,
		    "duration_seconds"));
		if (k == 0 || ts < start)
			start = ts;
		if (k == 0 || ts + dur > end)
			end = ts + dur;
		k++;
	}
	if (k == 0)
		return NULL;
	return json_pack("{s:f, s:f}", "timestamp", start, "duration_seconds",
	    end - start);
}

int
repmerge_reports(json_t **out, int *status, const struct repmerge_input *in,
    size_t n, struct err *err)
{
	struct shard *sh = xcalloc(n + 1, sizeof(*sh));
	const char **names = xcalloc(n + 1, sizeof(*names));
	struct row *rows = NULL;
	size_t i, k, nrows = 0, arows = 0, first = 0;
	json_int_t counts[NOUTCOMES] = { 0 };
	json_t *doc = NULL, *hosts, *h, *summary, *run;
	const char *cmd;
	int r = 0;

	*out = NULL;
	*status = 1;
	for (i = 0; i < n; i++) {
		names[i] = in[i].name;
		if ((r = check_envelope(&in[i], err)) != 0 ||
		    (r = get_shard(&sh[i], in[i].doc, in[i].name, err)) != 0 ||
		    (i > 0 && (r = same_run(&in[0], &in[i], err)) != 0))
			goto out;
	}
	if ((r = shard_check_set(sh, names, n, err)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (sh[i].index == 0)
			first = i;
		json_array_foreach(json_object_get(in[i].doc, "hosts"), k,
		    h) {
			const json_t *ix = json_object_get(h,
			    "inventory_index");

			ENVCTL_GROW(rows, nrows + 1, arows);
			rows[nrows].host = h;
			rows[nrows].index = json_is_integer(ix) ?
			    json_integer_value(ix) : -1;
			rows[nrows].shard = sh[i].index;
			rows[nrows].seq = k;
			nrows++;
		}
	}
	if (nrows > 1)
		qsort(rows, nrows, sizeof(*rows), row_cmp);
	hosts = json_array();
	for (i = 0; i < nrows; i++) {
		for (k = 0; k < NOUTCOMES; k++)
			if (strcmp(str(rows[i].host, "outcome"),
			    outcomes[k]) == 0)
				break;
		if (k == NOUTCOMES) {
			json_decref(hosts);
			r = err_set(err, ENVCTL_EPARSE, "host '%s': unknown "
			    "outcome '%s'", str(rows[i].host, "name"),
			    str(rows[i].host, "outcome"));
			goto out;
		}
		counts[k]++;
		json_array_append(hosts, rows[i].host);
	}
	/* The first shard's envelope, with what the merge recomputes. */
	doc = json_deep_copy(in[first].doc);
	summary = json_object();
	for (k = 0; k < NOUTCOMES; k++)
		json_object_set_new(summary, outcomes[k],
		    json_integer(counts[k]));
	json_object_set_new(doc, "summary", summary);
	if (json_object_get(doc, "groups") != NULL)
		json_object_set_new(doc, "groups", groups_json(hosts));
	json_object_set_new(doc, "hosts", hosts);
	json_object_set_new(doc, "shard", json_null());
	if ((run = run_json(in, n)) != NULL)
		json_object_set_new(doc, "run", run);
	cmd = str(doc, "command");
	if (counts[3] > 0 || counts[4] > 0)
		*status = 1;
	else if (counts[2] > 0 && (strcmp(cmd, "plan") == 0 ||
	    strcmp(cmd, "drift") == 0))
		*status = 2;
	else
		*status = 0;
	*out = doc;
out:
	free(rows);
	free(sh);
	free(names);
	return r;
}
