#!/bin/sh
# SPDX-License-Identifier: MIT
# A read() that returns 1 GB for a 4 KiB read ends its host before a byte is sent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_crash gigabyte "read() returned 1073741824 bytes for a read of 4096" read protocol
