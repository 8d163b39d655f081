/* yamldoc.c - a YAML file as a tree of nodes with positions (see yamldoc.h). */
#include "yamldoc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"

#define TAG_PREFIX	"tag:yaml.org,2002:"

struct frame {
	struct ynode	*node;
	struct ynode	*key;		/* mapping: key waiting for its value */
};

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
	struct anchor	*anchors;
	size_t		 nanchors, anchoralloc;
	int		 ndocs;
};

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

/* Adds (key, value) to pairs, a later key replacing an earlier's value. */
static void
pairs_put(struct ypair **pairs, size_t *n, size_t *alloc, struct ynode *key,
    struct ynode *value)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if (same_key((*pairs)[i].key, key)) {
			(*pairs)[i].value = value;
			return;
		}
	}
	ENVCTL_GROW(*pairs, *n + 1, *alloc);
	(*pairs)[*n].key = key;
	(*pairs)[*n].value = value;
	(*n)++;
}

/*
 * Applies merge keys as PyYAML's flatten_mapping does: merged pairs first
 * (of a list of mappings, earlier ones win), then the mapping's own pairs,
 * which win over everything merged.
 */
static int
map_finish(struct loader *l, struct ynode *map, struct err *err)
{
	struct ypair *out = NULL;
	size_t nout = 0, outalloc = 0, i, j, k;
	struct ynode *v, *m;
	int has_merge = 0;

	for (i = 0; i < map->npairs; i++) {
		if (is_merge_key(map->pairs[i].key)) {
			has_merge = 1;
			continue;
		}
		for (j = 0; j < i; j++) {
			if (!is_merge_key(map->pairs[j].key) &&
			    same_key(map->pairs[j].key, map->pairs[i].key))
				return err_setat(err, ENVCTL_EINVALID,
				    l->doc->path, map->pairs[i].key->line,
				    map->pairs[i].key->col,
				    "duplicate key '%s' (first at line %d)",
				    map->pairs[i].key->str,
				    map->pairs[j].key->line);
		}
	}
	if (!has_merge)
		return 0;
	for (i = 0; i < map->npairs; i++) {
		if (!is_merge_key(map->pairs[i].key))
			continue;
		v = map->pairs[i].value;
		if (v->type == ENVCTL_YMAP) {
			for (k = 0; k < v->npairs; k++)
				pairs_put(&out, &nout, &outalloc,
				    v->pairs[k].key, v->pairs[k].value);
			continue;
		}
		if (v->type != ENVCTL_YSEQ)
			goto bad;
		for (j = v->nitems; j-- > 0;) {
			m = v->items[j];
			if (m->type != ENVCTL_YMAP)
				goto bad;
			for (k = 0; k < m->npairs; k++)
				pairs_put(&out, &nout, &outalloc,
				    m->pairs[k].key, m->pairs[k].value);
		}
	}
	for (i = 0; i < map->npairs; i++)
		if (!is_merge_key(map->pairs[i].key))
			pairs_put(&out, &nout, &outalloc, map->pairs[i].key,
			    map->pairs[i].value);
	free(map->pairs);
	map->pairs = out;
	map->npairs = nout;
	map->alloc = outalloc;
	return 0;
bad:
	free(out);
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
	size_t i;

	if (l->depth == 0) {
		l->doc->root = n;
		return 0;
	}
	f = &l->stack[l->depth - 1];
	p = f->node;
	if (p->weight + n->weight > ENVCTL_YAML_MAX_NODES)
		return err_setat(err, ENVCTL_ETOOBIG, l->doc->path, n->line,
		    n->col, "more than %u nodes after expanding aliases",
		    ENVCTL_YAML_MAX_NODES);
	for (i = 0; i < l->depth; i++)
		l->stack[i].node->weight += n->weight;
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

static void
anchor_add(struct loader *l, const yaml_char_t *name, struct ynode *n)
{
	if (name == NULL)
		return;
	ENVCTL_GROW(l->anchors, l->nanchors + 1, l->anchoralloc);
	l->anchors[l->nanchors].name = xstrdup((const char *)name);
	l->anchors[l->nanchors].node = n;
	l->nanchors++;
}

static int
alias(struct loader *l, const yaml_event_t *ev, struct err *err)
{
	const char *name = (const char *)ev->data.alias.anchor;
	size_t i;

	/* The latest definition of a name wins, as YAML says. */
	for (i = l->nanchors; i-- > 0;) {
		if (strcmp(l->anchors[i].name, name) != 0)
			continue;
		if (l->anchors[i].node->open)
			return err_setat(err, ENVCTL_EINVALID, l->doc->path,
			    (int)ev->start_mark.line + 1,
			    (int)ev->start_mark.column + 1,
			    "alias '*%s' refers to a node that contains it",
			    name);
		return attach(l, l->anchors[i].node, err);
	}
	return err_setat(err, ENVCTL_EPARSE, l->doc->path,
	    (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
	    "undefined alias '*%s'", name);
}

static int
open_node(struct loader *l, enum ynode_type type, const yaml_event_t *ev,
    const yaml_char_t *anchor, const yaml_char_t *tag, struct err *err)
{
	struct ynode *n = node_new(l, type, &ev->start_mark);
	int r;

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
	n->plain = ev->data.scalar.plain_implicit && tag == NULL;
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
	for (i = 0; i < l.nanchors; i++)
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
	/* [0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?, or unsigned \.[0-9_]+... */
	if (*p >= '0' && *p <= '9')
		p += strspn(p, "0123456789_");
	else if (p != s || *p != '.' || p[1] == '\0' ||
	    strchr("0123456789_", p[1]) == NULL)
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

/* Python's repr() of a finite double: shortest round-trip digits. */
static void
float_repr(struct buf *out, double d)
{
	char digits[64], *e;
	int prec, exp10;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(digits, sizeof(digits), "%.*e", prec - 1, d);
		if (strtod(digits, NULL) == d)
			break;
	}
	e = strchr(digits, 'e');
	exp10 = (int)strtol(e + 1, NULL, 10);
	if (exp10 < -4 || exp10 >= 16) {
		/* Python prints 1e+16 and 1.5e-05: mantissa, sign, 2 digits. */
		*e = '\0';
		buf_addf(out, "%se%c%02d", digits, exp10 < 0 ? '-' : '+',
		    abs(exp10));
		return;
	}
	snprintf(digits, sizeof(digits), "%.*f",
	    prec - 1 - exp10 > 0 ? prec - 1 - exp10 : 0, d);
	buf_addstr(out, digits);
	if (strchr(digits, '.') == NULL)
		buf_addstr(out, ".0");
}

static int
float_value(const struct ynode *n, double *d)
{
	struct buf clean = ENVCTL_BUF_INIT;
	const char *p;
	double part, v = 0;
	int neg = 0;

	for (p = n->str; *p != '\0'; p++)
		if (*p != '_')
			buf_addch(&clean, *p);
	p = clean.data;
	if (strstr(p, "nan") || strstr(p, "NaN") || strstr(p, "NAN"))
		*d = NAN;
	else if (strstr(p, "inf") || strstr(p, "Inf") || strstr(p, "INF"))
		*d = p[0] == '-' ? -INFINITY : INFINITY;
	else if (strchr(p, ':') != NULL) {
		if (*p == '-' || *p == '+')
			neg = *p++ == '-';
		while (strchr(p, ':') != NULL) {
			v = v * 60 + strtod(p, NULL);
			p = strchr(p, ':') + 1;
		}
		part = strtod(p, NULL);
		*d = neg ? -(v * 60 + part) : v * 60 + part;
	} else
		*d = strtod(p, NULL);
	buf_release(&clean);
	return 0;
}

int
yscalar_text(struct buf *out, const struct ynode *n, struct err *err)
{
	long long v;
	double d;
	int b, r;

	if (n == NULL || n->type != ENVCTL_YSCALAR)
		return err_setat(err, ENVCTL_EINVALID, n ? n->path : NULL,
		    n ? n->line : 0, n ? n->col : 0, "expected a scalar, got %s",
		    ynode_describe(n));
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
		if (r == ENVCTL_ETOOBIG && strspn(n->str, "+-0123456789") ==
		    n->len) {
			/* A decimal too big for 64 bits prints as written. */
			return buf_addstr(out, n->str[0] == '+' ? n->str + 1 :
			    n->str);
		}
		return err_setat(err, ENVCTL_EINVALID, n->path, n->line,
		    n->col, "integer '%s' is out of range", n->str);
	case ENVCTL_YFLOAT:
		float_value(n, &d);
		if (isnan(d))
			return buf_addstr(out, "nan");
		if (isinf(d))
			return buf_addstr(out, d < 0 ? "-inf" : "inf");
		float_repr(out, d);
		return 0;
	case ENVCTL_YSTR:
		break;
	}
	return buf_add(out, n->str, n->len);
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
