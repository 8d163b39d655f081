#!/bin/sh
# A dynamic inventory without _meta: Ansible asks --host for every host.
case $1 in
--list)
	cat <<'JSON'
{
  "gpu": ["dgx-a", "dgx-b"],
  "login": {"hosts": ["login-a"], "vars": {"motd": "hello"}},
  "slurm": {"children": ["gpu", "login"], "vars": {"slurm_partition": "batch"}}
}
JSON
	;;
--host)
	case $2 in
	dgx-a) echo '{"ansible_host": "10.7.0.1", "gpu_count": 8, "nccl_proto": "LL"}' ;;
	dgx-b) echo '{"ansible_host": "10.7.0.2", "gpu_count": 4}' ;;
	*) echo '{}' ;;
	esac
	;;
*)
	echo "usage: $0 --list | --host HOST" >&2
	exit 2
	;;
esac
