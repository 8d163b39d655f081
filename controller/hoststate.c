/* hoststate.c - a host's file, interpreter and effect (see hoststate.h). */
#include "hoststate.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "controller/desired.h"
#include "controller/inventory.h"
#include "controller/playbook.h"

#define FILE_MAX	(8u * 1024 * 1024)

json_t *
hoststate_request(const struct playbook *pb, const char *interp,
    const struct desired *d, json_int_t id, int timeout_ms)
{
	json_t *req, *vars, *checks, *c;
	size_t i;

	vars = json_array();
	checks = json_array();
	for (i = 0; i < d->nvars; i++) {
		json_array_append_new(vars, json_string(d->vars[i].name));
		if (d->vars[i].check == ENVCTL_CHECK_NONE ||
		    d->vars[i].value == NULL)
			continue;
		c = json_pack("{s:s, s:s, s:s}", "name", d->vars[i].name,
		    "kind", playbook_check_name(d->vars[i].check),
		    "path", d->vars[i].value);
		/* Only the CUDA kinds want a version; older agents see none. */
		if ((d->vars[i].check == ENVCTL_CHECK_CUDA_TOOLKIT ||
		    d->vars[i].check == ENVCTL_CHECK_PTXAS) &&
		    pb->cuda_major > 0)
			json_object_set_new(c, "cuda_major",
			    json_integer(pb->cuda_major));
		json_array_append_new(checks, c);
	}
	req = json_pack("{s:s, s:I, s:s, s:o, s:o, s:i}", "op", "read",
	    "id", id, "interpreter", interp, "vars", vars, "checks", checks,
	    "timeout_ms", timeout_ms);
	json_object_set_new(req, "path", pb->target != NULL ?
	    json_string(pb->target) : json_null());
	return req;
}

/* Copies the string member key of o; NULL (and a reported error) if absent
 * when required. */
static char *
str(const json_t *o, const char *key, int required, const char *where,
    struct err *err)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (required || (v != NULL && !json_is_null(v)))
		err_set(err, ENVCTL_EPARSE, "agent reply: '%s.%s' is missing "
		    "or not a string", where, key);
	return NULL;
}

static long
num(const json_t *o, const char *key, const char *where, struct err *err)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		return (long)json_integer_value(v);
	err_set(err, ENVCTL_EPARSE, "agent reply: '%s.%s' is missing or not "
	    "an integer", where, key);
	return -1;
}

static void
parse_target(struct host_state *st, const json_t *t, struct err *err)
{
	const json_t *chain, *v;
	const char *data;
	size_t i;

	st->path = str(t, "path", 1, "target", err);
	st->source = str(t, "source", 1, "target", err);
	st->real = str(t, "real", 1, "target", err);
	st->exists = json_is_true(json_object_get(t, "exists"));
	chain = json_object_get(t, "chain");
	if (json_is_array(chain)) {
		st->chain = xcalloc(json_array_size(chain) + 1,
		    sizeof(*st->chain));
		json_array_foreach(chain, i, v)
			if (json_is_string(v))
				st->chain[st->nchain++] =
				    xstrdup(json_string_value(v));
	}
	if (!st->exists)
		return;
	st->mode = (unsigned)num(t, "mode", "target", err) & 07777;
	st->uid = num(t, "uid", "target", err);
	st->gid = num(t, "gid", "target", err);
	/* An older agent does not send it. */
	if (json_is_integer(json_object_get(t, "mtime")))
		st->mtime = json_integer_value(json_object_get(t, "mtime"));
	st->owner = str(t, "owner", 0, "target", err);
	st->group = str(t, "group", 0, "target", err);
	v = json_object_get(t, "data");
	data = json_string_value(v);
	if (data == NULL) {
		err_set(err, ENVCTL_EPARSE, "agent reply: 'target.data' is "
		    "missing");
		return;
	}
	if (proto_b64_decode(&st->content, data, json_string_length(v),
	    err) != 0)
		return;
	hash_sha256_hex(st->sha256, st->content.data, st->content.len);
}

/* One interpreter's read: who it is and its effect (probe). */
static void
parse_interp(struct hs_interp *in, const json_t *read, struct err *err)
{
	const json_t *values, *se, *v, *p;
	const char *name, *exc, *msg;
	size_t i = 0;

	p = json_object_get(read, "interpreter");
	in->path = str(p, "path", 1, "interpreter", err);
	in->version = str(p, "version", 1, "interpreter", err);
	if ((p = json_object_get(read, "probe")) == NULL) {
		err_set(err, ENVCTL_EPARSE, "agent reply: 'probe' is missing");
		return;
	}
	in->imported = str(p, "imported", 0, "probe", err);
	in->shadowed = json_is_true(json_object_get(p, "shadowed"));
	in->probe_stderr = str(p, "stderr", 0, "probe", err);
	in->start_failed = str(p, "failed", 0, "probe", err);
	se = json_object_get(p, "startup_error");
	if (json_is_object(se)) {
		exc = json_string_value(json_object_get(se, "exception"));
		msg = json_string_value(json_object_get(se, "message"));
		in->startup_error = xstrdup(exc != NULL ? exc :
		    msg != NULL ? msg : "error in sitecustomize");
	}
	values = json_object_get(p, "values");
	if (!json_is_object(values)) {
		err_set(err, ENVCTL_EPARSE, "agent reply: 'probe.values' is "
		    "missing");
		return;
	}
	in->values = xcalloc(json_object_size(values) + 1,
	    sizeof(*in->values));
	json_object_foreach((json_t *)values, name, v) {
		in->values[i].name = xstrdup(name);
		in->values[i].value = json_is_string(v) ?
		    xstrdup(json_string_value(v)) : NULL;
		i++;
	}
	in->nvalues = i;
}

static void
interp_release(struct hs_interp *in)
{
	size_t i;

	free(in->path);
	free(in->version);
	free(in->imported);
	free(in->startup_error);
	free(in->start_failed);
	free(in->probe_stderr);
	for (i = 0; i < in->nvalues; i++) {
		if (in->values[i].value != NULL)
			explicit_wipe(in->values[i].value,
			    strlen(in->values[i].value));
		free(in->values[i].name);
		free(in->values[i].value);
	}
	free(in->values);
}

static void
parse_checks(struct host_state *st, const json_t *checks, struct err *err)
{
	const json_t *c;
	size_t i;

	if (!json_is_array(checks))
		return;
	st->checks = xcalloc(json_array_size(checks) + 1, sizeof(*st->checks));
	json_array_foreach(checks, i, c) {
		struct hs_check *k = &st->checks[st->nchecks++];

		k->name = str(c, "name", 1, "checks[]", err);
		k->kind = str(c, "kind", 1, "checks[]", err);
		k->path = str(c, "path", 1, "checks[]", err);
		k->ok = json_is_true(json_object_get(c, "ok"));
		k->reason = str(c, "reason", 0, "checks[]", err);
		k->version = str(c, "version", 0, "checks[]", err);
		k->driver_cuda = str(c, "driver_cuda", 0, "checks[]", err);
	}
}

int
hoststate_parse(struct host_state *st, const json_t *hello,
    const json_t *const *reads, size_t n, struct err *err)
{
	struct err e = ENVCTL_ERR_INIT;
	const json_t *o, *read = reads[0];
	struct hs_interp first;
	size_t i;

	memset(st, 0, sizeof(*st));
	buf_init(&st->content, FILE_MAX);
	st->agent_version = str(hello, "agent", 1, "hello", &e);
	st->arch = str(hello, "arch", 1, "hello", &e);
	st->user = str(hello, "user", 0, "hello", &e);
	st->hostname = str(hello, "hostname", 0, "hello", &e);
	if ((o = json_object_get(read, "target")) == NULL)
		err_set(&e, ENVCTL_EPARSE, "agent reply: 'target' is missing");
	else
		parse_target(st, o, &e);
	memset(&first, 0, sizeof(first));
	parse_interp(&first, read, &e);
	st->interp_path = first.path;
	st->interp_version = first.version;
	st->imported = first.imported;
	st->shadowed = first.shadowed;
	st->startup_error = first.startup_error;
	st->start_failed = first.start_failed;
	st->probe_stderr = first.probe_stderr;
	st->values = first.values;
	st->nvalues = first.nvalues;
	st->also = xcalloc(n, sizeof(*st->also));
	for (i = 1; i < n; i++)
		parse_interp(&st->also[st->nalso++], reads[i], &e);
	parse_checks(st, json_object_get(read, "checks"), &e);
	if (e.code != 0) {
		/* What was parsed before the bad field is freed too. */
		hoststate_release(st);
		buf_init(&st->content, FILE_MAX);
		err_move(err, &e);
		return err->code;
	}
	return 0;
}

const char *
hoststate_read_real(const json_t *read)
{
	return json_string_value(json_object_get(json_object_get(read,
	    "target"), "real"));
}

static const char *
value_of(const struct hs_value *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return v[i].value;
	return NULL;
}

const char *
hoststate_value(const struct host_state *st, const char *name)
{
	return value_of(st->values, st->nvalues, name);
}

const char *
hoststate_value_in(const struct host_state *st, size_t i, const char *name)
{
	if (i == 0)
		return hoststate_value(st, name);
	return value_of(st->also[i - 1].values, st->also[i - 1].nvalues, name);
}

size_t
hoststate_ninterps(const struct host_state *st)
{
	return 1 + st->nalso;
}

const char *
hoststate_interp(const struct host_state *st, size_t i)
{
	return i == 0 ? st->interp_path : st->also[i - 1].path;
}

const char *
hoststate_startup_error(const struct host_state *st, size_t i)
{
	return i == 0 ? st->startup_error : st->also[i - 1].startup_error;
}

const char *
hoststate_start_failed(const struct host_state *st, size_t i)
{
	return i == 0 ? st->start_failed : st->also[i - 1].start_failed;
}

void
hoststate_release(struct host_state *st)
{
	struct hs_interp first;
	size_t i;

	free(st->agent_version);
	free(st->arch);
	free(st->user);
	free(st->hostname);
	free(st->path);
	free(st->source);
	free(st->real);
	for (i = 0; i < st->nchain; i++)
		free(st->chain[i]);
	free(st->chain);
	free(st->owner);
	free(st->group);
	buf_wipe(&st->content);
	memset(&first, 0, sizeof(first));
	/* The first interpreter's effect, as parse_interp() made it. */
	first.path = st->interp_path;
	first.version = st->interp_version;
	first.imported = st->imported;
	first.startup_error = st->startup_error;
	first.start_failed = st->start_failed;
	first.probe_stderr = st->probe_stderr;
	first.values = st->values;
	first.nvalues = st->nvalues;
	interp_release(&first);
	for (i = 0; i < st->nchecks; i++) {
		free(st->checks[i].name);
		free(st->checks[i].kind);
		free(st->checks[i].path);
		free(st->checks[i].reason);
		free(st->checks[i].version);
		free(st->checks[i].driver_cuda);
	}
	free(st->checks);
	for (i = 0; i < st->nalso; i++)
		interp_release(&st->also[i]);
	free(st->also);
	memset(st, 0, sizeof(*st));
}
