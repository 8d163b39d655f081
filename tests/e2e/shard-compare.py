#!/usr/bin/python3
"""shard-compare.py - a merged report and metrics file equal an unsharded run's.

usage: shard-compare.py FULL.json MERGED.json FULL.prom MERGED.prom SHARD.json...

What may differ between two runs is left out: the run's timestamp and
duration, each host's seconds and connection stats (the first run uploads
the agent), and the metrics' timestamp and duration values. Both metrics files must parse with prometheus_client, have the same
HELP and TYPE per family, and every shard report must hold its own shard.
Prints what differs and exits 1, else exits 0.
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

RUN_TIMES = ("envctl_last_run_timestamp_seconds", "envctl_run_duration_seconds")


def report(path):
    with open(path) as f:
        doc = json.load(f)
    doc.pop("run", None)
    for h in doc["hosts"]:
        h.pop("seconds", None)
        h.pop("stats", None)
    return doc


def metrics(path):
    with open(path) as f:
        text = f.read()
    fams = list(text_string_to_metric_families(text))
    lines = [ln for ln in text.splitlines()
             if not ln.startswith(RUN_TIMES)]
    return fams, lines


def main():
    full, merged, fprom, mprom = sys.argv[1:5]
    bad = []
    a, b = report(full), report(merged)
    if a != b:
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                bad.append("report key %r differs:\n  full   %s\n  merged %s"
                           % (k, json.dumps(a.get(k))[:400],
                              json.dumps(b.get(k))[:400]))
    (fa, la), (fb, lb) = metrics(fprom), metrics(mprom)
    if la != lb:
        bad.append("metrics differ:\n" + "\n".join(
            "  -%s\n  +%s" % (x, y) for x, y in zip(la, lb) if x != y)
            + "\n  (%d lines, %d lines)" % (len(la), len(lb)))
    if [(f.name, f.documentation, f.type) for f in fa] != \
            [(f.name, f.documentation, f.type) for f in fb]:
        bad.append("metrics families (HELP, TYPE) differ")
    seen = {}
    for i, path in enumerate(sys.argv[5:]):
        with open(path) as f:
            doc = json.load(f)
        sh = doc.get("shard") or {}
        if sh.get("count") != len(sys.argv[5:]):
            bad.append("%s: shard %r" % (path, sh))
        for h in doc["hosts"]:
            if h["name"] in seen and seen[h["name"]] != path:
                bad.append("%s in %s and %s" % (h["name"], seen[h["name"]],
                                                path))
            seen[h["name"]] = path
    if sys.argv[5:] and sorted(seen) != sorted(h["name"] for h in a["hosts"]):
        bad.append("the shards' hosts are not the fleet's")
    for m in bad:
        print(m)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
