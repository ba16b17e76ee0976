#!/bin/sh
# SPDX-License-Identifier: MIT
# entropytest -e: the SP 800-90B 6.3 estimates of a file of samples, those
# with closed forms (MCV, Collision, Markov, Lag) checked against the
# standard's formulas worked out here in Python from the file's counts
# (uniform bytes, a biased binary source, a first-order Markov chain, a
# periodic pattern, constant input), the results against the figures
# printed; then bad uses. entropytest-nist.sh compares every figure
# with NIST's tool where it is installed.
. "$(dirname "$0")/lib.sh"
et="$top_builddir/entropytest"
[ -x "$et" ] || skip_all "entropytest not built"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
plan 13

# The inputs, made the same on every run.
python3 - "$tmp" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(1)
open(d + "/uniform", "wb").write(bytes(r.randrange(256) for _ in range(30000)))
open(d + "/biased", "wb").write(bytes(int(r.random() < 0.7) for _ in range(30000)))
b, out = 0, bytearray()
for _ in range(30000):
    if r.random() >= 0.85:
        b ^= 1
    out.append(b)
open(d + "/markov", "wb").write(bytes(out))
open(d + "/pattern", "wb").write(bytes((i % 5) * 3 if r.random() < 0.9 else r.randrange(16)
                                       for i in range(30000)))
open(d + "/constant", "wb").write(bytes([5]) * 30000)
EOF

# expected FILE BITS: the figures worked out from SP 800-90B's formulas,
# one "NAME VALUE" per line, as entropytest -e names them.
expected() {
	python3 - "$1" "$2" <<'EOF'
import math, sys
s = list(open(sys.argv[1], "rb").read())
w = int(sys.argv[2])
Z = 2.5758293035489008
def mcv(mode, n):
    p = mode / n
    return -math.log2(min(1.0, p + Z * math.sqrt(p * (1 - p) / (n - 1))))
bits = [v >> (w - 1 - j) & 1 for v in s for j in range(w)]
n, nb = len(s), len(bits)
def markov(b):
    c0 = c1 = c00 = c10 = 0
    for x, y in zip(b, b[1:]):
        if x == 0:
            c0 += 1; c00 += y == 0
        else:
            c1 += 1; c10 += y == 0
    p00 = c00 / c0 if c0 else 0; p01 = 1 - p00 if c0 else 0
    p10 = c10 / c1 if c1 else 0; p11 = 1 - p10 if c1 else 0
    p0 = b.count(0) / len(b); p1 = 1 - p0
    lg = lambda x: math.log2(x)
    c = []
    if p00 > 0: c.append(-lg(p0) - 127 * lg(p00))
    if p01 > 0 and p10 > 0: c.append(-lg(p0) - 64 * lg(p01) - 63 * lg(p10))
    if p01 > 0 and p11 > 0: c.append(-lg(p0) - lg(p01) - 126 * lg(p11))
    if p10 > 0 and p00 > 0: c.append(-lg(p1) - lg(p10) - 126 * lg(p00))
    if p10 > 0 and p01 > 0: c.append(-lg(p1) - 64 * lg(p10) - 63 * lg(p01))
    if p11 > 0: c.append(-lg(p1) - 127 * lg(p11))
    return min(min(c) / 128, 1.0)
def collision(b):
    i = v = t1 = t2 = 0
    while i < len(b) - 1:
        if b[i] == b[i + 1]: t = 2
        elif i < len(b) - 2: t = 3
        else: break
        v += 1; t1 += t; t2 += t * t; i += t
    x = t1 / v; sd = math.sqrt((t2 - t1 * x) / (v - 1))
    x = max(2.0, x - Z * sd / math.sqrt(v))
    return 1.0 if x >= 2.5 else -math.log2(0.5 + math.sqrt(1.25 - 0.5 * x))
def run_fn(p, r, n):
    q, x = 1 - p, 1.0
    for _ in range(66):
        last, x = x, 1 + q * p ** r * x ** (r + 1)
        if x - last <= 1e-15 * x: break
    return math.log(1 - p * x) - math.log((r + 1 - r * x) * q) - (n + 1) * math.log(x) - math.log(0.99)
def lag(s, k):
    score, high, winner, hits, run, longest = [0] * 128, 0, 0, 0, 0, 0
    for i in range(1, len(s)):
        if s[i] == s[i - winner - 1]:
            hits += 1; run += 1; longest = max(longest, run)
        else:
            run = 0
        for d in range(min(128, i)):
            if s[i - d - 1] == s[i]:
                score[d] += 1
                if score[d] >= high: high, winner = score[d], d
    N = len(s) - 1
    pg = hits / N
    pg = min(1.0, pg + Z * math.sqrt(pg * (1 - pg) / (N - 1))) if pg > 0 else 1 - 0.01 ** (1 / N)
    p = max(pg, 1 / k)
    if p < 1 and run_fn(p, longest + 1, N) > 0:
        lo, hi = p, 1.0
        while hi - lo > 1e-12:
            mid = (lo + hi) / 2
            if mid < 1 and run_fn(mid, longest + 1, N) > 0: lo = mid
            else: hi = mid
        p = hi
    return 0.0 if p >= 1 else -math.log2(p)
suffix = " (bit string)" if w > 1 else ""
print("Most Common Value Estimate %.6f" % mcv(max(s.count(v) for v in set(s)), n))
if w > 1:
    print("Most Common Value Estimate (bit string) %.6f" % mcv(max(bits.count(0), bits.count(1)), nb))
print("Collision Test Estimate%s %.6f" % (suffix, collision(bits)))
print("Markov Test Estimate%s %.6f" % (suffix, markov(bits)))
print("Lag Prediction Test Estimate %.6f" % lag(s, len(set(s))))
EOF
}
# got FILE BITS: entropytest's figures, one "NAME VALUE" per line.
got() {
	"$et" -e -w "$2" "$1" | sed -n 's/^[[:space:]]*\(.*Estimate[^=]*\) = \([0-9.]*\) .*/\1 \2/p'
}
# same NAME FILE BITS: every figure worked out here within 1e-6 of
# entropytest's (the last printed digit); entropytest prints more.
same() {
	expected "$2" "$3" >"$tmp/$1.want"
	got "$2" "$3" >"$tmp/$1.got"
	python3 - "$tmp/$1.want" "$tmp/$1.got" <<'EOF'
import sys
def read(f):
    return {l.rsplit(" ", 1)[0]: float(l.rsplit(" ", 1)[1]) for l in open(f) if l.strip()}
want, got = read(sys.argv[1]), read(sys.argv[2])
assert set(want) <= set(got), (want, got)
bad = [k for k in want if abs(want[k] - got[k]) > 1.5e-6]
assert not bad, [(k, want[k], got[k]) for k in bad]
EOF
}
check "uniform bytes: every estimate as SP 800-90B's formulas give it" same uniform "$tmp/uniform" 8
show_if_failed "$tmp/uniform.want" "$tmp/uniform.got"
check "a biased binary source (70% ones)" same biased "$tmp/biased" 1
show_if_failed "$tmp/biased.want" "$tmp/biased.got"
check "a first-order Markov chain (stays with p 0.85)" same markov "$tmp/markov" 1
show_if_failed "$tmp/markov.want" "$tmp/markov.got"
check "a period-5 pattern with 10% noise (4-bit samples)" same pattern "$tmp/pattern" 4
show_if_failed "$tmp/pattern.want" "$tmp/pattern.got"
"$et" -e -w 8 "$tmp/constant" >"$tmp/constant.out" 2>&1
check "constant input: one value, no entropy, as ea_non_iid says" sh -c \
    "grep -q 'all the same value: no entropy' '$tmp/constant.out' &&
    grep -q '^H_original: 0.000000' '$tmp/constant.out'"
check "the Markov chain: dependence decides the minimum, not the balanced MCV" sh -c \
    "'$et' -e -w 1 '$tmp/markov' | awk '/^H_original:/ { exit !(\$2 < 0.5) }'"
# results FILE BITS: H_original, H_bitstring and the last line are the minima of the figures.
results() {
	"$et" -e -w "$2" "$1" | python3 -c '
import re, sys
w = int(sys.argv[1])
lit, bits, res = [], [], {}
for line in sys.stdin:
    m = re.match(r"\t(.*) = ([0-9.]+) / ([0-9]+) bit", line)
    if m:
        (bits if "(bit string)" in m.group(1) else lit).append(float(m.group(2)))
    m = re.match(r"(H_original|H_bitstring|min\(H_original, [0-9]+ X H_bitstring\)): ([0-9.]+)$", line)
    if m:
        res[m.group(1)] = float(m.group(2))
assert len(lit) == 7 and len(bits) == 10, (lit, bits)
h, hb = min([w] + lit), min([1.0] + bits)
assert abs(res["H_original"] - h) < 1e-6 and abs(res["H_bitstring"] - hb) < 1e-6, res
assert abs(res["min(H_original, %d X H_bitstring)" % w] - min(h, w * hb)) < w * 1e-6, res' "$2"
}
check "uniform bytes: seven figures on the samples, ten on the bit string, and their minima" \
    results "$tmp/uniform" 8
check "4-bit samples: the same" results "$tmp/pattern" 4
"$et" -e -w 8 <"$tmp/uniform" >"$tmp/stdin.out" 2>&1
check "standard input works as a file does" sh -c \
    "grep -q '^30000 samples of 8 bits' '$tmp/stdin.out'"

# Bad uses: exit 64 for usage, 65 for data that does not fit.
"$et" -e "$tmp/uniform" 2>"$tmp/err"
check "-e without -w: exit 64" sh -c "test $? -eq 64 && grep -q 'needs the sample width' '$tmp/err'"
"$et" -e -w 8 -c 5 "$tmp/uniform" 2>"$tmp/err"
check "-e with a FIPS option: exit 64" sh -c "test $? -eq 64 && grep -q 'takes only -w' '$tmp/err'"
"$et" -e -w 4 "$tmp/uniform" 2>"$tmp/err"
check "a sample wider than -w: exit 65, naming it" sh -c \
    "test $? -eq 65 && grep -q 'does not fit in 4 bits' '$tmp/err'"
head -c 1000 "$tmp/uniform" >"$tmp/short"
"$et" -e -w 8 "$tmp/short" 2>"$tmp/err"
check "fewer than 1024 samples: exit 65" sh -c "test $? -eq 65 && grep -q 'at least 1024' '$tmp/err'"
finish
