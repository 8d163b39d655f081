/* discover.c - facts --discover over the fleet (see discover.h). */
#include "discover.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/context.h"
#include "controller/engine.h"
#include "controller/fleet.h"
#include "controller/inventory.h"
#include "controller/output.h"
#include "controller/report.h"
#include "controller/transport.h"

static const char *const kinds[] = { "system", "venv", "uv-venv", "uv",
	"conda", "pyenv", "other", NULL };
static const char *const source_names[] = { "system", "opt", "root",
	"venv", "conda", "uv", "pyenv", "systemd", "process", NULL };

static int
in_set(const char *s, const char *const *set)
{
	size_t i;

	for (i = 0; set[i] != NULL; i++)
		if (strcmp(s, set[i]) == 0)
			return 1;
	return 0;
}

json_t *
discover_request(json_int_t id, int timeout_ms)
{
	return json_pack("{s:s, s:I, s:i}", "op", "discover", "id", id,
	    "timeout_ms", timeout_ms);
}

/* The first problem wins: later ones are not recorded over it. */
static int
bad(struct err *err, const char *where, size_t i, const char *key,
    const char *what)
{
	if (err->code != 0)
		return err->code;
	if (where == NULL)
		return err_set(err, ENVCTL_EPARSE, "agent reply: '%s' %s",
		    key, what);
	return err_set(err, ENVCTL_EPARSE, "agent reply: '%s[%zu].%s' %s",
	    where, i, key, what);
}

static int
has_control(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/*
 * o's key as a new string: required strings, absolute paths (flags), or
 * null where allowed; *out NULL and err set otherwise.
 */
#define S_NULL	1	/* may be null */
#define S_PATH	2	/* an absolute path without control bytes */
#define S_LINE	4	/* no control bytes */

static int
get_str(char **out, const json_t *o, const char *key, int flags,
    const char *where, size_t i, struct err *err)
{
	const json_t *v = json_object_get(o, key);
	const char *s;

	*out = NULL;
	if (v == NULL)
		return bad(err, where, i, key, "is missing");
	if (json_is_null(v)) {
		if (flags & S_NULL)
			return 0;
		return bad(err, where, i, key, "is null");
	}
	if (!json_is_string(v))
		return bad(err, where, i, key, "is not a string");
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v) ||
	    json_string_length(v) > ENVCTL_DISCOVER_STR_MAX)
		return bad(err, where, i, key, "holds a NUL byte or is too "
		    "long");
	if ((flags & S_PATH) && s[0] != '/')
		return bad(err, where, i, key, "is not an absolute path");
	if ((flags & (S_PATH | S_LINE)) && has_control(s))
		return bad(err, where, i, key, "holds a control character");
	*out = xstrdup(s);
	return 0;
}

static int
get_bool(int *out, const json_t *o, const char *key, const char *where,
    size_t i, struct err *err)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_boolean(v))
		return bad(err, where, i, key, "is missing or not a boolean");
	*out = json_is_true(v);
	return 0;
}

static int
parse_sources(struct discover_interp *di, const json_t *a, size_t i,
    struct err *err)
{
	const json_t *v;
	size_t j;

	if (!json_is_array(a) || json_array_size(a) == 0 ||
	    json_array_size(a) > 16)
		return bad(err, "candidates", i, "sources", "is not an array "
		    "of 1 to 16 sources");
	di->sources = xcalloc(json_array_size(a) + 1, sizeof(*di->sources));
	json_array_foreach(a, j, v) {
		if (!json_is_string(v) || !in_set(json_string_value(v),
		    source_names))
			return bad(err, "candidates", i, "sources",
			    "holds a source envctl does not know");
		di->sources[di->nsources++] = xstrdup(json_string_value(v));
	}
	return 0;
}

static int
parse_interp(struct discover_interp *di, const json_t *c, size_t i,
    struct err *err)
{
	const char *w = "candidates";

	if (!json_is_object(c))
		return bad(err, w, i, "", "is not an object");
	get_str(&di->path, c, "path", S_PATH, w, i, err);
	get_str(&di->real, c, "real", S_PATH, w, i, err);
	get_str(&di->kind, c, "kind", S_LINE, w, i, err);
	if (di->kind != NULL && !in_set(di->kind, kinds))
		bad(err, w, i, "kind", "is not a kind envctl knows");
	parse_sources(di, json_object_get(c, "sources"), i, err);
	get_bool(&di->probed, c, "probed", w, i, err);
	get_str(&di->executable, c, "executable", S_NULL | S_LINE, w, i, err);
	get_str(&di->version, c, "version", S_NULL | S_LINE, w, i, err);
	get_str(&di->site, c, "sitecustomize", S_NULL | S_PATH, w, i, err);
	get_str(&di->site_real, c, "sitecustomize_real", S_NULL | S_PATH, w,
	    i, err);
	get_str(&di->would_create, c, "would_create", S_NULL | S_PATH, w, i,
	    err);
	get_str(&di->startup_error, c, "startup_error", S_NULL, w, i, err);
	get_str(&di->failed, c, "failed", S_NULL, w, i, err);
	get_str(&di->error, c, "error", S_NULL, w, i, err);
	if (err->code == 0 && di->probed && di->error == NULL &&
	    (di->version == NULL || (di->site == NULL) ==
	    (di->would_create == NULL)))
		bad(err, w, i, "version", "or its sitecustomize is missing "
		    "for a probed interpreter");
	if (err->code == 0 && !di->probed && di->error == NULL)
		bad(err, w, i, "error", "is null for an interpreter not "
		    "probed");
	return err->code;
}

int
discover_parse(struct discover_host *dh, const json_t *reply,
    struct err *err)
{
	const json_t *a = json_object_get(reply, "candidates"), *v;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) >
	    ENVCTL_DISCOVER_MAX_CANDS)
		return bad(err, NULL, 0, "candidates", "is missing or not an "
		    "array of at most 256 interpreters");
	if (get_bool(&dh->privileged, reply, "privileged", NULL, 0, err) != 0)
		return err->code;
	v = json_object_get(reply, "entries");
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return bad(err, NULL, 0, "entries", "is missing or not a "
		    "count");
	dh->entries = json_integer_value(v);
	if (get_str(&dh->truncated, reply, "truncated", S_NULL | S_LINE, NULL,
	    0, err) != 0)
		return err->code;
	dh->interps = xcalloc(json_array_size(a) + 1, sizeof(*dh->interps));
	json_array_foreach(a, i, v) {
		dh->ninterps++;
		if (parse_interp(&dh->interps[i], v, i, err) != 0)
			return err->code;
	}
	return 0;
}

/* s with control bytes as \xNN: a host's text is never sent raw. */
static void
add_clean(struct buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			buf_addf(b, "\\x%02x", (unsigned char)*s);
		else
			buf_addch(b, *s);
	}
}

/* The sitecustomize column. */
static char *
site_cell(const struct discover_interp *di)
{
	if (di->site_real != NULL)
		return xstrdup(di->site_real);
	if (di->site != NULL)
		return xasprintf("%s (missing)", di->site);
	if (di->would_create != NULL)
		return xasprintf("(none: would be %s)", di->would_create);
	return xstrdup("-");
}

static char *
sources_cell(const struct discover_interp *di)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	for (i = 0; i < di->nsources; i++)
		buf_addf(&b, "%s%s", i > 0 ? "," : "", di->sources[i]);
	return buf_detach(&b, NULL);
}

/* A cell padded to width (in bytes: paths are mostly ASCII). */
static void
add_cell(struct buf *b, const char *s, size_t width, int last)
{
	size_t n = strlen(s);

	add_clean(b, s);
	if (last)
		return;
	for (; n < width + 2; n++)
		buf_addch(b, ' ');
}

/* A path as a YAML flow scalar: plain when it can be, else quoted. */
static void
add_yaml(struct buf *b, const char *s)
{
	json_t *v;
	char *q;

	if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._/+-") == strlen(s)) {
		buf_addstr(b, s);
		return;
	}
	v = json_string(s);
	q = json_dumps(v, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
	buf_addstr(b, q);
	free(q);
	json_decref(v);
}

#define NCOLS	5

void
discover_text(struct buf *out, const struct discover_host *dh)
{
	static const char *const head[NCOLS] = { "PATH", "VERSION", "KIND",
		"SITECUSTOMIZE", "FOUND BY" };
	char ***cells;
	size_t w[NCOLS], i, j, n = dh->ninterps, hint = 0;
	const struct discover_interp *di;

	if (dh->outcome != ENVCTL_OUT_OK) {
		err_format(&dh->err, out);
		return;
	}
	buf_addf(out, "%s: %zu interpreter%s%s\n", dh->name, n,
	    n == 1 ? "" : "s", dh->privileged ? " (privileged agent: only "
	    "root's interpreters were run)" : "");
	if (dh->truncated != NULL) {
		buf_addstr(out, "    list incomplete: ");
		add_clean(out, dh->truncated);
		buf_addch(out, '\n');
	}
	if (n == 0)
		return;
	cells = xcalloc(n, sizeof(*cells));
	for (j = 0; j < NCOLS; j++)
		w[j] = strlen(head[j]);
	for (i = 0; i < n; i++) {
		di = &dh->interps[i];
		cells[i] = xcalloc(NCOLS, sizeof(**cells));
		cells[i][0] = xstrdup(di->path);
		cells[i][1] = xstrdup(di->version != NULL ? di->version : "-");
		cells[i][2] = xstrdup(di->kind);
		cells[i][3] = site_cell(di);
		cells[i][4] = sources_cell(di);
		for (j = 0; j < NCOLS; j++)
			if (strlen(cells[i][j]) > w[j])
				w[j] = strlen(cells[i][j]);
	}
	buf_addstr(out, "    ");
	for (j = 0; j < NCOLS; j++)
		add_cell(out, head[j], w[j], j == NCOLS - 1);
	buf_addch(out, '\n');
	for (i = 0; i < n; i++) {
		buf_addstr(out, "    ");
		for (j = 0; j < NCOLS; j++)
			add_cell(out, cells[i][j], w[j], j == NCOLS - 1);
		buf_addch(out, '\n');
	}
	for (i = 0; i < n; i++) {
		di = &dh->interps[i];
		if (di->error == NULL && di->failed == NULL &&
		    di->startup_error == NULL)
			continue;
		buf_addstr(out, "    ");
		add_clean(out, di->path);
		buf_addstr(out, ": ");
		if (di->error != NULL)
			add_clean(out, di->error);
		else {
			buf_addstr(out, "start-up fails: ");
			add_clean(out, di->failed != NULL ? di->failed :
			    di->startup_error);
		}
		buf_addch(out, '\n');
	}
	for (i = 0; i < n; i++) {
		di = &dh->interps[i];
		if (!di->probed || di->error != NULL)
			continue;
		buf_addstr(out, hint++ == 0 ? "    hint: to manage them, list "
		    "them in the playbook or inventory:\n      interpreters: [" :
		    ", ");
		add_yaml(out, di->path);
	}
	if (hint > 0)
		buf_addstr(out, "]\n");
	for (i = 0; i < n; i++) {
		for (j = 0; j < NCOLS; j++)
			free(cells[i][j]);
		free(cells[i]);
	}
	free(cells);
}

json_t *
discover_json(const struct discover_host *dh)
{
	json_t *o = json_object(), *a = json_array(), *c, *src;
	const struct discover_interp *di;
	size_t i, j;

	json_object_set_new(o, "name", json_string(dh->name));
	json_object_set_new(o, "outcome", json_string(outcome_name(
	    dh->outcome)));
	json_object_set_new(o, "error", dh->outcome == ENVCTL_OUT_OK ?
	    json_null() : report_err_json(&dh->err));
	json_object_set_new(o, "privileged", json_boolean(dh->privileged));
	json_object_set_new(o, "truncated", proto_text_or_null(dh->truncated));
	for (i = 0; i < dh->ninterps; i++) {
		di = &dh->interps[i];
		src = json_array();
		for (j = 0; j < di->nsources; j++)
			json_array_append_new(src, json_string(di->sources[j]));
		c = json_object();
		json_object_set_new(c, "path", json_string(di->path));
		json_object_set_new(c, "real", json_string(di->real));
		json_object_set_new(c, "kind", json_string(di->kind));
		json_object_set_new(c, "sources", src);
		json_object_set_new(c, "probed", json_boolean(di->probed));
		json_object_set_new(c, "executable", proto_text_or_null(
		    di->executable));
		json_object_set_new(c, "version", proto_text_or_null(
		    di->version));
		json_object_set_new(c, "sitecustomize", di->site == NULL ?
		    json_null() : json_pack("{s:s, s:o}", "path", di->site,
		    "real", proto_text_or_null(di->site_real)));
		json_object_set_new(c, "would_create", proto_text_or_null(
		    di->would_create));
		json_object_set_new(c, "startup_error", proto_text_or_null(
		    di->startup_error));
		json_object_set_new(c, "failed", proto_text_or_null(
		    di->failed));
		json_object_set_new(c, "error", proto_text_or_null(di->error));
		json_array_append_new(a, c);
	}
	json_object_set_new(o, "interpreters", a);
	return o;
}

void
discover_host_release(struct discover_host *dh)
{
	size_t i, j;

	for (i = 0; i < dh->ninterps; i++) {
		struct discover_interp *di = &dh->interps[i];

		free(di->path);
		free(di->real);
		free(di->kind);
		for (j = 0; j < di->nsources; j++)
			free(di->sources[j]);
		free(di->sources);
		free(di->executable);
		free(di->version);
		free(di->site);
		free(di->site_real);
		free(di->would_create);
		free(di->startup_error);
		free(di->failed);
		free(di->error);
	}
	free(dh->interps);
	free(dh->truncated);
	err_release(&dh->err);
	dh->interps = NULL;
	dh->ninterps = 0;
	dh->truncated = NULL;
}

/* ---- the run ---- */

struct discover_run {
	const struct engine_policy *p;
	const struct context *ctx;
	struct agentlink_opts link;
	struct discover_host *hosts;
	const struct host	**hs;
};

/* hello and discover pipelined, then both replies. */
static int
exchange(struct discover_host *dh, struct agentlink *l, struct err *err)
{
	json_t *req, *hello = NULL, *rep = NULL;
	int r;

	req = json_pack("{s:s, s:i, s:i}", "op", "hello", "id", 1,
	    "protocol", ENVCTL_PROTO_VERSION);
	r = agentlink_send(l, req, err);
	json_decref(req);
	if (r != 0)
		return r;
	req = discover_request(2, agentlink_host_ms(l));
	r = agentlink_send(l, req, err);
	json_decref(req);
	if (r == 0 && (r = agentlink_recv(l, &hello, err)) == 0 &&
	    (r = proto_reply_error(hello, err)) == 0 &&
	    (r = agentlink_recv(l, &rep, err)) == 0 &&
	    (r = proto_reply_error(rep, err)) == 0)
		r = discover_parse(dh, rep, err);
	json_decref(hello);
	json_decref(rep);
	return r;
}

static void
host_job(void *arg, size_t i)
{
	struct discover_run *dr = arg;
	struct discover_host *dh = &dr->hosts[i];
	struct agentlink *l = NULL;

	dh->outcome = ENVCTL_OUT_FAILED;
	if (agentlink_open(&l, dr->hs[i], &dr->link, &dh->err) != 0)
		dh->outcome = ENVCTL_OUT_UNREACHABLE;
	else if (exchange(dh, l, &dh->err) == 0)
		dh->outcome = ENVCTL_OUT_OK;
	if (dh->outcome != ENVCTL_OUT_OK)
		err_sethost(&dh->err, dh->name);
	if (l != NULL)
		agentlink_close(l);
}

static void
host_done(void *arg, size_t i)
{
	struct discover_run *dr = arg;
	struct buf b = ENVCTL_BUF_INIT;

	if (dr->p->progress)
		out_note("\r\033[K");
	if (dr->p->json)
		return;
	discover_text(&b, &dr->hosts[i]);
	out_write(b.data, b.len);
	buf_release(&b);
}

static void
host_progress(void *arg, size_t ndone, size_t n)
{
	struct discover_run *dr = arg;

	if (dr->p->progress && ndone < n)
		out_note("\r\033[K%zu/%zu hosts done", ndone, n);
}

int
discover_fleet(const struct engine_policy *p, const struct context *ctx)
{
	struct discover_run dr;
	struct agent_binary ab;
	struct plan_counts counts;
	struct fleet_job fj;
	struct err err = ENVCTL_ERR_INIT;
	json_t *hosts, *doc;
	size_t *idx, i, n = 0;
	int r;

	memset(&ab, 0, sizeof(ab));
	memset(&counts, 0, sizeof(counts));
	if ((r = agent_binary_load(&ab, NULL, &err)) != 0) {
		out_errors(&err);
		err_release(&err);
		return r;
	}
	memset(&dr, 0, sizeof(dr));
	dr.p = p;
	dr.ctx = ctx;
	dr.link = p->link;
	dr.link.agent = &ab;
	dr.hosts = xcalloc(ctx->nselected + 1, sizeof(*dr.hosts));
	dr.hs = xcalloc(ctx->nselected + 1, sizeof(*dr.hs));
	idx = xcalloc(ctx->nselected + 1, sizeof(*idx));
	for (i = 0; i < inventory_nhosts(ctx->inv); i++) {
		if (!ctx->selected[i])
			continue;
		dr.hs[n] = inventory_host(ctx->inv, i);
		dr.hosts[n].name = dr.hs[n]->name;
		idx[n] = n;
		n++;
	}
	fj.job = host_job;
	fj.done = host_done;
	fj.progress = host_progress;
	fj.ctx = &dr;
	dr.link.startups = startups_new(dr.link.max_startups);
	transport_init();
	fleet_run(&fj, idx, n, p->forks);
	transport_finish();
	startups_free(dr.link.startups);
	dr.link.startups = NULL;
	r = 0;
	for (i = 0; i < n; i++) {
		report_count_outcome(&counts, dr.hosts[i].outcome);
		if (dr.hosts[i].outcome != ENVCTL_OUT_OK)
			r = 1;
	}
	if (p->json) {
		hosts = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(hosts,
			    discover_json(&dr.hosts[i]));
		doc = report_envelope("facts", p->inventory, ctx->pb, &counts,
		    hosts);
		json_object_set_new(doc, "discover", json_true());
		report_envelope_shard(doc, ctx->inv, ctx->pb, &ctx->shard);
		out_json(doc);
	}
	for (i = 0; i < n; i++)
		discover_host_release(&dr.hosts[i]);
	free(dr.hosts);
	free(dr.hs);
	free(idx);
	agent_binary_release(&ab);
	return r;
}
