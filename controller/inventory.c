/* inventory.c - Ansible YAML inventories (see inventory.h). */
#include "inventory.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/yamldoc.h"

#define GROUP_ALL	0
#define GROUP_UNGROUPED	1
#define MAX_NESTING	256	/* children: levels within one definition */
#define NONE		SIZE_MAX

/* One variable assignment, or (in a host) one resolved variable. */
struct hvar {
	const char		*name;	/* the key's text */
	const struct ynode	*value;
	size_t			 seq;	/* order of assignment */
	size_t			 rank;	/* resolution: order of its source */
};

struct vars {
	struct hvar	*v;
	size_t		 n, alloc;
};

struct group {
	char		*name;
	int		 priority;	/* ansible_group_priority */
	int		 depth;
	struct vars	 vars;
	size_t		*parents, nparents;
	size_t		*children, nchildren;
	size_t		*childedge;	/* edge index of each child */
};

/* parent -> child, as written in a children: mapping (or implicit). */
struct edge {
	size_t	 parent, child;
	int	 line, col;		/* of the child's key; 0 if implicit */
	size_t	 seq;
};

/* Host h is listed in group g. */
struct member {
	size_t	 host, group;
};

/* Open-addressing table of names to indexes. */
struct nslot {
	const char	*name;
	size_t		 idx;
};

struct ntab {
	struct nslot	*slots;
	size_t		 cap, n;
};

struct inventory {
	char		*path;
	struct ydoc	*doc;
	struct host	*hosts;
	size_t		 nhosts, hostalloc;
	struct vars	*own;		/* each host's own assignments */
	struct group	*groups;
	size_t		 ngroups, groupalloc;
	struct ntab	 hosttab, grouptab;
	struct ynode	**synth;	/* nodes made here (ansible_port) */
	size_t		 nsynth, synthalloc;
	struct edge	*edges;
	size_t		 nedges, edgealloc;
	struct member	*members;
	size_t		 nmembers, memberalloc;
};

/* A connection-variable error already reported, for other hosts to join. */
struct seen {
	const struct ynode	*node;
	const char		*var;
	struct err		*e;
	size_t			 more;
};

struct loader {
	struct inventory	*inv;
	struct err		*err;
	int			 first;		/* first error code */
	int			 toomany;	/* past the host cap */
	size_t			 seq;
	struct seen		*seen;
	size_t			 nseen, seenalloc;
};

/* qsort(3), which must not see a NULL base even for no elements. */
static void
sort_array(void *base, size_t n, size_t size,
    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* --- names -------------------------------------------------------- */

static size_t
hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return (size_t)h;
}

static int
ntab_get(const struct ntab *t, const char *name, size_t *idx)
{
	size_t i;

	if (t->cap == 0)
		return 0;
	for (i = hash_str(name) & (t->cap - 1); t->slots[i].name != NULL;
	    i = (i + 1) & (t->cap - 1)) {
		if (strcmp(t->slots[i].name, name) == 0) {
			*idx = t->slots[i].idx;
			return 1;
		}
	}
	return 0;
}

static void
ntab_put(struct ntab *t, const char *name, size_t idx)
{
	struct nslot *old = t->slots;
	size_t oldcap = t->cap, i, j;

	if (2 * (t->n + 1) > t->cap) {
		t->cap = t->cap == 0 ? 64 : t->cap * 2;
		t->slots = xcalloc(t->cap, sizeof(*t->slots));
		for (j = 0; j < oldcap; j++) {
			if (old[j].name == NULL)
				continue;
			i = hash_str(old[j].name) & (t->cap - 1);
			while (t->slots[i].name != NULL)
				i = (i + 1) & (t->cap - 1);
			t->slots[i] = old[j];
		}
		free(old);
	}
	for (i = hash_str(name) & (t->cap - 1); t->slots[i].name != NULL;
	    i = (i + 1) & (t->cap - 1))
		;
	t->slots[i].name = name;
	t->slots[i].idx = idx;
	t->n++;
}

/* Levenshtein distance of two short strings; SIZE_MAX past 64 bytes. */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, prev[65], cur[65];
	size_t del, ins, sub;

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			del = prev[j] + 1;
			ins = cur[j - 1] + 1;
			sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			cur[j] = del < ins ? del : ins;
			if (sub < cur[j])
				cur[j] = sub;
		}
		memcpy(prev, cur, sizeof(prev));
	}
	return prev[lb];
}

/* --- errors -------------------------------------------------------- */

static struct err *
err_last(struct err *err)
{
	if (err == NULL || err->code == 0)
		return NULL;
	while (err->next != NULL)
		err = err->next;
	return err;
}

static void	vreport(struct loader *, int, const char *,
		    const struct ynode *, const char *, va_list)
		    __attribute__((format(printf, 5, 0)));

static void
vreport(struct loader *l, int code, const char *host, const struct ynode *at,
    const char *fmt, va_list ap)
{
	struct err *e;

	if (l->first == 0)
		l->first = code;
	err_vaddat(l->err, code, l->inv->path, at != NULL ? at->line : 0,
	    at != NULL ? at->col : 0, fmt, ap);
	if (host != NULL && (e = err_last(l->err)) != NULL && e->host == NULL)
		e->host = xstrdup(host);
}

static void __attribute__((format(printf, 4, 5)))
report(struct loader *l, int code, const struct ynode *at, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(l, code, NULL, at, fmt, ap);
	va_end(ap);
}

/* --- building ------------------------------------------------------ */

static void
vars_add(struct loader *l, struct vars *vs, const char *name,
    const struct ynode *value)
{
	ENVCTL_GROW(vs->v, vs->n + 1, vs->alloc);
	vs->v[vs->n].name = name;
	vs->v[vs->n].value = value;
	vs->v[vs->n].seq = l->seq++;
	vs->v[vs->n].rank = 0;
	vs->n++;
}

static size_t
group_add(struct inventory *inv, const char *name)
{
	struct group *g;
	size_t idx;

	if (ntab_get(&inv->grouptab, name, &idx))
		return idx;
	ENVCTL_GROW(inv->groups, inv->ngroups + 1, inv->groupalloc);
	g = &inv->groups[inv->ngroups];
	memset(g, 0, sizeof(*g));
	g->name = xstrdup(name);
	g->priority = 1;
	/* The table borrows the name; the groups array may move, not it. */
	ntab_put(&inv->grouptab, g->name, inv->ngroups);
	return inv->ngroups++;
}

static void
edge_add(struct inventory *inv, size_t parent, size_t child,
    const struct ynode *at)
{
	struct edge *e;

	ENVCTL_GROW(inv->edges, inv->nedges + 1, inv->edgealloc);
	e = &inv->edges[inv->nedges];
	e->parent = parent;
	e->child = child;
	e->line = at != NULL ? at->line : 0;
	e->col = at != NULL ? at->col : 0;
	e->seq = inv->nedges++;
}

/* Returns the host's index, adding it (and *isnew = 1) when new. */
static size_t
host_add(struct inventory *inv, const char *name, int *isnew)
{
	struct host *h;
	size_t idx, before;

	*isnew = 0;
	if (ntab_get(&inv->hosttab, name, &idx))
		return idx;
	before = inv->hostalloc;
	ENVCTL_GROW(inv->hosts, inv->nhosts + 1, inv->hostalloc);
	if (inv->hostalloc != before)
		inv->own = xreallocarray(inv->own, inv->hostalloc,
		    sizeof(*inv->own));
	h = &inv->hosts[inv->nhosts];
	memset(h, 0, sizeof(*h));
	memset(&inv->own[inv->nhosts], 0, sizeof(*inv->own));
	h->name = xstrdup(name);
	h->index = inv->nhosts;
	h->inv = inv;
	h->file = inv->path;
	ntab_put(&inv->hosttab, h->name, inv->nhosts);
	*isnew = 1;
	return inv->nhosts++;
}

static void
member_add(struct inventory *inv, size_t host, size_t group)
{
	ENVCTL_GROW(inv->members, inv->nmembers + 1, inv->memberalloc);
	inv->members[inv->nmembers].host = host;
	inv->members[inv->nmembers].group = group;
	inv->nmembers++;
}

static int
is_null(const struct ynode *n)
{
	return n == NULL || (n->type == ENVCTL_YSCALAR &&
	    yscalar_kind(n) == ENVCTL_YNULL);
}

static int
is_string(const struct ynode *n)
{
	return n != NULL && n->type == ENVCTL_YSCALAR &&
	    yscalar_kind(n) == ENVCTL_YSTR;
}

/* Appends " 'text'" for a scalar, so messages show what was found. */
static const char *
quoted(const struct ynode *v, struct buf *b)
{
	buf_reset(b);
	if (v->type == ENVCTL_YSCALAR && yscalar_kind(v) != ENVCTL_YNULL)
		buf_addf(b, " '%s'", v->str);
	return b->data;
}

/*
 * Checks that key names a group, host or variable: a YAML string (Ansible
 * refuses other types), not empty, without NUL bytes.
 */
static int
check_name(struct loader *l, const struct ynode *key, const char *what,
    const char *group)
{
	const char *in = group != NULL ? " in group '" : "";
	const char *g = group != NULL ? group : "";
	const char *close = group != NULL ? "'" : "";

	if (!is_string(key)) {
		report(l, ENVCTL_EINVALID, key, "%s '%s'%s%s%s must be a "
		    "string, got %s (quote it)", what, key->str, in, g, close,
		    ynode_describe(key));
		return -1;
	}
	if (key->len == 0) {
		report(l, ENVCTL_EINVALID, key, "empty %s%s%s%s", what, in, g,
		    close);
		return -1;
	}
	if (strlen(key->str) != key->len) {
		report(l, ENVCTL_EINVALID, key, "%s '%s'%s%s%s contains a NUL "
		    "byte", what, key->str, in, g, close);
		return -1;
	}
	return 0;
}

/* Reads a value as Python's int() would, for ansible_group_priority. */
static int
python_int(const struct ynode *n, long long *out)
{
	const char *p, *end;
	long long v = 0;
	double d;
	int b, neg = 0, digits = 0;

	if (n == NULL || n->type != ENVCTL_YSCALAR)
		return -1;
	switch (yscalar_kind(n)) {
	case ENVCTL_YINT:
		return yscalar_int(n, out) == 0 ? 0 : -1;
	case ENVCTL_YBOOL:
		if (yscalar_bool(n, &b) != 0)
			return -1;
		*out = b;
		return 0;
	case ENVCTL_YFLOAT:
		d = strtod(n->str, NULL);
		if (!isfinite(d) || d >= 9e18 || d <= -9e18 ||
		    strchr(n->str, ':') != NULL || strchr(n->str, '_') != NULL)
			return -1;
		*out = (long long)d;
		return 0;
	case ENVCTL_YNULL:
		return -1;
	case ENVCTL_YSTR:
		break;
	}
	/* int(" -12 "): blanks around, a sign, digits (single '_' between). */
	p = n->str;
	end = n->str + n->len;
	while (p < end && strchr(" \t\n\r\f\v", *p) != NULL)
		p++;
	while (end > p && strchr(" \t\n\r\f\v", end[-1]) != NULL)
		end--;
	if (p < end && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	for (; p < end; p++) {
		if (*p == '_' && digits > 0 && p + 1 < end && p[1] != '_')
			continue;
		if (*p < '0' || *p > '9' || v > (LLONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*p - '0');
		digits++;
	}
	if (digits == 0)
		return -1;
	*out = neg ? -v : v;
	return 0;
}

/* --- host ranges (Ansible's expand_hostname_range) -------------------- */

static const char letters[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

struct hrange {
	const char		*lit;	/* literal text before the range */
	size_t			 litlen;
	int			 alpha;
	unsigned long long	 beg, end, step, count;
	int			 width;	/* zero padding, 0 for none */
};

static int
parse_number(const char *s, size_t len, unsigned long long *v)
{
	size_t i;

	*v = 0;
	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || *v > 100000000000000000ull)
			return -1;
		*v = *v * 10 + (unsigned long long)(s[i] - '0');
	}
	return 0;
}

/* Parses "beg:end" or "beg:end:step" (between brackets) into r. */
static int
parse_range(struct loader *l, const struct ynode *at, const char *pattern,
    const char *s, size_t len, struct hrange *r)
{
	const char *c1, *c2, *beg = s, *end, *step = NULL;
	size_t blen, elen, slen = 0;
	const char *lb, *le;

	c1 = memchr(s, ':', len);
	if (c1 == NULL)
		goto shape;
	end = c1 + 1;
	c2 = memchr(end, ':', len - (size_t)(end - s));
	blen = (size_t)(c1 - s);
	if (c2 != NULL) {
		elen = (size_t)(c2 - end);
		step = c2 + 1;
		slen = len - (size_t)(step - s);
		if (memchr(step, ':', slen) != NULL)
			goto shape;
	} else
		elen = len - (size_t)(end - s);
	if (blen == 0) {
		beg = "0";	/* Ansible: an empty start is 0 */
		blen = 1;
	}
	if (elen == 0) {
		report(l, ENVCTL_EINVALID, at, "invalid host range in '%s': "
		    "missing end", pattern);
		return -1;
	}
	r->step = 1;
	if (step != NULL && (parse_number(step, slen, &r->step) != 0 ||
	    r->step == 0)) {
		report(l, ENVCTL_EINVALID, at, "invalid host range in '%s': "
		    "step '%.*s' is not a positive integer", pattern,
		    (int)slen, step);
		return -1;
	}
	if (blen == 1 && elen == 1 && (lb = strchr(letters, *beg)) != NULL &&
	    *beg != '\0' && (le = strchr(letters, *end)) != NULL &&
	    *end != '\0') {
		r->alpha = 1;
		r->beg = (unsigned long long)(lb - letters);
		r->end = (unsigned long long)(le - letters);
	} else if (parse_number(beg, blen, &r->beg) != 0 ||
	    parse_number(end, elen, &r->end) != 0) {
		report(l, ENVCTL_EINVALID, at, "invalid host range in '%s': "
		    "start '%.*s' and end '%.*s' must be both numbers or both "
		    "single letters", pattern, (int)blen, beg, (int)elen, end);
		return -1;
	} else if (blen > 1 && beg[0] == '0') {
		if (blen != elen) {
			report(l, ENVCTL_EINVALID, at, "invalid host range in "
			    "'%s': zero-padded start '%.*s' and end '%.*s' "
			    "differ in width", pattern, (int)blen, beg,
			    (int)elen, end);
			return -1;
		}
		r->width = (int)blen;
	}
	if (r->beg > r->end) {
		report(l, ENVCTL_EINVALID, at, "invalid host range in '%s': "
		    "start '%.*s' is after end '%.*s'", pattern, (int)blen,
		    beg, (int)elen, end);
		return -1;
	}
	r->count = (r->end - r->beg) / r->step + 1;
	return 0;
shape:
	report(l, ENVCTL_EINVALID, at, "invalid host range in '%s': expected "
	    "[start:end] or [start:end:step]", pattern);
	return -1;
}

/*
 * Expands the ranges of pattern into *names (NULL-free array, caller frees
 * each and the array).  The first range varies slowest, as in Ansible.
 */
static int
expand_ranges(struct loader *l, const struct ynode *at, const char *pattern,
    size_t room, char ***names, size_t *nnames)
{
	struct hrange *rs = NULL;
	size_t nr = 0, ralloc = 0, i, total = 1;
	unsigned long long *pos = NULL, v;
	const char *p = pattern, *open, *close, *tail;
	struct buf b = ENVCTL_BUF_INIT;
	int r = -1;

	*names = NULL;
	*nnames = 0;
	while ((open = strchr(p, '[')) != NULL) {
		close = strchr(p, ']');
		if (close == NULL || close < open) {
			report(l, ENVCTL_EINVALID, at, "invalid host range in "
			    "'%s': %s", pattern, close == NULL ?
			    "unclosed '['" : "']' before '['");
			goto out;
		}
		ENVCTL_GROW(rs, nr + 1, ralloc);
		memset(&rs[nr], 0, sizeof(*rs));
		rs[nr].lit = p;
		rs[nr].litlen = (size_t)(open - p);
		if (parse_range(l, at, pattern, open + 1,
		    (size_t)(close - open - 1), &rs[nr]) != 0)
			goto out;
		if (rs[nr].count > room || total > room / rs[nr].count) {
			report(l, ENVCTL_ETOOBIG, at, "host pattern '%s' "
			    "expands to more than %u hosts", pattern,
			    ENVCTL_INVENTORY_MAX_HOSTS);
			goto out;
		}
		total *= rs[nr].count;
		nr++;
		p = close + 1;
	}
	tail = p;
	*names = xcalloc(total, sizeof(**names));
	pos = xcalloc(nr + 1, sizeof(*pos));
	for (*nnames = 0; *nnames < total; (*nnames)++) {
		buf_reset(&b);
		for (i = 0; i < nr; i++) {
			buf_add(&b, rs[i].lit, rs[i].litlen);
			v = rs[i].beg + pos[i] * rs[i].step;
			if (rs[i].alpha)
				buf_addch(&b, letters[v]);
			else
				buf_addf(&b, "%0*llu", rs[i].width, v);
		}
		buf_addstr(&b, tail);
		(*names)[*nnames] = xstrdup(b.data);
		/* Odometer: the last range turns fastest. */
		for (i = nr; i-- > 0;) {
			if (++pos[i] < rs[i].count)
				break;
			pos[i] = 0;
		}
	}
	r = 0;
out:
	free(rs);
	free(pos);
	buf_release(&b);
	return r;
}

/* --- addresses (Ansible's parse_address) ----------------------------- */

static int
is_word(int c)
{
	/* Python's \w with re.UNICODE; any non-ASCII byte is taken as one. */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || (unsigned char)c >= 0x80;
}

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Length of a [x:y] or [x:y:z] range at s (letters allowed), else 0. */
static size_t
range_len(const char *s, int alnum)
{
	const char *p = s + 1;

	if (*s != '[')
		return 0;
	if (alnum && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) &&
	    p[1] == ':' && ((p[2] >= 'a' && p[2] <= 'z') ||
	    (p[2] >= 'A' && p[2] <= 'Z')))
		p += 3;
	else {
		if (!is_digit(*p))
			return 0;
		while (is_digit(*p))
			p++;
		if (*p++ != ':' || !is_digit(*p))
			return 0;
		while (is_digit(*p))
			p++;
	}
	if (*p == ':') {
		if (!is_digit(*++p))
			return 0;
		while (is_digit(*p))
			p++;
	}
	return *p == ']' ? (size_t)(p + 1 - s) : 0;
}

/* A hostname of labels made of \w, '-' and ranges, not ending in _ or -. */
static int
is_hostname(const char *s, size_t len)
{
	size_t i = 0, n;
	int start = 1;
	char last = 0;

	if (len == 0)
		return 0;
	while (i < len) {
		if (s[i] == '[' && (n = range_len(s + i, 1)) > 0 &&
		    i + n <= len) {
			i += n;
			last = ']';
		} else if (is_word(s[i]) || (s[i] == '-' && !start)) {
			last = s[i++];
		} else if (s[i] == '.' && !start && last != '_' &&
		    last != '-') {
			i++;
			start = 1;
			continue;
		} else
			return 0;
		start = 0;
	}
	return !start && last != '_' && last != '-';
}

/* One IPv6 group: 1-4 hex digits or a numeric range; returns its length. */
static size_t
v6_group(const char *s)
{
	size_t n = 0;

	if (*s == '[')
		return range_len(s, 0);
	while (n < 4 && ((s[n] >= '0' && s[n] <= '9') ||
	    (s[n] >= 'a' && s[n] <= 'f') || (s[n] >= 'A' && s[n] <= 'F')))
		n++;
	return n;
}

/* An IPv4 dotted quad (components 0..255 or ranges), at s for len bytes. */
static int
is_v4(const char *s, size_t len)
{
	size_t i = 0, n, parts = 0;
	unsigned v;

	while (i < len) {
		if (s[i] == '[') {
			if ((n = range_len(s + i, 0)) == 0)
				return 0;
			i += n;
		} else {
			for (v = 0, n = 0; i < len && is_digit(s[i]) && n < 4;
			    n++)
				v = v * 10 + (unsigned)(s[i++] - '0');
			if (n == 0 || n > 3 || v > 255)
				return 0;
		}
		if (++parts == 4)
			return i == len;
		if (i >= len || s[i++] != '.')
			return 0;
	}
	return 0;
}

/*
 * An IPv6 address as Ansible's pattern spells it: eight groups, or fewer
 * around one "::", or an IPv4-in-IPv6 form.
 */
static int
is_v6(const char *s, size_t len)
{
	size_t i = 0, n, before = 0, after = 0;
	int gap = 0;
	const char *dot;

	dot = memchr(s, '.', len);
	if (dot != NULL) {
		/* ::a.b.c.d, ::ffff:a.b.c.d, 0:0:0:0:0:0:a.b.c.d ... */
		const char *v4 = dot;

		while (v4 > s && v4[-1] != ':')
			v4--;
		if (!is_v4(v4, len - (size_t)(v4 - s)))
			return 0;
		n = (size_t)(v4 - s);
		return (n == 2 && strncmp(s, "::", 2) == 0) ||
		    (n == 7 && strncasecmp(s, "::ffff:", 7) == 0) ||
		    (n == 12 && strncmp(s, "0:0:0:0:0:0:", 12) == 0) ||
		    (n == 15 && strncasecmp(s, "0:0:0:0:0:ffff:", 15) == 0);
	}
	if (len >= 2 && s[0] == ':' && s[1] == ':') {
		gap = 1;
		i = 2;
	}
	while (i < len) {
		if ((n = v6_group(s + i)) == 0 || i + n > len)
			return 0;
		i += n;
		if (gap)
			after++;
		else
			before++;
		if (i == len)
			break;
		if (s[i++] != ':')
			return 0;
		if (i < len && s[i] == ':') {
			if (gap)
				return 0;
			gap = 1;
			i++;
		}
	}
	if (!gap)
		return before == 8;
	if (before > 0 && after > 0)
		return before + after <= 7;
	return before + after <= 6;
}

int
inventory_parse_address(const char *s, char **host, char **port)
{
	size_t len = strlen(s), i, hostlen = len, close;
	const char *h = s, *colon = NULL;

	*host = NULL;
	*port = NULL;
	/* [host]:port, where host is validated below. */
	if (len > 3 && s[0] == '[') {
		for (close = len; close-- > 1;) {
			if (s[close] == ']' && s[close + 1] == ':' &&
			    close + 2 < len &&
			    strspn(s + close + 2, "0123456789") ==
			    len - close - 2)
				break;
		}
		if (close > 1) {
			h = s + 1;
			hostlen = close - 1;
			colon = s + close + 1;
		}
	}
	/* host:port, skipping over complete [...] groups. */
	if (colon == NULL) {
		for (i = 0; i < len;) {
			if (s[i] == '[' && memchr(s + i, ']', len - i) != NULL)
				i = (size_t)((const char *)memchr(s + i, ']',
				    len - i) - s) + 1;
			else if (s[i] == ':' || s[i] == '[' || s[i] == ']')
				break;
			else
				i++;
		}
		if (i < len && s[i] == ':' && i + 1 < len &&
		    strspn(s + i + 1, "0123456789") == len - i - 1) {
			hostlen = i;
			colon = s + i;
		}
	}
	if (!is_v4(h, hostlen) && !is_v6(h, hostlen) &&
	    !is_hostname(h, hostlen))
		return 0;
	*host = xstrndup(h, hostlen);
	if (colon != NULL)
		*port = xstrdup(colon + 1);
	return 1;
}

/* --- the YAML structure --------------------------------------------- */

static size_t parse_group(struct loader *, const struct ynode *,
    const struct ynode *, int);

static void
parse_vars(struct loader *l, size_t g, const struct ynode *v)
{
	struct inventory *inv = l->inv;
	const struct ynode *k, *val;
	struct buf q = ENVCTL_BUF_INIT;
	long long prio;
	size_t i;

	if (v->type != ENVCTL_YMAP) {
		report(l, ENVCTL_EINVALID, v, "'vars' of group '%s' must be a "
		    "mapping of variables, got %s", inv->groups[g].name,
		    ynode_describe(v));
		return;
	}
	for (i = 0; i < v->npairs; i++) {
		k = v->pairs[i].key;
		val = v->pairs[i].value;
		if (check_name(l, k, "variable", inv->groups[g].name) != 0)
			continue;
		if (strcmp(k->str, "ansible_group_priority") != 0) {
			vars_add(l, &inv->groups[g].vars, k->str, val);
			continue;
		}
		/* Ansible consumes it: int(value), not a variable. */
		if (python_int(val, &prio) != 0 || prio < INT_MIN ||
		    prio > INT_MAX) {
			report(l, ENVCTL_EINVALID, val,
			    "ansible_group_priority of group '%s' must be an "
			    "integer, got %s%s",
			    inv->groups[g].name, ynode_describe(val),
			    quoted(val, &q));
			continue;
		}
		inv->groups[g].priority = (int)prio;
	}
	buf_release(&q);
}

static void
parse_children(struct loader *l, size_t g, const struct ynode *v, int nest)
{
	struct inventory *inv = l->inv;
	size_t i, child;

	if (is_string(v)) {
		/* Ansible reads "children: name" as {name: null}. */
		if ((child = parse_group(l, v, NULL, nest + 1)) != NONE)
			edge_add(inv, g, child, v);
		return;
	}
	if (v->type != ENVCTL_YMAP) {
		report(l, ENVCTL_EINVALID, v, "'children' of group '%s' must "
		    "be a mapping of group names, got %s", inv->groups[g].name,
		    ynode_describe(v));
		return;
	}
	for (i = 0; i < v->npairs; i++) {
		child = parse_group(l, v->pairs[i].key, v->pairs[i].value,
		    nest + 1);
		if (child != NONE)
			edge_add(inv, g, child, v->pairs[i].key);
	}
}

/* A usable variable name: a non-empty YAML string without NUL bytes. */
static int
var_name_ok(const struct ynode *key)
{
	return is_string(key) && key->len > 0 && strlen(key->str) == key->len;
}

/* One entry of hosts:, key a host name or pattern, val its variables. */
static void
parse_host(struct loader *l, size_t g, const struct ynode *key,
    const struct ynode *val)
{
	struct inventory *inv = l->inv;
	const char *gname = inv->groups[g].name;
	char *pattern = NULL, *port = NULL, **names = NULL, *digits;
	size_t i, j, nnames = 0, h;
	struct ynode *pn;
	int isnew;

	if (check_name(l, key, "host name", gname) != 0)
		return;
	if (val != NULL && !is_null(val) && val->type != ENVCTL_YMAP) {
		report(l, ENVCTL_EINVALID, val, "variables of host '%s' in "
		    "group '%s' must be a mapping, got %s", key->str, gname,
		    ynode_describe(val));
		return;
	}
	for (j = 0; val != NULL && val->type == ENVCTL_YMAP &&
	    j < val->npairs; j++)
		(void)check_name(l, val->pairs[j].key, "variable", gname);
	if (!inventory_parse_address(key->str, &pattern, &port))
		pattern = xstrdup(key->str);	/* taken as it is */
	if (strchr(pattern, '[') != NULL) {
		if (expand_ranges(l, key, pattern, ENVCTL_INVENTORY_MAX_HOSTS,
		    &names, &nnames) != 0)
			goto out;
	} else {
		names = xcalloc(1, sizeof(*names));
		names[0] = pattern;
		pattern = NULL;
		nnames = 1;
	}
	for (i = 0; i < nnames; i++) {
		if (inv->nhosts >= ENVCTL_INVENTORY_MAX_HOSTS &&
		    !ntab_get(&inv->hosttab, names[i], &h)) {
			if (!l->toomany)
				report(l, ENVCTL_ETOOBIG, key, "inventory has "
				    "more than %u hosts",
				    ENVCTL_INVENTORY_MAX_HOSTS);
			l->toomany = 1;
			break;
		}
		h = host_add(inv, names[i], &isnew);
		member_add(inv, h, g);
		if (isnew && port != NULL) {
			/* As Ansible's Host(name, port): set when created. */
			digits = port + strspn(port, "0");
			if (*digits == '\0')
				digits--;
			pn = xcalloc(1, sizeof(*pn));
			pn->type = ENVCTL_YSCALAR;
			pn->path = inv->path;
			pn->line = key->line;
			pn->col = key->col;
			pn->str = xstrdup(digits);
			pn->len = strlen(pn->str);
			pn->plain = 1;
			ENVCTL_GROW(inv->synth, inv->nsynth + 1,
			    inv->synthalloc);
			inv->synth[inv->nsynth++] = pn;
			vars_add(l, &inv->own[h], "ansible_port", pn);
		}
		for (j = 0; val != NULL && val->type == ENVCTL_YMAP &&
		    j < val->npairs; j++)
			if (var_name_ok(val->pairs[j].key))
				vars_add(l, &inv->own[h],
				    val->pairs[j].key->str,
				    val->pairs[j].value);
	}
out:
	for (i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(pattern);
	free(port);
}

static void
parse_hosts(struct loader *l, size_t g, const struct ynode *v)
{
	size_t i;

	if (is_string(v)) {
		/* Ansible reads "hosts: name" as {name: null}. */
		parse_host(l, g, v, NULL);
		return;
	}
	if (v->type != ENVCTL_YMAP) {
		report(l, ENVCTL_EINVALID, v, "'hosts' of group '%s' must be a "
		    "mapping of host names (each 'name:' on its own line), "
		    "got %s", l->inv->groups[g].name, ynode_describe(v));
		return;
	}
	for (i = 0; i < v->npairs; i++)
		parse_host(l, g, v->pairs[i].key, v->pairs[i].value);
}

static void
unknown_key(struct loader *l, size_t g, const struct ynode *k)
{
	static const char *const valid[] = { "hosts", "vars", "children" };
	const char *best = NULL;
	size_t i, d, bestd = SIZE_MAX;

	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		d = edit_distance(k->str, valid[i]);
		if (d < bestd && d <= strlen(valid[i]) / 2 && d < k->len) {
			bestd = d;
			best = valid[i];
		}
	}
	if (best != NULL)
		report(l, ENVCTL_EINVALID, k, "unknown key '%s' in group '%s' "
		    "(expected hosts, vars or children; did you mean '%s'?)",
		    k->str, l->inv->groups[g].name, best);
	else
		report(l, ENVCTL_EINVALID, k, "unknown key '%s' in group '%s' "
		    "(expected hosts, vars or children)", k->str,
		    l->inv->groups[g].name);
}

/*
 * Defines (or adds to) the group named by key with body val (NULL or null
 * for none).  Returns its index, or NONE when the name is unusable.
 */
static size_t
parse_group(struct loader *l, const struct ynode *key, const struct ynode *val,
    int nest)
{
	struct inventory *inv = l->inv;
	const struct ynode *k, *v;
	size_t g, i;

	if (check_name(l, key, "group name", NULL) != 0)
		return NONE;
	g = group_add(inv, key->str);
	if (is_null(val))
		return g;
	if (val->type != ENVCTL_YMAP) {
		report(l, ENVCTL_EINVALID, val, "group '%s' must be a mapping "
		    "(with hosts, vars or children) or empty, got %s",
		    key->str, ynode_describe(val));
		return g;
	}
	if (nest > MAX_NESTING) {
		report(l, ENVCTL_ETOOBIG, key, "group '%s' is nested more than "
		    "%d levels deep", key->str, MAX_NESTING);
		return g;
	}
	for (i = 0; i < val->npairs; i++) {
		k = val->pairs[i].key;
		v = val->pairs[i].value;
		if (!is_string(k) || (strcmp(k->str, "hosts") != 0 &&
		    strcmp(k->str, "vars") != 0 &&
		    strcmp(k->str, "children") != 0)) {
			unknown_key(l, g, k);
			continue;
		}
		if (is_null(v))
			continue;	/* "hosts:" with nothing: allowed */
		if (strcmp(k->str, "vars") == 0)
			parse_vars(l, g, v);
		else if (strcmp(k->str, "hosts") == 0)
			parse_hosts(l, g, v);
		else if (g == GROUP_UNGROUPED)
			report(l, ENVCTL_EINVALID, k, "group 'ungrouped' "
			    "cannot have children");
		else
			parse_children(l, g, v, nest);
	}
	return g;
}

static void
parse_top(struct loader *l, const struct ynode *root)
{
	const struct ynode *plugin;
	size_t i;

	if (is_null(root))
		return;		/* "no hosts" below */
	if (root->type != ENVCTL_YMAP) {
		report(l, ENVCTL_EINVALID, root, "expected a mapping of group "
		    "names at the top (such as 'all:'), got %s",
		    ynode_describe(root));
		return;
	}
	plugin = ymap_get(root, "plugin");
	if (plugin != NULL && !is_null(plugin)) {
		report(l, ENVCTL_EUNSUPPORTED, plugin, "inventory plugin "
		    "configuration ('plugin: %s') is not supported; envctl "
		    "reads YAML inventories", plugin->type == ENVCTL_YSCALAR ?
		    plugin->str : "...");
		return;
	}
	for (i = 0; i < root->npairs; i++)
		parse_group(l, root->pairs[i].key, root->pairs[i].value, 0);
}

/* --- groups: graph, cycles, depth ------------------------------------ */

static int
edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->child != y->child)
		return x->child < y->child ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
edge_seqcmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Deduplicates the edges (keeping the first of each) and links groups. */
static void
link_groups(struct inventory *inv)
{
	size_t i, n, *hasparent;
	struct edge *e;
	struct group *g;

	hasparent = xcalloc(inv->ngroups, sizeof(*hasparent));
	for (i = 0; i < inv->nedges; i++)
		hasparent[inv->edges[i].child] = 1;
	/* As Ansible's reconcile_inventory: orphans become children of all. */
	for (i = 1; i < inv->ngroups; i++)
		if (!hasparent[i])
			edge_add(inv, GROUP_ALL, i, NULL);
	free(hasparent);
	sort_array(inv->edges, inv->nedges, sizeof(*inv->edges), edge_cmp);
	for (i = n = 0; i < inv->nedges; i++) {
		if (n > 0 && inv->edges[n - 1].parent == inv->edges[i].parent &&
		    inv->edges[n - 1].child == inv->edges[i].child)
			continue;
		inv->edges[n++] = inv->edges[i];
	}
	inv->nedges = n;
	sort_array(inv->edges, inv->nedges, sizeof(*inv->edges), edge_seqcmp);
	for (i = 0; i < inv->nedges; i++) {
		e = &inv->edges[i];
		inv->groups[e->parent].nchildren++;
		inv->groups[e->child].nparents++;
	}
	for (i = 0; i < inv->ngroups; i++) {
		g = &inv->groups[i];
		g->children = xcalloc(g->nchildren + 1, sizeof(size_t));
		g->childedge = xcalloc(g->nchildren + 1, sizeof(size_t));
		g->parents = xcalloc(g->nparents + 1, sizeof(size_t));
		g->nchildren = g->nparents = 0;
	}
	for (i = 0; i < inv->nedges; i++) {
		e = &inv->edges[i];
		g = &inv->groups[e->parent];
		g->childedge[g->nchildren] = i;
		g->children[g->nchildren++] = e->child;
		g = &inv->groups[e->child];
		g->parents[g->nparents++] = e->parent;
	}
}

/* Reports the cycle closed by edge e: "a -> b -> a", from the DFS stack. */
static void
report_cycle(struct loader *l, const size_t *stack, size_t depth,
    const struct edge *e)
{
	struct inventory *inv = l->inv;
	struct buf path = ENVCTL_BUF_INIT;
	struct ynode at;
	size_t i = depth;

	while (i > 0 && stack[i - 1] != e->child)
		i--;
	for (i = i > 0 ? i - 1 : 0; i < depth; i++)
		buf_addf(&path, "%s -> ", inv->groups[stack[i]].name);
	buf_addstr(&path, inv->groups[e->child].name);
	memset(&at, 0, sizeof(at));
	at.line = e->line;
	at.col = e->col;
	report(l, ENVCTL_EINVALID, &at, "group cycle: %s", path.data);
	buf_release(&path);
}

/*
 * Computes each group's depth (all = 0, a child max(parent + 1)) in
 * topological order; groups left over sit on or below a cycle, which a
 * depth-first search then names.  Returns -1 when there is a cycle.
 */
static int
order_groups(struct loader *l)
{
	struct inventory *inv = l->inv;
	size_t n = inv->ngroups, *indeg, *queue, head = 0, tail = 0, i, c;
	size_t *stack, *next, depth, u, v;
	unsigned char *color;
	struct group *g;
	int r = 0;

	indeg = xcalloc(n, sizeof(*indeg));
	queue = xcalloc(n, sizeof(*queue));
	for (i = 0; i < n; i++)
		indeg[i] = inv->groups[i].nparents;
	for (i = 0; i < n; i++)
		if (indeg[i] == 0)
			queue[tail++] = i;
	while (head < tail) {
		g = &inv->groups[queue[head++]];
		for (c = 0; c < g->nchildren; c++) {
			v = g->children[c];
			if (inv->groups[v].depth < g->depth + 1)
				inv->groups[v].depth = g->depth + 1;
			if (--indeg[v] == 0)
				queue[tail++] = v;
		}
	}
	if (tail < n) {
		/* White 0, grey 1 (on the stack), black 2. */
		color = xcalloc(n, 1);
		stack = xcalloc(n + 1, sizeof(*stack));
		next = xcalloc(n + 1, sizeof(*next));
		for (i = 0; i < n; i++)
			if (indeg[i] == 0)
				color[i] = 2;
		for (i = 0; i < n; i++) {
			if (color[i] != 0)
				continue;
			depth = 0;
			stack[depth] = i;
			next[depth++] = 0;
			color[i] = 1;
			while (depth > 0) {
				u = stack[depth - 1];
				g = &inv->groups[u];
				if (next[depth - 1] == g->nchildren) {
					color[u] = 2;
					depth--;
					continue;
				}
				c = next[depth - 1]++;
				v = g->children[c];
				if (color[v] == 1)
					report_cycle(l, stack, depth,
					    &inv->edges[g->childedge[c]]);
				else if (color[v] == 0) {
					color[v] = 1;
					stack[depth] = v;
					next[depth++] = 0;
				}
			}
		}
		free(color);
		free(stack);
		free(next);
		r = -1;
	}
	free(indeg);
	free(queue);
	return r;
}

/* --- variables -------------------------------------------------------- */

static int
hvar_cmp(const void *a, const void *b)
{
	const struct hvar *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Ansible's sort_groups: (depth, priority, name) ascending. */
static int
group_order(const struct group *gs, size_t a, size_t b)
{
	const struct group *x = &gs[a], *y = &gs[b];

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
strp_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int
member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

/* Inserts group index gi into sorted (by group_order) list gl of n. */
static void
insert_sorted(const struct group *gs, size_t *gl, size_t n, size_t gi)
{
	size_t i = n;

	while (i > 0 && group_order(gs, gl[i - 1], gi) > 0) {
		gl[i] = gl[i - 1];
		i--;
	}
	gl[i] = gi;
}

static void
append_vars(struct vars *dst, const struct vars *src, size_t rank)
{
	size_t i;

	for (i = 0; i < src->n; i++) {
		ENVCTL_GROW(dst->v, dst->n + 1, dst->alloc);
		dst->v[dst->n] = src->v[i];
		dst->v[dst->n].rank = rank;
		dst->n++;
	}
}

/*
 * Gives every host its groups (Ansible's group_names) and its variables:
 * all's, then its groups' in sort_groups order, then its own, later ones
 * replacing earlier ones of the same name.
 */
static void
resolve_hosts(struct inventory *inv)
{
	size_t nh = inv->nhosts, ng = inv->ngroups, i, j, k, m, q, n, head;
	size_t *stamp, *gl, *queue;
	struct member *mb = inv->members;
	struct vars all = { NULL, 0, 0 };
	struct host *h;
	struct group *g;
	int ungrouped;

	sort_array(mb, inv->nmembers, sizeof(*mb), member_cmp);
	stamp = xcalloc(ng, sizeof(*stamp));
	gl = xcalloc(ng + 1, sizeof(*gl));
	queue = xcalloc(ng + 1, sizeof(*queue));
	for (i = 0, m = 0; i < nh; i++) {
		h = &inv->hosts[i];
		/* Direct groups of host i are mb[m .. j). */
		for (j = m; j < inv->nmembers && mb[j].host == i; j++)
			;
		ungrouped = 1;
		for (k = m; k < j; k++)
			if (mb[k].group != GROUP_ALL &&
			    mb[k].group != GROUP_UNGROUPED)
				ungrouped = 0;
		n = 0;
		head = 0;
		for (k = m; k < j; k++) {
			q = mb[k].group;
			if (q == GROUP_ALL || (!ungrouped &&
			    q == GROUP_UNGROUPED) || stamp[q] == i + 1)
				continue;
			stamp[q] = i + 1;
			queue[n++] = q;
		}
		if (ungrouped && stamp[GROUP_UNGROUPED] != i + 1) {
			stamp[GROUP_UNGROUPED] = i + 1;
			queue[n++] = GROUP_UNGROUPED;
		}
		/* Ancestors, breadth first. */
		while (head < n) {
			g = &inv->groups[queue[head++]];
			for (k = 0; k < g->nparents; k++) {
				q = g->parents[k];
				if (q == GROUP_ALL || stamp[q] == i + 1)
					continue;
				stamp[q] = i + 1;
				queue[n++] = q;
			}
		}
		m = j;
		h->groups = xcalloc(n + 1, sizeof(*h->groups));
		for (k = 0; k < n; k++) {
			insert_sorted(inv->groups, gl, k, queue[k]);
			h->groups[k] = inv->groups[queue[k]].name;
		}
		h->ngroups = n;
		sort_array(h->groups, n, sizeof(*h->groups), strp_cmp);

		all.n = 0;
		append_vars(&all, &inv->groups[GROUP_ALL].vars, 0);
		for (k = 0; k < n; k++)
			append_vars(&all, &inv->groups[gl[k]].vars, k + 1);
		append_vars(&all, &inv->own[i], n + 1);
		sort_array(all.v, all.n, sizeof(*all.v), hvar_cmp);
		h->vars = xcalloc(all.n + 1, sizeof(*h->vars));
		for (k = 0; k < all.n; k++) {
			if (k + 1 < all.n &&
			    strcmp(all.v[k].name, all.v[k + 1].name) == 0)
				continue;	/* a later one replaces it */
			h->vars[h->nvars++] = all.v[k];
		}
	}
	free(all.v);
	free(stamp);
	free(gl);
	free(queue);
}

/* --- connection variables ------------------------------------------- */

static void __attribute__((format(printf, 6, 7)))
report_conn(struct loader *l, int code, const struct host *h,
    const char *var, const struct ynode *at, const char *fmt, ...)
{
	struct seen *s;
	va_list ap;
	size_t i;

	/* A group variable is wrong once, however many hosts inherit it. */
	for (i = 0; i < l->nseen; i++) {
		s = &l->seen[i];
		if (s->node == at && strcmp(s->var, var) == 0) {
			s->more++;
			return;
		}
	}
	va_start(ap, fmt);
	vreport(l, code, h->name, at, fmt, ap);
	va_end(ap);
	ENVCTL_GROW(l->seen, l->nseen + 1, l->seenalloc);
	s = &l->seen[l->nseen++];
	s->node = at;
	s->var = var;
	s->e = err_last(l->err);
	s->more = 0;
}

static int
is_templated(const struct ynode *v)
{
	if (!is_string(v) || (v->tag != NULL && strcmp(v->tag, "!unsafe") == 0))
		return 0;
	return strstr(v->str, "{{") != NULL || strstr(v->str, "{%") != NULL;
}

/*
 * The value of the last set (non-null) variable of names, as the ssh
 * plugin's option lookup; NULL when none is set or after reporting a
 * vaulted or templated value.
 */
static const struct ynode *
conn_value(struct loader *l, const struct host *h, const char *const *names,
    const char **which)
{
	const struct ynode *v, *found = NULL;

	*which = names[0];
	for (; *names != NULL; names++) {
		v = host_var(h, *names);
		if (v != NULL && !is_null(v)) {
			found = v;
			*which = *names;
		}
	}
	if (found == NULL)
		return NULL;
	if (found->tag != NULL && strcmp(found->tag, "!vault") == 0) {
		report_conn(l, ENVCTL_EUNSUPPORTED, h, *which, found,
		    "vault-encrypted connection variables are not supported: "
		    "'%s'", *which);
		return NULL;
	}
	if (is_templated(found)) {
		report_conn(l, ENVCTL_EUNSUPPORTED, h, *which, found,
		    "templated connection variables are not supported: '%s' "
		    "is '%s'", *which, found->str);
		return NULL;
	}
	return found;
}

/* A connection variable that must be a string; NULL when unset. */
static const char *
conn_string(struct loader *l, const struct host *h, const char *const *names)
{
	const struct ynode *v;
	const char *var, *got;

	if ((v = conn_value(l, h, names, &var)) == NULL)
		return NULL;
	if (is_string(v) && v->len > 0 && strlen(v->str) == v->len)
		return v->str;
	if (!is_string(v))
		got = ynode_describe(v);
	else if (v->len == 0)
		got = "an empty string";
	else
		got = "a string with a NUL byte";
	report_conn(l, ENVCTL_EINVALID, h, var, v, "'%s' must be a non-empty "
	    "string, got %s", var, got);
	return NULL;
}

/* Ansible's boolean(): YAML booleans, 0/1, and yes/no/on/off/true/... */
static int
ansible_boolean(const struct ynode *v, int *out)
{
	static const char *const yes[] = { "y", "yes", "on", "1", "true", "t",
		NULL };
	static const char *const no[] = { "n", "no", "off", "0", "false", "f",
		NULL };
	char *s, *p, *end;
	long long iv;
	double d;
	size_t i;
	int r = -1;

	if (v->type != ENVCTL_YSCALAR)
		return -1;
	switch (yscalar_kind(v)) {
	case ENVCTL_YBOOL:
		return yscalar_bool(v, out) == 0 ? 0 : -1;
	case ENVCTL_YINT:
		if (yscalar_int(v, &iv) != 0 || (iv != 0 && iv != 1))
			return -1;
		*out = (int)iv;
		return 0;
	case ENVCTL_YFLOAT:
		d = strtod(v->str, NULL);
		if (d != 0.0 && d != 1.0)
			return -1;
		*out = d == 1.0;
		return 0;
	case ENVCTL_YNULL:
		return -1;
	case ENVCTL_YSTR:
		break;
	}
	/* Python: value.lower().strip() */
	s = xstrdup(v->str);
	for (p = s; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	for (p = s; *p != '\0' && strchr(" \t\n\r\f\v", *p) != NULL; p++)
		;
	end = p + strlen(p);
	while (end > p && strchr(" \t\n\r\f\v", end[-1]) != NULL)
		*--end = '\0';
	for (i = 0; yes[i] != NULL && r != 0; i++)
		if (strcmp(p, yes[i]) == 0) {
			*out = 1;
			r = 0;
		}
	for (i = 0; no[i] != NULL && r != 0; i++)
		if (strcmp(p, no[i]) == 0) {
			*out = 0;
			r = 0;
		}
	free(s);
	return r;
}

static const char *const host_names[] = { "ansible_host", "ansible_ssh_host",
	NULL };
static const char *const port_names[] = { "ansible_port", "ansible_ssh_port",
	NULL };
static const char *const user_names[] = { "ansible_user", "ansible_ssh_user",
	NULL };
static const char *const key_names[] = { "ansible_private_key_file",
	"ansible_ssh_private_key_file", NULL };
static const char *const python_names[] = { "ansible_python_interpreter",
	NULL };
static const char *const args_names[] = { "ansible_ssh_common_args", NULL };
static const char *const conn_names[] = { "ansible_connection", NULL };
static const char *const become_names[] = { "ansible_become", NULL };
static const char *const become_user_names[] = { "ansible_become_user",
	NULL };
static const char *const become_method_names[] = {
	"ansible_become_method", NULL };

/* Interpreter discovery: envctl asks the host, as if unset. */
static const char *const python_autos[] = { "auto", "auto_silent",
	"auto_legacy", "auto_legacy_silent", NULL };
static const char *const ssh_plugins[] = { "ssh", "smart", "paramiko",
	"paramiko_ssh", "ansible.builtin.ssh", "ansible.builtin.smart",
	"ansible.builtin.paramiko", "ansible.builtin.paramiko_ssh", NULL };
static const char *const local_plugins[] = { "local",
	"ansible.builtin.local", NULL };

static int
in_words(const char *s, const char *const *words)
{
	for (; *words != NULL; words++)
		if (strcmp(s, *words) == 0)
			return 1;
	return 0;
}

static void
parse_connection(struct loader *l, struct host *h)
{
	struct buf q = ENVCTL_BUF_INIT;
	const struct ynode *v;
	const char *s, *var;
	long long port;
	int b;

	if ((h->address = conn_string(l, h, host_names)) == NULL)
		h->address = h->name;
	else
		h->address_set = 1;
	h->user = conn_string(l, h, user_names);
	h->key_file = conn_string(l, h, key_names);
	h->ssh_common_args = conn_string(l, h, args_names);
	h->python = conn_string(l, h, python_names);
	if (h->python != NULL && in_words(h->python, python_autos))
		h->python = NULL;
	h->become_user = conn_string(l, h, become_user_names);
	if ((s = conn_string(l, h, become_method_names)) != NULL &&
	    strcmp(s, "sudo") != 0 && strcmp(s, "ansible.builtin.sudo") != 0)
		report_conn(l, ENVCTL_EUNSUPPORTED, h, become_method_names[0],
		    host_var(h, become_method_names[0]), "unsupported become "
		    "method '%s' (envctl supports sudo)", s);
	if ((s = conn_string(l, h, conn_names)) != NULL) {
		if (in_words(s, local_plugins))
			h->local = 1;
		else if (!in_words(s, ssh_plugins))
			report_conn(l, ENVCTL_EUNSUPPORTED, h, conn_names[0],
			    host_var(h, conn_names[0]), "unsupported "
			    "connection '%s' (envctl supports ssh and local)",
			    s);
	}
	if ((v = conn_value(l, h, become_names, &var)) != NULL) {
		if (ansible_boolean(v, &b) == 0)
			h->become = b;
		else
			report_conn(l, ENVCTL_EINVALID, h, var, v, "'%s' must "
			    "be a boolean (yes/no, true/false), got %s%s", var,
			    ynode_describe(v), quoted(v, &q));
	}
	/* An int, or a string that int() reads, as Ansible's port option. */
	if ((v = conn_value(l, h, port_names, &var)) != NULL) {
		if (v->type == ENVCTL_YSCALAR &&
		    (yscalar_kind(v) == ENVCTL_YINT || is_string(v)) &&
		    python_int(v, &port) == 0 && port >= 1 && port <= 65535)
			h->port = (int)port;
		else
			report_conn(l, ENVCTL_EINVALID, h, var, v, "'%s' must "
			    "be an integer from 1 to 65535, got %s%s", var,
			    ynode_describe(v), quoted(v, &q));
	}
	buf_release(&q);
}

/* Appends "(and N more hosts)" to errors that several hosts share. */
static void
finish_seen(struct loader *l)
{
	struct seen *s;
	char *msg;
	size_t i;

	for (i = 0; i < l->nseen; i++) {
		s = &l->seen[i];
		if (s->e == NULL || s->more == 0)
			continue;
		msg = xasprintf("%s (and %zu more host%s)", s->e->msg, s->more,
		    s->more == 1 ? "" : "s");
		free(s->e->msg);
		s->e->msg = msg;
	}
}

/* --- loading ------------------------------------------------------------ */

static int
load_doc(struct inventory **out, struct ydoc *doc, struct err *err)
{
	struct inventory *inv;
	struct loader l;
	size_t i;

	memset(&l, 0, sizeof(l));
	inv = xcalloc(1, sizeof(*inv));
	inv->doc = doc;
	inv->path = xstrdup(doc->path);
	group_add(inv, "all");
	group_add(inv, "ungrouped");
	edge_add(inv, GROUP_ALL, GROUP_UNGROUPED, NULL);
	l.inv = inv;
	l.err = err;
	parse_top(&l, doc->root);
	link_groups(inv);
	if (order_groups(&l) == 0) {
		resolve_hosts(inv);
		for (i = 0; i < inv->nhosts; i++)
			parse_connection(&l, &inv->hosts[i]);
		finish_seen(&l);
	}
	if (inv->nhosts == 0 && l.first == 0) {
		l.first = ENVCTL_EINVALID;
		err_addat(err, ENVCTL_EINVALID, inv->path, 0, 0,
		    "no hosts in inventory");
	}
	free(l.seen);
	if (l.first != 0) {
		inventory_free(inv);
		*out = NULL;
		return l.first;
	}
	*out = inv;
	return 0;
}

int
inventory_load(struct inventory **out, const char *path, struct err *err)
{
	struct ydoc *doc;
	int r;

	*out = NULL;
	if ((r = ydoc_load_file(&doc, path, err)) != 0)
		return r;
	return load_doc(out, doc, err);
}

int
inventory_load_string(struct inventory **out, const char *text, size_t len,
    const char *label, struct err *err)
{
	struct ydoc *doc;
	int r;

	*out = NULL;
	if ((r = ydoc_load_string(&doc, text, len, label, err)) != 0)
		return r;
	return load_doc(out, doc, err);
}

void
inventory_free(struct inventory *inv)
{
	size_t i;

	if (inv == NULL)
		return;
	for (i = 0; i < inv->nhosts; i++) {
		free(inv->hosts[i].name);
		free(inv->hosts[i].vars);
		free(inv->hosts[i].groups);
		free(inv->own[i].v);
	}
	free(inv->hosts);
	free(inv->own);
	for (i = 0; i < inv->ngroups; i++) {
		free(inv->groups[i].name);
		free(inv->groups[i].vars.v);
		free(inv->groups[i].parents);
		free(inv->groups[i].children);
		free(inv->groups[i].childedge);
	}
	free(inv->groups);
	free(inv->hosttab.slots);
	free(inv->grouptab.slots);
	for (i = 0; i < inv->nsynth; i++) {
		free(inv->synth[i]->str);
		free(inv->synth[i]);
	}
	free(inv->synth);
	free(inv->edges);
	free(inv->members);
	ydoc_free(inv->doc);
	free(inv->path);
	free(inv);
}

/* --- lookups ------------------------------------------------------------ */

const char *
inventory_path(const struct inventory *inv)
{
	return inv->path;
}

size_t
inventory_nhosts(const struct inventory *inv)
{
	return inv->nhosts;
}

const struct host *
inventory_host(const struct inventory *inv, size_t i)
{
	return i < inv->nhosts ? &inv->hosts[i] : NULL;
}

const struct host *
inventory_find(const struct inventory *inv, const char *name)
{
	size_t i;

	return ntab_get(&inv->hosttab, name, &i) ? &inv->hosts[i] : NULL;
}

size_t
inventory_ngroups(const struct inventory *inv)
{
	return inv->ngroups;
}

const char *
inventory_group(const struct inventory *inv, size_t i)
{
	return i < inv->ngroups ? inv->groups[i].name : NULL;
}

int
inventory_has_group(const struct inventory *inv, const char *name)
{
	size_t i;

	return ntab_get(&inv->grouptab, name, &i);
}

size_t
inventory_group_hosts(const struct inventory *inv, const char *name,
    const struct host ***out)
{
	size_t g, *queue, head = 0, tail = 0, i, c, n = 0;
	unsigned char *gseen, *hseen;
	const struct host **hosts;

	*out = NULL;
	if (!ntab_get(&inv->grouptab, name, &g))
		return 0;
	queue = xcalloc(inv->ngroups + 1, sizeof(*queue));
	gseen = xcalloc(inv->ngroups + 1, 1);
	hseen = xcalloc(inv->nhosts + 1, 1);
	hosts = xcalloc(inv->nhosts + 1, sizeof(*hosts));
	queue[tail++] = g;
	gseen[g] = 1;
	while (head < tail) {
		g = queue[head++];
		for (i = 0; i < inv->nmembers; i++) {
			const struct member *m = &inv->members[i];

			if (m->group == g && !hseen[m->host]) {
				hseen[m->host] = 1;
				hosts[n++] = &inv->hosts[m->host];
			}
		}
		for (c = 0; c < inv->groups[g].nchildren; c++)
			if (!gseen[inv->groups[g].children[c]]) {
				gseen[inv->groups[g].children[c]] = 1;
				queue[tail++] = inv->groups[g].children[c];
			}
	}
	free(queue);
	free(gseen);
	free(hseen);
	*out = hosts;
	return n;
}

size_t
inventory_group_members(const struct inventory *inv, size_t g,
    const struct host ***out)
{
	const struct host **hosts;
	size_t i, n = 0;

	*out = NULL;
	if (g >= inv->ngroups)
		return 0;
	hosts = xcalloc(inv->nmembers + 1, sizeof(*hosts));
	for (i = 0; i < inv->nmembers; i++)
		if (inv->members[i].group == g)
			hosts[n++] = &inv->hosts[inv->members[i].host];
	*out = hosts;
	return n;
}

size_t
inventory_group_nchildren(const struct inventory *inv, size_t g)
{
	return g < inv->ngroups ? inv->groups[g].nchildren : 0;
}

size_t
inventory_group_child(const struct inventory *inv, size_t g, size_t n)
{
	return g < inv->ngroups && n < inv->groups[g].nchildren ?
	    inv->groups[g].children[n] : NONE;
}

const struct ynode *
host_var(const struct host *h, const char *name)
{
	size_t lo = 0, hi = h->nvars, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(name, h->vars[mid].name);
		if (c == 0)
			return h->vars[mid].value;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

size_t
host_nvars(const struct host *h)
{
	return h->nvars;
}

const struct ynode *
host_var_at(const struct host *h, size_t i, const char **name)
{
	if (i >= h->nvars)
		return NULL;
	if (name != NULL)
		*name = h->vars[i].name;
	return h->vars[i].value;
}

size_t
host_ngroups(const struct host *h)
{
	return h->ngroups;
}

const char *
host_group(const struct host *h, size_t i)
{
	return i < h->ngroups ? h->groups[i] : NULL;
}

int
host_in_group(const struct host *h, const char *group)
{
	size_t lo = 0, hi = h->ngroups, mid;
	int c;

	if (strcmp(group, "all") == 0)
		return 1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(group, h->groups[mid]);
		if (c == 0)
			return 1;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}
