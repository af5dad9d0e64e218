#!/bin/sh
# The simulator's figures of docs/choosing.md: every algorithm (plain
# names) on 15 processes (the local ones on torus:4x4, 16), light load
# (lambda 0.1) and heavy load (lambda 1), E = 1, Tt = 1, 3000 entries,
# seeds 1..3; one markdown row per algorithm and load: messages per entry
# and mean entry and exit waits, averaged over the seeds, and the results.
#   sh docs/choosing/sim.sh [critsec]
set -eu
critsec=${1:-critsec}
run() { # alg lambda args...
	alg=$1; lambda=$2; shift 2
	for seed in 1 2 3; do
		"$critsec" sim --alg "$alg" --lambda "$lambda" --entries 3000 --seed "$seed" --json "$@" || true
	done | python3 -c '
import json, sys
rs = [json.loads(l) for l in sys.stdin.read().replace("}\n{", "}\x00{").split("\x00") if l.strip()]
if not rs:
    sys.exit("%s: no run succeeded" % sys.argv[1])
msgs = sum(r["messages_per_entry"] for r in rs) / len(rs)
wait = sum(r["entry_wait"]["mean"] for r in rs) / len(rs)
exitw = sum(r["exit_wait"]["mean"] for r in rs) / len(rs)
worst = sorted(set(r["result"] for r in rs))
print("| `%s` | %s | %.1f | %.2f | %.2f | %s |" % (sys.argv[1], sys.argv[2], msgs, wait, exitw, ", ".join(worst)))
' "$alg" "$lambda"
}
echo "| algorithm | load (lambda) | messages per entry | mean entry wait | mean exit wait | result (3 seeds) |"
echo "|---|---|---|---|---|---|"
for lambda in 0.1 1; do
	for alg in raymond kmutex forest partition srimani-reddy makki ftraymond; do
		run "$alg" "$lambda" --n 15 --k 3
	done
	run maekawa "$lambda" --n 15
	run mutin "$lambda" --n 15 --l 1
	run gcs "$lambda" --n 15 --l 1 --k 3
	run lmutex "$lambda" --topology torus:4x4 --k 3
	run lmutin "$lambda" --topology torus:4x4 --l 1
	run lkcs "$lambda" --topology torus:4x4 --l 1 --k 4
done
