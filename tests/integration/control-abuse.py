#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Misbehaving clients of entropyd's control socket, for control-limits.sh.

control-abuse.py MODE SOCKET [ARG]
  header SOCKET BYTES   a request with one header of BYTES bytes: prints the status line
  garbage SOCKET        64 KiB of binary junk: prints the status line, or "closed"
  idle SOCKET           connect and say nothing: prints "closed" once the server hangs up
  slow SOCKET           half a request held open while another client asks /health:
                        prints the other client's status line
  many SOCKET N CAP     N idle connections at once: prints "closed=C open=O" once at
                        least N - CAP were closed by the server, then "held=STATUS"
                        for a /health request on a connection that stayed open
  dribble SOCKET SECS   the start of a request, then one more header byte every
                        SECS seconds: prints "closed after S s" when the server
                        hangs up, "still open" if it has not after 30 s
  keepalive SOCKET SECS N
                        N requests on one HTTP/1.1 connection, SECS seconds apart:
                        prints each status line ("closed" once the server hung up)
Every wait is bounded (30 s) so a broken server fails the test, never hangs it.
"""
import os
import select
import socket
import sys
import time

LIMIT_S = 30


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def status_line(s):
    """The first line the server sends, or "closed" when it hangs up first."""
    data = b""
    deadline = time.monotonic() + LIMIT_S
    while b"\r\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            return "no answer"
        r, _, _ = select.select([s], [], [], left)
        if not r:
            return "no answer"
        try:
            chunk = s.recv(4096)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return data.decode(errors="replace").strip() or "closed"
        data += chunk
    return data.split(b"\r\n", 1)[0].decode(errors="replace")


def read_answer(s):
    """One whole answer (headers and Content-Length bytes): its status line, or "closed"."""
    data = b""
    deadline = time.monotonic() + LIMIT_S
    while True:
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(body) >= length:
                return head.split(b"\r\n", 1)[0].decode(errors="replace")
        left = deadline - time.monotonic()
        r, _, _ = select.select([s], [], [], max(left, 0))
        if not r:
            return "no answer"
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return "closed"
        data += chunk


def health(s):
    s.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    return status_line(s)


def closed_by_server(s):
    """True when the server closed s (EOF or reset is readable now)."""
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return False
    try:
        return s.recv(1, socket.MSG_PEEK) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "header":
        s = connect(path)
        size = int(sys.argv[3])
        try:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: " +
                      b"a" * size + b"\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        print(status_line(s))
    elif mode == "garbage":
        s = connect(path)
        try:
            s.sendall(os.urandom(65536))
        except (BrokenPipeError, ConnectionResetError):
            pass
        print(status_line(s))
    elif mode == "idle":
        s = connect(path)
        r, _, _ = select.select([s], [], [], LIMIT_S)
        print("closed" if r and closed_by_server(s) else "still open")
    elif mode == "slow":
        s = connect(path)
        s.sendall(b"GET /health HTTP/1.1\r\nHost: loc")
        print(health(connect(path)))
        s.close()
    elif mode == "many":
        n, cap = int(sys.argv[3]), int(sys.argv[4])
        conns = [connect(path) for _ in range(n)]
        deadline = time.monotonic() + LIMIT_S
        while True:
            closed = [c for c in conns if closed_by_server(c)]
            if len(closed) >= n - cap or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        still = [c for c in conns if c not in closed]
        print("closed=%d open=%d" % (len(closed), len(still)))
        print("held=%s" % (health(still[0]) if still else "none"))
        for c in conns:
            c.close()
    elif mode == "dribble":
        interval = float(sys.argv[3])
        s = connect(path)
        start = time.monotonic()
        s.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        while time.monotonic() - start < LIMIT_S:
            r, _, _ = select.select([s], [], [], interval)
            if r and closed_by_server(s):
                print("closed after %.0f s" % (time.monotonic() - start))
                return
            try:
                s.send(b"a")
            except (BrokenPipeError, ConnectionResetError):
                print("closed after %.0f s" % (time.monotonic() - start))
                return
        print("still open")
    elif mode == "keepalive":
        gap, count = float(sys.argv[3]), int(sys.argv[4])
        s = connect(path)
        lines = []
        for i in range(count):
            if i:
                time.sleep(gap)
            try:
                s.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
                lines.append(read_answer(s))
            except (BrokenPipeError, ConnectionResetError):
                lines.append("closed")
        print(" | ".join(lines))
    else:
        sys.exit("control-abuse.py: unknown mode " + mode)


if __name__ == "__main__":
    main()
