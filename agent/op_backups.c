/* op_backups.c - the backups op (see op_backups.h). */
#include "op_backups.h"

#include <string.h>

#include "backup.h"
#include "common/err.h"
#include "common/proto.h"
#include "ops.h"
#include "policy.h"
#include "request.h"
#include "target.h"

int
op_backups_list(json_t *out, struct policy *pol, const char *dir,
    const char *real, struct err *err)
{
	struct backup_store bs = BACKUP_STORE_INIT;
	json_t *list = NULL, *ignored = NULL;
	int r;

	if ((r = policy_backup_dir(pol, dir, err)) != 0 ||
	    (r = backup_open(&bs, dir, real, 0, err)) != 0 ||
	    (r = backup_list(&list, &ignored, &bs, err)) != 0)
		goto out;
	json_object_set_new(out, "real", proto_text(real, strlen(real)));
	json_object_set_new(out, "dir", proto_text(bs.dir, strlen(bs.dir)));
	json_object_set(out, "backups", list);
	json_object_set(out, "ignored", ignored);
out:
	json_decref(list);
	json_decref(ignored);
	backup_close(&bs);
	return r;
}

int
op_backups(json_t *reply, const json_t *req, const struct agent_ctx *ctx,
    struct err *err)
{
	const char *path, *dir;
	struct policy pol = POLICY_INIT;
	struct target t;
	int r;

	(void)ctx;
	memset(&t, 0, sizeof(t));
	buf_init(&t.data, 0);
	if ((r = req_path(&path, json_object_get(req, "path"), 0, "backups",
	    "path", err)) != 0 ||
	    (r = req_path(&dir, json_object_get(json_object_get(req, "backup"),
	    "dir"), 0, "backups", "backup.dir", err)) != 0)
		return r;
	if ((r = policy_open(&pol, err)) != 0 ||
	    (r = target_read(&t, path, err)) != 0)
		goto out;
	r = op_backups_list(reply, &pol, dir, t.real, err);
out:
	policy_release(&pol);
	target_release(&t);
	return r;
}
