/* op_backups.c - the backups op (see op_backups.h). */
#include "op_backups.h"

#include <string.h>

#include "backup.h"
#include "common/err.h"
#include "common/proto.h"
#include "ops.h"
#include "policy.h"
#include "target.h"

static int
is_abs(const json_t *v)
{
	return json_is_string(v) && json_string_value(v)[0] == '/' &&
	    strlen(json_string_value(v)) == json_string_length(v);
}

int
op_backups(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	const json_t *path = json_object_get(req, "path");
	const json_t *b = json_object_get(req, "backup");
	struct backup_store bs = BACKUP_STORE_INIT;
	struct policy pol = POLICY_INIT;
	struct target t;
	json_t *list = NULL, *ignored = NULL;
	int r;

	(void)ctx;
	memset(&t, 0, sizeof(t));
	buf_init(&t.data, 0);
	if (!is_abs(path))
		return err_set(err, ENVCTL_EINVALID,
		    "backups: 'path' must be an absolute path");
	if (!json_is_object(b) || !is_abs(json_object_get(b, "dir")))
		return err_set(err, ENVCTL_EINVALID,
		    "backups: 'backup.dir' must be an absolute path");
	if ((r = policy_open(&pol, err)) != 0 ||
	    (r = policy_backup_dir(&pol, json_string_value(json_object_get(b,
	    "dir")), err)) != 0 ||
	    (r = target_read(&t, json_string_value(path), err)) != 0 ||
	    (r = backup_open(&bs, json_string_value(json_object_get(b,
	    "dir")), t.real, 0, err)) != 0 ||
	    (r = backup_list(&list, &ignored, &bs, err)) != 0)
		goto out;
	json_object_set_new(reply, "real", proto_text(t.real,
	    strlen(t.real)));
	json_object_set_new(reply, "dir", proto_text(bs.dir,
	    strlen(bs.dir)));
	json_object_set(reply, "backups", list);
	json_object_set(reply, "ignored", ignored);
out:
	json_decref(list);
	json_decref(ignored);
	backup_close(&bs);
	policy_release(&pol);
	target_release(&t);
	return r;
}
