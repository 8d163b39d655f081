/* check_inventory.c - Ansible YAML inventories: structure, precedence. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "controller/inventory.h"
#include "controller/yamldoc.h"
#include "testutil.h"

static struct inventory *
load_ok(const char *text)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	struct inventory *inv = NULL;

	if (inventory_load_string(&inv, text, strlen(text), "hosts.yaml",
	    &err) != 0) {
		err_format(&err, &msg);
		ck_abort_msg("unexpected error: %s", msg.data);
	}
	ck_assert_int_eq(err.code, 0);
	buf_release(&msg);
	return inv;
}

/*
 * Loads text expecting the first error to be code and the whole chain,
 * formatted, to be want (one "host: path:line:col: message" per line).
 */
static void
load_fail(const char *text, int code, const char *want)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	struct inventory *inv = NULL;
	int r;

	r = inventory_load_string(&inv, text, strlen(text), "hosts.yaml",
	    &err);
	err_format(&err, &msg);
	ck_assert_msg(r == code, "got %s, want %s: %s", err_codename(r),
	    err_codename(code), msg.data);
	ck_assert_ptr_null(inv);
	ck_assert_int_eq(err.code, code);
	ck_assert_str_eq(msg.data, want);
	buf_release(&msg);
	err_release(&err);
}

/* The variable's value as templates print it, or "(unset)". */
static char *
var_text(const struct host *h, const char *name)
{
	const struct ynode *n = host_var(h, name);
	struct buf b = ENVCTL_BUF_INIT;

	if (n == NULL)
		return xstrdup("(unset)");
	if (n->type != ENVCTL_YSCALAR)
		return xstrdup(ynode_describe(n));
	ck_assert_int_eq(yscalar_text(&b, n, NULL), 0);
	return buf_detach(&b, NULL);
}

static void
assert_var(const struct host *h, const char *name, const char *want)
{
	char *got = var_text(h, name);

	ck_assert_msg(strcmp(got, want) == 0, "%s: %s is '%s', want '%s'",
	    h->name, name, got, want);
	free(got);
}

/* The host's group_names, space-separated. */
static void
assert_groups(const struct host *h, const char *want)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	for (i = 0; i < host_ngroups(h); i++)
		buf_addf(&b, "%s%s", i > 0 ? " " : "", host_group(h, i));
	ck_assert_msg(strcmp(b.data, want) == 0, "%s: groups '%s', want '%s'",
	    h->name, b.data, want);
	ck_assert_ptr_null(host_group(h, host_ngroups(h)));
	buf_release(&b);
}

static const struct host *
find(const struct inventory *inv, const char *name)
{
	const struct host *h = inventory_find(inv, name);

	ck_assert_msg(h != NULL, "no host '%s'", name);
	return h;
}

static struct inventory *
load_fleet(void)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	struct inventory *inv;
	char *path = tu_srcpath("tests/data/inventory/gpu-fleet.yaml");

	if (inventory_load(&inv, path, &err) != 0) {
		err_format(&err, &msg);
		ck_abort_msg("gpu-fleet.yaml: %s", msg.data);
	}
	ck_assert_str_eq(inventory_path(inv), path);
	free(path);
	return inv;
}

static const char *const fleet_order[] = {
	"bastion", "localhost", "gpu-01", "gpu-02", "gpu-03", "gpu-04",
	"gpu-05", "gpu-06", "gpu-07", "gpu-08", "gpu-09", "gpu-10", "gpu-11",
	"gpu-12", "gpu-13", "gpu-14", "gpu-15", "gpu-16", "gpu-17",
};
#define FLEET_NHOSTS	(sizeof(fleet_order) / sizeof(fleet_order[0]))

START_TEST(test_fleet_order)
{
	struct inventory *inv = load_fleet();
	static const char *const groups[] = { "all", "ungrouped", "gpu",
		"rack_a", "rack_b", "h100", "a100", "infer", "vllm", "canary",
		"sglang" };
	size_t i;

	ck_assert_uint_eq(inventory_nhosts(inv), FLEET_NHOSTS);
	for (i = 0; i < FLEET_NHOSTS; i++) {
		ck_assert_str_eq(inventory_host(inv, i)->name, fleet_order[i]);
		ck_assert_uint_eq(inventory_host(inv, i)->index, i);
		ck_assert_ptr_eq(inventory_find(inv, fleet_order[i]),
		    inventory_host(inv, i));
	}
	ck_assert_ptr_null(inventory_host(inv, FLEET_NHOSTS));
	ck_assert_ptr_null(inventory_find(inv, "gpu-18"));
	ck_assert_uint_eq(inventory_ngroups(inv), 11);
	for (i = 0; i < 11; i++) {
		ck_assert_str_eq(inventory_group(inv, i), groups[i]);
		ck_assert(inventory_has_group(inv, groups[i]));
	}
	ck_assert_ptr_null(inventory_group(inv, 11));
	ck_assert(!inventory_has_group(inv, "gpu-01"));
	inventory_free(inv);
	inventory_free(NULL);
}
END_TEST

/*
 * Expected values follow Ansible's rules (checked against a model of
 * ansible-core's group.py/helpers.py): host vars beat groups; groups sort
 * by (depth, ansible_group_priority, name), later wins; all is lowest.
 */
START_TEST(test_fleet_precedence)
{
	struct inventory *inv = load_fleet();
	const struct host *h;
	const char *name;
	size_t i;

	/* Ungrouped, only all's vars and its own; auto_silent is unset. */
	h = find(inv, "bastion");
	assert_groups(h, "ungrouped");
	assert_var(h, "cuda_home", "/usr/local/cuda");
	assert_var(h, "nccl_buffsize", "4194304");
	assert_var(h, "nccl_algo", "(unset)");
	assert_var(h, "ansible_python_interpreter", "auto_silent");
	ck_assert_uint_eq(host_nvars(h), 8);
	ck_assert_ptr_nonnull(host_var_at(h, 0, &name));
	ck_assert_str_eq(name, "ansible_host");	/* sorted by name */
	ck_assert_ptr_null(host_var_at(h, 8, &name));
	ck_assert(host_in_group(h, "ungrouped"));
	ck_assert(host_in_group(h, "all"));
	ck_assert(!host_in_group(h, "gpu"));

	/* h100 (priority 10) beats its sibling rack_a (priority 1). */
	h = find(inv, "gpu-01");
	assert_groups(h, "gpu h100 rack_a");
	assert_var(h, "nccl_algo", "NVLS");
	assert_var(h, "nccl_proto", "LL");
	assert_var(h, "cuda_home", "/usr/local/cuda-13.0");
	assert_var(h, "nccl_ib_hca", "mlx5_1");
	/* Consumed by the group, never a variable. */
	assert_var(h, "ansible_group_priority", "(unset)");

	/* Equal depth and priority: the name sorting last (rack_a) wins. */
	h = find(inv, "gpu-02");
	assert_groups(h, "a100 gpu rack_a");
	assert_var(h, "nccl_ib_hca", "mlx5_1");
	assert_var(h, "nccl_algo", "Tree");
	assert_var(h, "gpu_model", "A100");
	assert_var(h, "nccl_max_nchannels", "16");
	assert_var(h, "nccl_proto", "Simple");

	/*
	 * In several groups, listed twice: the later listing's host vars win;
	 * a host var beats canary (depth 3); infer beats gpu (depth 1, name).
	 */
	h = find(inv, "gpu-03");
	assert_groups(h, "canary gpu h100 infer rack_a vllm");
	assert_var(h, "ansible_host", "10.1.0.33");
	assert_var(h, "nccl_proto", "Simple");
	assert_var(h, "nccl_buffsize", "8388608");
	assert_var(h, "ansible_become", "False");
	assert_var(h, "canary", "True");
	assert_var(h, "serve", "True");
	ck_assert(host_in_group(h, "infer"));

	/* A child group beats its parent; a null value is a value. */
	h = find(inv, "gpu-10");
	assert_groups(h, "a100 gpu rack_b");
	assert_var(h, "cuda_home", "/opt/cuda-12.8");
	assert_var(h, "nccl_algo", "None");
	ck_assert_ptr_nonnull(host_var(h, "nccl_algo"));
	/* Merged from the gpu vars anchor into rack_b. */
	assert_var(h, "triton_ptxas_path", "/usr/local/cuda-13.0/bin/ptxas");
	assert_var(h, "rack", "b");

	/* Depth first: canary (3) beats everything; rack_b (2) beats infer. */
	h = find(inv, "gpu-16");
	assert_groups(h, "a100 canary gpu infer rack_b vllm");
	assert_var(h, "nccl_proto", "LL128");
	assert_var(h, "ansible_become", "True");
	ck_assert(host_in_group(h, "infer"));	/* through vllm -> canary */
	ck_assert(host_in_group(h, "canary"));
	ck_assert(!host_in_group(h, "h100"));

	/* Every host sees all's variables unless something overrides. */
	for (i = 0; i < FLEET_NHOSTS; i++)
		assert_var(find(inv, fleet_order[i]), "site", "dc1");
	inventory_free(inv);
}
END_TEST

START_TEST(test_fleet_connection)
{
	struct inventory *inv = load_fleet();
	const struct host *h;
	size_t i;

	h = find(inv, "bastion");
	ck_assert_str_eq(h->address, "203.0.113.10");
	ck_assert_int_eq(h->port, 2222);	/* a string, as Ansible takes */
	ck_assert_str_eq(h->user, "deploy");
	ck_assert_ptr_null(h->python);		/* auto_silent */
	ck_assert_int_eq(h->become, 0);
	ck_assert_int_eq(h->local, 0);
	ck_assert_ptr_null(h->key_file);
	ck_assert_ptr_null(h->ssh_common_args);
	ck_assert_ptr_null(h->become_user);

	h = find(inv, "localhost");
	ck_assert_int_eq(h->local, 1);
	ck_assert_str_eq(h->python, "/usr/bin/python3");
	ck_assert_str_eq(h->address, "localhost");
	ck_assert_int_eq(h->port, 0);

	h = find(inv, "gpu-01");
	ck_assert_str_eq(h->address, "gpu-01");
	ck_assert_int_eq(h->become, 1);
	ck_assert_int_eq(h->port, 0);

	h = find(inv, "gpu-03");
	ck_assert_str_eq(h->address, "10.1.0.33");
	ck_assert_int_eq(h->become, 0);

	h = find(inv, "gpu-05");
	ck_assert_str_eq(h->key_file, "~/.ssh/fleet_ed25519");
	ck_assert_str_eq(h->ssh_common_args, "-o ProxyJump=bastion");
	ck_assert_int_eq(h->become, 0);

	/* "gpu-17:2200" as a host key: the port, and a host var wins. */
	h = find(inv, "gpu-17");
	ck_assert_int_eq(h->port, 2200);
	ck_assert_str_eq(h->user, "ops");
	assert_var(h, "ansible_port", "2200");
	ck_assert_int_eq(h->become, 1);

	for (i = 0; i < FLEET_NHOSTS; i++)
		if (strcmp(fleet_order[i], "localhost") != 0)
			ck_assert_ptr_null(inventory_host(inv, i)->python);
	inventory_free(inv);
}
END_TEST

/* The hosts' names, space-separated, in inventory order. */
static char *
host_list(const struct inventory *inv)
{
	struct buf b = ENVCTL_BUF_INIT;
	size_t i;

	for (i = 0; i < inventory_nhosts(inv); i++)
		buf_addf(&b, "%s%s", i > 0 ? " " : "",
		    inventory_host(inv, i)->name);
	return buf_detach(&b, NULL);
}

START_TEST(test_ranges)
{
	struct inventory *inv = load_ok(
	    "all:\n"
	    "  hosts:\n"
	    "    gpu-[01:03]:\n"
	    "    node-[a:c]:\n"
	    "    n[1:10:4]:\n"
	    "    r[1:2]-s[01:02].dc:\n"
	    "    x[:2]:\n"
	    "    h[09:11]:\n"
	    "    up[y:B:2]:\n"
	    "    w[8:10]:\n"
	    "    10.0.0.[1:2]:\n"
	    "    gpu-02:\n"
	    "    '[v6-[1:2]]:22':\n");
	char *got = host_list(inv);

	ck_assert_str_eq(got, "gpu-01 gpu-02 gpu-03 node-a node-b node-c "
	    "n1 n5 n9 r1-s01.dc r1-s02.dc r2-s01.dc r2-s02.dc x0 x1 x2 "
	    "h09 h10 h11 upy upA w8 w9 w10 10.0.0.1 10.0.0.2 v6-1 v6-2");
	ck_assert_int_eq(find(inv, "v6-2")->port, 22);
	free(got);
	inventory_free(inv);
}
END_TEST

START_TEST(test_range_errors)
{
	load_fail(
	    "all:\n"
	    "  hosts:\n"
	    "    gpu-[3:1]:\n"
	    "    gpu-[a:10]:\n"
	    "    gpu-[1:c]:\n"
	    "    gpu-[1:3:0]:\n"
	    "    gpu-[01:100]:\n"
	    "    gpu-[1:]:\n"
	    "    gpu-[1:3:\n"
	    "    gpu-[7]:\n"
	    "    gpu]-[1:2]:\n"
	    "    ok-[1:2]:\n"
	    "    big-[0:9999999]:\n",
	    ENVCTL_EINVALID,
	    "hosts.yaml:3:5: invalid host range in 'gpu-[3:1]': start '3' is "
	    "after end '1'\n"
	    "hosts.yaml:4:5: invalid host range in 'gpu-[a:10]': start 'a' "
	    "and end '10' must be both numbers or both single letters\n"
	    "hosts.yaml:5:5: invalid host range in 'gpu-[1:c]': start '1' "
	    "and end 'c' must be both numbers or both single letters\n"
	    "hosts.yaml:6:5: invalid host range in 'gpu-[1:3:0]': step '0' "
	    "is not a positive integer\n"
	    "hosts.yaml:7:5: invalid host range in 'gpu-[01:100]': "
	    "zero-padded start '01' and end '100' differ in width\n"
	    "hosts.yaml:8:5: invalid host range in 'gpu-[1:]': missing end\n"
	    "hosts.yaml:9:5: invalid host range in 'gpu-[1:3': unclosed '['\n"
	    "hosts.yaml:10:5: invalid host range in 'gpu-[7]': expected "
	    "[start:end] or [start:end:step]\n"
	    "hosts.yaml:11:5: invalid host range in 'gpu]-[1:2]': ']' before "
	    "'['\n"
	    "hosts.yaml:13:5: host pattern 'big-[0:9999999]' expands to more "
	    "than 100000 hosts\n");
}
END_TEST

START_TEST(test_structure_errors)
{
	load_fail(
	    "all:\n"
	    "  hots:\n"
	    "    gpu-01:\n"
	    "  children:\n"
	    "    gpu:\n"
	    "      hosts: [gpu-01, gpu-02]\n"
	    "      vars: cuda\n"
	    "    rack:\n"
	    "      childs:\n"
	    "        a:\n"
	    "      varz: {}\n"
	    "      gpu-03: {}\n"
	    "    infer: [vllm]\n"
	    "    serve:\n"
	    "      children: [a]\n"
	    "      hosts:\n"
	    "        gpu-04: ansible_host=10.0.0.4\n"
	    "        1234:\n"
	    "        gpu-05:\n"
	    "          1: x\n"
	    "        ok:\n"
	    "      vars:\n"
	    "        ansible_group_priority: high\n"
	    "    42:\n",
	    ENVCTL_EINVALID,
	    "hosts.yaml:2:3: unknown key 'hots' in group 'all' (expected "
	    "hosts, vars or children; did you mean 'hosts'?)\n"
	    "hosts.yaml:6:14: 'hosts' of group 'gpu' must be a mapping of "
	    "host names (each 'name:' on its own line), got a list\n"
	    "hosts.yaml:7:13: 'vars' of group 'gpu' must be a mapping of "
	    "variables, got a string\n"
	    "hosts.yaml:9:7: unknown key 'childs' in group 'rack' (expected "
	    "hosts, vars or children; did you mean 'children'?)\n"
	    "hosts.yaml:11:7: unknown key 'varz' in group 'rack' (expected "
	    "hosts, vars or children; did you mean 'vars'?)\n"
	    "hosts.yaml:12:7: unknown key 'gpu-03' in group 'rack' (expected "
	    "hosts, vars or children)\n"
	    "hosts.yaml:13:12: group 'infer' must be a mapping (with hosts, "
	    "vars or children) or empty, got a list\n"
	    "hosts.yaml:15:17: 'children' of group 'serve' must be a mapping "
	    "of group names, got a list\n"
	    "hosts.yaml:17:17: variables of host 'gpu-04' in group 'serve' "
	    "must be a mapping, got a string\n"
	    "hosts.yaml:18:9: host name '1234' in group 'serve' must be a "
	    "string, got an integer (quote it)\n"
	    "hosts.yaml:20:11: variable '1' in group 'serve' must be a "
	    "string, got an integer (quote it)\n"
	    "hosts.yaml:23:33: ansible_group_priority of group 'serve' must "
	    "be an integer, got a string 'high'\n"
	    "hosts.yaml:24:5: group name '42' must be a string, got an "
	    "integer (quote it)\n");
	/* Every reader refuses an empty host name, as Ansible's add_host. */
	{
		static const char ini[] = "0-0\n''''\n";
		struct err e = ENVCTL_ERR_INIT;
		struct inventory *inv;

		ck_assert_int_eq(inventory_load_string(&inv, ini,
		    sizeof(ini) - 1, "hosts.ini", &e), ENVCTL_EINVALID);
		ck_assert_str_eq(e.msg, "invalid empty host name");
		ck_assert_int_eq(e.line, 2);
		err_release(&e);
	}
	/* Ansible would then select that host alone for 'all'. */
	load_fail("all:\n  hosts:\n    all:\n    gpu-01:\n", ENVCTL_EINVALID,
	    "hosts.yaml: a host named 'all' would make the pattern 'all', "
	    "the default, select that host alone (Ansible warns 'Found both "
	    "group and host with same name: all' and does so); rename the "
	    "host\n");
	/* Not a YAML mapping: INI is tried, as Ansible's plugins are. */
	load_fail("[all, gpu]\n", ENVCTL_EPARSE,
	    "hosts.yaml:1:1: invalid section entry: '[all, gpu]' (no spaces "
	    "or other invalid characters are allowed in a section entry); "
	    "and as YAML it is a list, not a mapping of groups; envctl reads "
	    "YAML, INI, the JSON of ansible-inventory --list, executable "
	    "inventory scripts and directories of these; the file begins "
	    "'[all, gpu]'\n");
	load_fail("all:\n  hosts:\n    '':\n", ENVCTL_EINVALID,
	    "hosts.yaml:3:5: empty host name in group 'all'\n");
	load_fail("plugin: amazon.aws.aws_ec2\nregions: [us-east-1]\n",
	    ENVCTL_EUNSUPPORTED,
	    "hosts.yaml:1:9: this is an inventory plugin configuration "
	    "('plugin: amazon.aws.aws_ec2'), not an inventory; envctl reads "
	    "what the plugin produces: run 'ansible-inventory -i hosts.yaml "
	    "--list > inventory.json' and give envctl inventory.json\n");
}
END_TEST

START_TEST(test_no_hosts)
{
	struct err err = ENVCTL_ERR_INIT;
	struct inventory *inv;
	char *dir = tu_mkdtemp(), *p, *missing;

	load_fail("", ENVCTL_EINVALID, "hosts.yaml: no hosts in inventory\n");
	load_fail("# only a comment\n", ENVCTL_EINVALID,
	    "hosts.yaml: no hosts in inventory\n");
	load_fail("all:\n  vars: {a: 1}\n  children:\n    gpu:\n",
	    ENVCTL_EINVALID, "hosts.yaml: no hosts in inventory\n");
	/* YAML errors and missing files come through as they are. */
	load_fail("all:\n\thosts:\n", ENVCTL_EPARSE,
	    "hosts.yaml:2:1: found character that cannot start any token (a "
	    "tab: YAML indentation must use spaces), while scanning for the "
	    "next token at line 2; and not INI either (line 1: invalid host "
	    "pattern 'all:': ending in ':' is not allowed, this character is "
	    "reserved to provide a port); envctl reads YAML, INI, the JSON of "
	    "ansible-inventory --list, executable inventory scripts and "
	    "directories of these; the file begins 'all:'\n");
	load_fail("all:\n  hosts:\n    a:\n    a:\n", ENVCTL_EINVALID,
	    "hosts.yaml:4:5: duplicate key 'a' (first at line 3)\n");
	missing = xasprintf("%s/missing.yaml", dir);
	ck_assert_int_eq(inventory_load(&inv, missing, &err),
	    ENVCTL_ENOTFOUND);
	ck_assert_ptr_null(inv);
	ck_assert_ptr_nonnull(strstr(err.msg, missing));
	err_release(&err);
	p = tu_writes(dir, "empty.yaml", "");
	ck_assert_int_eq(inventory_load(&inv, p, &err), ENVCTL_EINVALID);
	ck_assert_str_eq(err.path, p);
	ck_assert_str_eq(err.msg, "no hosts in inventory");
	err_release(&err);
	free(p);
	free(missing);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(test_cycles)
{
	load_fail(
	    "all:\n"
	    "  hosts: {h1: }\n"
	    "  children:\n"
	    "    a:\n"
	    "      children:\n"
	    "        b:\n"
	    "          children:\n"
	    "            c:\n"
	    "              children:\n"
	    "                a:\n"
	    "    self:\n"
	    "      children:\n"
	    "        self:\n",
	    ENVCTL_EINVALID,
	    "hosts.yaml:10:17: group cycle: a -> b -> c -> a\n"
	    "hosts.yaml:13:9: group cycle: self -> self\n");
	/* A cycle that is defined apart, reached from no other group. */
	load_fail(
	    "x:\n"
	    "  children:\n"
	    "    y:\n"
	    "      hosts: {h1: }\n"
	    "y:\n"
	    "  children:\n"
	    "    x:\n",
	    ENVCTL_EINVALID,
	    "hosts.yaml:7:5: group cycle: x -> y -> x\n");
	/* Every group is under all, so all cannot be anyone's child. */
	load_fail(
	    "all:\n"
	    "  children:\n"
	    "    gpu:\n"
	    "      hosts: {h1: }\n"
	    "      children:\n"
	    "        all:\n",
	    ENVCTL_EINVALID,
	    "hosts.yaml:6:9: group cycle: all -> gpu -> all\n");
	load_fail("ungrouped:\n  children:\n    a:\n  hosts: {h: }\n",
	    ENVCTL_EINVALID,
	    "hosts.yaml:2:3: group 'ungrouped' cannot have children\n");
}
END_TEST

START_TEST(test_connection_errors)
{
	load_fail(
	    "all:\n"
	    "  children:\n"
	    "    gpu:\n"
	    "      vars:\n"
	    "        ansible_port: ssh\n"
	    "      hosts:\n"
	    "        gpu-[1:3]:\n"
	    "  hosts:\n"
	    "    a:\n"
	    "      ansible_port: 70000\n"
	    "    b:\n"
	    "      ansible_connection: docker\n"
	    "    c:\n"
	    "      ansible_host: '{{ lookup(\"env\", \"IP\") }}'\n"
	    "    d:\n"
	    "      ansible_become: maybe\n"
	    "    e:\n"
	    "      ansible_user: 1000\n"
	    "    f:\n"
	    "      ansible_user: !vault |\n"
	    "        $ANSIBLE_VAULT;1.1;AES256\n"
	    "    g:\n"
	    "      ansible_python_interpreter: ''\n"
	    "    h:\n"
	    "      ansible_become_method: su\n"
	    "    i:\n"
	    "      ansible_port: [22]\n"
	    "    j:\n"
	    "      ansible_become: '{% if x %}yes{% endif %}'\n",
	    ENVCTL_EINVALID,
	    "gpu-1: hosts.yaml:5:23: 'ansible_port' must be an integer from 1 "
	    "to 65535, got a string 'ssh' (and 2 more hosts)\n"
	    "a: hosts.yaml:10:21: 'ansible_port' must be an integer from 1 to "
	    "65535, got an integer '70000'\n"
	    "b: hosts.yaml:12:27: unsupported connection 'docker' (envctl "
	    "supports ssh and local)\n"
	    "c: hosts.yaml:14:21: templated connection variables are not "
	    "supported: 'ansible_host' is '{{ lookup(\"env\", \"IP\") }}'\n"
	    "d: hosts.yaml:16:23: 'ansible_become' must be a boolean (yes/no, "
	    "true/false), got a string 'maybe'\n"
	    "e: hosts.yaml:18:21: 'ansible_user' must be a non-empty string, "
	    "got an integer\n"
	    "f: hosts.yaml:20:21: vault-encrypted connection variables are "
	    "not supported: 'ansible_user'\n"
	    "g: hosts.yaml:23:35: 'ansible_python_interpreter' must be a "
	    "non-empty string, got an empty string\n"
	    "h: hosts.yaml:25:30: unsupported become method 'su' (envctl "
	    "supports sudo)\n"
	    "i: hosts.yaml:27:21: 'ansible_port' must be an integer from 1 to "
	    "65535, got a list\n"
	    "j: hosts.yaml:29:23: templated connection variables are not "
	    "supported: 'ansible_become' is '{% if x %}yes{% endif %}'\n");
}
END_TEST

/*
 * envctl_interpreters: a YAML list, one string of comma-separated paths,
 * or, when unset, ansible_python_interpreter as a list of one; a list
 * kept in a string (INI [group:vars]) and bad entries are refused.
 */
START_TEST(test_interpreters)
{
	struct inventory *inv = load_ok(
	    "all:\n"
	    "  vars:\n"
	    "    ansible_python_interpreter: /usr/bin/python3\n"
	    "  hosts:\n"
	    "    a:\n"
	    "      envctl_interpreters: [/usr/bin/python3, /opt/v/bin/python, "
	    "/usr/bin/python3]\n"
	    "    b:\n"
	    "      envctl_interpreters: ' python3 , /opt/uv/bin/python3.12'\n"
	    "    c: {}\n"
	    "    d:\n"
	    "      ansible_python_interpreter: auto\n");
	const struct host *h;

	h = find(inv, "a");
	ck_assert_uint_eq(h->ninterpreters, 2);	/* named twice: once */
	ck_assert_str_eq(h->interpreters[0], "/usr/bin/python3");
	ck_assert_str_eq(h->interpreters[1], "/opt/v/bin/python");
	h = find(inv, "b");
	ck_assert_uint_eq(h->ninterpreters, 2);
	ck_assert_str_eq(h->interpreters[0], "python3");
	ck_assert_str_eq(h->interpreters[1], "/opt/uv/bin/python3.12");
	h = find(inv, "c");
	ck_assert_uint_eq(h->ninterpreters, 1);
	ck_assert_str_eq(h->interpreters[0], "/usr/bin/python3");
	h = find(inv, "d");
	ck_assert_uint_eq(h->ninterpreters, 0);	/* the playbook's */
	ck_assert_uint_eq(h->nservices, 0);
	inventory_free(inv);

	/* envctl_services: the same forms; 'auto' is a name there. */
	inv = load_ok("all:\n"
	    "  vars:\n"
	    "    envctl_services: vllm.service, sglang\n"
	    "  hosts:\n"
	    "    a: {}\n"
	    "    b:\n"
	    "      envctl_services: [auto, vllm@0.service]\n");
	h = find(inv, "a");
	ck_assert_uint_eq(h->nservices, 2);
	ck_assert_str_eq(h->services[0], "vllm.service");
	ck_assert_str_eq(h->services[1], "sglang");
	h = find(inv, "b");
	ck_assert_uint_eq(h->nservices, 2);
	ck_assert_str_eq(h->services[0], "auto");
	inventory_free(inv);
	load_fail("all:\n"
	    "  hosts:\n"
	    "    a:\n"
	    "      envctl_services: []\n", ENVCTL_EINVALID,
	    "a: hosts.yaml:4:24: 'envctl_services' must list from 1 to 16 "
	    "services, got 0\n");

	load_fail("all:\n"
	    "  hosts:\n"
	    "    a:\n"
	    "      envctl_interpreters: \"['/a/python3', '/b/python3']\"\n"
	    "    b:\n"
	    "      envctl_interpreters: [/a/python3, '']\n"
	    "    c:\n"
	    "      envctl_interpreters: /a/python3,,/b/python3\n"
	    "    d:\n"
	    "      envctl_interpreters: ['{{ py }}']\n"
	    "    e:\n"
	    "      envctl_interpreters: {a: 1}\n", ENVCTL_EINVALID,
	    "a: hosts.yaml:4:28: 'envctl_interpreters' is the string "
	    "'['/a/python3', '/b/python3']', not a list (INI [group:vars] "
	    "values are strings): write a YAML list, or the entries separated "
	    "by commas\n"
	    "b: hosts.yaml:6:28: 'envctl_interpreters' item 2 must be an "
	    "interpreter, got an empty string\n"
	    "c: hosts.yaml:8:28: 'envctl_interpreters': an empty or 'auto' "
	    "entry in '/a/python3,,/b/python3'\n"
	    "d: hosts.yaml:10:28: templated connection variables are not "
	    "supported: 'envctl_interpreters' item 1 is '{{ py }}'\n"
	    "e: hosts.yaml:12:28: 'envctl_interpreters' must be a list of "
	    "interpreters, got a mapping\n");
}
END_TEST

START_TEST(test_connection_values)
{
	struct inventory *inv = load_ok(
	    "all:\n"
	    "  hosts:\n"
	    "    a:\n"
	    "      ansible_become: ' Yes '\n"
	    "      ansible_port: ' 2222 '\n"
	    "    b:\n"
	    "      ansible_become: 1\n"
	    "      ansible_port: 0x16\n"
	    "    c:\n"
	    "      ansible_become: 'off'\n"
	    "      ansible_connection: smart\n"
	    "      ansible_python_interpreter: auto\n"
	    "    d:\n"
	    "      ansible_host: 10.0.0.4\n"
	    "      ansible_ssh_host: 10.9.9.4\n"
	    "      ansible_ssh_user: legacy\n"
	    "      ansible_ssh_port: 2200\n"
	    "      ansible_private_key_file: /k1\n"
	    "      ansible_connection: ansible.builtin.local\n"
	    "      ansible_become_user: postgres\n"
	    "      ansible_become_method: sudo\n"
	    "    e:\n"
	    "      ansible_host: !unsafe '{{ literal }}'\n"
	    "      ansible_port: ~\n"
	    "      ansible_user:\n"
	    "      ansible_connection: paramiko\n"
	    "      ansible_python_interpreter: /opt/venv/bin/python3\n"
	    "      ansible_ssh_common_args: -o StrictHostKeyChecking=yes\n");
	const struct host *h;

	h = find(inv, "a");
	ck_assert_int_eq(h->become, 1);
	ck_assert_int_eq(h->port, 2222);
	h = find(inv, "b");
	ck_assert_int_eq(h->become, 1);
	ck_assert_int_eq(h->port, 22);
	h = find(inv, "c");
	ck_assert_int_eq(h->become, 0);
	ck_assert_int_eq(h->local, 0);
	ck_assert_ptr_null(h->python);
	/* The ssh plugin's later names win: ansible_ssh_host over ... */
	h = find(inv, "d");
	ck_assert_str_eq(h->address, "10.9.9.4");
	ck_assert_str_eq(h->user, "legacy");
	ck_assert_int_eq(h->port, 2200);
	ck_assert_str_eq(h->key_file, "/k1");
	ck_assert_int_eq(h->local, 1);
	ck_assert_str_eq(h->become_user, "postgres");
	/* !unsafe is never templated; null means unset. */
	h = find(inv, "e");
	ck_assert_str_eq(h->address, "{{ literal }}");
	ck_assert_int_eq(h->port, 0);
	ck_assert_ptr_null(h->user);
	ck_assert_int_eq(h->local, 0);
	ck_assert_str_eq(h->python, "/opt/venv/bin/python3");
	ck_assert_str_eq(h->ssh_common_args, "-o StrictHostKeyChecking=yes");
	inventory_free(inv);
}
END_TEST

START_TEST(test_ansible_forms)
{
	struct inventory *inv = load_ok(
	    "all:\n"
	    "  vars:\n"
	    "    v: all\n"
	    "  hosts:\n"
	    "    solo:\n"
	    "    both:\n"
	    "  children:\n"
	    "    ungrouped:\n"
	    "      vars: {v: ungrouped}\n"
	    "      hosts:\n"
	    "        listed:\n"
	    "        both:\n"
	    "    web:\n"
	    "      hosts: one-host\n"
	    "      children: sub\n"
	    "    web2:\n"
	    "      hosts:\n"
	    "        both:\n"
	    "        late:\n"
	    "sub:\n"
	    "  hosts:\n"
	    "    s1:2201:\n"
	    "      x: 1\n"
	    "    s2:\n"
	    "web:\n"
	    "  vars:\n"
	    "    ansible_group_priority: '5'\n"
	    "    v: web\n"
	    "sub2:\n"
	    "  hosts:\n"
	    "    s1:2299:\n"
	    "      x: 2\n");
	const struct host *h;
	char *got = host_list(inv);

	ck_assert_str_eq(got, "solo both listed one-host late s1 s2");
	free(got);
	/* Hosts only under all (or ungrouped) are ungrouped. */
	h = find(inv, "solo");
	assert_groups(h, "ungrouped");
	assert_var(h, "v", "ungrouped");
	assert_groups(find(inv, "listed"), "ungrouped");
	/* In another group too: no longer ungrouped. */
	h = find(inv, "both");
	assert_groups(h, "web2");
	assert_var(h, "v", "all");
	/* "hosts: name" and "children: name" as Ansible reads them. */
	h = find(inv, "one-host");
	assert_groups(h, "web");
	assert_var(h, "v", "web");
	/* A port in the key counts where the host is first seen. */
	h = find(inv, "s1");
	assert_groups(h, "sub sub2 web");
	ck_assert_int_eq(h->port, 2201);
	assert_var(h, "x", "2");
	assert_var(h, "v", "web");
	ck_assert(host_in_group(h, "web"));
	ck_assert(!host_in_group(h, "ungrouped"));
	inventory_free(inv);
}
END_TEST

/* Large inventories load quickly and keep their order. */
START_TEST(test_many_hosts)
{
	struct buf b = ENVCTL_BUF_INIT;
	struct inventory *inv;
	char name[32];
	size_t i;

	buf_addstr(&b, "all:\n  children:\n");
	for (i = 0; i < 50; i++)
		buf_addf(&b, "    g%zu:\n      vars: {gv: %zu}\n      hosts:\n"
		    "        n%zu-[0000:0199]:\n", i, i, i);
	inv = load_ok(b.data);
	ck_assert_uint_eq(inventory_nhosts(inv), 10000);
	for (i = 0; i < 10000; i += 997) {
		snprintf(name, sizeof(name), "n%zu-%04zu", i / 200, i % 200);
		ck_assert_uint_eq(find(inv, name)->index, i);
		snprintf(name, sizeof(name), "%zu", i / 200);
		assert_var(find(inv, inventory_host(inv, i)->name), "gv",
		    name);
	}
	inventory_free(inv);
	buf_release(&b);
}
END_TEST

/* Reads every host's variables and groups; returns the mismatches. */
static void *
reader(void *arg)
{
	const struct inventory *inv = arg;
	const struct host *h;
	struct buf b = ENVCTL_BUF_INIT;
	size_t i, j, bad = 0;
	int round;

	for (round = 0; round < 20; round++) {
		for (i = 0; i < inventory_nhosts(inv); i++) {
			h = inventory_host(inv, i);
			bad += inventory_find(inv, h->name) != h;
			bad += !host_in_group(h, "all");
			for (j = 0; j < host_ngroups(h); j++)
				bad += !host_in_group(h, host_group(h, j));
			buf_reset(&b);
			if (yscalar_text(&b, host_var(h, "site"), NULL) != 0 ||
			    strcmp(b.data, "dc1") != 0)
				bad++;
		}
	}
	buf_release(&b);
	return (void *)(uintptr_t)bad;
}

/* The loaded inventory is read-only: many threads may read it at once. */
START_TEST(test_threads)
{
	struct inventory *inv = load_fleet();
	pthread_t t[4];
	void *res;
	int i;

	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, reader, inv), 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(t[i], &res), 0);
		ck_assert_uint_eq((uintptr_t)res, 0);
	}
	inventory_free(inv);
}
END_TEST

/*
 * What ansible-inventory --list says of path, printed by python3 as
 * "host groups=a,b" (Ansible's group_names) and "host name=value" lines in
 * sorted order: scalars as Python's str() prints them, lists and dicts as
 * "a list" and "a mapping".  NULL after tu_skip() when Ansible is missing.
 */
static char *
ansible_view(const char *path)
{
	static const char script[] =
	    "import json, sys\n"
	    "d = json.load(sys.stdin)\n"
	    "hv = d['_meta']['hostvars']\n"
	    "parents = {}\n"
	    "hosts = set(hv)\n"
	    "for g, body in d.items():\n"
	    "    if g == '_meta': continue\n"
	    "    for c in body.get('children', []):\n"
	    "        parents.setdefault(c, set()).add(g)\n"
	    "    for h in body.get('hosts', []):\n"
	    "        hosts.add(h)\n"
	    "        parents.setdefault('@' + h, set()).add(g)\n"
	    "def ancestors(n, seen):\n"
	    "    for p in parents.get(n, ()):\n"
	    "        if p not in seen:\n"
	    "            seen.add(p)\n"
	    "            ancestors(p, seen)\n"
	    "    return seen\n"
	    "for h in sorted(hosts):\n"
	    "    gs = sorted(ancestors('@' + h, set()) - {'all'})\n"
	    "    print('%s groups=%s' % (h, ','.join(gs)))\n"
	    "    vs = hv.get(h, {})\n"
	    "    for k in sorted(vs):\n"
	    "        v = vs[k]\n"
	    "        if isinstance(v, list): v = 'a list'\n"
	    "        elif isinstance(v, dict): v = 'a mapping'\n"
	    "        print('%s %s=%s' % (h, k, v))\n";
	char *inv_argv[] = { "/usr/bin/ansible-inventory", "-i", (char *)path,
		"--list", NULL };
	char *py_argv[] = { (char *)tu_python(), "-c", (char *)script, NULL };
	struct tu_run r, py;
	char *out = NULL;

	if (tu_ansible(&r, "ansible_view", inv_argv, NULL) != 0)
		return NULL;
	ck_assert_msg(r.status == 0, "ansible-inventory -i %s: %s", path,
	    r.errout);
	tu_run(&py, py_argv, NULL, r.out, r.outlen);
	ck_assert_msg(py.status == 0, "python3: %s", py.errout);
	out = xstrdup(py.out);
	tu_run_free(&py);
	tu_run_free(&r);
	return out;
}

static int
cmp_host_names(const void *a, const void *b)
{
	return strcmp((*(const struct host *const *)a)->name,
	    (*(const struct host *const *)b)->name);
}

/* The same view of what envctl resolved. */
static char *
envctl_view(const struct inventory *inv)
{
	struct buf b = ENVCTL_BUF_INIT;
	const struct host **hs;
	const struct ynode *v;
	const char *name;
	char *val;
	size_t n = inventory_nhosts(inv), i, j;

	hs = xcalloc(n + 1, sizeof(*hs));
	for (i = 0; i < n; i++)
		hs[i] = inventory_host(inv, i);
	qsort(hs, n, sizeof(*hs), cmp_host_names);
	for (i = 0; i < n; i++) {
		buf_addf(&b, "%s groups=", hs[i]->name);
		for (j = 0; j < host_ngroups(hs[i]); j++)
			buf_addf(&b, "%s%s", j > 0 ? "," : "",
			    host_group(hs[i], j));
		buf_addch(&b, '\n');
		for (j = 0; j < host_nvars(hs[i]); j++) {
			v = host_var_at(hs[i], j, &name);
			val = var_text(hs[i], name);
			buf_addf(&b, "%s %s=%s\n", hs[i]->name, name,
			    v->type == ENVCTL_YSCALAR && yscalar_kind(v) ==
			    ENVCTL_YNULL ? "None" : val);
			free(val);
		}
	}
	free(hs);
	return buf_detach(&b, NULL);
}

/* Loads path and asserts that envctl reads it as ansible-inventory does. */
static void
assert_like_ansible(const char *path)
{
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	struct inventory *inv = NULL;
	char *want, *got;

	if (inventory_load(&inv, path, &err) != 0) {
		err_format(&err, &msg);
		ck_abort_msg("%s: %s", path, msg.data);
	}
	if ((want = ansible_view(path)) != NULL) {
		got = envctl_view(inv);
		ck_assert_msg(strcmp(got, want) == 0, "%s: envctl read\n%s\n"
		    "ansible-inventory read\n%s", path, got, want);
		free(got);
		free(want);
	}
	inventory_free(inv);
}

/* Every variable, group and host of the fleet, as ansible-inventory. */
START_TEST(test_against_ansible)
{
	char *path = tu_srcpath("tests/data/inventory/gpu-fleet.yaml");

	assert_like_ansible(path);
	free(path);
}
END_TEST

/* Writes the NULL-ended (name, content) pairs under dir, making folders. */
static void
write_tree(const char *dir, const char *const *files)
{
	char *path, *slash;
	size_t i;

	for (i = 0; files[i] != NULL; i += 2) {
		path = xasprintf("%s/%s", dir, files[i]);
		for (slash = strchr(path + strlen(dir) + 1, '/');
		    slash != NULL; slash = strchr(slash + 1, '/')) {
			*slash = '\0';
			(void)mkdir(path, 0700);
			*slash = '/';
		}
		free(tu_writes(NULL, path, files[i + 1]));
		free(path);
	}
}

/*
 * group_vars/ and host_vars/ beside the inventory: every file form, the
 * first form found winning, folders merged in sorted order (hidden files,
 * backups~ and other extensions skipped), and Ansible's precedence, where
 * group_vars/all beats the inventory's own group variables.
 */
START_TEST(test_vars_dirs)
{
	static const char *const files[] = {
		"hosts.yml",
		"all:\n"
		"  vars:\n    nccl_proto: LL\n    a: all-inv\n"
		"  children:\n"
		"    gpu:\n"
		"      vars:\n        b: gpu-inv\n        c: gpu-inv\n"
		"      hosts:\n        g1:\n          d: host-inv\n"
		"        g2:\n"
		"    h100:\n      hosts:\n        g2:\n",
		"group_vars/all.yml", "c: gv-all\ne: gv-all\nn:\n",
		"group_vars/gpu/10.yml", "nccl_proto: Simple\nd: gv-gpu\n",
		"group_vars/gpu/20", "nccl_proto: LL128\nl: [1, 2]\n",
		"group_vars/gpu/30.txt", "nccl_proto: ignored\n",
		"group_vars/gpu/.40.yml", "nccl_proto: hidden\n",
		"group_vars/gpu/50.yml~", "nccl_proto: backup\n",
		"group_vars/gpu/sub/60.yml", "f: nested\n",
		"group_vars/gpu/empty.yml", "",
		"group_vars/gpu.yml", "x: shadowed by the folder\n",
		/* JSON first, as Ansible's loader: 1e3 is a float, not text. */
		"group_vars/h100.json", "{\"h\": \"json\", \"m\": {\"k\": 1}, "
		"\"q\": 1e3}\n",
		"host_vars/g1.yaml", "e: hv-g1\n",
		"host_vars/g2", "e: noext\n",
		"host_vars/g2.yml", "e: shadowed\n",
		NULL,
	};
	char *dir = tu_mkdtemp(), *path;
	struct err err = ENVCTL_ERR_INIT;
	struct inventory *inv;
	const struct host *g1, *g2;

	write_tree(dir, files);
	path = xasprintf("%s/hosts.yml", dir);
	assert_like_ansible(path);
	ck_assert_int_eq(inventory_load(&inv, path, &err), 0);
	g1 = find(inv, "g1");
	g2 = find(inv, "g2");
	assert_var(g1, "nccl_proto", "LL128");
	assert_var(g1, "c", "gv-all");
	assert_var(g1, "d", "host-inv");
	assert_var(g2, "d", "gv-gpu");
	assert_var(g1, "e", "hv-g1");
	assert_var(g2, "e", "noext");
	assert_var(g1, "f", "nested");
	assert_var(g1, "x", "(unset)");
	assert_var(g2, "h", "json");
	assert_var(g2, "q", "1000.0");
	/* Every file read is part of the inventory's digest. */
	ck_assert_uint_eq(inventory_nfiles(inv), 9);
	ck_assert_str_eq(inventory_file(inv, 0), path);
	inventory_free(inv);
	tu_rmtree(dir);
	free(dir);
	free(path);
}
END_TEST

/*
 * An inventory directory: its files in sorted order, the names Ansible
 * skips skipped (hidden, .ini, .cfg, .md, backups~), folders read in turn,
 * and group_vars/ inside it.
 */
START_TEST(test_inventory_dir)
{
	static const char *const files[] = {
		"inv/10-base.yml",
		"all:\n  children:\n    gpu:\n      hosts:\n        g1:\n"
		"        g2:\n",
		"inv/20-more.yaml", "gpu:\n  vars:\n    v: from-20\n"
		"  hosts:\n    g3:\n",
		"inv/30-ignored.ini", "[gpu]\nnot-loaded\n",
		"inv/README.md", "# readme\n",
		"inv/.hidden/x.yml", "all:\n  hosts:\n    hidden-host:\n",
		"inv/40.yml~", "all:\n  hosts:\n    backup-host:\n",
		"inv/site.cfg", "x\n",
		"inv/sub/50.yml", "all:\n  hosts:\n    g4:\n      w: sub\n",
		"inv/group_vars/gpu.yml", "v: gv\na: 1\n",
		"inv/group_vars/all/x.yml", "v: all\n",
		NULL,
	};
	char *dir = tu_mkdtemp(), *path, *digest, *want;
	struct err err = ENVCTL_ERR_INIT;
	struct inventory *inv;

	write_tree(dir, files);
	path = xasprintf("%s/inv", dir);
	assert_like_ansible(path);
	ck_assert_int_eq(inventory_load(&inv, path, &err), 0);
	ck_assert_uint_eq(inventory_nhosts(inv), 4);
	ck_assert_ptr_null(inventory_find(inv, "not-loaded"));
	assert_var(find(inv, "g3"), "v", "gv");
	assert_var(find(inv, "g4"), "v", "all");
	want = xasprintf("%s/inv/20-more.yaml", dir);
	ck_assert_str_eq(find(inv, "g3")->file, want);
	free(want);
	digest = xstrdup(inventory_digest(inv));
	inventory_free(inv);
	/* Changing a vars file changes the digest a plan file records. */
	free(tu_writes(dir, "inv/group_vars/gpu.yml", "v: gv\na: 2\n"));
	ck_assert_int_eq(inventory_load(&inv, path, &err), 0);
	ck_assert_str_ne(inventory_digest(inv), digest);
	inventory_free(inv);
	free(digest);
	tu_rmtree(dir);
	free(dir);
	free(path);
}
END_TEST

/* tmpl with each '@' replaced by s. */
static char *
subst(const char *tmpl, const char *s)
{
	struct buf b = ENVCTL_BUF_INIT;

	for (; *tmpl != '\0'; tmpl++)
		if (*tmpl == '@')
			buf_addstr(&b, s);
		else
			buf_addch(&b, *tmpl);
	return buf_detach(&b, NULL);
}

/*
 * A vault-encrypted vars file may set any variable: envctl cannot know the
 * hosts' connection variables (ansible-inventory fails too without the
 * password), and says so once, naming the file.  Broken vars files are
 * errors with file:line:col.
 */
START_TEST(test_vars_file_errors)
{
	static const char *const files[] = {
		"hosts.yml", "all:\n  children:\n    gpu:\n      hosts:\n"
		"        g1:\n        g2:\n",
		"group_vars/all.yml", "x: 1\n",
		NULL,
	};
	static const struct {
		const char	*text;
		int		 code;
		const char	*want;	/* each @ is the vars file */
	} cases[] = {
		{ "$ANSIBLE_VAULT;1.1;AES256\n3132\n", ENVCTL_EUNSUPPORTED,
		  "g1: @: this host's connection variables may be set by "
		  "the vault-encrypted file '@', which envctl cannot "
		  "decrypt (and 1 more host)\n" },
		{ "- a list\n", ENVCTL_EINVALID,
		  "@:1:1: a vars file must be a mapping of variables, got a "
		  "list\n" },
		{ "a: [1\n", ENVCTL_EPARSE,
		  "@:2:1: did not find expected ',' or ']', while parsing a "
		  "flow sequence at line 1\n" },
		{ "1: x\n", ENVCTL_EINVALID,
		  "@:1:1: variable names must be non-empty strings without "
		  "NUL bytes, got an integer\n" },
	};
	char *dir = tu_mkdtemp(), *path, *vars, *want;
	struct err err = ENVCTL_ERR_INIT;
	struct buf msg = ENVCTL_BUF_INIT;
	struct inventory *inv;
	size_t i;

	write_tree(dir, files);
	path = xasprintf("%s/hosts.yml", dir);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		vars = tu_writes(dir, "group_vars/gpu", cases[i].text);
		ck_assert_int_eq(inventory_load(&inv, path, &err),
		    cases[i].code);
		ck_assert_ptr_null(inv);
		err_format(&err, &msg);
		want = subst(cases[i].want, vars);
		ck_assert_str_eq(msg.data, want);
		free(want);
		free(vars);
		err_release(&err);
		buf_reset(&msg);
	}
	buf_release(&msg);
	tu_rmtree(dir);
	free(dir);
	free(path);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("inventory");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_fleet_order);
	tcase_add_test(tc, test_fleet_precedence);
	tcase_add_test(tc, test_fleet_connection);
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_range_errors);
	tcase_add_test(tc, test_structure_errors);
	tcase_add_test(tc, test_no_hosts);
	tcase_add_test(tc, test_cycles);
	tcase_add_test(tc, test_connection_errors);
	tcase_add_test(tc, test_connection_values);
	tcase_add_test(tc, test_interpreters);
	tcase_add_test(tc, test_ansible_forms);
	tcase_add_test(tc, test_many_hosts);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_against_ansible);
	tcase_add_test(tc, test_vars_dirs);
	tcase_add_test(tc, test_inventory_dir);
	tcase_add_test(tc, test_vars_file_errors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
