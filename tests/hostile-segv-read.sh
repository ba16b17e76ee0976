#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin that segfaults in read() costs only its own instance.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
# In a sanitizer build UBSan reports the store through NULL and ends the
# host first: with exit status 1 unless abort_on_error (contrib/quickstart's
# setting) makes it SIGABRT; pinned here so that one reason is expected.
if sanitized; then
	asan_option abort_on_error=0
	UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}abort_on_error=0"
	export UBSAN_OPTIONS
	hostile_crash segv_read "exited with status 1"
else
	hostile_crash segv_read "killed by SIGSEGV"
fi
