# SPDX-License-Identifier: MIT
# Helpers for the control socket tests: a private daemon fed from a FIFO,
# JSON and HTTP over its Unix socket. Source after lib.sh.
entropyd=$top_builddir/entropyd
entropyctl=$top_builddir/entropyctl
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed (needed to read JSON)"
command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"

# Feed FIFO $1 with random bytes, about 1 MB/s, until the test ends. The
# writer keeps the FIFO open across readers (a daemon suspending or closing
# the source, the next daemon opening it).
feed_random() {
	mkfifo "$1"
	(while :; do head -c 100000 /dev/urandom; sleep 0.1; done >"$1") 2>/dev/null &
	track $!
}

# Feed FIFO $1 with zeros whenever it is read, until the test ends.
feed_zeros() {
	mkfifo "$1"
	(while :; do cat /dev/zero; sleep 0.1; done >"$1") 2>/dev/null &
	track $!
}

# start_daemon SOCKET LOG FIFO [more entropyd arguments]: a test-mode daemon
# reading the FIFO with the file source; its PID in $daemon.
start_daemon() {
	sock=$1 log=$2 fifo=$3
	shift 3
	run_entropyd -f -t -x all -n file -O "file:path:$fifo" --control-socket "$sock" "$@" \
	    2>"$log" &
	daemon=$!
	track $daemon
	wait_for 100 test -S "$sock"
}

# A free TCP port on loopback (the kernel picks it).
# Below the kernel's ephemeral range (ip_local_port_range, from 32768 by
# default), which the client side of every loopback connection of the tests
# running alongside draws from: one of those could take a port picked there
# before its user binds it.
free_port() {
	python3 -c 'import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    port = random.randrange(10000, max(low, 10001))
    try:
        socket.socket().bind(("127.0.0.1", port))
    except OSError:
        continue
    print(port)
    break'
}

# json EXPR <FILE: evaluate a Python expression over the JSON document d.
json() {
	python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"
}

# curl over the Unix socket: ucurl SOCKET PATH [curl arguments].
ucurl() {
	s=$1 p=$2
	shift 2
	curl -s --max-time 30 --unix-socket "$s" "$@" "http://localhost$p"
}

# The value of one sample line of the metrics text in file $1 (e.g. 'entropyd_x{a="b"}').
metric() {
	awk -v name="$2" '$1 == name { print $2 }' "$1"
}
