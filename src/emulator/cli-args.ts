/**
 * The emulator CLI's flags, parsed into start options. Kept apart from scripts/emulator.ts so the
 * rules can be tested without spawning a process.
 */
import { parseArgs } from "node:util";
import { GpuTypeSchema, ModelIdSchema } from "../core/gpu";
import type { EmulatorOptions } from "./config";

export const EMULATOR_HELP = `usage: npm run emulator -- --gpu GPU [options]
  --gpu GPU                  ${GpuTypeSchema.options.join(" | ")} (required)
  --model ID                 ${ModelIdSchema.options.join(" | ")} (default ${ModelIdSchema.options[0] ?? ""})
  --port N                   0 picks a free port (default 0)
  --host ADDR                default 127.0.0.1
  --time-scale K             emulated seconds per wall-clock second (default 1)
  --seed S                   seeds the synthetic output text (default 1)
  --sql-error-rate P         share of wrong Text-to-SQL candidates, half of it for revisions (default 0.3)
  --served-model-name NAME   the name requests must use (default the model id)
  --max-model-len N          context limit (default 32768, or the KV capacity if smaller)
  --kv-tokens N              KV capacity in tokens (default: the GPU type's)
  --stream-interval-ms MS    shortest gap between two chunks of one stream (default 0 at time scale 1, else 25)
  --call-log FILE            append one JSON line per generation request: {"callId","atMs","port"}`;

/** The engine's options and the process's own (the call log). */
export type CliOptions = EmulatorOptions & { callLog?: string };

export type CliArgs = { ok: true; help: true } | { ok: true; help: false; options: CliOptions } | { ok: false; error: string };

function num(name: string, raw: string | undefined, check: (n: number) => boolean): number | undefined | string {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return raw.trim() !== "" && Number.isFinite(n) && check(n) ? n : `--${name} must be a valid number (got "${raw}")`;
}

export function parseEmulatorArgs(argv: string[]): CliArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        gpu: { type: "string" },
        model: { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        "time-scale": { type: "string" },
        seed: { type: "string" },
        "sql-error-rate": { type: "string" },
        "served-model-name": { type: "string" },
        "max-model-len": { type: "string" },
        "kv-tokens": { type: "string" },
        "stream-interval-ms": { type: "string" },
        "call-log": { type: "string" },
        help: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    return { ok: false, error: e instanceof Error ? (e.message.split("\n")[0] ?? e.message) : String(e) };
  }
  if (values.help) return { ok: true, help: true };
  const gpu = GpuTypeSchema.safeParse(values.gpu);
  if (!gpu.success) return { ok: false, error: `--gpu must be one of ${GpuTypeSchema.options.join(", ")} (got "${values.gpu ?? ""}")` };
  const model = ModelIdSchema.safeParse(values.model ?? ModelIdSchema.options[0]);
  if (!model.success) return { ok: false, error: `--model must be one of ${ModelIdSchema.options.join(", ")} (got "${values.model ?? ""}")` };
  const positiveInt = (n: number) => Number.isInteger(n) && n > 0;
  const numbers = {
    port: num("port", values.port, (n) => Number.isInteger(n) && n >= 0 && n <= 65_535),
    timeScale: num("time-scale", values["time-scale"], (n) => n > 0),
    seed: num("seed", values.seed, Number.isInteger),
    sqlErrorRate: num("sql-error-rate", values["sql-error-rate"], (n) => n >= 0 && n <= 1),
    maxModelLen: num("max-model-len", values["max-model-len"], positiveInt),
    kvTokens: num("kv-tokens", values["kv-tokens"], positiveInt),
    streamIntervalMs: num("stream-interval-ms", values["stream-interval-ms"], (n) => n >= 0 && n <= 10_000),
  };
  const bad = Object.values(numbers).find((v): v is string => typeof v === "string");
  if (bad !== undefined) return { ok: false, error: bad };
  const given = (v: number | string | undefined): number | undefined => (typeof v === "number" ? v : undefined);
  if (values["call-log"] !== undefined && values["call-log"].trim() === "") return { ok: false, error: "--call-log must name a file" };
  const options: CliOptions = { gpu: gpu.data, model: model.data };
  options.port = given(numbers.port);
  options.timeScale = given(numbers.timeScale);
  options.seed = given(numbers.seed);
  options.sqlErrorRate = given(numbers.sqlErrorRate);
  options.maxModelLen = given(numbers.maxModelLen);
  options.kvTokens = given(numbers.kvTokens);
  options.streamIntervalMs = given(numbers.streamIntervalMs);
  options.host = values.host;
  options.servedModelName = values["served-model-name"];
  if (values["call-log"] !== undefined) options.callLog = values["call-log"];
  return { ok: true, help: false, options };
}
