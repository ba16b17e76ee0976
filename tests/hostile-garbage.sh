#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin that writes a malformed message onto its host's sockets is a protocol error: its host is ended and counted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_crash garbage "protocol error: unexpected or malformed message (type 65535" probe protocol
