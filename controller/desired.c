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
#include "controller/yamldoc.h"

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
	buf_release(&b);
	return 0;
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
	memset(d, 0, sizeof(*d));
}
