#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""EGD clients, well and badly behaved, for daemon-egd.sh and
daemon-egd-halfopen.sh.

egd-client.py MODE ADDR [ARG...]   (ADDR: a Unix socket path, or HOST:PORT)
  commands ADDR          every command once: prints "available=N pid=P
                         nonblocking=L blocking=B"
  read ADDR N OUT        N bytes by blocking reads of up to 255 into OUT
  stream ADDR REQ IDLE OUT
                         blocking reads of REQ bytes, one after the other,
                         into OUT until no byte came for IDLE seconds
  rate ADDR SECONDS RATE blocking reads of 255 for SECONDS: prints "bytes=B
                         seconds=S bound=M" with M = RATE * S + RATE (the
                         burst) + 255, counted from before the connect
  closes ADDR HEX        send the bytes HEX: prints "closed" when the server
                         hangs up without answering, else what it sent
  garbage ADDR           64 KiB of random bytes, none a command byte (0-4), so
                         the server counts it as invalid, never as a refused
                         write or a read: prints "closed" once hung up
  halfclose ADDR         a blocking read of 32 bytes, then no more to send (shutdown
                         of the writing side): prints "read=N closed" once the
                         server has answered and hung up
  sleeper ADDR DONE      ask for bytes and never read them, until the server
                         takes no more requests: prints "asked", then holds
                         the connection until the file DONE exists
  midreply ADDR          ask for 255000 bytes with a small receive buffer,
                         read 100 of them and hang up: prints "read=100"
  idle ADDR DONE         a blocking read of 32 bytes, then silence (nothing
                         sent, nothing read): prints "read=N", then holds the
                         connection until the file DONE exists
  many ADDR N DONE       N connections at once: once the server has hung up
                         on those it refuses (none for 2 s), prints "closed=C
                         open=O", then holds the rest until DONE exists
Every wait is bounded (60 s) so a broken server fails the test, never hangs it.
"""
import faulthandler
import os
import resource
import select
import signal
import socket
import sys
import time

LIMIT_S = 60


def connect(addr, rcvbuf=None):
    if "/" in addr:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    else:
        host, port = addr.rsplit(":", 1)
        addr = (host, int(port))
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(addr)
    return s


def recv_exact(s, n, limit=LIMIT_S):
    """n bytes, or fewer if the server hangs up or the limit passes."""
    data = b""
    deadline = time.monotonic() + limit
    while len(data) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([s], [], [], left)
        if not r:
            break
        try:
            chunk = s.recv(n - len(data))
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            break
        data += chunk
    return data


def hung_up(s, limit=LIMIT_S):
    """What the server sent before hanging up, or None if it did not within limit."""
    data = b""
    deadline = time.monotonic() + limit
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        r, _, _ = select.select([s], [], [], left)
        if not r:
            return None
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return data
        data += chunk


def blocking_read(s, n):
    s.sendall(bytes([0x02, n]))
    return recv_exact(s, n)


def cmd_commands(addr):
    s = connect(addr)
    s.sendall(b"\x00")
    avail = int.from_bytes(recv_exact(s, 4), "big")
    s.sendall(b"\x04")
    n = recv_exact(s, 1)[0]
    pid = recv_exact(s, n).decode()
    s.sendall(b"\x01\x20")
    n = recv_exact(s, 1)[0]
    got = recv_exact(s, n)
    blk = blocking_read(s, 255)
    print("available=%d pid=%s nonblocking=%d/%d blocking=%d" % (avail, pid, n, len(got),
                                                                  len(blk)))


def cmd_read(addr, n, out):
    s = connect(addr)
    data = b""
    while len(data) < n:
        chunk = blocking_read(s, min(255, n - len(data)))
        if not chunk:
            break
        data += chunk
    with open(out, "wb") as f:
        f.write(data)
    print("read=%d" % len(data))


def cmd_stream(addr, req, idle, out):
    s = connect(addr)
    data = b""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        s.sendall(bytes([0x02, req]))
        chunk = recv_exact(s, req, idle)
        data += chunk
        if len(chunk) < req:
            break
    with open(out, "wb") as f:
        f.write(data)
    print("read=%d" % len(data))


def cmd_rate(addr, seconds, rate):
    t0 = time.monotonic()
    s = connect(addr)
    total = 0
    while time.monotonic() - t0 < seconds:
        total += len(blocking_read(s, 255))
    elapsed = time.monotonic() - t0
    print("bytes=%d seconds=%.3f bound=%d" % (total, elapsed,
                                              int(rate * elapsed + rate + 255)))


def cmd_closes(addr, hexbytes):
    s = connect(addr)
    s.sendall(bytes.fromhex(hexbytes))
    data = hung_up(s)
    print("closed" if data == b"" else "sent %r" % (data[:16],) if data is not None else
          "still open")


def cmd_garbage(addr):
    s = connect(addr)
    # A random first byte would be a valid command 5 times in 256 (a write
    # among them), which made the refusal counts in the metrics vary.
    junk = bytes(b if b > 4 else b + 5 for b in os.urandom(65536))
    try:
        s.sendall(junk)
    except (BrokenPipeError, ConnectionResetError):
        pass
    print("closed" if hung_up(s) is not None else "still open")


def cmd_halfclose(addr):
    s = connect(addr)
    s.sendall(b"\x02\x20")
    s.shutdown(socket.SHUT_WR)
    data = hung_up(s)
    print("read=%d %s" % (len(data or b""), "closed" if data is not None else "still open"))


def wait_for_file(path):
    deadline = time.monotonic() + 300
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.1)


def cmd_sleeper(addr, done):
    s = connect(addr, rcvbuf=4096)
    s.setblocking(False)
    deadline = time.monotonic() + LIMIT_S
    # Ask until the server stops taking requests: it is stuck sending to us.
    while time.monotonic() < deadline:
        try:
            s.send(b"\x02\xff" * 512)
        except BlockingIOError:
            break
    print("asked", flush=True)
    wait_for_file(done)
    s.close()


def cmd_idle(addr, done):
    s = connect(addr)
    print("read=%d" % len(blocking_read(s, 32)), flush=True)
    wait_for_file(done)
    s.close()


def cmd_midreply(addr):
    s = connect(addr, rcvbuf=4096)
    s.sendall(b"\x02\xff" * 1000)
    got = recv_exact(s, 100)
    s.close()
    print("read=%d" % len(got))


def cmd_many(addr, n, done):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))
    t0 = time.monotonic()
    conns = [connect(addr) for _ in range(n)]
    sys.stderr.write("connected %d in %.1f s\n" % (n, time.monotonic() - t0))
    by_fd = {c.fileno(): c for c in conns}
    poller = select.poll()
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    closed = 0
    quiet_since = time.monotonic()
    deadline = time.monotonic() + LIMIT_S
    while time.monotonic() - quiet_since < 2 and time.monotonic() < deadline:
        for fd, _ in poller.poll(200):
            try:
                data = by_fd[fd].recv(1)
            except ConnectionResetError:
                data = b""
            if not data:
                poller.unregister(fd)
                closed += 1
                quiet_since = time.monotonic()
    print("closed=%d open=%d" % (closed, n - closed), flush=True)
    wait_for_file(done)
    for c in conns:
        c.close()


def main():
    faulthandler.register(signal.SIGUSR1)
    mode, addr, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if mode == "commands":
        cmd_commands(addr)
    elif mode == "read":
        cmd_read(addr, int(args[0]), args[1])
    elif mode == "stream":
        cmd_stream(addr, int(args[0]), float(args[1]), args[2])
    elif mode == "rate":
        cmd_rate(addr, float(args[0]), int(args[1]))
    elif mode == "closes":
        cmd_closes(addr, args[0])
    elif mode == "garbage":
        cmd_garbage(addr)
    elif mode == "halfclose":
        cmd_halfclose(addr)
    elif mode == "sleeper":
        cmd_sleeper(addr, args[0])
    elif mode == "idle":
        cmd_idle(addr, args[0])
    elif mode == "midreply":
        cmd_midreply(addr)
    elif mode == "many":
        cmd_many(addr, int(args[0]), args[1])
    else:
        sys.exit("unknown mode %s" % mode)


if __name__ == "__main__":
    main()
