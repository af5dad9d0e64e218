#!/bin/bash
# demo.sh CRITSEC FTGCSDEMO PLOT: five critsec run members of an ftgcs
# cluster, (l,k) = (2,3), --policy always, detector in majority mode
# (heartbeat 100 ms, timeout 1 s), on loopback, each keeping a copy of the
# ftgcsdemo service running while it is InCS. Once three copies run, the
# critsec run of a member whose copy runs is killed with SIGKILL; once three
# run again, a second one is. The copies write their own start, beat and
# stop records to one log, on the machine's monotonic clock, and the script's
# kills are recorded there too; at the end ftgcsdemo plot counts the copies
# running over time, prints the numbers and draws PLOT. It fails if more
# than k copies ever ran, if fewer than l ran after a recovery, or if a
# copy is left once every member has stopped. The files stay in a
# temporary directory, printed first. STEADY (seconds, default 10) is the
# wait after each step.
set -euo pipefail
critsec=$(realpath "$1"); demo=$(realpath "$2"); plot=$(realpath -m "$3")
steady=${STEADY:-10}
work=$(mktemp -d); echo "files in $work"
trap 'kill $(cat "$work"/run-*.pid 2>/dev/null) 2>/dev/null || true' EXIT
cd "$work"
"$critsec" certs --out tls --n 5 >/dev/null
port=$((20000 + RANDOM % 20000))
{
  printf 'alg: ftgcs\nn: 5\nl: 2\nk: 3\nmembers:\n'
  for i in 1 2 3 4 5; do printf '  %d: 127.0.0.1:%d\n' $i $((port + i)); done
  printf 'data: data\ntls:\n  ca: tls/ca.crt\n  cert: tls/node-{id}.crt\n  key: tls/node-{id}.key\n'
  printf 'detector:\n  heartbeat: 100ms\n  timeout: 1s\n  mode: majority\n'
} > cluster.yaml
log="$work/records"
for i in 1 2 3 4 5; do
  "$critsec" run --config cluster.yaml --id $i --policy always --grace 1s --leave-timeout 3s -- \
    "$demo" serve -log "$log" -member $i -addr 127.0.0.1:$((port + 10 + i)) > run-$i.log 2>&1 &
  echo $! > run-$i.pid
done
"$demo" wait -log "$log" -copies 3 -timeout 60s
sleep "$steady"
for i in 1 2 3 4 5; do curl -s -m 1 http://127.0.0.1:$((port + 10 + i))/ || true; done
for kill in 1 2; do
  victim=$("$demo" running -log "$log" | sed -n 1p)
  echo "kill $kill: SIGKILL to P$victim's critsec run"
  "$demo" kill -log "$log" -member "$victim" -pid "$(cat run-$victim.pid)"
  mv run-$victim.pid killed-$victim.pid
  sleep 0.3 # the killed copy's last beat ages out of running's window
  "$demo" wait -log "$log" -copies 3 -timeout 60s
  sleep "$steady"
done
"$demo" end -log "$log"
pids=$(cat run-*.pid)
kill -TERM $pids
for p in $pids; do wait "$p" || true; done
left=$(pgrep -c -f "^$demo serve" || true)
echo "copies left after every member stopped: $left"
"$demo" plot -log "$log" -l 2 -k 3 -out "$plot"
[ "$left" -eq 0 ]
