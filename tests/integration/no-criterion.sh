#!/bin/sh
# make check without criterion: say so rather than pass quietly.
echo "1..1"
echo "not ok 1 - criterion was not found by configure (apt-get install libcriterion-dev)"
exit 1
