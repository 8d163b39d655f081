/*
 * desired.h - what one host's sitecustomize.py must say.
 *
 * Expands a playbook's value templates (template.h) with one host's
 * variables: the magic ones (inventory_hostname, _short, group_names,
 * groups, inventory_file, inventory_dir, hostvars), then host and group
 * vars by Ansible precedence, then the playbook's defaults; and renders the
 * file: the whole template in mode: file, or the current file with its
 * envctl block spliced in for mode: block.  No I/O (inventory_file reads
 * the working directory for a relative inventory path), no global state.
 */
#ifndef ENVCTL_CONTROLLER_DESIRED_H
#define ENVCTL_CONTROLLER_DESIRED_H

#include <stddef.h>

#include "common/buf.h"
#include "controller/playbook.h"

struct err;
struct host;

struct desired_var {
	const char	*name;		/* borrowed from the playbook */
	char		*value;
	int		 secret;
	enum playbook_check check;
};

/* A host fact as a template variable (envctl_gpu_count...); borrowed. */
struct desired_fact {
	const char	*name;
	const char	*value;
};

struct desired {
	struct desired_var *vars;	/* in playbook order */
	size_t		 nvars;
	struct buf	 content;	/* the file to install */
};

/*
 * Expands every env value for host h into d->vars.  Every failing value
 * is reported (template_expand()'s codes, chained; a failed value stays
 * NULL), each naming the host and path:line:col.  d is filled even on
 * error so that callers may look; release it with desired_release().
 */
int	desired_values(struct desired *d, const struct playbook *pb,
	    const struct host *h, struct err *err);
/*
 * Renders d->content from d's values (desired_values() done) and the
 * current file: cur may be NULL when the host has none; cur_label names it
 * in block-marker errors.
 */
int	desired_content(struct desired *d, const struct playbook *pb,
	    const struct host *h, const char *cur, size_t curlen,
	    const char *cur_label, struct err *err);
/*
 * desired_values() with the host's facts (gpufacts.h) as variables of the
 * host being rendered, above its inventory variables, as Ansible's facts
 * are; facts may be NULL when n is 0.
 */
int	desired_values_facts(struct desired *d, const struct playbook *pb,
	    const struct host *h, const struct desired_fact *facts, size_t n,
	    struct err *err);
/* desired_values, then desired_content. */
int	desired_render(struct desired *d, const struct playbook *pb,
	    const struct host *h, const char *cur, size_t curlen,
	    const char *cur_label, struct err *err);
void	desired_release(struct desired *d);

#endif
