#!/bin/sh
# SPDX-License-Identifier: MIT
# contrib/grafana/entropyd-dashboard.json without Grafana: valid JSON, one
# data source variable that every panel and query uses (no data source UID
# written in), only variables it defines, panels laid out without overlap,
# and the panels the dashboard is for. contrib-live.sh runs its queries
# against a real Prometheus.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed (needed to read JSON)"
dashboard=$top_srcdir/contrib/grafana/entropyd-dashboard.json
plan 6

# dash EXPR: evaluate a Python expression over the dashboard (d), its panels
# (p, rows' panels too) and its query targets (t: (panel, target) pairs).
dash() {
	python3 -c "
import json, re, sys
d = json.load(open(sys.argv[1]))
p = [x for y in d['panels'] for x in [y] + y.get('panels', [])]
t = [(x, q) for x in p for q in x.get('targets', [])]
def walk(o, key):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == key:
                yield v
            yield from walk(v, key)
    elif isinstance(o, list):
        for v in o:
            yield from walk(v, key)
print($1)" "$dashboard"
}

check "the dashboard is valid JSON with a title, a uid and panels" \
    test "$(dash 'bool(d["title"] and d["uid"] and p)')" = True
check "a data source variable of type prometheus" \
    test "$(dash '[v["name"] for v in d["templating"]["list"] if v["type"] == "datasource" and v["query"] == "prometheus"]')" = "['datasource']"
dash '[x["title"] for x in p if x["type"] != "row" and x.get("datasource") != {"type": "prometheus", "uid": "${datasource}"}]
    + ["%s %s" % (x["title"], q.get("refId")) for x, q in t if q.get("datasource") != {"type": "prometheus", "uid": "${datasource}"}]
    + [v["name"] for v in d["templating"]["list"] if v["type"] == "query" and v["datasource"] != {"type": "prometheus", "uid": "${datasource}"}]
    + [u for u in walk(d["panels"], "uid") if u != "${datasource}"]
    + [u for u in walk(d["templating"], "uid") if u != "${datasource}"]
    + [str(x) for x in walk(d, "__inputs")]' >"$tmp/ds" 2>&1
check "every panel, query and variable uses \${datasource}; no data source UID is written in" \
    test "$(cat "$tmp/ds")" = "[]"
show_if_failed "$tmp/ds"
dash 'sorted(set(m for x, q in t for m in re.findall(r"\$\{?(\w+)", q.get("expr", "")))
    - {v["name"] for v in d["templating"]["list"]} - {"__rate_interval", "__interval", "__range"})
    + [x["title"] for x, q in t if not q.get("expr")]' >"$tmp/vars" 2>&1
check "every query has an expr and uses only the variables the dashboard defines" \
    test "$(cat "$tmp/vars")" = "[]"
show_if_failed "$tmp/vars"
dash '[(a["title"], b["title"]) for i, a in enumerate(p) for b in p[i + 1:]
       if a["gridPos"]["x"] < b["gridPos"]["x"] + b["gridPos"]["w"] and b["gridPos"]["x"] < a["gridPos"]["x"] + a["gridPos"]["w"]
       and a["gridPos"]["y"] < b["gridPos"]["y"] + b["gridPos"]["h"] and b["gridPos"]["y"] < a["gridPos"]["y"] + a["gridPos"]["h"]]
    + [x["title"] for x in p if x["gridPos"]["x"] + x["gridPos"]["w"] > 24]
    + ([] if len({x["id"] for x in p}) == len(p) else ["duplicate panel ids"])' >"$tmp/grid" 2>&1
check "panels have unique ids and neither overlap nor pass the 24 columns" \
    test "$(cat "$tmp/grid")" = "[]"
show_if_failed "$tmp/grid"
# What the dashboard is for: credited rate per source, states over time,
# failures by test, sink feeds.
dash '[want for want, ok in [
    ("credited rate per source", any(re.search(r"by \([^)]*source[^)]*\) \(rate\(entropyd_credited_bytes_total", q["expr"]) for x, q in t)),
    ("states over time", any(x["type"] == "state-timeline" and "entropyd_source_state" in q["expr"] for x, q in t)),
    ("failures by test", any(re.search(r"by \([^)]*test[^)]*\) \(rate\(entropyd_test_failures_total", q["expr"]) for x, q in t)),
    ("sink feeds", any("entropyd_kernel_feeds_total" in q["expr"] for x, q in t))] if not ok]' \
    >"$tmp/panels" 2>&1
check "panels for credited rate per source, states over time, failures by test and sink feeds" \
    test "$(cat "$tmp/panels")" = "[]"
show_if_failed "$tmp/panels"
finish
