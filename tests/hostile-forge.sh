#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin that goes around its host and sends the daemon a forged data
# message larger than the read asked for: the daemon cuts it, never
# over-reads, counts a protocol error and ends the host.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_crash forge "protocol error: a read of 4096 bytes answered with more" read protocol
