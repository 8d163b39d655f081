/*
 * inv_json.h - the JSON inventory format: dynamic inventory scripts and
 * ansible-inventory --list / --host.
 *
 * The reader feeds the builder (invbuild.h) as Ansible 2.14's script
 * plugin reads a script's output: top-level groups with "hosts" (a list
 * of literal names), "vars" (a mapping) and "children" (a list), a group
 * given as a bare list of hosts, or as a mapping with none of those keys
 * (a host of the group's name, the mapping its group variables), and
 * _meta.hostvars.  JSON values become ynodes of the JSON type; jansson's
 * errors are mapped here only.  The writers print what envctl resolved in
 * exactly the shapes ansible-inventory prints (json.dumps with indent=4,
 * sort_keys, ensure_ascii off), so the two can be diffed.
 */
#ifndef ENVCTL_CONTROLLER_INV_JSON_H
#define ENVCTL_CONTROLLER_INV_JSON_H

#include <stddef.h>

struct buf;
struct err;
struct host;
struct inventory;
struct invb;
struct ynode;

/* The hosts whose variables must be asked for with PROGRAM --host NAME. */
struct inv_json_hosts {
	char	**names;
	size_t	 *index;	/* the builder's host indexes */
	size_t	  n;
	size_t	  alloc;
};

void	inv_json_hosts_release(struct inv_json_hosts *need);
/*
 * Reads a --list document (text, len bytes) into b.  origin is NULL when
 * text is the file invb_path(b) itself (errors at path:line:col), else
 * what printed it ("--list"), named in messages.  When the document has
 * no _meta.hostvars, every host it lists is appended to need (first-seen
 * order, each once) for the caller to ask with --host; with need NULL
 * they get no variables of their own.  Problems are recorded in b;
 * returns 0 or the first one's code: ENVCTL_EPARSE (not JSON),
 * ENVCTL_EINVALID (structure, types, names), ENVCTL_EUNSUPPORTED (a
 * number or host name envctl cannot take as Ansible does),
 * ENVCTL_ETOOBIG (size, nesting, values).
 */
int	inv_json_read(struct invb *b, const char *text, size_t len,
	    const char *origin, struct inv_json_hosts *need);
/*
 * A vars file as Ansible's loader reads one, JSON first: 1 when text is
 * not JSON (read it as YAML), else 0 with *root its value (nodes kept by
 * b), or the code of the problem recorded in b (a number Python reads and
 * envctl cannot: NaN, Infinity, an integer past 64 bits).
 */
int	inv_json_vars(struct invb *b, const char *text, size_t len,
	    struct ynode **root);
/*
 * Reads the output of --host name (a JSON object of variables) as the
 * variables of host h.  Codes as inv_json_read.
 */
int	inv_json_read_host(struct invb *b, size_t h, const char *name,
	    const char *text, size_t len);

/*
 * Appends ansible-inventory --list's JSON for inv: every group reached
 * from all with its non-empty "children" and "hosts" (none for all), and
 * _meta.hostvars with each host's variables less the ones
 * ansible-inventory removes, hosts without any left out.  selected (one
 * flag per host; NULL: all) limits the hosts shown.  Values are printed
 * untemplated.  Returns 0, or ENVCTL_EUNSUPPORTED for a value JSON cannot
 * show as Ansible would (non-string key, bytes not UTF-8, a value envctl
 * cannot use), naming host and variable, or ENVCTL_ETOOBIG past out's cap.
 */
int	inv_json_write_list(struct buf *out, const struct inventory *inv,
	    const unsigned char *selected, struct err *err);
/* Appends ansible-inventory --host's JSON for h; codes as above. */
int	inv_json_write_host(struct buf *out, const struct host *h,
	    struct err *err);
/*
 * The hosts ansible-inventory lists under group g (g < inventory_ngroups):
 * its own, as Ansible reconciles ungrouped, none for all; only selected
 * ones (NULL: all).  Returns how many and sets *out (caller frees).
 */
size_t	inv_json_group_hosts(const struct inventory *inv, size_t g,
	    const unsigned char *selected, const struct host ***out);
/*
 * 1 when ansible-inventory leaves variable name out of what it prints
 * (the names Ansible itself sets: inventory_file, groups, omit...).
 */
int	inv_json_internal_var(const char *name);

#endif
