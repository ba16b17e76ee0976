#!/bin/sh
# SPDX-License-Identifier: MIT
# A read() that returns more than asked for ends its host before a byte is sent: nothing is over-read.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_crash overread "read() returned 4196 bytes for a read of 4096" read protocol
