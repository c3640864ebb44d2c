/**
 * vLLM's own per-request timings, read from its Prometheus `/metrics`: a request's time to first
 * token, end-to-end latency and queue time are the growth of the histograms' `_sum` across that one
 * request (whose `_count` must grow by exactly 1). They are measured by the server on its clock, so
 * they carry no network or client-timer jitter, and an emulator reports them in emulated seconds
 * (no time-scale conversion). VLLM_API.md section 4 lists the series.
 */
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { z } from "zod";

export const SERIES = {
  ttft: "vllm:time_to_first_token_seconds",
  e2e: "vllm:e2e_request_latency_seconds",
  queue: "vllm:request_queue_time_seconds",
  itl: "vllm:inter_token_latency_seconds",
  /** Older vLLM (V0) name of the inter-token histogram. */
  tpot: "vllm:time_per_output_token_seconds",
} as const;

export type SeriesKey = keyof typeof SERIES;

/** One histogram's `_sum` and `_count`, summed over the series of the measured model. */
export interface SumCount {
  sum: number;
  count: number;
}

export type Snapshot = Partial<Record<SeriesKey, SumCount>>;

const FamilySchema = z.array(
  z.object({
    name: z.string(),
    metrics: z.array(z.object({ value: z.string().optional(), labels: z.record(z.string(), z.string()).optional() })),
  }),
);

/**
 * The parser flattens a *typed* histogram into one unlabelled entry and drops `_sum`/`_count` once
 * the series carry labels (vLLM labels every series with model_name and engine). Without the
 * `# TYPE` lines each `_sum` and `_count` sample is parsed as its own untyped family, labels and
 * values intact (escaping, NaN and ±Inf handled by the parser).
 */
export function parseSnapshot(text: string, model: string): Snapshot {
  const untyped = text
    .split("\n")
    .filter((l) => !l.startsWith("#"))
    .join("\n");
  const parsed = FamilySchema.safeParse(parsePrometheusTextFormat(untyped));
  if (!parsed.success) return {};
  const families = new Map(parsed.data.map((f) => [f.name, f.metrics]));
  const out: Snapshot = {};
  for (const key of Object.keys(SERIES) as SeriesKey[]) {
    const sum = families.get(`${SERIES[key]}_sum`);
    const count = families.get(`${SERIES[key]}_count`);
    if (sum === undefined || count === undefined) continue;
    out[key] = { sum: total(sum, model), count: total(count, model) };
  }
  return out;
}

/** A server serving several models labels each; one that does not label them serves only this one. */
function total(samples: readonly { value?: string | undefined; labels?: Record<string, string> | undefined }[], model: string): number {
  const ours = samples.some((s) => s.labels?.model_name === model) ? samples.filter((s) => s.labels?.model_name === model) : samples;
  return ours.reduce((acc, s) => acc + Number(s.value ?? Number.NaN), 0);
}

/** Whether a snapshot has what per-request server timing needs. */
export function hasRequestTimings(s: Snapshot): boolean {
  return s.ttft !== undefined && s.e2e !== undefined;
}

export function delta(before: Snapshot, after: Snapshot, key: SeriesKey): SumCount | undefined {
  const a = before[key];
  const b = after[key];
  if (a === undefined || b === undefined) return undefined;
  return { sum: b.sum - a.sum, count: b.count - a.count };
}
