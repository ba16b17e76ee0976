#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run every query of a Grafana dashboard through a Prometheus server's HTTP API.

usage: grafana-queries.py PROMETHEUS_URL DASHBOARD.json METRICS.txt

The dashboard's query variables are resolved first, as Grafana does
(label_values() through /api/v1/label/NAME/values, "All" selected, the values
regex-escaped and joined as (a|b)); then each panel target's expr, with the
variables and Grafana's interval variables substituted, is run as an instant
query (/api/v1/query). One line per variable and per query, fields separated
by tabs: ok|nodata|error, what (variable or panel and refId), the query, a
detail. For a query that returned nothing, the detail names the entropyd_
metrics it uses that METRICS.txt (the daemon's /metrics) does not export.
Exit status 0 when every line is ok.
"""
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

# What Grafana puts in for its interval variables, for a Prometheus data
# source whose scrape interval is set to 15 s (Grafana's default):
# $__rate_interval = max($__interval + 15s, 4 x 15s).
GRAFANA_INTERVALS = {"__rate_interval": "1m", "__interval": "15s", "__range": "6h"}


def api(base, path, params):
    """GET base/path?params; the decoded JSON answer, or an error string."""
    url = base.rstrip("/") + path + "?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        try:
            return json.load(e)
        except ValueError:
            return {"status": "error", "error": "HTTP %d" % e.code}
    except (OSError, ValueError) as e:
        return {"status": "error", "error": str(e)}


def regex_escape(value):
    """A value as Grafana escapes it for a Prometheus regex matcher."""
    value = value.replace("\\", "\\\\\\\\")
    return re.sub(r"[$^*{}\[\]'+?.()|]", lambda m: "\\\\" + m.group(0), value)


def substitute(text, variables):
    """text with $name, ${name} and [[name]] replaced; unknown names stay."""
    def one(m):
        name = m.group(1) or m.group(2) or m.group(3)
        return variables.get(name, m.group(0))
    return re.sub(r"\$\{(\w+)\}|\$(\w+)|\[\[(\w+)\]\]", one, text)


def panels_of(dash):
    """Every panel, those inside collapsed rows too."""
    for p in dash.get("panels", []):
        yield p
        for inner in p.get("panels", []):
            yield inner


def one_line(text):
    return " ".join(text.split())


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 64
    base, dash_path, metrics_path = sys.argv[1:]
    with open(dash_path) as f:
        dash = json.load(f)
    with open(metrics_path) as f:
        exported = set(re.findall(r"^(entropyd_\w+)", f.read(), re.M))
    variables = dict(GRAFANA_INTERVALS)
    failed = False

    for var in dash.get("templating", {}).get("list", []):
        if var.get("type") != "query":
            continue
        name = var["name"]
        definition = var.get("definition") or var["query"]
        if isinstance(definition, dict):
            definition = definition["query"]
        m = re.fullmatch(r"\s*label_values\(\s*(?:(.*),\s*)?(\w+)\s*\)\s*", definition, re.S)
        if not m:
            print("error\tvariable $%s\t%s\tnot a label_values() query" % (name, definition))
            failed = True
            continue
        selector, label = m.group(1), m.group(2)
        params = {}
        if selector:
            params["match[]"] = substitute(selector, variables)
        answer = api(base, "/api/v1/label/%s/values" % label, params)
        values = sorted(answer.get("data") or []) if answer.get("status") == "success" else []
        if answer.get("status") != "success":
            print("error\tvariable $%s\t%s\t%s" % (name, definition, answer.get("error")))
            failed = True
        elif not values:
            print("nodata\tvariable $%s\t%s\tno values" % (name, definition))
            failed = True
        else:
            print("ok\tvariable $%s\t%s\t%s" % (name, definition, ", ".join(values)))
        variables[name] = "(" + "|".join(regex_escape(v) for v in values) + ")"

    for panel in panels_of(dash):
        for target in panel.get("targets", []):
            if "expr" not in target:
                continue
            what = "panel '%s' query %s" % (panel.get("title", "?"), target.get("refId", "?"))
            query = one_line(substitute(target["expr"], variables))
            left = re.findall(r"\$\{?\w+|\[\[\w+\]\]", query)
            if left:
                print("error\t%s\t%s\tunknown variables: %s" % (what, query, ", ".join(left)))
                failed = True
                continue
            answer = api(base, "/api/v1/query", {"query": query})
            if answer.get("status") != "success":
                print("error\t%s\t%s\t%s" % (what, query, answer.get("error")))
                failed = True
            elif not answer["data"]["result"]:
                missing = sorted(set(re.findall(r"entropyd_\w+", query)) - exported)
                detail = ("not exported by the daemon: " + ", ".join(missing)) if missing else \
                    "every metric it uses is exported"
                print("nodata\t%s\t%s\t%s" % (what, query, detail))
                failed = True
            else:
                print("ok\t%s\t%s\t%d series" % (what, query, len(answer["data"]["result"])))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
