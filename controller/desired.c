/* desired.c - a host's desired values and file (see desired.h). */
#include "desired.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/inventory.h"
#include "controller/pylit.h"
#include "controller/render.h"
#include "controller/template.h"
#include "controller/valrules.h"
#include "controller/yamldoc.h"

/* Scalars a value's expansion looked up, the latest kept. */
#define ORIGINS_MAX	16

/* What an opaque value stands for. */
enum opaque_kind {
	OPAQUE_HOSTVARS,	/* hostvars */
	OPAQUE_HOST,		/* hostvars['h'] */
	OPAQUE_GROUPS,		/* groups */
};

struct opaque {
	enum opaque_kind kind;
	const struct host *h;
};

/*
 * Where names resolve: a host's variables and magic variables, then, for
 * the host being rendered (not through hostvars), the playbook's defaults.
 */
struct scope {
	const struct host *h;
	int		 defaults;
};

struct lookup {
	const struct playbook *pb;
	const struct desired_fact *facts;	/* the host's, or NULL */
	size_t		 nfacts;
	struct scope	 self;
	struct opaque	 hostvars, groups;
	void		**kept;		/* scopes and opaques, freed at end */
	size_t		 nkept, akept;
	const struct ynode *origins[ORIGINS_MAX];	/* with a position */
	size_t		 norigins;
};

static void *
keep(struct lookup *l, size_t size)
{
	ENVCTL_GROW(l->kept, l->nkept + 1, l->akept);
	l->kept[l->nkept] = xcalloc(1, size);
	return l->kept[l->nkept++];
}

static const struct ynode *
str_node(struct ydoc *doc, const char *s, size_t len)
{
	return ydoc_add_scalar(doc, ENVCTL_YSTR, s, len, 0, 0);
}

/* Python's posixpath.normpath of an absolute path, into b. */
static void
normpath(struct buf *b, const char *path)
{
	const char *p = path, *e;
	size_t n, keep_len;

	buf_addch(b, '/');
	while (*p != '\0') {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n == 1 && p[0] == '.')
			;
		else if (n == 2 && p[0] == '.' && p[1] == '.') {
			keep_len = b->len > 1 ? b->len - 1 : 1;
			while (keep_len > 1 && b->data[keep_len - 1] != '/')
				keep_len--;
			buf_truncate(b, keep_len);
		} else {
			buf_add(b, p, n);
			buf_addch(b, '/');
		}
		p += n;
	}
	if (b->len > 1)
		buf_truncate(b, b->len - 1);
}

/* Ansible's inventory_file: the source's absolute, normalised path. */
static void
abs_inventory_file(struct buf *b, const struct host *h)
{
	struct buf abs = ENVCTL_BUF_INIT;
	char *cwd;

	if (h->file[0] != '/' && (cwd = getcwd(NULL, 0)) != NULL) {
		buf_addf(&abs, "%s/%s", cwd, h->file);
		free(cwd);
	} else
		buf_addstr(&abs, h->file);
	normpath(b, abs.data);
	buf_release(&abs);
}

/* The index of fact name, or l->nfacts. */
static size_t
fact_index(const struct lookup *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->nfacts; i++)
		if (strcmp(l->facts[i].name, name) == 0)
			return i;
	return l->nfacts;
}

static int
lookup_var(void *ctx, const void *scopep, const char *name, struct ydoc *doc,
    struct template_val *out, struct err *err)
{
	struct lookup *l = ctx;
	const struct scope *sc = scopep;
	const struct host *h = sc->h;
	struct buf b = ENVCTL_BUF_INIT;
	struct ynode *seq;
	const char *dot, *slash;
	size_t i;

	(void)err;
	memset(out, 0, sizeof(*out));
	out->kind = ENVCTL_TVAL_NODE;
	out->scope = sc;
	/* Magic variables, as in Ansible, cannot be overridden. */
	if (strcmp(name, "inventory_hostname") == 0)
		out->node = str_node(doc, h->name, strlen(h->name));
	else if (strcmp(name, "inventory_hostname_short") == 0) {
		dot = strchr(h->name, '.');
		out->node = str_node(doc, h->name, dot != NULL ?
		    (size_t)(dot - h->name) : strlen(h->name));
	} else if (strcmp(name, "group_names") == 0) {
		seq = ydoc_add_node(doc, ENVCTL_YSEQ, 0, 0);
		for (i = 0; i < host_ngroups(h); i++)
			yseq_append(seq, (struct ynode *)str_node(doc,
			    host_group(h, i), strlen(host_group(h, i))));
		out->node = seq;
	} else if (strcmp(name, "groups") == 0) {
		out->kind = ENVCTL_TVAL_OPAQUE;
		out->opaque = &l->groups;
	} else if (strcmp(name, "hostvars") == 0) {
		out->kind = ENVCTL_TVAL_OPAQUE;
		out->opaque = &l->hostvars;
	} else if (strcmp(name, "inventory_file") == 0 && h->file != NULL) {
		abs_inventory_file(&b, h);
		out->node = str_node(doc, b.data, b.len);
	} else if (strcmp(name, "inventory_dir") == 0 && h->file != NULL) {
		abs_inventory_file(&b, h);
		slash = strrchr(b.data, '/');
		out->node = str_node(doc, b.data, slash > b.data ?
		    (size_t)(slash - b.data) : 1);
	} else if (sc == &l->self && (i = fact_index(l, name)) < l->nfacts) {
		/* Facts win over inventory variables, as Ansible's do. */
		out->node = str_node(doc, l->facts[i].value,
		    strlen(l->facts[i].value));
	} else if ((out->node = host_var(h, name)) == NULL && sc->defaults)
		out->node = ymap_get(l->pb->defaults, name);
	if (out->kind == ENVCTL_TVAL_NODE && out->node == NULL)
		out->kind = ENVCTL_TVAL_UNDEFINED;
	else if (out->kind == ENVCTL_TVAL_NODE &&
	    out->node->type == ENVCTL_YSCALAR && out->node->line > 0 &&
	    out->node->path != NULL) {
		if (l->norigins == ORIGINS_MAX) {
			memmove(l->origins, l->origins + 1,
			    (ORIGINS_MAX - 1) * sizeof(l->origins[0]));
			l->norigins--;
		}
		l->origins[l->norigins++] = out->node;
	}
	buf_release(&b);
	return 0;
}

/*
 * The scalar whose text is the whole value, latest first: the line an
 * operator edits to change it.  NULL when the value is built from several
 * pieces or comes from the playbook's own text.
 */
static const struct ynode *
value_origin(const struct lookup *l, const char *value, size_t len)
{
	const struct ynode *n;
	size_t i;

	for (i = l->norigins; i > 0; i--) {
		n = l->origins[i - 1];
		if (n->len == len && memcmp(n->str, value, len) == 0 &&
		    !template_has_syntax(n->str, n->len))
			return n;
	}
	return NULL;
}

/*
 * A version or compute capability: the host's facts (gpufacts.h) tell it,
 * else h or the playbook's defaults set it.
 */
static int
host_fact(const struct lookup *l, const struct playbook *pb,
    const struct host *h, const char *name, unsigned *out, struct err *err)
{
	const struct ynode *n;
	struct err e = ENVCTL_ERR_INIT;
	size_t i;
	unsigned v;

	*out = 0;
	if ((i = fact_index(l, name)) < l->nfacts) {
		if (valrules_parse_version(&v, l->facts[i].value, &e) == 0) {
			*out = v;
			return 0;
		}
		/* The host said something else: the rules do without. */
		err_release(&e);
		return 0;
	}
	if ((n = host_var(h, name)) == NULL && pb->defaults != NULL)
		n = ymap_get(pb->defaults, name);
	if (n == NULL || (n->type == ENVCTL_YSCALAR &&
	    yscalar_kind(n) == ENVCTL_YNULL))
		return 0;
	if (n->type != ENVCTL_YSCALAR ||
	    valrules_parse_version(&v, n->str, &e) != 0) {
		if (e.code == 0)
			err_set(&e, ENVCTL_EINVALID, "'%s' must be a version "
			    "string, not %s", name, ynode_describe(n));
		else
			err_context(&e, "%s", name);
		err_setpos(&e, n->path, n->line, n->col);
		err_sethost(&e, h->name);
		err_move(err, &e);
		return ENVCTL_EINVALID;
	}
	*out = v;
	return 0;
}

/* What h is known to load: the value rules' context. */
static int
rules_ctx(struct valrules_ctx *c, const struct lookup *l,
    const struct playbook *pb, const struct host *h, struct err *err)
{
	unsigned cc;
	int r = 0;

	memset(c, 0, sizeof(*c));
	if (host_fact(l, pb, h, "envctl_nccl_version", &c->nccl_version,
	    err) != 0)
		r = ENVCTL_EINVALID;
	if (host_fact(l, pb, h, "envctl_triton_version", &c->triton_version,
	    err) != 0)
		r = ENVCTL_EINVALID;
	/* nvidia-smi's compute_cap, "12.0": sm_120. */
	if (host_fact(l, pb, h, "envctl_gpu_compute_cap", &cc, err) != 0)
		r = ENVCTL_EINVALID;
	else if (cc != 0)
		c->gpu_sm = (int)(cc / 10000 * 10 + cc / 100 % 100);
	return r;
}

/*
 * Judges d->vars[i] (set) with the value rules; an error frees the value
 * and is chained into err at the value's origin, warnings into d.
 */
static int
judge_value(struct desired *d, size_t i, const struct playbook *pb,
    const struct host *h, const struct valrules_ctx *rc,
    const struct lookup *l, struct err *err)
{
	struct valrules_result res = ENVCTL_VALRULES_RESULT_INIT;
	struct valrules_value v;
	struct err e = ENVCTL_ERR_INIT;
	const struct ynode *n = pb->env[i].value, *o;
	const char *path = pb->path;
	size_t j;
	int r, line = n->line;
	int col = n->col + (n->plain || n->tag != NULL ? 0 : 1);

	v.name = d->vars[i].name;
	v.value = d->vars[i].value;
	v.secret = d->vars[i].secret;
	v.custom = pb->env[i].rule;
	if ((o = value_origin(l, v.value, strlen(v.value))) != NULL) {
		path = o->path;
		line = o->line;
		col = o->col;
	}
	r = valrules_check(&res, rc, &v, &e);
	for (j = 0; j < res.n; j++)
		if (res.items[j].severity == ENVCTL_VALRULE_WARNING)
			err_addat(&d->warnings, ENVCTL_EINVALID, path, line,
			    col, "warning: %s", res.items[j].msg);
	err_sethost(&d->warnings, h->name);
	if (r != 0) {
		err_setpos(&e, path, line, col);
		err_sethost(&e, h->name);
		err_move(err, &e);
		if (d->vars[i].secret)
			explicit_wipe(d->vars[i].value,
			    strlen(d->vars[i].value));
		free(d->vars[i].value);
		d->vars[i].value = NULL;
	}
	valrules_result_release(&res);
	return r;
}

static int
lookup_item(void *ctx, const void *opaquep, const char *key,
    struct ydoc *doc, struct template_val *out, struct err *err)
{
	struct lookup *l = ctx;
	const struct opaque *o = opaquep;
	const struct inventory *inv = l->self.h->inv;
	const struct host **hosts = NULL, *h;
	struct opaque *ho;
	struct scope *sc;
	struct ynode *seq;
	size_t n, i;
	int r = 0;

	memset(out, 0, sizeof(*out));
	out->kind = ENVCTL_TVAL_UNDEFINED;
	switch (o->kind) {
	case OPAQUE_HOSTVARS:
		if ((h = inventory_find(inv, key)) == NULL)
			break;
		ho = keep(l, sizeof(*ho));
		ho->kind = OPAQUE_HOST;
		ho->h = h;
		out->kind = ENVCTL_TVAL_OPAQUE;
		out->opaque = ho;
		break;
	case OPAQUE_HOST:
		/* That host's scope: its own variables, no play defaults. */
		sc = keep(l, sizeof(*sc));
		sc->h = o->h;
		r = lookup_var(l, sc, key, doc, out, err);
		if (out->kind == ENVCTL_TVAL_NODE)
			out->keep_raw = 1;
		break;
	case OPAQUE_GROUPS:
		if (!inventory_has_group(inv, key))
			break;
		n = inventory_group_hosts(inv, key, &hosts);
		seq = ydoc_add_node(doc, ENVCTL_YSEQ, 0, 0);
		for (i = 0; i < n; i++)
			yseq_append(seq, (struct ynode *)str_node(doc,
			    hosts[i]->name, strlen(hosts[i]->name)));
		out->kind = ENVCTL_TVAL_NODE;
		out->node = seq;
		break;
	}
	free(hosts);
	return r;
}

static const struct template_ops lookup_ops = { lookup_var, lookup_item };

int
desired_values(struct desired *d, const struct playbook *pb,
    const struct host *h, struct err *err)
{
	return desired_values_facts(d, pb, h, NULL, 0, err);
}

int
desired_values_facts(struct desired *d, const struct playbook *pb,
    const struct host *h, const struct desired_fact *facts, size_t nfacts,
    struct err *err)
{
	struct lookup l;
	struct valrules_ctx rc;
	struct template_pos pos;
	struct err e = ENVCTL_ERR_INIT;
	struct buf v = ENVCTL_BUF_INIT, lit = ENVCTL_BUF_INIT;
	const struct ynode *n;
	size_t i;
	int r = 0, rr;

	memset(d, 0, sizeof(*d));
	buf_init(&d->content, 0);
	memset(&l, 0, sizeof(l));
	l.pb = pb;
	l.facts = facts;
	l.nfacts = nfacts;
	l.self.h = h;
	l.self.defaults = 1;
	l.hostvars.kind = OPAQUE_HOSTVARS;
	l.groups.kind = OPAQUE_GROUPS;
	d->vars = xcalloc(pb->nenv, sizeof(*d->vars));
	d->nvars = pb->nenv;
	r = rules_ctx(&rc, &l, pb, h, err);
	for (i = 0; i < pb->nenv; i++) {
		n = pb->env[i].value;
		d->vars[i].name = pb->env[i].name;
		d->vars[i].secret = pb->env[i].secret;
		d->vars[i].check = pb->env[i].check;
		pos.path = pb->path;
		pos.line = n->line;
		/* Quoted scalars start one column after their quote. */
		pos.col = n->col + (n->plain || n->tag != NULL ? 0 : 1);
		buf_reset(&v);
		l.norigins = 0;
		rr = template_expand(&v, n->str, n->len, &pos, &lookup_ops,
		    &l, &l.self, &e);
		if (rr == 0 && strlen(v.data) != v.len) {
			/* A C string cannot carry the value whole. */
			rr = err_setat(&e, ENVCTL_EINVALID, pb->path, n->line,
			    n->col, "value of '%s' contains a NUL byte, which "
			    "no environment variable can hold",
			    pb->env[i].name);
		}
		if (rr != 0) {
			err_sethost(&e, h->name);
			err_move(err, &e);
			if (r == 0)
				r = rr;
			continue;
		}
		/* Refuse what cannot become a literal where it was written. */
		buf_reset(&lit);
		if ((rr = pylit_quote(&lit, v.data, v.len, &e)) != 0) {
			err_setpos(&e, pb->path, n->line, n->col);
			err_context(&e, "value of '%s'", pb->env[i].name);
			err_sethost(&e, h->name);
			err_move(err, &e);
			if (r == 0)
				r = rr;
			continue;
		}
		d->vars[i].value = buf_detach(&v, NULL);
		if ((rr = judge_value(d, i, pb, h, &rc, &l, err)) != 0 &&
		    r == 0)
			r = rr;
	}
	for (i = 0; i < l.nkept; i++)
		free(l.kept[i]);
	free(l.kept);
	buf_wipe(&v);
	buf_wipe(&lit);
	return r;
}

int
desired_render(struct desired *d, const struct playbook *pb,
    const struct host *h, const char *cur, size_t curlen,
    const char *cur_label, struct err *err)
{
	int r;

	if ((r = desired_values(d, pb, h, err)) != 0)
		return r;
	return desired_content(d, pb, h, cur, curlen, cur_label, err);
}

int
desired_content(struct desired *d, const struct playbook *pb,
    const struct host *h, const char *cur, size_t curlen,
    const char *cur_label, struct err *err)
{
	struct render_var *rv;
	struct buf code = ENVCTL_BUF_INIT;
	size_t i;
	int r;

	buf_reset(&d->content);
	rv = xcalloc(d->nvars, sizeof(*rv));
	for (i = 0; i < d->nvars; i++) {
		rv[i].name = d->vars[i].name;
		rv[i].value = d->vars[i].value;
		rv[i].comment = pb->env[i].comment;
	}
	r = render_env_code(&code, rv, d->nvars, pb->policy, err);
	if (r == 0 && pb->mode == ENVCTL_MODE_FILE)
		r = render_file(&d->content, pb->template.data,
		    pb->template.len, pb->template_path, code.data, code.len,
		    err);
	else if (r == 0)
		r = render_block(&d->content, cur != NULL ? cur : "",
		    cur != NULL ? curlen : 0, cur_label, pb->name, code.data,
		    code.len, err);
	if (r != 0)
		err_sethost(err, h->name);
	free(rv);
	buf_release(&code);
	return r;
}

void
desired_release(struct desired *d)
{
	size_t i;

	for (i = 0; i < d->nvars; i++) {
		if (d->vars[i].value != NULL && d->vars[i].secret)
			explicit_wipe(d->vars[i].value,
			    strlen(d->vars[i].value));
		free(d->vars[i].value);
	}
	free(d->vars);
	buf_wipe(&d->content);
	err_release(&d->warnings);
	memset(d, 0, sizeof(*d));
}
