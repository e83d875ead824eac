#!/usr/bin/env bash
# Reference solution: sum the amount column (the 4th), skipping the header.
set -eu
awk -F, 'NR > 1 { total += $4 } END { print total }' /app/sales.csv > /app/total.txt
