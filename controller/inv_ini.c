/*
 * inv_ini.c - INI inventories as Ansible 2.14's ini plugin reads them
 * (see inv_ini.h).
 *
 * What Ansible does, each checked with ansible-inventory --list on small
 * files (tests/unit/check_inv_ini.c runs it on every case it tests):
 * - Lines are Python's str.splitlines() of the file: "\f", "\v", "\x1c"
 *   to "\x1e", U+0085, U+2028 and U+2029 end lines too.  Bytes that are
 *   not UTF-8 Ansible decodes with surrogate escapes (to_text()'s
 *   surrogate_or_strict never fails on Python 3, so the plugin's fallback
 *   for such files is never taken): fine in comment lines, refused by
 *   envctl anywhere else.
 * - Each line is stripped of Unicode whitespace (str.strip()); empty
 *   lines and lines starting with '#' or ';' are skipped.
 * - "[name]", "[name:hosts]", "[name:children]", "[name:vars]", the name
 *   without ':', ']' or whitespace, may be followed by blanks and a '#'
 *   comment (not ';': "[g] ; c" is read as a host pattern).  Another
 *   ":type" is "unknown type"; any other line in brackets is an "invalid
 *   section entry".  Names are kept as written (TRANSFORM_INVALID_GROUP_
 *   CHARS is 'never' by default).
 * - Hosts before the first section go to "ungrouped".  A host line is
 *   split as shlex.split(line, comments=True): quotes, backslashes, and
 *   '#' starting a comment even inside a word ("a=1#c" is a=1).  The
 *   first word is the host pattern (ranges, host:port; "---" and a
 *   trailing ':' are refused), every other word must be key=value (split
 *   at the first '='), else "Expected key=value host variable
 *   assignment"; a bad line adds no host.
 * - Values, inline and in :vars sections alike (whatever the plugin's
 *   documentation says), go through ast.literal_eval(): on ValueError or
 *   SyntaxError the text is kept as a string ("a # c" stays so, while
 *   "1 # c" is 1).  A :vars line is split at its first '=' and both sides
 *   stripped; a line without '=' is "Expected key=value".  "=1" sets the
 *   variable named "".
 * - A :children line is one group name, optionally followed by blanks and
 *   a '#' comment, else "Expected group name".  A child not yet defined
 *   is linked when its [child] or [child:children] section comes; one
 *   never defined is an error at the line naming it (the last parent is
 *   named).  [g:vars] for a group no [g] or [g:children] defines is an
 *   error at the section's line.
 * - A port sets ansible_port only on a host's first appearance; inline
 *   variables are set after it, and later lines replace earlier values.
 */
#include "controller/inv_ini.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/invbuild.h"
#include "controller/hostrange.h"
#include "controller/inventory.h"
#include "controller/pylit.h"
#include "controller/pyvalue.h"
#include "controller/yamldoc.h"

enum ini_state {
	INI_HOSTS,
	INI_CHILDREN,
	INI_VARS,
};

/* A group named before Ansible has it: in :children, or a :vars title. */
struct pending {
	char	*name;
	int	 line;
	int	 vars;		/* [name:vars], else in :children */
	size_t	*parents;	/* group indexes */
	size_t	 nparents, alloc;
	char	*lastparent;
};

struct ini {
	struct invb	*b;
	struct ydoc	*doc;		/* names and values, kept */
	const char	*path;
	int		 first;		/* first error code */
	int		 lineno;
	/* groups Ansible's inventory has (all, ungrouped, sections) */
	char		**known;
	size_t		 nknown, knowncap;
	struct pending	*pend;
	size_t		 npend, pendalloc;
};

/* One shlex word and where it began in the line (0-based). */
struct word {
	struct buf	 text;
	size_t		 at;
};

static void __attribute__((format(printf, 4, 5)))
ini_error(struct ini *in, int code, int col, const char *fmt, ...)
{
	struct buf msg = ENVCTL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	invb_errorat(in->b, code, in->lineno, col, "%s", msg.data);
	if (in->first == 0)
		in->first = code;
	buf_release(&msg);
}

/* --- the set of group names Ansible has ------------------------------- */

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static char **
known_slot(char **tab, size_t cap, const char *name)
{
	size_t i = (size_t)name_hash(name) & (cap - 1);

	while (tab[i] != NULL && strcmp(tab[i], name) != 0)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int
is_known(const struct ini *in, const char *name)
{
	/* Defined here, or by a source read before (an inventory dir). */
	return (in->knowncap != 0 &&
	    *known_slot(in->known, in->knowncap, name) != NULL) ||
	    invb_group_known(in->b, name);
}

static void
add_known(struct ini *in, const char *name)
{
	char **old = in->known, **slot;
	size_t oldcap = in->knowncap, i;

	if (is_known(in, name))
		return;
	if (2 * (in->nknown + 1) > in->knowncap) {
		in->knowncap = in->knowncap == 0 ? 64 : 2 * in->knowncap;
		in->known = xcalloc(in->knowncap, sizeof(*in->known));
		for (i = 0; i < oldcap; i++)
			if (old[i] != NULL)
				*known_slot(in->known, in->knowncap, old[i]) =
				    old[i];
		free(old);
	}
	slot = known_slot(in->known, in->knowncap, name);
	*slot = xstrdup(name);
	in->nknown++;
}

static struct pending *
find_pending(struct ini *in, const char *name)
{
	size_t i;

	for (i = 0; i < in->npend; i++)
		if (in->pend[i].name != NULL &&
		    strcmp(in->pend[i].name, name) == 0)
			return &in->pend[i];
	return NULL;
}

static void
drop_pending(struct pending *p)
{
	free(p->name);
	free(p->parents);
	free(p->lastparent);
	memset(p, 0, sizeof(*p));
}

/* --- text: Python's whitespace, lines, stripping ---------------------- */

/* str.isspace() and re's \s: U+0009..U+000D, U+001C..U+0020, U+0085... */
static int
is_pyspace(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) ||
	    c == 0x85 || c == 0xa0 || c == 0x1680 ||
	    (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
	    c == 0x202f || c == 0x205f || c == 0x3000;
}

/* The code point at s (n > 0 bytes) and its length; 0 when invalid. */
static size_t
decode(const char *s, size_t n, uint32_t *cp)
{
	const char *why;

	return str_utf8_decode(s, n, cp, &why);
}

/* Python's str.strip() on s[*from, *to). */
static void
strip(const char *s, size_t *from, size_t *to)
{
	uint32_t cp;
	size_t k, start;

	while (*from < *to && (k = decode(s + *from, *to - *from, &cp)) != 0 &&
	    is_pyspace(cp))
		*from += k;
	while (*to > *from) {
		start = *to - 1;
		while (start > *from && ((unsigned char)s[start] & 0xc0) ==
		    0x80)
			start--;
		k = decode(s + start, *to - start, &cp);
		if (k != *to - start || !is_pyspace(cp))
			break;
		*to = start;
	}
}

/* Length of str.splitlines()'s line break at s (n > 0 bytes), or 0. */
static size_t
line_break(const char *s, size_t n)
{
	unsigned char c = (unsigned char)s[0];

	if (c == '\r')
		return n > 1 && s[1] == '\n' ? 2 : 1;
	if (c == '\n')
		return 1;
	if (c == '\v' || c == '\f' || c == 0x1c || c == 0x1d || c == 0x1e)
		return 1;
	if (n > 1 && c == 0xc2 && (unsigned char)s[1] == 0x85)
		return 2;
	if (n > 2 && c == 0xe2 && (unsigned char)s[1] == 0x80 &&
	    ((unsigned char)s[2] == 0xa8 || (unsigned char)s[2] == 0xa9))
		return 3;
	return 0;
}

/* --- shlex.split(line, comments=True), posix ------------------------- */

/*
 * Splits s[0, n) into *words (caller frees each text and the array) as
 * shlex in POSIX mode with whitespace_split; returns 0, or the message of
 * shlex's ValueError.
 */
static const char *
shlex_split(const char *s, size_t n, struct word **words, size_t *nwords)
{
	size_t i, alloc = 0;
	struct word *w = NULL;
	int state = ' ', escaped = 0, c;
	const char *why = NULL;

	*words = NULL;
	*nwords = 0;
	for (i = 0;; i++) {
		c = i < n ? (unsigned char)s[i] : -1;
		if (state == '\\') {
			if (c == -1) {
				why = "No escaped character";
				goto out;
			}
			/* In "...", only \\ and \" escape. */
			if (escaped == '"' && c != '\\' && c != '"')
				buf_addch(&w[*nwords - 1].text, '\\');
			buf_addch(&w[*nwords - 1].text, c);
			state = escaped;
			continue;
		}
		if (state == '\'' || state == '"') {
			if (c == -1) {
				why = "No closing quotation";
				goto out;
			}
			if (c == state)
				state = 'a';
			else if (c == '\\' && state == '"') {
				escaped = '"';
				state = '\\';
			} else
				buf_addch(&w[*nwords - 1].text, c);
			continue;
		}
		if (c == -1)
			break;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			state = ' ';
			continue;
		}
		if (c == '#') {
			/* A comment, even inside a word. */
			break;
		}
		if (state == ' ') {
			ENVCTL_GROW(w, *nwords + 1, alloc);
			buf_init(&w[*nwords].text, 0);
			w[*nwords].at = i;
			(*nwords)++;
			state = 'a';
		}
		if (c == '\'' || c == '"') {
			state = c;
		} else if (c == '\\') {
			escaped = 'a';
			state = '\\';
		} else
			buf_addch(&w[*nwords - 1].text, c);
	}
out:
	*words = w;
	return why;
}

static void
free_words(struct word *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_release(&w[i].text);
	free(w);
}

/* --- values ------------------------------------------------------------ */

/*
 * The value of s[0, n) as the plugin's _parse_value(): a Python literal,
 * else the text; NULL after reporting what Ansible fails on.
 */
static struct ynode *
value(struct ini *in, const char *name, const char *s, size_t n, int col)
{
	struct err err = ENVCTL_ERR_INIT;
	struct ynode *v = NULL;
	struct buf why = ENVCTL_BUF_INIT;
	int r;

	r = pyvalue_parse(in->doc, s, n, in->lineno, col, &v, &err);
	switch (r) {
	case 0:
		break;
	case ENVCTL_EPARSE:
		v = ydoc_add_scalar(in->doc, ENVCTL_YSTR, s, n, in->lineno,
		    col);
		break;
	case ENVCTL_EUNSUPPORTED:
		buf_addf(&why, "'%s' in %s:%d is %s", name, in->path,
		    in->lineno, err.msg);
		v = ydoc_add_scalar(in->doc, ENVCTL_YSTR, why.data, why.len,
		    in->lineno, col);
		free(v->tag);
		v->tag = xstrdup(ENVCTL_YTAG_UNUSABLE);
		break;
	default:
		/* A TypeError Ansible does not catch: the source fails. */
		ini_error(in, r, col, "value of '%s' cannot be read as Ansible "
		    "reads it: %s", name, err.msg);
		v = NULL;
		break;
	}
	err_release(&err);
	buf_release(&why);
	return v;
}

/* A name made to live as long as the inventory. */
static const char *
keep_name(struct ini *in, const char *s, size_t n, int col)
{
	return ydoc_add_scalar(in->doc, ENVCTL_YSTR, s, n, in->lineno,
	    col)->str;
}

/* --- lines ------------------------------------------------------------- */

/* [^:\]\s]+ from s[*i, n): its length. */
static size_t
group_name_len(const char *s, size_t i, size_t n)
{
	size_t start = i, k;
	uint32_t cp;

	while (i < n && s[i] != ':' && s[i] != ']') {
		if ((k = decode(s + i, n - i, &cp)) == 0 || is_pyspace(cp))
			break;
		i += k;
	}
	return i - start;
}

/* \s*(#.*)?$ from s[i, n). */
static int
rest_is_comment(const char *s, size_t i, size_t n)
{
	size_t k;
	uint32_t cp;

	while (i < n && (k = decode(s + i, n - i, &cp)) != 0 &&
	    is_pyspace(cp))
		i += k;
	return i == n || s[i] == '#';
}

static int
is_word_byte(unsigned char c)
{
	/* \w: ASCII letters, digits, '_'; any non-ASCII taken as a letter
	 * (it only changes which error a bad section type gets). */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

/*
 * A section header: 1 with the name and type in *name, *state (or an
 * error reported and *state -1), 0 when the line is no header.
 */
static int
section(struct ini *in, const char *s, size_t n, int col, char **name,
    int *state)
{
	size_t i = 1, nl, tl = 0, ts = 0;

	*name = NULL;
	*state = -1;
	if (n == 0 || s[0] != '[')
		return 0;
	nl = group_name_len(s, i, n);
	i += nl;
	if (nl > 0 && i < n && s[i] == ':') {
		ts = ++i;
		while (i < n && is_word_byte((unsigned char)s[i]))
			i++;
		tl = i - ts;
		if (tl == 0)
			nl = 0;
	}
	if (nl == 0 || i >= n || s[i] != ']' || !rest_is_comment(s, i + 1,
	    n)) {
		if (s[n - 1] == ']') {
			ini_error(in, ENVCTL_EPARSE, col, "invalid section "
			    "entry: '%.*s' (no spaces or other invalid "
			    "characters are allowed in a section entry)",
			    (int)n, s);
			return 1;
		}
		return 0;
	}
	*name = xstrndup(s + 1, nl);
	if (tl == 0 || (tl == 5 && memcmp(s + ts, "hosts", 5) == 0))
		*state = INI_HOSTS;
	else if (tl == 8 && memcmp(s + ts, "children", 8) == 0)
		*state = INI_CHILDREN;
	else if (tl == 4 && memcmp(s + ts, "vars", 4) == 0)
		*state = INI_VARS;
	else {
		ini_error(in, ENVCTL_EPARSE, col, "section [%s:%.*s] has "
		    "unknown type: '%.*s' (hosts, children or vars)", *name,
		    (int)tl, s + ts, (int)tl, s + ts);
		free(*name);
		*name = NULL;
	}
	return 1;
}

/* Links the children waiting for group name, now defined as g. */
static void
resolve_pending(struct ini *in, const char *name, size_t g,
    const struct ynode *at)
{
	struct pending *p = find_pending(in, name);
	size_t i;

	if (p == NULL)
		return;
	if (!p->vars)
		for (i = 0; i < p->nparents; i++)
			invb_child(in->b, p->parents[i], g, at);
	drop_pending(p);
}

static size_t
start_section(struct ini *in, const char *name, int state, int col)
{
	struct ynode *at = ydoc_add_scalar(in->doc, ENVCTL_YSTR, name,
	    strlen(name), in->lineno, col);
	struct pending *p;
	size_t g;

	if (!is_known(in, name)) {
		/* [g:vars] alone does not define g; it is checked at the end
		 * unless g is waiting as a child already. */
		if (state == INI_VARS && find_pending(in, name) == NULL) {
			ENVCTL_GROW(in->pend, in->npend + 1, in->pendalloc);
			p = &in->pend[in->npend++];
			memset(p, 0, sizeof(*p));
			p->name = xstrdup(name);
			p->line = in->lineno;
			p->vars = 1;
		}
		add_known(in, name);
	}
	g = invb_group(in->b, at->str);
	if (state != INI_VARS)
		resolve_pending(in, name, g, at);
	return g;
}

static void
host_line(struct ini *in, size_t g, const char *line, size_t n, int col0)
{
	struct word *w = NULL;
	size_t nw = 0, i, nhosts, *hosts = NULL, k, eq;
	const char *why, **names = NULL;
	struct ynode **values = NULL, *at;
	char *host = NULL, *port = NULL, *pat;
	int ok = 1;

	if ((why = shlex_split(line, n, &w, &nw)) != NULL) {
		ini_error(in, ENVCTL_EPARSE, col0, "error parsing host "
		    "definition '%.*s': %s", (int)n, line, why);
		goto out;
	}
	if (nw == 0)
		goto out;
	pat = w[0].text.data;
	/* The plugin's own checks on the pattern, before any host. */
	if (hostrange_parse_address(pat, &host, &port) == 0) {
		free(host);
		host = xstrdup(pat);
	}
	{
		size_t from = 0, to = strlen(pat);

		strip(pat, &from, &to);
		if (port == NULL && to > from && pat[to - 1] == ':') {
			ini_error(in, ENVCTL_EPARSE, col0 + (int)w[0].at,
			    "invalid host pattern '%s': ending in ':' is not "
			    "allowed, this character is reserved to provide "
			    "a port", pat);
			goto out;
		}
		from = 0;
		to = strlen(host);
		strip(host, &from, &to);
		if (to - from == 3 && memcmp(host + from, "---", 3) == 0) {
			ini_error(in, ENVCTL_EPARSE, col0 + (int)w[0].at,
			    "invalid host pattern '%s': '---' is normally a "
			    "sign this is a YAML file", pat);
			goto out;
		}
	}
	names = xcalloc(nw, sizeof(*names));
	values = xcalloc(nw, sizeof(*values));
	for (i = 1; i < nw; i++) {
		const char *t = w[i].text.data;
		int col = col0 + (int)w[i].at;

		if (memchr(t, '=', w[i].text.len) == NULL) {
			ini_error(in, ENVCTL_EPARSE, col, "expected key=value "
			    "host variable assignment, got: '%s'", t);
			ok = 0;
			break;
		}
		eq = (size_t)((const char *)memchr(t, '=', w[i].text.len) - t);
		names[i] = keep_name(in, t, eq, col);
		values[i] = value(in, names[i], t + eq + 1,
		    w[i].text.len - eq - 1, col);
		if (values[i] == NULL)
			ok = 0;
	}
	if (!ok)
		goto out;
	at = ydoc_add_scalar(in->doc, ENVCTL_YSTR, pat, w[0].text.len,
	    in->lineno, col0 + (int)w[0].at);
	nhosts = invb_hosts(in->b, g, at->str, at, &hosts);
	for (k = 0; k < nhosts; k++)
		for (i = 1; i < nw; i++)
			invb_host_var(in->b, hosts[k], names[i], values[i]);
out:
	free(hosts);
	free(names);
	free(values);
	free(host);
	free(port);
	free_words(w, nw);
}

static void
vars_line(struct ini *in, size_t g, const char *line, size_t n, int col0)
{
	const char *eq = memchr(line, '=', n), *name;
	size_t kf = 0, kt, vf, vt = n;
	struct ynode *v;

	if (eq == NULL) {
		ini_error(in, ENVCTL_EPARSE, col0, "expected key=value, got: "
		    "'%.*s'", (int)n, line);
		return;
	}
	kt = (size_t)(eq - line);
	vf = kt + 1;
	strip(line, &kf, &kt);
	strip(line, &vf, &vt);
	name = keep_name(in, line + kf, kt - kf, col0 + (int)kf);
	if ((v = value(in, name, line + vf, vt - vf, col0 + (int)vf)) != NULL)
		invb_group_var(in->b, g, name, v);
}

static void
children_line(struct ini *in, size_t g, const char *parent,
    const char *line, size_t n, int col0)
{
	size_t nl = group_name_len(line, 0, n);
	struct pending *p;
	struct ynode *at;
	char *child;

	if (nl == 0 || !rest_is_comment(line, nl, n)) {
		ini_error(in, ENVCTL_EPARSE, col0, "expected group name, got: "
		    "'%.*s'", (int)n, line);
		return;
	}
	child = xstrndup(line, nl);
	at = ydoc_add_scalar(in->doc, ENVCTL_YSTR, child, nl, in->lineno,
	    col0);
	if (is_known(in, child)) {
		invb_child(in->b, g, invb_group(in->b, at->str), at);
		goto out;
	}
	if ((p = find_pending(in, child)) == NULL) {
		ENVCTL_GROW(in->pend, in->npend + 1, in->pendalloc);
		p = &in->pend[in->npend++];
		memset(p, 0, sizeof(*p));
		p->name = xstrdup(child);
		p->line = in->lineno;
	}
	ENVCTL_GROW(p->parents, p->nparents + 1, p->alloc);
	p->parents[p->nparents++] = g;
	free(p->lastparent);
	p->lastparent = xstrdup(parent);
out:
	free(child);
}

int
inv_ini_read(struct invb *b, const char *text, size_t len)
{
	struct ini in;
	size_t i = 0, start, end, brk, from, to, g = ENVCTL_INVB_UNGROUPED, off;
	int state = INI_HOSTS, st, col;
	char *group = xstrdup("ungrouped"), *name;

	memset(&in, 0, sizeof(in));
	in.b = b;
	in.path = invb_path(b);
	in.doc = ydoc_new(in.path);
	add_known(&in, "all");
	add_known(&in, "ungrouped");
	while (i < len) {
		start = i;
		while (i < len && (brk = line_break(text + i, len - i)) == 0)
			i++;
		end = i;
		i += i < len ? brk : 0;
		in.lineno++;
		from = start;
		to = end;
		strip(text, &from, &to);
		if (from == to || text[from] == '#' || text[from] == ';')
			continue;
		col = (int)(from - start) + 1;
		if (memchr(text + from, '\0', to - from) != NULL) {
			/* Names are C strings: refused, not cut short. */
			ini_error(&in, ENVCTL_EUNSUPPORTED, col, "line "
			    "contains a NUL byte");
			continue;
		}
		if (!pylit_utf8_valid(text + from, to - from, &off)) {
			off += from - start;
			ini_error(&in, ENVCTL_EUNSUPPORTED, (int)off + 1,
			    "line is not valid UTF-8 (byte 0x%02x), which "
			    "Ansible reads with surrogate escapes and envctl "
			    "cannot", (unsigned char)text[start + off]);
			continue;
		}
		if (section(&in, text + from, to - from, col, &name, &st)) {
			if (name == NULL)
				continue;
			g = start_section(&in, name, st, col);
			free(group);
			group = name;
			state = st;
			continue;
		}
		switch (state) {
		case INI_HOSTS:
			host_line(&in, g, text + from, to - from, col);
			break;
		case INI_VARS:
			vars_line(&in, g, text + from, to - from, col);
			break;
		case INI_CHILDREN:
			children_line(&in, g, group, text + from, to - from,
			    col);
			break;
		}
	}
	for (i = 0; i < in.npend; i++) {
		struct pending *p = &in.pend[i];

		if (p->name == NULL)
			continue;
		in.lineno = p->line;
		if (p->vars)
			ini_error(&in, ENVCTL_EINVALID, 0, "section [%s:vars] "
			    "not valid for undefined group: '%s'", p->name,
			    p->name);
		else
			ini_error(&in, ENVCTL_EINVALID, 0, "section "
			    "[%s:children] includes undefined group: '%s'",
			    p->lastparent, p->name);
		drop_pending(p);
	}
	invb_keep(b, in.doc);
	for (i = 0; i < in.knowncap; i++)
		free(in.known[i]);
	free(in.known);
	free(in.pend);
	free(group);
	return in.first;
}
