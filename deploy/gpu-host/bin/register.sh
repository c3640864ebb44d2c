#!/usr/bin/env bash
# Registers this host's vLLM server with hexflow's coordinator, with the pool's registration token:
#   PUT $HEXFLOW_GATEWAY/register/pools/$HEXFLOW_POOL/instances/$HEXFLOW_INSTANCE_ID
# Idempotent (the same id is updated), so hexflow-register.service runs it at every boot. It waits for vLLM's
# /health first: an instance registered before its server answers would only fail its first calls.
set -euo pipefail

fail() {
  echo "register: $1" >&2
  exit "${2:-1}"
}

for name in HEXFLOW_GATEWAY HEXFLOW_POOL HEXFLOW_INSTANCE_ID HEXFLOW_INSTANCE_URL HEXFLOW_GPU HEXFLOW_MODEL \
  HEXFLOW_MAX_CONCURRENCY HEXFLOW_KV_TOKENS HEXFLOW_VLLM_PORT; do
  [[ -n "${!name:-}" ]] || fail "$name is not set (see /etc/hexflow/gpu-host.env)" 2
done

# Checked here so the JSON below needs no escaping (the coordinator validates again).
[[ "$HEXFLOW_INSTANCE_ID" =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]] || fail "HEXFLOW_INSTANCE_ID: lowercase letters, digits and dashes" 2
[[ "$HEXFLOW_POOL" =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]] || fail "HEXFLOW_POOL: lowercase letters, digits and dashes" 2
[[ "$HEXFLOW_GPU" =~ ^(A100|H100|L40S|A6000)$ ]] || fail "HEXFLOW_GPU: one of A100, H100, L40S, A6000" 2
[[ "$HEXFLOW_MODEL" =~ ^[a-z0-9.-]+$ ]] || fail "HEXFLOW_MODEL: lowercase letters, digits, dots and dashes" 2
[[ "$HEXFLOW_INSTANCE_URL" =~ ^https?://[^[:space:]\"\\]+$ ]] || fail "HEXFLOW_INSTANCE_URL: an http(s) URL" 2
[[ "$HEXFLOW_GATEWAY" =~ ^https?://[^[:space:]\"\\]+$ ]] || fail "HEXFLOW_GATEWAY: an http(s) URL" 2
[[ "$HEXFLOW_MAX_CONCURRENCY" =~ ^[1-9][0-9]*$ ]] || fail "HEXFLOW_MAX_CONCURRENCY: a positive integer" 2
[[ "$HEXFLOW_KV_TOKENS" =~ ^[1-9][0-9]*$ ]] || fail "HEXFLOW_KV_TOKENS: a positive integer" 2

# systemd's LoadCredential= puts the token under $CREDENTIALS_DIRECTORY; by hand, the token file.
if [[ -n "${CREDENTIALS_DIRECTORY:-}" ]]; then
  token_file="$CREDENTIALS_DIRECTORY/registration-token"
else
  token_file="${HEXFLOW_REGISTRATION_TOKEN_FILE:-/etc/hexflow/registration-token}"
fi
[[ -r "$token_file" ]] || fail "cannot read the registration token at $token_file" 2
token="$(tr -d '[:space:]' <"$token_file")"
[[ "$token" =~ ^hfr_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$ ]] || fail "$token_file does not hold a registration token (hfr_...)" 2

wait_s="${HEXFLOW_REGISTER_WAIT_S:-1800}"
health="http://127.0.0.1:${HEXFLOW_VLLM_PORT}/health"
deadline=$((SECONDS + wait_s))
until curl --silent --fail --output /dev/null --max-time 5 "$health"; do
  (( SECONDS < deadline )) || fail "vLLM did not answer $health within ${wait_s} s"
  sleep "${HEXFLOW_REGISTER_POLL_S:-10}"
done

body="{\"id\":\"$HEXFLOW_INSTANCE_ID\",\"url\":\"$HEXFLOW_INSTANCE_URL\",\"gpu\":\"$HEXFLOW_GPU\",\"model\":\"$HEXFLOW_MODEL\",\"maxConcurrency\":$HEXFLOW_MAX_CONCURRENCY,\"kvTokens\":$HEXFLOW_KV_TOKENS"
if [[ -n "${HEXFLOW_REGISTRATION_EXTRA:-}" ]]; then
  body+=",$HEXFLOW_REGISTRATION_EXTRA"
fi
body+="}"

url="${HEXFLOW_GATEWAY%/}/register/pools/$HEXFLOW_POOL/instances/$HEXFLOW_INSTANCE_ID"
answer="$(mktemp)"
trap 'rm -f "$answer"' EXIT
for attempt in 1 2 3 4 5 6; do
  # The token goes to curl on stdin (-H @-), so it is in no process list.
  status="$(printf 'Authorization: Bearer %s\n' "$token" | curl --silent --show-error --max-time 30 \
    --request PUT --header @- --header 'Content-Type: application/json' --data-binary "$body" \
    --output "$answer" --write-out '%{http_code}' "$url" || true)"
  case "$status" in
    200) echo "register: $HEXFLOW_INSTANCE_ID re-registered in pool $HEXFLOW_POOL"; exit 0 ;;
    201) echo "register: $HEXFLOW_INSTANCE_ID registered in pool $HEXFLOW_POOL"; exit 0 ;;
    401) fail "the gateway refused the registration token (expired, revoked or another pool's): ask an operator for a new one" 3 ;;
    4??) fail "the gateway refused the registration ($status): $(head -c 500 "$answer")" 3 ;;
    *) echo "register: attempt $attempt answered ${status:-nothing}; retrying" >&2 ;;
  esac
  sleep $((attempt * 5))
done
fail "the gateway did not take the registration after 6 attempts"
