#!/bin/bash
# replace.sh CRITSEC MODE TRIALS: how long a kill -9 of the holder leaves a
# 3-member ftraymond cluster (k = 1, default detector) without a copy, under
# critsec run on loopback, in detector mode MODE (crash-stop or majority).
# Each copy is a shell loop that appends "member pid nanoseconds" to a shared
# file every 20 ms; a trial kills the holder's critsec run with SIGKILL and
# prints when the old copy's last line and the new copy's first line were
# written, and the most copies whose lines interleave in the file (never more
# than 1 is the claim).
set -euo pipefail
critsec=$(realpath "$1"); mode=$2; trials=$3
work=$(mktemp -d); trap 'kill $(cat "$work"/*/run-*.pid 2>/dev/null) 2>/dev/null; rm -rf "$work"' EXIT
cat > "$work/beat.sh" <<'EOS'
#!/bin/sh
while :; do echo "$1 $$ $(date +%s%N)" >> "$2"; sleep 0.02; done
EOS
chmod +x "$work/beat.sh"
port=$((20000 + RANDOM % 20000))
for t in $(seq "$trials"); do
  d="$work/$t"; mkdir -p "$d"; cd "$d"
  "$critsec" certs --out tls --n 3 >/dev/null
  printf 'alg: ftraymond\nn: 3\nk: 1\nmembers:\n  1: 127.0.0.1:%d\n  2: 127.0.0.1:%d\n  3: 127.0.0.1:%d\ndata: data\ntls:\n  ca: tls/ca.crt\n  cert: tls/node-{id}.crt\n  key: tls/node-{id}.key\ndetector:\n  mode: %s\n' \
    $((port + 3*t)) $((port + 3*t + 1)) $((port + 3*t + 2)) "$mode" > cluster.yaml
  for i in 1 2 3; do "$critsec" run --config cluster.yaml --id $i -- "$work/beat.sh" $i "$d/beats" > run-$i.log 2>&1 & echo $! > run-$i.pid; disown; done
  for _ in $(seq 100); do [ -s beats ] && break; sleep 0.1; done
  sleep 1
  holder=$(tail -1 beats | cut -d' ' -f1)
  killed=$(date +%s%N); kill -9 "$(cat run-$holder.pid)"
  sleep 3
  awk -v h="$holder" -v k="$killed" '
    { if (!($2 in first)) { first[$2] = NR; order[++n] = $2 } last[$2] = NR
      if ($1 == h) old = $3; else if ($3 > k && !new) new = $3 }
    END { for (i = 1; i <= n; i++) for (j = 1; j <= n; j++) if (i != j) {
            a = order[i]; b = order[j]; if (first[a] < first[b] && last[a] > first[b]) over = 1 }
          printf "old copy last %d ms after the kill; new copy first %d ms after; copies overlapping: %s\n",
            (old - k) / 1e6, (new - k) / 1e6, over ? "yes" : "no" }' beats
  kill $(cat run-*.pid) 2>/dev/null || true; sleep 1
done
