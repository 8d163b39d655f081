/* render.c - builds sitecustomize.py content (see render.h). */
#include "controller/render.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/pylit.h"
#include "controller/template.h"

/* Longest piece of user text quoted in a message. */
#define SHOW_MAX	64

#define ENV_LINE	"{{ envctl_env }}"

/* One line of a text: [start, end) without its '\n'; next is past it. */
struct line {
	size_t	start;
	size_t	end;
	size_t	next;
};

/* Reads the line at *off into l; returns 0 at the end of the text. */
static int
next_line(const char *s, size_t len, size_t *off, struct line *l)
{
	const char *nl;

	if (*off >= len)
		return 0;
	l->start = *off;
	nl = memchr(s + *off, '\n', len - *off);
	l->end = nl != NULL ? (size_t)(nl - s) : len;
	l->next = nl != NULL ? l->end + 1 : len;
	*off = l->next;
	return 1;
}

static int
is_blank(int c)
{
	return c == ' ' || c == '\t';
}

/* Length of s[0, n) without trailing spaces, tabs and CRs. */
static size_t
rtrim(const char *s, size_t n)
{
	while (n > 0 && (is_blank(s[n - 1]) || s[n - 1] == '\r'))
		n--;
	return n;
}

/* "\r\n" when the first line of s ends in CRLF, else "\n". */
static const char *
eol_of(const char *s, size_t len)
{
	const char *nl = memchr(s, '\n', len);

	return nl != NULL && nl > s && nl[-1] == '\r' ? "\r\n" : "\n";
}

/*
 * Appends at most SHOW_MAX bytes of s for a message: a NUL as the text
 * \\x00 (the message is a C string); err_format() shows every other
 * control character and bad UTF-8 as such escapes.
 */
static void
show(struct buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < SHOW_MAX; i++) {
		if (s[i] == '\0')
			buf_addstr(b, "\\x00");
		else
			buf_addch(b, s[i]);
	}
	if (n > SHOW_MAX)
		buf_addstr(b, "...");
}

/*
 * Appends the LF-ended text s with every line ending written as eol and
 * every non-empty line prefixed with indent.
 */
static int
add_lines(struct buf *out, const char *s, size_t n, const char *eol,
    const char *indent, size_t indentlen)
{
	struct line l;
	size_t off = 0, e;
	int r = 0;

	while (r == 0 && next_line(s, n, &off, &l)) {
		e = l.end;
		if (e > l.start && s[e - 1] == '\r')
			e--;
		if (e > l.start)
			r = buf_add(out, indent, indentlen);
		if (r == 0)
			r = buf_add(out, s + l.start, e - l.start);
		if (r == 0)
			r = buf_addstr(out, eol);
	}
	return r;
}

/* ---- render_env_code ---- */

/* Checks one variable; i is its index in vars. */
static int
check_var(const struct render_var *vars, size_t i, struct err *err)
{
	const struct render_var *v = &vars[i];
	struct buf m = ENVCTL_BUF_INIT;
	const char *c;
	size_t j, off;
	int r = 0;

	if (v->name == NULL) {
		r = err_set(err, ENVCTL_EINVALID, "variable %zu has no name",
		    i + 1);
		goto out;
	}
	if (!pylit_is_identifier(v->name)) {
		show(&m, v->name, strlen(v->name));
		r = err_set(err, ENVCTL_EINVALID, "invalid environment "
		    "variable name '%s': expected [A-Za-z_][A-Za-z0-9_]*",
		    m.data);
		goto out;
	}
	for (j = 0; j < i; j++)
		if (strcmp(vars[j].name, v->name) == 0) {
			r = err_set(err, ENVCTL_EINVALID, "duplicate "
			    "environment variable '%s' (entries %zu and %zu)",
			    v->name, j + 1, i + 1);
			goto out;
		}
	if (v->value == NULL) {
		r = err_set(err, ENVCTL_EINVALID,
		    "environment variable '%s' has no value", v->name);
		goto out;
	}
	if (v->comment == NULL)
		goto out;
	for (c = v->comment; *c != '\0'; c++) {
		if (*c == '\n' || *c == '\r') {
			r = err_set(err, ENVCTL_EINVALID, "comment for '%s' "
			    "contains a line break (one line only)", v->name);
			goto out;
		}
		if ((*c > 0 && *c < 0x20 && *c != '\t') || *c == 0x7f) {
			r = err_set(err, ENVCTL_EINVALID, "comment for '%s' "
			    "contains control character 0x%02x", v->name,
			    (unsigned)*c);
			goto out;
		}
	}
	if (!pylit_utf8_valid(v->comment, strlen(v->comment), &off))
		r = err_set(err, ENVCTL_EINVALID, "comment for '%s' is not "
		    "valid UTF-8 (byte offset %zu)", v->name, off);
 out:
	buf_release(&m);
	return r;
}

int
render_env_code(struct buf *out, const struct render_var *vars, size_t n,
    enum render_policy policy, struct err *err)
{
	size_t start = out->len, i;
	int r = 0;

	if (policy != ENVCTL_POLICY_SETDEFAULT &&
	    policy != ENVCTL_POLICY_OVERRIDE) {
		r = err_set(err, ENVCTL_EINVALID, "unknown policy %d",
		    (int)policy);
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((r = check_var(vars, i, err)) != 0)
			goto out;
	r = buf_addstr(out, "import os as _envctl_os\n");
	for (i = 0; r == 0 && i < n; i++) {
		if (vars[i].comment != NULL && (r = buf_addf(out, "\n#%s%s\n",
		    *vars[i].comment != '\0' ? " " : "",
		    vars[i].comment)) != 0)
			break;
		if (policy == ENVCTL_POLICY_SETDEFAULT)
			r = buf_addf(out, "_envctl_os.environ.setdefault(\"%s\""
			    ", ", vars[i].name);
		else
			r = buf_addf(out, "_envctl_os.environ[\"%s\"] = ",
			    vars[i].name);
		if (r != 0)
			break;
		if ((r = pylit_quote(out, vars[i].value,
		    strlen(vars[i].value), err)) != 0) {
			if (r == ENVCTL_EINVALID) {
				err_context(err, "environment variable '%s'",
				    vars[i].name);
				goto out;
			}
			break;
		}
		r = buf_addstr(out, policy == ENVCTL_POLICY_SETDEFAULT ?
		    ")\n" : "\n");
	}
	if (r == 0)
		r = buf_addstr(out, "del _envctl_os\n");
	if (r != 0)
		r = err_set(err, ENVCTL_ETOOBIG, "environment code exceeds "
		    "the %zu-byte limit", out->cap);
 out:
	if (r != 0)
		buf_truncate(out, start);
	return r;
}

/* ---- render_file ---- */

/*
 * Returns the length of "{{ envctl_env }}" (any spaces or tabs inside) at
 * the start of s[0, n), or 0 when s does not start with one.
 */
static size_t
env_expr(const char *s, size_t n)
{
	static const char name[] = "envctl_env";
	size_t p = 2, nl = sizeof(name) - 1;

	if (n < 2 || s[0] != '{' || s[1] != '{')
		return 0;
	while (p < n && is_blank(s[p]))
		p++;
	if (n - p < nl || memcmp(s + p, name, nl) != 0)
		return 0;
	for (p += nl; p < n && is_blank(s[p]); p++)
		;
	if (n - p < 2 || s[p] != '}' || s[p + 1] != '}')
		return 0;
	return p + 2;
}

/*
 * Returns 1 when the line s[0, n) holds only "{{ envctl_env }}" and blanks;
 * *indentp gets the length of its leading blanks.
 */
static int
is_env_line(const char *s, size_t n, size_t *indentp)
{
	size_t p = 0, used;

	n = rtrim(s, n);
	while (p < n && is_blank(s[p]))
		p++;
	*indentp = p;
	used = env_expr(s + p, n - p);
	return used > 0 && p + used == n;
}

int
render_file(struct buf *out, const char *tmpl, size_t len,
    const char *tmpl_path, const char *envcode, size_t envlen,
    struct err *err)
{
	size_t start = out->len, off = 0, at, indent = 0, ind, n;
	struct line l, env = { 0, 0, 0 };
	const char *s;
	int lineno = 0, found = 0, r = 0;

	while (next_line(tmpl, len, &off, &l)) {
		lineno++;
		if (is_env_line(tmpl + l.start, l.end - l.start, &ind)) {
			if (found) {
				r = err_setat(err, ENVCTL_EINVALID, tmpl_path,
				    lineno, (int)ind + 1, "duplicate '"
				    ENV_LINE "' line, first at line %d",
				    found);
				goto out;
			}
			found = lineno;
			env = l;
			indent = ind;
			continue;
		}
		s = tmpl + l.start;
		n = l.end - l.start;
		if ((at = template_find_syntax(s, n)) < n) {
			r = err_setat(err, ENVCTL_EUNSUPPORTED, tmpl_path,
			    lineno, (int)at + 1, "%s", env_expr(s + at,
			    n - at) > 0 ? "'" ENV_LINE "' must stand alone "
			    "on its line (only spaces or tabs around it)" :
			    "template files are literal except for the '"
			    ENV_LINE "' line; put values in the playbook's "
			    "env: map");
			goto out;
		}
	}
	if (!found) {
		r = err_setat(err, ENVCTL_EINVALID, tmpl_path, 0, 0,
		    "template has no '" ENV_LINE "' line: it marks where "
		    "the environment code goes");
		goto out;
	}
	if ((r = buf_add(out, tmpl, env.start)) == 0 &&
	    (r = add_lines(out, envcode, envlen, eol_of(tmpl, len),
	    tmpl + env.start, indent)) == 0)
		r = buf_add(out, tmpl + env.next, len - env.next);
	if (r != 0)
		r = err_set(err, ENVCTL_ETOOBIG, "rendered file exceeds the "
		    "%zu-byte limit", out->cap);
 out:
	if (r != 0)
		buf_truncate(out, start);
	return r;
}

/* ---- render_block ---- */

/*
 * Owner names are playbook names; they are kept to a small set of
 * characters so that a marker line can never turn into something Python
 * reads, such as a "coding:" declaration on the first line.
 */
static int
check_owner(const char *owner, struct err *err)
{
	struct buf m = ENVCTL_BUF_INIT;
	const char *p;
	int r = 0;

	if (owner == NULL || *owner == '\0') {
		r = err_set(err, ENVCTL_EINVALID, "empty block owner name");
		goto out;
	}
	for (p = owner; *p != '\0'; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("._+@-", *p) != NULL)) {
			show(&m, owner, strlen(owner));
			r = err_set(err, ENVCTL_EINVALID, "invalid block owner "
			    "name '%s': expected letters, digits and ._+@-",
			    m.data);
			goto out;
		}
 out:
	buf_release(&m);
	return r;
}

/* Returns 1 when line s[0, n) is the marker pfx + owner. */
static int
is_marker(const char *s, size_t n, const char *pfx, const char *owner)
{
	size_t pl = strlen(pfx), ol = strlen(owner);

	n = rtrim(s, n);
	return n == pl + ol && memcmp(s, pfx, pl) == 0 &&
	    memcmp(s + pl, owner, ol) == 0;
}

/* Returns 1 when line s[0, n) starts with pfx (a marker of any owner). */
static int
has_prefix(const char *s, size_t n, const char *pfx)
{
	size_t pl = strlen(pfx);

	return n >= pl && memcmp(s, pfx, pl) == 0;
}

/* Line number of the first BEGIN marker of owner after offset off, or 0. */
static int
later_begin(const char *cur, size_t curlen, size_t off, int lineno,
    const char *owner)
{
	struct line l;

	while (next_line(cur, curlen, &off, &l)) {
		lineno++;
		if (is_marker(cur + l.start, l.end - l.start,
		    ENVCTL_BLOCK_BEGIN, owner))
			return lineno;
	}
	return 0;
}

int
render_find_block(const char *cur, size_t curlen, const char *cur_path,
    const char *owner, size_t *begin, size_t *end, struct err *err)
{
	struct buf m = ENVCTL_BUF_INIT;
	size_t off = 0, b = 0, e = 0, n;
	int lineno = 0, bline = 0, eline = 0, later, r;
	const char *s;
	struct line l;

	if ((r = check_owner(owner, err)) != 0)
		goto out;
	while (next_line(cur, curlen, &off, &l)) {
		lineno++;
		s = cur + l.start;
		n = l.end - l.start;
		if (is_marker(s, n, ENVCTL_BLOCK_BEGIN, owner)) {
			if (bline != 0) {
				r = err_setat(err, ENVCTL_EPARSE, cur_path,
				    lineno, 1, "duplicate '"
				    ENVCTL_BLOCK_BEGIN "%s' marker, first at "
				    "line %d", owner, bline);
				goto out;
			}
			bline = lineno;
			b = l.start;
		} else if (is_marker(s, n, ENVCTL_BLOCK_END, owner)) {
			if (eline != 0) {
				r = err_setat(err, ENVCTL_EPARSE, cur_path,
				    lineno, 1, "duplicate '" ENVCTL_BLOCK_END
				    "%s' marker, first at line %d", owner,
				    eline);
				goto out;
			}
			if (bline == 0) {
				later = later_begin(cur, curlen, off, lineno,
				    owner);
				if (later != 0)
					r = err_setat(err, ENVCTL_EPARSE,
					    cur_path, lineno, 1, "'"
					    ENVCTL_BLOCK_END "%s' marker "
					    "before its BEGIN marker at line "
					    "%d", owner, later);
				else
					r = err_setat(err, ENVCTL_EPARSE,
					    cur_path, lineno, 1, "'"
					    ENVCTL_BLOCK_END "%s' marker "
					    "without a BEGIN marker", owner);
				goto out;
			}
			eline = lineno;
			e = l.next;
		} else if (bline != 0 && eline == 0 &&
		    (has_prefix(s, n, ENVCTL_BLOCK_BEGIN) ||
		    has_prefix(s, n, ENVCTL_BLOCK_END))) {
			show(&m, s, rtrim(s, n));
			r = err_setat(err, ENVCTL_EPARSE, cur_path, lineno, 1,
			    "'%s' marker inside the block of '%s' (begun at "
			    "line %d): blocks cannot nest or overlap", m.data,
			    owner, bline);
			goto out;
		}
	}
	if (bline != 0 && eline == 0) {
		r = err_setat(err, ENVCTL_EPARSE, cur_path, bline, 1, "'"
		    ENVCTL_BLOCK_BEGIN "%s' marker without a matching END "
		    "marker", owner);
		goto out;
	}
	if (bline != 0) {
		*begin = b;
		*end = e;
		r = 1;
	}
 out:
	buf_release(&m);
	return r;
}

/* Refuses a body with a marker line, which would break the next parse. */
static int
check_body(const char *body, size_t bodylen, struct err *err)
{
	struct buf m = ENVCTL_BUF_INIT;
	size_t off = 0;
	struct line l;
	int lineno = 0, r = 0;

	while (next_line(body, bodylen, &off, &l)) {
		lineno++;
		if (has_prefix(body + l.start, l.end - l.start,
		    ENVCTL_BLOCK_BEGIN) || has_prefix(body + l.start,
		    l.end - l.start, ENVCTL_BLOCK_END)) {
			show(&m, body + l.start, rtrim(body + l.start,
			    l.end - l.start));
			r = err_set(err, ENVCTL_EINVALID, "block body line %d "
			    "is an envctl marker '%s'", lineno, m.data);
			break;
		}
	}
	buf_release(&m);
	return r;
}

int
render_block(struct buf *out, const char *cur, size_t curlen,
    const char *cur_path, const char *owner, const char *body,
    size_t bodylen, struct err *err)
{
	size_t start = out->len, b = 0, e = 0;
	const char *eol = eol_of(cur, curlen);
	int found, r;

	if ((found = render_find_block(cur, curlen, cur_path, owner, &b, &e,
	    err)) < 0) {
		r = found;
		goto out;
	}
	if ((r = check_body(body, bodylen, err)) != 0)
		goto out;
	if (found)
		r = buf_add(out, cur, b);
	else {
		r = buf_add(out, cur, curlen);
		if (r == 0 && curlen > 0 && cur[curlen - 1] != '\n')
			r = buf_addstr(out, eol);
		if (r == 0 && curlen > 0)
			r = buf_addstr(out, eol);
	}
	if (r == 0)
		r = buf_addf(out, ENVCTL_BLOCK_BEGIN "%s%s", owner, eol);
	if (r == 0)
		r = add_lines(out, body, bodylen, eol, "", 0);
	if (r == 0)
		r = buf_addf(out, ENVCTL_BLOCK_END "%s%s", owner, eol);
	if (r == 0 && found)
		r = buf_add(out, cur + e, curlen - e);
	if (r != 0)
		r = err_set(err, ENVCTL_ETOOBIG, "rendered file exceeds the "
		    "%zu-byte limit", out->cap);
 out:
	if (r != 0)
		buf_truncate(out, start);
	return r;
}
