#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A slowloris client of entropyd's control server, for control-fair.sh.

control-slowloris.py unix PATH N INTERVAL DURATION
control-slowloris.py tcp HOST:PORT N INTERVAL DURATION

Keeps N connections open for DURATION seconds, each sending the start of a
request and then one more header byte every INTERVAL seconds, never ending
it. A connection the server closes (at once, over a limit, or at its
deadline) is opened again at the next tick, so the pressure never lets up.
At the end prints one line: "opened=O closed=C longest=S" (connections
opened, closed by the server, the longest a connection was held in seconds).
"""
import select
import socket
import sys
import time


def connect(kind, where):
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(where)
    else:
        host, port = where.rsplit(":", 1)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect((host, int(port)))
    s.setblocking(False)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
    return s


def closed_by_server(s):
    """True when s has an end of file or an error waiting."""
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return False
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def main():
    kind, where = sys.argv[1], sys.argv[2]
    n, interval, duration = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    conns = {}  # socket -> when it was opened
    opened = closed = 0
    longest = 0.0
    end = time.monotonic() + duration
    while time.monotonic() < end:
        now = time.monotonic()
        for s, since in list(conns.items()):
            dead = closed_by_server(s)
            if not dead:
                try:
                    s.send(b"a")
                except OSError:
                    dead = True
            if dead:
                closed += 1
                longest = max(longest, now - since)
                del conns[s]
                s.close()
        while len(conns) < n and time.monotonic() < end:
            try:
                conns[connect(kind, where)] = time.monotonic()
                opened += 1
            except OSError:
                break
        time.sleep(interval)
    now = time.monotonic()
    for since in conns.values():
        longest = max(longest, now - since)
    print("opened=%d closed=%d longest=%.1f" % (opened, closed, longest))


if __name__ == "__main__":
    main()
