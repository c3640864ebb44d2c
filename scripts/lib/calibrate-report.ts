/** What `npm run calibrate` prints (tables or JSON) and how it registers the fit on a gateway. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Table from "cli-table3";
import { z } from "zod";
import { type BatchSlope, type CostFit, effectivePrefillS } from "../../src/core/cost-fit";
import type { CostCoeffs } from "../../src/core/cost-model";
import { adminFetch } from "./admin-client";
import { ServerError } from "./calibrate-client";
import type { Measurement } from "./calibrate-measure";
import { UsageError } from "./cli";
import { LOCAL_STATE_DIR } from "./credentials";

export interface CalibrationReport {
  url: string;
  model: string;
  /**
   * What to register: t̂ = overheadS + prefillS·in + decodeS·out, seconds on the server's clock, with
   * the true per-token prefill (the engine model adds chunk steps itself; docs/calibration.md).
   */
  cost: CostCoeffs;
  /** The prefill per token a chunk-less t̂ needs to price a lone prompt of `inputTokens` exactly. */
  effectivePrefill: { inputTokens: number; prefillS: number };
  maxNumBatchedTokens: number;
  fit: { medianRelError: number; p90RelError: number; r2: number; requests: number; points: CostFit["points"] };
  timing: Measurement["timing"];
  meanQueueS: number | null;
  /** Informational: the cost model prices a lone call; see docs/calibration.md. */
  batch: (BatchSlope & { contextTokens: number }) | null;
  timeScale: number;
  timeScaleSource: Measurement["timeScaleSource"];
  roundTripMs: number;
  wallS: number;
}

export function buildReport(url: string, model: string, m: Measurement, fit: CostFit, batch: BatchSlope | undefined, typicalInput: number): CalibrationReport {
  const ctx = m.batch.reduce((s, b) => s + b.contextTokens, 0) / Math.max(1, m.batch.length);
  return {
    url,
    model,
    cost: fit.coeffs,
    effectivePrefill: { inputTokens: typicalInput, prefillS: effectivePrefillS(fit.coeffs, typicalInput, fit.maxNumBatchedTokens) },
    maxNumBatchedTokens: fit.maxNumBatchedTokens,
    timing: m.timing,
    meanQueueS: m.meanQueueS ?? null,
    fit: { medianRelError: fit.medianRelError, p90RelError: fit.p90RelError, r2: fit.r2, requests: fit.requests, points: fit.points },
    batch: batch === undefined ? null : { ...batch, contextTokens: Math.round(ctx) },
    timeScale: m.timeScale,
    timeScaleSource: m.timeScaleSource,
    roundTripMs: m.roundTripMs,
    wallS: m.wallS,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const ms = (s: number) => (1000 * s).toFixed(2);

export function printReport(r: CalibrationReport, out: NodeJS.WritableStream = process.stdout): void {
  const points = new Table({
    head: ["input tok", "output tok", "measured s", "fitted s", "rel err", "t̂ s", "t̂ err"],
    colAligns: ["right", "right", "right", "right", "right", "right", "right"],
    style: { head: [] },
  });
  for (const p of r.fit.points) {
    points.push([Math.round(p.inputTokens), Math.round(p.outputTokens), p.measuredS.toFixed(3), p.predictedS.toFixed(3), pct(p.relError), p.costModelS.toFixed(3), pct(p.costModelRelError)]);
  }
  out.write(`${points.toString()}\n`);
  const lines = [
    `server ${r.url}  model ${r.model}  ${r.wallS.toFixed(1)} s wall  ` +
      (r.timing === "server"
        ? `timed by the server's /metrics histograms${r.meanQueueS === null ? "" : ` (mean queue ${ms(r.meanQueueS)} ms)`}`
        : `timed on this machine's clock: time scale ${r.timeScale} (${r.timeScaleSource}), idle round trip ${r.roundTripMs.toFixed(2)} ms`),
    `fit   overheadS ${r.cost.overheadS.toPrecision(4)}  prefillS ${r.cost.prefillS.toPrecision(4)}  decodeS ${r.cost.decodeS.toPrecision(4)}` +
      `  (chunk budget ${r.maxNumBatchedTokens} tokens; "fitted" adds a decode step per extra chunk, t̂ does not)`,
    `effective prefill for a ${r.effectivePrefill.inputTokens}-token prompt: ${r.effectivePrefill.prefillS.toPrecision(4)} s/token (prefill + decode × extra chunk steps / tokens); ` +
      `the registered profile keeps the per-token prefillS`,
    `error per point: median ${pct(r.fit.medianRelError)}  p90 ${pct(r.fit.p90RelError)}  R² ${r.fit.r2.toFixed(4)}  (${r.fit.requests} requests)`,
  ];
  out.write(`${lines.join("\n")}\n`);
  if (r.batch === null) return;
  const levels = new Table({ head: ["concurrency", "inter-token ms", "vs lone"], colAligns: ["right", "right", "right"], style: { head: [] } });
  const lone = r.batch.loneDecodeS;
  for (const l of r.batch.levels) levels.push([l.concurrency, ms(l.interTokenS), `${l.interTokenS >= lone ? "+" : ""}${pct(l.interTokenS / lone - 1)}`]);
  out.write(`${levels.toString()}\n`);
  out.write(
    `batch slope: +${ms(r.batch.slopeS)} ms per token per extra sequence (${pct(r.batch.relativePerSequence)} of a lone decode, ` +
      `at ~${r.batch.contextTokens} tokens of context each); informational, not part of the registered profile\n`,
  );
}

const SavedSchema = z.object({ url: z.string(), adminToken: z.string() });

/** --admin-token, else HEXFLOW_ADMIN_TOKEN, else the token `npm start` saved for that gateway. */
function adminToken(gateway: string, flag: string | undefined): string {
  const given = flag ?? process.env.HEXFLOW_ADMIN_TOKEN;
  if (given !== undefined && given !== "") return given;
  const path = join(LOCAL_STATE_DIR, "credentials.json");
  const saved = existsSync(path) ? SavedSchema.safeParse(JSON.parse(readFileSync(path, "utf8"))) : undefined;
  if (saved?.success === true && saved.data.url.replace(/\/+$/, "") === gateway) return saved.data.adminToken;
  throw new UsageError(`no admin token for ${gateway}: pass --admin-token or set HEXFLOW_ADMIN_TOKEN`);
}

/** PATCH /admin/pools/:pool/instances/:id {cost}: the scheduler prices this server's calls with the fit from now on. */
export async function registerCost(reg: { gateway: string; pool: string; instance: string; adminToken: string | undefined }, cost: CostCoeffs): Promise<void> {
  const token = adminToken(reg.gateway, reg.adminToken);
  const path = `/pools/${encodeURIComponent(reg.pool)}/instances/${encodeURIComponent(reg.instance)}`;
  let res: Response;
  try {
    res = await adminFetch(reg.gateway, token, path, { method: "PATCH", body: JSON.stringify({ cost }) });
  } catch (e) {
    throw new ServerError(`cannot reach the gateway ${reg.gateway}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!res.ok) {
    const text = (await res.text().catch(() => "")).replace(/\s+/g, " ").slice(0, 300);
    throw new ServerError(`registering the profile failed: PATCH ${reg.gateway}/admin${path} answered ${res.status}: ${text}`);
  }
}
