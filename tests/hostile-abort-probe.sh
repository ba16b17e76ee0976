#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin that aborts in probe() costs only itself.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_crash abort_probe "killed by SIGABRT" probe
