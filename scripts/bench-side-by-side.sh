#!/usr/bin/env bash
# copse vs kube-scheduler on the same real kube-apiserver: one command, two
# rows and their ratio.
#
#   scripts/bench-side-by-side.sh [--kube-bin-dir DIR | --kubeconfig FILE]
#       [--scenario workload-gang|basic] [--nodes N] [--pods P] [--etcd FILE]
#       [--copse PATH] [--no-controller-manager] [--keep DIR] [-- COPSE_BENCH_FLAGS...]
#
# The scenario (default workload-gang: upstream scheduling.k8s.io Workloads
# and PodGroups, bench/README.md) runs twice, each time as
# `copse bench SCENARIO --kubeconfig ... --scheduler external` with the
# scheduler's pid for its CPU:
#   1. copse: `copse run --no-leader-elect`, its default profile
#      (schedulerName copse-scheduler);
#   2. kube-scheduler with a KubeSchedulerConfiguration written here: one
#      profile, schedulerName kube-gang-scheduler, with the GangScheduling,
#      TopologyPlacementGenerator and PodGroupPodsCount plugins (the
#      GangScheduling and TopologyAwareWorkloadScheduling features), and the
#      client QPS and burst copse runs with (5000 / 10000) so that neither is
#      held back by its client's rate limit. (`basic` runs kube-scheduler's
#      default profile, default-scheduler, with its stock limits.)
# Both schedulers use the admin credentials and are the only replica.
#
# The server:
#   --kube-bin-dir DIR  (default: KUBE_BIN_DIR, else scripts/real-apiserver.sh's
#                       v1.20.2 cache) a fresh etcd + kube-apiserver (and
#                       kube-controller-manager when DIR has one, unless
#                       --no-controller-manager) started by
#                       scripts/real-apiserver.sh for each of the two runs, so
#                       each starts from an empty cluster. For workload-gang the
#                       feature gates GenericWorkload, GangScheduling,
#                       TopologyAwareWorkloadScheduling, WorkloadAwarePreemption,
#                       DRAWorkloadResourceClaims and WorkloadWithJob are on, and
#                       the runtime-config enables the server's Workload API
#                       version (v1.36: scheduling.k8s.io/v1alpha2; v1.37:
#                       v1alpha3; later: v1beta1); KUBE_FEATURE_GATES and
#                       KUBE_RUNTIME_CONFIG override them. --etcd (or ETCD_BIN)
#                       names the etcd (3.5 or later for recent servers).
#   --kubeconfig FILE   a server that is already running (loopback): both runs
#                       use it; the benchmark deletes its nodes, pods, PodGroups
#                       and Workloads after each run. kube-scheduler comes from
#                       --kube-bin-dir, else PATH.
# Prints both rows and leaves the JSON and logs in the state directory (a
# temporary one, removed at the end unless --keep). Fails (exit 1), saying
# why, when a binary is missing, the server does not serve the Workload API,
# or a run fails.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '5,7p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "bench-side-by-side: error: $*" >&2
  exit 1
}

scenario=workload-gang
nodes=""
pods=""
copse=build/copse
keep=""
bin_dir="${KUBE_BIN_DIR:-}"
kubeconfig=""
etcd="${ETCD_BIN:-}"
with_kcm=true
extra=()
while (($#)); do
  case "$1" in
    --scenario) scenario="${2:?}"; shift ;;
    --nodes) nodes="${2:?}"; shift ;;
    --pods) pods="${2:?}"; shift ;;
    --copse) copse="${2:?}"; shift ;;
    --keep) keep="${2:?}"; shift ;;
    --kube-bin-dir) bin_dir="${2:?}"; shift ;;
    --kubeconfig) kubeconfig="${2:?}"; shift ;;
    --etcd) etcd="${2:?}"; shift ;;
    --no-controller-manager) with_kcm=false ;;
    --) shift; extra=("$@"); break ;;
    *) usage ;;
  esac
  shift
done
case "$scenario" in
  workload-gang | basic) ;;
  *) die "--scenario: '$scenario' (want workload-gang or basic)" ;;
esac
[ -x "$copse" ] || die "$copse not built (scripts/build.sh), or give --copse PATH"
copse="$(realpath "$copse")"
command -v kubectl >/dev/null || die "kubectl not found (scripts/setup.sh installs it)"

size_flags=()
[ -z "$nodes" ] || size_flags+=(--nodes "$nodes")
[ -z "$pods" ] || size_flags+=(--pods "$pods")

# The Workload features, for the server (a fresh one) and kube-scheduler alike.
if [ "$scenario" = workload-gang ]; then
  export KUBE_FEATURE_GATES="${KUBE_FEATURE_GATES:-GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true,WorkloadAwarePreemption=true,DRAWorkloadResourceClaims=true,WorkloadWithJob=true}"
fi

# The binaries: a directory of them, or scripts/real-apiserver.sh's own.
if [ -n "$bin_dir" ]; then
  [ -d "$bin_dir" ] || die "--kube-bin-dir: no directory '$bin_dir'"
  bin_dir="$(realpath "$bin_dir")"
  export KUBE_BIN_DIR="$bin_dir"
fi
if [ -n "$etcd" ]; then
  [ -x "$etcd" ] || die "--etcd: '$etcd' is not an executable"
  export ETCD_BIN="$(realpath "$etcd")"
fi
binary() { # NAME: its path, from the directory, else (with --kubeconfig) PATH
  local dir
  dir="${bin_dir:-$(dirname "$(scripts/real-apiserver.sh paths | sed -n 's/^kube-apiserver=//p')")}"
  if [ -x "$dir/$1" ]; then
    echo "$dir/$1"
  elif [ -n "$kubeconfig" ] && command -v "$1" >/dev/null; then
    command -v "$1"
  else
    return 1
  fi
}
kube_scheduler="$(binary kube-scheduler)" ||
  die "kube-scheduler not found (in ${bin_dir:-the v1.20.2 cache${kubeconfig:+ or PATH}}): give --kube-bin-dir DIR"
if [ -z "$kubeconfig" ]; then
  if [ -z "$bin_dir" ] && [ ! -x "$(binary kube-apiserver || true)" ]; then
    scripts/real-apiserver.sh build
  fi
  kube_apiserver="$(binary kube-apiserver)" ||
    die "kube-apiserver not found in ${bin_dir:-the v1.20.2 cache}: give --kube-bin-dir DIR"
  binary kube-controller-manager >/dev/null || with_kcm=false
  [ -n "$etcd" ] || command -v etcd >/dev/null ||
    die "etcd not found on PATH: give --etcd FILE (etcd 3.5 or later for recent servers)"
  version="$("$kube_apiserver" --version | awk '{ print $NF }')"
  minor="$(sed -nE 's/^v1\.([0-9]+).*/\1/p' <<<"$version")"
  [ -n "$minor" ] || die "$kube_apiserver --version: cannot read '$version'"
  if [ "$scenario" = workload-gang ]; then
    ((minor >= 36)) ||
      die "kube-apiserver $version does not serve the Workload API's PodGroups (v1.36 or later does): give --kube-bin-dir of a newer one"
    if ((minor == 36)); then
      workload_version=v1alpha2
    elif ((minor == 37)); then
      workload_version=v1alpha3
    else
      workload_version=v1beta1
    fi
    export KUBE_RUNTIME_CONFIG="${KUBE_RUNTIME_CONFIG:-scheduling.k8s.io/$workload_version=true}"
  fi
else
  [ -f "$kubeconfig" ] || die "--kubeconfig: no file '$kubeconfig'"
  kubeconfig="$(realpath "$kubeconfig")"
  version="$(kubectl --kubeconfig "$kubeconfig" version -o json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')" ||
    die "--kubeconfig: the server does not answer"
fi

dir="${keep:-$(mktemp -d /tmp/copse-side-by-side.XXXXXX)}"
mkdir -p "$dir"
dir="$(realpath "$dir")"
copse_pid=""
cleanup() {
  if [ -n "$copse_pid" ]; then kill -TERM "$copse_pid" 2>/dev/null || true; fi
  for d in "$dir"/*/server "$dir"/*/scheduler; do
    [ -d "$d" ] && scripts/real-apiserver.sh stop "$d" >/dev/null 2>&1 || true
  done
  [ -n "$keep" ] || rm -rf "$dir"
}
trap cleanup EXIT

# Fails unless the server serves Workloads and PodGroups (any version).
check_workload_api() { # KUBECONFIG
  local served
  served="$(kubectl --kubeconfig "$1" api-resources --api-group=scheduling.k8s.io -o name 2>&1)" ||
    die "kubectl api-resources: $served"
  grep -qx 'podgroups.scheduling.k8s.io' <<<"$served" && grep -qx 'workloads.scheduling.k8s.io' <<<"$served" ||
    die "the server ($version) does not serve the Workload API (scheduling.k8s.io workloads and podgroups); it serves: $(tr '\n' ' ' <<<"$served")"
}

# The server of one run: a fresh one, or the given one.
server_for() { # RUN_DIR -> prints the admin kubeconfig
  if [ -n "$kubeconfig" ]; then
    echo "$kubeconfig"
    return 0
  fi
  local args=()
  if $with_kcm; then args+=(--with-kube-controller-manager); fi
  scripts/real-apiserver.sh start "$1/server" "${args[@]}" >&2 || return 1
  echo "$1/server/admin.kubeconfig"
}

stop_server() { # RUN_DIR
  [ -n "$kubeconfig" ] || scripts/real-apiserver.sh stop "$1/server"
}

run_bench() { # NAME SCHEDULER_NAME PID KUBECONFIG RUN_DIR
  local status=0
  "$copse" bench "$scenario" --kubeconfig "$4" --scheduler external --scheduler-name "$2" \
    --scheduler-pid "$3" "${size_flags[@]}" --json "$5/result.json" "${extra[@]}" \
    2> >(tee "$5/bench.log" >&2) || status=$?
  return "$status"
}

status=0
echo "bench-side-by-side: $scenario on kube-apiserver $version; state in $dir" >&2

# 1. copse, as `copse run` next to the server.
run="$dir/copse"
mkdir -p "$run"
kc="$(server_for "$run")" || die "the server did not start (its logs are in $run/server)"
[ "$scenario" != workload-gang ] || check_workload_api "$kc"
: >"$run/copse-run.log"
"$copse" run --kubeconfig "$kc" --no-leader-elect --ops-port 0 >"$run/copse-run.log" 2>&1 &
copse_pid=$!
ops=""
for _ in $(seq 1 300); do
  kill -0 "$copse_pid" 2>/dev/null || { tail -20 "$run/copse-run.log" >&2; die "copse run exited"; }
  ops="$(sed -nE 's/^copse run: ops server (http[^ ]*).*/\1/p' "$run/copse-run.log" | head -1)"
  if [ -n "$ops" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$ops/readyz" || true)" = 200 ]; then
    break
  fi
  sleep 0.2
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "$ops/readyz" || true)" = 200 ] ||
  { tail -20 "$run/copse-run.log" >&2; die "copse run not ready within 60 s"; }
run_bench copse copse-scheduler "$copse_pid" "$kc" "$run" || status=1
kill -TERM "$copse_pid" 2>/dev/null || true
wait "$copse_pid" 2>/dev/null || true
copse_pid=""
stop_server "$run"

# 2. kube-scheduler.
run="$dir/kube-scheduler"
mkdir -p "$run"
kc="$(server_for "$run")" || die "the server did not start (its logs are in $run/server)"
[ "$scenario" != workload-gang ] || check_workload_api "$kc"
config_args=()
kube_name=default-scheduler
if [ "$scenario" = workload-gang ]; then
  kube_name=kube-gang-scheduler
  cat >"$run/kube-scheduler-config.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $kc
  qps: 5000
  burst: 10000
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: $kube_name
    plugins:
      multiPoint:
        enabled:
          - name: GangScheduling
          - name: TopologyPlacementGenerator
          - name: PodGroupPodsCount
            weight: 1
EOF
  config_args=(--config "$run/kube-scheduler-config.yaml")
fi
KUBE_BIN_DIR="$(dirname "$kube_scheduler")" \
  scripts/real-apiserver.sh kube-scheduler "$run/scheduler" "$kc" "${config_args[@]}"
sched_pid="$(cat "$run/scheduler/kube-scheduler.pid")"
run_bench kube-scheduler "$kube_name" "$sched_pid" "$kc" "$run" || status=1
scripts/real-apiserver.sh stop "$run/scheduler"
stop_server "$run"

python3 - "$scenario" "$version" "$dir/copse/result.json" "$dir/kube-scheduler/result.json" <<'PY'
import json, sys
scenario, version, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = []
for name, path in zip(["copse", "kube-scheduler"], paths):
    try:
        rows.append((name, json.load(open(path))))
    except (OSError, ValueError):
        rows.append((name, None))

def f(v, fmt):
    return "n/a" if v is None else format(v, fmt)

print()
print(f"{scenario} on kube-apiserver {version}")
if scenario == "workload-gang":
    print(f"{'scheduler':<15} {'pods bound':>10} {'gangs placed':>12} {'rack gangs 1 rack':>17} "
          f"{'partial':>7} {'last bind s':>11} {'pods/s':>7} {'CPU s':>7} {'CPU s @last':>11} {'timed out':>9}")
    for name, r in rows:
        if r is None:
            print(f"{name:<15} (no result)")
            continue
        gangs = f"{int(r['gangs_placed'])}/{int(r['gangs'])}"
        rack = f"{int(r['rack_constrained_gangs_in_one_rack'])}/{int(r['rack_constrained_gangs'])}"
        print(f"{name:<15} {r['pods_bound']:>10} {gangs:>12} {rack:>17} {int(r['gangs_partial']):>7} "
              f"{f(r.get('time_to_last_bind_s'), '.1f'):>11} {f(r.get('pods_per_second'), '.0f'):>7} "
              f"{f(r.get('scheduler_cpu_seconds'), '.1f'):>7} "
              f"{f(r.get('scheduler_cpu_seconds_to_last_bind'), '.1f'):>11} {str(r['timed_out']):>9}")
else:
    print(f"{'scheduler':<15} {'pods bound':>10} {'pods/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'CPU s':>7} {'timed out':>9}")
    for name, r in rows:
        if r is None:
            print(f"{name:<15} (no result)")
            continue
        print(f"{name:<15} {r['pods_bound']:>10} {f(r.get('pods_per_second'), '.0f'):>7} "
              f"{f(r.get('p50_ms'), '.1f'):>8} {f(r.get('p99_ms'), '.1f'):>8} "
              f"{f(r.get('scheduler_cpu_seconds'), '.1f'):>7} {str(r['timed_out']):>9}")

def ratio(key):
    c, k = rows[0][1], rows[1][1]
    if c is None or k is None or c.get(key) in (None, 0) or k.get(key) is None:
        return "n/a"
    return f"{k[key] / c[key]:.2f}x"

if all(r is not None for _, r in rows):
    if scenario == "workload-gang":
        c, k = rows[0][1], rows[1][1]
        print(f"kube-scheduler / copse: time to last bind {ratio('time_to_last_bind_s')}, "
              f"CPU {ratio('scheduler_cpu_seconds')} (to the last bind {ratio('scheduler_cpu_seconds_to_last_bind')}), "
              f"gangs placed {int(k['gangs_placed'])} vs {int(c['gangs_placed'])}, "
              f"rack-constrained gangs in one rack {int(k['rack_constrained_gangs_in_one_rack'])} vs "
              f"{int(c['rack_constrained_gangs_in_one_rack'])}")
    else:
        print(f"kube-scheduler / copse: pods/s {ratio('pods_per_second')}, CPU {ratio('scheduler_cpu_seconds')}")
PY
[ -z "$keep" ] || echo "results in $dir"
exit "$status"
