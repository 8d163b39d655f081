/*
 * inventory.h - Ansible inventories: hosts, groups, variables.
 *
 * inventory_load() reads an inventory as ansible-inventory would: a YAML
 * or INI file (told apart by content, as Ansible's plugins try them), the
 * JSON of a dynamic inventory, an executable script, or a directory of
 * these, with the group_vars/ and host_vars/ folders beside it, and
 * resolves every host's variables with Ansible's precedence, so a host
 * holds its final values.  Hosts keep first-seen order, which is output
 * order.  Names and ynodes returned are borrowed from the inventory and
 * live until inventory_free().  After load the inventory is read-only and
 * may be read from many threads at once.
 */
#ifndef ENVCTL_CONTROLLER_INVENTORY_H
#define ENVCTL_CONTROLLER_INVENTORY_H

#include <stddef.h>

struct err;
struct ynode;
struct inventory;
struct hvar;

/* Most interpreters (or services) one host may list. */
#define ENVCTL_MAX_INTERPRETERS	16
/* Most hosts one inventory may hold once ranges are expanded. */
#define ENVCTL_INVENTORY_MAX_HOSTS	100000u

struct host {
	char		*name;		/* inventory_hostname */
	size_t		 index;		/* position in inventory order */
	const struct inventory *inv;	/* the inventory holding it */
	const char	*file;		/* inventory_file: first to name it */
	/* Connection settings, type-checked after precedence. */
	const char	*address;	/* ansible_host, else name */
	int		 address_set;	/* ansible_host given: beats ssh_config */
	int		 port;		/* ansible_port; 0 = not set */
	const char	*user;		/* ansible_user; NULL = not set */
	const char	*key_file;	/* ansible_ssh_private_key_file */
	int		 become;	/* ansible_become (sudo -n) */
	const char	*become_user;	/* ansible_become_user; NULL: root */
	const char	*python;	/* NULL when unset or auto* */
	/*
	 * envctl_interpreters, else python as a list of one; n = 0 when
	 * neither is set (the playbook's then).  Borrowed strings.
	 */
	const char	**interpreters;
	size_t		 ninterpreters;
	/* envctl_services, or n = 0 (the playbook's services:). */
	const char	**services;
	size_t		 nservices;
	int		 local;		/* ansible_connection: local */
	const char	*ssh_common_args; /* raw, NULL = not set */
	/* private */
	struct ynode	*vault;		/* a vaulted file may set variables */
	size_t		 vault_rank;	/* below this rank they are unknown */
	struct hvar	*vars;		/* resolved, sorted by name */
	size_t		 nvars;
	const char	**groups;	/* group_names: sorted, without all */
	size_t		 ngroups;
};

/*
 * Loads the YAML inventory at path into *out (free with inventory_free).
 * Reports every problem found, chained in err, and returns the first code:
 * ENVCTL_EPARSE (YAML), ENVCTL_EINVALID (structure, names, ranges, types,
 * group cycles, no hosts), ENVCTL_EUNSUPPORTED (connection plugin,
 * templated or vaulted connection variable), ENVCTL_ETOOBIG, and
 * ydoc_load_file()'s ENVCTL_ENOTFOUND / ENVCTL_ESYS.
 */
int	inventory_load(struct inventory **out, const char *path,
	    struct err *err);
/* As inventory_load on text; label names it in messages. */
int	inventory_load_string(struct inventory **out, const char *text,
	    size_t len, const char *label, struct err *err);
void	inventory_free(struct inventory *inv);

/* The path (or label) the inventory was loaded from. */
const char *inventory_path(const struct inventory *inv);
/*
 * SHA-256 (hex) over every file read (inventory files, vars files, script
 * output) with its path: equal digests mean envctl read the same inputs.
 */
const char *inventory_digest(const struct inventory *inv);
/* The files read, in the order read (i < inventory_nfiles()). */
size_t	inventory_nfiles(const struct inventory *inv);
const char *inventory_file(const struct inventory *inv, size_t i);
size_t	inventory_nhosts(const struct inventory *inv);
/* Host i in inventory order (i < inventory_nhosts()). */
const struct host *inventory_host(const struct inventory *inv, size_t i);
/* The host named name, or NULL. */
const struct host *inventory_find(const struct inventory *inv,
	    const char *name);
/* Groups in first-seen order; 0 is "all", 1 is "ungrouped". */
size_t	inventory_ngroups(const struct inventory *inv);
const char *inventory_group(const struct inventory *inv, size_t i);
/* Returns 1 when a group of that name exists (all, ungrouped too), else 0. */
int	inventory_has_group(const struct inventory *inv, const char *name);
/*
 * Ansible's groups[name]: the hosts of group name and of its descendants,
 * its own first, then its children's level by level, each once.  Returns
 * how many and sets *out (caller frees the array; hosts are borrowed), or
 * returns 0 with *out NULL when there is no such group.
 */
size_t	inventory_group_hosts(const struct inventory *inv, const char *name,
	    const struct host ***out);
/*
 * The hosts listed directly in group i (i < inventory_ngroups()), in the
 * order they were first added to it, as ansible-inventory --list prints a
 * group's "hosts".  Returns how many and sets *out as above.
 */
size_t	inventory_group_members(const struct inventory *inv, size_t i,
	    const struct host ***out);
/* The child groups of group i, as group indexes, in the order declared. */
size_t	inventory_group_nchildren(const struct inventory *inv, size_t i);
size_t	inventory_group_child(const struct inventory *inv, size_t i,
	    size_t n);

/*
 * The value of variable name for h after Ansible's precedence (host_vars/,
 * the host's own, group_vars/ of its groups, group_vars/all, its groups in
 * the inventory by depth, priority and name, then all); NULL when nothing
 * sets it.  When a vault-encrypted vars file applies to h, a variable not
 * set above that file gets a scalar tagged ENVCTL_YTAG_UNUSABLE saying so.
 * Print scalars with yscalar_text().
 */
const struct ynode *host_var(const struct host *h, const char *name);
/* Variable i of h in name order (i < host_nvars()); *name gets its name. */
size_t	host_nvars(const struct host *h);
const struct ynode *host_var_at(const struct host *h, size_t i,
	    const char **name);
/*
 * Ansible's group_names: every group h belongs to, directly or through a
 * child group, sorted by name, without "all"; "ungrouped" when h is in no
 * other group.
 */
size_t	host_ngroups(const struct host *h);
const char *host_group(const struct host *h, size_t i);
/* Returns 1 when h is in group (directly or through a child), else 0. */
int	host_in_group(const struct host *h, const char *group);

#endif
