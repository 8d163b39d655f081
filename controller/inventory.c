/* inventory.c - Ansible inventories: sources, precedence (see inventory.h). */
#include "inventory.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/hash.h"
#include "controller/hostrange.h"
#include "controller/inv_ini.h"
#include "controller/inv_json.h"
#include "controller/inv_yaml.h"
#include "controller/invbuild.h"
#include "controller/invscript.h"
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
	struct vars	 vars;		/* from inventory sources */
	struct vars	 fvars;		/* from group_vars/ */
	size_t		*hosts, nhosts;	/* listed in it: first-seen, once */
	const char	*vault;		/* a vault-encrypted group_vars file */
	size_t		*parents, nparents;
	size_t		*children, nchildren;
	size_t		*childedge;	/* edge index of each child */
};

/* parent -> child, as written in a children: mapping (or implicit). */
struct edge {
	size_t	 parent, child;
	const char *path;		/* where it is written */
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
	struct ydoc	**docs;		/* every document values come from */
	size_t		 ndocs, docalloc;
	char		**files;	/* every file read, in order */
	size_t		 nfiles, filealloc;
	struct buf	 digests;	/* "sha256 path" of each, a line each */
	char		 digest[ENVCTL_SHA256_HEX];
	struct host	*hosts;
	size_t		 nhosts, hostalloc;
	struct vars	*own;		/* each host's own assignments */
	struct vars	*hfvars;	/* each host's host_vars/ files */
	const char	**hvault;	/* each host's vault-encrypted file */
	struct group	*groups;
	size_t		 ngroups, groupalloc;
	struct ntab	 hosttab, grouptab;
	struct ynode	**synth;	/* nodes made here (ansible_port) */
	size_t		 nsynth, synthalloc;
	struct ydoc	*vaultdoc;	/* an unusable node per vaulted file */
	struct ynode	**vaults;
	size_t		 nvaults, vaultalloc;
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

struct invb {
	struct inventory	*inv;
	struct err		*err;
	const char		*path;		/* the source being read */
	size_t			 nerrors;	/* recorded for it */
	size_t			 ngroups0;	/* groups before it */
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

static void	vreport(struct invb *, int, const char *,
		    const struct ynode *, const char *, va_list)
		    __attribute__((format(printf, 5, 0)));

static void
vreport(struct invb *l, int code, const char *host, const struct ynode *at,
    const char *fmt, va_list ap)
{
	struct err *e;

	if (l->first == 0)
		l->first = code;
	l->nerrors++;
	err_vaddat(l->err, code, at != NULL && at->path != NULL ? at->path :
	    l->path, at != NULL ? at->line : 0, at != NULL ? at->col : 0, fmt,
	    ap);
	if (host != NULL && (e = err_last(l->err)) != NULL && e->host == NULL)
		e->host = xstrdup(host);
}

static void __attribute__((format(printf, 4, 5)))
report(struct invb *l, int code, const struct ynode *at, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(l, code, NULL, at, fmt, ap);
	va_end(ap);
}

/* --- building ------------------------------------------------------ */

static void
vars_add(struct invb *l, struct vars *vs, const char *name,
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
    const char *path, const struct ynode *at)
{
	struct edge *e;

	ENVCTL_GROW(inv->edges, inv->nedges + 1, inv->edgealloc);
	e = &inv->edges[inv->nedges];
	e->parent = parent;
	e->child = child;
	e->path = path;
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
	if (inv->hostalloc != before) {
		inv->own = xreallocarray(inv->own, inv->hostalloc,
		    sizeof(*inv->own));
		inv->hfvars = xreallocarray(inv->hfvars, inv->hostalloc,
		    sizeof(*inv->hfvars));
		inv->hvault = xreallocarray(inv->hvault, inv->hostalloc,
		    sizeof(*inv->hvault));
	}
	h = &inv->hosts[inv->nhosts];
	memset(h, 0, sizeof(*h));
	memset(&inv->own[inv->nhosts], 0, sizeof(*inv->own));
	memset(&inv->hfvars[inv->nhosts], 0, sizeof(*inv->hfvars));
	inv->hvault[inv->nhosts] = NULL;
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

/* Appends " 'text'" for a scalar, so messages show what was found. */
static const char *
quoted(const struct ynode *v, struct buf *b)
{
	buf_reset(b);
	if (v->type == ENVCTL_YSCALAR && yscalar_kind(v) != ENVCTL_YNULL)
		buf_addf(b, " '%s'", v->str);
	return b->data;
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

/* --- the builder (invbuild.h) ---------------------------------------- */

const char *
invb_path(const struct invb *b)
{
	return b->path;
}

void
invb_keep(struct invb *b, struct ydoc *doc)
{
	struct inventory *inv = b->inv;

	ENVCTL_GROW(inv->docs, inv->ndocs + 1, inv->docalloc);
	inv->docs[inv->ndocs++] = doc;
}

void
invb_error(struct invb *b, int code, const struct ynode *at, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(b, code, NULL, at, fmt, ap);
	va_end(ap);
}

void
invb_errorat(struct invb *b, int code, int line, int col, const char *fmt,
    ...)
{
	struct ynode at;
	va_list ap;

	memset(&at, 0, sizeof(at));
	at.line = line;
	at.col = col;
	va_start(ap, fmt);
	vreport(b, code, NULL, &at, fmt, ap);
	va_end(ap);
}

size_t
invb_nerrors(const struct invb *b)
{
	return b->nerrors;
}

int
invb_group_known(const struct invb *b, const char *name)
{
	size_t idx;

	return ntab_get(&b->inv->grouptab, name, &idx) && idx < b->ngroups0;
}

size_t
invb_group(struct invb *b, const char *name)
{
	return group_add(b->inv, name);
}

void
invb_child(struct invb *b, size_t parent, size_t child, const struct ynode *at)
{
	edge_add(b->inv, parent, child, at != NULL && at->path != NULL ?
	    at->path : b->path, at);
}

void
invb_group_var(struct invb *b, size_t g, const char *name,
    const struct ynode *value)
{
	struct inventory *inv = b->inv;
	struct buf q = ENVCTL_BUF_INIT;
	long long prio;

	if (strcmp(name, "ansible_group_priority") != 0) {
		vars_add(b, &inv->groups[g].vars, name, value);
		return;
	}
	/* Ansible consumes it: int(value), not a variable. */
	if (python_int(value, &prio) != 0 || prio < INT_MIN ||
	    prio > INT_MAX)
		report(b, ENVCTL_EINVALID, value, "ansible_group_priority of "
		    "group '%s' must be an integer, got %s%s",
		    inv->groups[g].name, ynode_describe(value),
		    quoted(value, &q));
	else
		inv->groups[g].priority = (int)prio;
	buf_release(&q);
}

void
invb_host_var(struct invb *b, size_t h, const char *name,
    const struct ynode *value)
{
	vars_add(b, &b->inv->own[h], name, value);
}

/* Adds name to group g; ENVCTL_INVB_NONE past the cap.  *isnew as host_add. */
static size_t
add_member(struct invb *b, size_t g, const char *name, const struct ynode *at,
    int *isnew)
{
	struct inventory *inv = b->inv;
	size_t h;

	*isnew = 0;
	if (*name == '\0') {
		/* As Ansible's add_host, for every reader. */
		report(b, ENVCTL_EINVALID, at, "invalid empty host name");
		return ENVCTL_INVB_NONE;
	}
	if (inv->nhosts >= ENVCTL_INVENTORY_MAX_HOSTS &&
	    !ntab_get(&inv->hosttab, name, &h)) {
		if (!b->toomany)
			report(b, ENVCTL_ETOOBIG, at, "inventory has more than "
			    "%u hosts", ENVCTL_INVENTORY_MAX_HOSTS);
		b->toomany = 1;
		return ENVCTL_INVB_NONE;
	}
	h = host_add(inv, name, isnew);
	member_add(inv, h, g);
	if (*isnew)
		inv->hosts[h].file = b->path;
	return h;
}

size_t
invb_host(struct invb *b, size_t g, const char *name, const struct ynode *at)
{
	int isnew;

	return add_member(b, g, name, at, &isnew);
}

size_t
invb_hosts(struct invb *b, size_t g, const char *spec, const struct ynode *at,
    size_t **hosts)
{
	struct inventory *inv = b->inv;
	struct err rerr = ENVCTL_ERR_INIT;
	char *pattern = NULL, *port = NULL, **names = NULL, *digits;
	size_t i, nnames = 0, h, n = 0, *idx = NULL;
	struct ynode *pn;
	int isnew;

	*hosts = NULL;
	if (!hostrange_parse_address(spec, &pattern, &port))
		pattern = xstrdup(spec);	/* taken as it is */
	if (strchr(pattern, '[') != NULL) {
		if (hostrange_expand(&names, &nnames, pattern,
		    ENVCTL_INVENTORY_MAX_HOSTS, &rerr) != 0) {
			report(b, rerr.code, at, "%s", rerr.msg);
			goto out;
		}
	} else {
		names = xcalloc(1, sizeof(*names));
		names[0] = pattern;
		pattern = NULL;
		nnames = 1;
	}
	idx = xcalloc(nnames, sizeof(*idx));
	for (i = 0; i < nnames; i++) {
		if ((h = add_member(b, g, names[i], at, &isnew)) ==
		    ENVCTL_INVB_NONE)
			break;
		idx[n++] = h;
		if (!isnew || port == NULL)
			continue;
		/* As Ansible's Host(name, port): set when created. */
		digits = port + strspn(port, "0");
		if (*digits == '\0')
			digits--;
		pn = xcalloc(1, sizeof(*pn));
		pn->type = ENVCTL_YSCALAR;
		pn->path = at != NULL && at->path != NULL ? at->path : b->path;
		pn->line = at != NULL ? at->line : 0;
		pn->col = at != NULL ? at->col : 0;
		pn->str = xstrdup(digits);
		pn->len = strlen(pn->str);
		pn->plain = 1;
		ENVCTL_GROW(inv->synth, inv->nsynth + 1, inv->synthalloc);
		inv->synth[inv->nsynth++] = pn;
		vars_add(b, &inv->own[h], "ansible_port", pn);
	}
out:
	for (i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(pattern);
	free(port);
	err_release(&rerr);
	if (n == 0)
		free(idx);
	else
		*hosts = idx;
	return n;
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
			edge_add(inv, GROUP_ALL, i, NULL, NULL);
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
report_cycle(struct invb *l, const size_t *stack, size_t depth,
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
	at.path = e->path;
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
order_groups(struct invb *l)
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
 * Notes that a vault-encrypted file at precedence rank may set any of h's
 * variables: every variable that does not come from above it, defined or
 * not, is then unknown (host_var() returns the file's unusable node).
 */
static void
note_vault(struct inventory *inv, struct host *h, const char *path,
    size_t rank)
{
	struct buf msg = ENVCTL_BUF_INIT;
	size_t i;

	if (path == NULL || (h->vault != NULL && h->vault_rank > rank))
		return;
	h->vault_rank = rank;
	for (i = 0; i < inv->nvaults; i++)
		if (strcmp(inv->vaults[i]->path, path) == 0) {
			h->vault = inv->vaults[i];
			return;
		}
	buf_addf(&msg, "may be set by the vault-encrypted file '%s', which "
	    "envctl cannot decrypt", path);
	if (inv->vaultdoc == NULL)
		inv->vaultdoc = ydoc_new(inv->path);
	ENVCTL_GROW(inv->vaults, inv->nvaults + 1, inv->vaultalloc);
	h->vault = ydoc_add_scalar(inv->vaultdoc, ENVCTL_YSTR, msg.data,
	    msg.len, 0, 0);
	/* The node's path names the vaulted file, for messages. */
	h->vault->path = path;
	free(h->vault->tag);
	h->vault->tag = xstrdup(ENVCTL_YTAG_UNUSABLE);
	inv->vaults[inv->nvaults++] = h->vault;
	buf_release(&msg);
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
	struct member *mb;
	struct vars all = { NULL, 0, 0 };
	struct group *gs = inv->groups, *g;
	struct host *h;
	int ungrouped;

	/* A sorted copy: the list itself keeps each group's order. */
	mb = xcalloc(inv->nmembers + 1, sizeof(*mb));
	if (inv->nmembers > 0)
		memcpy(mb, inv->members, inv->nmembers * sizeof(*mb));
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

		/*
		 * Ansible's VARIABLE_PRECEDENCE, lowest first: the inventory's
		 * all, the inventory's groups, group_vars/all, group_vars of
		 * the groups, the host's own, host_vars.
		 */
		all.n = 0;
		append_vars(&all, &gs[GROUP_ALL].vars, 0);
		for (k = 0; k < n; k++)
			append_vars(&all, &gs[gl[k]].vars, k + 1);
		append_vars(&all, &gs[GROUP_ALL].fvars, n + 1);
		note_vault(inv, h, gs[GROUP_ALL].vault, n + 1);
		for (k = 0; k < n; k++) {
			append_vars(&all, &gs[gl[k]].fvars, n + 2 + k);
			note_vault(inv, h, gs[gl[k]].vault, n + 2 + k);
		}
		append_vars(&all, &inv->own[i], 2 * n + 2);
		append_vars(&all, &inv->hfvars[i], 2 * n + 3);
		note_vault(inv, h, inv->hvault[i], 2 * n + 3);
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
	free(mb);
	free(stamp);
	free(gl);
	free(queue);
}

/* --- connection variables ------------------------------------------- */

static void __attribute__((format(printf, 6, 7)))
report_conn(struct invb *l, int code, const struct host *h,
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
	if (!ynode_is_string(v) ||
	    (v->tag != NULL && strcmp(v->tag, "!unsafe") == 0))
		return 0;
	return strstr(v->str, "{{") != NULL || strstr(v->str, "{%") != NULL;
}

/*
 * The value of the last set (non-null) variable of names, as the ssh
 * plugin's option lookup; NULL when none is set or after reporting a
 * vaulted or templated value.
 */
static const struct ynode *
conn_value(struct invb *l, const struct host *h, const char *const *names,
    const char **which)
{
	const struct ynode *v, *found = NULL;

	*which = names[0];
	for (; *names != NULL; names++) {
		v = host_var(h, *names);
		if (v != NULL && !ynode_is_null(v)) {
			found = v;
			*which = *names;
		}
	}
	if (found == NULL)
		return NULL;
	if (found->tag != NULL &&
	    strcmp(found->tag, ENVCTL_YTAG_UNUSABLE) == 0) {
		report_conn(l, ENVCTL_EUNSUPPORTED, h, *which, found,
		    "connection variable '%s': %s", *which, found->str);
		return NULL;
	}
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
conn_string(struct invb *l, const struct host *h, const char *const *names)
{
	const struct ynode *v;
	const char *var, *got;

	if ((v = conn_value(l, h, names, &var)) == NULL)
		return NULL;
	if (ynode_is_string(v) && v->len > 0 && strlen(v->str) == v->len)
		return v->str;
	if (!ynode_is_string(v))
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
static const char *const interps_names[] = { "envctl_interpreters", NULL };
static const char *const services_names[] = { "envctl_services", NULL };
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

/* A copy of s[0..n) that lives as long as the inventory. */
static const char *
intern(struct inventory *inv, const char *s, size_t n, const struct ynode *at)
{
	if (inv->vaultdoc == NULL)
		inv->vaultdoc = ydoc_new(inv->path);
	return ydoc_add_scalar(inv->vaultdoc, ENVCTL_YSTR, s, n, at->line,
	    at->col)->str;
}

/* One kind of list variable: what its entries are, and how many. */
struct listvar {
	const char *const *names;	/* the variable */
	const char	*what;		/* "interpreter", "service" */
	int		 no_auto;	/* 'auto' is no entry */
};

static int
auto_word(const char *p, size_t n)
{
	size_t i;

	for (i = 0; python_autos[i] != NULL; i++)
		if (strlen(python_autos[i]) == n &&
		    memcmp(python_autos[i], p, n) == 0)
			return 1;
	return 0;
}

/* Why entry p[0..n) of a list is refused, or NULL. */
static const char *
entry_bad(const struct listvar *lv, const char *p, size_t n)
{
	if (n == 0)
		return "an empty string";
	if (strlen(p) < n)
		return "a string with a NUL byte";
	if (lv->no_auto && auto_word(p, n))
		return "'auto'";
	return NULL;
}

static void
add_entry(const char **arr, size_t *n, const char *s)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(arr[i], s) == 0)
			return;		/* named twice: once */
	arr[(*n)++] = s;
}

/*
 * A list variable (envctl_interpreters, envctl_services): a YAML list, or
 * one string of entries separated by commas.  A string that looks like a
 * list ("[...]", as an INI [group:vars] line keeps it) is refused rather
 * than read as one odd name.  Sets *out (NULL when unset) and *nout.
 */
static void
parse_list(struct invb *l, struct host *h, const struct listvar *lv,
    const char ***out, size_t *nout)
{
	const struct ynode *v, *it;
	const char *var, *p, *q, *why;
	size_t i, n, len;

	*out = NULL;
	*nout = 0;
	if ((v = conn_value(l, h, lv->names, &var)) == NULL)
		return;
	if (ynode_is_string(v) && v->len > 0 && (v->str[0] == '[' ||
	    v->str[0] == '(')) {
		report_conn(l, ENVCTL_EINVALID, h, var, v, "'%s' is the string "
		    "'%s', not a list (INI [group:vars] values are strings): "
		    "write a YAML list, or the entries separated by commas",
		    var, v->str);
		return;
	}
	if (v->type == ENVCTL_YSEQ) {
		n = v->nitems;
		for (i = 0; i < n; i++) {
			it = v->items[i];
			if (is_templated(it)) {
				report_conn(l, ENVCTL_EUNSUPPORTED, h, var, v,
				    "templated connection variables are not "
				    "supported: '%s' item %zu is '%s'", var,
				    i + 1, it->str);
				return;
			}
			why = ynode_is_string(it) ? entry_bad(lv, it->str,
			    it->len) : ynode_describe(it);
			if (why != NULL) {
				report_conn(l, ENVCTL_EINVALID, h, var, v,
				    "'%s' item %zu must be %s %s, got %s", var,
				    i + 1, lv->no_auto ? "an" : "a", lv->what,
				    why);
				return;
			}
		}
	} else if (ynode_is_string(v) && v->len > 0 &&
	    strlen(v->str) == v->len) {
		n = 1;
		for (p = v->str; *p != '\0'; p++)
			n += *p == ',';
	} else {
		report_conn(l, ENVCTL_EINVALID, h, var, v, "'%s' must be a "
		    "list of %ss, got %s", var, lv->what, ynode_describe(v));
		return;
	}
	if (n == 0 || n > ENVCTL_MAX_INTERPRETERS) {
		report_conn(l, ENVCTL_EINVALID, h, var, v, "'%s' must list "
		    "from 1 to %d %ss, got %zu", var, ENVCTL_MAX_INTERPRETERS,
		    lv->what, n);
		return;
	}
	*out = xcalloc(n + 1, sizeof(**out));
	if (v->type == ENVCTL_YSEQ) {
		for (i = 0; i < n; i++)
			add_entry(*out, nout, v->items[i]->str);
		return;
	}
	for (p = v->str; ; p = q + 1) {
		q = strchr(p, ',');
		while (*p == ' ' || *p == '\t')
			p++;
		len = q != NULL ? (size_t)(q - p) : strlen(p);
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == 0 || (lv->no_auto && auto_word(p, len))) {
			report_conn(l, ENVCTL_EINVALID, h, var, v, "'%s': an "
			    "empty%s entry in '%s'", var, lv->no_auto ?
			    " or 'auto'" : "", v->str);
			free(*out);
			*out = NULL;
			*nout = 0;
			return;
		}
		add_entry(*out, nout, intern(l->inv, p, len, v));
		if (q == NULL)
			break;
	}
}

static void
parse_lists(struct invb *l, struct host *h)
{
	static const struct listvar interps = { interps_names, "interpreter",
		1 };
	static const struct listvar services = { services_names, "service",
		0 };

	parse_list(l, h, &interps, &h->interpreters, &h->ninterpreters);
	if (h->interpreters == NULL && h->python != NULL) {
		/* ansible_python_interpreter: a list of one. */
		h->interpreters = xcalloc(2, sizeof(*h->interpreters));
		h->interpreters[h->ninterpreters++] = h->python;
	}
	parse_list(l, h, &services, &h->services, &h->nservices);
}

static void
parse_connection(struct invb *l, struct host *h)
{
	struct buf q = ENVCTL_BUF_INIT;
	const struct ynode *v;
	const char *s, *var;
	long long port;
	int b;

	if (h->vault != NULL) {
		/* Any connection variable may be in it: one error says so. */
		h->address = h->name;
		report_conn(l, ENVCTL_EUNSUPPORTED, h, "", h->vault,
		    "this host's connection variables %s", h->vault->str);
		return;
	}
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
	parse_lists(l, h);
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
		    (yscalar_kind(v) == ENVCTL_YINT || ynode_is_string(v)) &&
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
finish_seen(struct invb *l)
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

/* --- sources ------------------------------------------------------------ */

/* Largest inventory or vars file read (the YAML reader's own cap). */
#define FILE_MAX	ENVCTL_YAML_MAX_BYTES
/* Most levels of group_vars/NAME/ folders and inventory directories. */
#define MAX_DIR_DEPTH	32

/* Keeps path (copied) as a file read; returns the kept copy. */
static const char *
file_add(struct inventory *inv, const char *path, const struct buf *content)
{
	char hex[ENVCTL_SHA256_HEX];

	ENVCTL_GROW(inv->files, inv->nfiles + 1, inv->filealloc);
	inv->files[inv->nfiles] = xstrdup(path);
	if (content != NULL) {
		hash_sha256_hex(hex, content->data, content->len);
		buf_addf(&inv->digests, "%s %s\n", hex, path);
	}
	return inv->files[inv->nfiles++];
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The entries of directory path (without . and ..), sorted as Python's
 * sorted() sorts them; NULL with an error reported when it cannot be read.
 */
static char **
list_dir(struct invb *b, const char *path, size_t *n)
{
	struct dirent *de;
	char **names = NULL;
	size_t alloc = 0;
	DIR *d;

	*n = 0;
	if ((d = opendir(path)) == NULL) {
		invb_errorat(b, ENVCTL_ESYS, 0, 0, "cannot read directory "
		    "'%s': %s", path, strerror(errno));
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		ENVCTL_GROW(names, *n + 1, alloc);
		names[(*n)++] = xstrdup(de->d_name);
	}
	closedir(d);
	ENVCTL_GROW(names, *n + 1, alloc);
	names[*n] = NULL;
	sort_array(names, *n, sizeof(*names), name_cmp);
	return names;
}

/* Python's os.path.splitext(name)[1]: from the last dot not leading. */
static const char *
extension(const char *name)
{
	const char *dot = strrchr(name, '.'), *p = name;

	while (*p == '.')
		p++;
	return dot != NULL && dot >= p ? dot : name + strlen(name);
}

static const char *const vars_exts[] = { ".yml", ".yaml", ".json", NULL };

/* Reads path whole into b (capped); reports and returns -1 on failure. */
static int
read_file(struct invb *l, const char *path, struct buf *b)
{
	struct err e = ENVCTL_ERR_INIT;
	int r;

	buf_init(b, FILE_MAX);
	if ((r = buf_read_file(b, path, &e)) != 0) {
		if (l->first == 0)
			l->first = r;
		l->nerrors++;
		err_move(l->err, &e);
		buf_release(b);
		return -1;
	}
	return 0;
}

/* Moves a YAML parser's errors into the loader's. */
static void
take_errors(struct invb *l, struct err *e)
{
	if (e->code == 0)
		return;
	if (l->first == 0)
		l->first = e->code;
	l->nerrors++;
	err_move(l->err, e);
}

/*
 * One group_vars/ or host_vars/ file into vs: a mapping of variables, or
 * empty (ignored, as Ansible does); a vault-encrypted file is noted in
 * *vault, since its variables cannot be known.
 */
static void
load_vars_file(struct invb *l, const char *path, struct vars *vs,
    const char **vault)
{
	struct err e = ENVCTL_ERR_INIT;
	const struct ynode *k;
	struct ynode *root = NULL;
	struct ydoc *doc = NULL;
	const char *kept, *saved = l->path;
	struct buf text;
	size_t i;
	int r;

	if (read_file(l, path, &text) != 0)
		return;
	kept = file_add(l->inv, path, &text);
	l->path = kept;
	if (text.len >= 14 && memcmp(text.data, "$ANSIBLE_VAULT", 14) == 0) {
		if (*vault == NULL)
			*vault = kept;
		goto out;
	}
	if ((r = inv_json_vars(l, text.data, text.len, &root)) == 1) {
		if (ydoc_load_string(&doc, text.data, text.len, kept,
		    &e) != 0) {
			take_errors(l, &e);
			goto out;
		}
		invb_keep(l, doc);
		root = doc->root;
	} else if (r != 0)
		goto out;
	if (root == NULL || (root->type == ENVCTL_YSCALAR &&
	    yscalar_kind(root) == ENVCTL_YNULL))
		goto out;
	if (root->type != ENVCTL_YMAP) {
		report(l, ENVCTL_EINVALID, root, "a vars file must be a "
		    "mapping of variables, got %s", ynode_describe(root));
		goto out;
	}
	for (i = 0; i < root->npairs; i++) {
		k = root->pairs[i].key;
		if (!ynode_is_string(k) || k->len == 0 ||
		    strlen(k->str) != k->len) {
			report(l, ENVCTL_EINVALID, k, "variable names must be "
			    "non-empty strings without NUL bytes, got %s",
			    ynode_describe(k));
			continue;
		}
		vars_add(l, vs, k->str, root->pairs[i].value);
	}
out:
	l->path = saved;
	buf_release(&text);
}

/*
 * A group_vars/NAME/ folder: its files in sorted order, hidden ones and
 * backups~ skipped, folders without an extension searched in turn.
 */
static void
load_vars_tree(struct invb *l, const char *dir, struct vars *vs,
    const char **vault, int depth)
{
	char **names, *full;
	const char *ext;
	struct stat st;
	size_t n, i, j;

	if (depth > MAX_DIR_DEPTH) {
		invb_errorat(l, ENVCTL_ETOOBIG, 0, 0, "'%s' is nested more "
		    "than %d folders deep", dir, MAX_DIR_DEPTH);
		return;
	}
	if ((names = list_dir(l, dir, &n)) == NULL)
		return;
	for (i = 0; i < n; i++) {
		if (names[i][0] == '.' || str_endswith(names[i], "~"))
			continue;
		full = xasprintf("%s/%s", dir, names[i]);
		ext = extension(names[i]);
		if (stat(full, &st) != 0) {
			free(full);
			continue;
		}
		if (S_ISDIR(st.st_mode) && *ext == '\0')
			load_vars_tree(l, full, vs, vault, depth + 1);
		else if (S_ISREG(st.st_mode)) {
			for (j = 0; vars_exts[j] != NULL &&
			    strcmp(ext, vars_exts[j]) != 0; j++)
				;
			if (*ext == '\0' || vars_exts[j] != NULL)
				load_vars_file(l, full, vs, vault);
		}
		free(full);
	}
	strv_free(names, n);
}

/*
 * The vars of entity name from dir (a group_vars/ or host_vars/ folder),
 * as Ansible's host_group_vars plugin finds them: the first of NAME,
 * NAME.yml, NAME.yaml, NAME.json that exists, a folder read whole.
 */
static void
load_entity_vars(struct invb *l, const char *dir, const char *name,
    struct vars *vs, const char **vault)
{
	static const char *const exts[] = { "", ".yml", ".yaml", ".json",
		NULL };
	struct stat st;
	char *path;
	size_t i;

	if (name[0] == '/')
		return;		/* Ansible skips such names */
	for (i = 0; exts[i] != NULL; i++) {
		path = xasprintf("%s/%s%s", dir, name, exts[i]);
		if (stat(path, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				load_vars_tree(l, path, vs, vault, 0);
			else
				load_vars_file(l, path, vs, vault);
			free(path);
			return;
		}
		free(path);
	}
}

/* group_vars/ and host_vars/ of base (a directory) for every entity. */
static void
load_vars_dirs(struct invb *l, const char *base)
{
	struct inventory *inv = l->inv;
	struct stat st;
	char *dir;
	size_t i;

	dir = xasprintf("%s/group_vars", base);
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		for (i = 0; i < inv->ngroups; i++)
			load_entity_vars(l, dir, inv->groups[i].name,
			    &inv->groups[i].fvars, &inv->groups[i].vault);
	free(dir);
	dir = xasprintf("%s/host_vars", base);
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		for (i = 0; i < inv->nhosts; i++)
			load_entity_vars(l, dir, inv->hosts[i].name,
			    &inv->hfvars[i], &inv->hvault[i]);
	free(dir);
}

/* The first line of text, shortened and made printable, for messages. */
static void
first_line(const char *text, size_t len, struct buf *out)
{
	size_t i;

	for (i = 0; i < len && i < 60 && text[i] != '\n'; i++)
		buf_addch(out, (unsigned char)text[i] < 0x20 ||
		    (unsigned char)text[i] == 0x7f ? '?' : text[i]);
	if (i < len && i == 60 && text[i] != '\n')
		buf_addstr(out, "...");
}

#define FORMATS	"envctl reads YAML, INI, the JSON of ansible-inventory " \
	"--list, executable inventory scripts and directories of these"

/*
 * The JSON that ansible-inventory --list prints: an object with a "_meta"
 * key.  (A YAML inventory may be written as JSON too; it has none.)
 */
static int
is_json_inventory(const char *text, size_t len)
{
	static const char key[] = "\"_meta\"";
	size_t i;

	while (len > 0 && strchr(" \t\r\n", *text) != NULL) {
		text++;
		len--;
	}
	if (len == 0 || *text != '{')
		return 0;
	/* The JSON reader then gives the real reason if it is not JSON. */
	for (i = 0; i + sizeof(key) - 1 <= len; i++)
		if (memcmp(text + i, key, sizeof(key) - 1) == 0)
			return 1;
	return 0;
}

/*
 * Reads one inventory file's text as Ansible's plugins would try it:
 * YAML (for the names its yaml plugin accepts), then INI.  yaml_ok says
 * whether the name allows YAML.
 */
static void
load_text(struct invb *l, const char *text, size_t len, int yaml_ok)
{
	struct err ye = ENVCTL_ERR_INIT, ie = ENVCTL_ERR_INIT, *saved;
	struct buf line = ENVCTL_BUF_INIT;
	struct ynode at;
	struct ydoc *doc = NULL;
	const char *what = "empty";
	size_t before;
	int first;

	if (is_json_inventory(text, len)) {
		(void)inv_json_read(l, text, len, NULL, NULL);
		goto out;
	}
	memset(&at, 0, sizeof(at));
	l->ngroups0 = l->inv->ngroups;
	if (yaml_ok) {
		if (ydoc_load_string(&doc, text, len, l->path, &ye) == 0 &&
		    doc->root != NULL && doc->root->type == ENVCTL_YMAP) {
			invb_keep(l, doc);
			(void)inv_yaml_read(l, doc->root);
			goto out;
		}
		if (doc != NULL && doc->root != NULL)
			what = ynode_describe(doc->root);	/* static */
		ydoc_free(doc);
		if (ye.code != 0 && ye.code != ENVCTL_EPARSE) {
			/* YAML, but wrong (a duplicate key, too big). */
			take_errors(l, &ye);
			goto out;
		}
	}
	/* INI: its errors are kept aside until it is known that it failed. */
	saved = l->err;
	before = l->nerrors;
	first = l->first;
	l->err = &ie;
	(void)inv_ini_read(l, text, len);
	l->err = saved;
	if (l->nerrors == before)
		goto out;
	l->first = first;
	l->nerrors = before;
	if (!yaml_ok) {
		take_errors(l, &ie);	/* INI by its name: as they are */
		goto out;
	}
	/* Neither: one error, where the likelier reading failed. */
	first_line(text, len, &line);
	at.path = l->path;
	at.line = ye.code != 0 ? ye.line : ie.line;
	at.col = ye.code != 0 ? ye.col : ie.col;
	if (ye.code != 0)
		report(l, ENVCTL_EPARSE, &at, "%s; and not INI either (line "
		    "%d: %s); " FORMATS "; the file begins '%s'", ye.msg,
		    ie.line, ie.msg, line.data);
	else
		report(l, ENVCTL_EPARSE, &at, "%s; and as YAML it is %s, not "
		    "a mapping of groups; " FORMATS "; the file begins '%s'",
		    ie.msg, what, line.data);
out:
	err_release(&ye);
	err_release(&ie);
	buf_release(&line);
}

/*
 * Ansible's script plugin takes an executable file; one that cannot be
 * run (no "#!" and not a binary) fails there and goes on to YAML and INI.
 */
static int
is_program(const char *path, const struct buf *text)
{
	if (access(path, X_OK) != 0)
		return 0;
	return (text->len >= 2 && memcmp(text->data, "#!", 2) == 0) ||
	    (text->len >= 4 && memcmp(text->data, "\177ELF", 4) == 0);
}

/*
 * 1 when Ansible's yaml plugin takes a file of this name (no extension,
 * .yaml, .yml, .json), else 0.
 */
static int
yaml_name(const char *name)
{
	const char *ext = extension(name);

	return *ext == '\0' || strcmp(ext, ".yaml") == 0 ||
	    strcmp(ext, ".yml") == 0 || strcmp(ext, ".json") == 0;
}

/* One inventory file (not a directory). */
static void
load_file(struct invb *l, const char *path)
{
	const char *ext = extension(path), *saved = l->path;
	struct buf text;

	if (read_file(l, path, &text) != 0)
		return;
	l->path = file_add(l->inv, path, &text);
	if (is_program(path, &text))
		(void)invscript_read(l, ENVCTL_INVSCRIPT_TIMEOUT);
	else if (strcmp(ext, ".toml") == 0)
		report(l, ENVCTL_EUNSUPPORTED, NULL, "TOML inventories are not "
		    "supported; convert it with 'ansible-inventory -i %s "
		    "--list > inventory.json'", path);
	else
		load_text(l, text.data, text.len, yaml_name(path));
	l->path = saved;
	buf_release(&text);
}

/* Names Ansible skips in an inventory directory (INVENTORY_IGNORE_*). */
static int
ignored_in_dir(const char *name)
{
	static const char *const exts[] = { ".pyc", ".pyo", ".swp", ".bak",
		"~", ".rpm", ".md", ".txt", ".rst", ".orig", ".ini", ".cfg",
		".retry", NULL };
	size_t i;

	if (name[0] == '.' || strcmp(name, "host_vars") == 0 ||
	    strcmp(name, "group_vars") == 0 ||
	    strcmp(name, "vars_plugins") == 0)
		return 1;
	for (i = 0; exts[i] != NULL; i++)
		if (str_endswith(name, exts[i]))
			return 1;
	return 0;
}

/* An inventory directory: each entry in sorted order, folders in turn. */
static void
load_dir(struct invb *l, const char *dir, int depth)
{
	struct stat st;
	char **names, *full;
	size_t n, i;

	if (depth > MAX_DIR_DEPTH) {
		invb_errorat(l, ENVCTL_ETOOBIG, 0, 0, "'%s' is nested more "
		    "than %d folders deep", dir, MAX_DIR_DEPTH);
		return;
	}
	if ((names = list_dir(l, dir, &n)) == NULL)
		return;
	for (i = 0; i < n; i++) {
		if (ignored_in_dir(names[i]))
			continue;
		full = xasprintf("%s/%s", dir, names[i]);
		if (stat(full, &st) == 0 && S_ISDIR(st.st_mode))
			load_dir(l, full, depth + 1);
		else
			load_file(l, full);
		free(full);
	}
	strv_free(names, n);
}

/* --- loading ------------------------------------------------------------ */

/*
 * As Ansible's reconcile_inventory: ungrouped lists the hosts that are in
 * no group but all (after those listed there), and none that are in
 * another group.
 */
static void
fix_ungrouped(struct inventory *inv)
{
	struct group *u = &inv->groups[GROUP_UNGROUPED];
	unsigned char *other, *listed;
	size_t i, n = 0, *hosts;

	other = xcalloc(inv->nhosts + 1, 1);
	listed = xcalloc(inv->nhosts + 1, 1);
	for (i = 0; i < inv->nmembers; i++)
		if (inv->members[i].group != GROUP_ALL &&
		    inv->members[i].group != GROUP_UNGROUPED)
			other[inv->members[i].host] = 1;
	hosts = xcalloc(inv->nhosts + 1, sizeof(*hosts));
	for (i = 0; i < u->nhosts; i++)
		if (!other[u->hosts[i]]) {
			listed[u->hosts[i]] = 1;
			hosts[n++] = u->hosts[i];
		}
	for (i = 0; i < inv->nhosts; i++)
		if (!other[i] && !listed[i])
			hosts[n++] = i;
	free(u->hosts);
	u->hosts = hosts;
	u->nhosts = n;
	free(other);
	free(listed);
}

/*
 * Each group's hosts in the order first listed there, each once: the
 * (group, host) listings are deduplicated as the group edges are.
 */
static void
list_members(struct inventory *inv)
{
	struct edge *ls;
	struct group *g;
	size_t i, n = 0;

	ls = xcalloc(inv->nmembers + 1, sizeof(*ls));
	for (i = 0; i < inv->nmembers; i++) {
		ls[i].parent = inv->members[i].group;
		ls[i].child = inv->members[i].host;
		ls[i].seq = i;
	}
	sort_array(ls, inv->nmembers, sizeof(*ls), edge_cmp);
	for (i = 0; i < inv->nmembers; i++)
		if (n == 0 || ls[n - 1].parent != ls[i].parent ||
		    ls[n - 1].child != ls[i].child)
			ls[n++] = ls[i];
	sort_array(ls, n, sizeof(*ls), edge_seqcmp);
	for (i = 0; i < n; i++)
		inv->groups[ls[i].parent].nhosts++;
	for (i = 0; i < inv->ngroups; i++) {
		g = &inv->groups[i];
		g->hosts = xcalloc(g->nhosts + 1, sizeof(*g->hosts));
		g->nhosts = 0;
	}
	for (i = 0; i < n; i++) {
		g = &inv->groups[ls[i].parent];
		g->hosts[g->nhosts++] = ls[i].child;
	}
	free(ls);
	fix_ungrouped(inv);
}

static struct inventory *
inventory_new(const char *path)
{
	struct inventory *inv = xcalloc(1, sizeof(*inv));

	inv->path = xstrdup(path);
	buf_init(&inv->digests, 0);
	group_add(inv, "all");
	group_add(inv, "ungrouped");
	edge_add(inv, GROUP_ALL, GROUP_UNGROUPED, NULL, NULL);
	return inv;
}

/*
 * Everything after the sources are read: the group graph, the vars
 * folders beside them (varsdir NULL: none), precedence, connections.
 */
static int
finish(struct inventory **out, struct invb *l, const char *varsdir)
{
	struct inventory *inv = l->inv;
	size_t i;

	l->path = inv->path;
	link_groups(inv);
	if (order_groups(l) == 0) {
		if (varsdir != NULL)
			load_vars_dirs(l, varsdir);
		list_members(inv);
		resolve_hosts(inv);
		for (i = 0; i < inv->nhosts; i++)
			parse_connection(l, &inv->hosts[i]);
		finish_seen(l);
	}
	if (ntab_get(&inv->hosttab, "all", &i)) {
		/* Ansible takes it: then every run selects that host alone. */
		if (l->first == 0)
			l->first = ENVCTL_EINVALID;
		err_addat(l->err, ENVCTL_EINVALID, inv->hosts[i].file, 0, 0,
		    "a host named 'all' would make the pattern 'all', the "
		    "default, select that host alone (Ansible warns 'Found "
		    "both group and host with same name: all' and does so); "
		    "rename the host");
	}
	if (inv->nhosts == 0 && l->first == 0) {
		l->first = ENVCTL_EINVALID;
		err_addat(l->err, ENVCTL_EINVALID, inv->path, 0, 0,
		    "no hosts in inventory");
	}
	hash_sha256_hex(inv->digest, inv->digests.data, inv->digests.len);
	free(l->seen);
	if (l->first != 0) {
		inventory_free(inv);
		*out = NULL;
		return l->first;
	}
	*out = inv;
	return 0;
}

int
inventory_load(struct inventory **out, const char *path, struct err *err)
{
	struct invb l;
	struct stat st;
	char *dir, *slash;
	int r;

	*out = NULL;
	memset(&l, 0, sizeof(l));
	l.err = err;
	if (stat(path, &st) != 0)
		return err_set(err, errno == ENOENT ? ENVCTL_ENOTFOUND :
		    ENVCTL_ESYS, "cannot read inventory '%s': %s", path,
		    strerror(errno));
	l.inv = inventory_new(path);
	l.path = l.inv->path;
	if (S_ISDIR(st.st_mode)) {
		load_dir(&l, path, 0);
		return finish(out, &l, path);
	}
	load_file(&l, path);
	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) == NULL) {
		free(dir);
		dir = xstrdup(".");
	} else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	r = finish(out, &l, dir);
	free(dir);
	return r;
}

int
inventory_load_string(struct inventory **out, const char *text, size_t len,
    const char *label, struct err *err)
{
	struct invb l;

	*out = NULL;
	memset(&l, 0, sizeof(l));
	l.err = err;
	l.inv = inventory_new(label);
	l.path = l.inv->path;
	if (len > FILE_MAX) {
		invb_errorat(&l, ENVCTL_ETOOBIG, 0, 0, "larger than %u bytes",
		    FILE_MAX);
	} else
		load_text(&l, text, len, yaml_name(label));
	return finish(out, &l, NULL);
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
		free(inv->hosts[i].interpreters);
		free(inv->hosts[i].services);
		free(inv->own[i].v);
		free(inv->hfvars[i].v);
	}
	free(inv->hosts);
	free(inv->own);
	free(inv->hfvars);
	free(inv->hvault);
	for (i = 0; i < inv->ngroups; i++) {
		free(inv->groups[i].name);
		free(inv->groups[i].vars.v);
		free(inv->groups[i].fvars.v);
		free(inv->groups[i].hosts);
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
	free(inv->vaults);
	ydoc_free(inv->vaultdoc);
	free(inv->edges);
	free(inv->members);
	for (i = 0; i < inv->ndocs; i++)
		ydoc_free(inv->docs[i]);
	free(inv->docs);
	for (i = 0; i < inv->nfiles; i++)
		free(inv->files[i]);
	free(inv->files);
	buf_release(&inv->digests);
	free(inv->path);
	free(inv);
}

/* --- lookups ------------------------------------------------------------ */

const char *
inventory_path(const struct inventory *inv)
{
	return inv->path;
}

const char *
inventory_digest(const struct inventory *inv)
{
	return inv->digest;
}

size_t
inventory_nfiles(const struct inventory *inv)
{
	return inv->nfiles;
}

const char *
inventory_file(const struct inventory *inv, size_t i)
{
	return i < inv->nfiles ? inv->files[i] : NULL;
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
	const struct group *gr;

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
		gr = &inv->groups[queue[head++]];
		for (i = 0; i < gr->nhosts; i++)
			if (!hseen[gr->hosts[i]]) {
				hseen[gr->hosts[i]] = 1;
				hosts[n++] = &inv->hosts[gr->hosts[i]];
			}
		for (c = 0; c < gr->nchildren; c++)
			if (!gseen[gr->children[c]]) {
				gseen[gr->children[c]] = 1;
				queue[tail++] = gr->children[c];
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
	size_t i;

	*out = NULL;
	if (g >= inv->ngroups)
		return 0;
	hosts = xcalloc(inv->groups[g].nhosts + 1, sizeof(*hosts));
	for (i = 0; i < inv->groups[g].nhosts; i++)
		hosts[i] = &inv->hosts[inv->groups[g].hosts[i]];
	*out = hosts;
	return inv->groups[g].nhosts;
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
		if (c == 0) {
			if (h->vault != NULL &&
			    h->vars[mid].rank < h->vault_rank)
				return h->vault;
			return h->vars[mid].value;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return h->vault;
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
