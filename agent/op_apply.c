/* op_apply.c - the apply op (see op_apply.h). */
#include "op_apply.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "account.h"
#include "change.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "install.h"
#include "ops.h"
#include "probe.h"
#include "policy.h"
#include "readmemo.h"
#include "request.h"

static int
parse_create(struct change_req *rq, const json_t *c, struct err *err)
{
	const json_t *mode, *owner, *group;

	rq->create_mode = 0644;
	rq->create_uid = geteuid();
	rq->create_gid = getegid();
	if (c == NULL || json_is_null(c))
		return 0;
	mode = json_object_get(c, "mode");
	owner = json_object_get(c, "owner");
	group = json_object_get(c, "group");
	if (!json_is_object(c) || (mode != NULL && (!json_is_integer(mode) ||
	    json_integer_value(mode) < 0 ||
	    json_integer_value(mode) > 07777)) ||
	    (owner != NULL && !json_is_string(owner)) ||
	    (group != NULL && !json_is_string(group)))
		return err_set(err, ENVCTL_EINVALID, "apply: 'create' must be "
		    "an object with an integer 'mode' (0 to 4095) and string "
		    "'owner' and 'group'");
	if (mode != NULL)
		rq->create_mode = (mode_t)json_integer_value(mode);
	/* Names matter only for a file that is still to be made. */
	if (rq->expect_exists)
		return 0;
	if (owner != NULL && account_uid(&rq->create_uid,
	    json_string_value(owner)) != 0)
		return err_set(err, ENVCTL_EINVALID, "apply: 'create.owner': "
		    "no user '%s' in /etc/passwd", json_string_value(owner));
	if (group != NULL && account_gid(&rq->create_gid,
	    json_string_value(group)) != 0)
		return err_set(err, ENVCTL_EINVALID, "apply: 'create.group': "
		    "no group '%s' in /etc/group", json_string_value(group));
	return 0;
}

/*
 * An apply after a read of the same flight takes the target and the bytes
 * the read found, or is skipped (*skip the reason) where the controller
 * would not ask for it: the read failed, or found the file as wanted.
 */
static int
take_read(const char **skip, struct change *c, struct err *err)
{
	struct change_req *rq = &c->rq;
	const struct read_memo *m = c->ctx->memo;
	char *why = NULL;

	if (m == NULL || m->id != rq->after_read ||
	    strcmp(m->interp, rq->interp) != 0)
		return err_set(err, ENVCTL_EINVALID, "apply: 'after_read': "
		    "read %lld of '%s' is not this session's last read",
		    (long long)rq->after_read, rq->interp);
	install_fault(rq->fault, "with-read");
	if (!m->ok)
		*skip = "read-failed";
	else if (install_fault_is(rq->fault, "skip-with-read"))
		*skip = "in-sync";
	/* A start-up that never reported is no match, whatever is wanted. */
	else if (m->exists && buf_equal(&m->data, rq->data.data,
	    rq->data.len) && m->probe->failed == NULL &&
	    !m->probe->startup_failed &&
	    (why = change_probe_problem(m->probe, rq)) == NULL)
		*skip = "in-sync";
	free(why);
	if (*skip != NULL)
		return 0;
	rq->path = m->path;
	rq->expect_exists = m->exists;
	rq->sha_old = m->exists ? m->sha256 : NULL;
	return buf_add(&rq->expect, m->data.data, m->data.len);
}

static int
parse_apply(const char **skip, struct change *c, const json_t *req,
    struct err *err)
{
	struct change_req *rq = &c->rq;
	const json_t *v, *val;
	const char *name;
	int r;

	if ((r = change_parse(rq, req, err)) != 0)
		return r;
	if ((r = req_bytes(&rq->data, json_object_get(req, "data"),
	    ENVCTL_TARGET_MAX, "apply", "data", err)) != 0)
		return r;
	if (!req_sha256(json_object_get(req, "sha256_new")))
		return err_set(err, ENVCTL_EINVALID, "apply: 'sha256_new' "
		    "must be a SHA-256 in lowercase hex");
	v = json_object_get(req, "vars");
	if (!json_is_object(v) || json_object_size(v) > ENVCTL_REQ_MAX_VARS)
		return err_set(err, ENVCTL_EINVALID, "apply: 'vars' must be "
		    "an object of at most %d variables", ENVCTL_REQ_MAX_VARS);
	rq->names = xcalloc(json_object_size(v) + 1, sizeof(*rq->names));
	json_object_foreach((json_t *)v, name, val) {
		if (!req_name_ok(name, strlen(name)))
			return err_set(err, ENVCTL_EINVALID,
			    "apply: vars: '%s' is not a variable name", name);
		if (!json_is_string(val))
			return err_set(err, ENVCTL_EINVALID,
			    "apply: vars: '%s' must be a string", name);
		rq->names[rq->nnames++] = (char *)name;
	}
	rq->want = v;
	if (rq->after_read != 0 && ((r = take_read(skip, c, err)) != 0 ||
	    *skip != NULL))
		return r;
	return parse_create(rq, json_object_get(req, "create"), err);
}

/*
 * 1 when the compare and swap failed because another run installed
 * exactly these bytes meanwhile (under the same real path).
 */
static int
converged_meanwhile(const struct change *c)
{
	return c->cur.real != NULL && c->t0.real != NULL &&
	    strcmp(c->cur.real, c->t0.real) == 0 && c->cur.exists &&
	    buf_equal(&c->cur.data, c->rq.data.data, c->rq.data.len);
}

/* The file already holds the new bytes: only check that they work. */
static int
apply_unchanged(json_t *reply, struct change *c, struct err *err)
{
	json_t *vj = NULL;
	char *why;
	int r = 0;

	change_drop_pycache(c);
	if ((why = change_verify(&vj, c)) != NULL) {
		r = err_set(err, ENVCTL_EVERIFY, "'%s' already holds the new "
		    "bytes, but %s", c->cur.real, why);
		json_object_set_new(reply, "detail", json_pack("{s:s,s:b,"
		    "s:b,s:O}", "stage", "verify", "changed", 0, "restored",
		    0, "verify", vj));
	} else {
		json_object_set_new(reply, "changed", json_false());
		json_object_set_new(reply, "real", proto_text_or_null(c->cur.real));
		json_object_set(reply, "verify", vj);
	}
	json_decref(vj);
	free(why);
	return r;
}

int
op_apply(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	struct change c;
	struct policy pol = POLICY_INIT;
	struct err rerr = ENVCTL_ERR_INIT;
	json_t *vj = NULL, *meta = NULL, *detail;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	const char *skip = NULL;
	char *why = NULL;
	int r;

	change_init(&c, "apply", ctx);
	c.fork = 1;	/* validation and verification: two runs */
	if ((r = parse_apply(&skip, &c, req, err)) != 0)
		goto out;
	if (skip != NULL) {
		/* Nothing was touched: no lock, no run. */
		json_object_set_new(reply, "changed", json_false());
		json_object_set_new(reply, "skipped", json_string(skip));
		goto out;
	}
	if ((r = change_policy(&pol, &c, err)) != 0)
		goto out;
	if ((r = change_begin(&c, err)) != 0) {
		if (r != ENVCTL_ECHANGED || !converged_meanwhile(&c))
			goto out;
		/* The loser of two applies: the winner's bytes are ours. */
		err_release(err);
		if ((r = apply_unchanged(reply, &c, err)) == 0)
			json_object_set_new(reply, "note", json_string(
			    "already as desired; changed by another run "
			    "meanwhile"));
		goto out;
	}
	if (c.cur.exists && buf_equal(&c.cur.data, c.rq.data.data,
	    c.rq.data.len)) {
		r = apply_unchanged(reply, &c, err);
		goto out;
	}
	if ((r = change_validate(&vj, &c, err)) != 0) {
		if (vj != NULL)
			json_object_set_new(reply, "detail", json_pack(
			    "{s:s,s:O}", "stage", "validate", "verify", vj));
		goto out;
	}
	json_decref(vj);
	vj = NULL;
	install_fault(c.rq.fault, "after-validate");
	if ((r = change_backup(&meta, &c, err)) != 0)
		goto out;
	mode = c.cur.exists ? c.cur.mode : c.rq.create_mode;
	uid = c.cur.exists ? c.cur.uid : c.rq.create_uid;
	gid = c.cur.exists ? c.cur.gid : c.rq.create_gid;
	if ((r = change_put(&c, 1, c.rq.data.data, c.rq.data.len, mode, uid, gid,
	    meta, c.rq.fault, err)) != 0)
		goto out;
	if ((why = change_verify(&vj, &c)) != NULL) {
		detail = json_pack("{s:s,s:b,s:O}", "stage", "verify",
		    "changed", 0, "verify", vj);
		if (change_restore(&c, meta, &rerr) == 0) {
			json_object_set_new(detail, "restored", json_true());
			r = err_set(err, ENVCTL_EVERIFY, "verification "
			    "failed: %s; the previous file was restored", why);
			/*
			 * The store as it was: a host whose file is shadowed
			 * fails every drift --fix the same way, and no try
			 * may push an older version out.
			 */
			change_forget_backup(detail, &c, meta);
		} else {
			/* The backup is now the old file's only copy. */
			json_object_set_new(detail, "backup", change_backup_ref(&c,
			    meta));
			json_object_set_new(detail, "restored", json_false());
			json_object_set_new(detail, "changed", json_true());
			r = err_set(err, ENVCTL_EVERIFY, "verification "
			    "failed: %s; restoring the previous file failed "
			    "too: %s%s%s", why, rerr.msg, rerr.cause != 0 ?
			    ": " : "", rerr.cause != 0 ? strerror(rerr.cause) :
			    "");
		}
		json_object_set_new(reply, "detail", detail);
		goto out;
	}
	install_fault(c.rq.fault, "after-verify");
	change_prune(reply, &c);
	json_object_set_new(reply, "changed", json_true());
	json_object_set_new(reply, "backup", change_backup_ref(&c, meta));
	json_object_set_new(reply, "real", proto_text_or_null(c.cur.real));
	json_object_set(reply, "verify", vj);
out:
	json_decref(vj);
	json_decref(meta);
	free(why);
	err_release(&rerr);
	policy_release(&pol);
	change_release(&c);
	return r;
}
