/*
 * cmd_inventory.c - envctl inventory: what envctl resolved from an
 * inventory, in ansible-inventory's --list, --host and --graph shapes.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/cmd.h"
#include "controller/hostpattern.h"
#include "controller/inv_json.h"
#include "controller/inventory.h"
#include "controller/opts.h"
#include "controller/output.h"

#define GROUP_ALL	0	/* inventory.h: group 0 is all */

static const char *const usage[] = {
	"envctl inventory INVENTORY --list [-l LIMIT]",
	"envctl inventory INVENTORY --host HOST",
	"envctl inventory INVENTORY --graph [-l LIMIT]",
	NULL
};

static const char help_text[] =
    "\n"
    "Prints the groups, hosts and variables envctl read from INVENTORY\n"
    "(YAML, INI, the JSON of ansible-inventory --list, an executable\n"
    "inventory script or a directory of these, with group_vars/ and\n"
    "host_vars/) in the shapes ansible-inventory prints, so that the two\n"
    "can be compared byte for byte.  Values are shown untemplated, keys\n"
    "sorted, and the variables Ansible sets itself (inventory_file,\n"
    "groups, omit...) left out, as ansible-inventory does.\n"
    "\n"
    "examples:\n"
    "    envctl inventory hosts.yaml --graph\n"
    "    diff <(ansible-inventory -i hosts.yaml --list) \\\n"
    "         <(envctl inventory hosts.yaml --list)\n"
    "    envctl inventory ./ec2.py --host gpu-01\n";

/* The start of a line of the tree at depth (0: "@all:"). */
static void
graph_indent(struct buf *b, int depth)
{
	int i;

	if (depth == 0)
		return;
	buf_addstr(b, "  ");
	for (i = 1; i < depth; i++)
		buf_addstr(b, "|  ");
	buf_addstr(b, "|--");
}

/*
 * ansible-inventory --graph: a group, its child groups (each in full,
 * wherever it appears), then its own hosts (none under all).  Depth is
 * bounded: the inventory refuses group cycles and deep nesting.
 */
static void
graph_group(struct buf *b, const struct inventory *inv, size_t g, int depth,
    const unsigned char *selected)
{
	const struct host **members = NULL;
	size_t i, n;

	graph_indent(b, depth);
	buf_addf(b, "@%s:\n", inventory_group(inv, g));
	for (i = 0; i < inventory_group_nchildren(inv, g); i++)
		graph_group(b, inv, inventory_group_child(inv, g, i),
		    depth + 1, selected);
	n = inv_json_group_hosts(inv, g, selected, &members);
	for (i = 0; i < n; i++) {
		graph_indent(b, depth + 1);
		buf_addf(b, "%s\n", members[i]->name);
	}
	free(members);
}

int
cmd_inventory(int argc, char **argv)
{
	const char *limit = NULL, *hostname = NULL;
	int list = 0, graph = 0;
	struct opt opts[] = {
		{ 0, "list", ENVCTL_OPT_FLAG, &list, NULL,
		    "groups and variables, as ansible-inventory --list",
		    0, 0 },
		{ 0, "host", ENVCTL_OPT_STRING, &hostname, "HOST",
		    "one host's variables (ansible-inventory --host)",
		    0, 0 },
		{ 0, "graph", ENVCTL_OPT_FLAG, &graph, NULL,
		    "the group tree, as ansible-inventory --graph", 0, 0 },
		{ 'l', "limit", ENVCTL_OPT_STRING, &limit, "PATTERN",
		    "only hosts matching PATTERN (--list, --graph)", 0,
		    0 },
		ENVCTL_OPT_END_ENTRY
	};
	struct inventory *inv = NULL;
	struct err err = ENVCTL_ERR_INIT;
	struct buf out = ENVCTL_BUF_INIT;
	unsigned char *selected = NULL;
	const struct host *h;
	char **operands = xcalloc((size_t)argc, sizeof(char *));
	size_t count;
	int n, code = ENVCTL_EXIT_FAIL;

	if (!cmd_parse(usage, opts, argc, argv, operands, &n, 1, 1, &code)) {
		if (code == ENVCTL_EXIT_OK)
			out_printf("%s", help_text);
		goto out;
	}
	if (list + graph + (hostname != NULL) != 1) {
		out_note("envctl inventory: give one of --list, --host HOST, "
		    "--graph\n");
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if (hostname != NULL && limit != NULL) {
		out_note("envctl inventory: --limit does not apply to "
		    "--host\n");
		code = ENVCTL_EXIT_USAGE;
		goto out;
	}
	if (inventory_load(&inv, operands[0], &err) != 0)
		goto fail;
	if (limit != NULL) {
		selected = xcalloc(inventory_nhosts(inv) + 1, 1);
		if (hostpattern_select(inv, limit, selected, &count, &err) != 0)
			goto fail;
	}
	if (hostname != NULL) {
		if ((h = inventory_find(inv, hostname)) == NULL) {
			err_set(&err, ENVCTL_ENOTFOUND, "host '%s' is not in "
			    "'%s'", hostname, operands[0]);
			goto fail;
		}
		if (inv_json_write_host(&out, h, &err) != 0)
			goto fail;
	} else if (list) {
		if (inv_json_write_list(&out, inv, selected, &err) != 0)
			goto fail;
	} else
		graph_group(&out, inv, GROUP_ALL, 0, selected);
	if (out_write(out.data, out.len) == 0)
		code = ENVCTL_EXIT_OK;
	goto out;
fail:
	out_errors(&err);
out:
	inventory_free(inv);
	err_release(&err);
	buf_release(&out);
	free(selected);
	free(operands);
	return code;
}
