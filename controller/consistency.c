/* consistency.c - NCCL settings inside a group (see consistency.h). */
#include "consistency.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/xmalloc.h"
#include "controller/inventory.h"
#include "controller/plan.h"

#define MASK		"********"
#define UNSET		"(unset)"
#define VALUES_SHOWN	4

static int
obs_cmp(const void *a, const void *b)
{
	const struct consistency_obs *x = a, *y = b;
	int r;

	if ((r = strcmp(x->group, y->group)) != 0 ||
	    (r = strcmp(x->var, y->var)) != 0)
		return r;
	return strcmp(x->host, y->host);
}

static int
is_nccl(const char *name)
{
	return strncmp(name, "NCCL_", 5) == 0;
}

static const char *
shown(const char *v, int secret)
{
	return v == NULL ? UNSET : secret ? MASK : v;
}

/* Values compare as they are; a secret is only shown masked. */
static int
same(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* The first row of each host among hps, in order. */
static size_t
first_rows(const struct host_plan **out, struct host_plan *const *hps,
    size_t n)
{
	size_t i, k, m = 0;

	for (i = 0; i < n; i++) {
		if (!hps[i]->have_state)
			continue;
		for (k = 0; k < m; k++)
			if (out[k]->host == hps[i]->host)
				break;
		if (k == m)
			out[m++] = hps[i];
	}
	return m;
}

/*
 * "Ring on 6 hosts, Tree on 2" for the values of obs[from, to) at the
 * member off (want or now), most frequent first; the number of distinct
 * values is returned.
 */
static size_t
tally(struct buf *b, const struct consistency_obs *o, size_t from,
    size_t to, int now)
{
	const char **vals = xcalloc(to - from + 1, sizeof(*vals));
	size_t *cnt = xcalloc(to - from + 1, sizeof(*cnt)), i, k, nv = 0;
	size_t best, shownv = 0;
	const char *v;

	for (i = from; i < to; i++) {
		v = now ? o[i].now : o[i].want;
		for (k = 0; k < nv; k++)
			if (same(vals[k], v))
				break;
		if (k == nv)
			vals[nv++] = v;
		cnt[k]++;
	}
	while (b != NULL && shownv < nv && shownv < VALUES_SHOWN) {
		for (best = 0, k = 1; k < nv; k++)
			if (cnt[k] > cnt[best])
				best = k;
		buf_addf(b, "%s%s on %zu host%s", shownv > 0 ? ", " : "",
		    shown(vals[best], o[from].secret), cnt[best],
		    cnt[best] == 1 ? "" : "s");
		cnt[best] = 0;
		shownv++;
	}
	if (b != NULL && nv > VALUES_SHOWN)
		buf_addf(b, " and %zu more", nv - VALUES_SHOWN);
	free(vals);
	free(cnt);
	return nv;
}

static void
add(struct consistency *c, const struct consistency_obs *o, int now,
    struct buf *b)
{
	c->w = xreallocarray(c->w, c->n + 1, sizeof(*c->w));
	c->w[c->n].group = xstrdup(o->group);
	c->w[c->n].variable = xstrdup(o->var);
	c->w[c->n].now = now;
	c->w[c->n].text = buf_detach(b, NULL);
	c->n++;
}

void
consistency_find(struct consistency *c, struct host_plan *const *hps,
    size_t n)
{
	const struct host_plan **rows = xcalloc(n + 1, sizeof(*rows));
	struct consistency_obs *o = NULL;
	size_t m, i, g, v, no = 0, ao = 0;

	m = first_rows(rows, hps, n);
	for (i = 0; i < m; i++) {
		const struct host *h = rows[i]->host;

		for (g = 0; g < host_ngroups(h); g++) {
			for (v = 0; v < rows[i]->neffects; v++) {
				const struct var_effect *e =
				    &rows[i]->effects[v];

				ENVCTL_GROW(o, no + 1, ao);
				o[no].group = host_group(h, g);
				o[no].var = e->name;
				o[no].want = e->want;
				o[no].now = e->now;
				o[no].secret = e->secret;
				o[no].host = h->name;
				no++;
			}
		}
	}
	consistency_find_obs(c, o, no);
	free(o);
	free(rows);
}

void
consistency_find_obs(struct consistency *c, struct consistency_obs *o,
    size_t no)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i, j, k = 0;

	memset(c, 0, sizeof(*c));
	/* Only NCCL's variables, in the groups that name a set of hosts. */
	for (i = 0; i < no; i++)
		if (is_nccl(o[i].var) && strcmp(o[i].group, "ungrouped") != 0)
			o[k++] = o[i];
	no = k;
	if (no > 1)
		qsort(o, no, sizeof(*o), obs_cmp);
	for (i = 0; i < no; i = j) {
		for (j = i + 1; j < no && strcmp(o[j].group, o[i].group) == 0 &&
		    strcmp(o[j].var, o[i].var) == 0; j++)
			;
		if (j - i < 2)
			continue;
		if (tally(NULL, o, i, j, 0) > 1) {
			buf_addf(&b, "%s: %s would be ", o[i].group, o[i].var);
			tally(&b, o, i, j, 0);
			buf_addstr(&b, ": ranks of one job must agree");
			add(c, &o[i], 0, &b);
		} else if (tally(NULL, o, i, j, 1) > 1) {
			buf_addf(&b, "%s: %s is ", o[i].group, o[i].var);
			tally(&b, o, i, j, 1);
			buf_addstr(&b, " now (mid-rollout?): ranks of one job "
			    "must agree");
			add(c, &o[i], 1, &b);
		}
	}
	buf_release(&b);
}

void
consistency_text(struct buf *out, const struct consistency *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		buf_addf(out, "warning: group %s\n", c->w[i].text);
}

json_t *
consistency_json(const struct consistency *c)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < c->n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s}",
		    "group", c->w[i].group, "variable", c->w[i].variable,
		    "kind", c->w[i].now ? "now" : "desired", "text",
		    c->w[i].text));
	return a;
}

void
consistency_release(struct consistency *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->w[i].group);
		free(c->w[i].variable);
		free(c->w[i].text);
	}
	free(c->w);
	memset(c, 0, sizeof(*c));
}
