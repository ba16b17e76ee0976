#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin that spins for ever in read() (a blocking source) is ended after its timeout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_crash loop_read "read() did not return within 5 s"
