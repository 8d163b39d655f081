/* op_read.c - the read op (see op_read.h). */
#include "op_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "account.h"
#include "common/buf.h"
#include "common/deadline.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "cudacheck.h"
#include "fscheck.h"
#include "gpuhost.h"
#include "ops.h"
#include "op_backups.h"
#include "policy.h"
#include "probe.h"
#include "readmemo.h"
#include "request.h"
#include "target.h"

struct read_req {
	const char	*interp;
	const char	*path;		/* NULL: auto */
	char		**names;	/* borrowed from the request */
	size_t		  nnames;
	const json_t	*checks;	/* NULL or a validated array */
	int		  timeout_ms;
	int		  fork;		/* more runs follow: start the
					   fork server for this one */
	int		  prefork;	/* more runs follow: start it while
					   this one runs afresh */
	const char	*backup_dir;	/* list the target's backups, or NULL */
};

static int
parse_checks(struct read_req *rq, const json_t *v, struct err *err)
{
	const json_t *c, *name, *kind, *path, *major;
	size_t i;

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return err_set(err, ENVCTL_EINVALID,
		    "read: 'checks' must be an array");
	json_array_foreach(v, i, c) {
		name = json_object_get(c, "name");
		kind = json_object_get(c, "kind");
		path = json_object_get(c, "path");
		if (!json_is_string(name) || !json_is_string(kind) ||
		    !json_is_string(path))
			return err_set(err, ENVCTL_EINVALID,
			    "read: checks[%zu] must have string 'name', "
			    "'kind' and 'path'", i);
		if (!fscheck_kind_valid(json_string_value(kind)) &&
		    !cudacheck_kind_valid(json_string_value(kind)))
			return err_set(err, ENVCTL_EINVALID,
			    "read: checks[%zu]: unknown kind '%s' (dir, file, "
			    "executable, cuda-toolkit or ptxas)", i,
			    json_string_value(kind));
		major = json_object_get(c, "cuda_major");
		if (major != NULL && !json_is_null(major) &&
		    (!json_is_integer(major) || json_integer_value(major) < 1 ||
		    json_integer_value(major) > 99))
			return err_set(err, ENVCTL_EINVALID,
			    "read: checks[%zu]: 'cuda_major' must be an "
			    "integer from 1 to 99", i);
	}
	rq->checks = v;
	return 0;
}

static int
parse_req(struct read_req *rq, const json_t *req, struct err *err)
{
	int r;

	memset(rq, 0, sizeof(*rq));
	if ((r = req_interpreter(&rq->interp, req, "read", err)) != 0 ||
	    (r = req_path(&rq->path, json_object_get(req, "path"), 1, "read",
	    "path", err)) != 0 ||
	    (r = req_bool(&rq->fork, req, "fork", "read", err)) != 0 ||
	    (r = req_bool(&rq->prefork, req, "prefork", "read", err)) != 0 ||
	    (r = req_path(&rq->backup_dir, json_object_get(json_object_get(req,
	    "backups"), "dir"), 1, "read", "backups.dir", err)) != 0 ||
	    (r = req_int(&rq->timeout_ms, req, "timeout_ms",
	    ENVCTL_READ_TIMEOUT_MS, 1, ENVCTL_READ_TIMEOUT_MAX, "read",
	    err)) != 0 ||
	    (r = req_names(&rq->names, &rq->nnames, json_object_get(req,
	    "vars"), "read", "vars", err)) != 0)
		return r;
	return parse_checks(rq, json_object_get(req, "checks"), err);
}


static json_t *
target_json(const struct target *t, const char *path, const char *source)
{
	json_t *o = json_object(), *chain = json_array();
	char *owner, *group;
	size_t i;

	json_object_set_new(o, "path", proto_text_or_null(path));
	json_object_set_new(o, "source", json_string(source));
	for (i = 0; i < t->nchain; i++)
		json_array_append_new(chain, proto_text_or_null(t->chain[i]));
	json_object_set_new(o, "chain", chain);
	json_object_set_new(o, "real", proto_text_or_null(t->real));
	json_object_set_new(o, "exists", json_boolean(t->exists));
	if (!t->exists)
		return o;
	owner = account_user(t->uid);
	group = account_group(t->gid);
	json_object_set_new(o, "mode", json_integer(t->mode));
	json_object_set_new(o, "uid", json_integer(t->uid));
	json_object_set_new(o, "gid", json_integer(t->gid));
	/* Workers started before it run the file it replaced. */
	json_object_set_new(o, "mtime", json_integer(t->mtime));
	json_object_set_new(o, "owner", proto_text_or_null(owner));
	json_object_set_new(o, "group", proto_text_or_null(group));
	json_object_set_new(o, "size", json_integer((json_int_t)t->data.len));
	json_object_set_new(o, "data", proto_b64_json(t->data.data,
	    t->data.len));
	free(owner);
	free(group);
	return o;
}

/* The interpreter imports another real file than the managed one. */
static int
is_shadowed(const struct read_req *rq, const struct probe *p,
    const struct target *t)
{
	char *real;
	int r;

	if (rq->path == NULL || p->origin == NULL || p->origin[0] != '/')
		return 0;
	if ((real = realpath(p->origin, NULL)) == NULL)
		real = xstrdup(p->origin);
	r = strcmp(real, t->real) != 0;
	free(real);
	return r;
}

static json_t *
probe_json(const struct probe *p, int shadowed)
{
	json_t *o = json_object(), *se = json_null();

	if (p->startup_message != NULL)
		se = json_pack("{s:o,s:o}",
		    "message", proto_text_or_null(p->startup_message),
		    "exception", proto_text_or_null(p->startup_exception));
	json_object_set_new(o, "origin", proto_text_or_null(p->origin));
	json_object_set_new(o, "imported", proto_text_or_null(p->imported));
	json_object_set_new(o, "startup_error", se);
	json_object_set_new(o, "stderr", proto_text(p->errtext.data,
	    p->errtext.len));
	json_object_set_new(o, "truncated", json_boolean(p->truncated));
	json_object_set_new(o, "exit", json_integer(p->exit));
	json_object_set_new(o, "forked", json_boolean(p->forked));
	json_object_set(o, "values", p->values);
	json_object_set_new(o, "shadowed", json_boolean(shadowed));
	json_object_set_new(o, "failed", proto_text_or_null(p->failed));
	json_object_set(o, "site_packages", p->site_packages);
	return o;
}

/*
 * The checks' answers.  The CUDA kinds run programs: they run before the
 * probe, in at most half of the read's timeout_ms, so that neither a
 * hanging sitecustomize nor a hanging ptxas leaves the other no time.
 */
static json_t *
checks_json(const struct read_req *rq, struct policy *pol,
    const struct agent_ctx *ctx, int *ran)
{
	json_t *a = json_array(), *c, *res;
	const char *reason, *kind, *path;
	struct gpuhost g;
	struct cudacheck cc;
	size_t i;
	int ok;

	gpuhost_init(&g, ctx, pol, rq->timeout_ms / 2);
	cudacheck_init(&cc, &g);
	json_array_foreach(rq->checks, i, c) {
		kind = json_string_value(json_object_get(c, "kind"));
		path = json_string_value(json_object_get(c, "path"));
		res = json_object();
		json_object_set(res, "name", json_object_get(c, "name"));
		json_object_set_new(res, "kind", json_string(kind));
		json_object_set(res, "path", json_object_get(c, "path"));
		if (cudacheck_kind_valid(kind)) {
			cudacheck_run(&cc, res, kind, path, (int)
			    json_integer_value(json_object_get(c,
			    "cuda_major")));
			json_array_append_new(a, res);
			continue;
		}
		ok = fscheck_run(kind, path, &reason);
		json_object_set_new(res, "ok", json_boolean(ok));
		if (!ok)
			json_object_set_new(res, "reason", proto_text_or_null(reason));
		json_array_append_new(a, res);
	}
	*ran = cc.asked;
	cudacheck_release(&cc);
	return a;
}

/*
 * The backups op's reply for the target, or its error reply: a read that
 * found the file does not fail because the backups cannot be listed.
 */
static json_t *
backups_json(struct policy *pol, const char *dir, const char *real)
{
	struct err err = ENVCTL_ERR_INIT;
	json_t *o = json_object();

	if (op_backups_list(o, pol, dir, real, &err) != 0) {
		json_decref(o);
		o = ops_error_reply(NULL, &err);
	} else
		json_object_set_new(o, "ok", json_true());
	err_release(&err);
	return o;
}

int
op_read(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	struct read_req rq;
	struct policy pol = POLICY_INIT;
	struct probe_args pa;
	struct probe p;
	struct target t;
	const char *source = "explicit", *asked;
	char *path = NULL;
	long long start = deadline_now_ms();
	json_t *checks = NULL;
	int r, ran = 0, left;

	memset(&p, 0, sizeof(p));
	buf_init(&p.errtext, 0);
	memset(&t, 0, sizeof(t));
	buf_init(&t.data, 0);
	asked = NULL;
	if ((r = parse_req(&rq, req, err)) != 0)
		goto out;
	/* As the request named it: an apply after this read names it so. */
	asked = rq.interp;
	if ((r = policy_open(&pol, err)) != 0 ||
	    (r = policy_interpreter(&pol, &rq.interp, err)) != 0)
		goto out;
	checks = rq.checks != NULL ? checks_json(&rq, &pol, ctx, &ran) :
	    json_array();
	/* The probe has what CUDA checks left: the controller waits no more. */
	left = rq.timeout_ms;
	if (ran && (left = deadline_left_ms(start + rq.timeout_ms,
	    deadline_now_ms())) < 1)
		left = 1;
	ran = 0;
	memset(&pa, 0, sizeof(pa));
	pa.interp = rq.interp;
	pa.names = rq.names;
	pa.nnames = rq.nnames;
	pa.timeout_ms = left;
	pa.stop = ctx->stop;
	pa.waitmask = ctx->waitmask;
	pa.cache = ctx->cache;
	/*
	 * Only a read that starts the fork server uses it: a host's further
	 * interpreters are read afresh, so that theirs do not replace it.
	 */
	pa.fs = rq.fork || rq.prefork ? ctx->fs : NULL;
	pa.start_fs = rq.fork;
	pa.prestart_fs = rq.prefork && !rq.fork;
	ran = 1;
	if ((r = probe_find(&p, &pa, err)) != 0)
		goto out;
	if (rq.path != NULL)
		path = xstrdup(rq.path);
	else if ((r = policy_auto_target(&path, &source, &p, rq.interp,
	    err)) != 0)
		goto out;
	if ((r = policy_target(&pol, path, &p, err)) != 0 ||
	    (r = target_read(&t, path, err)) != 0)
		goto out;

	json_object_set_new(reply, "interpreter", json_pack("{s:o,s:o}",
	    "path", proto_text_or_null(p.executable), "version", proto_text_or_null(p.version)));
	json_object_set_new(reply, "target", target_json(&t, path, source));
	json_object_set_new(reply, "probe",
	    probe_json(&p, is_shadowed(&rq, &p, &t)));
	json_object_set_new(reply, "checks", checks);
	checks = NULL;
	if (rq.backup_dir != NULL)
		json_object_set_new(reply, "backups", backups_json(&pol,
		    rq.backup_dir, t.real));
out:
	/* Failures after the interpreter ran keep what it said. */
	if (r != 0 && ran && (p.errtext.len > 0 || p.exit != 0))
		json_object_set_new(reply, "detail", json_pack("{s:i,s:o,s:b}",
		    "exit", p.exit, "stderr", proto_text(p.errtext.data,
		    p.errtext.len), "truncated", p.truncated));
	if (ctx->memo != NULL)
		readmemo_set(ctx->memo, json_integer_value(json_object_get(req,
		    "id")), asked != NULL ? asked : "", r == 0, path, &t, &p,
		    json_object_get(reply, "checks"));
	json_decref(checks);
	free(path);
	free(rq.names);
	policy_release(&pol);
	target_release(&t);
	probe_release(&p);
	return r;
}
