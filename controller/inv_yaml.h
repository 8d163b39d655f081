/*
 * inv_yaml.h - the YAML inventory format (Ansible's yaml inventory plugin).
 *
 * Reads `all:` / group mappings with `hosts:`, `vars:` and `children:`
 * into the builder (invbuild.h).  Stricter than Ansible in one way, on
 * purpose: an unknown key in a group, which Ansible skips with a warning
 * (and so drops the variables under a misspelt `var:`), is an error.
 */
#ifndef ENVCTL_CONTROLLER_INV_YAML_H
#define ENVCTL_CONTROLLER_INV_YAML_H

struct invb;
struct ynode;

/*
 * Reads the document rooted at root (a mapping; the caller checks) into b.
 * Returns 0, or the first error code it recorded.  A `plugin:` key is
 * refused as a plugin configuration (ENVCTL_EUNSUPPORTED).
 */
int	inv_yaml_read(struct invb *b, const struct ynode *root);

#endif
