/*
 * ncclconf.c - NCCL's configuration files (see ncclconf.h).
 *
 * The behaviour follows github.com/NVIDIA/nccl, src/misc/param.cc (in
 * src/include/param.h before 2.12): setEnvFile() reads a file line by
 * line (getline() until 2.29, fgets() into char[4096] from 2.30), skips a
 * line whose first byte is '#' (2.26.2 on), drops the trailing '\n' (and
 * from 2.30 a '\r' before it), skips a line without '=', copies at most
 * 1023 bytes of the name (before the first '=') and of the value (the
 * rest, up to the first NUL), and calls setenv(name, value, 0) (through
 * ncclOsSetEnv() from 2.29).  initEnvFunc() (initEnv() before 2.23.4)
 * picks the files; nothing is trimmed anywhere.
 */
#include "ncclconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "common/xmalloc.h"

static void
add_misread(struct ncclconf_file *f, int line, const char *kind,
    struct buf *msg)
{
	struct ncclconf_misread *m;

	if (f->nmisreads > ENVCTL_NCCLCONF_MISREAD_MAX) {
		buf_release(msg);
		return;
	}
	if (f->nmisreads == ENVCTL_NCCLCONF_MISREAD_MAX) {
		kind = "too-many";
		buf_reset(msg);
		buf_addf(msg, "more than %d misread lines: the rest are not "
		    "listed", ENVCTL_NCCLCONF_MISREAD_MAX);
	}
	ENVCTL_GROW(f->misreads, f->nmisreads + 1, f->amisreads);
	m = &f->misreads[f->nmisreads++];
	m->line = line;
	m->kind = kind;
	m->message = buf_detach(msg, NULL);
}

/* Appends 'len bytes of s' quoted, control bytes made visible. */
static void
add_quoted(struct buf *b, const char *s, size_t len)
{
	buf_addch(b, '\'');
	str_addvis(b, s, len, 0);
	buf_addch(b, '\'');
}

static int
is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

/* A name something reads with getenv(): what a shell could export. */
static int
name_plausible(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* "nccl_proto", "Nccl_Algo": meant for NCCL, which reads NCCL_PROTO. */
static int
lower_nccl(const char *s, size_t len)
{
	size_t i;

	if (len < 5 || strncasecmp(s, "NCCL_", 5) != 0)
		return 0;
	for (i = 0; i < len; i++)
		if (s[i] >= 'a' && s[i] <= 'z')
			return 1;
	return 0;
}

/*
 * One line as setEnvFile() sees it: p holds len bytes, the '\n' included
 * when there is one.  lineno is the physical line (a 2.30 piece of a long
 * line keeps its line's number).
 */
static void
parse_line(struct ncclconf_file *f, int lineno, const char *p, size_t len,
    int version)
{
	struct buf msg = ENVCTL_BUF_INIT;
	struct ncclconf_entry *e;
	const char *eq, *nul, *name, *value;
	size_t i, s, namelen, valuelen, lead;
	int comments = version >= ENVCTL_NCCLCONF_V_COMMENTS;
	int v230 = version >= ENVCTL_NCCLCONF_V_2_30;
	int cr = 0;

	/* Before 2.30 '#' is tested first; 2.30 tests it after the
	 * strip, which is the same byte. */
	if (comments && len > 0 && p[0] == '#')
		return;
	/* Every version works on a C string: a NUL ends the line. */
	if ((nul = memchr(p, '\0', len)) != NULL) {
		len = (size_t)(nul - p);
		buf_addstr(&msg, "a NUL byte ends the line for NCCL: the rest "
		    "of it is ignored");
		add_misread(f, lineno, "nul", &msg);
	} else if (len > 0 && p[len - 1] == '\n')
		len--;
	if (len > 0 && p[len - 1] == '\r') {
		if (v230)
			len--;
		cr = 1;
	}
	if (len == 0)
		return;
	for (lead = 0; lead < len && is_blank(p[lead]); lead++)
		;
	if ((eq = memchr(p, '=', len)) == NULL) {
		if (lead < len && p[lead] != '#') {
			buf_addstr(&msg, "no '=': NCCL skips this line");
			add_misread(f, lineno, "no-equals", &msg);
		}
		return;
	}
	s = (size_t)(eq - p);
	name = p;
	namelen = s < ENVCTL_NCCLCONF_NAME_MAX ? s : ENVCTL_NCCLCONF_NAME_MAX;
	value = eq + 1;
	valuelen = len - s - 1;
	if (cr && !v230) {
		buf_addstr(&msg, "the line ends in CR (a DOS line end): NCCL "
		    "before 2.30 keeps it in the value, so the value NCCL "
		    "reads is ");
		add_quoted(&msg, value, valuelen > ENVCTL_NCCLCONF_VALUE_MAX ?
		    ENVCTL_NCCLCONF_VALUE_MAX : valuelen);
		add_misread(f, lineno, "cr", &msg);
	}
	if (s == 0) {
		buf_addstr(&msg, "no name before '=': setenv() refuses an "
		    "empty name and NCCL ignores the line");
		add_misread(f, lineno, "empty-name", &msg);
		return;
	}
	if (p[0] == '#' || (lead < s && p[lead] == '#')) {
		if (p[0] == '#')
			buf_addf(&msg, "NCCL before 2.26.2 has no comments: "
			    "this line sets ");
		else
			buf_addf(&msg, "only '#' in the first column starts a "
			    "comment: this line sets ");
		add_quoted(&msg, name, namelen);
		add_misread(f, lineno, p[0] == '#' ? "comment" :
		    "indented-comment", &msg);
	} else if (is_blank(name[0]) || is_blank(name[s - 1]) ||
	    (valuelen > 0 && is_blank(value[0]))) {
		buf_addstr(&msg, "NCCL does not trim spaces: this sets ");
		add_quoted(&msg, name, namelen);
		buf_addstr(&msg, " to ");
		add_quoted(&msg, value, valuelen > ENVCTL_NCCLCONF_VALUE_MAX ?
		    ENVCTL_NCCLCONF_VALUE_MAX : valuelen);
		add_misread(f, lineno, "space-around-equals", &msg);
	} else if (valuelen > 0 && is_blank(value[valuelen - 1]) && !cr) {
		buf_addstr(&msg, "NCCL does not trim spaces: the value ");
		add_quoted(&msg, value, valuelen > ENVCTL_NCCLCONF_VALUE_MAX ?
		    ENVCTL_NCCLCONF_VALUE_MAX : valuelen);
		buf_addstr(&msg, " keeps its trailing blanks");
		add_misread(f, lineno, "trailing-space", &msg);
	} else if (!name_plausible(name, namelen)) {
		add_quoted(&msg, name, namelen);
		buf_addstr(&msg, " is not a variable name that NCCL reads");
		add_misread(f, lineno, "invalid-name", &msg);
	} else if (lower_nccl(name, namelen)) {
		add_quoted(&msg, name, namelen);
		buf_addstr(&msg, " is never read: NCCL's variables are upper "
		    "case and getenv() is case-sensitive");
		add_misread(f, lineno, "case", &msg);
	}
	if (s > ENVCTL_NCCLCONF_NAME_MAX) {
		buf_addf(&msg, "the name is %zu bytes: NCCL %s", s,
		    version >= ENVCTL_NCCLCONF_V_CONF_FILE ? "keeps the first "
		    "1023" : "before 2.23.4 overflows its 1024-byte buffer");
		add_misread(f, lineno, "truncated", &msg);
	}
	if (valuelen > ENVCTL_NCCLCONF_VALUE_MAX) {
		buf_addf(&msg, "the value is %zu bytes: NCCL keeps the first "
		    "1023", valuelen);
		add_misread(f, lineno, "truncated", &msg);
		valuelen = ENVCTL_NCCLCONF_VALUE_MAX;
	}
	for (i = 0; i < f->nentries; i++) {
		e = &f->entries[i];
		if (strlen(e->name) == namelen &&
		    memcmp(e->name, name, namelen) == 0) {
			buf_addstr(&msg, "line ");
			buf_addf(&msg, "%d already sets ", e->line);
			add_quoted(&msg, name, namelen);
			buf_addstr(&msg, ": NCCL keeps the first line, this "
			    "one has no effect");
			add_misread(f, lineno, "duplicate", &msg);
			break;
		}
	}
	ENVCTL_GROW(f->entries, f->nentries + 1, f->aentries);
	e = &f->entries[f->nentries++];
	e->line = lineno;
	e->name = xstrndup(name, namelen);
	e->value = xstrndup(value, valuelen);
	e->effective = s <= ENVCTL_NCCLCONF_NAME_MAX &&
	    name_plausible(name, namelen) && !lower_nccl(name, namelen);
	buf_release(&msg);
}

void
ncclconf_parse(struct ncclconf_file *f, const char *data, size_t len,
    int version)
{
	struct buf msg = ENVCTL_BUF_INIT;
	const char *p = data, *end = data + len, *nl;
	size_t n, piece;
	int lineno = 0;

	if (version == 0)
		version = ENVCTL_NCCLCONF_V_DEFAULT;
	while (p < end) {
		lineno++;
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		if (version < ENVCTL_NCCLCONF_V_2_30) {
			parse_line(f, lineno, p, n, version);
			p += n;
			continue;
		}
		/* 2.30's fgets() hands over at most 4095 bytes at a time:
		 * the rest of a long line is read as a line of its own. */
		if (n > ENVCTL_NCCLCONF_LINE_MAX) {
			buf_addf(&msg, "the line is %zu bytes: NCCL 2.30 reads "
			    "it in pieces of 4095, each as a line", n);
			add_misread(f, lineno, "long-line", &msg);
		}
		while (n > 0) {
			piece = n < ENVCTL_NCCLCONF_LINE_MAX ? n :
			    ENVCTL_NCCLCONF_LINE_MAX;
			parse_line(f, lineno, p, piece, version);
			p += piece;
			n -= piece;
		}
	}
	buf_release(&msg);
}

/* Whether uid may read a file of st (owner and other bits); *why when
 * not. */
static int
uid_may_read(const struct stat *st, long uid, const char **why)
{
	if (uid < 0 || uid == 0)
		return 1;
	if ((long)st->st_uid == uid) {
		if (st->st_mode & S_IRUSR)
			return 1;
		*why = "its owner (the worker's user) may not read it: NCCL "
		    "skips it";
		return 0;
	}
	if (st->st_mode & S_IROTH)
		return 1;
	*why = st->st_mode & S_IRGRP ? "only its group may read it and "
	    "envctl does not evaluate the worker's groups: not applied" :
	    "the worker's user may not read it: NCCL skips it";
	return 0;
}

static void
read_one(struct ncclconf_file *f, const char *root, const char *path,
    long uid, int version)
{
	struct buf full = ENVCTL_BUF_INIT, data = ENVCTL_BUF_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	struct stat st;
	const char *why = NULL;
	size_t plen = strlen(path);
	ssize_t r;
	int fd = -1;

	/* confFilePath[1024] and snprintf(): a longer path is cut. */
	if (plen > ENVCTL_NCCLCONF_PATH_MAX) {
		plen = ENVCTL_NCCLCONF_PATH_MAX;
		buf_addf(&msg, "the path is %zu bytes: NCCL opens its first "
		    "1023", strlen(path));
		add_misread(f, 0, "truncated", &msg);
	}
	f->path = xstrndup(path, plen);
	if (f->path[0] != '/') {
		f->error = xstrdup("a relative path: NCCL opens it from the "
		    "worker's working directory, which envctl does not know");
		goto out;
	}
	buf_addstr(&full, root);
	buf_addstr(&full, f->path);
	fd = open(full.data, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd == -1) {
		if (errno != ENOENT && errno != ENOTDIR) {
			f->exists = 1;
			f->error = xstrdup(err_reason(errno));
		}
		goto out;
	}
	f->exists = 1;
	if (fstat(fd, &st) == -1) {
		f->error = xstrdup(err_reason(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		f->error = xstrdup("not a regular file");
		goto out;
	}
	if (!uid_may_read(&st, uid, &why)) {
		f->error = xstrdup(why);
		goto out;
	}
	if ((unsigned long long)st.st_size > ENVCTL_NCCLCONF_FILE_MAX)
		goto toobig;
	buf_init(&data, ENVCTL_NCCLCONF_FILE_MAX + 1);
	for (;;) {
		if (buf_grow(&data, 4096) != 0)
			goto toobig;
		r = read(fd, data.data + data.len, data.alloc - data.len - 1);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			f->error = xstrdup(err_reason(errno));
			goto out;
		}
		if (r == 0)
			break;
		data.len += (size_t)r;
		data.data[data.len] = '\0';
		if (data.len > ENVCTL_NCCLCONF_FILE_MAX)
			goto toobig;
	}
	ncclconf_parse(f, data.data, data.len, version);
	goto out;
toobig:
	f->error = xasprintf("larger than %u bytes: not read",
	    ENVCTL_NCCLCONF_FILE_MAX);
out:
	if (fd != -1)
		close(fd);
	buf_release(&msg);
	buf_release(&full);
	buf_release(&data);
}

int
ncclconf_read(struct ncclconf *c, const char *root, const char *home,
    const char *conf_file_env, long uid, int version, struct err *err)
{
	char *user = NULL;

	if (root == NULL)
		return err_set(err, ENVCTL_EINVALID,
		    "ncclconf: root must be a path or \"\"");
	c->version = version != 0 ? version : ENVCTL_NCCLCONF_V_DEFAULT;
	if (c->version >= ENVCTL_NCCLCONF_V_CONF_FILE &&
	    conf_file_env != NULL && conf_file_env[0] != '\0')
		user = xstrdup(conf_file_env);
	else if (home != NULL)
		user = xasprintf("%s/.nccl.conf", home);
	if (user != NULL)
		read_one(&c->files[c->nfiles++], root, user, uid, c->version);
	read_one(&c->files[c->nfiles++], root, "/etc/nccl.conf", uid,
	    c->version);
	free(user);
	return 0;
}

static json_t *
file_json(const struct ncclconf_file *f)
{
	json_t *o, *a, *m;
	size_t i;

	o = json_object();
	json_object_set_new(o, "path", proto_text_or_null(f->path));
	json_object_set_new(o, "exists", json_boolean(f->exists));
	json_object_set_new(o, "error", proto_text_or_null(f->error));
	a = json_array();
	for (i = 0; i < f->nentries; i++) {
		m = json_object();
		json_object_set_new(m, "line",
		    json_integer(f->entries[i].line));
		json_object_set_new(m, "name",
		    proto_text_or_null(f->entries[i].name));
		json_object_set_new(m, "value",
		    proto_text_or_null(f->entries[i].value));
		json_object_set_new(m, "effective",
		    json_boolean(f->entries[i].effective));
		json_array_append_new(a, m);
	}
	json_object_set_new(o, "entries", a);
	a = json_array();
	for (i = 0; i < f->nmisreads; i++) {
		m = json_object();
		json_object_set_new(m, "line",
		    json_integer(f->misreads[i].line));
		json_object_set_new(m, "kind",
		    json_string(f->misreads[i].kind));
		json_object_set_new(m, "message",
		    proto_text_or_null(f->misreads[i].message));
		json_array_append_new(a, m);
	}
	json_object_set_new(o, "misreads", a);
	return o;
}

json_t *
ncclconf_json(const struct ncclconf *c)
{
	const struct ncclconf_file *f;
	const struct ncclconf_entry *e;
	struct buf from = ENVCTL_BUF_INIT;
	json_t *o, *files, *values, *key, *v;
	size_t i, j;

	o = json_object();
	json_object_set_new(o, "version", json_integer(c->version));
	files = json_array();
	values = json_object();
	for (i = 0; i < c->nfiles; i++) {
		f = &c->files[i];
		json_array_append_new(files, file_json(f));
		for (j = 0; j < f->nentries; j++) {
			e = &f->entries[j];
			/* Keys must be UTF-8: a name that is not is shown
			 * as proto_text() makes it. */
			key = proto_text_or_null(e->name);
			if (json_object_get(values,
			    json_string_value(key)) == NULL) {
				buf_reset(&from);
				buf_addf(&from, "%s:%d", f->path, e->line);
				v = json_object();
				json_object_set_new(v, "value",
				    proto_text_or_null(e->value));
				json_object_set_new(v, "from",
				    proto_text(from.data, from.len));
				json_object_set_new(values,
				    json_string_value(key), v);
			}
			json_decref(key);
		}
	}
	json_object_set_new(o, "files", files);
	json_object_set_new(o, "values", values);
	buf_release(&from);
	return o;
}

void
ncclconf_file_release(struct ncclconf_file *f)
{
	size_t i;

	for (i = 0; i < f->nentries; i++) {
		free(f->entries[i].name);
		free(f->entries[i].value);
	}
	for (i = 0; i < f->nmisreads; i++)
		free(f->misreads[i].message);
	free(f->entries);
	free(f->misreads);
	free(f->path);
	free(f->error);
	memset(f, 0, sizeof(*f));
}

void
ncclconf_release(struct ncclconf *c)
{
	size_t i;

	for (i = 0; i < c->nfiles; i++)
		ncclconf_file_release(&c->files[i]);
	c->nfiles = 0;
}
