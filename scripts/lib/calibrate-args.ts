/** `npm run calibrate` flags, parsed and checked; every mistake is a one-line UsageError. */
import { parseArgs } from "node:util";
import { UsageError, listArg, numberArg } from "./cli";

export const CALIBRATE_HELP = `usage: npm run calibrate -- --url URL --model NAME [options]
  --url URL               the vLLM server (or emulator), e.g. http://10.0.0.5:8000
  --model NAME            the served model name requests must use
  --inputs LIST           prompt lengths in tokens (default 128,512,1024,2048,4096,8192)
  --outputs LIST          output lengths in tokens (default 16,64,256)
  --reps N                repetitions per grid point and per concurrency level (default 3)
  --warmup N              warm-up requests before measuring (default 2)
  --concurrency LIST      concurrency levels of the batch-slope sweep (default 1,2,4,8,16; "1" skips it)
  --batch-input N         prompt tokens of the sweep's request (default 512)
  --batch-output N        output tokens of the sweep's request (default 256)
  --timing MODE           auto (default): the server's own per-request timings from its /metrics
                          histograms when it exports them, else wall; server: require them; wall:
                          time each request on this machine's clock
  --max-num-batched-tokens N  the server's chunked-prefill budget per engine step (default 2048,
                          vLLM's on A100/L40S/A6000; 8192 on H100)
  --typical-input N       prompt length at which to report the effective prefill (default 4096)
  --time-scale K          server seconds per wall second, for wall timing (default: the emulator's
                          hexflow_emulator_time_scale from /metrics, else 1)
  --timeout-s S           per-request timeout in wall seconds (default 600)
  --api-key KEY           Authorization for the server, if it has --api-key (or VLLM_API_KEY)
  --json                  print the fit as JSON only
  --register              set the fit as the instance's cost profile on a gateway:
    --gateway URL --pool P --instance ID [--admin-token T]   (or HEXFLOW_ADMIN_TOKEN, or npm start's credentials)`;

export const TIMING_MODES = ["auto", "server", "wall"] as const;
export type TimingMode = (typeof TIMING_MODES)[number];

function timingMode(raw: string | undefined): TimingMode {
  const mode = TIMING_MODES.find((m) => m === (raw ?? "auto"));
  if (mode === undefined) throw new UsageError(`--timing must be one of ${TIMING_MODES.join(", ")}: ${raw ?? ""}`);
  return mode;
}

export interface CalibrateArgs {
  url: string;
  model: string;
  inputs: number[];
  outputs: number[];
  reps: number;
  warmup: number;
  concurrency: number[];
  batchInput: number;
  batchOutput: number;
  timeScale: number | undefined;
  timing: TimingMode;
  maxNumBatchedTokens: number;
  typicalInput: number;
  timeoutS: number;
  apiKey: string | undefined;
  json: boolean;
  register: { gateway: string; pool: string; instance: string; adminToken: string | undefined } | undefined;
}

const isPositiveInt = (n: number) => Number.isInteger(n) && n > 0;

function intList(name: string, raw: string | undefined, fallback: number[]): number[] {
  if (raw === undefined) return fallback;
  return listArg(name, raw).map((x) => numberArg(name, x, 0, isPositiveInt));
}

function url(name: string, raw: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol");
    return raw.replace(/\/+$/, "");
  } catch {
    throw new UsageError(`--${name} is not an http(s) URL: ${raw}`);
  }
}

/** Returns undefined for --help. */
export function parseCalibrateArgs(argv: string[]): CalibrateArgs | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: "string" },
      model: { type: "string" },
      inputs: { type: "string" },
      outputs: { type: "string" },
      reps: { type: "string" },
      warmup: { type: "string" },
      concurrency: { type: "string" },
      "batch-input": { type: "string" },
      "batch-output": { type: "string" },
      "time-scale": { type: "string" },
      timing: { type: "string" },
      "max-num-batched-tokens": { type: "string" },
      "typical-input": { type: "string" },
      "timeout-s": { type: "string" },
      "api-key": { type: "string" },
      json: { type: "boolean", default: false },
      register: { type: "boolean", default: false },
      gateway: { type: "string" },
      pool: { type: "string" },
      instance: { type: "string" },
      "admin-token": { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return undefined;
  if (values.url === undefined) throw new UsageError("--url is required (the vLLM server to measure)");
  if (values.model === undefined || values.model.trim() === "") throw new UsageError("--model is required (the served model name)");
  const registerFlags = [values.gateway, values.pool, values.instance, values["admin-token"]];
  if (!values.register && registerFlags.some((v) => v !== undefined)) throw new UsageError("--gateway, --pool, --instance and --admin-token go with --register");
  let register: CalibrateArgs["register"];
  if (values.register) {
    if (values.gateway === undefined || values.pool === undefined || values.instance === undefined) {
      throw new UsageError("--register needs --gateway URL --pool P --instance ID");
    }
    register = { gateway: url("gateway", values.gateway), pool: values.pool, instance: values.instance, adminToken: values["admin-token"] };
  }
  const outputs = intList("outputs", values.outputs, [16, 64, 256]);
  if (!outputs.some((o) => o >= 2)) throw new UsageError("--outputs needs a length of at least 2 (decode is timed between tokens)");
  const concurrency = intList("concurrency", values.concurrency, [1, 2, 4, 8, 16]);
  const inputs = intList("inputs", values.inputs, [128, 512, 1024, 2048, 4096, 8192]);
  if (new Set(inputs).size < 2) throw new UsageError("--inputs needs at least 2 different lengths (prefill is a slope)");
  if (inputs.some((i) => i < 16)) throw new UsageError("--inputs lengths must be at least 16 tokens");
  return {
    url: url("url", values.url),
    model: values.model,
    inputs,
    outputs,
    reps: numberArg("reps", values.reps, 3, isPositiveInt),
    warmup: numberArg("warmup", values.warmup, 2, (n) => Number.isInteger(n) && n >= 0),
    concurrency: [...new Set(concurrency)].sort((a, b) => a - b),
    batchInput: numberArg("batch-input", values["batch-input"], 512, (n) => isPositiveInt(n) && n >= 16),
    batchOutput: numberArg("batch-output", values["batch-output"], 256, (n) => isPositiveInt(n) && n >= 2),
    timeScale: values["time-scale"] === undefined ? undefined : numberArg("time-scale", values["time-scale"], 1),
    timing: timingMode(values.timing),
    maxNumBatchedTokens: numberArg("max-num-batched-tokens", values["max-num-batched-tokens"], 2048, isPositiveInt),
    typicalInput: numberArg("typical-input", values["typical-input"], 4096, isPositiveInt),
    timeoutS: numberArg("timeout-s", values["timeout-s"], 600),
    apiKey: values["api-key"] ?? process.env.VLLM_API_KEY,
    json: values.json,
    register,
  };
}
