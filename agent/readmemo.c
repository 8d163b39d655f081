/* readmemo.c - the session's last read, for apply (see readmemo.h). */
#include "readmemo.h"

#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"
#include "common/xmalloc.h"
#include "probe.h"
#include "target.h"

static int
checks_passed(const json_t *checks)
{
	const json_t *c;
	size_t i;

	json_array_foreach(checks, i, c)
		if (!json_is_true(json_object_get(c, "ok")))
			return 0;
	return 1;
}

void
readmemo_set(struct read_memo *m, json_int_t id, const char *interp,
    int ok, const char *path, const struct target *t, const struct probe *p,
    const json_t *checks)
{
	readmemo_release(m);
	m->id = id;
	m->interp = xstrdup(interp);
	m->ok = ok && path != NULL && t != NULL && p != NULL &&
	    checks_passed(checks);
	if (!m->ok)
		return;
	m->path = xstrdup(path);
	m->exists = t->exists;
	if (t->exists)
		buf_add(&m->data, t->data.data, t->data.len);
	sha256_hex(m->sha256, m->data.data, m->data.len);
	m->clean = p->startup_message == NULL && p->failed == NULL &&
	    !p->startup_failed;
	m->values = p->values != NULL ? json_incref(p->values) : NULL;
}

int
readmemo_in_sync(const struct read_memo *m, const char *data, size_t len,
    const json_t *want)
{
	const char *name, *got;
	const json_t *v;

	if (!m->ok || !m->exists || !m->clean || m->values == NULL ||
	    !buf_equal(&m->data, data, len))
		return 0;
	json_object_foreach((json_t *)want, name, v) {
		got = json_string_value(json_object_get(m->values, name));
		if (got == NULL || !json_is_string(v) ||
		    strcmp(got, json_string_value(v)) != 0)
			return 0;
	}
	return 1;
}

void
readmemo_release(struct read_memo *m)
{
	free(m->interp);
	free(m->path);
	buf_wipe(&m->data);
	json_decref(m->values);
	memset(m, 0, sizeof(*m));
	buf_init(&m->data, 0);
}
