#!/bin/sh
# SPDX-License-Identifier: MIT
# Raw samples of 0 bits are refused at load.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_claim sample_0 'sample_bits 0: raw samples must be 1 to 16 bits wide'
