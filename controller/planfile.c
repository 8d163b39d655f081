/* planfile.c - the saved plan, written and read (see planfile.h). */
#include "planfile.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/atomicfile.h"
#include "controller/desired.h"
#include "controller/hoststate.h"
#include "controller/inventory.h"
#include "controller/plan.h"
#include "controller/playbook.h"

#define INPUT_MAX	(64u * 1024 * 1024)
#define PLANFILE_MAX	(256u * 1024 * 1024)

int
planfile_playbook_digest(char *hex, const struct playbook *pb,
    struct err *err)
{
	struct buf b;
	int r;

	buf_init(&b, INPUT_MAX);
	if ((r = buf_read_file(&b, pb->path, err)) == 0) {
		buf_add(&b, pb->template.data, pb->template.len);
		hash_sha256_hex(hex, b.data, b.len);
	}
	buf_release(&b);
	return r;
}

/* --- writing --------------------------------------------------------- */

static json_t *
host_json(const struct host_plan *hp)
{
	const struct host_state *st = &hp->st;
	json_t *h, *cur, *in;
	size_t i;

	h = json_pack("{s:s, s:s, s:i, s:s}", "name", hp->host->name,
	    "address", hp->host->address, "port", hp->host->port,
	    "outcome", outcome_name(hp->outcome));
	if (hp->ninterps > 0) {
		in = json_array();
		for (i = 0; i < hp->ninterps; i++)
			json_array_append_new(in, json_string(hp->interps[i]));
		json_object_set_new(h, "interpreters", in);
	}
	if (!hp->have_state || hp->err.code != 0)
		return h;
	cur = json_pack("{s:b}", "exists", st->exists);
	if (st->exists) {
		json_object_set_new(cur, "sha256", json_string(st->sha256));
		json_object_set_new(cur, "mode", json_integer(st->mode));
		json_object_set_new(cur, "uid", json_integer(st->uid));
		json_object_set_new(cur, "gid", json_integer(st->gid));
		json_object_set_new(cur, "data_b64",
		    proto_b64_json(st->content.data, st->content.len));
	}
	json_object_set_new(h, "target", json_string(st->path));
	json_object_set_new(h, "real", json_string(st->real));
	json_object_set_new(h, "current", cur);
	json_object_set_new(h, "desired", json_pack("{s:s, s:o}", "sha256",
	    hp->want_sha256, "data_b64", proto_b64_json(hp->d.content.data,
	    hp->d.content.len)));
	return h;
}

int
planfile_write(const char *path, const struct inventory *inv,
    const struct playbook *pb, struct host_plan *const *hps, size_t n,
    struct err *err)
{
	char pb_hex[ENVCTL_SHA256_HEX], when[32];
	json_t *root, *hosts;
	char *text = NULL;
	time_t now = time(NULL);
	struct tm tm;
	size_t i;
	int r;

	if ((r = planfile_playbook_digest(pb_hex, pb, err)) != 0)
		return r;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	hosts = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(hosts, host_json(hps[i]));
	/*
	 * Keys in this order (jansson keeps insertion order), "kind" and
	 * "format" first: even a plan cut short says what it is.
	 */
	root = json_pack("{s:s, s:i, s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, "
	    "s:s}, s:o}", "kind", ENVCTL_PLANFILE_KIND, "format",
	    ENVCTL_PLANFILE_FORMAT, "envctl", ENVCTL_VERSION, "created", when,
	    "inventory", "path", inventory_path(inv), "sha256",
	    inventory_digest(inv),
	    "playbook", "path", pb->path, "name", pb->name, "sha256", pb_hex,
	    "hosts", hosts);
	text = json_dumps(root, JSON_INDENT(1));
	json_decref(root);
	if (text == NULL)
		return err_set(err, ENVCTL_EINVALID, "cannot encode the plan "
		    "as JSON");
	r = atomic_write_file(path, text, strlen(text), 0600, err);
	explicit_wipe(text, strlen(text));
	free(text);
	return r;
}

/* --- reading --------------------------------------------------------- */

/* A plan being read: its name in messages and where errors go. */
struct rd {
	const char	*label;
	struct err	*err;
};

/* "LABEL[:LINE:COL]: not a valid plan file: MESSAGE"; returns code. */
static int
bad_at(struct rd *rd, int code, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int
bad_at(struct rd *rd, int code, int line, int col, const char *fmt, ...)
{
	struct buf b = ENVCTL_BUF_INIT;
	va_list ap;

	buf_addstr(&b, "not a valid plan file: ");
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	err_setat(rd->err, code, rd->label, line, col, "%s", b.data);
	buf_release(&b);
	return code;
}

#define bad(rd, code, ...)	bad_at(rd, code, 0, 0, __VA_ARGS__)

/* jansson's errors, mapped here only: its position, its text. */
static int
bad_json(struct rd *rd, const json_error_t *je)
{
	int code = json_error_code(je) == json_error_out_of_memory ?
	    ENVCTL_ETOOBIG : ENVCTL_EPARSE;

	return bad_at(rd, code, je->line, je->column, "%s", je->text);
}

/* The member key of o (named at + key in messages): a string. */
static int
get_string(const char **out, struct rd *rd, const json_t *o, const char *at,
    const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL)
		return bad(rd, ENVCTL_EPARSE, "'%s%s' is missing", at, key);
	if (!json_is_string(v))
		return bad(rd, ENVCTL_EPARSE, "'%s%s' must be a string", at,
		    key);
	*out = json_string_value(v);
	return 0;
}

static int
get_object(const json_t **out, struct rd *rd, const json_t *o,
    const char *at, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL)
		return bad(rd, ENVCTL_EPARSE, "'%s%s' is missing", at, key);
	if (!json_is_object(v))
		return bad(rd, ENVCTL_EPARSE, "'%s%s' must be an object", at,
		    key);
	*out = v;
	return 0;
}

static int
dup_string(char **out, struct rd *rd, const json_t *o, const char *at,
    const char *key)
{
	const char *s = NULL;
	int r;

	if ((r = get_string(&s, rd, o, at, key)) == 0)
		*out = xstrdup(s);
	return r;
}

/* A lowercase SHA-256 in hex, as the plan records them. */
static int
is_sha256(const char *s)
{
	return strlen(s) == ENVCTL_SHA256_HEX - 1 &&
	    strspn(s, "0123456789abcdef") == ENVCTL_SHA256_HEX - 1;
}

static int
get_sha256(char *hex, struct rd *rd, const json_t *o, const char *at,
    const char *key)
{
	const char *s = NULL;
	int r;

	if ((r = get_string(&s, rd, o, at, key)) != 0)
		return r;
	if (!is_sha256(s))
		return bad(rd, ENVCTL_EPARSE, "'%s%s' is not a SHA-256 in hex",
		    at, key);
	memcpy(hex, s, ENVCTL_SHA256_HEX);
	return 0;
}

/*
 * The bytes of o's "data_b64" into out, which must have o's "sha256"
 * (copied into hex): a plan whose bytes and digests disagree was edited.
 */
static int
get_data(struct buf *out, char *hex, struct rd *rd, const json_t *o,
    const char *at)
{
	char got[ENVCTL_SHA256_HEX];
	struct err e = ENVCTL_ERR_INIT;
	const char *s = NULL;
	int r;

	if ((r = get_sha256(hex, rd, o, at, "sha256")) != 0 ||
	    (r = get_string(&s, rd, o, at, "data_b64")) != 0)
		return r;
	if ((r = proto_b64_decode(out, s, strlen(s), &e)) != 0) {
		bad(rd, r, "'%sdata_b64': %s", at, e.msg != NULL ? e.msg :
		    err_codename(r));
		err_release(&e);
		return r;
	}
	hash_sha256_hex(got, out->data, out->len);
	if (strcmp(got, hex) != 0)
		return bad(rd, ENVCTL_EINVALID, "'%ssha256' is %.12s..., but "
		    "the bytes of '%sdata_b64' have SHA-256 %.12s...", at, hex,
		    at, got);
	return 0;
}

/* The outcomes plan writes; -1 for anything else. */
static int
outcome_parse(const char *s)
{
	static const enum outcome known[] = { ENVCTL_OUT_OK,
	    ENVCTL_OUT_PENDING, ENVCTL_OUT_FAILED, ENVCTL_OUT_UNREACHABLE };
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(s, outcome_name(known[i])) == 0)
			return (int)known[i];
	return -1;
}

/* What plan recorded of a pending host's file: where, what, what next. */
static int
host_files(struct planfile_host *ph, struct rd *rd, const json_t *o,
    const char *at)
{
	struct buf a = ENVCTL_BUF_INIT;
	const json_t *cur = NULL, *want = NULL, *v;
	int r;

	if ((r = dup_string(&ph->target, rd, o, at, "target")) != 0 ||
	    (r = dup_string(&ph->real, rd, o, at, "real")) != 0)
		goto out;
	if (ph->target[0] != '/' || ph->real[0] != '/') {
		r = bad(rd, ENVCTL_EPARSE, "'%s%s' must be an absolute path",
		    at, ph->target[0] != '/' ? "target" : "real");
		goto out;
	}
	if ((r = get_object(&cur, rd, o, at, "current")) != 0 ||
	    (r = get_object(&want, rd, o, at, "desired")) != 0)
		goto out;
	buf_addf(&a, "%scurrent.", at);
	v = json_object_get(cur, "exists");
	if (!json_is_boolean(v)) {
		r = bad(rd, ENVCTL_EPARSE, "'%sexists' %s", a.data, v == NULL ?
		    "is missing" : "must be true or false");
		goto out;
	}
	ph->cur_exists = json_is_true(v);
	if (ph->cur_exists &&
	    (r = get_data(&ph->cur, ph->cur_sha256, rd, cur, a.data)) != 0)
		goto out;
	buf_reset(&a);
	buf_addf(&a, "%sdesired.", at);
	r = get_data(&ph->want, ph->want_sha256, rd, want, a.data);
out:
	buf_release(&a);
	return r;
}

/* The optional "interpreters": from 1 to 16 non-empty strings. */
static int
get_interps(struct planfile_host *ph, struct rd *rd, const json_t *o,
    const char *at)
{
	const json_t *a = json_object_get(o, "interpreters"), *v;
	size_t i, n;

	if (a == NULL)
		return 0;
	n = json_is_array(a) ? json_array_size(a) : 0;
	if (n == 0 || n > ENVCTL_PLAYBOOK_MAX_INTERPRETERS)
		return bad(rd, ENVCTL_EPARSE, "'%sinterpreters' must be a list "
		    "of 1 to %d interpreters", at,
		    ENVCTL_PLAYBOOK_MAX_INTERPRETERS);
	ph->interpreters = xcalloc(n + 1, sizeof(*ph->interpreters));
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return bad(rd, ENVCTL_EPARSE, "'%sinterpreters[%zu]' "
			    "must be a non-empty string", at, i);
		ph->interpreters[ph->ninterpreters++] =
		    xstrdup(json_string_value(v));
	}
	return 0;
}

/*
 * Two rows a and b (at indexes ka < kb) of one host: each row is a file
 * and the interpreters that import it, so they must name interpreters,
 * not the same one, and not the same file.
 */
static int
same_host(const struct planfile_host *a, const struct planfile_host *b,
    struct rd *rd, size_t ka, size_t kb)
{
	size_t i, j;

	if (a->ninterpreters == 0 || b->ninterpreters == 0 ||
	    (a->real != NULL && b->real != NULL &&
	    strcmp(a->real, b->real) == 0))
		return bad(rd, ENVCTL_EPARSE, "host '%s' is listed twice "
		    "('hosts[%zu]' and 'hosts[%zu]')", a->name, ka, kb);
	for (i = 0; i < a->ninterpreters; i++)
		for (j = 0; j < b->ninterpreters; j++)
			if (strcmp(a->interpreters[i],
			    b->interpreters[j]) == 0)
				return bad(rd, ENVCTL_EPARSE, "host '%s': "
				    "interpreter '%s' is in 'hosts[%zu]' and "
				    "'hosts[%zu]'", a->name,
				    a->interpreters[i], ka, kb);
	return 0;
}

static int
host_parse(struct planfile *pf, struct rd *rd, const json_t *o, size_t i)
{
	struct planfile_host *ph = &pf->hosts[i];
	struct buf at = ENVCTL_BUF_INIT;
	const char *outcome = NULL;
	size_t k;
	int r, oc;

	buf_addf(&at, "hosts[%zu].", i);
	if (!json_is_object(o)) {
		r = bad(rd, ENVCTL_EPARSE, "'hosts[%zu]' must be an object", i);
		goto out;
	}
	if ((r = dup_string(&ph->name, rd, o, at.data, "name")) != 0 ||
	    (r = get_string(&outcome, rd, o, at.data, "outcome")) != 0)
		goto out;
	if ((oc = outcome_parse(outcome)) < 0) {
		r = bad(rd, ENVCTL_EPARSE, "'%soutcome' is '%s', not ok, "
		    "pending, failed or unreachable", at.data, outcome);
		goto out;
	}
	ph->outcome = (enum outcome)oc;
	if ((r = get_interps(ph, rd, o, at.data)) != 0)
		goto out;
	if (ph->outcome == ENVCTL_OUT_PENDING &&
	    (r = host_files(ph, rd, o, at.data)) != 0)
		goto out;
	/* A host has a row per file its interpreters import. */
	for (k = 0; k < i; k++)
		if (strcmp(pf->hosts[k].name, ph->name) == 0 &&
		    (r = same_host(&pf->hosts[k], ph, rd, k, i)) != 0)
			goto out;
out:
	buf_release(&at);
	return r;
}

/* Format, inputs, hosts: the whole document after its kind was seen. */
static int
doc_parse(struct planfile *pf, struct rd *rd, const json_t *doc)
{
	const json_t *fmt = json_object_get(doc, "format");
	const json_t *o = NULL, *hosts, *h;
	size_t i;
	int r;

	if (!json_is_integer(fmt))
		return bad(rd, ENVCTL_EPARSE, "'format' %s", fmt == NULL ?
		    "is missing" : "must be an integer");
	if (json_integer_value(fmt) != ENVCTL_PLANFILE_FORMAT)
		return bad(rd, ENVCTL_EUNSUPPORTED, "format %"
		    JSON_INTEGER_FORMAT " is not supported (this envctl "
		    "reads format %d); run envctl plan again",
		    json_integer_value(fmt), ENVCTL_PLANFILE_FORMAT);
	if ((r = get_object(&o, rd, doc, "", "inventory")) != 0 ||
	    (r = dup_string(&pf->inventory_path, rd, o, "inventory.",
	    "path")) != 0 ||
	    (r = dup_string(&pf->inventory_sha256, rd, o, "inventory.",
	    "sha256")) != 0 ||
	    (r = get_object(&o, rd, doc, "", "playbook")) != 0 ||
	    (r = dup_string(&pf->playbook_path, rd, o, "playbook.",
	    "path")) != 0 ||
	    (r = dup_string(&pf->playbook_sha256, rd, o, "playbook.",
	    "sha256")) != 0)
		return r;
	hosts = json_object_get(doc, "hosts");
	if (!json_is_array(hosts))
		return bad(rd, ENVCTL_EPARSE, "'hosts' %s", hosts == NULL ?
		    "is missing" : "must be an array");
	pf->hosts = xcalloc(json_array_size(hosts) + 1, sizeof(*pf->hosts));
	json_array_foreach(hosts, i, h) {
		buf_init(&pf->hosts[i].cur, 0);
		buf_init(&pf->hosts[i].want, 0);
		pf->nhosts = i + 1;
		if ((r = host_parse(pf, rd, h, i)) != 0)
			return r;
	}
	return 0;
}

/*
 * Text that does not parse as JSON is a plan cut short or broken when it
 * says so, or begins as plan -o writes them: "kind" first since this
 * version, "created" first before (sorted keys).  Anything else is left
 * to the inventory reader (YAML may be written with braces too).
 */
static int
looks_like_plan(const char *text)
{
	static const char *const first[] = { "kind", "format", "created",
	    "envctl" };
	size_t i, n;

	if (strstr(text, "\"" ENVCTL_PLANFILE_KIND "\"") != NULL)
		return 1;
	text += strspn(text, " \t\r\n");
	if (*text++ != '{')
		return 0;
	text += strspn(text, " \t\r\n");
	if (*text++ != '"')
		return 0;
	for (i = 0; i < sizeof(first) / sizeof(first[0]); i++) {
		n = strlen(first[i]);
		if (strncmp(text, first[i], n) == 0 && text[n] == '"')
			return 1;
	}
	return 0;
}

/*
 * A JSON object without a string "kind": a plan that lost it when it has
 * a plan's own members, else an inventory ("_meta", or YAML as JSON).
 */
static int
is_kindless_plan(const json_t *doc)
{
	if (json_object_get(doc, "_meta") != NULL)
		return 0;
	return json_is_integer(json_object_get(doc, "format")) ||
	    json_is_string(json_object_get(doc, "envctl")) ||
	    json_is_array(json_object_get(doc, "hosts"));
}

int
planfile_parse(struct planfile *pf, int *is_plan, const char *label,
    const char *text, size_t len, struct err *err)
{
	struct rd rd = { label, err };
	json_error_t je;
	json_t *doc = NULL;
	const json_t *kind;
	struct buf nul = ENVCTL_BUF_INIT;
	size_t skip = 0;
	int r = 0;

	*is_plan = 0;
	while (skip < len && strchr(" \t\r\n", text[skip]) != NULL &&
	    text[skip] != '\0')
		skip++;
	if (skip == len || text[skip] != '{')
		goto out;
	/* Duplicate keys would let two readers see two plans. */
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (doc == NULL) {
		buf_add(&nul, text, len);	/* NUL-terminated */
		if (!looks_like_plan(nul.data))
			goto out;
		*is_plan = 1;
		r = bad_json(&rd, &je);
		goto out;
	}
	kind = json_object_get(doc, "kind");
	if (!json_is_string(kind)) {
		if (!is_kindless_plan(doc))
			goto out;
		*is_plan = 1;
		r = bad(&rd, ENVCTL_EPARSE, "'kind' %s (an envctl plan has "
		    "\"kind\": \"%s\")", kind == NULL ? "is missing" :
		    "must be a string", ENVCTL_PLANFILE_KIND);
		goto out;
	}
	*is_plan = 1;
	if (strcmp(json_string_value(kind), ENVCTL_PLANFILE_KIND) != 0) {
		r = bad(&rd, ENVCTL_EPARSE, "'kind' is '%s', not '%s'",
		    json_string_value(kind), ENVCTL_PLANFILE_KIND);
		goto out;
	}
	r = doc_parse(pf, &rd, doc);
out:
	buf_wipe(&nul);
	json_decref(doc);
	return r;
}

int
planfile_read(struct planfile *pf, int *is_plan, const char *path,
    struct err *err)
{
	struct buf b;
	int r = 0;

	*is_plan = 0;
	buf_init(&b, PLANFILE_MAX);
	if (buf_read_file(&b, path, NULL) == 0)
		r = planfile_parse(pf, is_plan, path, b.data, b.len, err);
	buf_wipe(&b);
	return r;
}

/* --- verifying ------------------------------------------------------- */

int
planfile_check_inputs(const struct planfile *pf, const struct inventory *inv,
    const struct playbook *pb, struct err *err)
{
	char hex[ENVCTL_SHA256_HEX];
	int r;

	if (strcmp(inventory_digest(inv), pf->inventory_sha256) != 0)
		return err_set(err, ENVCTL_ECHANGED, "the inventory '%s' has "
		    "changed since the plan was made; run envctl plan again",
		    inventory_path(inv));
	if ((r = planfile_playbook_digest(hex, pb, err)) != 0)
		return r;
	if (strcmp(hex, pf->playbook_sha256) != 0)
		return err_set(err, ENVCTL_ECHANGED, "the playbook '%s' has "
		    "changed since the plan was made; run envctl plan again",
		    pb->path);
	return 0;
}

int
planfile_verify_host(struct desired *d, const struct planfile_host *ph,
    const struct playbook *pb, const struct host *h, struct err *err)
{
	char hex[ENVCTL_SHA256_HEX];
	int r;

	if ((r = desired_render(d, pb, h, ph->cur_exists ? ph->cur.data :
	    NULL, ph->cur.len, ph->target, err)) != 0)
		return r;
	hash_sha256_hex(hex, d->content.data, d->content.len);
	if (strcmp(hex, ph->want_sha256) != 0 ||
	    d->content.len != ph->want.len ||
	    memcmp(d->content.data, ph->want.data, ph->want.len) != 0)
		return err_set(err, ENVCTL_EINVALID, "the plan's desired file "
		    "differs from what the inventory and playbook give today "
		    "(sha256 %.12s... in the plan, %.12s... today); run envctl "
		    "plan again", ph->want_sha256, hex);
	return 0;
}

int
planfile_check_read(const struct planfile_host *ph,
    const struct host_state *st, struct err *err)
{
	if (strcmp(st->path, ph->target) != 0)
		return err_set(err, ENVCTL_EINVALID, "the plan's target '%s' "
		    "is not the file the host's interpreter imports ('%s'); "
		    "run envctl plan again", ph->target, st->path);
	if (strcmp(st->real, ph->real) != 0)
		return err_set(err, ENVCTL_ECHANGED, "'%s' changed since the "
		    "plan was made (it now leads to '%s', not '%s')",
		    st->path, st->real, ph->real);
	return 0;
}

void
planfile_release(struct planfile *pf)
{
	size_t i, k;

	for (i = 0; i < pf->nhosts; i++) {
		free(pf->hosts[i].name);
		free(pf->hosts[i].target);
		free(pf->hosts[i].real);
		for (k = 0; k < pf->hosts[i].ninterpreters; k++)
			free(pf->hosts[i].interpreters[k]);
		free(pf->hosts[i].interpreters);
		buf_wipe(&pf->hosts[i].cur);
		buf_wipe(&pf->hosts[i].want);
	}
	free(pf->hosts);
	free(pf->inventory_path);
	free(pf->inventory_sha256);
	free(pf->playbook_path);
	free(pf->playbook_sha256);
	memset(pf, 0, sizeof(*pf));
}
