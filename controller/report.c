/* report.c - plan and facts results as text and JSON (see report.h). */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/apply.h"
#include "controller/atomicfile.h"
#include "controller/gpufacts.h"
#include "controller/inventory.h"
#include "controller/plan.h"
#include "controller/planfile.h"
#include "controller/playbook.h"
#include "controller/pylit.h"
#include "controller/shard.h"

#define C_RED	"\033[31m"
#define C_GREEN	"\033[32m"
#define C_CYAN	"\033[36m"
#define C_YELLOW	"\033[33m"
#define C_BOLD	"\033[1m"
#define C_OFF	"\033[m"

static const char *
col(const struct report_opts *ro, const char *c)
{
	return ro->color ? c : "";
}

static const char *
outcome_color(const struct report_opts *ro, enum outcome o)
{
	switch (o) {
	case ENVCTL_OUT_OK:
		return col(ro, C_GREEN);
	case ENVCTL_OUT_PENDING:
	case ENVCTL_OUT_CHANGED:
		return col(ro, C_CYAN);
	case ENVCTL_OUT_FAILED:
	case ENVCTL_OUT_UNREACHABLE:
		return col(ro, C_RED);
	case ENVCTL_OUT_SKIPPED:
		break;
	}
	return "";
}

static const char *
shown(const char *v, int secret)
{
	if (v == NULL)
		return "(unset)";
	return secret ? ENVCTL_MASK : v;
}

/* A variable's value now: nothing is set where start-up fails. */
static const char *
shown_now(const struct host_plan *hp, const struct var_effect *e)
{
	if (e->now == NULL && hp->st.start_failed != NULL)
		return "(start-up fails)";
	return shown(e->now, e->secret);
}

static const char *
find(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
	const char *p, *end = hay + hlen;

	for (p = hay; nlen <= (size_t)(end - p); p++) {
		p = memchr(p, needle[0], (size_t)(end - p) - nlen + 1);
		if (p == NULL)
			return NULL;
		if (memcmp(p, needle, nlen) == 0)
			return p;
	}
	return NULL;
}

/* Replaces every occurrence of needle in b with ENVCTL_MASK. */
static void
mask(struct buf *b, const char *needle, size_t nlen)
{
	struct buf out = ENVCTL_BUF_INIT;
	const char *p = b->data, *end = b->data + b->len, *hit;

	if (nlen == 0)
		return;
	while ((hit = find(p, (size_t)(end - p), needle, nlen)) != NULL) {
		buf_add(&out, p, (size_t)(hit - p));
		buf_addstr(&out, ENVCTL_MASK);
		p = hit + nlen;
	}
	if (p == b->data)
		goto out;
	buf_add(&out, p, (size_t)(end - p));
	buf_reset(b);
	buf_add(b, out.data, out.len);
out:
	buf_wipe(&out);
}

/* The diff with every secret value (as it appears in Python) masked. */
static void
masked_diff(struct buf *out, const struct host_plan *hp)
{
	struct buf lit = ENVCTL_BUF_INIT;
	size_t i;

	buf_add(out, hp->diff.data, hp->diff.len);
	for (i = 0; i < hp->neffects; i++) {
		const struct var_effect *e = &hp->effects[i];
		const char *vals[2] = { e->want, e->now };
		int k;

		if (!e->secret)
			continue;
		for (k = 0; k < 2; k++) {
			if (vals[k] == NULL || vals[k][0] == '\0')
				continue;
			buf_reset(&lit);
			if (pylit_quote(&lit, vals[k], strlen(vals[k]),
			    NULL) != 0 || lit.len < 2)
				continue;
			/* Without the quotes: the literal's inside. */
			mask(out, lit.data + 1, lit.len - 2);
			mask(out, vals[k], strlen(vals[k]));
		}
	}
	buf_wipe(&lit);
}

static void
diff_lines(struct buf *out, const struct buf *diff,
    const struct report_opts *ro)
{
	const char *p = diff->data, *end = diff->data + diff->len, *nl;
	const char *c;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		c = "";
		if (ro->color) {
			if (strncmp(p, "---", 3) == 0 ||
			    strncmp(p, "+++", 3) == 0)
				c = C_BOLD;
			else if (*p == '-')
				c = C_RED;
			else if (*p == '+')
				c = C_GREEN;
			else if (*p == '@')
				c = C_CYAN;
		}
		buf_addf(out, "    %s", c);
		str_addvis(out, p, (size_t)(nl - p), ENVCTL_VIS_TAB);
		buf_addf(out, "%s\n", c[0] != '\0' ? C_OFF : "");
		p = nl + 1;
	}
}

static void
file_line(struct buf *out, const struct host_state *st, struct vis *v)
{
	size_t i;

	buf_addf(out, "    file      %s", vis_str(v, st->path));
	for (i = 1; i < st->nchain; i++)
		buf_addf(out, " -> %s", vis_str(v, st->chain[i]));
	if (st->exists)
		buf_addf(out, " (%04o %s:%s, %zu bytes)\n", st->mode,
		    vis_str(v, st->owner != NULL ? st->owner : "?"),
		    vis_str(v, st->group != NULL ? st->group : "?"),
		    st->content.len);
	else
		buf_addstr(out, " (absent: will be created)\n");
}

/*
 * The name a row is shown by: the host's, and the file's where the host
 * has several (each is a row of its own).
 */
static const char *
row_name(const struct host_plan *hp, struct vis *v, struct buf *tmp)
{
	if (!hp->several || !hp->have_state)
		return vis_str(v, hp->host->name);
	buf_reset(tmp);
	buf_addf(tmp, "%s (%s)", hp->host->name, hp->st.path);
	return vis_str(v, tmp->data);
}

/* Lines for the further interpreters that import the same file. */
static void
interp_lines(struct buf *out, const struct host_plan *hp,
    const struct report_opts *ro, struct vis *v)
{
	const struct host_state *st = &hp->st;
	const struct hs_interp *in;
	size_t k;

	if (st->nalso == 0)
		return;
	buf_addf(out, "    interpreters %s", vis_str(v, st->interp_path));
	for (k = 0; k < st->nalso; k++)
		buf_addf(out, ", %s", vis_str(v, st->also[k].path));
	buf_addch(out, '\n');
	for (k = 0; k < st->nalso; k++) {
		in = &st->also[k];
		if (in->shadowed)
			buf_addf(out, "    %swarning%s   %s imports '%s' "
			    "instead: this file has no effect there\n",
			    col(ro, C_RED), col(ro, C_OFF), vis_str(v,
			    in->path), vis_str(v, in->imported != NULL ?
			    in->imported : "another sitecustomize"));
		if (in->startup_error != NULL)
			buf_addf(out, "    %serror%s     in %s, sitecustomize "
			    "raises at startup: %s\n", col(ro, C_RED),
			    col(ro, C_OFF), vis_str(v, in->path),
			    vis_str(v, in->startup_error));
		if (in->start_failed != NULL)
			buf_addf(out, "    %serror%s     in %s, start-up "
			    "fails: %s\n", col(ro, C_RED), col(ro, C_OFF),
			    vis_str(v, in->path), vis_str(v,
			    in->start_failed));
	}
}

/*
 * The launchers', NCCL files' and workers' findings, one line each; info
 * (where each value comes from) only for facts.
 */
static void
layer_lines(struct buf *out, const struct host_plan *hp,
    const struct report_opts *ro, struct vis *v, int info)
{
	static const char *const kinds[] = { "warning", "drift", "source" };
	const struct layer_finding *f;
	size_t i;

	for (i = 0; i < hp->ly.n; i++) {
		f = &hp->ly.f[i];
		if (f->kind == ENVCTL_LAYER_INFO && !info)
			continue;
		buf_addf(out, "    %s%-9s%s %s\n", col(ro, f->kind ==
		    ENVCTL_LAYER_DRIFT ? C_RED : f->kind ==
		    ENVCTL_LAYER_WARNING ? C_YELLOW : ""), kinds[f->kind],
		    col(ro, C_OFF), vis_str(v, f->text));
	}
}

/*
 * The value rules' warnings of the host's desired values (valrules.h):
 * "warning   FILE:LINE:COL: NCCL_BUFFSIZE: '16M' is read as 16 ...".
 */
static void
rule_lines(struct buf *out, const struct host_plan *hp,
    const struct report_opts *ro, struct vis *v)
{
	struct buf all = ENVCTL_BUF_INIT, ln = ENVCTL_BUF_INIT;
	const char *line, *end, *w, *name = hp->host->name;
	size_t skip = strlen(name);

	if (hp->d.warnings.code == 0 && hp->d.warnings.msg == NULL)
		return;
	err_format(&hp->d.warnings, &all);
	for (line = all.data; *line != '\0'; line = *end ? end + 1 : end) {
		end = strchr(line, '\n');
		if (end == NULL)
			end = line + strlen(line);
		if (strncmp(line, name, skip) == 0 && line[skip] == ':' &&
		    line[skip + 1] == ' ')
			line += skip + 2;
		buf_addf(out, "    %swarning%s   ", col(ro, C_YELLOW),
		    col(ro, C_OFF));
		if ((w = strstr(line, "warning: ")) != NULL && w < end) {
			buf_add(out, line, (size_t)(w - line));
			line = w + strlen("warning: ");
		}
		buf_reset(&ln);
		buf_add(&ln, line, (size_t)(end - line));
		buf_addf(out, "%s\n", vis_str(v, ln.data));
	}
	buf_release(&ln);
	buf_release(&all);
}

void
report_plan_host(struct buf *out, const struct host_plan *hp,
    const struct report_opts *ro)
{
	const struct host_state *st = &hp->st;
	struct buf tmp = ENVCTL_BUF_INIT;
	struct vis v = ENVCTL_VIS_INIT;
	const char *name = row_name(hp, &v, &tmp);
	size_t i;

	if (hp->outcome == ENVCTL_OUT_OK && !ro->verbose) {
		if (!ro->quiet)
			buf_addf(out, "%s%s%s: %sok%s\n", col(ro, C_BOLD),
			    name, col(ro, C_OFF),
			    outcome_color(ro, hp->outcome), col(ro, C_OFF));
		goto out;
	}
	buf_addf(out, "%s%s%s: %s%s%s", col(ro, C_BOLD), name,
	    col(ro, C_OFF), outcome_color(ro, hp->outcome),
	    outcome_name(hp->outcome), col(ro, C_OFF));
	if (hp->err.code != 0) {
		const char *msg;
		size_t skip = strlen(name);

		/* The host's name leads the line already. */
		err_format(&hp->err, &tmp);
		msg = tmp.data;
		if (strncmp(msg, name, skip) == 0 &&
		    msg[skip] == ':' && msg[skip + 1] == ' ')
			msg += skip + 2;
		buf_addf(out, ": %.*s", (int)strcspn(msg, "\n"), msg);
		buf_release(&tmp);
	}
	buf_addch(out, '\n');
	if (!hp->have_state)
		goto out;
	file_line(out, st, &v);
	interp_lines(out, hp, ro, &v);
	if (st->shadowed)
		buf_addf(out, "    %swarning%s   %s imports '%s' instead: this "
		    "file has no effect\n", col(ro, C_RED), col(ro, C_OFF),
		    vis_str(&v, st->interp_path), vis_str(&v, st->imported !=
		    NULL ? st->imported : "another sitecustomize"));
	if (st->startup_error != NULL)
		buf_addf(out, "    %serror%s     sitecustomize raises at "
		    "startup: %s\n", col(ro, C_RED), col(ro, C_OFF),
		    vis_str(&v, st->startup_error));
	if (st->start_failed != NULL)
		buf_addf(out, "    %serror%s     start-up fails: %s (the file "
		    "was found without running it)\n", col(ro, C_RED),
		    col(ro, C_OFF), vis_str(&v, st->start_failed));
	for (i = 0; i < hp->neffects; i++) {
		const struct var_effect *e = &hp->effects[i];

		if (e->in_effect)
			buf_addf(out, "    %-28s %s (in effect)\n",
			    vis_str(&v, e->name),
			    vis_str(&v, shown(e->now, e->secret)));
		else if (e->other != 0)
			buf_addf(out, "    %-28s %s, but %s in %s -> %s\n",
			    vis_str(&v, e->name),
			    vis_str(&v, shown_now(hp, e)),
			    vis_str(&v, shown(e->other_now, e->secret)),
			    vis_str(&v, hoststate_interp(st, e->other)),
			    vis_str(&v, shown(e->want, e->secret)));
		else
			buf_addf(out, "    %-28s %s -> %s\n",
			    vis_str(&v, e->name),
			    vis_str(&v, shown_now(hp, e)),
			    vis_str(&v, shown(e->want, e->secret)));
	}
	for (i = 0; i < st->nchecks; i++) {
		const struct hs_check *k = &st->checks[i];

		if (!k->ok)
			buf_addf(out, "    %scheck%s     %s: '%s' %s "
			    "(check: %s)\n", col(ro, C_RED), col(ro, C_OFF),
			    vis_str(&v, k->name), vis_str(&v, k->path),
			    vis_str(&v, k->reason != NULL ? k->reason :
			    "failed"), vis_str(&v, k->kind));
	}
	layer_lines(out, hp, ro, &v, 0);
	rule_lines(out, hp, ro, &v);
	if (hp->block_mode && st->startup_error != NULL)
		buf_addstr(out, "    note      code outside the envctl block "
		    "raises: Python stops there, so a block after it does "
		    "not run\n");
	if (hp->file_matches && !hp->all_in_effect)
		buf_addstr(out, "    note      the file is as desired but its "
		    "values are not in effect\n");
	if (ro->show_diff && hp->diff.len > 0) {
		masked_diff(&tmp, hp);
		diff_lines(out, &tmp, ro);
		buf_wipe(&tmp);
	}
out:
	vis_release(&v);
}

/* facts of a further interpreter that imports the same file. */
static void
also_facts(struct buf *out, const struct hs_interp *in,
    const struct host_plan *hp, struct vis *v)
{
	const char *now;
	size_t i, k;

	buf_addf(out, "    interpreter   %s %s (imports the same file)\n",
	    vis_str(v, in->path), vis_str(v, in->version));
	buf_addf(out, "    imported      %s\n", vis_str(v, in->imported !=
	    NULL ? in->imported : "(none: the import failed or no file)"));
	if (in->startup_error != NULL)
		buf_addf(out, "    startup error %s\n",
		    vis_str(v, in->startup_error));
	if (in->start_failed != NULL)
		buf_addf(out, "    start-up      fails: %s\n",
		    vis_str(v, in->start_failed));
	for (i = 0; i < hp->neffects; i++) {
		now = NULL;
		for (k = 0; k < in->nvalues; k++)
			if (strcmp(in->values[k].name,
			    hp->effects[i].name) == 0)
				now = in->values[k].value;
		buf_addf(out, "    %-28s %s\n",
		    vis_str(v, hp->effects[i].name), vis_str(v, now == NULL &&
		    in->start_failed != NULL ? "(start-up fails)" :
		    shown(now, hp->effects[i].secret)));
	}
}

void
report_facts_host(struct buf *out, const struct host_plan *hp,
    const struct report_opts *ro)
{
	const struct host_state *st = &hp->st;
	struct buf tmp = ENVCTL_BUF_INIT;
	struct vis v = ENVCTL_VIS_INIT;
	size_t i, k;

	if (hp->err.code != 0 || !hp->have_state) {
		report_plan_host(out, hp, ro);
		return;
	}
	buf_addf(out, "%s%s%s:\n", col(ro, C_BOLD),
	    row_name(hp, &v, &tmp), col(ro, C_OFF));
	buf_release(&tmp);
	buf_addf(out, "    agent         %s (%s, user %s, host %s)\n",
	    vis_str(&v, st->agent_version), vis_str(&v, st->arch),
	    vis_str(&v, st->user != NULL ? st->user : "?"),
	    vis_str(&v, st->hostname != NULL ? st->hostname : "?"));
	buf_addf(out, "    interpreter   %s %s\n", vis_str(&v, st->interp_path),
	    vis_str(&v, st->interp_version));
	buf_addf(out, "    sitecustomize %s (%s)\n", vis_str(&v, st->path),
	    vis_str(&v, st->source));
	for (i = 1; i < st->nchain; i++)
		buf_addf(out, "                  -> %s\n",
		    vis_str(&v, st->chain[i]));
	if (st->exists)
		buf_addf(out, "    file          %04o %s:%s, %zu bytes, "
		    "sha256 %s\n", st->mode, vis_str(&v, st->owner != NULL ?
		    st->owner : "?"), vis_str(&v, st->group != NULL ?
		    st->group : "?"), st->content.len, st->sha256);
	else
		buf_addstr(out, "    file          absent\n");
	buf_addf(out, "    imported      %s\n", vis_str(&v, st->imported !=
	    NULL ? st->imported : "(none: the import failed or no file)"));
	if (st->startup_error != NULL)
		buf_addf(out, "    startup error %s\n",
		    vis_str(&v, st->startup_error));
	if (st->start_failed != NULL)
		buf_addf(out, "    start-up      fails: %s (the file was found "
		    "without running it)\n", vis_str(&v, st->start_failed));
	for (i = 0; i < hp->neffects; i++)
		buf_addf(out, "    %-28s %s\n",
		    vis_str(&v, hp->effects[i].name),
		    vis_str(&v, shown_now(hp, &hp->effects[i])));
	for (k = 0; k < st->nalso; k++)
		also_facts(out, &st->also[k], hp, &v);
	layer_lines(out, hp, ro, &v, 1);
	if (hp->gf != NULL)
		gpufacts_text(out, hp->gf, "    ");
	vis_release(&v);
}

void
report_apply_result(struct buf *b, const struct apply_result *ar,
    const struct report_opts *ro)
{
	struct buf e = ENVCTL_BUF_INIT;
	struct vis v = ENVCTL_VIS_INIT;
	const char *msg, *name = vis_str(&v, ar->host->name);

	buf_addf(b, "%s%s%s: %s", ro->color ? "\033[1m" : "", name,
	    ro->color ? "\033[m" : "", outcome_name(ar->outcome));
	if (ar->restored_id != NULL)
		buf_addf(b, " (restored %s; the replaced file is backup %s)",
		    vis_str(&v, ar->restored_id), vis_str(&v,
		    ar->backup_id != NULL ? ar->backup_id : "-"));
	else if (ar->backup_id != NULL)
		buf_addf(b, " (backup %s)", vis_str(&v, ar->backup_id));
	else if (ar->note != NULL)
		buf_addf(b, " (%s)", vis_str(&v, ar->note));
	if (ar->err.code != 0) {
		err_format(&ar->err, &e);
		msg = e.data;
		/* The host's name leads the line already. */
		if (strncmp(msg, name, strlen(name)) == 0 &&
		    msg[strlen(name)] == ':')
			msg += strlen(name) + 2;
		buf_addf(b, ": %.*s", (int)strcspn(msg, "\n"), msg);
		if (ar->err.code == ENVCTL_ECHANGED)
			buf_addstr(b, " (changed since it was read: left as "
			    "it is)");
		buf_release(&e);
	}
	buf_addch(b, '\n');
	if (ar->startup_error != NULL)
		buf_addf(b, "    note      the restored file raises at "
		    "startup: %s\n", vis_str(&v, ar->startup_error));
	if (ar->warning != NULL)
		buf_addf(b, "    %swarning%s   %s\n", ro->color ? "\033[33m" :
		    "", ro->color ? "\033[m" : "", vis_str(&v, ar->warning));
	vis_release(&v);
}

void
report_count(struct plan_counts *c, const struct host_plan *hp)
{
	report_count_outcome(c, hp->outcome);
}

void
report_count_outcome(struct plan_counts *c, enum outcome o)
{
	switch (o) {
	case ENVCTL_OUT_OK:
		c->ok++;
		break;
	case ENVCTL_OUT_PENDING:
		c->pending++;
		break;
	case ENVCTL_OUT_CHANGED:
		c->changed++;
		break;
	case ENVCTL_OUT_FAILED:
		c->failed++;
		break;
	case ENVCTL_OUT_UNREACHABLE:
		c->unreachable++;
		break;
	case ENVCTL_OUT_SKIPPED:
		c->skipped++;
		break;
	}
}

void
report_summary(struct buf *out, const struct plan_counts *c,
    const struct report_opts *ro)
{
	const char *sep = "";

	if (c->changed > 0) {
		buf_addf(out, "%zu changed", c->changed);
		sep = ", ";
	}
	if (c->pending > 0 || (c->changed == 0 && c->ok == 0 &&
	    c->failed == 0 && c->unreachable == 0)) {
		buf_addf(out, "%s%zu to change", sep, c->pending);
		sep = ", ";
	}
	buf_addf(out, "%s%zu in sync", sep, c->ok);
	if (c->failed > 0)
		buf_addf(out, ", %s%zu failed%s", col(ro, C_RED), c->failed,
		    col(ro, C_OFF));
	if (c->unreachable > 0)
		buf_addf(out, ", %s%zu unreachable%s", col(ro, C_RED),
		    c->unreachable, col(ro, C_OFF));
	if (c->skipped > 0)
		buf_addf(out, ", %zu skipped", c->skipped);
	buf_addch(out, '\n');
}

static json_t *
jstr_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

json_t *
report_envelope(const char *command, const char *inventory,
    const struct playbook *pb, const struct plan_counts *c, json_t *hosts)
{
	return json_pack("{s:i, s:s, s:o, s:{s:s, s:s}, s:{s:I, s:I, s:I, "
	    "s:I, s:I, s:I}, s:o}", "format", 1, "command", command,
	    "inventory", jstr_or_null(inventory), "playbook", "name",
	    pb->name, "path", pb->path, "summary",
	    "ok", (json_int_t)c->ok, "changed", (json_int_t)c->changed,
	    "pending", (json_int_t)c->pending,
	    "failed", (json_int_t)c->failed,
	    "unreachable", (json_int_t)c->unreachable,
	    "skipped", (json_int_t)c->skipped, "hosts", hosts);
}

void
report_envelope_shard(json_t *doc, const struct inventory *inv,
    const struct playbook *pb, const struct shard *s)
{
	struct err err = ENVCTL_ERR_INIT;
	char hex[ENVCTL_SHA256_HEX];
	const struct host *h;
	json_t *hosts, *o, *groups;
	size_t i, g;

	json_object_set_new(doc, "inventory_sha256",
	    json_string(inventory_digest(inv)));
	o = json_object_get(doc, "playbook");
	if (planfile_playbook_digest(hex, pb, &err) == 0)
		json_object_set_new(o, "sha256", json_string(hex));
	else
		json_object_set_new(o, "sha256", json_null());
	err_release(&err);
	json_object_set_new(doc, "shard", s->count == 0 ? json_null() :
	    json_pack("{s:i, s:i}", "index", (int)s->index, "count",
	    (int)s->count));
	hosts = json_object_get(doc, "hosts");
	json_array_foreach(hosts, i, o) {
		h = inventory_find(inv, json_string_value(json_object_get(o,
		    "name")));
		if (h == NULL) {
			json_object_set_new(o, "inventory_index", json_null());
			json_object_set_new(o, "groups", json_array());
			continue;
		}
		groups = json_array();
		for (g = 0; g < host_ngroups(h); g++)
			json_array_append_new(groups,
			    json_string(host_group(h, g)));
		json_object_set_new(o, "inventory_index",
		    json_integer((json_int_t)h->index));
		json_object_set_new(o, "groups", groups);
	}
}

json_t *
report_apply_json(const char *name, enum outcome o,
    const struct apply_result *ar, const struct err *err,
    const struct conn_stats *stats)
{
	return json_pack("{s:s, s:s, s:o, s:b, s:o, s:o, s:o}", "name", name,
	    "outcome", outcome_name(o),
	    "backup", jstr_or_null(ar != NULL ? ar->backup_id : NULL),
	    "restored", ar != NULL && ar->restored,
	    "warning", jstr_or_null(ar != NULL ? ar->warning : NULL),
	    "error", report_err_json(err),
	    "stats", stats != NULL ? json_pack("{s:i, s:i}", "channels",
	    stats->channels, "round_trips", stats->round_trips) :
	    json_null());
}

json_t *
report_rollback_json(const char *name, enum outcome o, const char *to,
    const struct apply_result *ar, const struct err *err)
{
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "name", name,
	    "outcome", outcome_name(o),
	    "restored", jstr_or_null(o == ENVCTL_OUT_CHANGED ? to : NULL),
	    "backup", jstr_or_null(ar != NULL ? ar->backup_id : NULL),
	    "startup_error", jstr_or_null(ar != NULL ? ar->startup_error :
	    NULL),
	    "warning", jstr_or_null(ar != NULL ? ar->warning : NULL),
	    "error", report_err_json(err));
}

int
report_write_json(const char *path, const json_t *doc, struct err *err)
{
	char *text = json_dumps(doc, JSON_INDENT(2));
	int r;

	if (text == NULL)
		return err_set(err, ENVCTL_ESYS, "cannot write '%s': the "
		    "document does not encode", path);
	r = atomic_write_file(path, text, strlen(text), 0644, err);
	free(text);
	return r;
}

void
report_restore_line(struct buf *out, const char *name, const char *to,
    const struct host_state *st)
{
	struct vis v = ENVCTL_VIS_INIT;

	buf_addf(out, "%s: restore %s over %s (%s)\n", vis_str(&v, name),
	    vis_str(&v, to), vis_str(&v, st->real), st->exists ?
	    "present now" : "absent now");
	vis_release(&v);
}

void
report_planned_line(struct buf *out, const char *name, enum outcome o)
{
	struct vis v = ENVCTL_VIS_INIT;

	if (o != ENVCTL_OUT_FAILED && o != ENVCTL_OUT_UNREACHABLE)
		return;
	buf_addf(out, "%s: %s when the plan was made; not applied\n",
	    vis_str(&v, name), outcome_name(o));
	vis_release(&v);
}

void
report_drift_line(struct buf *b, const struct host_plan *hp)
{
	struct vis v = ENVCTL_VIS_INIT;
	struct buf tmp = ENVCTL_BUF_INIT;
	const char *sep = "";
	size_t i;

	buf_addf(b, "%s: ", row_name(hp, &v, &tmp));
	buf_release(&tmp);
	for (i = 0; i < hp->neffects; i++) {
		const struct var_effect *e = &hp->effects[i];

		/* Where start-up fails, nothing is in effect: said once. */
		if (e->in_effect || hp->st.start_failed != NULL)
			continue;
		buf_addf(b, "%s%s effective %s", sep, vis_str(&v, e->name),
		    vis_str(&v, shown(e->now, e->secret)));
		if (e->other != 0)
			buf_addf(b, " (%s in %s)", vis_str(&v,
			    shown(e->other_now, e->secret)), vis_str(&v,
			    hoststate_interp(&hp->st, e->other)));
		buf_addf(b, ", want %s", vis_str(&v, e->secret ?
		    ENVCTL_MASK : e->want));
		sep = "; ";
	}
	for (i = 0; i < hp->st.nalso; i++) {
		const struct hs_interp *in = &hp->st.also[i];

		if (in->startup_error != NULL)
			buf_addf(b, "%sin %s sitecustomize raises %s", sep,
			    vis_str(&v, in->path),
			    vis_str(&v, in->startup_error));
		else if (in->start_failed != NULL)
			buf_addf(b, "%sin %s start-up fails: %s", sep,
			    vis_str(&v, in->path),
			    vis_str(&v, in->start_failed));
		else
			continue;
		sep = "; ";
	}
	if (hp->st.startup_error != NULL) {
		buf_addf(b, "%ssitecustomize raises %s", sep,
		    vis_str(&v, hp->st.startup_error));
		sep = "; ";
	}
	if (hp->st.start_failed != NULL) {
		buf_addf(b, "%sstart-up fails: %s", sep,
		    vis_str(&v, hp->st.start_failed));
		sep = "; ";
	}
	for (i = 0; i < hp->ly.n; i++)
		if (hp->ly.f[i].kind == ENVCTL_LAYER_DRIFT) {
			buf_addf(b, "%s%s", sep, vis_str(&v,
			    hp->ly.f[i].text));
			sep = "; ";
		}
	if (!hp->file_matches && hp->st.exists)
		buf_addf(b, "%s%s differs from the playbook", sep,
		    vis_str(&v, hp->st.path));
	else if (!hp->file_matches)
		buf_addf(b, "%s%s is missing", sep, vis_str(&v, hp->st.path));
	buf_addch(b, '\n');
	vis_release(&v);
}

/* The hosts whose variable v is now (never one where it is in effect). */
static void
drift_hosts(struct buf *b, struct host_plan *const *hps, size_t n,
    size_t v, const char *now, struct vis *vs)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		const struct var_effect *e;

		if (!hps[i]->have_state || v >= hps[i]->neffects)
			continue;
		e = &hps[i]->effects[v];
		if (e->in_effect || strcmp(shown(e->now, e->secret), now) != 0)
			continue;
		buf_addf(b, "%s %s", k++ == 0 ? ":" : ",",
		    vis_str(vs, hps[i]->host->name));
	}
}

void
report_drift_summary(struct buf *b, struct host_plan *const *hps, size_t n)
{
	const struct host_plan *first = NULL;
	struct vis vs = ENVCTL_VIS_INIT;
	size_t v, i, k, nvals, drifted, *counts;
	const char **vals;

	for (i = 0; i < n && first == NULL; i++)
		if (hps[i]->have_state && hps[i]->neffects > 0)
			first = hps[i];
	if (first == NULL)
		return;
	vals = xcalloc(n + 1, sizeof(*vals));
	counts = xcalloc(n + 1, sizeof(*counts));
	for (v = 0; v < first->neffects; v++) {
		drifted = nvals = 0;
		memset(counts, 0, (n + 1) * sizeof(*counts));
		for (i = 0; i < n; i++) {
			const struct var_effect *e;
			const char *now;

			if (!hps[i]->have_state || v >= hps[i]->neffects)
				continue;
			e = &hps[i]->effects[v];
			drifted += !e->in_effect;
			now = shown(e->now, e->secret);
			for (k = 0; k < nvals; k++)
				if (strcmp(vals[k], now) == 0)
					break;
			if (k == nvals)
				vals[nvals++] = now;
			counts[k]++;
		}
		if (drifted == 0)
			continue;
		buf_addf(b, "%s:", vis_str(&vs, first->effects[v].name));
		for (k = 0; k < nvals; k++) {
			buf_addf(b, "%s %zu host%s %s", k > 0 ? "," : "",
			    counts[k], counts[k] == 1 ? "" : "s",
			    vis_str(&vs, vals[k]));
			/* Name the hosts of every value that is not wanted. */
			drift_hosts(b, hps, n, v, vals[k], &vs);
		}
		buf_addch(b, '\n');
	}
	free(vals);
	free(counts);
	vis_release(&vs);
}

json_t *
report_err_json(const struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *o;

	if (err == NULL || err->code == 0)
		return json_null();
	err_format(err, &b);
	if (b.len > 0)
		buf_truncate(&b, b.len - 1);
	o = json_pack("{s:s, s:s}", "code", err_codename(err->code),
	    "message", b.data);
	buf_release(&b);
	return o;
}

/*
 * Every interpreter that imports the file, the first included: who it
 * is, its start-up, and the value of each variable there.
 */
static json_t *
interps_json(const struct host_plan *hp)
{
	const struct host_state *st = &hp->st;
	json_t *a = json_array(), *o, *vals;
	const char *now;
	size_t k, i;

	for (k = 0; k < hoststate_ninterps(st); k++) {
		const struct hs_interp *in = k > 0 ? &st->also[k - 1] : NULL;

		vals = json_object();
		for (i = 0; i < hp->neffects; i++) {
			now = hoststate_value_in(st, k, hp->effects[i].name);
			json_object_set_new(vals, hp->effects[i].name,
			    hp->effects[i].secret && now != NULL ?
			    json_string(ENVCTL_MASK) : jstr_or_null(now));
		}
		o = json_pack("{s:s, s:s, s:o, s:b, s:o, s:o, s:o}",
		    "path", k == 0 ? st->interp_path : in->path,
		    "version", k == 0 ? st->interp_version : in->version,
		    "imported", jstr_or_null(k == 0 ? st->imported :
		    in->imported),
		    "shadowed", k == 0 ? st->shadowed : in->shadowed,
		    "startup_error", jstr_or_null(hoststate_startup_error(st,
		    k)),
		    "start_failed", jstr_or_null(hoststate_start_failed(st,
		    k)),
		    "values", vals);
		json_array_append_new(a, o);
	}
	return a;
}

json_t *
report_plan_json(const struct host_plan *hp)
{
	const struct host_state *st = &hp->st;
	json_t *h, *t, *vars, *checks, *chain, *e;
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	h = json_pack("{s:s, s:s, s:s}", "name", hp->host->name,
	    "address", hp->host->address, "outcome",
	    outcome_name(hp->outcome));
	json_object_set_new(h, "error", report_err_json(&hp->err));
	json_object_set_new(h, "seconds", json_real(hp->seconds));
	json_object_set_new(h, "stats", json_pack("{s:i, s:i}",
	    "channels", hp->stats.channels, "round_trips",
	    hp->stats.round_trips));
	if (!hp->have_state) {
		buf_release(&b);
		return h;
	}
	chain = json_array();
	for (i = 0; i < st->nchain; i++)
		json_array_append_new(chain, json_string(st->chain[i]));
	t = json_pack("{s:s, s:s, s:s, s:o, s:b}", "path", st->path,
	    "source", st->source, "real", st->real, "chain", chain,
	    "exists", st->exists);
	if (st->exists) {
		json_object_set_new(t, "mode", json_sprintf("%04o", st->mode));
		json_object_set_new(t, "uid", json_integer(st->uid));
		json_object_set_new(t, "gid", json_integer(st->gid));
		json_object_set_new(t, "owner", jstr_or_null(st->owner));
		json_object_set_new(t, "group", jstr_or_null(st->group));
		json_object_set_new(t, "size", json_integer(
		    (json_int_t)st->content.len));
		json_object_set_new(t, "sha256", json_string(st->sha256));
	}
	json_object_set_new(h, "target", t);
	json_object_set_new(h, "interpreter", json_pack("{s:s, s:s}", "path",
	    st->interp_path, "version", st->interp_version));
	json_object_set_new(h, "agent", json_pack("{s:s, s:s, s:o, s:o}",
	    "version", st->agent_version, "arch", st->arch, "user",
	    jstr_or_null(st->user), "hostname", jstr_or_null(st->hostname)));
	json_object_set_new(h, "imported", jstr_or_null(st->imported));
	json_object_set_new(h, "shadowed", json_boolean(st->shadowed));
	json_object_set_new(h, "startup_error",
	    jstr_or_null(st->startup_error));
	json_object_set_new(h, "start_failed",
	    jstr_or_null(st->start_failed));
	vars = json_array();
	for (i = 0; i < hp->neffects; i++) {
		const struct var_effect *v = &hp->effects[i];

		json_array_append_new(vars, json_pack("{s:s, s:o, s:o, s:b, "
		    "s:b}", "name", v->name, "now", v->secret && v->now ?
		    json_string(ENVCTL_MASK) : jstr_or_null(v->now), "want",
		    v->secret && v->want ? json_string(ENVCTL_MASK) :
		    jstr_or_null(v->want), "in_effect", v->in_effect,
		    "secret", v->secret));
	}
	json_object_set_new(h, "variables", vars);
	json_object_set_new(h, "interpreters", interps_json(hp));
	if (hp->ly.read)
		json_object_set_new(h, "layers", layers_json(&hp->ly));
	if (hp->gf != NULL)
		json_object_set_new(h, "gpufacts", gpufacts_json(hp->gf));
	checks = json_array();
	for (i = 0; i < st->nchecks; i++)
		json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:b, "
		    "s:o, s:o, s:o}", "name", st->checks[i].name, "kind",
		    st->checks[i].kind, "path", st->checks[i].path, "ok",
		    st->checks[i].ok, "reason",
		    jstr_or_null(st->checks[i].reason), "version",
		    jstr_or_null(st->checks[i].version), "driver_cuda",
		    jstr_or_null(st->checks[i].driver_cuda)));
	json_object_set_new(h, "checks", checks);
	json_object_set_new(h, "file_matches", json_boolean(hp->file_matches));
	json_object_set_new(h, "in_effect", json_boolean(hp->all_in_effect));
	json_object_set_new(h, "want_sha256", json_string(hp->want_sha256));
	masked_diff(&b, hp);
	/* JSON strings are UTF-8; a latin-1 file's diff travels as base64. */
	if ((e = json_stringn(b.data, b.len)) != NULL)
		json_object_set_new(h, "diff", e);
	else {
		json_object_set_new(h, "diff", json_null());
		json_object_set_new(h, "diff_b64", proto_b64_json(b.data,
		    b.len));
	}
	buf_wipe(&b);
	return h;
}
