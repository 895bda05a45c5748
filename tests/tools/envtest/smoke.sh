#!/usr/bin/env bash
# Smoke test + reference for the e2e harness: start etcd and kube-apiserver (built by build.sh) on free
# loopback ports, wait for /readyz, make a few requests with an admin token, then stop both and clean up.
#
#   tests/tools/envtest/smoke.sh [BIN_DIR]     # BIN_DIR defaults to the last line printed by build.sh
#
# Env: MCO_ENVTEST_START_TIMEOUT (seconds for etcd and for the apiserver to get ready, default 120).
# Only 127.0.0.1 is used. Only the two processes this script starts are ever signalled.
set -Eeuo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
START_TIMEOUT="${MCO_ENVTEST_START_TIMEOUT:-120}"
STOP_TIMEOUT=20

BIN_DIR="${1:-}"
if [[ -z "$BIN_DIR" ]]; then
  BIN_DIR="$("$HERE/build.sh" | tail -n1)"
fi
for b in etcd kube-apiserver; do
  [[ -x "$BIN_DIR/$b" ]] || { echo "smoke.sh: ERROR: $BIN_DIR/$b not found (run build.sh)" >&2; exit 1; }
done
for t in openssl curl; do
  command -v "$t" >/dev/null || { echo "smoke.sh: ERROR: $t is required" >&2; exit 1; }
done

D="$(mktemp -d "${TMPDIR:-/tmp}/mco-envtest.XXXXXX")"
ETCD_PID=""
APISERVER_PID=""
OK=0

now_ms() { date +%s%3N; }
log() { echo ">> $*" >&2; }
# alive PID: running and not a zombie (kill -0 alone succeeds on an exited, not yet reaped child).
alive() {
  local state=""
  kill -0 "$1" 2>/dev/null || return 1
  read -r _ _ state _ <"/proc/$1/stat" 2>/dev/null || return 1
  [[ "$state" != Z ]]
}

# stop PID NAME: SIGTERM our own child, wait (bounded), then SIGKILL it if it is still there.
stop() {
  local pid="$1" name="$2" i
  [[ -n "$pid" ]] || return 0
  alive "$pid" || { wait "$pid" 2>/dev/null || true; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    log "$name (pid $pid) did not stop in ${STOP_TIMEOUT}s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  log "$name stopped after $((i * 100)) ms"
}

cleanup() {
  local rc=$?
  set +e
  stop "$APISERVER_PID" kube-apiserver
  stop "$ETCD_PID" etcd
  if [[ "$OK" != 1 ]]; then
    echo "smoke.sh: FAILED (exit $rc); logs follow" >&2
    for f in "$D/etcd.log" "$D/kube-apiserver.log"; do
      [[ -f "$f" ]] && { echo "===== $f (last 80 lines) =====" >&2; tail -n 80 "$f" >&2; }
    done
  fi
  rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "smoke.sh: ERROR: $*" >&2; exit 1; }

# A free TCP port on 127.0.0.1: random pick, rejected if something answers there. (The Rust harness binds
# 127.0.0.1:0 instead.) Small race window, acceptable for a smoke test.
USED_PORTS=" "
free_port() {
  local p i
  for ((i = 0; i < 200; i++)); do
    p=$((20000 + RANDOM % 40000))
    [[ "$USED_PORTS" == *" $p "* ]] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      USED_PORTS+="$p "
      echo "$p"
      return 0
    fi
  done
  return 1
}

# wait_http NAME URL TIMEOUT_S CURL_ARGS...: poll until HTTP 200 with body "ok" (or the process died).
wait_http() {
  local name="$1" url="$2" timeout="$3" pid="$4"; shift 4
  local deadline=$(($(date +%s) + timeout)) body
  while (($(date +%s) < deadline)); do
    alive "$pid" || fail "$name exited while starting"
    if body="$(curl -sS --max-time 2 "$@" "$url" 2>/dev/null)" && [[ "$body" == "ok" || "$body" == *'"health":"true"'* ]]; then
      return 0
    fi
    sleep 0.1
  done
  fail "$name not ready at $url after ${timeout}s (last body: ${body:-none})"
}

ETCD_CLIENT_PORT="$(free_port)" || fail "no free port"
ETCD_PEER_PORT="$(free_port)" || fail "no free port"
APISERVER_PORT="$(free_port)" || fail "no free port"
ETCD_URL="http://127.0.0.1:${ETCD_CLIENT_PORT}"
APISERVER_URL="https://127.0.0.1:${APISERVER_PORT}"

# ---- credentials ---------------------------------------------------------------------------------------
# Static token file: token,user,uid,"group1,group2". system:masters bypasses RBAC.
ADMIN_TOKEN="$(openssl rand -hex 32)"
echo "${ADMIN_TOKEN},admin,admin,\"system:masters\"" >"$D/tokens.csv"
# Service-account signing key (one RSA key serves as both the signing and the verification key file).
openssl genrsa -out "$D/sa.key" 2048 2>/dev/null || fail "openssl genrsa failed"
# No serving cert is pre-made: kube-apiserver generates one into --cert-dir (apiserver.crt = leaf + its own
# self-signed CA, apiserver.key). SANs: 127.0.0.1, 10.0.0.1, kubernetes{,.default,.default.svc}; NOT
# "localhost", so clients must use https://127.0.0.1:PORT and trust $D/certs/apiserver.crt.
mkdir -p "$D/certs" && mkdir -m 0700 "$D/etcd"

# ---- etcd ----------------------------------------------------------------------------------------------
ETCD_ARGS=(
  --name=default
  --data-dir="$D/etcd"
  --listen-client-urls="$ETCD_URL"
  --advertise-client-urls="$ETCD_URL"
  --listen-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}"
  --initial-advertise-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}"
  --initial-cluster="default=http://127.0.0.1:${ETCD_PEER_PORT}"
  --unsafe-no-fsync=true
)
T0="$(now_ms)"
"$BIN_DIR/etcd" "${ETCD_ARGS[@]}" >"$D/etcd.log" 2>&1 &
ETCD_PID=$!
log "etcd pid $ETCD_PID on $ETCD_URL"
wait_http etcd "$ETCD_URL/health" "$START_TIMEOUT" "$ETCD_PID"
T_ETCD="$(now_ms)"
log "etcd healthy after $((T_ETCD - T0)) ms"

# ---- kube-apiserver ------------------------------------------------------------------------------------
APISERVER_ARGS=(
  --etcd-servers="$ETCD_URL"
  --bind-address=127.0.0.1
  --advertise-address=127.0.0.1
  --secure-port="$APISERVER_PORT"
  --cert-dir="$D/certs"
  --service-cluster-ip-range=10.0.0.0/24
  --allow-privileged=true
  --authorization-mode=RBAC
  --token-auth-file="$D/tokens.csv"
  --service-account-issuer="$APISERVER_URL"
  --service-account-key-file="$D/sa.key"
  --service-account-signing-key-file="$D/sa.key"
  --disable-admission-plugins=ServiceAccount
  # The "kubernetes" Service's Endpoints may not point at 127.0.0.1 (validation rejects loopback), so the
  # default lease reconciler would log an error every 10s; tests do not need that Endpoints object.
  --endpoint-reconciler-type=none
)
T1="$(now_ms)"
"$BIN_DIR/kube-apiserver" "${APISERVER_ARGS[@]}" >"$D/kube-apiserver.log" 2>&1 &
APISERVER_PID=$!
log "kube-apiserver pid $APISERVER_PID on $APISERVER_URL"

AUTH=(-H "Authorization: Bearer ${ADMIN_TOKEN}")
# The cert file appears only once the apiserver has generated it: poll insecurely until then.
wait_http kube-apiserver "$APISERVER_URL/readyz" "$START_TIMEOUT" "$APISERVER_PID" -k "${AUTH[@]}"
T_READY="$(now_ms)"
log "kube-apiserver ready after $((T_READY - T1)) ms (total incl. etcd: $((T_READY - T0)) ms)"

# ---- requests (TLS verified against the self-signed cert) ---------------------------------------------
CURL=(curl -sS --fail-with-body --max-time 10 --cacert "$D/certs/apiserver.crt" "${AUTH[@]}")

log "serving cert generated by kube-apiserver in --cert-dir:"
openssl crl2pkcs7 -nocrl -certfile "$D/certs/apiserver.crt" | openssl pkcs7 -print_certs -noout >&2
openssl x509 -in "$D/certs/apiserver.crt" -noout -ext subjectAltName,basicConstraints >&2

log "GET /version"
"${CURL[@]}" "$APISERVER_URL/version" | tr -d '\n ' >&2; echo >&2

# Namespace "default" is created by a bootstrap controller shortly after /readyz: wait (bounded).
deadline=$(($(date +%s) + 30))
until "${CURL[@]}" -o /dev/null "$APISERVER_URL/api/v1/namespaces/default" 2>/dev/null; do
  (($(date +%s) < deadline)) || fail "namespace default did not appear within 30s"
  sleep 0.2
done
T_DEFAULT_NS="$(now_ms)"

log "GET /api/v1/namespaces"
NS_JSON="$("${CURL[@]}" "$APISERVER_URL/api/v1/namespaces")"
NAMES="$(grep -o '"name": *"[^"]*"' <<<"$NS_JSON" | sed 's/.*"\([^"]*\)"$/\1/' | sort | tr '\n' ' ')"
echo "namespaces: $NAMES" >&2
[[ " $NAMES" == *" default "* && " $NAMES" == *" kube-system "* ]] || fail "unexpected namespace list: $NAMES"

log "POST /api/v1/namespaces (create smoke-test)"
"${CURL[@]}" -o /dev/null -X POST -H 'Content-Type: application/json' \
  -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"smoke-test"}}' \
  "$APISERVER_URL/api/v1/namespaces" || fail "creating a namespace failed"

log "POST selfsubjectreviews (who am I)"
"${CURL[@]}" -X POST -H 'Content-Type: application/json' \
  -d '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' \
  "$APISERVER_URL/apis/authentication.k8s.io/v1/selfsubjectreviews" >"$D/ssr.json" || fail "SelfSubjectReview failed"
USER_INFO="$(tr -d ' \n' <"$D/ssr.json" | grep -o '"userInfo":{[^}]*}' || true)"
echo "$USER_INFO" >&2
[[ "$USER_INFO" == *'"username":"admin"'* && "$USER_INFO" == *'"system:masters"'* ]] \
  || fail "SelfSubjectReview: not admin/system:masters: $(cat "$D/ssr.json")"

log "anonymous GET /api/v1/namespaces must be forbidden (RBAC on)"
CODE="$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$D/certs/apiserver.crt" "$APISERVER_URL/api/v1/namespaces")"
[[ "$CODE" == 403 ]] || fail "anonymous list returned HTTP $CODE, expected 403"

echo "etcd_ready_ms=$((T_ETCD - T0)) apiserver_ready_ms=$((T_READY - T1)) total_ready_ms=$((T_READY - T0)) default_ns_ms=$((T_DEFAULT_NS - T0))"
OK=1
log "smoke test passed"
