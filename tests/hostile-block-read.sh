#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin whose read() blocks with every signal blocked is ended after its timeout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_crash block_read "read() did not return within 5 s"
