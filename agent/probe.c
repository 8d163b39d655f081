/* probe.c - one interpreter run tells what start-up does (see probe.h). */
#include "probe.h"

#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "child.h"
#include "forkserver.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"

#define STARTUP_ERROR	"Error in sitecustomize; "
#define TAIL_MAX	300
/* What probe_find() keeps of the budget for its second run. */
#define LOCATE_MIN_MS	500
#define LOCATE_MAX_MS	2000

/* The script (agent/py/probe.py), as probe_py[]. */
#include "agent/py/probe.py.h"

/* Start of the text after the last marker line in b, or NULL. */
static const char *
after_marker(const struct buf *b)
{
	static const char m[] = "\n" ENVCTL_PROBE_MARKER "\n";
	size_t mlen = sizeof(m) - 1, i;

	if (b->len < mlen)
		return NULL;
	for (i = b->len - mlen + 1; i-- > 0;)
		if (b->data[i] == '\n' && memcmp(b->data + i, m, mlen) == 0)
			return b->data + i + mlen;
	return NULL;
}

static char *
dup_text(const char *s, size_t len)
{
	json_t *v = proto_text(s, len);
	char *p = xstrdup(json_string_value(v));

	json_decref(v);
	return p;
}

/* Finds Python's "Error in sitecustomize" line and the exception after it. */
static void
parse_startup_error(struct probe *p)
{
	const char *s = p->errtext.data, *end = s + p->errtext.len, *nl, *nl2;

	while (s < end) {
		if ((nl = memchr(s, '\n', (size_t)(end - s))) == NULL)
			nl = end;
		if ((size_t)(nl - s) >= sizeof(STARTUP_ERROR) - 1 &&
		    memcmp(s, STARTUP_ERROR, sizeof(STARTUP_ERROR) - 1) == 0) {
			p->startup_message = dup_text(s, (size_t)(nl - s));
			s = nl < end ? nl + 1 : end;
			if ((nl2 = memchr(s, '\n', (size_t)(end - s))) == NULL)
				nl2 = end;
			p->startup_exception = dup_text(s, (size_t)(nl2 - s));
			return;
		}
		s = nl + 1;
	}
}

/* The last non-empty line of stderr, shortened, for a one-line message. */
static char *
stderr_tail(const struct buf *b)
{
	const char *end = b->data + b->len, *s;

	while (end > b->data && (end[-1] == '\n' || end[-1] == '\r' ||
	    end[-1] == ' '))
		end--;
	for (s = end; s > b->data && s[-1] != '\n'; s--)
		;
	if (s == end)
		return xstrdup("(nothing on stderr)");
	if (end - s > TAIL_MAX)
		s = end - TAIL_MAX;
	return dup_text(s, (size_t)(end - s));
}

static char *
get_str(const json_t *o, const char *key, int *bad)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (!json_is_null(v))
		*bad = 1;
	return NULL;
}

/* Takes the script's report apart; EPROBE when it is not what it wrote. */
static int
parse_report(struct probe *p, const char *name, const char *s, size_t len,
    struct err *err)
{
	json_error_t jerr;
	json_t *o, *v, *val;
	const char *key;
	size_t i;
	int bad = 0, r = 0;

	o = json_loadb(s, len, JSON_DISABLE_EOF_CHECK, &jerr);
	if (o == NULL)
		return err_set(err, ENVCTL_EPROBE,
		    "%s printed a malformed probe report: %s", name, jerr.text);
	p->executable = get_str(o, "executable", &bad);
	p->version = get_str(o, "version", &bad);
	p->origin = get_str(o, "origin", &bad);
	p->dangling = get_str(o, "dangling", &bad);
	p->imported = get_str(o, "imported", &bad);
	v = json_object_get(o, "site_packages");
	if (json_is_array(v)) {
		for (i = 0; i < json_array_size(v); i++)
			bad |= !json_is_string(json_array_get(v, i));
		p->site_packages = json_incref(v);
	}
	v = json_object_get(o, "values");
	if (json_is_object(v)) {
		json_object_foreach(v, key, val)
			bad |= !json_is_string(val) && !json_is_null(val);
		p->values = json_incref(v);
	}
	if (bad || p->executable == NULL || p->version == NULL ||
	    p->site_packages == NULL || p->values == NULL)
		r = err_set(err, ENVCTL_EPROBE,
		    "%s printed a probe report with missing or wrong fields",
		    name);
	json_decref(o);
	return r;
}

int
probe_run(struct probe *p, const struct probe_args *a, struct err *err)
{
	struct child_spec spec;
	struct child_result res;
	char **argv, **env, *tail;
	const char *rep;
	size_t i, n = 0, k = 0;
	int r;

	memset(p, 0, sizeof(*p));
	buf_init(&p->errtext, 0);
	while (a->env_extra != NULL && a->env_extra[n] != NULL)
		n++;
	env = xcalloc(n + 2, sizeof(*env));
	env[0] = "PATH=" ENVCTL_PROBE_PATH;
	for (i = 0; i < n; i++)
		env[1 + i] = a->env_extra[i];
	argv = xcalloc(a->nnames + 8, sizeof(*argv));
	argv[k++] = (char *)a->interp;
	if (a->locate)
		argv[k++] = "-S";
	argv[k++] = "-c";
	k = cache_script_args(argv, k, a->cache, "probe", probe_py);
	if (a->locate)
		argv[k++] = "=locate";
	for (i = 0; !a->locate && i < a->nnames; i++)
		argv[k++] = a->names[i];

	memset(&spec, 0, sizeof(spec));
	spec.name = a->interp;
	spec.argv = argv;
	spec.envp = env;
	spec.path = ENVCTL_PROBE_PATH;
	spec.cwd = "/";
	spec.timeout_ms = a->timeout_ms;
	spec.out_keep = ENVCTL_PROBE_OUT_KEEP;
	spec.err_keep = ENVCTL_PROBE_ERR_KEEP;
	spec.stop = a->stop;
	spec.waitmask = a->waitmask;
	/*
	 * A server pays off from the second run on: start one only when
	 * more runs follow, and, asked to prestart, while this one runs
	 * afresh (the change follows: with the read, or a round trip
	 * later).  It cannot serve this run, or broke: a fresh start.
	 */
	r = ENVCTL_EUNSUPPORTED;
	child_result_init(&res);
	if (a->fs != NULL && !a->locate && a->prestart_fs &&
	    !forkserver_serving(a->fs))
		(void)forkserver_prestart(a->fs, &spec);
	else if (a->fs != NULL && !a->locate &&
	    (a->start_fs || forkserver_serving(a->fs)))
		r = forkserver_run(a->fs, &res, &spec, a->last, err);
	p->forked = r != ENVCTL_EUNSUPPORTED;
	if (!p->forked) {
		child_result_release(&res);
		r = child_run(&res, &spec, err);
	}
	if (res.exec_errno != 0) {
		r = err_errno(err, ENVCTL_EPROBE, res.exec_errno,
		    "cannot run '%s'", a->interp);
		goto out;
	}
	buf_add(&p->errtext, res.err.data, res.err.len);
	p->truncated = res.out_truncated || res.err_truncated;
	p->exit = res.status;
	/*
	 * No report yet: start-up itself (site, .pth files, sitecustomize)
	 * never ended.  Said here, by the host, before the controller's own
	 * deadline (a longer one) would only see a silent host.
	 */
	if (r == ENVCTL_ETIMEOUT && after_marker(&res.out) == NULL) {
		p->startup_failed = 1;
		r = err_set(err, ENVCTL_ETIMEOUT, "%s did not finish starting "
		    "in %g s (sitecustomize hangs?)", a->interp,
		    a->timeout_ms / 1000.0);
	}
	if (r != 0)
		goto out;
	parse_startup_error(p);
	if ((rep = after_marker(&res.out)) == NULL) {
		p->startup_failed = 1;
		tail = stderr_tail(&res.err);
		if (res.signal != 0)
			r = err_set(err, ENVCTL_EPROBE, "%s was killed by "
			    "signal %d without a probe report: %s", a->interp,
			    res.signal, tail);
		else
			r = err_set(err, ENVCTL_EPROBE, "%s exited with status "
			    "%d without a probe report: %s", a->interp,
			    res.status, tail);
		free(tail);
		goto out;
	}
	/*
	 * A report, and yet a death by a signal that was not ours: the
	 * waiter between the agent and the interpreter (child.h) was
	 * killed, by start-up itself as a rule, after which the
	 * interpreter dies too.  Whether it got as far as the report is a
	 * race; a start-up that kills its parent fails either way.
	 */
	if (res.signal != 0) {
		p->startup_failed = 1;
		r = err_set(err, ENVCTL_EPROBE, "%s was killed by signal %d "
		    "at start-up (sitecustomize kills its parent?)",
		    a->interp, res.signal);
		goto out;
	}
	r = parse_report(p, a->interp, rep,
	    (size_t)(res.out.data + res.out.len - rep), err);
out:
	child_result_release(&res);
	free(argv);
	free(env);
	return r;
}

/* The time probe_find() keeps for the located run. */
static int
locate_reserve(int timeout_ms)
{
	int r = timeout_ms / 5;

	if (r < LOCATE_MIN_MS)
		r = LOCATE_MIN_MS;
	if (r > LOCATE_MAX_MS)
		r = LOCATE_MAX_MS;
	return r < timeout_ms / 2 ? r : timeout_ms / 2;
}

static void
take(char **dst, char **src)
{
	free(*dst);
	*dst = *src;
	*src = NULL;
}

int
probe_find(struct probe *p, const struct probe_args *a, struct err *err)
{
	struct probe_args pa = *a, la = *a;
	struct err lerr = ENVCTL_ERR_INIT;
	struct buf why = ENVCTL_BUF_INIT;
	struct probe lp;
	long long t0 = deadline_now_ms();
	int r;

	pa.timeout_ms = a->timeout_ms - locate_reserve(a->timeout_ms);
	if ((r = probe_run(p, &pa, err)) == 0 || !p->startup_failed)
		return r;
	la.locate = 1;
	la.env_extra = NULL;
	la.fs = NULL;
	la.timeout_ms = a->timeout_ms - (int)(deadline_now_ms() - t0);
	if (la.timeout_ms < 1)
		la.timeout_ms = 1;
	if (probe_run(&lp, &la, &lerr) != 0) {
		/* The first failure is the one to tell. */
		probe_release(&lp);
		err_release(&lerr);
		return r;
	}
	buf_addstr(&why, err->msg);
	if (err->cause != 0)
		buf_addf(&why, ": %s", strerror(err->cause));
	p->failed = buf_detach(&why, NULL);
	take(&p->executable, &lp.executable);
	take(&p->version, &lp.version);
	take(&p->origin, &lp.origin);
	take(&p->dangling, &lp.dangling);
	json_decref(p->site_packages);
	p->site_packages = lp.site_packages;
	lp.site_packages = NULL;
	json_decref(p->values);
	p->values = json_object();
	probe_release(&lp);
	err_release(err);
	return 0;
}

void
probe_release(struct probe *p)
{
	free(p->failed);
	free(p->executable);
	free(p->version);
	free(p->origin);
	free(p->dangling);
	free(p->imported);
	json_decref(p->site_packages);
	json_decref(p->values);
	free(p->startup_message);
	free(p->startup_exception);
	buf_release(&p->errtext);
	memset(p, 0, sizeof(*p));
}
