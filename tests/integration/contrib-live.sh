#!/bin/sh
# SPDX-License-Identifier: MIT
# contrib/'s monitoring files against the real thing: a private daemon on a
# loopback --health-listen port, scraped every second by a real Prometheus
# (private storage, loopback) that loads contrib/prometheus/entropyd-alerts.yml.
# Every query of contrib/grafana/entropyd-dashboard.json, its variables
# resolved and Grafana's interval variables filled in, must return data; every
# alert rule must evaluate without error, none may fire for the healthy
# daemon, and EntropydDown must go pending once the daemon is stopped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
command -v prometheus >/dev/null 2>&1 ||
    skip_all "prometheus is not installed (Debian package prometheus)"
rules=$top_srcdir/contrib/prometheus/entropyd-alerts.yml
dashboard=$top_srcdir/contrib/grafana/entropyd-dashboard.json
queries=$top_srcdir/tests/integration/grafana-queries.py
# One point per dashboard query and query variable, and three more.
nqueries=$(json 'sum(1 for p in d["panels"] for x in [p] + p.get("panels", [])
        for t in x.get("targets", []) if "expr" in t)
    + sum(1 for v in d["templating"]["list"] if v["type"] == "query")' <"$dashboard")
plan $((nqueries + 3))

port=$(free_port)
feed_random "$tmp/in"
start_daemon "$tmp/s" "$tmp/log" "$tmp/in" --health-listen "127.0.0.1:$port"
# Prometheus starts once the source runs, so a healthy daemon is all it sees.
running() {
	curl -s --max-time 30 "http://127.0.0.1:$port/metrics" >"$tmp/metrics" &&
	    grep -q '^entropyd_source_state{source="file",state="running"} 1$' "$tmp/metrics"
}
wait_for 300 running || diag_file "$tmp/log"

pport=$(free_port)
prom_url=http://127.0.0.1:$pport
cat >"$tmp/prometheus.yml" <<EOT
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - '$rules'
scrape_configs:
  - job_name: entropyd
    static_configs:
      - targets: ['127.0.0.1:$port']
EOT
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
    --web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
prom=$!
track $prom

# query EXPR: an instant query's answer, into $tmp/q.json.
query() {
	curl -s --max-time 30 -G "$prom_url/api/v1/query" --data-urlencode "query=$1" \
	    -o "$tmp/q.json"
}
# Whether Prometheus holds at least 3 successful scrapes of the daemon: enough
# for rate() over any window the dashboard uses.
scraped() {
	query 'sum_over_time(up{job="entropyd"}[1m]) >= 3' &&
	    test "$(json 'len(d["data"]["result"])' <"$tmp/q.json" 2>/dev/null)" = 1
}
# Whether every rule has been evaluated at least once (into $tmp/rules.json).
rules_evaluated() {
	curl -s --max-time 30 "$prom_url/api/v1/rules" -o "$tmp/rules.json" &&
	    test "$(json 'len([r for g in d["data"]["groups"] for r in g["rules"]
	        if not r["lastEvaluation"].startswith("0001-")])' <"$tmp/rules.json" 2>/dev/null)" = \
	    "$(grep -c '^ *- alert:' "$rules")"
}
wait_for 300 scraped || diag_file "$tmp/prometheus.log"
wait_for 100 rules_evaluated || diag_file "$tmp/prometheus.log"

# The dashboard: one point per variable and per query.
python3 "$queries" "$prom_url" "$dashboard" "$tmp/metrics" >"$tmp/queries.txt"
tab=$(printf '\t')
while IFS="$tab" read -r status what expr detail; do
	case $status in
	ok) ok "$what returns data ($detail)" ;;
	nodata)
		not_ok "$what returned no data"
		diag "query: $expr" "$detail"
		;;
	*)
		not_ok "$what failed"
		diag "query: $expr" "$detail"
		;;
	esac
done <"$tmp/queries.txt"

# The rules: all loaded, each evaluated without error.
check "every alert rule of the file is loaded and evaluates with health ok" test \
    "$(json 'sorted(r["name"] for g in d["data"]["groups"] for r in g["rules"] if r["health"] == "ok")' \
    <"$tmp/rules.json")" = \
    "$(sed -n 's/^ *- alert: *//p' "$rules" | sort | python3 -c 'import sys; print(sorted(sys.stdin.read().split()))')"
json '"\n".join("%s: %s %s" % (r["name"], r["health"], r.get("lastError", ""))
    for g in d["data"]["groups"] for r in g["rules"] if r["health"] != "ok")' <"$tmp/rules.json" |
    while IFS= read -r line; do [ -z "$line" ] || diag "$line"; done

# For a healthy daemon nothing is pending or firing (waiting out a scrape
# that timed out on a loaded machine, which makes EntropydDown pending for a
# second).
quiet() {
	curl -s --max-time 30 "$prom_url/api/v1/alerts" -o "$tmp/alerts.json" &&
	    test "$(json 'len(d["data"]["alerts"])' <"$tmp/alerts.json")" = 0
}
wait_for 50 quiet
check "no alert is pending or firing for a healthy daemon" quiet
show_if_failed "$tmp/alerts.json"

# A stopped daemon: up goes to 0 and EntropydDown is pending (its for: is 2m).
stop "$daemon"
down_pending() {
	curl -s --max-time 30 "$prom_url/api/v1/alerts" -o "$tmp/alerts.json" &&
	    test "$(json '[(a["labels"]["alertname"], a["labels"]["instance"], a["state"])
	        for a in d["data"]["alerts"]]' <"$tmp/alerts.json")" = \
	    "[('EntropydDown', '127.0.0.1:$port', 'pending')]"
}
wait_for 150 down_pending
check "with the daemon stopped, EntropydDown is pending for its instance, nothing else" down_pending
show_if_failed "$tmp/alerts.json" "$tmp/prometheus.log"
stop "$prom"
finish
