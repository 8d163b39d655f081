#!/usr/bin/python3
"""A Slurm appliance's dynamic inventory, as an OpenStack query would give
it: every host's variables in _meta, so Ansible asks only once."""
import json
import sys

CLUSTER = "hpc"


def inventory():
    hostvars = {}
    compute = []
    for i in range(4):
        name = "%s-compute-%d" % (CLUSTER, i)
        compute.append(name)
        hostvars[name] = {
            "ansible_host": "10.60.0.%d" % (20 + i),
            "openstack_flavor": "g.8xH100" if i < 2 else "c.64",
            "gpu_count": 8 if i < 2 else 0,
            "numa": {"nodes": 2, "cpus_per_node": 32},
        }
    hostvars["%s-login-0" % CLUSTER] = {"ansible_host": "10.60.0.10",
                                        "floating_ip": None}
    hostvars["%s-control" % CLUSTER] = {"ansible_host": "10.60.0.5"}
    return {
        "_meta": {"hostvars": hostvars},
        "all": {"vars": {"openhpc_cluster_name": CLUSTER,
                         "ansible_user": "rocky"}},
        "login": {"hosts": ["%s-login-0" % CLUSTER]},
        "control": {"hosts": ["%s-control" % CLUSTER],
                    "vars": {"appliances_state_dir": "/var/lib/state"}},
        "compute": {"hosts": compute,
                    "vars": {"openhpc_slurm_partition": "normal"}},
        "gpu": {"hosts": compute[:2],
                "vars": {"openhpc_slurm_partition": "gpu"}},
        "cluster": {"children": ["login", "control", "compute"]},
        "openhpc": {"children": ["cluster"]},
    }


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--list":
        json.dump(inventory(), sys.stdout, indent=2)
    elif len(sys.argv) == 3 and sys.argv[1] == "--host":
        json.dump({}, sys.stdout)
    else:
        sys.stderr.write("usage: %s --list | --host HOST\n" % sys.argv[0])
        sys.exit(2)
