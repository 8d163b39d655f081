/* backups.c - a host's backups of its managed file (see backups.h). */
#include "backups.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/agentlink.h"
#include "controller/playbook.h"

static char *
member(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? xstrdup(s) : NULL;
}

void
backups_parse(struct backup_list *bl, const json_t *reply)
{
	const json_t *list, *e;
	size_t i;

	memset(bl, 0, sizeof(*bl));
	bl->real = member(reply, "real");
	list = json_object_get(reply, "backups");
	bl->v = xcalloc(json_array_size(list) + 1, sizeof(*bl->v));
	json_array_foreach(list, i, e) {
		struct backup_entry *b = &bl->v[bl->n];

		if ((b->id = member(e, "id")) == NULL)
			continue;
		b->time = member(e, "time");
		b->absent = json_is_true(json_object_get(e, "absent"));
		b->size = (long)json_integer_value(json_object_get(e, "size"));
		b->sha256 = member(e, "sha256");
		b->mode = (unsigned)json_integer_value(json_object_get(e,
		    "mode"));
		b->owner = member(e, "owner");
		b->group = member(e, "group");
		b->playbook = member(e, "playbook");
		b->controller = member(e, "controller");
		bl->n++;
	}
}

int
backups_fetch(struct backup_list *bl, struct agentlink *l, const char *path,
    const struct playbook *pb, struct err *err)
{
	json_t *req, *reply = NULL;
	int r;

	memset(bl, 0, sizeof(*bl));
	req = json_pack("{s:s, s:i, s:s, s:{s:s}}", "op", "backups", "id", 3,
	    "path", path, "backup", "dir", pb->backup_dir);
	if ((r = agentlink_send(l, req, err)) == 0 &&
	    (r = agentlink_recv(l, &reply, err)) == 0 &&
	    (r = proto_reply_error(reply, err)) == 0)
		backups_parse(bl, reply);
	json_decref(req);
	json_decref(reply);
	return r;
}

int
backups_get(struct backup_list *bl, const json_t *with_read,
    struct agentlink *l, const char *path, const struct playbook *pb,
    struct err *err)
{
	int r;

	if (with_read == NULL)
		return backups_fetch(bl, l, path, pb, err);
	memset(bl, 0, sizeof(*bl));
	if ((r = proto_reply_error(with_read, err)) == 0)
		backups_parse(bl, with_read);
	return r;
}

const struct backup_entry *
backups_pick(const struct backup_list *bl, const char *to,
    const char *current_sha256)
{
	size_t i;

	for (i = 0; i < bl->n; i++) {
		const struct backup_entry *b = &bl->v[i];

		if (strcmp(to, "latest") != 0) {
			if (strcmp(b->id, to) == 0)
				return b;
			continue;
		}
		/* An absent backup differs from a present file, and back. */
		if (b->absent != (current_sha256[0] == '\0'))
			return b;
		if (!b->absent && (b->sha256 == NULL ||
		    strcmp(b->sha256, current_sha256) != 0))
			return b;
	}
	return NULL;
}

void
backups_text(struct buf *out, const struct backup_list *bl)
{
	struct vis v = ENVCTL_VIS_INIT;
	size_t i;

	/* Every field comes from the host: shown safe for a terminal. */
	for (i = 0; i < bl->n; i++) {
		const struct backup_entry *b = &bl->v[i];

		buf_addf(out, "    %-32s %s", vis_str(&v, b->id),
		    vis_str(&v, b->time != NULL ? b->time : "?"));
		if (b->absent)
			buf_addstr(out, "  (no file: rollback removes it)");
		else
			buf_addf(out, "  %6ld bytes  %04o %s:%s  sha256 %.12s",
			    b->size, b->mode, vis_str(&v, b->owner != NULL ?
			    b->owner : "?"), vis_str(&v, b->group != NULL ?
			    b->group : "?"), vis_str(&v, b->sha256 != NULL ?
			    b->sha256 : "?"));
		if (b->playbook != NULL)
			buf_addf(out, "  %s", vis_str(&v, b->playbook));
		if (b->controller != NULL)
			buf_addf(out, " from %s", vis_str(&v, b->controller));
		buf_addch(out, '\n');
	}
	vis_release(&v);
}

void
backups_host_text(struct buf *out, const char *name,
    const struct backup_list *bl, const char *real)
{
	struct vis v = ENVCTL_VIS_INIT;

	buf_addf(out, "%s: %zu backup%s of %s\n", vis_str(&v, name), bl->n,
	    bl->n == 1 ? "" : "s", vis_str(&v, bl->real != NULL ? bl->real :
	    real));
	backups_text(out, bl);
	vis_release(&v);
}

json_t *
backups_json(const char *name, const char *real,
    const struct backup_list *bl, const struct err *err)
{
	struct buf b = ENVCTL_BUF_INIT;
	json_t *h, *list;
	size_t i;

	h = json_pack("{s:s}", "name", name);
	if (err != NULL && err->code != 0) {
		err_format(err, &b);
		if (b.len > 0)
			buf_truncate(&b, b.len - 1);
		json_object_set_new(h, "error", json_string(b.data));
		buf_release(&b);
		return h;
	}
	list = json_array();
	for (i = 0; i < bl->n; i++) {
		const struct backup_entry *e = &bl->v[i];

		json_array_append_new(list, json_pack("{s:s, s:s?, s:b, s:I, "
		    "s:s?, s:s?, s:s?}", "id", e->id, "time", e->time,
		    "absent", e->absent, "size", (json_int_t)e->size,
		    "sha256", e->sha256, "playbook", e->playbook,
		    "controller", e->controller));
	}
	json_object_set_new(h, "path", json_string(bl->real != NULL ?
	    bl->real : real));
	json_object_set_new(h, "backups", list);
	json_object_set_new(h, "error", json_null());
	return h;
}

void
backup_list_release(struct backup_list *bl)
{
	size_t i;

	for (i = 0; i < bl->n; i++) {
		struct backup_entry *b = &bl->v[i];

		free(b->id);
		free(b->time);
		free(b->sha256);
		free(b->owner);
		free(b->group);
		free(b->playbook);
		free(b->controller);
	}
	free(bl->v);
	free(bl->real);
	memset(bl, 0, sizeof(*bl));
}
