/* inv_yaml.c - the YAML inventory format (see inv_yaml.h). */
#include "controller/inv_yaml.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"
#include "common/xmalloc.h"
#include "controller/invbuild.h"
#include "controller/yamldoc.h"

#define MAX_NESTING	256	/* children: levels within one definition */

struct reader {
	struct invb	*b;
	int		 first;
};

#define report(r, code, at, ...) do {					\
	if ((r)->first == 0)						\
		(r)->first = (code);					\
	invb_error((r)->b, (code), (at), __VA_ARGS__);			\
} while (0)

/*
 * Checks that key names a group, host or variable: a YAML string (Ansible
 * refuses other types), not empty, without NUL bytes.
 */
static int
check_name(struct reader *r, const struct ynode *key, const char *what,
    const char *group)
{
	const char *in = group != NULL ? " in group '" : "";
	const char *g = group != NULL ? group : "";
	const char *close = group != NULL ? "'" : "";

	if (!ynode_is_string(key)) {
		report(r, ENVCTL_EINVALID, key, "%s '%s'%s%s%s must be a "
		    "string, got %s (quote it)", what, key->str, in, g, close,
		    ynode_describe(key));
		return -1;
	}
	if (key->len == 0) {
		report(r, ENVCTL_EINVALID, key, "empty %s%s%s%s", what, in, g,
		    close);
		return -1;
	}
	if (strlen(key->str) != key->len) {
		report(r, ENVCTL_EINVALID, key, "%s '%s'%s%s%s contains a NUL "
		    "byte", what, key->str, in, g, close);
		return -1;
	}
	return 0;
}

static size_t parse_group(struct reader *, const struct ynode *,
    const struct ynode *, int);

static void
parse_vars(struct reader *r, size_t g, const char *gname,
    const struct ynode *v)
{
	const struct ynode *k;
	size_t i;

	if (v->type != ENVCTL_YMAP) {
		report(r, ENVCTL_EINVALID, v, "'vars' of group '%s' must be a "
		    "mapping of variables, got %s", gname, ynode_describe(v));
		return;
	}
	for (i = 0; i < v->npairs; i++) {
		k = v->pairs[i].key;
		if (check_name(r, k, "variable", gname) == 0)
			invb_group_var(r->b, g, k->str, v->pairs[i].value);
	}
}

static void
parse_children(struct reader *r, size_t g, const char *gname,
    const struct ynode *v, int nest)
{
	size_t i, child;

	if (ynode_is_string(v)) {
		/* Ansible reads "children: name" as {name: null}. */
		if ((child = parse_group(r, v, NULL, nest + 1)) !=
		    ENVCTL_INVB_NONE)
			invb_child(r->b, g, child, v);
		return;
	}
	if (v->type != ENVCTL_YMAP) {
		report(r, ENVCTL_EINVALID, v, "'children' of group '%s' must "
		    "be a mapping of group names, got %s", gname,
		    ynode_describe(v));
		return;
	}
	for (i = 0; i < v->npairs; i++) {
		child = parse_group(r, v->pairs[i].key, v->pairs[i].value,
		    nest + 1);
		if (child != ENVCTL_INVB_NONE)
			invb_child(r->b, g, child, v->pairs[i].key);
	}
}

/* One entry of hosts:, key a host name or pattern, val its variables. */
static void
parse_host(struct reader *r, size_t g, const char *gname,
    const struct ynode *key, const struct ynode *val)
{
	size_t *hosts = NULL, n, i, j;
	const struct ynode *k;

	if (check_name(r, key, "host name", gname) != 0)
		return;
	if (!ynode_is_null(val) && val->type != ENVCTL_YMAP) {
		report(r, ENVCTL_EINVALID, val, "variables of host '%s' in "
		    "group '%s' must be a mapping, got %s", key->str, gname,
		    ynode_describe(val));
		return;
	}
	for (j = 0; !ynode_is_null(val) && j < val->npairs; j++)
		(void)check_name(r, val->pairs[j].key, "variable", gname);
	n = invb_hosts(r->b, g, key->str, key, &hosts);
	if (n == 0 && r->first == 0)
		r->first = ENVCTL_EINVALID;
	for (i = 0; i < n; i++)
		for (j = 0; !ynode_is_null(val) && j < val->npairs; j++) {
			k = val->pairs[j].key;
			if (ynode_is_string(k) && k->len > 0 &&
			    strlen(k->str) == k->len)
				invb_host_var(r->b, hosts[i], k->str,
				    val->pairs[j].value);
		}
	free(hosts);
}

static void
parse_hosts(struct reader *r, size_t g, const char *gname,
    const struct ynode *v)
{
	size_t i;

	if (ynode_is_string(v)) {
		/* Ansible reads "hosts: name" as {name: null}. */
		parse_host(r, g, gname, v, NULL);
		return;
	}
	if (v->type != ENVCTL_YMAP) {
		report(r, ENVCTL_EINVALID, v, "'hosts' of group '%s' must be a "
		    "mapping of host names (each 'name:' on its own line), "
		    "got %s", gname, ynode_describe(v));
		return;
	}
	for (i = 0; i < v->npairs; i++)
		parse_host(r, g, gname, v->pairs[i].key, v->pairs[i].value);
}

static void
unknown_key(struct reader *r, const char *gname, const struct ynode *k)
{
	static const char *const valid[] = { "hosts", "vars", "children",
		NULL };
	const char *best = str_closest(k->str, valid);

	if (best != NULL)
		report(r, ENVCTL_EINVALID, k, "unknown key '%s' in group '%s' "
		    "(expected hosts, vars or children; did you mean '%s'?)",
		    k->str, gname, best);
	else
		report(r, ENVCTL_EINVALID, k, "unknown key '%s' in group '%s' "
		    "(expected hosts, vars or children)", k->str, gname);
}

/*
 * Defines (or adds to) the group named by key with body val (NULL or null
 * for none).  Returns its index, or ENVCTL_INVB_NONE for an unusable name.
 */
static size_t
parse_group(struct reader *r, const struct ynode *key, const struct ynode *val,
    int nest)
{
	const struct ynode *k, *v;
	const char *gname;
	size_t g, i;

	if (check_name(r, key, "group name", NULL) != 0)
		return ENVCTL_INVB_NONE;
	g = invb_group(r->b, key->str);
	gname = key->str;
	if (ynode_is_null(val))
		return g;
	if (val->type != ENVCTL_YMAP) {
		report(r, ENVCTL_EINVALID, val, "group '%s' must be a mapping "
		    "(with hosts, vars or children) or empty, got %s",
		    gname, ynode_describe(val));
		return g;
	}
	if (nest > MAX_NESTING) {
		report(r, ENVCTL_ETOOBIG, key, "group '%s' is nested more than "
		    "%d levels deep", gname, MAX_NESTING);
		return g;
	}
	for (i = 0; i < val->npairs; i++) {
		k = val->pairs[i].key;
		v = val->pairs[i].value;
		if (!ynode_is_string(k) || (strcmp(k->str, "hosts") != 0 &&
		    strcmp(k->str, "vars") != 0 &&
		    strcmp(k->str, "children") != 0)) {
			unknown_key(r, gname, k);
			continue;
		}
		if (ynode_is_null(v))
			continue;	/* "hosts:" with nothing: allowed */
		if (strcmp(k->str, "vars") == 0)
			parse_vars(r, g, gname, v);
		else if (strcmp(k->str, "hosts") == 0)
			parse_hosts(r, g, gname, v);
		else if (g == ENVCTL_INVB_UNGROUPED)
			report(r, ENVCTL_EINVALID, k, "group 'ungrouped' "
			    "cannot have children");
		else
			parse_children(r, g, gname, v, nest);
	}
	return g;
}

int
inv_yaml_read(struct invb *b, const struct ynode *root)
{
	struct reader r = { b, 0 };
	const struct ynode *plugin;
	size_t i;

	plugin = ymap_get(root, "plugin");
	if (plugin != NULL && !ynode_is_null(plugin)) {
		report(&r, ENVCTL_EUNSUPPORTED, plugin, "this is an inventory "
		    "plugin configuration ('plugin: %s'), not an inventory; "
		    "envctl reads what the plugin produces: run "
		    "'ansible-inventory -i %s --list > inventory.json' and "
		    "give envctl inventory.json", plugin->type ==
		    ENVCTL_YSCALAR ? plugin->str : "...", invb_path(b));
		return r.first;
	}
	for (i = 0; i < root->npairs; i++)
		parse_group(&r, root->pairs[i].key, root->pairs[i].value, 0);
	return r.first;
}
