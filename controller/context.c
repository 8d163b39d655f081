/* context.c - load inventory, limit and playbook (see context.h). */
#include "context.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/hostpattern.h"
#include "controller/inventory.h"
#include "controller/playbook.h"
#include "controller/yamldoc.h"

/* The envctl_playbook inventory variable, the same on every selected host. */
static int
inventory_playbook(const struct context *ctx, const char **out,
    struct err *err)
{
	const struct ynode *n, *first = NULL;
	const struct host *h, *first_host = NULL;
	size_t i;

	*out = NULL;
	for (i = 0; i < inventory_nhosts(ctx->inv); i++) {
		if (!ctx->selected[i])
			continue;
		h = inventory_host(ctx->inv, i);
		n = host_var(h, "envctl_playbook");
		if (n != NULL && (n->type != ENVCTL_YSCALAR ||
		    yscalar_kind(n) != ENVCTL_YSTR))
			return err_setat(err, ENVCTL_EINVALID, n->path,
			    n->line, n->col, "envctl_playbook must be a "
			    "string, not %s", ynode_describe(n));
		if (first_host == NULL) {
			first_host = h;
			first = n;
			continue;
		}
		if ((n == NULL) != (first == NULL) || (n != NULL &&
		    strcmp(n->str, first->str) != 0))
			return err_set(err, ENVCTL_EINVALID, "envctl_playbook "
			    "differs between hosts '%s' (%s) and '%s' (%s); "
			    "use --limit or -p", first_host->name,
			    first != NULL ? first->str : "unset", h->name,
			    n != NULL ? n->str : "unset");
	}
	if (first != NULL)
		*out = first->str;
	return 0;
}

int
context_load(struct context *ctx, const char *inventory,
    const char *playbook, const char *limit, struct err *err)
{
	const char *name = playbook;
	char *path = NULL, *copy = NULL, *base = NULL;
	int r;

	if ((r = inventory_load(&ctx->inv, inventory, err)) != 0)
		return r;
	ctx->selected = xcalloc(inventory_nhosts(ctx->inv) + 1, 1);
	if ((r = hostpattern_select(ctx->inv, limit, ctx->selected,
	    &ctx->nselected, err)) != 0)
		return r;
	if (name == NULL) {
		if ((r = inventory_playbook(ctx, &name, err)) != 0)
			return r;
		if (name != NULL) {
			copy = xstrdup(inventory);
			base = dirname(copy);
		} else
			name = ENVCTL_DEFAULT_PLAYBOOK;
	}
	if ((r = playbook_find(&path, name, base, err)) == 0)
		r = playbook_load(&ctx->pb, path, err);
	free(path);
	free(copy);
	return r;
}

void
context_release(struct context *ctx)
{
	inventory_free(ctx->inv);
	playbook_free(ctx->pb);
	free(ctx->selected);
	memset(ctx, 0, sizeof(*ctx));
}
