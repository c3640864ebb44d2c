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

# Metrics stay on: vLLM serves Prometheus /metrics by default. Requests are not logged: prompts are tenants' data.
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
  --disable-log-requests
)
if [[ -n "${HEXFLOW_VLLM_EXTRA_ARGS:-}" ]]; then
  read -r -a extra <<<"$HEXFLOW_VLLM_EXTRA_ARGS"
  args+=("${extra[@]}")
fi

exec "$HEXFLOW_VLLM_BIN" "${args[@]}"
