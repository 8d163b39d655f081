#!/usr/bin/python3
"""lint-contrib.py - the shipped Slurm script and Kubernetes manifests parse.

No cluster here: the manifests are checked for syntax (python3-yaml) and
for what envctl needs of them: an Indexed Job whose completions equal the
--shards it passes with --shard auto, and a merge Job running `envctl
report merge` over the shards' files. The Slurm script is checked by
bash -n and for its array and --shard auto (tests/slurm runs it for real).
"""
import re
import subprocess
import sys

import yaml

bad = []
jobs = {}
for path in ("contrib/kubernetes/envctl-drift-job.yaml",
             "contrib/kubernetes/envctl-drift-merge-job.yaml"):
    try:
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                jobs[doc["metadata"]["name"]] = doc
    except (OSError, yaml.YAMLError, KeyError, TypeError) as e:
        bad.append("%s: %s" % (path, e))
shards = jobs.get("envctl-drift", {}).get("spec", {})
if shards.get("completionMode") != "Indexed":
    bad.append("envctl-drift: not an Indexed Job")
args = " ".join(shards.get("template", {}).get("spec", {})
                .get("containers", [{}])[0].get("args", []))
m = re.search(r"--shard auto --shards (\d+)", args)
if not m or int(m.group(1)) != shards.get("completions"):
    bad.append("envctl-drift: --shards differs from completions")
merge = jobs.get("envctl-drift-merge", {}).get("spec", {})
margs = " ".join(merge.get("template", {}).get("spec", {})
                 .get("containers", [{}])[0].get("args", []))
if "envctl report merge" not in margs:
    bad.append("envctl-drift-merge: no envctl report merge")
sb = "contrib/slurm/envctl-drift.sbatch"
if subprocess.run(["bash", "-n", sb]).returncode != 0:
    bad.append("%s: bash -n fails" % sb)
with open(sb) as f:
    text = f.read()
if "#SBATCH --array=" not in text or "--shard auto" not in text:
    bad.append("%s: no #SBATCH --array or --shard auto" % sb)
for b in bad:
    print("lint-contrib: " + b, file=sys.stderr)
if not bad:
    print("lint-contrib: ok")
sys.exit(1 if bad else 0)
