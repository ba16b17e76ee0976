#!/bin/sh
# SPDX-License-Identifier: MIT
# entropytest -e against NIST's own SP 800-90B tool, ea_non_iid, on data
# made here: jitter samples captured from the daemon, a biased Markov
# source, 4-bit samples, a periodic source (long repeats: the suffix sorter's
# path), binary samples and samples of two values. Every figure either
# prints, on the samples and on their bit string, and H_original,
# H_bitstring and the last line, must be the tool's within 0.001; both must
# print the same estimators. And entropytest -R against ea_restart on
# restart data. Runs where the tools are: ENTROPYD_NIST_EA_NON_IID names
# ea_non_iid (else the PATH's), ENTROPYD_NIST_EA_RESTART ea_restart (else
# the one beside it).
. "$(dirname "$0")/lib.sh"
et=$top_builddir/entropytest
entropyd=$top_builddir/entropyd
nist=${ENTROPYD_NIST_EA_NON_IID:-$(command -v ea_non_iid 2>/dev/null)}
[ -n "$nist" ] && [ -x "$nist" ] ||
    skip_all "NIST's ea_non_iid not found (set ENTROPYD_NIST_EA_NON_IID to its path)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
[ -x "$et" ] && [ -x "$entropyd" ] || skip_all "entropytest or entropyd not built"
nist_restart=${ENTROPYD_NIST_EA_RESTART:-$(dirname "$nist")/ea_restart}
plan 8
# The tool is multi-threaded in places; one thread is what the figures need.
OMP_NUM_THREADS=1
export OMP_NUM_THREADS

# 300000 samples each: the tool warns below a million but computes the same way.
python3 - "$tmp" <<'EOF'
import random, sys
d, n = sys.argv[1], 300000
r = random.Random(90)
# A biased first-order Markov source over 8-bit values: mostly stays near
# its last value, with a skewed jump.
out, v = bytearray(), 100
for _ in range(n):
    if r.random() < 0.3:
        v = min(255, int(r.expovariate(0.05)))
    else:
        v = max(0, min(255, v + r.choice((-1, 0, 0, 1))))
    out.append(v)
open(d + "/markov8", "wb").write(out)
# 4-bit samples: a noisy random walk.
out, v = bytearray(), 8
for _ in range(n):
    v = (v + r.choice((-2, -1, 0, 1, 2))) % 16
    out.append(v)
open(d + "/walk4", "wb").write(out)
# A periodic source (period 37) with rare noise: repeats far longer than
# entropytest sorts itself.
pattern = [r.randrange(256) for _ in range(37)]
open(d + "/periodic", "wb").write(bytes(pattern[i % 37] if r.random() > 0.001
                                       else r.randrange(256) for i in range(n)))
# Binary samples, biased, and 8-bit samples of only two values.
open(d + "/binary", "wb").write(bytes(int(r.random() < 0.6) for _ in range(n)))
open(d + "/twovalues", "wb").write(bytes(0x5a if r.random() < 0.7 else 0xc3 for _ in range(n)))
EOF

# Jitter samples as the daemon captures them.
"$entropyd" -f -x all -n jitter -o /dev/null --capture "jitter:300000:$tmp/jitter" \
    2>"$tmp/jitter.log" &
pid=$!
track $pid
wait_for 1200 grep -q "jitter: captured 300000" "$tmp/jitter.log"
stop $pid

# same NAME FILE BITS: both tools' figures, label by label, within 0.001.
same() {
	"$et" -e -w "$3" "$2" >"$tmp/$1.et" 2>"$tmp/$1.et.err"
	"$nist" -v "$2" "$3" >"$tmp/$1.nist" 2>&1
	python3 - "$tmp/$1.et" "$tmp/$1.nist" "$1" <<'EOF'
import re, sys
def figures(path):
    f = {}
    for line in open(path):
        m = re.match(r"\t(.*Estimate.*) = (-?[0-9.]+) / [0-9]+ bit\(s\)$", line)
        if m:
            f[m.group(1)] = float(m.group(2))
        m = re.match(r"(H_original|H_bitstring|min\(H_original, [0-9]+ X H_bitstring\)): "
                     r"([0-9.]+)$", line)
        if m:
            f[m.group(1)] = float(m.group(2))
    return f
et, nist = figures(sys.argv[1]), figures(sys.argv[2])
assert et and et.keys() == nist.keys(), (sorted(et), sorted(nist))
worst = max(et, key=lambda k: abs(et[k] - nist[k]))
print("# %s: %d figures, largest difference %.6f (%s)" %
      (sys.argv[3], len(et), abs(et[worst] - nist[worst]), worst))
bad = [(k, et[k], nist[k]) for k in et if abs(et[k] - nist[k]) > 0.001]
assert not bad, bad
EOF
}
check "jitter samples captured by the daemon" same jitter "$tmp/jitter" 8
show_if_failed "$tmp/jitter.et" "$tmp/jitter.nist"
check "a biased Markov source over 8-bit values" same markov8 "$tmp/markov8" 8
show_if_failed "$tmp/markov8.et" "$tmp/markov8.nist"
check "4-bit samples (a noisy random walk)" same walk4 "$tmp/walk4" 4
show_if_failed "$tmp/walk4.et" "$tmp/walk4.nist"
if "$et" -e -w 8 "$tmp/periodic" >/dev/null 2>"$tmp/periodic.probe"; then
	check "a periodic source (long repeats, sorted by libdivsufsort)" \
	    same periodic "$tmp/periodic" 8
	show_if_failed "$tmp/periodic.et" "$tmp/periodic.nist"
else
	skip "a periodic source: $(tail -1 "$tmp/periodic.probe")"
fi
check "binary samples (60% ones)" same binary "$tmp/binary" 1
show_if_failed "$tmp/binary.et" "$tmp/binary.nist"
check "8-bit samples of two values: binary to both tools" same twovalues "$tmp/twovalues" 8
show_if_failed "$tmp/twovalues.et" "$tmp/twovalues.nist"
check "the same numbers of samples and of distinct values" sh -c \
    "test \"\$(sed -n 's/^\\([0-9]*\\) samples of 8 bits, \\([0-9]*\\) distinct values.*/\\1 \\2/p' \
    '$tmp/markov8.et')\" = \"\$(sed -n 's/^Loaded \\([0-9]*\\) samples of \\([0-9]*\\) distinct.*/\\1 \\2/p' \
    '$tmp/markov8.nist')\""
# Restart data: 1000 restarts of a noisy walk, each restart its own seed
# (the daemon's restart capture is tested in daemon-capture.sh).
if [ -x "$nist_restart" ]; then
	python3 - "$tmp/restarts" <<'EOF'
import random, sys
out = bytearray()
for i in range(1000):
    r, v = random.Random(5000 + i), 100
    for _ in range(1000):
        v = max(0, min(255, v + r.choice((-3, -1, 0, 1, 3))))
        out.append(v)
open(sys.argv[1], "wb").write(out)
EOF
	"$et" -R -w 8 -H 1.5 "$tmp/restarts" >"$tmp/restarts.et" 2>&1
	"$nist_restart" -v "$tmp/restarts" 8 1.5 >"$tmp/restarts.nist" 2>&1
	check "restart data: ea_restart's figures, X_max, and its cutoff within 1 (it simulates it)" \
	    python3 - "$tmp/restarts.et" "$tmp/restarts.nist" <<'EOF'
import re, sys
def figures(path):
    f = {}
    for line in open(path):
        m = re.match(r"\t(.*\((?:Rows|Cols)\)) = (-?[0-9.]+) / [0-9]+ bit\(s\)$", line)
        if m:
            f[m.group(1)] = float(m.group(2))
        m = re.match(r"(H_r|H_c|X_max|min\(H_r, H_c, H_I\)): ([0-9.]+)$", line)
        if m:
            f[m.group(1)] = float(m.group(2))
        m = re.match(r"ALPHA: .*, X_cutoff: ([0-9]+)$", line)
        if m:
            f["cutoff"] = int(m.group(1))
    return f
et, nist = figures(sys.argv[1]), figures(sys.argv[2])
assert et.keys() == nist.keys(), (sorted(et), sorted(nist))
assert abs(et.pop("cutoff") - nist.pop("cutoff")) <= 1
bad = [(k, et[k], nist[k]) for k in et if abs(et[k] - nist[k]) > 0.001]
assert not bad, bad
print("# restart: %d figures, largest difference %.6f" %
      (len(et), max(abs(et[k] - nist[k]) for k in et)))
EOF
	show_if_failed "$tmp/restarts.et" "$tmp/restarts.nist"
else
	skip "NIST's ea_restart not found beside ea_non_iid (set ENTROPYD_NIST_EA_RESTART)"
fi
finish
