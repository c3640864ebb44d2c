/**
 * Re-derives the constants fitted from ../shared/data: the cost model's (overhead, prefill, decode)
 * per GPU (src/core/cost-model.ts) and the synthetic generator's log-normal token fits
 * (src/sim/synthetic.ts). `npm run fit:reference`; needs ../shared/data.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TraceEntrySchema } from "../src/core/chess";
import { sortedPercentile } from "../src/core/stats";
import { UsageError, runCli, sharedDataDir } from "./lib/cli";

/** Least squares by the normal equations (3 unknowns at most; Gauss-Jordan). */
function solve(rows: number[][], b: number[]): number[] {
  const n = rows[0]?.length ?? 0;
  const m = Array.from({ length: n }, () => new Array<number>(n + 1).fill(0));
  rows.forEach((r, k) => {
    for (let i = 0; i < n; i++) {
      const mi = m[i] ?? [];
      for (let j = 0; j < n; j++) mi[j] = (mi[j] ?? 0) + (r[i] ?? 0) * (r[j] ?? 0);
      mi[n] = (mi[n] ?? 0) + (r[i] ?? 0) * (b[k] ?? 0);
    }
  });
  for (let i = 0; i < n; i++) {
    const pivot = m[i]?.[i] ?? 1;
    for (let r = 0; r < n; r++) {
      if (r === i) continue;
      const f = (m[r]?.[i] ?? 0) / pivot;
      for (let c = i; c <= n; c++) {
        const row = m[r];
        if (row) row[c] = (row[c] ?? 0) - f * (m[i]?.[c] ?? 0);
      }
    }
  }
  return m.map((r, i) => (r[n] ?? 0) / (r[i] ?? 1));
}

runCli(() => {
  const dir = sharedDataDir();
  if (dir === undefined) throw new UsageError("needs ../shared/data (or HEXFLOW_SHARED_DATA): reference profiles and traces");
  const csv = readFileSync(join(dir, "profiles/llama31-70b-chess/latency-by-pair.csv"), "utf8");
  const rows = csv.trim().split("\n").slice(1).map((l) => l.split(",").map(Number));
  ["A100", "A6000", "L40S"].forEach((gpu, g) => {
    const y = rows.map((r) => r[2 + g] ?? Number.NaN);
    // Relative-error least squares: divide each equation by the measured latency.
    let x = solve(rows.map((r, k) => [1 / (y[k] ?? 1), (r[0] ?? 0) / (y[k] ?? 1), (r[1] ?? 0) / (y[k] ?? 1)]), y.map(() => 1));
    if ((x[0] ?? 0) < 0) x = [0, ...solve(rows.map((r, k) => [(r[0] ?? 0) / (y[k] ?? 1), (r[1] ?? 0) / (y[k] ?? 1)]), y.map(() => 1))];
    const rel = rows.map((r, k) => Math.abs((y[k] ?? 0) - ((x[0] ?? 0) + (x[1] ?? 0) * (r[0] ?? 0) + (x[2] ?? 0) * (r[1] ?? 0))) / (y[k] ?? 1)).sort((a, b) => a - b);
    console.log(`${gpu}: overheadS ${x[0]?.toPrecision(5)} prefillS ${x[1]?.toPrecision(5)} decodeS ${x[2]?.toPrecision(5)}  rel err median ${(100 * sortedPercentile(rel, 0.5)).toFixed(1)}% p90 ${(100 * sortedPercentile(rel, 0.9)).toFixed(1)}%`);
  });
  const tokens = new Map<string, { in: number[]; out: number[] }>();
  for (const f of ["chess-trace1.json", "chess-trace2.json", "chess-trace3.json"]) {
    const entries = TraceEntrySchema.array().parse(JSON.parse(readFileSync(join(dir, "traces", f), "utf8")));
    for (const e of entries) {
      let candidate = 0;
      for (const c of e.Text2SQLRequest) {
        const key = c.step.startsWith("generate_candidate") ? `candidate#${candidate++}` : c.step;
        const t = tokens.get(key) ?? { in: [], out: [] };
        t.in.push(c.input_length);
        t.out.push(c.output_length);
        tokens.set(key, t);
      }
    }
  }
  const fit = (xs: number[]): string => {
    const logs = xs.map(Math.log);
    const mu = logs.reduce((a, b) => a + b, 0) / logs.length;
    const sigma = Math.sqrt(logs.reduce((a, b) => a + (b - mu) ** 2, 0) / logs.length);
    return `{ mu: ${mu.toFixed(4)}, sigma: ${sigma.toFixed(4)}, min: ${Math.min(...xs)}, max: ${Math.max(...xs)} }`;
  };
  for (const [step, t] of tokens) console.log(`${step} (${t.in.length} calls): in ${fit(t.in)} out ${fit(t.out)}`);
});
