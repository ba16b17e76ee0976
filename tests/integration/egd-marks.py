#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check that no conditioned byte reached two consumers (daemon-egd.sh).

A daemon conditioned known data with the file source at 8 bits a byte:
every output of its conditioner is SHA-256 of 40 bytes of the data (a
mark), and every output of the EGD broker is SHA-256 of two consecutive
conditioner outputs, 64 bytes carrying 512 bits (a broker mark). The file
sink wrote conditioner outputs; the clients read broker outputs. Each
output found in a stream, at any offset, stands for the data it was made
from: 40 bytes for the sink's, 80 for a client's. The check, one TAP-like
line each:
  - most of each client's bytes are broker marks (the marking works);
  - most of the sink's bytes are marks;
  - no data was made into output for two consumers, or twice for one:
    the stretches of data behind every output found are disjoint;
  - no 16-byte window of one client's stream is in another's or the sink's.
A FIPS 140-2 block that fails by chance (about one in 1300) is dropped and
the data around it is conditioned together: an output or two per failed
block may be of no window of the data, hence "most".
Usage: egd-marks.py DATA SINK CLIENT...
"""
import hashlib
import sys

OUT = 32
PIECE = 40
COVERAGE = 0.9


def sha(b):
    return hashlib.sha256(b).digest()


def find(stream, marks):
    """Every (offset in the data) of a mark found in stream, and the bytes they cover."""
    found, covered, j = [], 0, 0
    while j + OUT <= len(stream):
        at = marks.get(stream[j:j + OUT])
        if at is None:
            j += 1
            continue
        found.append(at)
        covered += OUT
        j += OUT
    return found, covered


def windows(stream):
    return {stream[i:i + 16] for i in range(len(stream) - 15)}


def main():
    data = open(sys.argv[1], "rb").read()
    sink = open(sys.argv[2], "rb").read()
    clients = [open(p, "rb").read() for p in sys.argv[3:]]
    outputs = [sha(data[i:i + PIECE]) for i in range(len(data) - PIECE + 1)]
    marks = {m: i for i, m in enumerate(outputs)}
    broker = {sha(outputs[i] + outputs[i + PIECE]): i
              for i in range(len(outputs) - PIECE)}
    results = []
    spans = []
    for n, stream in enumerate(clients):
        found, covered = find(stream, broker)
        spans += [(i, i + 2 * PIECE, "client %d" % n) for i in found]
        results.append((len(stream) > 0 and covered >= COVERAGE * len(stream),
                        "client %d: %d of its %d bytes are broker outputs of the data" %
                        (n, covered, len(stream))))
    found, covered = find(sink, marks)
    spans += [(i, i + PIECE, "sink") for i in found]
    results.append((len(sink) > 0 and covered >= COVERAGE * len(sink),
                    "sink: %d of its %d bytes are conditioner outputs of the data" %
                    (covered, len(sink))))
    spans.sort()
    clash = [(a, b) for a, b in zip(spans, spans[1:]) if b[0] < a[1]]
    results.append((not clash, "the data behind %d outputs found is used once each%s" %
                    (len(spans), " (but %s)" % clash[:3] if clash else "")))
    common = []
    seen = windows(sink)
    for n, stream in enumerate(clients):
        mine = windows(stream)
        if mine & seen:
            common.append(n)
        seen |= mine
    results.append((not common, "no 16-byte window of a client's stream is in another's or "
                    "the sink's%s" % (" (but client %s)" % common if common else "")))
    for ok, what in results:
        print("%s %s" % ("ok" if ok else "not ok", what))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
