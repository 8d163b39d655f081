/* op_rollback.c - the rollback op (see op_rollback.h). */
#include "op_rollback.h"

#include <string.h>

#include "backup.h"
#include "change.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "install.h"
#include "policy.h"
#include "request.h"

#define NEWEST_SHOWN	5	/* backup ids named when none is found */

static int
parse_rollback(struct change_req *rq, const json_t *req, struct err *err)
{
	const json_t *v;
	const char *to;
	int r;

	if ((r = change_parse(rq, req, err)) != 0)
		return r;
	v = json_object_get(req, "to");
	to = json_string_value(v);
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) > 255 ||
	    strlen(to) != json_string_length(v) ||
	    strchr(to, '/') != NULL || to[0] == '.')
		return err_set(err, ENVCTL_EINVALID, "rollback: 'to' must be "
		    "\"latest\" or a backup id");
	rq->to = to;
	return req_names(&rq->names, &rq->nnames, json_object_get(req,
	    "vars"), "rollback", "vars", err);
}

/* "a, b, c" of the newest backups' ids, for a message. */
static char *
newest_ids(const json_t *list)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	for (i = 0; i < json_array_size(list) && i < NEWEST_SHOWN; i++)
		buf_addf(&b, "%s%s", i > 0 ? ", " : "",
		    json_string_value(json_object_get(json_array_get(list, i),
		    "id")));
	return buf_detach(&b, NULL);
}

/* 1 when the backup meta with data is what c->cur is. */
static int
same_as_current(const struct change *c, const json_t *meta,
    const struct buf *data)
{
	if (json_is_true(json_object_get(meta, "absent")))
		return !c->cur.exists;
	return c->cur.exists && buf_equal(&c->cur.data, data->data, data->len);
}

/*
 * Finds the backup to restore: rq.to, or for "latest" the newest whose
 * bytes differ from the current file.  *meta gets it (new reference) and
 * data its bytes.  ENVCTL_ENOTFOUND.
 */
static int
choose(json_t **meta, struct buf *data, struct change *c, struct err *err)
{
	json_t *list = NULL, *m;
	char *ids = NULL;
	size_t i;
	int r;

	*meta = NULL;
	if ((r = backup_open(&c->bs, c->rq.backup_root, c->cur.real, 0,
	    err)) != 0 || (r = backup_list(&list, NULL, &c->bs, err)) != 0)
		goto out;
	json_array_foreach(list, i, m) {
		if (strcmp(c->rq.to, "latest") != 0 &&
		    strcmp(c->rq.to, json_string_value(json_object_get(m,
		    "id"))) != 0)
			continue;
		buf_reset(data);
		if (!json_is_true(json_object_get(m, "absent")) &&
		    (r = backup_load(data, &c->bs, m, err)) != 0)
			goto out;
		if (strcmp(c->rq.to, "latest") == 0 &&
		    same_as_current(c, m, data))
			continue;
		*meta = json_incref(m);
		goto out;
	}
	ids = newest_ids(list);
	if (json_array_size(list) == 0)
		r = err_set(err, ENVCTL_ENOTFOUND, "no backups of '%s' in "
		    "'%s'", c->cur.real, c->rq.backup_root);
	else if (strcmp(c->rq.to, "latest") == 0)
		r = err_set(err, ENVCTL_ENOTFOUND, "no backup of '%s' differs "
		    "from the current file (newest: %s)", c->cur.real, ids);
	else
		r = err_set(err, ENVCTL_ENOTFOUND, "no backup '%s' of '%s' "
		    "(newest: %s)", c->rq.to, c->cur.real, ids);
out:
	json_decref(list);
	free(ids);
	return r;
}

int
op_rollback(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	struct change c;
	struct policy pol = POLICY_INIT;
	struct buf data;
	json_t *chosen = NULL, *meta = NULL, *vj = NULL;
	const char *id;
	char *why;
	int r, absent;

	change_init(&c, "rollback", ctx);
	buf_init(&data, ENVCTL_TARGET_MAX);
	if ((r = parse_rollback(&c.rq, req, err)) != 0 ||
	    (r = change_policy(&pol, &c, err)) != 0 ||
	    (r = change_begin(&c, err)) != 0 ||
	    (r = choose(&chosen, &data, &c, err)) != 0)
		goto out;
	id = json_string_value(json_object_get(chosen, "id"));
	absent = json_is_true(json_object_get(chosen, "absent"));
	json_object_set_new(reply, "restored", json_string(id));
	if (same_as_current(&c, chosen, &data) && (absent ||
	    (c.cur.mode == json_integer_value(json_object_get(chosen,
	    "mode")) && c.cur.uid == json_integer_value(json_object_get(
	    chosen, "uid")) && c.cur.gid == json_integer_value(
	    json_object_get(chosen, "gid"))))) {
		json_object_set_new(reply, "changed", json_false());
	} else {
		backup_close(&c.bs);
		if ((r = change_backup(&meta, &c, err)) != 0 ||
		    (r = change_put(&c, !absent, data.data, data.len, (mode_t)
		    json_integer_value(json_object_get(chosen, "mode")),
		    (uid_t)json_integer_value(json_object_get(chosen, "uid")),
		    (gid_t)json_integer_value(json_object_get(chosen, "gid")),
		    meta, c.rq.fault, err)) != 0 ||
		    (r = change_check_restored(&c, chosen, &data, err)) != 0)
			goto out;
		json_object_set_new(reply, "changed", json_true());
		json_object_set_new(reply, "backup", change_backup_ref(&c, meta));
	}
	/* A start-up error of the restored file is reported, not fatal. */
	why = change_verify(&vj, &c);
	free(why);
	install_fault(c.rq.fault, "after-verify");
	if (meta != NULL)
		change_prune(reply, &c);
	json_object_set_new(reply, "real", proto_text_or_null(c.cur.real));
	json_object_set(reply, "verify", vj);
out:
	json_decref(vj);
	json_decref(chosen);
	json_decref(meta);
	buf_release(&data);
	policy_release(&pol);
	change_release(&c);
	return r;
}
