#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin that segfaults in read() costs only its own instance.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_crash segv_read "killed by SIGSEGV"
