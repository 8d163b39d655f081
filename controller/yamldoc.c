/* yamldoc.c - a YAML file as a tree of nodes with positions (see yamldoc.h). */
#include "yamldoc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"

#define TAG_PREFIX	"tag:yaml.org,2002:"

struct frame {
	struct ynode	*node;
	struct ynode	*key;		/* mapping: key waiting for its value */
};

/* An anchor name and the node it names; a later one replaces it. */
struct anchor {
	char		*name;
	struct ynode	*node;
};

struct loader {
	struct ydoc	*doc;
	const char	*text;
	size_t		 len;
	struct frame	*stack;
	size_t		 depth, stackalloc;
	size_t		 total;		/* nodes attached, aliases expanded */
	struct anchor	*anchors;	/* open-addressing table */
	size_t		 nanchors, anchorcap;
	int		 ndocs;
};

/* qsort(3), which must not see a NULL base even for no elements. */
static void
sort_array(void *base, size_t n, size_t size,
    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static struct ynode *
node_new(struct loader *l, enum ynode_type type, const yaml_mark_t *mark)
{
	struct ydoc *doc = l->doc;
	struct ynode *n = xcalloc(1, sizeof(*n));

	n->type = type;
	n->path = doc->path;
	n->line = (int)mark->line + 1;
	n->col = (int)mark->column + 1;
	n->weight = 1;
	ENVCTL_GROW(doc->all, doc->nall + 1, doc->allocall);
	doc->all[doc->nall++] = n;
	return n;
}

static int
same_key(const struct ynode *a, const struct ynode *b)
{
	return a->type == ENVCTL_YSCALAR && b->type == ENVCTL_YSCALAR &&
	    a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
}

static int
is_merge_key(const struct ynode *k)
{
	if (k->type != ENVCTL_YSCALAR)
		return 0;
	if (k->tag != NULL)
		return strcmp(k->tag, TAG_PREFIX "merge") == 0;
	return k->plain && strcmp(k->str, "<<") == 0;
}

/* A key of a mapping being finished, with its place in the input order. */
struct keyref {
	struct ynode	*key;
	struct ynode	*value;
	size_t		 seq;
};

static int
keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	size_t n = x->key->len < y->key->len ? x->key->len : y->key->len;
	int c = memcmp(x->key->str, y->key->str, n);

	if (c != 0)
		return c;
	if (x->key->len != y->key->len)
		return x->key->len < y->key->len ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
keyref_seqcmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
keyref_same(const struct keyref *a, const struct keyref *b)
{
	return same_key(a->key, b->key);
}

/*
 * Reports the first key (in input order) that repeats an earlier one.
 * Sorting keeps this O(n log n): a 16 MiB file may hold a million keys.
 */
static int
check_duplicates(struct loader *l, const struct ynode *map, struct err *err)
{
	struct keyref *refs, *dup = NULL, *first = NULL;
	size_t i, n = 0;
	int r = 0;

	refs = xcalloc(map->npairs + 1, sizeof(*refs));
	for (i = 0; i < map->npairs; i++) {
		if (is_merge_key(map->pairs[i].key))
			continue;
		refs[n].key = map->pairs[i].key;
		refs[n].seq = i;
		n++;
	}
	sort_array(refs, n, sizeof(*refs), keyref_cmp);
	for (i = 1; i < n; i++) {
		/* refs[i] repeats the group's first only if it is the 2nd. */
		if (!keyref_same(&refs[i - 1], &refs[i]) ||
		    (i >= 2 && keyref_same(&refs[i - 2], &refs[i])))
			continue;
		if (dup == NULL || refs[i].seq < dup->seq) {
			dup = &refs[i];
			first = &refs[i - 1];
		}
	}
	if (dup != NULL)
		r = err_setat(err, ENVCTL_EINVALID, l->doc->path,
		    dup->key->line, dup->key->col,
		    "duplicate key '%s' (first at line %d)", dup->key->str,
		    first->key->line);
	free(refs);
	return r;
}

static void
refs_add(struct keyref **refs, size_t *n, size_t *alloc, struct ynode *key,
    struct ynode *value)
{
	ENVCTL_GROW(*refs, *n + 1, *alloc);
	(*refs)[*n].key = key;
	(*refs)[*n].value = value;
	(*refs)[*n].seq = *n;
	(*n)++;
}

/*
 * Applies merge keys as PyYAML's flatten_mapping does: merged pairs first
 * (of a list of mappings, earlier ones win), then the mapping's own pairs,
 * which win over everything merged.  As in a Python dict, a key keeps the
 * place of its first appearance and takes the value of its last.
 */
static int
map_finish(struct loader *l, struct ynode *map, struct err *err)
{
	struct keyref *refs = NULL;
	size_t nrefs = 0, refalloc = 0, i, j, k, nout;
	struct ynode *v = NULL, *m;
	int has_merge = 0, r;

	if ((r = check_duplicates(l, map, err)) != 0)
		return r;
	for (i = 0; i < map->npairs; i++)
		if (is_merge_key(map->pairs[i].key))
			has_merge = 1;
	if (!has_merge)
		return 0;
	for (i = 0; i < map->npairs; i++) {
		if (!is_merge_key(map->pairs[i].key))
			continue;
		v = map->pairs[i].value;
		if (v->type == ENVCTL_YMAP) {
			for (k = 0; k < v->npairs; k++)
				refs_add(&refs, &nrefs, &refalloc,
				    v->pairs[k].key, v->pairs[k].value);
			continue;
		}
		if (v->type != ENVCTL_YSEQ)
			goto bad;
		for (j = v->nitems; j-- > 0;) {
			m = v->items[j];
			if (m->type != ENVCTL_YMAP) {
				v = m;
				goto bad;
			}
			for (k = 0; k < m->npairs; k++)
				refs_add(&refs, &nrefs, &refalloc,
				    m->pairs[k].key, m->pairs[k].value);
		}
	}
	for (i = 0; i < map->npairs; i++)
		if (!is_merge_key(map->pairs[i].key))
			refs_add(&refs, &nrefs, &refalloc, map->pairs[i].key,
			    map->pairs[i].value);
	/* Per key: the first entry keeps its place, the last its value. */
	sort_array(refs, nrefs, sizeof(*refs), keyref_cmp);
	nout = 0;
	for (i = 0; i < nrefs; i = j) {
		j = i + 1;
		while (j < nrefs && keyref_same(&refs[i], &refs[j]))
			j++;
		refs[nout].key = refs[i].key;
		refs[nout].seq = refs[i].seq;
		refs[nout].value = refs[j - 1].value;
		nout++;
	}
	sort_array(refs, nout, sizeof(*refs), keyref_seqcmp);
	map->pairs = xreallocarray(map->pairs, nout + 1, sizeof(*map->pairs));
	map->alloc = nout + 1;
	for (i = 0; i < nout; i++) {
		map->pairs[i].key = refs[i].key;
		map->pairs[i].value = refs[i].value;
	}
	map->npairs = nout;
	free(refs);
	return 0;
bad:
	free(refs);
	return err_setat(err, ENVCTL_EINVALID, l->doc->path, v->line, v->col,
	    "merge key '<<' expects a mapping or a list of mappings, got %s",
	    ynode_describe(v));
}

/* Attaches n (new or aliased) to the open container, or makes it the root. */
static int
attach(struct loader *l, struct ynode *n, struct err *err)
{
	struct frame *f;
	struct ynode *p;

	if (l->depth == 0) {
		l->doc->root = n;
		return 0;
	}
	f = &l->stack[l->depth - 1];
	p = f->node;
	/* Every attached node counts with what its aliases expand to. */
	if (l->total + n->weight > ENVCTL_YAML_MAX_NODES)
		return err_setat(err, ENVCTL_ETOOBIG, l->doc->path, n->line,
		    n->col, "more than %u nodes after expanding aliases",
		    ENVCTL_YAML_MAX_NODES);
	l->total += n->weight;
	if (p->type == ENVCTL_YSEQ) {
		ENVCTL_GROW(p->items, p->nitems + 1, p->alloc);
		p->items[p->nitems++] = n;
		return 0;
	}
	if (f->key == NULL) {
		if (n->type != ENVCTL_YSCALAR)
			return err_setat(err, ENVCTL_EINVALID, l->doc->path,
			    n->line, n->col, "mapping keys must be scalars, "
			    "got %s", ynode_describe(n));
		f->key = n;
		return 0;
	}
	ENVCTL_GROW(p->pairs, p->npairs + 1, p->alloc);
	p->pairs[p->npairs].key = f->key;
	p->pairs[p->npairs].value = n;
	p->npairs++;
	f->key = NULL;
	return 0;
}

/* A closed container weighs itself and what it holds, aliases expanded. */
static void
close_weight(struct ynode *n)
{
	size_t i;

	n->weight = 1;
	for (i = 0; i < n->nitems; i++)
		n->weight += n->items[i]->weight;
	for (i = 0; i < n->npairs; i++)
		n->weight += n->pairs[i].key->weight +
		    n->pairs[i].value->weight;
}

static size_t
anchor_hash(const char *s)
{
	size_t h = 5381;

	for (; *s != '\0'; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* The slot for name: where it is, or the empty one where it would go. */
static struct anchor *
anchor_slot(struct anchor *tab, size_t cap, const char *name)
{
	size_t i = anchor_hash(name) & (cap - 1);

	while (tab[i].name != NULL && strcmp(tab[i].name, name) != 0)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

/*
 * Names n by anchor name; a redefined name now means n, as YAML says.
 * A hash table, not a list: a file may hold a million aliases.
 */
static void
anchor_add(struct loader *l, const yaml_char_t *name, struct ynode *n)
{
	struct anchor *old = l->anchors, *a;
	size_t oldcap = l->anchorcap, i;

	if (name == NULL)
		return;
	if (2 * (l->nanchors + 1) > l->anchorcap) {
		l->anchorcap = l->anchorcap == 0 ? 64 : l->anchorcap * 2;
		l->anchors = xcalloc(l->anchorcap, sizeof(*l->anchors));
		for (i = 0; i < oldcap; i++)
			if (old[i].name != NULL)
				*anchor_slot(l->anchors, l->anchorcap,
				    old[i].name) = old[i];
		free(old);
	}
	a = anchor_slot(l->anchors, l->anchorcap, (const char *)name);
	if (a->name == NULL) {
		a->name = xstrdup((const char *)name);
		l->nanchors++;
	}
	a->node = n;
}

static int
alias(struct loader *l, const yaml_event_t *ev, struct err *err)
{
	const char *name = (const char *)ev->data.alias.anchor;
	struct anchor *a = NULL;

	if (l->anchorcap > 0)
		a = anchor_slot(l->anchors, l->anchorcap, name);
	if (a == NULL || a->name == NULL)
		return err_setat(err, ENVCTL_EPARSE, l->doc->path,
		    (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, "undefined alias '*%s'",
		    name);
	if (a->node->open)
		return err_setat(err, ENVCTL_EINVALID, l->doc->path,
		    (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1,
		    "alias '*%s' refers to a node that contains it", name);
	return attach(l, a->node, err);
}

static int
open_node(struct loader *l, enum ynode_type type, const yaml_event_t *ev,
    const yaml_char_t *anchor, const yaml_char_t *tag, struct err *err)
{
	struct ynode *n;
	int r;

	if (l->depth >= ENVCTL_YAML_MAX_DEPTH)
		return err_setat(err, ENVCTL_ETOOBIG, l->doc->path,
		    (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1,
		    "nested more than %u levels deep", ENVCTL_YAML_MAX_DEPTH);
	n = node_new(l, type, &ev->start_mark);
	if (tag != NULL && strcmp((const char *)tag, "!") != 0)
		n->tag = xstrdup((const char *)tag);
	anchor_add(l, anchor, n);
	if ((r = attach(l, n, err)) != 0)
		return r;
	n->open = 1;
	ENVCTL_GROW(l->stack, l->depth + 1, l->stackalloc);
	l->stack[l->depth].node = n;
	l->stack[l->depth].key = NULL;
	l->depth++;
	return 0;
}

static int
scalar(struct loader *l, const yaml_event_t *ev, struct err *err)
{
	struct ynode *n = node_new(l, ENVCTL_YSCALAR, &ev->start_mark);
	const char *tag = (const char *)ev->data.scalar.tag;

	n->len = ev->data.scalar.length;
	n->str = xmalloc(n->len + 1);
	memcpy(n->str, ev->data.scalar.value, n->len);
	n->str[n->len] = '\0';
	/*
	 * libyaml, like PyYAML, sets plain_implicit for an untagged plain
	 * scalar and for the non-specific tag "!" (PyYAML then resolves
	 * "! 123" to an int, so do we).
	 */
	n->plain = ev->data.scalar.plain_implicit != 0;
	if (tag != NULL && strcmp(tag, "!") != 0)
		n->tag = xstrdup(tag);
	anchor_add(l, ev->data.scalar.anchor, n);
	return attach(l, n, err);
}

static int
parse_error(struct loader *l, yaml_parser_t *p, struct err *err)
{
	const char *hint = "";
	size_t at = p->problem_mark.index;
	int line = (int)p->problem_mark.line + 1;
	int col = (int)p->problem_mark.column + 1;

	if (p->error == YAML_MEMORY_ERROR) {
		fprintf(stderr, "envctl: out of memory parsing YAML\n");
		abort();
	}
	if (at < l->len && l->text[at] == '\t')
		hint = " (a tab: YAML indentation must use spaces)";
	if (p->context != NULL)
		return err_setat(err, ENVCTL_EPARSE, l->doc->path, line, col,
		    "%s%s, %s at line %d", p->problem, hint, p->context,
		    (int)p->context_mark.line + 1);
	return err_setat(err, ENVCTL_EPARSE, l->doc->path, line, col, "%s%s",
	    p->problem != NULL ? p->problem : "invalid YAML", hint);
}

static int
run(struct loader *l, yaml_parser_t *p, struct err *err)
{
	yaml_event_t ev;
	struct ynode *n;
	int r = 0, done = 0;

	while (!done && r == 0) {
		if (!yaml_parser_parse(p, &ev))
			return parse_error(l, p, err);
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++l->ndocs > 1)
				r = err_setat(err, ENVCTL_EPARSE, l->doc->path,
				    (int)ev.start_mark.line + 1,
				    (int)ev.start_mark.column + 1,
				    "expected one YAML document, found a "
				    "second one");
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_ALIAS_EVENT:
			r = alias(l, &ev, err);
			break;
		case YAML_SCALAR_EVENT:
			r = scalar(l, &ev, err);
			break;
		case YAML_SEQUENCE_START_EVENT:
			r = open_node(l, ENVCTL_YSEQ, &ev,
			    ev.data.sequence_start.anchor,
			    ev.data.sequence_start.tag, err);
			break;
		case YAML_MAPPING_START_EVENT:
			r = open_node(l, ENVCTL_YMAP, &ev,
			    ev.data.mapping_start.anchor,
			    ev.data.mapping_start.tag, err);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			n = l->stack[--l->depth].node;
			n->open = 0;
			close_weight(n);
			if (n->type == ENVCTL_YMAP)
				r = map_finish(l, n, err);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	return r;
}

int
ydoc_load_string(struct ydoc **out, const char *text, size_t len,
    const char *label, struct err *err)
{
	struct loader l;
	yaml_parser_t parser;
	size_t i;
	int r;

	*out = NULL;
	memset(&l, 0, sizeof(l));
	l.doc = xcalloc(1, sizeof(*l.doc));
	l.doc->path = xstrdup(label);
	l.text = text;
	l.len = len;
	if (len > ENVCTL_YAML_MAX_BYTES) {
		r = err_setat(err, ENVCTL_ETOOBIG, label, 0, 0,
		    "larger than %u bytes", ENVCTL_YAML_MAX_BYTES);
		goto out;
	}
	if (!yaml_parser_initialize(&parser)) {
		fprintf(stderr, "envctl: out of memory starting libyaml\n");
		abort();
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text,
	    len);
	r = run(&l, &parser, err);
	yaml_parser_delete(&parser);
out:
	for (i = 0; i < l.anchorcap; i++)
		free(l.anchors[i].name);
	free(l.anchors);
	free(l.stack);
	if (r != 0)
		ydoc_free(l.doc);
	else
		*out = l.doc;
	return r;
}

int
ydoc_load_file(struct ydoc **out, const char *path, struct err *err)
{
	struct buf b;
	int r;

	*out = NULL;
	buf_init(&b, ENVCTL_YAML_MAX_BYTES);
	if ((r = buf_read_file(&b, path, err)) == 0)
		r = ydoc_load_string(out, b.data, b.len, path, err);
	buf_release(&b);
	return r;
}

void
ydoc_free(struct ydoc *doc)
{
	size_t i;
	struct ynode *n;

	if (doc == NULL)
		return;
	for (i = 0; i < doc->nall; i++) {
		n = doc->all[i];
		free(n->str);
		free(n->tag);
		free(n->items);
		free(n->pairs);
		free(n);
	}
	free(doc->all);
	free(doc->path);
	free(doc);
}

struct ydoc *
ydoc_new(const char *path)
{
	struct ydoc *doc = xcalloc(1, sizeof(*doc));

	doc->path = xstrdup(path);
	return doc;
}

struct ynode *
ydoc_add_node(struct ydoc *doc, enum ynode_type type, int line, int col)
{
	struct ynode *n = xcalloc(1, sizeof(*n));

	n->type = type;
	n->path = doc->path;
	n->line = line;
	n->col = col;
	n->weight = 1;
	ENVCTL_GROW(doc->all, doc->nall + 1, doc->allocall);
	doc->all[doc->nall++] = n;
	return n;
}

struct ynode *
ydoc_add_scalar(struct ydoc *doc, enum yscalar_kind kind, const char *s,
    size_t len, int line, int col)
{
	static const char *const tags[] = {
		[ENVCTL_YSTR] = TAG_PREFIX "str",
		[ENVCTL_YINT] = TAG_PREFIX "int",
		[ENVCTL_YFLOAT] = TAG_PREFIX "float",
		[ENVCTL_YBOOL] = TAG_PREFIX "bool",
		[ENVCTL_YNULL] = TAG_PREFIX "null",
	};
	struct ynode *n = ydoc_add_node(doc, ENVCTL_YSCALAR, line, col);

	n->str = xmalloc(len + 1);
	memcpy(n->str, s, len);
	n->str[len] = '\0';
	n->len = len;
	n->tag = xstrdup(tags[kind]);
	return n;
}

void
yseq_append(struct ynode *seq, struct ynode *item)
{
	ENVCTL_GROW(seq->items, seq->nitems + 1, seq->alloc);
	seq->items[seq->nitems++] = item;
}

void
ymap_append(struct ynode *map, struct ynode *key, struct ynode *value)
{
	ENVCTL_GROW(map->pairs, map->npairs + 1, map->alloc);
	map->pairs[map->npairs].key = key;
	map->pairs[map->npairs].value = value;
	map->npairs++;
}

const struct ynode *
ymap_get(const struct ynode *map, const char *key)
{
	size_t i, klen = strlen(key);

	if (map == NULL || map->type != ENVCTL_YMAP)
		return NULL;
	for (i = 0; i < map->npairs; i++) {
		const struct ynode *k = map->pairs[i].key;

		if (k->len == klen && memcmp(k->str, key, klen) == 0)
			return map->pairs[i].value;
	}
	return NULL;
}

/* --- YAML 1.1 scalar resolution, after PyYAML's resolver.py ----------- */

static int
all_of(const char *s, const char *set)
{
	if (*s == '\0')
		return 0;
	return s[strspn(s, set)] == '\0';
}

static int
in_list(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

static const char *const true_words[] = { "yes", "Yes", "YES", "true",
	"True", "TRUE", "on", "On", "ON", NULL };
static const char *const false_words[] = { "no", "No", "NO", "false",
	"False", "FALSE", "off", "Off", "OFF", NULL };
static const char *const null_words[] = { "", "~", "null", "Null", "NULL",
	NULL };

/* [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+ with an optional tail after the last. */
static int
is_sexagesimal(const char *s, const char *tail_set)
{
	const char *p = s;
	int parts = 0, digits;

	if (*p == '-' || *p == '+')
		p++;
	if (*p < '0' || *p > '9')
		return 0;
	p += strspn(p, "0123456789_");
	while (*p == ':') {
		p++;
		digits = (int)strspn(p, "0123456789");
		if (digits == 0 || digits > 2 || (digits == 2 && *p > '5'))
			return 0;
		p += digits;
		parts++;
	}
	if (parts == 0)
		return 0;
	if (tail_set == NULL)
		return *p == '\0';
	return *p == '.' && p[1 + strspn(p + 1, tail_set)] == '\0';
}

static int
is_int(const char *s)
{
	const char *p = s;

	if (*p == '-' || *p == '+')
		p++;
	if (p[0] == '0' && p[1] == 'b')
		return all_of(p + 2, "01_");
	if (p[0] == '0' && p[1] == 'x')
		return all_of(p + 2, "0123456789abcdefABCDEF_");
	if (p[0] == '0')
		return p[1] == '\0' || all_of(p + 1, "01234567_");
	if (p[0] >= '1' && p[0] <= '9' && all_of(p, "0123456789_"))
		return 1;
	return p[0] >= '1' && p[0] <= '9' && is_sexagesimal(s, NULL);
}

static int
is_float(const char *s)
{
	const char *p = s, *q;

	if (strcmp(s, ".nan") == 0 || strcmp(s, ".NaN") == 0 ||
	    strcmp(s, ".NAN") == 0)
		return 1;
	if (*p == '-' || *p == '+')
		p++;
	if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 ||
	    strcmp(p, ".INF") == 0)
		return 1;
	if (is_sexagesimal(s, "0123456789_"))
		return 1;
	/* [0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?, or unsigned \.[0-9]... */
	if (*p >= '0' && *p <= '9')
		p += strspn(p, "0123456789_");
	else if (p != s || *p != '.' || p[1] < '0' || p[1] > '9')
		return 0;
	if (*p++ != '.')
		return 0;
	p += strspn(p, "0123456789_");
	if (*p == '\0')
		return 1;
	if ((*p != 'e' && *p != 'E') || (p[1] != '-' && p[1] != '+'))
		return 0;
	q = p + 2;
	return all_of(q, "0123456789");
}

enum yscalar_kind
yscalar_kind(const struct ynode *n)
{
	if (n == NULL || n->type != ENVCTL_YSCALAR)
		return ENVCTL_YSTR;
	if (n->tag != NULL) {
		if (strcmp(n->tag, TAG_PREFIX "int") == 0)
			return ENVCTL_YINT;
		if (strcmp(n->tag, TAG_PREFIX "float") == 0)
			return ENVCTL_YFLOAT;
		if (strcmp(n->tag, TAG_PREFIX "bool") == 0)
			return ENVCTL_YBOOL;
		if (strcmp(n->tag, TAG_PREFIX "null") == 0)
			return ENVCTL_YNULL;
		return ENVCTL_YSTR;
	}
	if (!n->plain || strlen(n->str) != n->len)
		return ENVCTL_YSTR;
	if (in_list(n->str, true_words) || in_list(n->str, false_words))
		return ENVCTL_YBOOL;
	if (in_list(n->str, null_words))
		return ENVCTL_YNULL;
	if (is_int(n->str))
		return ENVCTL_YINT;
	if (is_float(n->str))
		return ENVCTL_YFLOAT;
	return ENVCTL_YSTR;
}

int
yscalar_bool(const struct ynode *n, int *out)
{
	if (yscalar_kind(n) != ENVCTL_YBOOL)
		return ENVCTL_EINVALID;
	if (in_list(n->str, true_words))
		*out = 1;
	else if (in_list(n->str, false_words))
		*out = 0;
	else
		return ENVCTL_EINVALID;
	return 0;
}

/* Accumulates digits of base into *v; ENVCTL_ETOOBIG on overflow. */
static int
accumulate(const char *p, int base, unsigned long long *v)
{
	unsigned long long d;

	for (; *p != '\0'; p++) {
		if (*p == '_')
			continue;
		if (*p >= '0' && *p <= '9')
			d = (unsigned long long)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned long long)(*p - 'a' + 10);
		else if (*p >= 'A' && *p <= 'F')
			d = (unsigned long long)(*p - 'A' + 10);
		else
			return ENVCTL_EINVALID;
		if (*v > (ULLONG_MAX - d) / (unsigned long long)base)
			return ENVCTL_ETOOBIG;
		*v = *v * (unsigned long long)base + d;
	}
	return 0;
}

int
yscalar_int(const struct ynode *n, long long *out)
{
	unsigned long long v = 0, part;
	const char *p, *colon;
	int neg = 0, r;

	if (yscalar_kind(n) != ENVCTL_YINT)
		return ENVCTL_EINVALID;
	p = n->str;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (p[0] == '0' && p[1] == 'b')
		r = accumulate(p + 2, 2, &v);
	else if (p[0] == '0' && p[1] == 'x')
		r = accumulate(p + 2, 16, &v);
	else if (p[0] == '0' && p[1] != '\0')
		r = accumulate(p + 1, 8, &v);
	else if (strchr(p, ':') == NULL)
		r = accumulate(p, 10, &v);
	else {
		/* Base 60: "1:30" is 90. */
		r = 0;
		while (r == 0 && *p != '\0') {
			colon = strchr(p, ':');
			char *digits = colon != NULL ? xstrndup(p,
			    (size_t)(colon - p)) : xstrdup(p);

			part = 0;
			r = accumulate(digits, 10, &part);
			free(digits);
			if (r == 0 && v > (ULLONG_MAX - part) / 60)
				r = ENVCTL_ETOOBIG;
			if (r == 0)
				v = v * 60 + part;
			p = colon != NULL ? colon + 1 : p + strlen(p);
		}
	}
	if (r != 0)
		return r;
	if (v > (unsigned long long)LLONG_MAX + (neg ? 1u : 0u))
		return ENVCTL_ETOOBIG;
	if (neg)
		*out = v == (unsigned long long)LLONG_MAX + 1u ? LLONG_MIN :
		    -(long long)v;
	else
		*out = (long long)v;
	return 0;
}

/*
 * Python's repr() of a finite double: the shortest digits that read back
 * as d, the nearest to d when several do.  The correctly rounded digits
 * at a length can miss where the neighbour on the other side fits (just
 * above a power of two, where the gap below is half the gap above).
 */
static void
float_digits(double d, char *digits, size_t size, int *exp10)
{
	char s[64], t[64], *e, *w;
	unsigned long long m, cand;
	int prec, x = 0, k;
	size_t n;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof(s), "%.*e", prec - 1, d);
		e = strchr(s, 'e');
		x = (int)strtol(e + 1, NULL, 10);
		m = 0;
		for (w = s; w < e; w++)
			if (*w >= '0' && *w <= '9')
				m = m * 10 + (unsigned long long)(*w - '0');
		if (strtod(s, NULL) == d)
			break;
		/* At most one neighbour can read back when m does not. */
		for (k = -1; k <= 1; k += 2) {
			cand = k < 0 ? m - 1 : m + 1;
			snprintf(t, sizeof(t), "%llue%d", cand, x - (prec - 1));
			if (strtod(t, NULL) == d)
				break;
		}
		if (k <= 1) {
			/* 999 + 1 gains a digit, 1000 - 1 loses one. */
			snprintf(t, sizeof(t), "%llu", cand);
			x += (int)strlen(t) - prec;
			m = cand;
			break;
		}
	}
	snprintf(digits, size, "%llu", m);
	*exp10 = x;
	n = strlen(digits);
	while (n > 1 && digits[n - 1] == '0')
		digits[--n] = '\0';
}

/* Appends repr(d): "1.0", "1e+16", "1.5e-05", "inf", "nan", "-0.0". */
int
yfloat_repr(struct buf *out, double d)
{
	char digits[32];
	int x, n, r, k;

	if (isnan(d))
		return buf_addstr(out, "nan");
	if (isinf(d))
		return buf_addstr(out, d < 0 ? "-inf" : "inf");
	r = signbit(d) ? buf_addch(out, '-') : 0;
	d = fabs(d);
	if (r == 0 && d == 0)
		return buf_addstr(out, "0.0");
	if (r != 0)
		return r;
	float_digits(d, digits, sizeof(digits), &x);
	n = (int)strlen(digits);
	if (x < -4 || x >= 16) {
		r = buf_addch(out, digits[0]);
		if (r == 0 && n > 1)
			r = buf_addf(out, ".%s", digits + 1);
		if (r == 0)
			r = buf_addf(out, "e%c%02d", x < 0 ? '-' : '+', abs(x));
		return r;
	}
	if (x < 0) {
		r = buf_addstr(out, "0.");
		for (k = 0; r == 0 && k < -x - 1; k++)
			r = buf_addch(out, '0');
		return r == 0 ? buf_addstr(out, digits) : r;
	}
	if (n <= x + 1) {
		r = buf_addstr(out, digits);
		for (k = n; r == 0 && k < x + 1; k++)
			r = buf_addch(out, '0');
		return r == 0 ? buf_addstr(out, ".0") : r;
	}
	r = buf_add(out, digits, (size_t)x + 1);
	return r == 0 ? buf_addf(out, ".%s", digits + x + 1) : r;
}


/* The value of a float scalar, computed as PyYAML's construct_yaml_float. */
static double
float_value(const struct ynode *n)
{
	struct buf clean = ENVCTL_BUF_INIT;
	const char *p;
	char *s, *colon;
	double sign = 1, d, base = 1;

	for (p = n->str; *p != '\0'; p++)
		if (*p != '_')
			buf_addch(&clean, *p);
	p = clean.data;
	if (*p == '-')
		sign = -1;
	if (*p == '-' || *p == '+')
		p++;
	if (strcasecmp(p, ".inf") == 0)
		d = sign * INFINITY;
	else if (strcasecmp(p, ".nan") == 0)
		d = NAN;
	else if (strchr(p, ':') == NULL)
		d = sign * strtod(p, NULL);
	else {
		/* Base 60, summed from the last part as Python does. */
		s = clean.data + (p - clean.data);
		d = 0;
		for (;;) {
			colon = strrchr(s, ':');
			d += strtod(colon != NULL ? colon + 1 : s, NULL) * base;
			base *= 60;
			if (colon == NULL)
				break;
			*colon = '\0';
		}
		d *= sign;
	}
	buf_release(&clean);
	return d;
}

/*
 * Python prints a decimal int of any size; past 64 bits, the digits are
 * printed as written, less '+' and underscores.  Hex, octal, binary and
 * base 60 ints that large are refused instead.
 */
static int
is_big_decimal(const struct ynode *n)
{
	const char *p = n->str;

	if (*p == '-' || *p == '+')
		p++;
	return *p >= '1' && *p <= '9' && p[strspn(p, "0123456789_")] == '\0';
}

static int
scalar_text(struct buf *out, const struct ynode *n, struct err *err)
{
	long long v;
	const char *p;
	double d;
	int b, r;

	switch (yscalar_kind(n)) {
	case ENVCTL_YBOOL:
		if (yscalar_bool(n, &b) == 0)
			return buf_addstr(out, b ? "True" : "False");
		break;
	case ENVCTL_YNULL:
		return buf_addstr(out, "None");
	case ENVCTL_YINT:
		if ((r = yscalar_int(n, &v)) == 0)
			return buf_addf(out, "%lld", v);
		if (r == ENVCTL_ETOOBIG && is_big_decimal(n)) {
			r = 0;
			if (n->str[0] == '-')
				r = buf_addch(out, '-');
			for (p = n->str; r == 0 && *p != '\0'; p++)
				if (*p >= '0' && *p <= '9')
					r = buf_addch(out, *p);
			return r;
		}
		if (r == ENVCTL_ETOOBIG)
			return err_setat(err, ENVCTL_EINVALID, n->path, n->line,
			    n->col, "integer '%s' is out of range", n->str);
		return err_setat(err, ENVCTL_EINVALID, n->path, n->line,
		    n->col, "invalid integer '%s'", n->str);
	case ENVCTL_YFLOAT:
		d = float_value(n);
		return yfloat_repr(out, d);
	case ENVCTL_YSTR:
		break;
	}
	return buf_add(out, n->str, n->len);
}

int
yscalar_text(struct buf *out, const struct ynode *n, struct err *err)
{
	size_t start = out->len;
	int r;

	if (n == NULL || n->type != ENVCTL_YSCALAR)
		return err_setat(err, ENVCTL_EINVALID, n ? n->path : NULL,
		    n ? n->line : 0, n ? n->col : 0,
		    "expected a scalar, got %s", ynode_describe(n));
	r = scalar_text(out, n, err);
	if (r == ENVCTL_ETOOBIG) {
		buf_truncate(out, start);
		return err_setat(err, r, n->path, n->line, n->col,
		    "value longer than %zu bytes", out->cap);
	}
	return r;
}

int
ynode_is_null(const struct ynode *n)
{
	return n == NULL || (n->type == ENVCTL_YSCALAR &&
	    yscalar_kind(n) == ENVCTL_YNULL);
}

int
ynode_is_string(const struct ynode *n)
{
	return n != NULL && n->type == ENVCTL_YSCALAR &&
	    yscalar_kind(n) == ENVCTL_YSTR;
}

const char *
ynode_describe(const struct ynode *n)
{
	if (n == NULL)
		return "nothing";
	switch (n->type) {
	case ENVCTL_YMAP:
		return "a mapping";
	case ENVCTL_YSEQ:
		return "a list";
	case ENVCTL_YSCALAR:
		break;
	}
	switch (yscalar_kind(n)) {
	case ENVCTL_YINT:
		return "an integer";
	case ENVCTL_YFLOAT:
		return "a float";
	case ENVCTL_YBOOL:
		return "a boolean";
	case ENVCTL_YNULL:
		return "null";
	case ENVCTL_YSTR:
		break;
	}
	return "a string";
}
