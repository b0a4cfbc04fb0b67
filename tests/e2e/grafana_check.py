#!/usr/bin/env python3
"""Checks every query of a Grafana dashboard against a /metrics text.

Usage: grafana_check.py DASHBOARD.json METRICS.txt

Each metric name a query uses (muster_...) must be a series muster exports,
each label a selector or a `by (...)` names must be a label of the series
it is applied to (le on _bucket series), and each `label="value"` matcher
must match at least one series. Prints one line per problem and exits 1 if
there is any; prints the number of queries checked and exits 0 otherwise.
"""
import json
import re
import sys


def series(text):
    """name -> list of label dicts, from the Prometheus text format."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s', line)
        if not m:
            continue
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        out.setdefault(m.group(1), []).append(labels)
    return out


def exprs(dash):
    for p in dash.get("panels", []):
        for t in p.get("targets", []):
            if t.get("expr"):
                yield p.get("title", "?"), t["expr"]


def main():
    dash = json.load(open(sys.argv[1]))
    have = series(open(sys.argv[2]).read())
    bad, n = [], 0
    for title, e in exprs(dash):
        n += 1
        used = set()
        for m in re.finditer(r'\b(muster_[a-z0-9_]+)(\{([^}]*)\})?', e):
            name, sel = m.group(1), m.group(3)
            used.add(name)
            if name not in have:
                bad.append("%s: %s: no series %s in /metrics" % (title, e, name))
                continue
            for k, op, v in re.findall(r'([a-zA-Z_]+)\s*(=~|!=|!~|=)\s*"([^"]*)"', sel or ""):
                if not any(k in lb for lb in have[name]):
                    bad.append("%s: %s: %s has no label %s" % (title, e, name, k))
                elif op == "=" and not any(lb.get(k) == v for lb in have[name]):
                    bad.append("%s: %s: no %s{%s=\"%s\"}" % (title, e, name, k, v))
        for group in re.findall(r'\bby\s*\(([^)]*)\)', e):
            for k in [x.strip() for x in group.split(",") if x.strip()]:
                if not any(k in lb for name in used if name in have for lb in have[name]):
                    bad.append("%s: %s: by (%s): no series of %s has it" % (title, e, k, ", ".join(sorted(used))))
        if not used:
            bad.append("%s: %s: uses no muster metric" % (title, e))
    for b in bad:
        print(b)
    if bad:
        return 1
    print("%d queries checked" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
