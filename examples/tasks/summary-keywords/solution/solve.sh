#!/usr/bin/env bash
# Reference solution: a summary that covers every point the task lists.
set -eu
cat > /app/summary.md <<'MD'
# Outage summary

At 02:10 p99 latency rose from 80 ms to 4 s and throughput fell by half.
A deploy had flushed the session cache, and clients then hit us with a
retry storm until the cache warmed up again at 02:40.
MD
