#!/bin/sh
# make demo: until the recorder lands, symbolizes a few addresses of a bundled example.
set -eu
echo "tally $(${1:-build}/tally --version)"
