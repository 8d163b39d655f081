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

struct lookup {
	const struct playbook *pb;
	const struct host *h;
	char		**strs;		/* values handed out, freed at the end */
	size_t		 nstrs, alloc;
	char		*nonscalar;	/* a variable that is no scalar */
	char		*nul;		/* a variable holding a NUL byte */
	const struct ynode *bad;	/* where that variable is defined */
};

static const char *
keep(struct lookup *l, struct buf *b)
{
	ENVCTL_GROW(l->strs, l->nstrs + 1, l->alloc);
	l->strs[l->nstrs] = buf_detach(b, NULL);
	return l->strs[l->nstrs++];
}

static const char *
lookup_var(void *ctx, const char *name)
{
	struct lookup *l = ctx;
	const struct ynode *n;
	struct buf b = ENVCTL_BUF_INIT;
	const char *dot;

	n = host_var(l->h, name);
	if (n == NULL)
		n = ymap_get(l->pb->defaults, name);
	if (n == NULL) {
		if (strcmp(name, "inventory_hostname") == 0)
			return l->h->name;
		if (strcmp(name, "inventory_hostname_short") == 0) {
			dot = strchr(l->h->name, '.');
			buf_add(&b, l->h->name, dot != NULL ?
			    (size_t)(dot - l->h->name) : strlen(l->h->name));
			return keep(l, &b);
		}
		return NULL;
	}
	if (n->type != ENVCTL_YSCALAR) {
		free(l->nonscalar);
		l->nonscalar = xstrdup(name);
		l->bad = n;
		return NULL;
	}
	if (yscalar_text(&b, n, NULL) != 0 || strlen(b.data) != b.len) {
		/* A C string cannot carry the value whole: refuse it. */
		if (strlen(b.data) != b.len) {
			free(l->nul);
			l->nul = xstrdup(name);
			l->bad = n;
		}
		buf_release(&b);
		return NULL;
	}
	return keep(l, &b);
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
		free(l.nonscalar);
		free(l.nul);
		l.nonscalar = l.nul = NULL;
		rr = template_expand(&v, n->str, n->len, &pos, lookup_var, &l,
		    &e);
		if (rr == ENVCTL_EUNDEFINED && l.nonscalar != NULL)
			rr = err_setat(&e, ENVCTL_EINVALID, l.bad->path,
			    l.bad->line, l.bad->col, "variable '%s' is %s; only "
			    "strings, numbers and booleans can be used (in "
			    "%s:%d)", l.nonscalar, ynode_describe(l.bad),
			    pb->path, n->line);
		else if (rr == ENVCTL_EUNDEFINED && l.nul != NULL)
			rr = err_setat(&e, ENVCTL_EINVALID, l.bad->path,
			    l.bad->line, l.bad->col, "variable '%s' contains a "
			    "NUL byte, which no environment variable can hold "
			    "(in %s:%d)", l.nul, pb->path, n->line);
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
	free(l.nonscalar);
	free(l.nul);
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
	struct render_var *rv;
	struct buf code = ENVCTL_BUF_INIT;
	size_t i;
	int r;

	if ((r = desired_values(d, pb, h, err)) != 0)
		return r;
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
