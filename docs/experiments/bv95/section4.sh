#!/bin/sh
# The figures of section 4 of Bulgannawar and Vaidya (1995) that the bv95
# study does not produce (docs/claims.md, rows T17-T19); N = 30, K = 3,
# nu = 2, E = 0.0002, constant transit.
# Needs sh and python3, and critsec as one executable path (default:
# critsec on PATH): go build -o critsec ./cmd/critsec, then pass ./critsec.
# A run that does not end ok stops the script with its seed's count.
#   sh docs/experiments/bv95/section4.sh setting-d [critsec]
#     Ts = Tr = 0.05, Tt = 0.9, 5000 entries, seeds 1..10: per algorithm and
#     rate, the messages per entry (all the seeds' messages over all their
#     entries, as bv95.csv's msgs_per_entry).
#   sh docs/experiments/bv95/section4.sh entries [critsec]
#     setting A (Ts = Tr = 0.1, Tt = 0.8), 20000 entries, seeds 1..10 at
#     lambda 0.01 and 1: the mean over the seeds of each run's mean delay
#     (bv95.csv's avg_delay_time_units) and the messages per entry, pooled.
#   sh docs/experiments/bv95/section4.sh tokens [critsec]
#     setting A, lambda 10, 3000 entries, seed 1, N = 30, 60, 120: the
#     largest TOKEN sent (the words of the trace's TOKEN sends).
set -eu
what=${1:-}
critsec=${2:-critsec}
sum() { # label: reads sim --json summaries, prints label, delay, messages per entry
	python3 -c '
import json, sys
rs = [json.loads(l) for l in sys.stdin.read().replace("}\n{", "}\x00{").split("\x00") if l.strip()]
if not rs:
    sys.exit("%s: no run succeeded" % sys.argv[1])
bad = [r for r in rs if r.get("result") != "ok"]
if bad:
    sys.exit("%s: %d of %d runs did not end ok (%s)" % (sys.argv[1], len(bad), len(rs), bad[0].get("result")))
delay = sum(r["entry_wait"]["mean"] for r in rs) / len(rs)
msgs = sum(r["messages"] for r in rs) / sum(r["entries"] for r in rs)
print("%s delay %.4f messages per entry %.4f (%d seeds)" % (sys.argv[1], delay, msgs, len(rs)))
' "$1"
}
runs() { # alg lambda entries args...: seeds 1..10
	alg=$1; lambda=$2; entries=$3; shift 3
	for seed in 1 2 3 4 5 6 7 8 9 10; do
		"$critsec" sim --alg "$alg" --n 30 --k 3 --E 0.0002 --lambda "$lambda" --entries "$entries" --seed "$seed" --json "$@"
	done | sum "$alg lambda $lambda"
}
case $what in
setting-d)
	for alg in forest raymond srimani-reddy makki; do
		for lambda in 0.001 0.01 0.1 1 10; do
			runs "$alg" "$lambda" 5000 --Ts 0.05 --Tr 0.05 --Tt 0.9
		done
	done ;;
entries)
	for alg in forest raymond srimani-reddy makki; do
		for lambda in 0.01 1; do
			runs "$alg" "$lambda" 20000 --Ts 0.1 --Tr 0.1 --Tt 0.8
		done
	done ;;
tokens)
	trace=$(mktemp)
	trap 'rm -f "$trace"' EXIT
	for alg in forest-paper forest; do
		for n in 30 60 120; do
			"$critsec" sim --alg "$alg" --n "$n" --k 3 --Ts 0.1 --Tr 0.1 --Tt 0.8 --E 0.0002 --lambda 10 \
				--entries 3000 --seed 1 --trace "$trace" >/dev/null
			python3 -c '
import json, sys
w = [e["words"] for e in map(json.loads, open(sys.argv[3])) if e["ev"] == "send" and e["msg"] == "TOKEN"]
print("%s N = %s largest TOKEN %d words" % (sys.argv[1], sys.argv[2], max(w)))
' "$alg" "$n" "$trace"
		done
	done ;;
*)
	echo "usage: sh docs/experiments/bv95/section4.sh setting-d|entries|tokens [critsec]" >&2
	exit 2 ;;
esac
