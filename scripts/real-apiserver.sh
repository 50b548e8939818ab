#!/usr/bin/env bash
# A real kube-apiserver (and kube-scheduler) for tests: upstream v1.20.2 built
# from Debian's `kubernetes` source package, with etcd from `etcd-server`.
# This script is the single source of the server's flags.
#
#   real-apiserver.sh build                  build once into the cache (idempotent)
#   real-apiserver.sh start DIR [--with-kube-scheduler]
#                                            etcd + kube-apiserver on loopback, state in DIR
#   real-apiserver.sh stop DIR               stop what start started
#   real-apiserver.sh nodes DIR PREFIX COUNT [--labels k=v,...] [--resources cpu=8,memory=32Gi,...]
#                                            create Ready synthetic Nodes PREFIX-1..COUNT
#   real-apiserver.sh paths                  print the binaries' paths
#
# The cache is ${COPSE_CACHE_DIR:-$HOME/.cache/copse}/kubernetes-<version>/,
# outside the checkout, so that later runs (and CI on the same machine) reuse it.
set -euo pipefail

readonly kVersion="1.20.2"
readonly kCacheRoot="${COPSE_CACHE_DIR:-$HOME/.cache/copse}"
readonly kCacheDir="$kCacheRoot/kubernetes-$kVersion"
readonly kStamp="$kCacheDir/.built"
readonly kBinDir="$kCacheDir/bin"
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
  [ -n "$DIR" ] || die "usage: $0 start DIR [--with-kube-scheduler]"
  shift
  local with_scheduler=false
  while (($#)); do
    case "$1" in
      --with-kube-scheduler) with_scheduler=true ;;
      *) die "start: unknown flag $1" ;;
    esac
    shift
  done
  [ -x "$kBinDir/kube-apiserver" ] || die "kube-apiserver is not built: run '$0 build' first"
  command -v etcd >/dev/null || die "etcd not found: run '$0 build' (installs etcd-server)"
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
  spawn etcd etcd --name copse-real --data-dir "$DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "copse-real=http://127.0.0.1:$peer_port" --logger zap --log-level warn
  wait_ok etcd "http://127.0.0.1:$etcd_port/health" 30 -o /dev/null -w ok

  # No controller-manager and no kubelet run: the ServiceAccount plugin would
  # reject pods for want of the tokens it mints, TaintNodesByCondition would
  # taint every new Node not-ready for good, and the endpoint reconciler
  # would publish this host's address for the `kubernetes` Service.
  spawn kube-apiserver "$kBinDir/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" --insecure-port=0 \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    --token-auth-file="$pki/tokens.csv" \
    --authorization-mode=RBAC \
    --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
    --endpoint-reconciler-type=none \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-cluster-ip-range=10.0.0.0/24 \
    --profiling=false --logtostderr=true --v=1

  SERVER_URL="https://127.0.0.1:$api_port"
  wait_ok kube-apiserver "$SERVER_URL/readyz" "$kReadyTimeoutSeconds" \
    --cacert "$pki/ca.crt" -H "Authorization: Bearer $admin_token"
  kubeconfig_for "$DIR/admin.kubeconfig" admin "$admin_token"
  kubeconfig_for "$DIR/copse-scheduler.kubeconfig" copse-scheduler "$scheduler_token"
  kubeconfig_for "$DIR/copse-grove.kubeconfig" copse-grove "$grove_token"
  cat >"$DIR/env" <<EOF
SERVER_URL=$SERVER_URL
ETCD_URL=http://127.0.0.1:$etcd_port
KUBE_APISERVER_VERSION=v$kVersion
EOF

  if $with_scheduler; then
    # kube-scheduler runs with the admin credentials (it is not what is
    # tested), as the only replica: no leader election.
    kubeconfig_for "$DIR/kube-scheduler.kubeconfig" admin "$admin_token"
    local sched_port
    sched_port="$(free_port "$etcd_port" "$peer_port" "$api_port")"
    spawn kube-scheduler "$kBinDir/kube-scheduler" \
      --kubeconfig="$DIR/kube-scheduler.kubeconfig" \
      --authentication-kubeconfig="$DIR/kube-scheduler.kubeconfig" \
      --authorization-kubeconfig="$DIR/kube-scheduler.kubeconfig" \
      --leader-elect=false --bind-address=127.0.0.1 --secure-port="$sched_port" --port=0 \
      --logtostderr=true --v=1
    wait_ok kube-scheduler "https://127.0.0.1:$sched_port/healthz" 60 -k
    echo "KUBE_SCHEDULER_URL=https://127.0.0.1:$sched_port" >>"$DIR/env"
  fi
  log "ready: $SERVER_URL (kubeconfigs in $DIR: admin, copse-scheduler, copse-grove)"
}

cmd_stop() {
  DIR="${1:-}"
  [ -n "$DIR" ] || die "usage: $0 stop DIR"
  [ -d "$DIR" ] || return 0
  local name pid deadline
  # Reverse start order, and only the pids this script recorded.
  for name in kube-scheduler kube-apiserver etcd; do
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
  echo "kube-apiserver=$kBinDir/kube-apiserver"
  echo "kube-scheduler=$kBinDir/kube-scheduler"
  echo "etcd=$(command -v etcd || echo /usr/bin/etcd)"
}

main() {
  local cmd="${1:-}"
  shift || true
  case "$cmd" in
    build) cmd_build "$@" ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    nodes) cmd_nodes "$@" ;;
    paths) cmd_paths "$@" ;;
    *) die "usage: $0 build | start DIR [--with-kube-scheduler] | stop DIR | nodes DIR ... | paths" ;;
  esac
}

main "$@"
