/* desired.c - a host's desired values and file (see desired.h). */
#include "desired.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/inventory.h"
#include "controller/pylit.h"
#include "controller/render.h"
#include "controller/template.h"
#include "controller/yamldoc.h"

/* Variables may refer to variables, as in Ansible; this bounds loops. */
#define MAX_DEPTH	16

struct lookup {
	const struct playbook *pb;
	const struct host *h;
	char		**strs;		/* values handed out, freed at the end */
	size_t		 nstrs, alloc;
	int		 depth;
	struct err	 why;		/* why a defined variable gave nothing */
};

static const char *
keep(struct lookup *l, struct buf *b)
{
	ENVCTL_GROW(l->strs, l->nstrs + 1, l->alloc);
	l->strs[l->nstrs] = buf_detach(b, NULL);
	return l->strs[l->nstrs++];
}

static int
has_tag(const struct ynode *n, const char *tag)
{
	return n->tag != NULL && strcmp(n->tag, tag) == 0;
}

static const char *lookup_var(void *ctx, const char *name);

/* Expands a variable's own value when it holds {{ }} (not when !unsafe). */
static int
expand_nested(struct lookup *l, const char *name, const struct ynode *n,
    struct buf *b)
{
	struct template_pos pos;
	struct buf x = ENVCTL_BUF_INIT;
	struct err e = ENVCTL_ERR_INIT;
	int r;

	if (has_tag(n, "!unsafe") || !template_has_syntax(b->data, b->len))
		return 0;
	if (l->depth >= MAX_DEPTH)
		return err_setat(&l->why, ENVCTL_EINVALID, n->path, n->line,
		    n->col, "variable '%s' refers to itself, or nests more "
		    "than %d deep", name, MAX_DEPTH);
	pos.path = n->path;
	pos.line = n->line;
	pos.col = n->col + (n->plain || n->tag != NULL ? 0 : 1);
	l->depth++;
	r = template_expand(&x, b->data, b->len, &pos, lookup_var, l, &e);
	l->depth--;
	if (r != 0) {
		if (l->why.code == 0)
			err_move(&l->why, &e);
		err_release(&e);
		buf_wipe(&x);
		return r;
	}
	buf_wipe(b);
	*b = x;
	return 0;
}

static const char *
lookup_var(void *ctx, const char *name)
{
	struct lookup *l = ctx;
	const struct ynode *n;
	struct buf b = ENVCTL_BUF_INIT;
	const char *dot;

	/* Magic variables, as in Ansible, cannot be overridden. */
	if (strcmp(name, "inventory_hostname") == 0)
		return l->h->name;
	if (strcmp(name, "inventory_hostname_short") == 0) {
		dot = strchr(l->h->name, '.');
		buf_add(&b, l->h->name, dot != NULL ?
		    (size_t)(dot - l->h->name) : strlen(l->h->name));
		return keep(l, &b);
	}
	if ((n = host_var(l->h, name)) == NULL &&
	    (n = ymap_get(l->pb->defaults, name)) == NULL)
		return NULL;
	if (l->why.code != 0)
		return NULL;
	if (n->type != ENVCTL_YSCALAR) {
		err_setat(&l->why, ENVCTL_EINVALID, n->path, n->line, n->col,
		    "variable '%s' is %s; only strings, numbers and booleans "
		    "can be used", name, ynode_describe(n));
		return NULL;
	}
	if (has_tag(n, "!vault")) {
		err_setat(&l->why, ENVCTL_EUNSUPPORTED, n->path, n->line,
		    n->col, "variable '%s' is vault-encrypted, which envctl "
		    "cannot decrypt", name);
		return NULL;
	}
	if (yscalar_text(&b, n, &l->why) != 0)
		goto fail;
	if (strlen(b.data) != b.len) {
		/* A C string cannot carry the value whole: refuse it. */
		err_setat(&l->why, ENVCTL_EINVALID, n->path, n->line, n->col,
		    "variable '%s' contains a NUL byte, which no environment "
		    "variable can hold", name);
		goto fail;
	}
	if (expand_nested(l, name, n, &b) != 0)
		goto fail;
	return keep(l, &b);
fail:
	buf_wipe(&b);
	return NULL;
}

int
desired_values(struct desired *d, const struct playbook *pb,
    const struct host *h, struct err *err)
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
	l.h = h;
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
		err_release(&l.why);
		rr = template_expand(&v, n->str, n->len, &pos, lookup_var, &l,
		    &e);
		if (rr != 0 && l.why.code != 0) {
			/* The variable's own problem, where it is defined. */
			char *msg = xasprintf("%s (used at %s:%d)", l.why.msg,
			    pb->path, n->line);

			free(l.why.msg);
			l.why.msg = msg;
			err_release(&e);
			err_move(&e, &l.why);
			rr = e.code;
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
	err_release(&l.why);
	for (i = 0; i < l.nstrs; i++)
		free(l.strs[i]);
	free(l.strs);
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
