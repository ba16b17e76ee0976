#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the output of the "marks" scenario (vmgenid-marks.sh).

The daemon conditioned known data with the uncredited file source: every
output is SHA-256 of a 64-byte piece of it. Before the VM generation
change it had read `read` bytes; `written` bytes reached the sink's reader.
Every output it could have made from what it read before the change is a
mark. The check, one TAP-like line each:
  - the bytes written before the change are marks (the marking works);
  - after them, not one 32-byte window anywhere is a mark;
  - after them come outputs of data read after the change;
  - the bytes discarded equal the bytes held, as the daemon reported them
    and as computed from its counters.
A FIPS 140-2 block that fails by chance (about one good block in 1300) is
dropped, and the bytes around it are conditioned together: one output per
failed block may be of no window of the data. AFTER's `failed_end` (the
source's failed blocks at the end) says how many failed after the change.
For a plugin in its host, BEFORE may also give `host_read`, what the
plugin had read when it was told (its forget()): the bytes between `read`
and `host_read` were on their way to the daemon. They are held bytes too
(marks, and counted as discarded), and what comes after the change must
be of data after `host_read`.
Usage: vmgenid-marks.py DATA OUTPUT BEFORE AFTER
"""
import hashlib
import sys

OUT = 32
PIECE = 64
BLOCK = 2500


def load(path):
    values = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            if key:
                values[key] = int(value) if value else -1
    return values


def outputs(data):
    """Every output any 64-byte window of data would condition to."""
    return {hashlib.sha256(data[i:i + PIECE]).digest() for i in range(len(data) - PIECE + 1)}


def main():
    data = open(sys.argv[1], "rb").read()
    out = open(sys.argv[2], "rb").read()
    before = load(sys.argv[3])
    after = load(sys.argv[4])
    read, written = before["read"], before["written"]
    host_read = before.get("host_read", read)
    results = []

    marks = outputs(data[:host_read])
    early = [out[i:i + OUT] for i in range(0, written, OUT)]
    unmarked = sum(o not in marks for o in early)
    results.append((len(out) >= written > 0 and written % OUT == 0 and
                    unmarked <= before["failed"],
                    "the %d bytes written before the change are marked outputs%s" %
                    (written, " (but %d, with %d failed blocks)" % (unmarked, before["failed"])
                     if unmarked else "")))
    late = out[written:]
    hits = [i for i in range(len(late) - OUT + 1) if late[i:i + OUT] in marks]
    results.append((not hits, "none of the %d bytes after the change is a marked output%s" %
                    (len(late), " (found at %s)" % hits[:5] if hits else "")))
    fresh = outputs(data[host_read:])
    late_outputs = [late[i:i + OUT] for i in range(0, len(late) - len(late) % OUT, OUT)]
    failed_after = after.get("failed_end", before["failed"]) - before["failed"]
    stale = sum(o not in fresh for o in late_outputs)
    results.append((len(late_outputs) > 0 and stale <= failed_after,
                    "the %d outputs after the change are of data read after it%s" %
                    (len(late_outputs), " (but %d, with %d failed blocks)" % (stale, failed_after)
                     if stale else "")))
    passed = before["tested"] - before["failed"]
    conditioned = passed * BLOCK // PIECE * OUT
    expected = (conditioned - written + passed * BLOCK % PIECE +
                (read - 4 - before["tested"] * BLOCK))
    in_flight = host_read - read
    results.append((after["discarded"] == before["held"] + in_flight and
                    before["held"] == expected and in_flight >= 0,
                    "discarded %d = held %d (reported) = %d (from the counters)%s" %
                    (after["discarded"], before["held"], expected,
                     " + %d on their way from the plugin's host" % in_flight
                     if "host_read" in before else "")))
    for ok, what in results:
        print("%s %s" % ("ok" if ok else "not ok", what))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
