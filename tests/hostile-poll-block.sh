#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin that hands over a readable descriptor, then blocks in read(), is ended after its timeout; the daemon's loop never waits for it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_crash poll_block "read() did not return within 5 s"
