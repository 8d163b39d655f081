/*
 * invbuild.h - how the inventory source readers feed one inventory.
 *
 * Private to the inventory modules: inventory.c drives, and each reader
 * (inv_yaml.c, inv_ini.c, inv_json.c) parses one source and calls these to
 * add groups, hosts, memberships, children and variables in the order
 * Ansible's plugin would; inventory.c resolves precedence once every
 * source is read.  Values, and the names given to the invb_*_var()
 * functions, must live as long as the inventory (they are kept, not
 * copied): a reader keeps them in ydocs it hands over with invb_keep().
 * Problems
 * are recorded with invb_error() and the reader goes on, so that one run
 * shows them all; the load fails when any was recorded.
 */
#ifndef ENVCTL_CONTROLLER_INVBUILD_H
#define ENVCTL_CONTROLLER_INVBUILD_H

#include <stddef.h>
#include <stdint.h>

struct invb;
struct ydoc;
struct ynode;

#define ENVCTL_INVB_NONE	SIZE_MAX
#define ENVCTL_INVB_ALL		0	/* group index of "all" */
#define ENVCTL_INVB_UNGROUPED	1	/* group index of "ungrouped" */

/* The path of the source being read, as given (for messages and nodes). */
const char *invb_path(const struct invb *b);
/* Takes ownership of doc: its nodes live until inventory_free(). */
void	invb_keep(struct invb *b, struct ydoc *doc);
/*
 * Records an error with code at at's path:line:col (at NULL: the source's
 * path alone).  invb_errorat() takes the position as numbers (0: none).
 */
void	invb_error(struct invb *b, int code, const struct ynode *at,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void	invb_errorat(struct invb *b, int code, int line, int col,
	    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Number of errors recorded so far for this source. */
size_t	invb_nerrors(const struct invb *b);
/*
 * 1 when an earlier source (a file read before this one, as in an
 * inventory directory) has defined group name, else 0.
 */
int	invb_group_known(const struct invb *b, const char *name);
/* The group named name (a non-empty string), added when new. */
size_t	invb_group(struct invb *b, const char *name);
/* Makes child a child group of parent; at is where it is written. */
void	invb_child(struct invb *b, size_t parent, size_t child,
	    const struct ynode *at);
/*
 * Sets variable name of group g; a later call for the same name replaces
 * an earlier one.  ansible_group_priority is consumed, as in Ansible: it
 * must read as int() and sets the group's priority.
 */
void	invb_group_var(struct invb *b, size_t g, const char *name,
	    const struct ynode *value);
/*
 * Adds the hosts of one host pattern ("gpu-[01:16]", "h:2222", "[::1]:22")
 * to group g as Ansible's _expand_hostpattern and add_host do: ranges are
 * expanded and a port sets ansible_port on a host seen for the first time.
 * Returns how many and sets *hosts to their indexes (caller frees); 0 with
 * *hosts NULL after recording an error at at.
 */
size_t	invb_hosts(struct invb *b, size_t g, const char *pattern,
	    const struct ynode *at, size_t **hosts);
/*
 * Adds the host named name, taken literally (no ranges, no port: Ansible's
 * script plugin), to group g; returns its index, or ENVCTL_INVB_NONE after
 * recording an error (past the host cap).
 */
size_t	invb_host(struct invb *b, size_t g, const char *name,
	    const struct ynode *at);
/* Sets variable name of host h; later calls replace earlier ones. */
void	invb_host_var(struct invb *b, size_t h, const char *name,
	    const struct ynode *value);

#endif
