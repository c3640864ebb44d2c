#!/usr/bin/env bash
# Starts vLLM for hexflow with the settings of /etc/hexflow/gpu-host.env, which `npm run gpu-host` renders per
# GPU type. Run by hexflow-vllm.service; `exec` so systemd supervises vLLM itself.
set -euo pipefail

need() {
  if [[ -z "${!1:-}" ]]; then
    echo "vllm-launch: $1 is not set (see /etc/hexflow/gpu-host.env)" >&2
    exit 2
  fi
}
for name in HEXFLOW_VLLM_BIN HEXFLOW_VLLM_MODEL_PATH HEXFLOW_MODEL HEXFLOW_VLLM_PORT HEXFLOW_VLLM_TENSOR_PARALLEL_SIZE \
  HEXFLOW_VLLM_MAX_NUM_SEQS HEXFLOW_VLLM_MAX_MODEL_LEN HEXFLOW_VLLM_MAX_NUM_BATCHED_TOKENS HEXFLOW_VLLM_GPU_MEMORY_UTILIZATION; do
  need "$name"
done

# Fewer visible GPUs than the tensor-parallel size would fail minutes into start-up; say so at once.
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus="$(nvidia-smi --list-gpus | wc -l)"
  if (( gpus < HEXFLOW_VLLM_TENSOR_PARALLEL_SIZE )); then
    echo "vllm-launch: ${gpus} GPUs visible, tensor parallelism needs ${HEXFLOW_VLLM_TENSOR_PARALLEL_SIZE}" >&2
    exit 2
  fi
fi

# Metrics stay on: vLLM serves Prometheus /metrics by default. Requests must not be logged: prompts are tenants'
# data. vLLM 0.10.2 made request logging opt-in (--enable-log-requests) and 0.12 removed --disable-log-requests, so
# passing it there stops start-up; only releases before 0.10.2 get the flag.
logs_requests_by_default() {
  local version major minor patch
  version="$("$HEXFLOW_VLLM_BIN" --version 2>/dev/null | tail -n 1 || true)"
  if [[ ! "$version" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+) ]]; then
    return 1
  fi
  major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}" patch="${BASH_REMATCH[3]}"
  (( major == 0 && (minor < 10 || (minor == 10 && patch < 2)) ))
}

args=(
  serve "$HEXFLOW_VLLM_MODEL_PATH"
  --served-model-name "$HEXFLOW_MODEL"
  --host "${HEXFLOW_VLLM_HOST:-127.0.0.1}"
  --port "$HEXFLOW_VLLM_PORT"
  --dtype bfloat16
  --tensor-parallel-size "$HEXFLOW_VLLM_TENSOR_PARALLEL_SIZE"
  --max-num-seqs "$HEXFLOW_VLLM_MAX_NUM_SEQS"
  --max-model-len "$HEXFLOW_VLLM_MAX_MODEL_LEN"
  --max-num-batched-tokens "$HEXFLOW_VLLM_MAX_NUM_BATCHED_TOKENS"
  --gpu-memory-utilization "$HEXFLOW_VLLM_GPU_MEMORY_UTILIZATION"
)
if logs_requests_by_default; then
  args+=(--disable-log-requests)
fi
if [[ -n "${HEXFLOW_VLLM_EXTRA_ARGS:-}" ]]; then
  read -r -a extra <<<"$HEXFLOW_VLLM_EXTRA_ARGS"
  args+=("${extra[@]}")
fi

exec "$HEXFLOW_VLLM_BIN" "${args[@]}"
