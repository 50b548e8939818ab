#!/usr/bin/env bash
# copse vs kube-scheduler on the same real kube-apiserver (v1.20.2, built by
# scripts/real-apiserver.sh): one command, two rows.
#
#   scripts/bench-side-by-side.sh [--nodes N] [--pods P] [--copse PATH] [--keep DIR]
#
# Starts etcd + kube-apiserver + kube-scheduler on loopback, then runs
# `copse bench basic --kubeconfig` twice against it: first with copse's
# scheduler in-process (pods for copse-scheduler), then with --scheduler
# external (pods for default-scheduler, kube-scheduler's CPU read from its
# pid). Each run creates its synthetic nodes and removes them and its pods
# afterwards. kube-scheduler runs with its defaults (client QPS 50, burst
# 100), as a stock cluster does. Prints both rows and leaves the JSON in the
# state directory (a temporary one, removed at the end unless --keep).
set -euo pipefail
cd "$(dirname "$0")/.."

nodes=1000
pods=3000
copse=build/copse
keep=""
while (($#)); do
  case "$1" in
    --nodes) nodes="$2"; shift ;;
    --pods) pods="$2"; shift ;;
    --copse) copse="$2"; shift ;;
    --keep) keep="$2"; shift ;;
    *) echo "usage: $0 [--nodes N] [--pods P] [--copse PATH] [--keep DIR]" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$copse" ] || { echo "bench-side-by-side: $copse not built (scripts/build.sh)" >&2; exit 1; }

dir="${keep:-$(mktemp -d /tmp/copse-side-by-side.XXXXXX)}"
mkdir -p "$dir"
cleanup() {
  scripts/real-apiserver.sh stop "$dir" >/dev/null 2>&1 || true
  [ -n "$keep" ] || rm -rf "$dir"
}
trap cleanup EXIT

scripts/real-apiserver.sh build
scripts/real-apiserver.sh start "$dir/server" --with-kube-scheduler
kubeconfig="$dir/server/admin.kubeconfig"
sched_pid="$(cat "$dir/server/kube-scheduler.pid")"

status=0
"$copse" bench basic --kubeconfig "$kubeconfig" --nodes "$nodes" --pods "$pods" \
  --json "$dir/copse.json" || status=1
"$copse" bench basic --kubeconfig "$kubeconfig" --nodes "$nodes" --pods "$pods" \
  --scheduler external --scheduler-name default-scheduler --scheduler-pid "$sched_pid" \
  --json "$dir/kube-scheduler.json" || status=1

row() {
  python3 - "$1" "$2" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
try:
    r = json.load(open(path))
except (OSError, ValueError):
    print(f"{name:<16} (no result)")
    sys.exit(0)
def f(v, fmt):
    return "n/a" if v is None else format(v, fmt)
cpu = r.get("scheduler_cpu_seconds")
bound = r.get("pods_bound") or 0
per_pod = None if cpu is None or bound == 0 else cpu * 1000.0 / bound
print(f"{name:<16} {r['nodes']:>6} {r['pods']:>6} {bound:>6} {f(r.get('pods_per_second'), '.0f'):>9} "
      f"{f(r.get('p50_ms'), '.1f'):>9} {f(r.get('p99_ms'), '.1f'):>9} {f(cpu, '.2f'):>8} "
      f"{f(per_pod, '.3f'):>10} {str(r.get('timed_out')):>9}")
PY
}
echo
printf '%-16s %6s %6s %6s %9s %9s %9s %8s %10s %9s\n' scheduler nodes pods bound pods/s \
  p50_ms p99_ms cpu_s cpu_ms/pod timed_out
row copse "$dir/copse.json"
row kube-scheduler "$dir/kube-scheduler.json"
[ -z "$keep" ] || echo "results in $dir"
exit "$status"
