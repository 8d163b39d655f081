/* rollout.c - canary batches and a failure budget (see rollout.h). */
#include "rollout.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/inventory.h"

#define SERIAL_HINT	"give a count of hosts (1 or more) or a percentage " \
			"(1% to 100%)"
#define BUDGET_HINT	"give a count of hosts (0 or more) or a percentage " \
			"(0% to 100%)"

/* One size of len bytes at s: decimal digits, then an optional '%'. */
static int
parse_size(struct rollout_size *sz, const char *s, size_t len)
{
	unsigned long v = 0;
	size_t i, digits = len;

	sz->percent = len > 0 && s[len - 1] == '%';
	if (sz->percent)
		digits--;
	if (digits == 0 || digits > 7)
		return -1;
	for (i = 0; i < digits; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > (sz->percent ? 100 : ENVCTL_ROLLOUT_MAXCOUNT))
		return -1;
	sz->n = (unsigned)v;
	return 0;
}

int
rollout_parse_serial(struct rollout_spec *rs, const char *text,
    struct err *err)
{
	const char *p = text, *end;
	size_t len;

	rs->nsizes = 0;
	for (;;) {
		end = strchr(p, ',');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		if (len == 0)
			return err_set(err, ENVCTL_EUSAGE, "--serial: an empty "
			    "batch size in '%s': %s", text, SERIAL_HINT);
		if (rs->nsizes == ENVCTL_ROLLOUT_MAXSIZES)
			return err_set(err, ENVCTL_EUSAGE, "--serial: more "
			    "than %d batch sizes", ENVCTL_ROLLOUT_MAXSIZES);
		if (parse_size(&rs->sizes[rs->nsizes], p, len) != 0 ||
		    rs->sizes[rs->nsizes].n == 0)
			return err_set(err, ENVCTL_EUSAGE, "--serial: '%.*s' is "
			    "no batch size: %s", (int)len, p, SERIAL_HINT);
		rs->nsizes++;
		if (end == NULL)
			return 0;
		p = end + 1;
	}
}

int
rollout_parse_max_fail(struct rollout_spec *rs, const char *text,
    struct err *err)
{
	if (parse_size(&rs->max_fail, text, strlen(text)) != 0)
		return err_set(err, ENVCTL_EUSAGE, "--max-fail: '%s' is no "
		    "failure budget: %s", text, BUDGET_HINT);
	rs->has_budget = 1;
	return 0;
}

/* The length of the name at p in a comma-separated list, and *end. */
static size_t
list_item(const char *p, const char **end)
{
	*end = strchr(p, ',');
	return *end != NULL ? (size_t)(*end - p) : strlen(p);
}

int
rollout_parse_groups(struct rollout_spec *rs, const char *text,
    struct err *err)
{
	const char *p = text, *end, *q, *qend;
	size_t len;

	rs->by_group = NULL;
	rs->ngroups = 0;
	for (;;) {
		if ((len = list_item(p, &end)) == 0)
			return err_set(err, ENVCTL_EUSAGE, "--by-group: an "
			    "empty group name in '%s'", text);
		if (rs->ngroups == ENVCTL_ROLLOUT_MAXGROUPS)
			return err_set(err, ENVCTL_EUSAGE, "--by-group: more "
			    "than %d groups", ENVCTL_ROLLOUT_MAXGROUPS);
		for (q = text; q < p; q = qend + 1)
			if (list_item(q, &qend) == len &&
			    memcmp(q, p, len) == 0)
				return err_set(err, ENVCTL_EUSAGE,
				    "--by-group: '%.*s' is listed twice",
				    (int)len, p);
		rs->ngroups++;
		if (end == NULL)
			break;
		p = end + 1;
	}
	rs->by_group = text;
	return 0;
}

/* The index in run->groups of the first group h is in; ngroups: none. */
static size_t
group_of(const struct rollout_run *run, const struct host *h)
{
	size_t g;

	for (g = 0; g < run->ngroups; g++)
		if (host_in_group(h, run->groups[g]))
			break;
	return g;
}

int
rollout_groups(struct rollout_run *run, const struct rollout_spec *rs,
    const struct inventory *inv, const struct host *const *hosts,
    size_t n, struct err *err)
{
	const char *p, *end, *name = NULL;
	size_t len, i, ng = inventory_ngroups(inv), miss = 0, first = 0;

	if (rs->by_group == NULL)
		return 0;
	run->groups = xcalloc(rs->ngroups + 1, sizeof(*run->groups));
	for (p = rs->by_group; p != NULL; p = end != NULL ? end + 1 : NULL) {
		len = list_item(p, &end);
		for (i = 0; i < ng; i++) {
			name = inventory_group(inv, i);
			if (strlen(name) == len && memcmp(name, p, len) == 0)
				break;
		}
		if (i == ng)
			return err_set(err, ENVCTL_ENOTFOUND, "--by-group: "
			    "group '%.*s' is not in the inventory '%s'",
			    (int)len, p, inventory_path(inv));
		run->groups[run->ngroups++] = name;
	}
	for (i = 0; i < n; i++)
		if (group_of(run, hosts[i]) == run->ngroups && miss++ == 0)
			first = i;
	if (miss == 1)
		return err_set(err, ENVCTL_EINVALID, "--by-group: host '%s' "
		    "is in none of the groups %s: list its group, end the "
		    "list with all, or leave it out (-l)", hosts[first]->name,
		    rs->by_group);
	if (miss > 1)
		return err_set(err, ENVCTL_EINVALID, "--by-group: host '%s' "
		    "and %zu more are in none of the groups %s: list their "
		    "groups, end the list with all, or leave them out (-l)",
		    hosts[first]->name, miss - 1, rs->by_group);
	return 0;
}

/* A size for total hosts: a percentage is rounded down. */
static size_t
of_total(const struct rollout_size *sz, size_t total)
{
	if (!sz->percent)
		return sz->n;
	return total / 100 * sz->n + total % 100 * sz->n / 100;
}

size_t *
rollout_split(const struct rollout_spec *rs, size_t total, size_t *n)
{
	size_t *out = xcalloc(total + 1, sizeof(*out)), left, s, k;

	*n = 0;
	for (left = total, k = 0; left > 0; k++) {
		if (rs->nsizes == 0)
			s = total;
		else
			s = of_total(&rs->sizes[k < rs->nsizes ? k :
			    rs->nsizes - 1], total);
		if (s == 0)
			s = 1;		/* however small the percentage */
		if (s > left)
			s = left;
		out[(*n)++] = s;
		left -= s;
	}
	return out;
}

void
rollout_batches(struct rollout_run *run, const struct rollout_spec *rs,
    const struct host *const *hosts, size_t n, size_t *batch)
{
	size_t ng = run->ngroups > 0 ? run->ngroups : 1, *grp, *sizes;
	size_t g, i, k, m, nsizes;
	struct rollout_batch *b;

	grp = xcalloc(n + 1, sizeof(*grp));
	for (i = 0; i < n; i++) {
		grp[i] = run->ngroups > 0 ? group_of(run, hosts[i]) : 0;
		batch[i] = 0;
	}
	/* A batch has a host at least: n batches at most. */
	run->batches = xcalloc(n + 1, sizeof(*run->batches));
	run->nbatches = 0;
	run->total = 0;
	for (g = 0; g < ng; g++) {
		for (m = 0, i = 0; i < n; i++)
			m += grp[i] == g;
		sizes = rollout_split(rs, m, &nsizes);
		for (k = 0; k < nsizes; k++) {
			b = &run->batches[run->nbatches + k];
			b->names = xcalloc(sizes[k] + 1, sizeof(*b->names));
			b->group = run->ngroups > 0 ? run->groups[g] : NULL;
		}
		/* Every size is filled before the next batch starts. */
		for (k = 0, i = 0; i < n; i++) {
			if (grp[i] != g)
				continue;
			b = &run->batches[run->nbatches + k];
			if (b->nhosts == sizes[k])
				b = &run->batches[run->nbatches + ++k];
			b->names[b->nhosts++] = hosts[i]->name;
			batch[i] = run->nbatches + k + 1;
		}
		run->nbatches += nsizes;
		run->total += m;
		free(sizes);
	}
	run->budget = rollout_budget(rs, run->total);
	free(grp);
}

size_t
rollout_budget(const struct rollout_spec *rs, size_t total)
{
	if (!rs->has_budget)
		return SIZE_MAX;
	return of_total(&rs->max_fail, total);
}

void
rollout_plan_text(struct buf *out, const struct rollout_run *run)
{
	const struct rollout_batch *b;
	size_t i;

	for (i = 0; i < run->nbatches; i++) {
		b = &run->batches[i];
		if (b->group == NULL)
			buf_addf(out, "%s%zu", i == 0 ? ", in batches of " :
			    ", ", b->nhosts);
		else if (i == 0 || strcmp(b->group, b[-1].group) != 0)
			buf_addf(out, "%s %s (%zu", i == 0 ? ", by group:" :
			    "),", b->group, b->nhosts);
		else
			buf_addf(out, ", %zu", b->nhosts);
	}
	if (run->nbatches > 0 && run->batches[0].group != NULL)
		buf_addch(out, ')');
}

/* " in group rack2" for a batch of --by-group, else nothing. */
static void
in_group(struct buf *out, const struct rollout_batch *b)
{
	if (b->group != NULL)
		buf_addf(out, " in group %s", b->group);
}

void
rollout_reason(struct buf *out, const struct rollout_run *run)
{
	buf_addf(out, "rollout stopped after batch %zu", run->stopped_after);
	in_group(out, &run->batches[run->stopped_after - 1]);
	buf_addf(out, " (%zu failure%s > budget %zu)", run->failures,
	    run->failures == 1 ? "" : "s", run->budget);
}

void
rollout_batch_text(struct buf *out, const struct rollout_run *run, size_t i)
{
	const struct rollout_batch *b = &run->batches[i];
	const struct plan_counts *c = &b->counts;

	buf_addf(out, "batch %zu/%zu", i + 1, run->nbatches);
	in_group(out, b);
	buf_addf(out, ": %zu host%s: %zu changed", b->nhosts,
	    b->nhosts == 1 ? "" : "s", c->changed);
	if (c->ok > 0)
		buf_addf(out, ", %zu ok", c->ok);
	if (c->failed > 0)
		buf_addf(out, ", %zu failed", c->failed);
	if (c->unreachable > 0)
		buf_addf(out, ", %zu unreachable", c->unreachable);
	if (c->skipped > 0)
		buf_addf(out, ", %zu skipped", c->skipped);
	buf_addch(out, '\n');
}

static json_t *
size_json(const struct rollout_size *sz)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *j;

	buf_addf(&b, "%u%s", sz->n, sz->percent ? "%" : "");
	j = json_string(b.data);
	buf_release(&b);
	return j;
}

json_t *
rollout_json(const struct rollout_spec *rs, const struct rollout_run *run)
{
	json_t *serial = json_array(), *batches = json_array(), *names;
	json_t *groups = json_array();
	struct buf why = ENVCTL_BUF_INIT;
	const struct rollout_batch *b;
	json_t *doc;
	size_t i, k;

	for (i = 0; i < rs->nsizes; i++)
		json_array_append_new(serial, size_json(&rs->sizes[i]));
	for (i = 0; i < run->ngroups; i++)
		json_array_append_new(groups, json_string(run->groups[i]));
	for (i = 0; i < run->nbatches; i++) {
		b = &run->batches[i];
		names = json_array();
		for (k = 0; k < b->nhosts; k++)
			json_array_append_new(names,
			    json_string(b->names[k]));
		json_array_append_new(batches, json_pack("{s:I, s:o, s:o, "
		    "s:I, s:I, s:I, s:I, s:I}", "index", (json_int_t)(i + 1),
		    "group", b->group != NULL ? json_string(b->group) :
		    json_null(), "hosts", names, "ok", (json_int_t)b->counts.ok,
		    "changed", (json_int_t)b->counts.changed,
		    "failed", (json_int_t)b->counts.failed,
		    "unreachable", (json_int_t)b->counts.unreachable,
		    "skipped", (json_int_t)b->counts.skipped));
	}
	if (run->stopped_after > 0)
		rollout_reason(&why, run);
	if (rs->by_group == NULL) {
		json_decref(groups);
		groups = json_null();
	}
	doc = json_pack("{s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o, s:o}",
	    "serial", serial,
	    "max_fail", rs->has_budget ? size_json(&rs->max_fail) :
	    json_null(),
	    "by_group", groups,
	    "budget", run->budget != SIZE_MAX ?
	    json_integer((json_int_t)run->budget) : json_null(),
	    "hosts", (json_int_t)run->total,
	    "failures", (json_int_t)run->failures,
	    "batches", batches,
	    "stopped_after", run->stopped_after > 0 ?
	    json_integer((json_int_t)run->stopped_after) : json_null(),
	    "reason", run->stopped_after > 0 ? json_string(why.data) :
	    json_null());
	buf_release(&why);
	return doc;
}

void
rollout_run_release(struct rollout_run *run)
{
	size_t i;

	for (i = 0; i < run->nbatches; i++)
		free(run->batches[i].names);
	free(run->batches);
	free(run->groups);
	memset(run, 0, sizeof(*run));
}
