#!/bin/sh
# SPDX-License-Identifier: MIT
# A claim of NaN bits per byte is refused at load.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_claim bits_nan 'entropy_bits nan: a claim must be more than 0 and at most 8 bits per byte'
