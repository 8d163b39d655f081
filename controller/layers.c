/* layers.c - services, nccl.conf and running workers (see layers.h). */
#include "layers.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/desired.h"
#include "controller/hoststate.h"
#include "controller/inventory.h"
#include "controller/playbook.h"

#define MASK	"********"
#define PIDS_SHOWN	8	/* pids named in one finding */

json_t *
layers_request(const struct playbook *pb, const struct host *h,
    const struct desired *d, json_int_t id)
{
	json_t *vars = json_array(), *svcs = json_array(), *pats = json_array();
	size_t i;

	for (i = 0; i < d->nvars; i++)
		json_array_append_new(vars, json_string(d->vars[i].name));
	if (h != NULL && h->nservices > 0)
		for (i = 0; i < h->nservices; i++)
			json_array_append_new(svcs,
			    json_string(h->services[i]));
	else
		for (i = 0; i < pb->nservices; i++)
			json_array_append_new(svcs,
			    json_string(pb->services[i]));
	/* None: the agent's own (vllm, sglang, torch.distributed). */
	for (i = 0; i < pb->nprocesses; i++)
		json_array_append_new(pats, json_string(pb->processes[i]));
	return json_pack("{s:s, s:I, s:o, s:o, s:o}", "op", "layers", "id",
	    id, "vars", vars, "services", svcs, "processes", pats);
}

static void __attribute__((format(printf, 3, 4)))
add(struct layers *ly, int kind, const char *fmt, ...)
{
	struct buf b = ENVCTL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	ly->f = xreallocarray(ly->f, ly->n + 1, sizeof(*ly->f));
	ly->f[ly->n].text = buf_detach(&b, NULL);
	ly->f[ly->n].kind = kind;
	ly->n++;
	ly->ndrift += kind == ENVCTL_LAYER_DRIFT;
	buf_release(&b);
}

static const struct desired_var *
want_of(const struct desired *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->nvars; i++)
		if (strcmp(d->vars[i].name, name) == 0)
			return &d->vars[i];
	return NULL;
}

static const char *
shown(const struct desired_var *w, const char *v)
{
	if (v == NULL)
		return "(unset)";
	return w->secret ? MASK : v;
}

static const char *
jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* An env entry the unit sets (with a known value or not). */
static int
is_set(const json_t *v)
{
	return v != NULL && (json_is_string(json_object_get(v, "value")) ||
	    json_is_string(json_object_get(v, "unknown")));
}

/* A name something reads: [A-Za-z_][A-Za-z0-9_]*. */
static int
plain_name(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') || (i > 0 && s[i] >= '0' &&
		    s[i] <= '9')))
			return 0;
	return i > 0;
}

/* Variables that change which sitecustomize a service's Python runs. */
static const char *const startup_vars[] = { "PYTHONPATH", "PYTHONHOME",
	"PYTHONNOUSERSITE", "PYTHONUSERBASE", "PYTHONSAFEPATH", NULL };

/* What the service runs, against the interpreters envctl manages. */
static void
service_exec(struct layers *ly, const char *unit, const json_t *x,
    const char *const *interps, size_t n)
{
	const char *path = jstr(x, "path");
	size_t i;

	if (path == NULL)
		return;
	if (!json_is_true(json_object_get(x, "python"))) {
		add(ly, ENVCTL_LAYER_INFO, "%s runs %s, not a Python "
		    "interpreter by its name: which Python it starts is not "
		    "known", unit, path);
		return;
	}
	for (i = 0; i < n; i++)
		if (interps[i] != NULL && strcmp(interps[i], path) == 0)
			return;
	add(ly, ENVCTL_LAYER_WARNING, "%s runs %s, which is not an "
	    "interpreter envctl manages on this host: list it in "
	    "interpreters:", unit, path);
}

/* Where each desired value of the service's workers comes from. */
static void
service_sources(struct layers *ly, const char *unit, const json_t *env,
    const struct desired *d)
{
	const struct desired_var *w;
	const json_t *v;
	size_t i;

	for (i = 0; i < d->nvars; i++) {
		w = &d->vars[i];
		if (w->value == NULL)
			continue;
		v = json_object_get(env, w->name);
		if (!is_set(v))
			add(ly, ENVCTL_LAYER_INFO, "%s: %s=%s, from "
			    "sitecustomize (the unit sets none)", unit,
			    w->name, shown(w, w->value));
		else if (json_is_string(json_object_get(v, "value")) &&
		    strcmp(jstr(v, "value"), w->value) == 0)
			add(ly, ENVCTL_LAYER_INFO, "%s: %s=%s, set by the unit "
			    "too (%s= in %s)", unit, w->name, shown(w,
			    w->value), jstr(v, "directive") ? jstr(v,
			    "directive") : "", jstr(v, "from") ? jstr(v,
			    "from") : "?");
	}
}

/* A service's launch environment against the desired values. */
static void
service(struct layers *ly, const json_t *s, const struct playbook *pb,
    const struct desired *d, const char *const *interps, size_t n)
{
	const char *unit = jstr(s, "unit"), *name, *from, *dir;
	const struct desired_var *w;
	const json_t *env = json_object_get(s, "env"), *v, *e, *sc;
	size_t i;

	if (unit == NULL) {
		add(ly, ENVCTL_LAYER_WARNING, "layers: a service without 'unit' in the reply");
		return;
	}
	if (!json_is_true(json_object_get(s, "found"))) {
		add(ly, ENVCTL_LAYER_WARNING, "%s: no unit file found (services:)", unit);
		return;
	}
	if (json_is_true(json_object_get(s, "masked")))
		add(ly, ENVCTL_LAYER_WARNING, "%s: the unit is masked", unit);
	json_array_foreach(json_object_get(s, "errors"), i, e)
		if (json_is_string(e))
			add(ly, ENVCTL_LAYER_WARNING, "%s: %s", unit,
			    json_string_value(e));
	json_array_foreach(json_object_get(s, "warnings"), i, e)
		if (json_is_string(e))
			add(ly, ENVCTL_LAYER_WARNING, "%s: %s", unit,
			    json_string_value(e));
	sc = json_object_get(s, "systemctl");
	if (json_is_true(json_object_get(sc, "checked")) &&
	    !json_is_true(json_object_get(sc, "agrees")))
		json_array_foreach(json_object_get(sc, "differences"), i, e)
			add(ly, ENVCTL_LAYER_WARNING, "%s: systemctl show "
			    "disagrees: %s", unit, json_is_string(e) ?
			    json_string_value(e) : "?");
	service_exec(ly, unit, json_object_get(s, "exec"), interps, n);
	for (i = 0; startup_vars[i] != NULL; i++)
		if (is_set(v = json_object_get(env, startup_vars[i])))
			add(ly, ENVCTL_LAYER_WARNING, "%s sets %s=%s (%s): its "
			    "Python may import another sitecustomize than the "
			    "one envctl manages", unit, startup_vars[i],
			    jstr(v, "value") != NULL ? jstr(v, "value") :
			    "(unknown)", jstr(v, "from") != NULL ?
			    jstr(v, "from") : "?");
	service_sources(ly, unit, env, d);
	json_object_foreach((json_t *)env, name, v) {
		if ((w = want_of(d, name)) == NULL || w->value == NULL)
			continue;
		from = jstr(v, "from");
		dir = jstr(v, "directive");
		if (json_is_string(json_object_get(v, "unknown"))) {
			add(ly, ENVCTL_LAYER_DRIFT, "%s sets %s to a value envctl cannot know "
			    "(%s), %s %s", unit, name, jstr(v, "unknown"),
			    dir != NULL ? dir : "", from != NULL ? from : "");
			continue;
		}
		if (!json_is_string(json_object_get(v, "value")))
			continue;
		if (strcmp(jstr(v, "value"), w->value) == 0)
			continue;
		if (pb->policy == ENVCTL_POLICY_SETDEFAULT)
			add(ly, ENVCTL_LAYER_DRIFT, "%s sets %s=%s (%s= in %s): envctl's %s is "
			    "shadowed (policy: setdefault)", unit, name,
			    shown(w, jstr(v, "value")), dir != NULL ? dir : "",
			    from != NULL ? from : "?", shown(w, w->value));
		else
			add(ly, ENVCTL_LAYER_WARNING, "%s sets %s=%s (%s= in %s): sitecustomize "
			    "overrides it with %s (policy: override)", unit,
			    name, shown(w, jstr(v, "value")), dir != NULL ?
			    dir : "", from != NULL ? from : "?",
			    shown(w, w->value));
	}
}

/* NCCL's config files: what NCCL misreads, and values the env beats. */
static void
nccl(struct layers *ly, const json_t *c, const struct desired *d,
    const char *who)
{
	const json_t *f, *m, *vals = json_object_get(c, "values"), *v;
	const struct desired_var *w;
	const char *name;
	size_t i, k;

	json_array_foreach(json_object_get(c, "files"), i, f) {
		json_array_foreach(json_object_get(f, "misreads"), k, m)
			add(ly, ENVCTL_LAYER_WARNING, "%s%s:%lld: %s", who, jstr(f, "path"),
			    (long long)json_integer_value(json_object_get(m,
			    "line")), jstr(m, "message") != NULL ?
			    jstr(m, "message") : "misread by NCCL");
	}
	json_object_foreach((json_t *)vals, name, v) {
		/* A name with spaces is a misread, said above. */
		if (!json_is_string(json_object_get(v, "value")) ||
		    !plain_name(name))
			continue;
		if ((w = want_of(d, name)) == NULL || w->value == NULL) {
			/* Not the playbook's: NCCL fills it where unset. */
			add(ly, ENVCTL_LAYER_INFO, "%s%s gives %s=%s to workers "
			    "whose environment does not set it", who,
			    jstr(v, "from") ? jstr(v, "from") : "nccl.conf",
			    name, jstr(v, "value"));
			continue;
		}
		if (strcmp(jstr(v, "value"), w->value) == 0)
			continue;
		add(ly, ENVCTL_LAYER_WARNING, "%s%s sets %s=%s, which NCCL ignores: the "
		    "environment (envctl's %s) wins", who, jstr(v, "from") ?
		    jstr(v, "from") : "nccl.conf", name,
		    shown(w, jstr(v, "value")), shown(w, w->value));
	}
}

/* One line per group of workers that must be restarted. */
static void
workers(struct layers *ly, const json_t *p, const struct desired *d,
    long long mtime)
{
	const json_t *procs = json_object_get(p, "processes"), *q, *env, *v;
	struct buf old = ENVCTL_BUF_INIT;
	const struct desired_var *w;
	const char *name, *unit;
	size_t i, nold = 0;
	json_int_t started;

	json_array_foreach(procs, i, q) {
		int stale = 0;

		ly->workers++;
		unit = jstr(q, "unit");
		started = json_integer_value(json_object_get(q, "started"));
		env = json_object_get(q, "env");
		json_object_foreach((json_t *)env, name, v) {
			if ((w = want_of(d, name)) == NULL ||
			    w->value == NULL || !json_is_string(v) ||
			    strcmp(json_string_value(v), w->value) == 0)
				continue;
			add(ly, ENVCTL_LAYER_DRIFT, "worker %lld%s%s%s runs with %s=%s, want "
			    "%s: restart it", (long long)json_integer_value(
			    json_object_get(q, "pid")), unit ? " (" : "",
			    unit ? unit : "", unit ? ")" : "", name,
			    shown(w, json_string_value(v)), shown(w,
			    w->value));
			stale = 1;
		}
		if (mtime > 0 && started > 0 && started < mtime && !stale) {
			if (nold < PIDS_SHOWN)
				buf_addf(&old, "%s%lld%s%s%s", nold ? ", " : "",
				    (long long)json_integer_value(
				    json_object_get(q, "pid")), unit ? " " : "",
				    unit ? unit : "", "");
			nold++;
			stale = 1;
		}
		if (json_is_string(json_object_get(q, "error")))
			add(ly, ENVCTL_LAYER_WARNING, "worker %lld: %s", (long long)
			    json_integer_value(json_object_get(q, "pid")),
			    jstr(q, "error"));
		ly->stale += stale;
	}
	if (nold > 0) {
		char when[32];
		time_t t = (time_t)mtime;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		add(ly, ENVCTL_LAYER_DRIFT, "%zu worker%s started before the file last changed "
		    "(%s) and run%s the old one: restart %s (pid %s%s)", nold,
		    nold == 1 ? "" : "s", when, nold == 1 ? "s" : "",
		    nold == 1 ? "it" : "them", old.data,
		    nold > PIDS_SHOWN ? ", ..." : "");
	}
	if (json_integer_value(json_object_get(p, "withheld")) > 0)
		add(ly, ENVCTL_LAYER_WARNING, "%lld worker%s of services the agent's policy does "
		    "not list were not read", (long long)json_integer_value(
		    json_object_get(p, "withheld")),
		    json_integer_value(json_object_get(p, "withheld")) == 1 ?
		    "" : "s");
	if (json_is_true(json_object_get(p, "truncated")))
		add(ly, ENVCTL_LAYER_WARNING, "more workers than envctl reads: the list is cut");
	buf_release(&old);
}

void
layers_parse(struct layers *ly, const json_t *reply,
    const struct playbook *pb, const struct desired *d,
    const struct host_state *st, const char *const *interps, size_t n)
{
	struct err err = ENVCTL_ERR_INIT;
	const json_t *s, *p;
	size_t i;

	memset(ly, 0, sizeof(*ly));
	ly->read = 1;
	if (proto_reply_error(reply, &err) != 0) {
		add(ly, ENVCTL_LAYER_WARNING, "layers: %s", err.msg);
		err_release(&err);
		return;
	}
	json_array_foreach(json_object_get(reply, "services"), i, s) {
		struct buf who = ENVCTL_BUF_INIT;

		service(ly, s, pb, d, interps, n);
		buf_addf(&who, "%s: ", jstr(s, "unit") != NULL ?
		    jstr(s, "unit") : "?");
		if (json_is_object(json_object_get(s, "nccl")))
			nccl(ly, json_object_get(s, "nccl"), d, who.data);
		buf_release(&who);
	}
	if (json_is_object(json_object_get(reply, "nccl")) &&
	    json_array_size(json_object_get(reply, "services")) == 0)
		nccl(ly, json_object_get(reply, "nccl"), d, "");
	p = json_object_get(reply, "processes");
	if (json_is_object(p))
		workers(ly, p, d, st != NULL ? st->mtime : 0);
}

json_t *
layers_json(const struct layers *ly)
{
	json_t *a = json_array();
	size_t i;
	static const char *const kinds[] = { "warning", "drift", "info" };

	for (i = 0; i < ly->n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "text",
		    ly->f[i].text, "kind", kinds[ly->f[i].kind]));
	return json_pack("{s:o, s:I, s:I}", "findings", a, "stale_workers",
	    (json_int_t)ly->stale, "workers", (json_int_t)ly->workers);
}

void
layers_release(struct layers *ly)
{
	size_t i;

	for (i = 0; i < ly->n; i++)
		free(ly->f[i].text);
	free(ly->f);
	memset(ly, 0, sizeof(*ly));
}
