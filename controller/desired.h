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
 * Each value is then judged by the value rules of NCCL and Triton
 * (valrules.h) and the playbook's rule:, before anything is rendered.
 */
#ifndef ENVCTL_CONTROLLER_DESIRED_H
#define ENVCTL_CONTROLLER_DESIRED_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "controller/playbook.h"

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
	/*
	 * Value-rule warnings, chained as errors are (code ENVCTL_EINVALID)
	 * so that err_format() prints them: host, path:line:col, and a
	 * message that starts "warning: ".  They fail nothing.
	 */
	struct err	 warnings;
};

/*
 * Expands every env value for host h into d->vars and judges it with the
 * value rules, for the NCCL and Triton versions and GPU that h's
 * envctl_nccl_version, envctl_triton_version and envctl_gpu_compute_cap
 * give (unknown when unset: the strictest rules).  Every failing value is
 * reported (template_expand()'s codes, ENVCTL_EINVALID for a rule,
 * chained; a failed value stays NULL), each naming the host and
 * path:line:col: that of the inventory or defaults line whose text is the
 * whole final value when one variable supplies it, else the playbook's
 * value.  Warnings go to d->warnings.  d is filled even on error so that
 * callers may look; release it with desired_release().
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
