#!/bin/sh
# SPDX-License-Identifier: MIT
# A real Prometheus server, on loopback with private storage, scrapes the
# daemon's --health-listen endpoint; its query API then has entropyd_ series.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
command -v prometheus >/dev/null 2>&1 ||
    skip_all "prometheus is not installed (Debian package prometheus)"
plan 4

port=$(free_port)
feed_random "$tmp/in"
start_daemon "$tmp/s" "$tmp/log" "$tmp/in" --health-listen "127.0.0.1:$port"
wait_for 100 sh -c "curl -s --max-time 30 -o /dev/null http://127.0.0.1:$port/metrics"

pport=$(free_port)
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: entropyd
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
    --web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
prom=$!
track $prom

# query EXPR: the API's answer for an instant query, into $tmp/q.json.
query() {
	curl -s --max-time 30 -G "http://127.0.0.1:$pport/api/v1/query" \
	    --data-urlencode "query=$1" -o "$tmp/q.json"
}
# Whether Prometheus holds a positive entropyd_bytes_read_total for the file source.
scraped() {
	query 'entropyd_bytes_read_total{source="file"}' &&
	    test "$(json 'float(d["data"]["result"][0]["value"][1]) > 0' <"$tmp/q.json" 2>/dev/null)" = True
}
wait_for 600 scraped
check "Prometheus scraped entropyd_bytes_read_total{source=\"file\"} > 0" scraped
check "the scrape target is up" sh -c \
    "curl -s --max-time 30 -G http://127.0.0.1:$pport/api/v1/query --data-urlencode 'query=up{job=\"entropyd\"}' |
     grep -q '\"value\":\[[0-9.]*,\"1\"\]'"
query 'entropyd_source_state{source="file",state="running"}'
check "entropyd_source_state says running" \
    test "$(json 'd["data"]["result"][0]["value"][1]' <"$tmp/q.json")" = 1
query 'count({__name__=~"entropyd_test_failures_total"})'
check "one entropyd_test_failures_total series per test (8, repeat among them)" \
    test "$(json 'd["data"]["result"][0]["value"][1]' <"$tmp/q.json")" = 8
kill "$prom"
finish
