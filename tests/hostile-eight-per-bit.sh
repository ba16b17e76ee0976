#!/bin/sh
# SPDX-License-Identifier: MIT
# A claim of 8 bits per 1-bit raw sample is refused at load.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_claim eight_per_bit 'entropy_bits 8: a claim must be more than 0 and at most 1 bits per raw sample'
