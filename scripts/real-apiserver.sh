#!/usr/bin/env bash
# A real kube-apiserver (and kube-scheduler) for tests: upstream v1.20.2 built
# from Debian's `kubernetes` source package, with etcd from `etcd-server`, or
# binaries of another version that you provide (KUBE_BIN_DIR below).
# This script is the single source of the server's flags.
#
#   real-apiserver.sh build                  build v1.20.2 once into the cache (idempotent)
#   real-apiserver.sh start DIR [--with-kube-scheduler] [--kube-scheduler-config FILE]
#                               [--with-kube-controller-manager]
#                                            etcd + kube-apiserver on loopback, state in DIR
#   real-apiserver.sh kube-scheduler DIR KUBECONFIG [--config FILE]
#                                            kube-scheduler alone against any server, its
#                                            pid and log in DIR (stop DIR stops it)
#   real-apiserver.sh stop DIR               stop what start started
#   real-apiserver.sh nodes DIR PREFIX COUNT [--labels k=v,...] [--resources cpu=8,memory=32Gi,...]
#                                            create Ready synthetic Nodes PREFIX-1..COUNT
#   real-apiserver.sh paths                  print the binaries' paths
#
# Other binaries (start, kube-scheduler and paths read these):
#   KUBE_BIN_DIR=DIR        kube-apiserver, kube-scheduler and kube-controller-manager
#                           of any version (default: the v1.20.2 cache). Flags a
#                           version no longer has (--insecure-port, --port,
#                           --logtostderr) are passed only where its --help lists them.
#   ETCD_BIN=FILE           the etcd to run (default: etcd on PATH); recent
#                           kube-apiservers want etcd 3.5 or later.
#   KUBE_FEATURE_GATES=...  --feature-gates of every component, e.g.
#                           GenericWorkload=true,GangScheduling=true
#   KUBE_RUNTIME_CONFIG=... kube-apiserver's --runtime-config, e.g.
#                           scheduling.k8s.io/v1alpha2=true
#
# The cache is ${COPSE_CACHE_DIR:-$HOME/.cache/copse}/kubernetes-<version>/,
# outside the checkout, so that later runs (and CI on the same machine) reuse it.
set -euo pipefail

readonly kVersion="1.20.2"
readonly kCacheRoot="${COPSE_CACHE_DIR:-$HOME/.cache/copse}"
readonly kCacheDir="$kCacheRoot/kubernetes-$kVersion"
readonly kStamp="$kCacheDir/.built"
readonly kBinDir="$kCacheDir/bin"
# The binaries start, kube-scheduler and paths run.
readonly kKubeBinDir="${KUBE_BIN_DIR:-$kBinDir}"
readonly kEtcd="${ETCD_BIN:-etcd}"
readonly kFeatureGates="${KUBE_FEATURE_GATES:-}"
readonly kRuntimeConfig="${KUBE_RUNTIME_CONFIG:-}"
readonly kReadyTimeoutSeconds="${COPSE_REAL_APISERVER_READY_TIMEOUT:-90}"

log() { echo "real-apiserver: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_install() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# apt-get source needs deb-src lines; Debian images ship only binary ones.
enable_deb_src() {
  if grep -rqsE '^\s*(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    return 0
  fi
  log "enabling deb-src for bookworm"
  as_root tee /etc/apt/sources.list.d/copse-deb-src.sources >/dev/null <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  as_root apt-get update -qq
}

# Upstream version of an installed Debian package: 1.0.2-2 -> v1.0.2.
deb_upstream_version() {
  local v
  v="$(dpkg-query -W -f='${Version}' "$1")"
  v="${v#*:}"
  echo "v${v%%-*}"
}

# The vendored reflect2 v1.0.1 reads runtime internals that changed in Go 1.18
# and crashes kube-apiserver at start; Debian's packaged sources are fixed.
# Swap both it and json-iterator (which must match it) and record the versions
# where go's vendor consistency check reads them.
apply_go119_fix() {
  local src="$1"
  local mod path deb_pkg old new
  for mod in "github.com/modern-go/reflect2:golang-github-modern-go-reflect2-dev" \
    "github.com/json-iterator/go:golang-github-json-iterator-go-dev"; do
    path="${mod%%:*}"
    deb_pkg="${mod#*:}"
    new="$(deb_upstream_version "$deb_pkg")"
    old="$(awk -v p="$path" '$1 == "#" && $2 == p { print $3; exit }' "$src/vendor/modules.txt")"
    [ -n "$old" ] || die "$path is not in vendor/modules.txt"
    [ -d "/usr/share/gocode/src/$path" ] || die "$deb_pkg has no sources under /usr/share/gocode/src/$path"
    log "vendor: $path $old -> $new (from $deb_pkg)"
    rm -rf "${src:?}/vendor/$path"
    mkdir -p "$src/vendor/$path"
    # Only the package itself: no tests, no nested modules.
    find "/usr/share/gocode/src/$path" -maxdepth 1 -type f \( -name '*.go' -o -name '*.s' -o -name LICENSE \) \
      ! -name '*_test.go' -exec cp {} "$src/vendor/$path/" \;
    # "path vOLD" appears in require, replace and modules.txt lines alike.
    sed -i "s#\(${path//./\\.}\) ${old//./\\.}\b#\1 $new#g" "$src/go.mod" "$src/vendor/modules.txt"
  done
}

cmd_build() {
  if [ -f "$kStamp" ] && [ -x "$kBinDir/kube-apiserver" ] && [ -x "$kBinDir/kube-scheduler" ]; then
    log "already built: $kBinDir ($(cat "$kStamp"))"
    return 0
  fi
  local started=$SECONDS
  apt_install golang-go etcd-server etcd-client dpkg-dev rsync openssl curl \
    golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev
  enable_deb_src
  mkdir -p "$kCacheDir"
  local work="$kCacheDir/src"
  rm -rf "$work"
  mkdir -p "$work"
  log "apt-get source kubernetes into $work"
  (cd "$work" && apt-get source -qq kubernetes >"$work/apt-source.log" 2>&1) ||
    { cat "$work/apt-source.log" >&2; die "apt-get source kubernetes failed"; }
  local src
  src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -1)"
  [ -n "$src" ] || die "apt-get source left no kubernetes-* directory in $work"

  # Debian's version string (1.20.5+really1.20.2-...) says which upstream it
  # really is; check the source's own record of the version as well.
  local deb_version
  deb_version="$(cd "$src" && dpkg-parsechangelog -S Version)"
  log "source package: kubernetes $deb_version"
  case "$deb_version" in
    *"really$kVersion"* | "$kVersion"-*) ;;
    *) die "expected upstream v$kVersion, Debian's source is $deb_version" ;;
  esac
  # A release tag's CHANGELOG ends at the release before it (its own notes land
  # after the tag): v1.20.2's newest entry is v1.20.1.
  local newest expected="v${kVersion%.*}.$((${kVersion##*.} - 1))"
  newest="$(grep -m1 -oE '^# v[0-9]+\.[0-9]+\.[0-9]+$' "$src/CHANGELOG/CHANGELOG-${kVersion%.*}.md" | cut -c3-)"
  [ "$newest" = "$expected" ] ||
    die "the source's newest CHANGELOG entry is '$newest', not $expected: this is not the v$kVersion tree"
  log "verified upstream v$kVersion: Debian version $deb_version, newest CHANGELOG entry $newest"
  [ -d "$src/vendor" ] || die "the source package has no vendor/ directory"

  apply_go119_fix "$src"

  log "building kube-apiserver and kube-scheduler (go $(go env GOVERSION))"
  # The version that `kube-apiserver --version` and /version report.
  export KUBE_GIT_VERSION="v$kVersion" KUBE_GIT_TREE_STATE=clean
  export KUBE_GIT_COMMIT="debian-$deb_version"
  export KUBE_VERBOSE=1 GOFLAGS=-mod=vendor
  (cd "$src" && make WHAT="cmd/kube-apiserver cmd/kube-scheduler") >"$kCacheDir/build.log" 2>&1 ||
    { tail -50 "$kCacheDir/build.log" >&2; die "make failed; full log: $kCacheDir/build.log"; }
  mkdir -p "$kBinDir"
  local b out
  for b in kube-apiserver kube-scheduler; do
    out="$(find "$src/_output" -type f -name "$b" -perm -u+x | head -1)"
    [ -n "$out" ] || die "make produced no $b under $src/_output"
    install -m 0755 "$out" "$kBinDir/$b"
  done
  "$kBinDir/kube-apiserver" --version | grep -q "v$kVersion" || die "kube-apiserver --version is not v$kVersion"
  # The binaries are all that later runs need; the 1 GB tree is not.
  rm -rf "$src/_output" "$work"
  echo "kubernetes $deb_version (upstream v$kVersion), $(go env GOVERSION), built in $((SECONDS - started)) s" >"$kStamp"
  log "built: $(cat "$kStamp")"
  return 0
}

# A TCP port no socket uses (per /proc/net/tcp{,6}, in any state), not among
# the arguments, and below the kernel's ephemeral range: a port inside it can
# be taken by any outgoing connection between this check and the bind (a test
# running beside this one), and the server then fails with "address already
# in use".
free_port() {
  local taken=" $* " port hex low=20000 high
  high="$(awk '{ print $1 - 1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32767)"
  [ "$high" -gt "$low" ] || { low=10000; high=19999; }
  for _ in $(seq 1 200); do
    port=$((low + RANDOM % (high - low + 1)))
    case "$taken" in *" $port "*) continue ;; esac
    hex="$(printf ':%04X' "$port")"
    # Column 2 is the local address:port.
    if ! awk -v h="$hex" 'FNR > 1 && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
      /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  die "no free port found"
}

kubeconfig_for() { # FILE USER TOKEN
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real
  cluster:
    server: $SERVER_URL
    certificate-authority-data: $(base64 -w0 "$DIR/pki/ca.crt")
users:
- name: $2
  user:
    token: $3
contexts:
- name: $2@real
  context:
    cluster: real
    user: $2
    namespace: default
current-context: $2@real
EOF
}

# Starts a program in its own session, with its log and pid file in $DIR.
spawn() { # NAME ARGS...
  local name="$1"
  shift
  setsid "$@" >"$DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/$name.pid"
}

alive() { [ -f "$DIR/$1.pid" ] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }

# Whether BINARY's --help lists FLAG: flags differ between versions
# (--insecure-port and kube-scheduler's --port are gone by v1.24,
# --logtostderr by v1.26).
has_flag() { # BINARY FLAG
  local help
  help="$("$1" --help 2>&1 || true)"
  grep -qE -- "(^|[[:space:],])$2([ =]|$)" <<<"$help"
}

# The flags BINARY takes beyond its own: logging to stderr where the version
# still has the flag (later ones log to stderr anyway), and the feature gates.
common_flags() { # BINARY
  if has_flag "$1" --logtostderr; then echo "--logtostderr=true"; fi
  if [ -n "$kFeatureGates" ]; then echo "--feature-gates=$kFeatureGates"; fi
}

need_binary() { # NAME
  [ -x "$kKubeBinDir/$1" ] && return 0
  if [ "$kKubeBinDir" = "$kBinDir" ]; then
    die "$1 is not built: run '$0 build' first (or set KUBE_BIN_DIR to a directory of other binaries)"
  fi
  die "$1 not found in KUBE_BIN_DIR=$kKubeBinDir"
}

# kube-scheduler against KUBECONFIG (the admin's: it is not what is tested),
# as the only replica: no leader election. With a KubeSchedulerConfiguration
# (CONFIG), its clientConnection.kubeconfig and leaderElection rule instead
# (kube-scheduler ignores those flags then); KUBECONFIG still authenticates
# the health endpoint's callers.
spawn_kube_scheduler() { # KUBECONFIG CONFIG TAKEN_PORTS...
  local kubeconfig="$1" config="$2"
  shift 2
  need_binary kube-scheduler
  local sched_port args
  sched_port="$(free_port "$@")"
  mapfile -t args < <(common_flags "$kKubeBinDir/kube-scheduler")
  if has_flag "$kKubeBinDir/kube-scheduler" --port; then args+=(--port=0); fi
  if [ -n "$config" ]; then args+=(--config="$config"); fi
  spawn kube-scheduler "$kKubeBinDir/kube-scheduler" \
    --kubeconfig="$kubeconfig" \
    --authentication-kubeconfig="$kubeconfig" \
    --authorization-kubeconfig="$kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port="$sched_port" \
    --v=1 "${args[@]}"
  wait_ok kube-scheduler "https://127.0.0.1:$sched_port/healthz" 60 -k
  echo "KUBE_SCHEDULER_URL=https://127.0.0.1:$sched_port" >>"$DIR/env"
}

# Waits, with a deadline, until curl of URL prints "ok"; dies with the log's tail.
wait_ok() { # NAME URL SECONDS [curl args...]
  local name="$1" url="$2" seconds="$3"
  shift 3
  local deadline=$((SECONDS + seconds))
  while ((SECONDS < deadline)); do
    alive "$name" || {
      tail -30 "$DIR/$name.log" >&2
      die "$name exited; log: $DIR/$name.log"
    }
    [ "$(curl -s --max-time 2 "$@" "$url" 2>/dev/null || true)" = "ok" ] && return 0
    sleep 0.2
  done
  tail -30 "$DIR/$name.log" >&2
  die "$name not ready at $url after ${seconds}s; log: $DIR/$name.log"
}

cmd_start() {
  DIR="${1:-}"
  local usage="usage: $0 start DIR [--with-kube-scheduler] [--kube-scheduler-config FILE] [--with-kube-controller-manager]"
  [ -n "$DIR" ] || die "$usage"
  shift
  local with_scheduler=false scheduler_config="" with_kcm=false
  while (($#)); do
    case "$1" in
      --with-kube-scheduler) with_scheduler=true ;;
      --kube-scheduler-config)
        scheduler_config="${2:-}"
        [ -f "$scheduler_config" ] || die "start: --kube-scheduler-config: no file '$scheduler_config'"
        scheduler_config="$(realpath "$scheduler_config")"
        with_scheduler=true
        shift
        ;;
      --with-kube-controller-manager) with_kcm=true ;;
      *) die "start: unknown flag $1; $usage" ;;
    esac
    shift
  done
  need_binary kube-apiserver
  if $with_scheduler; then need_binary kube-scheduler; fi
  if $with_kcm; then need_binary kube-controller-manager; fi
  command -v "$kEtcd" >/dev/null ||
    die "etcd not found ('$kEtcd'): run '$0 build' (installs etcd-server) or set ETCD_BIN"
  local version
  version="$("$kKubeBinDir/kube-apiserver" --version 2>/dev/null | awk '{ print $NF }')"
  [ -n "$version" ] || die "$kKubeBinDir/kube-apiserver --version printed nothing"
  mkdir -p "$DIR"
  DIR="$(cd "$DIR" && pwd)"
  if alive etcd || alive kube-apiserver; then die "$DIR has a running server: '$0 stop $DIR' first"; fi
  rm -rf "$DIR/etcd" "$DIR/pki"
  mkdir -p "$DIR/pki" "$DIR/etcd"

  # PKI: a CA, the serving certificate for 127.0.0.1 and localhost, and the
  # service-account signing key.
  local pki="$DIR/pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=copse-real-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$pki/apiserver.ext"
  openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 30 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null

  # Static tokens: admin is in system:masters; the components' users are in no
  # group beyond system:authenticated, so they get only what RBAC grants them.
  local admin_token scheduler_token grove_token
  admin_token="$(openssl rand -hex 16)"
  scheduler_token="$(openssl rand -hex 16)"
  grove_token="$(openssl rand -hex 16)"
  cat >"$pki/tokens.csv" <<EOF
$admin_token,admin,uid-admin,"system:masters"
$scheduler_token,copse-scheduler,uid-copse-scheduler
$grove_token,copse-grove,uid-copse-grove
EOF

  local etcd_port peer_port api_port
  etcd_port="$(free_port)"
  peer_port="$(free_port "$etcd_port")"
  api_port="$(free_port "$etcd_port" "$peer_port")"
  spawn etcd "$kEtcd" --name copse-real --data-dir "$DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "copse-real=http://127.0.0.1:$peer_port" --logger zap --log-level warn
  wait_ok etcd "http://127.0.0.1:$etcd_port/health" 30 -o /dev/null -w ok

  # No kubelet runs, and no controller-manager unless asked for: the
  # ServiceAccount plugin would reject pods for want of the tokens it mints,
  # TaintNodesByCondition would taint every new Node not-ready for good, and
  # the endpoint reconciler would publish this host's address for the
  # `kubernetes` Service.
  local api_args
  mapfile -t api_args < <(common_flags "$kKubeBinDir/kube-apiserver")
  if has_flag "$kKubeBinDir/kube-apiserver" --insecure-port; then api_args+=(--insecure-port=0); fi
  if [ -n "$kRuntimeConfig" ]; then api_args+=(--runtime-config="$kRuntimeConfig"); fi
  spawn kube-apiserver "$kKubeBinDir/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    --token-auth-file="$pki/tokens.csv" \
    --authorization-mode=RBAC \
    --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
    --endpoint-reconciler-type=none \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-cluster-ip-range=10.0.0.0/24 \
    --profiling=false --v=1 "${api_args[@]}"

  SERVER_URL="https://127.0.0.1:$api_port"
  wait_ok kube-apiserver "$SERVER_URL/readyz" "$kReadyTimeoutSeconds" \
    --cacert "$pki/ca.crt" -H "Authorization: Bearer $admin_token"
  kubeconfig_for "$DIR/admin.kubeconfig" admin "$admin_token"
  kubeconfig_for "$DIR/copse-scheduler.kubeconfig" copse-scheduler "$scheduler_token"
  kubeconfig_for "$DIR/copse-grove.kubeconfig" copse-grove "$grove_token"
  cat >"$DIR/env" <<EOF
SERVER_URL=$SERVER_URL
ETCD_URL=http://127.0.0.1:$etcd_port
KUBE_APISERVER_VERSION=$version
EOF

  if $with_kcm; then
    # The admin's credentials, one replica. No node lifecycle controller: no
    # kubelet renews the nodes' leases, so it would taint every node
    # unreachable (and evict its pods) after its grace period.
    kubeconfig_for "$DIR/kube-controller-manager.kubeconfig" admin "$admin_token"
    local kcm_port kcm_args
    kcm_port="$(free_port "$etcd_port" "$peer_port" "$api_port")"
    mapfile -t kcm_args < <(common_flags "$kKubeBinDir/kube-controller-manager")
    spawn kube-controller-manager "$kKubeBinDir/kube-controller-manager" \
      --kubeconfig="$DIR/kube-controller-manager.kubeconfig" \
      --authentication-kubeconfig="$DIR/kube-controller-manager.kubeconfig" \
      --authorization-kubeconfig="$DIR/kube-controller-manager.kubeconfig" \
      --leader-elect=false --bind-address=127.0.0.1 --secure-port="$kcm_port" \
      --controllers="*,-$(kcm_node_lifecycle_name)" \
      --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
      --use-service-account-credentials=false --v=1 "${kcm_args[@]}"
    wait_ok kube-controller-manager "https://127.0.0.1:$kcm_port/healthz" 60 -k
    echo "KUBE_CONTROLLER_MANAGER_URL=https://127.0.0.1:$kcm_port" >>"$DIR/env"
  fi
  if $with_scheduler; then
    kubeconfig_for "$DIR/kube-scheduler.kubeconfig" admin "$admin_token"
    spawn_kube_scheduler "$DIR/kube-scheduler.kubeconfig" "$scheduler_config" \
      "$etcd_port" "$peer_port" "$api_port"
  fi
  log "ready: $SERVER_URL, $version (kubeconfigs in $DIR: admin, copse-scheduler, copse-grove)"
}

# The node lifecycle controller's name in kube-controller-manager's
# --controllers: "node-lifecycle-controller" from v1.28, "nodelifecycle" before.
kcm_node_lifecycle_name() {
  local help
  help="$("$kKubeBinDir/kube-controller-manager" --help 2>&1 || true)"
  if grep -q 'node-lifecycle-controller' <<<"$help"; then
    echo node-lifecycle-controller
  else
    echo nodelifecycle
  fi
}

cmd_kube_scheduler() {
  DIR="${1:-}"
  local kubeconfig="${2:-}" config=""
  local usage="usage: $0 kube-scheduler DIR KUBECONFIG [--config FILE]"
  [ -n "$DIR" ] && [ -f "$kubeconfig" ] || die "$usage"
  shift 2
  while (($#)); do
    case "$1" in
      --config)
        config="${2:-}"
        [ -f "$config" ] || die "kube-scheduler: --config: no file '$config'"
        config="$(realpath "$config")"
        shift
        ;;
      *) die "kube-scheduler: unknown flag $1; $usage" ;;
    esac
    shift
  done
  mkdir -p "$DIR"
  DIR="$(cd "$DIR" && pwd)"
  if alive kube-scheduler; then die "$DIR has a running kube-scheduler: '$0 stop $DIR' first"; fi
  spawn_kube_scheduler "$(realpath "$kubeconfig")" "$config"
  log "kube-scheduler running, pid $(cat "$DIR/kube-scheduler.pid"), log $DIR/kube-scheduler.log"
}
cmd_stop() {
  DIR="${1:-}"
  [ -n "$DIR" ] || die "usage: $0 stop DIR"
  [ -d "$DIR" ] || return 0
  local name pid deadline
  # Reverse start order, and only the pids this script recorded.
  for name in kube-scheduler kube-controller-manager kube-apiserver etcd; do
    [ -f "$DIR/$name.pid" ] || continue
    pid="$(cat "$DIR/$name.pid")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      deadline=$((SECONDS + 15))
      while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    rm -f "$DIR/$name.pid"
  done
}

# Synthetic Nodes PREFIX-1..COUNT: created, then status.capacity/allocatable
# and a Ready condition set through the status subresource, as a kubelet would.
cmd_nodes() {
  DIR="${1:-}"
  local usage="usage: $0 nodes DIR PREFIX COUNT [--labels k=v,...] [--resources cpu=8,memory=32Gi,pods=110,nvidia.com/gpu=8]"
  [ $# -ge 3 ] || die "$usage"
  local prefix="$2" count="$3"
  shift 3
  local labels="" resources="cpu=8,memory=32Gi,pods=110"
  while (($#)); do
    case "$1" in
      --labels)
        labels="${2:-}"
        shift
        ;;
      --resources)
        resources="${2:-}"
        shift
        ;;
      *) die "nodes: unknown flag $1; $usage" ;;
    esac
    shift
  done
  [[ "$count" =~ ^[0-9]+$ ]] || die "nodes: COUNT must be a number, got '$count'"
  local kc="$DIR/admin.kubeconfig"
  [ -f "$kc" ] || die "nodes: $kc not found: start the server first"
  local labels_json="" resources_json="" kv i name now kvs
  IFS=, read -ra kvs <<<"$labels"
  for kv in "${kvs[@]}"; do
    [ -n "$kv" ] || continue
    [[ "$kv" == *=* ]] || die "nodes: --labels: '$kv' is not key=value"
    labels_json+=",\"${kv%%=*}\":\"${kv#*=}\""
  done
  IFS=, read -ra kvs <<<"$resources"
  for kv in "${kvs[@]}"; do
    [[ "$kv" == *=* ]] || die "nodes: --resources: '$kv' is not name=quantity"
    resources_json+="${resources_json:+,}\"${kv%%=*}\":\"${kv#*=}\""
  done
  now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  for i in $(seq 1 "$count"); do
    name="$prefix-$i"
    echo "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$name\",\"labels\":{\"kubernetes.io/hostname\":\"$name\"$labels_json}}}" |
      kubectl --kubeconfig "$kc" create -f - >/dev/null
    kubectl --kubeconfig "$kc" patch node "$name" --subresource=status --type=merge -p \
      "{\"status\":{\"capacity\":{$resources_json},\"allocatable\":{$resources_json},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"synthetic node\",\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null
  done
  log "nodes: $count x $prefix-N ($resources${labels:+; $labels})"
}

cmd_paths() {
  echo "kube-apiserver=$kKubeBinDir/kube-apiserver"
  echo "kube-scheduler=$kKubeBinDir/kube-scheduler"
  echo "kube-controller-manager=$kKubeBinDir/kube-controller-manager"
  echo "etcd=$(command -v "$kEtcd" || echo /usr/bin/etcd)"
}

main() {
  local cmd="${1:-}"
  shift || true
  case "$cmd" in
    build) cmd_build "$@" ;;
    start) cmd_start "$@" ;;
    kube-scheduler) cmd_kube_scheduler "$@" ;;
    stop) cmd_stop "$@" ;;
    nodes) cmd_nodes "$@" ;;
    paths) cmd_paths "$@" ;;
    *) die "usage: $0 build | start DIR [--with-kube-scheduler] [--kube-scheduler-config FILE] [--with-kube-controller-manager] | kube-scheduler DIR KUBECONFIG [--config FILE] | stop DIR | nodes DIR ... | paths" ;;
  esac
}

main "$@"
