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
    int ok, const char *path, const struct target *t, struct probe *p,
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
	m->probe = xmalloc(sizeof(*m->probe));
	*m->probe = *p;
	memset(p, 0, sizeof(*p));
	buf_init(&p->errtext, 0);
}

void
readmemo_release(struct read_memo *m)
{
	free(m->interp);
	free(m->path);
	buf_wipe(&m->data);
	if (m->probe != NULL)
		probe_release(m->probe);
	free(m->probe);
	memset(m, 0, sizeof(*m));
	buf_init(&m->data, 0);
}
