/*
 * unitenv.c - a service's launch environment, read as systemd reads it
 * (see unitenv.h; every rule and its man page: docs/worker-env.md).
 *
 * Where the unit files are is unitpath's, the syntax of what they say
 * unitsyntax's; this file reads them and applies it.  File-local names
 * carry "ue_" (unitpath.c's "up_", unitsyntax.c's "us_"): the unit tests
 * compile these files in one translation unit with agent/child.c and
 * agent/policy.c.
 */
#define _GNU_SOURCE	/* makedev(), fstatfs() */
#include "unitenv.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "child.h"
#include "policy.h"
#include "unitpath.h"
#include "unitsyntax.h"

#define UE_PROC_MAGIC	0x9fa0		/* statfs(2) f_type of /proc */
#define UE_SYSFS_MAGIC	0x62656572	/* and of /sys */
#define UE_OUT_MAX	(256u * 1024)	/* systemctl show's output kept */

/* systemd.service(5) "COMMAND LINES": where a bare program is looked up. */
static const char *const ue_bin[] = {
	"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
	"/sbin", "/bin",
};

/* Variables that change what Python or NCCL do before any code runs. */
static const char *const ue_fixed[] = {
	"NCCL_CONF_FILE", "PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE",
	"PYTHONUSERBASE", "PYTHONSAFEPATH", "PYTHONSTARTUP", "HOME",
};

/* A directive kept for after the parse, with where it was. */
struct ue_line {
	char	*value;
	char	*file;
	int	 line;
};

struct ue_load {
	struct unitenv	*u;
	struct policy	*pol;
	char		*prefix;	/* %p */
	char		*instance;	/* %i; NULL for a plain unit */
	int		 nfiles;
	int		 bad;		/* a unit file failed to parse */
	struct ue_line	*execs;
	size_t		 nexecs;
	struct ue_line	*efiles;	/* EnvironmentFile=, resolved */
	size_t		 nefiles;
};

/* ---- small lists ---- */

/* strv_free(), and the list is empty again. */
static void
ue_free_list(char ***v, size_t *n)
{
	strv_free(*v, *n);
	*v = NULL;
	*n = 0;
}

static void
ue_lines_free(struct ue_line **v, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		free((*v)[i].value);
		free((*v)[i].file);
	}
	free(*v);
	*v = NULL;
	*n = 0;
}

static void
ue_lines_add(struct ue_line **v, size_t *n, const char *value,
    const char *file, int line)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[*n].value = xstrdup(value);
	(*v)[*n].file = xstrdup(file);
	(*v)[*n].line = line;
	(*n)++;
}

static void
ue_warn(struct unitenv *u, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
ue_warn(struct unitenv *u, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	char *m;

	va_start(ap, fmt);
	m = xvasprintf(fmt, ap);
	va_end(ap);
	strv_push(&u->warnings, &u->nwarnings, file != NULL ?
	    xasprintf("%s:%d: %s", file, line, m) : xstrdup(m));
	free(m);
}

static void
ue_error(struct unitenv *u, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
ue_error(struct unitenv *u, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	char *m;

	va_start(ap, fmt);
	m = xvasprintf(fmt, ap);
	va_end(ap);
	strv_push(&u->errors, &u->nerrors, file != NULL ?
	    xasprintf("%s:%d: %s", file, line, m) : xstrdup(m));
	free(m);
}

/* ---- files ---- */

/*
 * Reads the file at full (shown as shown) into b, bounded; *missing is
 * set when it does not exist.  Links are followed, as systemd follows
 * them; what is read must be a regular file off /proc and /sys, or
 * /dev/null (read as empty: a mask).
 */
static int
ue_read(struct ue_load *L, struct buf *b, int *missing, const char *full,
    const char *shown, struct err *err)
{
	struct stat st;
	struct statfs sf;
	char chunk[8192];
	ssize_t k;
	int fd, r = 0;

	*missing = 0;
	buf_init(b, UNITENV_FILE_MAX);
	if (++L->nfiles > UNITENV_FILES_MAX)
		return err_set(err, ENVCTL_ETOOBIG, "unit '%s' needs more "
		    "than %d files", L->u->unit, UNITENV_FILES_MAX);
	if ((fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC |
	    O_NOCTTY)) == -1) {
		if (errno == ENOENT || errno == ENOTDIR) {
			*missing = 1;
			return 0;
		}
		return err_errno(err, ENVCTL_ESYS, errno, "cannot open '%s'",
		    shown);
	}
	if (fstat(fd, &st) == -1 || fstatfs(fd, &sf) == -1) {
		r = err_errno(err, ENVCTL_ESYS, errno, "cannot stat '%s'",
		    shown);
		goto out;
	}
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
		goto out;
	if (!S_ISREG(st.st_mode)) {
		r = err_set(err, ENVCTL_EINVALID, "'%s' is not a regular file",
		    shown);
		goto out;
	}
	if ((unsigned long)sf.f_type == UE_PROC_MAGIC ||
	    (unsigned long)sf.f_type == UE_SYSFS_MAGIC) {
		r = err_set(err, ENVCTL_EINVALID, "'%s' lies on /proc or /sys: "
		    "not read", shown);
		goto out;
	}
	while ((k = read(fd, chunk, sizeof(chunk))) != 0) {
		if (k == -1 && errno == EINTR)
			continue;
		if (k == -1) {
			r = err_errno(err, ENVCTL_ESYS, errno, "cannot read "
			    "'%s'", shown);
			goto out;
		}
		if (buf_add(b, chunk, (size_t)k) != 0) {
			r = err_set(err, ENVCTL_ETOOBIG, "'%s' is larger than "
			    "%u bytes", shown, UNITENV_FILE_MAX);
			goto out;
		}
	}
out:
	close(fd);
	return r;
}

/* ---- specifiers (systemd.unit(5) "SPECIFIERS") ---- */

/*
 * Appends the value of specifier c to out: 0, or 1 with *unknown set to
 * why it cannot be known here, or -1 when systemd does not know it (the
 * assignment is then ignored with a warning).
 */
static int
ue_spec(struct ue_load *L, int c, struct buf *out, char **unknown)
{
	const char *p = L->prefix, *i = L->instance != NULL ? L->instance :
	    "", *dash;

	switch (c) {
	case '%':
		return buf_addch(out, '%'), 0;
	case 'n':
		return buf_addstr(out, L->u->unit), 0;
	case 'N':
		return buf_add(out, L->u->unit, strlen(L->u->unit) -
		    strlen(UNITPATH_SUFFIX)), 0;
	case 'p':
		return buf_addstr(out, p), 0;
	case 'i':
		return buf_addstr(out, i), 0;
	case 'j':
		dash = strrchr(p, '-');
		return buf_addstr(out, dash != NULL ? dash + 1 : p), 0;
	case 'P':
	case 'I':
	case 'J':
		dash = strrchr(p, '-');
		if (unitsyntax_unescape(out, c == 'P' ? p : c == 'I' ? i :
		    dash != NULL ? dash + 1 : p) != 0)
			return -1;
		return 0;
	/* The system manager's (systemd.unit(5), the table). */
	case 'u':
	case 'g':
		return buf_addstr(out, "root"), 0;
	case 'U':
	case 'G':
		return buf_addstr(out, "0"), 0;
	case 'C':
		return buf_addstr(out, "/var/cache"), 0;
	case 'E':
		return buf_addstr(out, "/etc"), 0;
	case 'L':
		return buf_addstr(out, "/var/log"), 0;
	case 'S':
		return buf_addstr(out, "/var/lib"), 0;
	case 't':
		return buf_addstr(out, "/run"), 0;
	case 'd':
		return buf_addf(out, "/run/credentials/%s", L->u->unit), 0;
	case 'a': case 'A': case 'b': case 'B': case 'H': case 'l':
	case 'm': case 'M': case 'o': case 'q': case 'v': case 'w':
	case 'W':
		*unknown = xasprintf("specifier %%%c needs the host's "
		    "identity at run time", c);
		return 1;
	case 'h': case 's': case 'T': case 'V':
		*unknown = xasprintf("specifier %%%c depends on the service "
		    "manager's own environment", c);
		return 1;
	case 'f': case 'y': case 'Y':
		*unknown = xasprintf("specifier %%%c is not evaluated by "
		    "envctl", c);
		return 1;
	case 'c': case 'r': case 'R':
		*unknown = xasprintf("specifier %%%c is deprecated and "
		    "depends on the systemd version", c);
		return 1;
	}
	return -1;
}

/*
 * Expands the specifiers of s into out (reset first): 0, 1 with *unknown
 * (the first one that cannot be known), -1 on one systemd refuses.  A
 * trailing lone "%" stays, as systemd keeps it.
 */
static int
ue_expand(struct ue_load *L, const char *s, size_t len, struct buf *out,
    char **unknown)
{
	size_t k;
	int r, any = 0;
	char *why = NULL;

	buf_reset(out);
	*unknown = NULL;
	for (k = 0; k < len; k++) {
		if (s[k] != '%' || k + 1 == len) {
			buf_addch(out, s[k]);
			continue;
		}
		k++;
		if ((r = ue_spec(L, (unsigned char)s[k], out, &why)) < 0) {
			free(*unknown);
			*unknown = NULL;
			return -1;
		}
		if (r == 1) {
			if (*unknown == NULL)
				*unknown = why;
			else
				free(why);
			why = NULL;
			any = 1;
			buf_addch(out, '%');
			buf_addch(out, s[k]);
		}
	}
	return any;
}

/* ---- the environment ---- */

static void
ue_assign_free(struct unitenv_assign *a)
{
	free(a->value);
	free(a->unknown);
	free(a->file);
	memset(a, 0, sizeof(*a));
}

static void
ue_vars_free(struct unitenv *u)
{
	size_t i, k;

	for (i = 0; i < u->nvars; i++) {
		free(u->vars[i].name);
		ue_assign_free(&u->vars[i].now);
		for (k = 0; k < u->vars[i].nover; k++)
			ue_assign_free(&u->vars[i].over[k]);
		free(u->vars[i].over);
	}
	free(u->vars);
	u->vars = NULL;
	u->nvars = 0;
}

static struct unitenv_var *
ue_find(const struct unitenv *u, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < u->nvars; i++)
		if (strncmp(u->vars[i].name, name, len) == 0 &&
		    u->vars[i].name[len] == '\0')
			return &u->vars[i];
	return NULL;
}

const struct unitenv_var *
unitenv_get(const struct unitenv *u, const char *name)
{
	return ue_find(u, name, strlen(name));
}

/*
 * Sets name (len bytes) to value, or to unknown (why), from file:line;
 * the assignment it replaces goes to the variable's history.  Takes
 * value and why.
 */
static int
ue_set(struct unitenv *u, const char *name, size_t len, char *value,
    char *why, const char *file, int line, const char *directive,
    struct err *err)
{
	struct unitenv_var *v;

	if ((v = ue_find(u, name, len)) == NULL) {
		if (u->nvars >= UNITENV_VARS_MAX) {
			free(value);
			free(why);
			return err_set(err, ENVCTL_ETOOBIG, "unit '%s' sets more "
			    "than %d variables", u->unit, UNITENV_VARS_MAX);
		}
		u->vars = xreallocarray(u->vars, u->nvars + 1,
		    sizeof(*u->vars));
		v = &u->vars[u->nvars++];
		memset(v, 0, sizeof(*v));
		v->name = xstrndup(name, len);
	} else {
		v->over = xreallocarray(v->over, v->nover + 1,
		    sizeof(*v->over));
		v->over[v->nover++] = v->now;
	}
	v->now.value = value;
	v->now.unknown = why;
	v->now.file = xstrdup(file);
	v->now.line = line;
	v->now.directive = directive;
	return 0;
}

static void
ue_remove(struct unitenv *u, struct unitenv_var *v)
{
	size_t k;

	free(v->name);
	ue_assign_free(&v->now);
	for (k = 0; k < v->nover; k++)
		ue_assign_free(&v->over[k]);
	free(v->over);
	*v = u->vars[--u->nvars];
}

/* Environment= alone, in systemd's order (a name keeps its place). */
static void
ue_envlist_set(struct unitenv *u, const char *name, size_t len,
    const char *entry)
{
	size_t i;

	for (i = 0; i < u->nenvlist; i++)
		if (strncmp(u->envlist[i], name, len) == 0 &&
		    (u->envlist[i][len] == '=' || u->envlist[i][len] == '\0')) {
			free(u->envlist[i]);
			u->envlist[i] = xstrdup(entry);
			return;
		}
	strv_push(&u->envlist, &u->nenvlist, xstrdup(entry));
}

/*
 * Environment= (systemd.exec(5)): words unquoted as systemd.syntax(7)
 * says, then specifiers; an invalid assignment is ignored with a warning,
 * a syntax error ignores the rest of the line; empty resets the list.
 */
static int
ue_environment(struct ue_load *L, const char *rvalue, const char *file,
    int line, struct err *err)
{
	struct unitenv *u = L->u;
	struct buf w = ENVCTL_BUF_INIT, x = ENVCTL_BUF_INIT;
	const char *p = rvalue, *eq;
	char *why, *nm;
	int r = 0, e;

	if (*rvalue == '\0') {
		ue_vars_free(u);
		ue_free_list(&u->envlist, &u->nenvlist);
		return 0;
	}
	while ((e = unitsyntax_word(&p, &w)) != 0) {
		if (e < 0) {
			ue_warn(u, file, line, "invalid syntax, ignoring: %s",
			    rvalue);
			break;
		}
		if ((e = ue_expand(L, w.data, w.len, &x, &why)) < 0) {
			ue_warn(u, file, line, "failed to resolve specifiers "
			    "in %s, ignoring", w.data);
			continue;
		}
		eq = memchr(x.data, '=', x.len);
		if (eq == NULL ||
		    !unitsyntax_env_name(x.data, (size_t)(eq - x.data)) ||
		    !unitsyntax_utf8(eq + 1, x.len - (size_t)(eq - x.data) -
		    1)) {
			ue_warn(u, file, line, "invalid environment assignment, "
			    "ignoring: %s", x.data);
			free(why);
			continue;
		}
		if (why != NULL && memchr(x.data, '%', (size_t)(eq -
		    x.data)) != NULL) {
			ue_warn(u, file, line, "name of %s cannot be known "
			    "(%s), ignoring", x.data, why);
			free(why);
			continue;
		}
		if (why != NULL) {
			/* Unknown: only the name is compared later. */
			nm = xstrndup(x.data, (size_t)(eq - x.data));
			ue_envlist_set(u, x.data, (size_t)(eq - x.data), nm);
			free(nm);
		} else
			ue_envlist_set(u, x.data, (size_t)(eq - x.data),
			    x.data);
		if ((r = ue_set(u, x.data, (size_t)(eq - x.data), why != NULL ?
		    NULL : xstrdup(eq + 1), why, file, line, "Environment",
		    err)) != 0)
			break;
	}
	buf_release(&w);
	buf_release(&x);
	return r;
}

/* A list directive of names (UnsetEnvironment=, PassEnvironment=). */
static void
ue_names(struct ue_load *L, char ***v, size_t *n, int assignments,
    const char *key, const char *rvalue, const char *file, int line)
{
	struct buf w = ENVCTL_BUF_INIT, x = ENVCTL_BUF_INIT;
	const char *p = rvalue, *eq;
	char *why;
	int e;

	if (*rvalue == '\0') {
		ue_free_list(v, n);
		return;
	}
	while ((e = unitsyntax_word(&p, &w)) != 0) {
		if (e < 0) {
			ue_warn(L->u, file, line, "trailing garbage in %s, "
			    "ignoring: %s", key, rvalue);
			break;
		}
		if ((e = ue_expand(L, w.data, w.len, &x, &why)) != 0) {
			ue_warn(L->u, file, line, "failed to resolve "
			    "specifiers in %s, ignoring", w.data);
			free(why);
			continue;
		}
		eq = assignments ? memchr(x.data, '=', x.len) : NULL;
		if (!unitsyntax_env_name(x.data, eq != NULL ?
		    (size_t)(eq - x.data) : x.len)) {
			ue_warn(L->u, file, line, "invalid environment name "
			    "for %s, ignoring: %s", key, x.data);
			continue;
		}
		strv_push(v, n, xstrdup(x.data));
	}
	buf_release(&w);
	buf_release(&x);
}

/* Replaces *slot by rvalue with known specifiers expanded; "" unsets. */
static void
ue_scalar(struct ue_load *L, char **slot, const char *rvalue)
{
	struct buf x = ENVCTL_BUF_INIT;
	char *why;

	free(*slot);
	*slot = NULL;
	if (*rvalue == '\0')
		return;
	(void)ue_expand(L, rvalue, strlen(rvalue), &x, &why);
	free(why);
	*slot = buf_detach(&x, NULL);
}

/* EnvironmentFile=: specifiers, then an absolute, normalised path. */
static void
ue_envfile(struct ue_load *L, const char *rvalue, const char *file,
    int line)
{
	struct buf x = ENVCTL_BUF_INIT;
	const char *path;
	char *why;
	int e;

	if (*rvalue == '\0') {
		ue_lines_free(&L->efiles, &L->nefiles);
		return;
	}
	if ((e = ue_expand(L, rvalue, strlen(rvalue), &x, &why)) != 0) {
		if (e > 0)
			ue_error(L->u, file, line, "EnvironmentFile=%s cannot "
			    "be read: %s", rvalue, why);
		else
			ue_warn(L->u, file, line, "failed to resolve unit "
			    "specifiers in '%s', ignoring", rvalue);
		free(why);
		goto out;
	}
	path = x.data[0] == '-' ? x.data + 1 : x.data;
	if (path[0] != '/' || strstr(path, "/../") != NULL ||
	    str_endswith(path, "/..")) {
		ue_warn(L->u, file, line, "EnvironmentFile= path '%s' is not "
		    "absolute and normalized, ignoring", path);
		goto out;
	}
	ue_lines_add(&L->efiles, &L->nefiles, x.data, file, line);
out:
	buf_release(&x);
}

static int
ue_directive(struct ue_load *L, const char *key, const char *value,
    const char *file, int line, struct err *err)
{
	struct unitenv *u = L->u;

	if (strcmp(key, "Environment") == 0)
		return ue_environment(L, value, file, line, err);
	if (strcmp(key, "EnvironmentFile") == 0)
		ue_envfile(L, value, file, line);
	else if (strcmp(key, "UnsetEnvironment") == 0)
		ue_names(L, &u->unset, &u->nunset, 1, key, value, file, line);
	else if (strcmp(key, "PassEnvironment") == 0)
		ue_names(L, &u->pass, &u->npass, 0, key, value, file, line);
	else if (strcmp(key, "User") == 0)
		ue_scalar(L, &u->user, value);
	else if (strcmp(key, "Group") == 0)
		ue_scalar(L, &u->group, value);
	else if (strcmp(key, "Type") == 0)
		ue_scalar(L, &u->type, value);
	else if (strcmp(key, "ExecStart") == 0) {
		if (*value == '\0')
			ue_lines_free(&L->execs, &L->nexecs);
		else
			ue_lines_add(&L->execs, &L->nexecs, value, file, line);
	}
	return 0;
}

/* ---- unit files (systemd.syntax(7)) ---- */

/* One logical line: a section header, a comment or KEY=VALUE. */
static int
ue_logical(struct ue_load *L, char *l, const char *file, int line,
    int *service, struct err *err)
{
	char *eq, *k, *v;
	size_t n;

	l += strspn(l, UNITSYNTAX_WS);
	n = strlen(l);
	while (n > 0 && strchr(UNITSYNTAX_WS, l[n - 1]) != NULL)
		l[--n] = '\0';
	if (n == 0 || l[0] == '#' || l[0] == ';')
		return 0;
	if (l[0] == '[') {
		if (l[n - 1] != ']') {
			ue_error(L->u, file, line, "invalid section header "
			    "'%s': the unit fails to load", l);
			return 1;
		}
		*service = n == 9 && strncmp(l, "[Service]", 9) == 0 ? 1 : 0;
		return 0;
	}
	if (strncmp(l, ".include", 8) == 0) {
		ue_warn(L->u, file, line, ".include is not supported by "
		    "systemd, ignoring");
		return 0;
	}
	if (*service < 0) {
		ue_warn(L->u, file, line, "assignment outside of section, "
		    "ignoring");
		return 0;
	}
	if ((eq = strchr(l, '=')) == NULL || eq == l) {
		ue_warn(L->u, file, line, eq == NULL ? "missing '=', ignoring "
		    "line" : "missing key name before '=', ignoring line");
		return 0;
	}
	if (*service != 1)
		return 0;
	*eq = '\0';
	k = l;
	for (n = strlen(k); n > 0 && strchr(UNITSYNTAX_WS, k[n - 1]) != NULL;
	    n--)
		k[n - 1] = '\0';
	v = eq + 1 + strspn(eq + 1, UNITSYNTAX_WS);
	return ue_directive(L, k, v, file, line, err);
}

/*
 * Parses a unit file's text: lines end at "\n", "\r\n" or "\r"; a line
 * ending in an odd run of backslashes continues on the next (that
 * backslash becomes a space), comment lines inside the continuation are
 * skipped; each directive is reported at its first line.
 */
static int
ue_parse_unit(struct ue_load *L, const char *text, size_t len,
    const char *file, struct err *err)
{
	struct buf cont = ENVCTL_BUF_INIT;
	const char *p = text, *end = text + len, *eol, *lead;
	size_t n, bs;
	int line = 0, start = 0, service = -1, r = 0, pending = 0;

	if (memchr(text, '\0', len) != NULL) {
		ue_error(L->u, file, 0, "holds a NUL byte: the unit fails to "
		    "load");
		return 1;
	}
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (p < end || pending) {
		if (p >= end) {
			eol = p;
			n = 0;
		} else {
			eol = p + strcspn(p, "\r\n");
			n = (size_t)(eol - p);
			line++;
		}
		lead = p + strspn(p, " \t");
		if (p < end && lead < eol && (*lead == '#' || *lead == ';')) {
			/* A comment, also inside a continuation. */
		} else {
			if (!pending)
				start = line;
			buf_add(&cont, p, n);
			for (bs = 0; bs < cont.len &&
			    cont.data[cont.len - 1 - bs] == '\\'; bs++)
				;
			if (bs % 2 == 1 && p < end) {
				cont.data[cont.len - 1] = ' ';
				pending = 1;
			} else {
				pending = 0;
				r = ue_logical(L, cont.data, file, start,
				    &service, err);
				buf_reset(&cont);
				if (r != 0)
					break;
			}
		}
		if (eol >= end)
			p = end;
		else
			p = eol + (eol[0] == '\r' && eol + 1 < end &&
			    eol[1] == '\n' ? 2 : 1);
		if (p >= end && !pending)
			break;
	}
	buf_release(&cont);
	if (r > 0)
		L->bad = 1;
	return r < 0 ? r : 0;
}

/* ---- environment files (systemd.exec(5) "EnvironmentFile=") ---- */

/*
 * Reads one environment file and applies it.  Returns 0, 1 when it could
 * not be read (why in *why), or an error code (ETOOBIG).
 */
static int
ue_apply_envfile(struct ue_load *L, const char *full, const char *shown,
    char **why, struct err *err)
{
	struct unitenv *u = L->u;
	struct err e = ENVCTL_ERR_INIT;
	struct buf b = ENVCTL_BUF_INIT;
	struct unitsyntax_pair *v = NULL;
	size_t n = 0, i;
	int missing, r;

	*why = NULL;
	if (L->pol != NULL && (r = policy_root_file(L->pol, full, &e)) != 0) {
		*why = xstrdup(e.msg);
		r = 1;
		goto out;
	}
	if ((r = ue_read(L, &b, &missing, full, shown, &e)) != 0 ||
	    missing) {
		if (r == ENVCTL_ETOOBIG) {
			err_move(err, &e);
			goto out;
		}
		*why = xstrdup(missing ? "no such file" : e.msg);
		r = 1;
		goto out;
	}
	if (memchr(b.data, '\0', b.len) != NULL)
		ue_warn(u, shown, 0, "holds a NUL byte: systemd reads only "
		    "what comes before it");
	unitsyntax_envfile(&v, &n, b.data);
	for (i = 0; i < n; i++)
		if (!unitsyntax_utf8(v[i].key, strlen(v[i].key)) ||
		    !unitsyntax_utf8(v[i].value, strlen(v[i].value))) {
			*why = xasprintf("invalid UTF-8 at line %d", v[i].line);
			r = 1;
			goto out;
		}
	for (i = 0; i < n && r == 0; i++) {
		if (!unitsyntax_env_name(v[i].key, strlen(v[i].key))) {
			ue_warn(u, shown, v[i].line, "ignoring invalid "
			    "environment assignment '%s=%s'", v[i].key,
			    v[i].value);
			continue;
		}
		r = ue_set(u, v[i].key, strlen(v[i].key), v[i].value, NULL,
		    shown, v[i].line, "EnvironmentFile", err);
		v[i].value = NULL;
	}
out:
	unitsyntax_pairs_free(v, n);
	buf_release(&b);
	err_release(&e);
	return r;
}

/*
 * EnvironmentFile= in order, each a path or glob(3) pattern, files of a
 * pattern in glob's sorted order; "-" ignores a missing or unreadable
 * one, otherwise the service fails to start (an error of the unit).
 */
static int
ue_envfiles(struct ue_load *L, struct err *err)
{
	struct unitenv *u = L->u;
	size_t i, k, rl = strlen(u->root);
	glob_t g;
	char *pat, *why;
	const char *path;
	int ignore, gr, r = 0;

	for (i = 0; i < L->nefiles && r == 0; i++) {
		ignore = L->efiles[i].value[0] == '-';
		path = L->efiles[i].value + ignore;
		strv_push(&u->envfiles, &u->nenvfiles,
		    xstrdup(L->efiles[i].value));
		pat = xasprintf("%s%s", u->root, path);
		memset(&g, 0, sizeof(g));
		gr = glob(pat, 0, NULL, &g);
		free(pat);
		if (gr != 0) {
			if (!ignore)
				ue_error(u, L->efiles[i].file,
				    L->efiles[i].line, "EnvironmentFile=%s: %s: "
				    "the service fails to start", path,
				    gr == GLOB_NOMATCH ? "no such file" :
				    "cannot be listed");
			globfree(&g);
			continue;
		}
		if (g.gl_pathc > UNITENV_FILES_MAX)
			r = err_set(err, ENVCTL_ETOOBIG, "EnvironmentFile=%s "
			    "matches more than %d files", path,
			    UNITENV_FILES_MAX);
		for (k = 0; k < g.gl_pathc && r == 0; k++) {
			if ((r = ue_apply_envfile(L, g.gl_pathv[k],
			    g.gl_pathv[k] + rl, &why, err)) == 1) {
				r = 0;
				if (!ignore)
					ue_error(u, L->efiles[i].file,
					    L->efiles[i].line, "EnvironmentFile="
					    "%s: %s: the service fails to start",
					    g.gl_pathv[k] + rl, why);
				else
					ue_warn(u, L->efiles[i].file,
					    L->efiles[i].line, "EnvironmentFile="
					    "-%s not read: %s", g.gl_pathv[k] +
					    rl, why);
			}
			free(why);
		}
		globfree(&g);
	}
	return r;
}

/* ---- ExecStart= (systemd.service(5)) ---- */

/* A bare program name as systemd resolves it, under root; or as given. */
static char *
ue_resolve(const struct unitenv *u, const char *prog)
{
	struct stat st;
	char *full;
	size_t i;

	if (prog[0] == '/')
		return xstrdup(prog);
	for (i = 0; i < sizeof(ue_bin) / sizeof(ue_bin[0]); i++) {
		full = xasprintf("%s%s/%s", u->root, ue_bin[i], prog);
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
			free(full);
			return xasprintf("%s/%s", ue_bin[i], prog);
		}
		free(full);
	}
	return xstrdup(prog);
}

/* 1 when word is env(1): its NAME=VALUE words set the program's env. */
static int
ue_is_env(const char *word)
{
	return strcmp(word, "env") == 0 || str_endswith(word, "/env");
}

/*
 * What env(1)'s arguments do to the environment, from word i on: -i and
 * "-" clear it, -u NAME unsets, NAME=VALUE sets; returns the index of the
 * program, or words' count when a -S or unknown option stops us (then
 * *why says so).
 */
static size_t
ue_env_args(struct unitenv *u, char **w, size_t nw, size_t i,
    const char *file, int line, char **why, int *rc, struct err *err)
{
	const char *eq, *name;
	size_t k;

	for (; i < nw; i++) {
		if (strcmp(w[i], "-i") == 0 || strcmp(w[i], "-") == 0 ||
		    strcmp(w[i], "--ignore-environment") == 0) {
			while (u->nvars > 0)
				ue_remove(u, &u->vars[u->nvars - 1]);
			continue;
		}
		if (strcmp(w[i], "-u") == 0 || strncmp(w[i], "--unset=", 8) == 0 ||
		    (strncmp(w[i], "-u", 2) == 0 && w[i][2] != '\0')) {
			name = strcmp(w[i], "-u") == 0 ? (i + 1 < nw ?
			    w[++i] : "") : w[i][1] == 'u' ? w[i] + 2 : w[i] + 8;
			for (k = 0; k < u->nvars; k++)
				if (strcmp(u->vars[k].name, name) == 0) {
					ue_remove(u, &u->vars[k]);
					break;
				}
			continue;
		}
		if (strcmp(w[i], "-0") == 0 || strcmp(w[i], "-v") == 0)
			continue;
		if (strcmp(w[i], "-C") == 0 || strcmp(w[i], "-P") == 0) {
			i++;
			continue;
		}
		if (strcmp(w[i], "--") == 0)
			return i + 1;
		if (w[i][0] == '-') {
			*why = xasprintf("env option '%s' is not understood by "
			    "envctl", w[i]);
			return nw;
		}
		if ((eq = strchr(w[i], '=')) == NULL)
			return i;
		if ((*rc = ue_set(u, w[i], (size_t)(eq - w[i]),
		    xstrdup(eq + 1), NULL, file, line, "ExecStart", err)) != 0)
			return nw;
	}
	return nw;
}

/*
 * The first command of the ExecStart= in effect: prefixes "@-:+!" off
 * the first word, then the program (after "@", the next word is argv[0])
 * and its arguments; through env(1) to the program it runs.
 */
static int
ue_exec(struct ue_load *L, struct err *err)
{
	struct unitenv *u = L->u;
	struct unitenv_exec *x;
	struct buf w = ENVCTL_BUF_INIT, xw = ENVCTL_BUF_INIT;
	const struct ue_line *e;
	char **words = NULL, *why = NULL, *f;
	size_t nw = 0, i = 0, k;
	const char *p;
	int at = 0, r, rc = 0;

	if (L->nexecs == 0)
		return 0;
	e = &L->execs[0];
	if (L->nexecs > 1 && (u->type == NULL ||
	    strcmp(u->type, "oneshot") != 0))
		ue_error(u, e->file, e->line, "service has more than one "
		    "ExecStart= setting, which is only allowed for "
		    "Type=oneshot services: the unit fails to load");
	p = e->value;
	while ((r = unitsyntax_word(&p, &w)) > 0 && nw < UNITENV_ARGV_MAX + 2) {
		if (strcmp(w.data, ";") == 0)
			break;
		(void)ue_expand(L, w.data, w.len, &xw, &why);
		free(why);
		why = NULL;
		strv_push(&words, &nw, xstrndup(xw.data, xw.len));
	}
	if (r < 0)
		ue_warn(u, e->file, e->line, "invalid syntax in ExecStart=: "
		    "%s", e->value);
	if (nw == 0)
		goto out;
	f = words[0];
	while (*f != '\0' && strchr("@-:+!", *f) != NULL)
		at |= *f++ == '@';
	memmove(words[0], f, strlen(f) + 1);
	x = u->exec = xcalloc(1, sizeof(*x));
	x->file = xstrdup(e->file);
	x->line = e->line;
	i = at ? 2 : 1;
	x->command = ue_resolve(u, words[0]);
	if (ue_is_env(words[0])) {
		i = ue_env_args(u, words, nw, i, e->file, e->line, &why, &rc,
		    err);
		if (rc != 0)
			goto done;
		if (i >= nw) {
			ue_warn(u, e->file, e->line, "ExecStart= runs env "
			    "without a program envctl can find%s%s",
			    why != NULL ? ": " : "", why != NULL ? why : "");
			x->path = ue_resolve(u, words[0]);
			goto done;
		}
		x->path = ue_resolve(u, words[i++]);
	} else
		x->path = ue_resolve(u, words[0]);
	x->python = policy_python_name(x->path);
	for (k = i; k < nw && x->argc < UNITENV_ARGV_MAX; k++)
		strv_push(&x->argv, &x->argc, xstrdup(words[k]));
done:
	free(why);
out:
	ue_free_list(&words, &nw);
	buf_release(&w);
	buf_release(&xw);
	return rc;
}

/* ---- drop-ins ---- */

/* The drop-ins, read and parsed in the order they apply. */
static int
ue_dropins(struct ue_load *L, struct err *err)
{
	struct unitenv *u = L->u;
	struct unitpath_file *v;
	struct buf b = ENVCTL_BUF_INIT;
	size_t n, i;
	int missing, r;

	r = unitpath_dropins(&v, &n, u->root, u->unit, err);
	for (i = 0; i < n && r == 0; i++) {
		strv_push(&u->dropins, &u->ndropins, xstrdup(v[i].shown));
		if ((r = ue_read(L, &b, &missing, v[i].full, v[i].shown,
		    err)) != 0)
			break;
		if (!missing)
			r = ue_parse_unit(L, b.data, b.len, v[i].shown, err);
		buf_release(&b);
	}
	unitpath_files_free(v, n);
	buf_release(&b);
	return r;
}

/* ---- the environment systemd gives ---- */

/* UnsetEnvironment= last of systemd's steps (systemd.exec(5)). */
static void
ue_unset(struct unitenv *u)
{
	struct unitenv_var *v;
	const char *eq;
	size_t i;

	for (i = 0; i < u->nunset; i++) {
		eq = strchr(u->unset[i], '=');
		v = ue_find(u, u->unset[i], eq != NULL ? (size_t)(eq -
		    u->unset[i]) : strlen(u->unset[i]));
		if (v == NULL)
			continue;
		if (eq == NULL || (v->now.value != NULL &&
		    strcmp(v->now.value, eq + 1) == 0))
			ue_remove(u, v);
		else if (v->now.value == NULL) {
			free(v->now.unknown);
			v->now.unknown = xasprintf("UnsetEnvironment=%s removes "
			    "it if the value matches", u->unset[i]);
		}
	}
}

/* What the service manager adds before Environment= (systemd.exec(5)). */
static int
ue_manager_vars(struct unitenv *u, struct err *err)
{
	size_t i;
	int r = 0;

	if (u->user != NULL && ue_find(u, "HOME", 4) == NULL)
		r = ue_set(u, "HOME", 4, NULL, xasprintf("systemd sets it from "
		    "the passwd entry of User=%s", u->user), u->fragment, 0,
		    "User", err);
	for (i = 0; i < u->npass && r == 0; i++)
		if (ue_find(u, u->pass[i], strlen(u->pass[i])) == NULL)
			r = ue_set(u, u->pass[i], strlen(u->pass[i]), NULL,
			    xstrdup("passed from the service manager's own "
			    "environment (PassEnvironment=)"), u->fragment, 0,
			    "PassEnvironment", err);
	return r;
}

int
unitenv_load(struct unitenv *u, const char *root, const char *unit,
    struct policy *pol, struct err *err)
{
	struct ue_load L;
	struct buf b = ENVCTL_BUF_INIT;
	char *full = NULL, *alias = NULL;
	int missing, r;

	memset(u, 0, sizeof(*u));
	memset(&L, 0, sizeof(L));
	L.u = u;
	L.pol = pol;
	u->root = xstrdup(root != NULL ? root : "");
	if (u->root[0] != '\0' && (u->root[0] != '/' ||
	    strpbrk(u->root, "*?[\\") != NULL)) {
		r = err_set(err, ENVCTL_EINVALID, "root '%s' is not an "
		    "absolute path free of glob characters", u->root);
		goto out;
	}
	if ((r = unitpath_name(&u->unit, &L.prefix, &L.instance, unit,
	    err)) != 0)
		goto out;
	if (pol != NULL && (r = policy_service(pol, u->unit, err)) != 0)
		goto out;
	unitpath_fragment(&full, &u->fragment, &alias, u->root, u->unit);
	if (alias != NULL)
		ue_warn(u, u->fragment, 0, "is an alias of '%s': its drop-ins "
		    "are not read by envctl", alias);
	if (full == NULL)
		goto out;
	u->found = 1;
	if ((u->masked = unitpath_is_mask(full)) != 0)
		goto out;
	if ((r = ue_read(&L, &b, &missing, full, u->fragment, err)) != 0 ||
	    (r = ue_parse_unit(&L, b.data, b.len, u->fragment, err)) != 0 ||
	    (r = ue_dropins(&L, err)) != 0 ||
	    (r = ue_envfiles(&L, err)) != 0 ||
	    (r = ue_manager_vars(u, err)) != 0)
		goto out;
	ue_unset(u);
	r = ue_exec(&L, err);
out:
	free(full);
	free(alias);
	free(L.prefix);
	free(L.instance);
	ue_lines_free(&L.execs, &L.nexecs);
	ue_lines_free(&L.efiles, &L.nefiles);
	buf_release(&b);
	return r;
}

/* ---- JSON ---- */

static json_t *
ue_assign_json(const struct unitenv_assign *a)
{
	char *from = a->file != NULL ? xasprintf("%s:%d", a->file, a->line) :
	    NULL;
	json_t *o = json_object();

	json_object_set_new(o, "value", proto_text_or_null(a->value));
	json_object_set_new(o, "unknown", proto_text_or_null(a->unknown));
	json_object_set_new(o, "from", proto_text_or_null(from));
	json_object_set_new(o, "directive", a->directive != NULL ?
	    json_string(a->directive) : json_null());
	free(from);
	return o;
}

static json_t *
ue_list_json(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, proto_text_or_null(v[i]));
	return a;
}

static void
ue_env_entry(json_t *env, const struct unitenv *u, const char *name)
{
	const struct unitenv_var *v;
	struct unitenv_assign none;
	json_t *o, *over;
	size_t k;

	if (json_object_get(env, name) != NULL)
		return;
	memset(&none, 0, sizeof(none));
	v = unitenv_get(u, name);
	o = ue_assign_json(v != NULL ? &v->now : &none);
	over = json_array();
	for (k = 0; v != NULL && k < v->nover; k++)
		json_array_append_new(over, ue_assign_json(&v->over[k]));
	json_object_set_new(o, "overrides", over);
	json_object_set_new(env, name, o);
}

json_t *
unitenv_json(const struct unitenv *u, char *const *names, size_t nnames)
{
	json_t *o = json_object(), *env = json_object(), *x, *sc;
	size_t i;

	json_object_set_new(o, "unit", proto_text_or_null(u->unit));
	json_object_set_new(o, "found", json_boolean(u->found));
	json_object_set_new(o, "masked", json_boolean(u->masked));
	json_object_set_new(o, "fragment", proto_text_or_null(u->fragment));
	json_object_set_new(o, "dropins", ue_list_json(u->dropins,
	    u->ndropins));
	json_object_set_new(o, "user", proto_text_or_null(u->user));
	json_object_set_new(o, "group", proto_text_or_null(u->group));
	if (u->exec != NULL) {
		x = json_object();
		json_object_set_new(x, "command",
		    proto_text_or_null(u->exec->command));
		json_object_set_new(x, "path", proto_text_or_null(u->exec->path));
		json_object_set_new(x, "python", json_boolean(u->exec->python));
		json_object_set_new(x, "argv", ue_list_json(u->exec->argv,
		    u->exec->argc));
		json_object_set_new(o, "exec", x);
	} else
		json_object_set_new(o, "exec", json_null());
	for (i = 0; i < nnames; i++)
		ue_env_entry(env, u, names[i]);
	for (i = 0; i < sizeof(ue_fixed) / sizeof(ue_fixed[0]); i++)
		ue_env_entry(env, u, ue_fixed[i]);
	json_object_set_new(o, "env", env);
	json_object_set_new(o, "unset", ue_list_json(u->unset, u->nunset));
	json_object_set_new(o, "errors", ue_list_json(u->errors, u->nerrors));
	json_object_set_new(o, "warnings", ue_list_json(u->warnings,
	    u->nwarnings));
	sc = json_object();
	json_object_set_new(sc, "checked", json_boolean(u->sc_checked));
	json_object_set_new(sc, "agrees", u->sc_checked ?
	    json_boolean(u->sc_agrees) : json_null());
	json_object_set_new(sc, "reason", proto_text_or_null(u->sc_reason));
	json_object_set_new(sc, "differences", ue_list_json(u->sc_diffs,
	    u->sc_ndiffs));
	json_object_set_new(o, "systemctl", sc);
	return o;
}

/* ---- systemctl show ---- */

static void
ue_diff(struct unitenv *u, const char *what, const char *ours,
    const char *theirs)
{
	if (strcmp(ours, theirs) != 0)
		strv_push(&u->sc_diffs, &u->sc_ndiffs, xasprintf("%s: envctl "
		    "reads '%s', systemd has '%s'", what, ours, theirs));
}

/*
 * One word of systemctl's Environment= line: shell_maybe_quote()'s
 * output, a bare word or "..." with \ before " \ ` $.
 */
static int
ue_shell_word(const char **p, struct buf *w)
{
	const char *s = *p + strspn(*p, " ");

	buf_reset(w);
	if (*s == '\0')
		return 0;
	if (*s != '"') {
		buf_add(w, s, strcspn(s, " "));
		*p = s + strcspn(s, " ");
		return 1;
	}
	for (s++; *s != '"'; s++) {
		if (*s == '\0')
			return -1;
		if (*s == '\\' && s[1] != '\0')
			s++;
		buf_addch(w, *s);
	}
	*p = s + 1;
	return 1;
}

/* Ours joined by spaces, and theirs as systemctl printed it, compared. */
static void
ue_cmp_env(struct unitenv *u, const char *theirs)
{
	struct buf w = ENVCTL_BUF_INIT, a = ENVCTL_BUF_INIT,
	    c = ENVCTL_BUF_INIT;
	const char *p = theirs;
	size_t i = 0;
	int e;

	while ((e = ue_shell_word(&p, &w)) > 0) {
		buf_addf(&c, "%s%s", c.len > 0 ? " " : "", w.data);
		if (i < u->nenvlist && strchr(u->envlist[i], '=') == NULL)
			buf_addf(&a, "%s%s", a.len > 0 ? " " : "", w.data);
		else if (i < u->nenvlist)
			buf_addf(&a, "%s%s", a.len > 0 ? " " : "",
			    u->envlist[i]);
		i++;
	}
	for (; i < u->nenvlist; i++)
		buf_addf(&a, "%s%s", a.len > 0 ? " " : "", u->envlist[i]);
	if (e < 0)
		strv_push(&u->sc_diffs, &u->sc_ndiffs, xasprintf("Environment: "
		    "cannot read systemctl's '%s'", theirs));
	else
		ue_diff(u, "Environment", a.data, c.data);
	buf_release(&w);
	buf_release(&a);
	buf_release(&c);
}

/* "{ path=/usr/bin/x ; argv[]=/usr/bin/x a b ; ... }": the path. */
static char *
ue_exec_path(const char *v)
{
	const char *p = strstr(v, "path=");

	if (p == NULL)
		return xstrdup("");
	p += 5;
	return xstrndup(p, strcspn(p, " ;"));
}

int
unitenv_systemctl_parse(struct unitenv *u, const char *text, size_t len,
    struct err *err)
{
	struct buf files = ENVCTL_BUF_INIT, ours = ENVCTL_BUF_INIT;
	const char *p = text, *end = text + len, *nl, *eq, *v;
	char *line = NULL, *execpath = NULL;
	const char *frag = "", *dropins = "", *user = "", *env = NULL,
	    *load = "";
	char **keep = NULL;
	size_t nkeep = 0, i;
	int r = 0, lineno = 0;

	ue_free_list(&u->sc_diffs, &u->sc_ndiffs);
	for (; p < end; p = nl + 1) {
		lineno++;
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (nl == p)
			continue;
		line = xstrndup(p, (size_t)(nl - p));
		if ((eq = strchr(line, '=')) == NULL) {
			r = err_set(err, ENVCTL_EPARSE, "systemctl show:%d: "
			    "not PROPERTY=VALUE: '%s'", lineno, line);
			free(line);
			goto out;
		}
		strv_push(&keep, &nkeep, line);
		v = eq + 1;
		if (strncmp(line, "FragmentPath=", 13) == 0)
			frag = v;
		else if (strncmp(line, "DropInPaths=", 12) == 0)
			dropins = v;
		else if (strncmp(line, "User=", 5) == 0)
			user = v;
		else if (strncmp(line, "LoadState=", 10) == 0)
			load = v;
		else if (strncmp(line, "Environment=", 12) == 0)
			env = v;
		else if (strncmp(line, "EnvironmentFiles=", 17) == 0)
			/* "PATH (ignore_errors=yes)", one line a file. */
			buf_addf(&files, "%s%s%.*s", files.len > 0 ? " " : "",
			    strstr(v, "(ignore_errors=yes)") != NULL ? "-" : "",
			    (int)strcspn(v, " "), v);
		else if (strncmp(line, "ExecStart=", 10) == 0 &&
		    execpath == NULL)
			execpath = ue_exec_path(v);
	}
	if (strcmp(load, "masked") == 0 || u->masked)
		ue_diff(u, "masked", u->masked ? "yes" : "no",
		    strcmp(load, "masked") == 0 ? "yes" : "no");
	if (strcmp(load, "not-found") == 0 || !u->found)
		ue_diff(u, "found", u->found ? "yes" : "no",
		    strcmp(load, "not-found") == 0 ? "no" : "yes");
	if (u->found && !u->masked) {
		ue_diff(u, "FragmentPath", u->fragment != NULL ? u->fragment :
		    "", frag);
		for (i = 0; i < u->ndropins; i++)
			buf_addf(&ours, "%s%s", i > 0 ? " " : "",
			    u->dropins[i]);
		ue_diff(u, "DropInPaths", ours.data, dropins);
		ue_diff(u, "User", u->user != NULL ? u->user : "", user);
		ue_cmp_env(u, env != NULL ? env : "");
		buf_reset(&ours);
		for (i = 0; i < u->nenvfiles; i++)
			buf_addf(&ours, "%s%s", i > 0 ? " " : "",
			    u->envfiles[i]);
		ue_diff(u, "EnvironmentFiles", ours.data, files.data);
		ue_diff(u, "ExecStart", u->exec != NULL ? u->exec->command :
		    "", execpath != NULL ? execpath : "");
	}
	u->sc_checked = 1;
	u->sc_agrees = u->sc_ndiffs == 0;
	free(u->sc_reason);
	u->sc_reason = NULL;
out:
	ue_free_list(&keep, &nkeep);
	free(execpath);
	buf_release(&files);
	buf_release(&ours);
	return r;
}

int
unitenv_systemctl(struct unitenv *u, struct err *err)
{
	static char *const envp[] = { "LC_ALL=C", "SYSTEMD_COLORS=0",
	    "PATH=/usr/bin:/bin", NULL };
	struct child_spec spec;
	struct child_result res;
	char *argv[7];
	int r;

	u->sc_checked = u->sc_agrees = 0;
	free(u->sc_reason);
	u->sc_reason = NULL;
	if (u->unit == NULL) {
		u->sc_reason = xstrdup("no valid unit name");
		return 0;
	}
	if (u->root[0] != '\0') {
		u->sc_reason = xasprintf("read under '%s', not the running "
		    "system", u->root);
		return 0;
	}
	/* sd_booted(3)'s test. */
	if (access("/run/systemd/system", F_OK) != 0) {
		u->sc_reason = xstrdup("systemd is not running on this host "
		    "(no /run/systemd/system)");
		return 0;
	}
	argv[0] = "systemctl";
	argv[1] = "show";
	argv[2] = "--no-pager";
	argv[3] = "--property=Environment,EnvironmentFiles,ExecStart,User,"
	    "FragmentPath,DropInPaths,LoadState";
	argv[4] = "--";
	argv[5] = u->unit;
	argv[6] = NULL;
	memset(&spec, 0, sizeof(spec));
	spec.name = "systemctl show";
	spec.argv = argv;
	spec.envp = envp;
	spec.path = "/usr/bin:/bin:/usr/sbin:/sbin";
	spec.timeout_ms = UNITENV_SYSTEMCTL_MS;
	spec.out_keep = UE_OUT_MAX;
	spec.err_keep = 4096;
	if ((r = child_run(&res, &spec, err)) != 0) {
		u->sc_reason = xstrdup(err != NULL && err->msg != NULL ?
		    err->msg : "systemctl show did not run");
		goto out;
	}
	if (res.status != 0 || res.out_truncated) {
		u->sc_reason = res.out_truncated ? xstrdup("systemctl show "
		    "printed too much") : xasprintf("systemctl show exited "
		    "%d: %.200s", res.status, res.err.data);
		goto out;
	}
	r = unitenv_systemctl_parse(u, res.out.data, res.out.len, err);
out:
	child_result_release(&res);
	return r;
}

void
unitenv_release(struct unitenv *u)
{
	if (u->exec != NULL) {
		free(u->exec->command);
		free(u->exec->path);
		ue_free_list(&u->exec->argv, &u->exec->argc);
		free(u->exec->file);
		free(u->exec);
	}
	ue_vars_free(u);
	free(u->unit);
	free(u->root);
	free(u->fragment);
	free(u->user);
	free(u->group);
	free(u->type);
	ue_free_list(&u->dropins, &u->ndropins);
	ue_free_list(&u->unset, &u->nunset);
	ue_free_list(&u->pass, &u->npass);
	ue_free_list(&u->envfiles, &u->nenvfiles);
	ue_free_list(&u->envlist, &u->nenvlist);
	ue_free_list(&u->errors, &u->nerrors);
	ue_free_list(&u->warnings, &u->nwarnings);
	ue_free_list(&u->sc_diffs, &u->sc_ndiffs);
	free(u->sc_reason);
	memset(u, 0, sizeof(*u));
}
