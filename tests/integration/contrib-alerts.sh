#!/bin/sh
# SPDX-License-Identifier: MIT
# contrib/prometheus/entropyd-alerts.yml: promtool accepts it, its unit tests
# (entropyd-alerts-test.yml) pass, every alert has a test where it fires and
# one where it must not, and every alert carries a severity, a for:, a summary
# and a description (naming the source for the per-source alerts).
. "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null 2>&1 ||
    skip_all "promtool is not installed (Debian package prometheus)"
dir=$top_srcdir/contrib/prometheus
rules=$dir/entropyd-alerts.yml
plan 4

promtool check rules "$rules" >"$tmp/check.log" 2>&1
check "promtool check rules accepts entropyd-alerts.yml" grep -q SUCCESS "$tmp/check.log"
show_if_failed "$tmp/check.log"

# promtool reads the rule file named in the test file relative to it.
(cd "$dir" && promtool test rules entropyd-alerts-test.yml) >"$tmp/test.log" 2>&1
check "promtool test rules: every unit test of the alerts passes" grep -q SUCCESS "$tmp/test.log"
show_if_failed "$tmp/test.log"

if ! python3 -c 'import yaml' 2>/dev/null; then
	skip "python3-yaml is not installed (needed to read the rules)"
	skip "python3-yaml is not installed (needed to read the rules)"
	finish
fi
# yaml EXPR: evaluate a Python expression over the rules (r) and their tests (t),
# printing what it returns (an empty list when all is well).
yaml() {
	python3 -c "
import sys, yaml
r = [rule for g in yaml.safe_load(open(sys.argv[1]))['groups'] for rule in g['rules']]
t = [c for test in yaml.safe_load(open(sys.argv[2]))['tests']
     for c in test.get('alert_rule_test', [])]
print($1)" "$rules" "$dir/entropyd-alerts-test.yml"
}
yaml '[x["alert"] for x in r
       if not any(c["alertname"] == x["alert"] and c.get("exp_alerts") for c in t)
       or not any(c["alertname"] == x["alert"] and not c.get("exp_alerts") for c in t)]' \
    >"$tmp/uncovered" 2>&1
check "every alert has a unit test where it fires and one where it does not" \
    test "$(cat "$tmp/uncovered")" = "[]"
show_if_failed "$tmp/uncovered"
yaml '[x["alert"] for x in r
       if x.get("labels", {}).get("severity") not in ("critical", "warning")
       or "for" not in x
       or not x.get("annotations", {}).get("summary")
       or not x.get("annotations", {}).get("description")
       or (x["alert"].startswith("EntropydSource")
           and "$labels.source" not in x["annotations"]["summary"])]' >"$tmp/bare" 2>&1
check "every alert has a severity (critical, warning), a for:, a summary (naming the source of a per-source alert) and a description" \
    test "$(cat "$tmp/bare")" = "[]"
show_if_failed "$tmp/bare"
finish
