/* main.c - envctl: global options and the table of commands. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strutil.h"
#include "controller/agentlink.h"
#include "controller/cmd.h"
#include "controller/output.h"

struct command {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*summary;
};

static const struct command commands[] = {
	{ "plan", cmd_plan,
	    "read every host, show what apply would change" },
	{ "apply", cmd_apply,
	    "change the hosts that need it: atomic, backed up, verified" },
	{ "rollback", cmd_rollback,
	    "put a backup back (atomic, verified, itself backed up)" },
	{ "drift", cmd_drift,
	    "for cron: silent when in sync, exit 2 and a report on drift" },
	{ "backups", cmd_backups,
	    "list the backups each host keeps" },
	{ "facts", cmd_facts,
	    "interpreter, sitecustomize path and effective values per host" },
	{ "check", cmd_check,
	    "validate the inventory and the playbook, offline" },
	{ "render", cmd_render,
	    "print the desired sitecustomize.py for one host, offline" },
	{ "inventory", cmd_inventory,
	    "what envctl read from an inventory, as ansible-inventory" },
	{ "report", cmd_report,
	    "report merge: join the reports of a sharded run (--shard)" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void
usage(int to_stderr)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	buf_addstr(&b,
	    "usage: envctl COMMAND INVENTORY [options]\n"
	    "       envctl COMMAND --help\n"
	    "       envctl --version\n"
	    "\n"
	    "envctl keeps the Python sitecustomize.py of every host in a GPU "
	    "fleet at the\n"
	    "CUDA / NCCL environment a playbook describes.  INVENTORY is an "
	    "Ansible\n"
	    "inventory (YAML, INI, a directory, a script, group_vars/), read "
	    "as\n"
	    "ansible-inventory reads it; the playbook defaults to "
	    "cuda13-nccl.\n"
	    "\n"
	    "commands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		buf_addf(&b, "    %-11s%s\n", commands[i].name,
		    commands[i].summary);
	buf_addstr(&b,
	    "\n"
	    "examples:\n"
	    "    envctl plan hosts.yaml                  "
	    "what would change, host by host\n"
	    "    envctl plan hosts.yaml -l gpu -o p.json "
	    "save the plan of group gpu\n"
	    "    envctl apply hosts.yaml --yes           "
	    "change them (no question asked)\n"
	    "    envctl apply p.json                     "
	    "apply exactly a saved plan\n"
	    "    envctl check hosts.yaml                 "
	    "validate everything, offline\n"
	    "    envctl render hosts.yaml --host gpu-01  "
	    "the file gpu-01 should have\n"
	    "    envctl inventory hosts.ini --list       "
	    "what envctl read, as ansible-inventory\n"
	    "\n"
	    "exit status: 0 ok, 1 failure or bad input, 2 changes pending, "
	    "64 usage error.\n"
	    "See envctl(1), envctl-inventory(5) and envctl-playbook(5).\n");
	if (to_stderr)
		out_note("%s", b.data);
	else
		out_write(b.data, b.len);
	buf_release(&b);
}

/*
 * The version, and the agent this envctl ships to hosts: its SHA-256 names
 * it in the hosts' caches, and a sudoers rule can pin it (sha256:HASH).
 */
static void
version(void)
{
	struct agent_binary ab;
	struct err err = ENVCTL_ERR_INIT;

	out_printf("envctl %s\n", ENVCTL_VERSION);
	if (agent_binary_load(&ab, NULL, &err) != 0) {
		out_printf("agent   not found: %s\n", err.msg);
		err_release(&err);
		return;
	}
	out_printf("agent   %s (%s, sha256 %s)\n", ab.path, ab.arch,
	    ab.sha256);
	agent_binary_release(&ab);
}

int
main(int argc, char **argv)
{
	const char *names[NCOMMANDS + 1], *close;
	size_t i;

	/*
	 * The host jobs' threads wait on the network, not on malloc: one
	 * arena for all of them, instead of glibc's one per thread, which
	 * each new thread's first allocations fault in afresh (6% of a
	 * warm plan's CPU at 100 hosts, docs/bench.md).
	 */
	mallopt(M_ARENA_MAX, 1);
	if (argc < 2) {
		usage(1);
		return ENVCTL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(0);
		return ENVCTL_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		version();
		return ENVCTL_EXIT_OK;
	}
	for (i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
		names[i] = commands[i].name;
	}
	names[NCOMMANDS] = NULL;
	if (argv[1][0] == '-')
		out_note("envctl: unknown option '%s'\n", argv[1]);
	else if ((close = str_closest(argv[1], names)) != NULL)
		out_note("envctl: unknown command '%s' (did you mean '%s'?)\n",
		    argv[1], close);
	else
		out_note("envctl: unknown command '%s'\n", argv[1]);
	out_note("run 'envctl --help' for the list of commands\n");
	return ENVCTL_EXIT_USAGE;
}
