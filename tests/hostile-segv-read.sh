#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin that segfaults in read() costs only its own instance.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
# In a sanitizer build UBSan reports the store through NULL and exits 1 first.
if sanitized; then
	hostile_crash segv_read "exited with status 1"
else
	hostile_crash segv_read "killed by SIGSEGV"
fi
