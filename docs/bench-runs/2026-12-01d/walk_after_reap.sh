#!/bin/bash
# Waits for the executor's post-reap trim (anonymous memory under 9 MB after it exceeded 12 MB), then walks its arenas
# usage: walk_after_reap.sh & target/release/jobwheel-bench memory --jobs 1000 --rate 1000 --duration 3   (writes walk.out in the current folder)
peak=0
while true; do
  pid=$(pgrep -f "jobwheel executor" | head -1)
  if [ -n "$pid" ]; then
    a=$(awk '/^Anonymous/{print $2}' /proc/$pid/smaps_rollup 2>/dev/null)
    [ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a
    if [ "$peak" -gt 12000 ] && [ -n "$a" ] && [ "$a" -lt 9000 ]; then
      sleep 1; python3 "$(dirname "$0")"/walk_arenas.py $pid > walk.out 2>&1; exit 0
    fi
  fi
  sleep 0.3
done
