#!/bin/sh
# The cluster's figures of docs/choosing.md: each algorithm as n = 5 real
# critsec node processes on loopback (mutual TLS, fsync on), every client
# looping enter -> exit for 8 s (critsec cluster), the merged trace
# checked; one markdown row per algorithm.
#   sh docs/choosing/cluster.sh [critsec]
set -eu
critsec=${1:-critsec}
dir=$(mktemp -d)
echo "| algorithm | entries/s | enter p50 | enter p99 | messages per entry | trace check |"
echo "|---|---|---|---|---|---|"
row() { # alg args...
	alg=$1; shift
	out=$("$critsec" cluster --n 5 --alg "$alg" --duration 8s --dir "$dir/$alg" "$@" 2>&1 || true)
	rm -rf "$dir/$alg"
	rate=$(echo "$out" | sed -n 's/.*(\([0-9.]*\) entries\/s).*/\1/p')
	p50=$(echo "$out" | sed -n 's/^enter latency: p50 \([^,]*\), p99 \([^;]*\);.*/\1/p')
	p99=$(echo "$out" | sed -n 's/^enter latency: p50 \([^,]*\), p99 \([^;]*\);.*/\2/p')
	msgs=$(echo "$out" | sed -n 's/.* \([0-9.]*\) messages per entry.*/\1/p')
	check=$(echo "$out" | sed -n 's/^trace check: \([a-z]*\).*/\1/p')
	echo "| \`$alg\` | $rate | $p50 | $p99 | $msgs | ${check:-failed: $(echo "$out" | tail -1)} |"
}
for alg in raymond kmutex forest partition srimani-reddy makki ftraymond; do
	row "$alg" --k 2
done
row maekawa
row mutin --l 1
row gcs --l 1 --k 3
