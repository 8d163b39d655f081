/* metrics.c - a drift run as a Prometheus textfile (see metrics.h). */
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/inventory.h"
#include "controller/plan.h"
#include "controller/shard.h"

static void
label(struct buf *out, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			buf_addch(out, '\\');
		if (*s == '\n')
			buf_addstr(out, "\\n");
		else
			buf_addch(out, *s);
	}
}

static void
labels(struct buf *out, const struct host_plan *hp, const char *shard)
{
	const struct host *h = hp->host;

	buf_addstr(out, "{host=\"");
	label(out, h->name);
	buf_addstr(out, "\",group=\"");
	label(out, host_ngroups(h) > 0 ? host_group(h, 0) : "");
	/* A host with several files has a series per file. */
	if (hp->several && hp->have_state) {
		buf_addstr(out, "\",file=\"");
		label(out, hp->st.path);
	}
	if (shard != NULL && shard[0] != '\0') {
		buf_addstr(out, "\",shard=\"");
		label(out, shard);
	}
	buf_addstr(out, "\"}");
}

/* A run-level series: {shard="K/N"} when sharded, else no labels. */
static void
run_series(struct buf *out, const char *name, const char *shard)
{
	buf_addstr(out, name);
	if (shard != NULL && shard[0] != '\0') {
		buf_addstr(out, "{shard=\"");
		label(out, shard);
		buf_addstr(out, "\"}");
	}
}

size_t
metrics_drifted_variables(const struct host_plan *hp)
{
	size_t i, n = 0;

	for (i = 0; i < hp->neffects; i++)
		if (!hp->effects[i].in_effect)
			n++;
	return n;
}

static int
up(const struct host_plan *hp)
{
	return hp->have_state;
}

static int
in_sync(const struct host_plan *hp)
{
	return hp->outcome == ENVCTL_OUT_OK ||
	    hp->outcome == ENVCTL_OUT_CHANGED;
}

static void
family(struct buf *out, const char *name, const char *help)
{
	buf_addf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

void
metrics_textfile(struct buf *out, struct host_plan *const *hps, size_t n,
    double started, double duration, const char *shard)
{
	size_t i, drift = 0, failed = 0;

	family(out, "envctl_host_in_sync", "1 when the host's "
	    "sitecustomize.py and its effective environment match the "
	    "playbook.");
	for (i = 0; i < n; i++) {
		buf_addstr(out, "envctl_host_in_sync");
		labels(out, hps[i], shard);
		buf_addf(out, " %d\n", in_sync(hps[i]));
	}
	family(out, "envctl_host_up", "1 when envctl could read the host.");
	for (i = 0; i < n; i++) {
		buf_addstr(out, "envctl_host_up");
		labels(out, hps[i], shard);
		buf_addf(out, " %d\n", up(hps[i]));
	}
	family(out, "envctl_host_drifted_variables", "Managed variables "
	    "whose effective value differs from the playbook's.");
	for (i = 0; i < n; i++) {
		if (!up(hps[i]))
			continue;
		buf_addstr(out, "envctl_host_drifted_variables");
		labels(out, hps[i], shard);
		buf_addf(out, " %zu\n", metrics_drifted_variables(hps[i]));
	}
	family(out, "envctl_host_stale_processes", "Running workers that "
	    "must be restarted to get the playbook's values: started before "
	    "the file last changed, or started with other values.");
	for (i = 0; i < n; i++) {
		if (!hps[i]->ly.read)
			continue;
		buf_addstr(out, "envctl_host_stale_processes");
		labels(out, hps[i], shard);
		buf_addf(out, " %zu\n", hps[i]->ly.stale);
	}
	for (i = 0; i < n; i++) {
		if (hps[i]->outcome == ENVCTL_OUT_PENDING)
			drift++;
		else if (!in_sync(hps[i]))
			failed++;
	}
	family(out, "envctl_drift_hosts", "Hosts out of sync in the last "
	    "run.");
	run_series(out, "envctl_drift_hosts", shard);
	buf_addf(out, " %zu\n", drift);
	family(out, "envctl_failed_hosts", "Hosts that could not be read "
	    "(or fixed) in the last run.");
	run_series(out, "envctl_failed_hosts", shard);
	buf_addf(out, " %zu\n", failed);
	family(out, "envctl_last_run_timestamp_seconds", "When the last "
	    "drift run started, in seconds since the epoch.");
	run_series(out, "envctl_last_run_timestamp_seconds", shard);
	buf_addf(out, " %.3f\n", started);
	family(out, "envctl_run_duration_seconds", "How long the last drift "
	    "run took.");
	run_series(out, "envctl_run_duration_seconds", shard);
	buf_addf(out, " %.3f\n", duration);
}

/* --- merging the shards' files --------------------------------------- */

#define MAX_LINE	(64u * 1024)

struct msample {
	char		*name;
	char		*labels;	/* without shard, "" when none */
	char		*host;		/* unescaped; NULL: a run-level series */
	char		*value;
	size_t		 input;		/* index into the sorted inputs */
	size_t		 rank;		/* position in order, or norder */
	size_t		 seq;		/* order of reading */
};

struct mfamily {
	char		*name;
	char		*help;		/* whole "# HELP ..." line */
	char		*type;		/* whole "# TYPE ..." line */
	const char	*from;		/* the input that gave them */
};

struct mset {
	struct mfamily	*fam;
	size_t		 nfam, afam;
	struct msample	*smp;
	size_t		 nsmp, asmp;
};

static void
mset_release(struct mset *m)
{
	size_t i;

	for (i = 0; i < m->nfam; i++) {
		free(m->fam[i].name);
		free(m->fam[i].help);
		free(m->fam[i].type);
	}
	for (i = 0; i < m->nsmp; i++) {
		free(m->smp[i].name);
		free(m->smp[i].labels);
		free(m->smp[i].host);
		free(m->smp[i].value);
	}
	free(m->fam);
	free(m->smp);
}

static struct mfamily *
family_get(struct mset *m, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < m->nfam; i++)
		if (strlen(m->fam[i].name) == len &&
		    memcmp(m->fam[i].name, name, len) == 0)
			return &m->fam[i];
	ENVCTL_GROW(m->fam, m->nfam + 1, m->afam);
	memset(&m->fam[m->nfam], 0, sizeof(m->fam[0]));
	m->fam[m->nfam].name = xstrndup(name, len);
	return &m->fam[m->nfam++];
}

/* "# HELP name ..." or "# TYPE name ...": must agree between the files. */
static int
meta_line(struct mset *m, const char *line, const char *in, struct err *err)
{
	const char *name = line + 7, *end;
	struct mfamily *f;
	char **slot;

	end = name + strcspn(name, " ");
	if (end == name)
		return err_set(err, ENVCTL_EPARSE, "%s: '%s': no metric name",
		    in, line);
	f = family_get(m, name, (size_t)(end - name));
	slot = line[2] == 'H' ? &f->help : &f->type;
	if (*slot == NULL) {
		*slot = xstrdup(line);
		if (f->from == NULL)
			f->from = in;
		return 0;
	}
	if (strcmp(*slot, line) != 0)
		return err_set(err, ENVCTL_EINVALID, "'%s': the # %.4s line of "
		    "%s differs from '%s''s", in, line + 2, f->name, f->from);
	return 0;
}

/* Undoes the text format's escapes of a label value. */
static char *
unescape(const char *s, size_t len)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len) {
			i++;
			buf_addch(&b, s[i] == 'n' ? '\n' : s[i]);
		} else
			buf_addch(&b, s[i]);
	}
	return buf_detach(&b, NULL);
}

/*
 * A sample line: name{a="x",shard="K/N"} value.  Fills sm (the labels
 * without shard) and *shard.
 */
static int
sample_line(struct msample *sm, struct shard *shard, const char *line,
    const char *in, struct err *err)
{
	struct buf lab = ENVCTL_BUF_INIT;
	const char *p = line, *ln, *v;
	size_t lnlen, vlen;
	int r = 0, have_shard = 0;
	char *sv;

	memset(sm, 0, sizeof(*sm));
	p += strcspn(p, "{ ");
	sm->name = xstrndup(line, (size_t)(p - line));
	if (*p == '{') {
		p++;
		while (*p != '}') {
			ln = p;
			p += strcspn(p, "=}\" ");
			lnlen = (size_t)(p - ln);
			if (lnlen == 0 || p[0] != '=' || p[1] != '"')
				goto bad;
			v = p += 2;
			while (*p != '"' && *p != '\0')
				p += (*p == '\\' && p[1] != '\0') ? 2 : 1;
			if (*p != '"')
				goto bad;
			vlen = (size_t)(p - v);
			p++;
			if (lnlen == 5 && memcmp(ln, "shard", 5) == 0) {
				sv = unescape(v, vlen);
				if (shard_parse(shard, sv) != 0) {
					free(sv);
					goto bad;
				}
				free(sv);
				have_shard = 1;
			} else {
				if (lnlen == 4 && memcmp(ln, "host", 4) == 0) {
					free(sm->host);
					sm->host = unescape(v, vlen);
				}
				buf_addf(&lab, "%s%.*s=\"%.*s\"", lab.len > 0 ?
				    "," : "", (int)lnlen, ln, (int)vlen, v);
			}
			if (*p == ',')
				p++;
			else if (*p != '}')
				goto bad;
		}
		p++;
	}
	if (*p != ' ' || p[1] == '\0')
		goto bad;
	sm->value = xstrdup(p + 1);
	sm->labels = buf_detach(&lab, NULL);
	if (!have_shard)
		r = err_set(err, ENVCTL_EINVALID, "'%s': %s has no shard "
		    "label: not from a sharded run (--shard)", in, sm->name);
	return r;
bad:
	buf_release(&lab);
	return err_set(err, ENVCTL_EPARSE, "'%s': not a metric line: '%.80s'",
	    in, line);
}

/* Reads one file into m; *shard gets its series' shard. */
static int
read_input(struct mset *m, struct shard *shard, const struct metrics_input *in,
    size_t idx, struct err *err)
{
	const char *p = in->text, *nl;
	char *line = NULL;
	struct msample sm;
	struct shard s;
	int r = 0, have = 0;

	memset(shard, 0, sizeof(*shard));
	for (; *p != '\0'; p = *nl != '\0' ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		if ((size_t)(nl - p) > MAX_LINE) {
			r = err_set(err, ENVCTL_ETOOBIG, "'%s': a line longer "
			    "than %u bytes", in->name, MAX_LINE);
			break;
		}
		free(line);
		line = xstrndup(p, (size_t)(nl - p));
		if (line[0] == '\0')
			continue;
		if (strncmp(line, "# HELP ", 7) == 0 ||
		    strncmp(line, "# TYPE ", 7) == 0) {
			if ((r = meta_line(m, line, in->name, err)) != 0)
				break;
			continue;
		}
		if (line[0] == '#')
			continue;
		memset(&s, 0, sizeof(s));
		r = sample_line(&sm, &s, line, in->name, err);
		if (r == 0 && have && (s.index != shard->index ||
		    s.count != shard->count))
			r = err_set(err, ENVCTL_EINVALID, "'%s': series of "
			    "shards %u/%u and %u/%u", in->name, shard->index,
			    shard->count, s.index, s.count);
		ENVCTL_GROW(m->smp, m->nsmp + 1, m->asmp);
		sm.input = idx;
		sm.seq = m->nsmp;
		m->smp[m->nsmp++] = sm;
		if (r != 0)
			break;
		*shard = s;
		have = 1;
	}
	free(line);
	return r;
}

static int
sample_cmp(const void *a, const void *b)
{
	const struct msample *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One run-level family, the shards' values combined. */
static int
run_level(struct buf *out, const struct mset *m, const struct mfamily *f,
    double start, double end, struct metrics_totals *t, struct err *err)
{
	double sum = 0, v;
	size_t i, k = 0;

	for (i = 0; i < m->nsmp; i++) {
		if (m->smp[i].host != NULL ||
		    strcmp(m->smp[i].name, f->name) != 0)
			continue;
		v = strtod(m->smp[i].value, NULL);
		sum += v;
		k++;
	}
	if (k == 0)
		return 0;
	if (strcmp(f->name, "envctl_drift_hosts") == 0)
		t->drift_hosts = sum;
	else if (strcmp(f->name, "envctl_failed_hosts") == 0)
		t->failed_hosts = sum;
	else if (strcmp(f->name, "envctl_last_run_timestamp_seconds") == 0) {
		buf_addf(out, "%s %.3f\n", f->name, start);
		return 0;
	} else if (strcmp(f->name, "envctl_run_duration_seconds") == 0) {
		buf_addf(out, "%s %.3f\n", f->name, end - start);
		return 0;
	} else
		return err_set(err, ENVCTL_EINVALID, "cannot merge %s: not a "
		    "series envctl writes", f->name);
	buf_addf(out, "%s %.0f\n", f->name, sum);
	return 0;
}

/* The run's start (the earliest shard's) and end (the latest one's). */
static void
run_span(const struct mset *m, size_t nin, double *start, double *end)
{
	double *ts = xcalloc(nin + 1, sizeof(*ts));
	double *dur = xcalloc(nin + 1, sizeof(*dur));
	size_t i;

	for (i = 0; i < m->nsmp; i++) {
		if (m->smp[i].host != NULL)
			continue;
		if (strcmp(m->smp[i].name,
		    "envctl_last_run_timestamp_seconds") == 0)
			ts[m->smp[i].input] = strtod(m->smp[i].value, NULL);
		else if (strcmp(m->smp[i].name,
		    "envctl_run_duration_seconds") == 0)
			dur[m->smp[i].input] = strtod(m->smp[i].value, NULL);
	}
	*start = *end = 0;
	for (i = 0; i < nin; i++) {
		if (i == 0 || ts[i] < *start)
			*start = ts[i];
		if (i == 0 || ts[i] + dur[i] > *end)
			*end = ts[i] + dur[i];
	}
	free(ts);
	free(dur);
}

int
metrics_merge(struct buf *out, struct metrics_totals *t,
    const struct metrics_input *in, size_t n, const char *const *order,
    size_t norder, struct err *err)
{
	struct mset m = { 0 };
	struct shard *sh = xcalloc(n + 1, sizeof(*sh));
	const char **names = xcalloc(n + 1, sizeof(*names));
	size_t *perm = xcalloc(n + 1, sizeof(*perm));
	size_t i, k, f;
	double start, end;
	int r = 0;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < n; i++) {
		names[i] = in[i].name;
		if ((r = read_input(&m, &sh[i], &in[i], i, err)) != 0)
			goto out;
		if (sh[i].count == 0) {
			r = err_set(err, ENVCTL_EINVALID, "'%s' is not from a "
			    "sharded run (no series)", in[i].name);
			goto out;
		}
	}
	if ((r = shard_check_set(sh, names, n, err)) != 0)
		goto out;
	/* Shard order: input i becomes its shard's index. */
	for (i = 0; i < n; i++)
		perm[i] = sh[i].index;
	for (i = 0; i < m.nsmp; i++) {
		m.smp[i].input = perm[m.smp[i].input];
		m.smp[i].rank = norder;
		for (k = 0; m.smp[i].host != NULL && k < norder; k++)
			if (strcmp(order[k], m.smp[i].host) == 0) {
				m.smp[i].rank = k;
				break;
			}
	}
	if (m.nsmp > 1)
		qsort(m.smp, m.nsmp, sizeof(*m.smp), sample_cmp);
	run_span(&m, n, &start, &end);
	for (f = 0; f < m.nfam; f++) {
		if (m.fam[f].help != NULL)
			buf_addf(out, "%s\n", m.fam[f].help);
		if (m.fam[f].type != NULL)
			buf_addf(out, "%s\n", m.fam[f].type);
		for (i = 0; i < m.nsmp; i++) {
			if (m.smp[i].host == NULL ||
			    strcmp(m.smp[i].name, m.fam[f].name) != 0)
				continue;
			buf_addf(out, "%s{%s} %s\n", m.smp[i].name,
			    m.smp[i].labels, m.smp[i].value);
		}
		if ((r = run_level(out, &m, &m.fam[f], start, end, t,
		    err)) != 0)
			goto out;
	}
	for (i = 0; i < m.nsmp; i++) {
		for (f = 0; f < m.nfam; f++)
			if (strcmp(m.smp[i].name, m.fam[f].name) == 0)
				break;
		if (f == m.nfam) {
			r = err_set(err, ENVCTL_EINVALID, "cannot merge %s: "
			    "no # HELP and # TYPE lines", m.smp[i].name);
			goto out;
		}
	}
out:
	mset_release(&m);
	free(sh);
	free(names);
	free(perm);
	return r;
}
