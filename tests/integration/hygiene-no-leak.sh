#!/bin/sh
# SPDX-License-Identifier: MIT
# No random byte reaches a log line or an HTTP answer: a daemon fed known
# bytes (SHA-256 in counter mode over a fixed key: they pass FIPS, the daemon
# sees only bytes) logs at debug level, reports on SIGUSR1 and answers
# /health, /metrics, /sources and /sources/file; no 8-byte piece of its input
# or of its conditioned output appears in any of it, raw or as hex.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
plan 6

python3 - "$tmp/known" <<'PY'
import hashlib, sys
key = b"entropyd hygiene test key, fixed"
with open(sys.argv[1], "wb") as f:
    for i in range(8192):
        f.write(hashlib.sha256(key + i.to_bytes(8, "big")).digest())
PY
mkfifo "$tmp/in"
# The known bytes, then nothing: the writer stays, so the source stays open.
(cat "$tmp/known"; sleep 1000) >"$tmp/in" &
track $!
sock=$tmp/s
run_entropyd -f -d -x all -n file -O "file:path:$tmp/in" -O file:entropy:8 -o "$tmp/out" \
    --control-socket "$sock" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 100 test -S "$sock"
wait_for 300 sh -c "test \$(stat -c %s '$tmp/out') -ge 100000"
check "the known bytes were conditioned and written ($(stat -c %s "$tmp/out") bytes)" \
    test "$(stat -c %s "$tmp/out")" -ge 100000
kill -USR1 "$pid"
kill -HUP "$pid"
wait_for 50 grep -q 'monobit=' "$tmp/log"
for p in /health /metrics /sources /sources/file /no-such-path; do
	ucurl "$sock" "$p" -i >>"$tmp/http"
done
"$entropyctl" -s "$sock" status >>"$tmp/http" 2>&1
"$entropyctl" -s "$sock" --json health >>"$tmp/http" 2>&1
kill "$pid"
wait "$pid"
check "the daemon logged and answered (log $(wc -l <"$tmp/log") lines, answers $(wc -c <"$tmp/http") bytes)" \
    sh -c "test -s '$tmp/log' && grep -q '\"sources\"' '$tmp/http' && grep -q '^entropyd_' '$tmp/http'"
# find_pieces SECRET TEXT: print what of SECRET's 8-byte windows shows in TEXT.
find_pieces() {
	python3 - "$1" "$2" <<'PY'
import re, sys
secret = open(sys.argv[1], "rb").read()
text = open(sys.argv[2], "rb").read()
windows = {secret[i:i + 8] for i in range(len(secret) - 7)}
hits = [text[i:i + 8].hex() for i in range(len(text) - 7) if text[i:i + 8] in windows]
for run in re.findall(rb"[0-9a-fA-F]{16,}", text):
    run = run.lower()
    for i in range(len(run) - 15):
        if bytes.fromhex(run[i:i + 16].decode()) in windows:
            hits.append(run[i:i + 16].decode())
print(" ".join(hits[:4]))
PY
}
hits=$(find_pieces "$tmp/known" "$tmp/log")
check "no piece of the input in the log${hits:+: $hits}" test -z "$hits"
hits=$(find_pieces "$tmp/known" "$tmp/http")
check "no piece of the input in the HTTP answers${hits:+: $hits}" test -z "$hits"
hits=$(find_pieces "$tmp/out" "$tmp/log")
check "no piece of the conditioned output in the log${hits:+: $hits}" test -z "$hits"
hits=$(find_pieces "$tmp/out" "$tmp/http")
check "no piece of the conditioned output in the HTTP answers${hits:+: $hits}" test -z "$hits"
finish
