/**
 * `npm run traces:export -- --from <ISO | epoch ms> --to <...> [--pool default] [--out file.json]
 *   [--url http://127.0.0.1:8787] [--admin-token T | env HEXFLOW_ADMIN_TOKEN] [--limit 10000]`
 *
 * Exports the workflows that arrived in [from, to) from the gateway's D1 traces (GET /admin/traces) as a
 * reference trace file the simulator loads (`npm run sim -- --trace file.json`), and their arrival times
 * in `<file>.arrivals.json` (pool-clock seconds from the first arrival) so a replay can keep the arrival process.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { z } from "zod";
import { TraceEntrySchema } from "../src/core/chess";
import { parseTrace } from "../src/sim/trace";
import { UsageError, numberArg, runCli } from "./lib/cli";

const ExportSchema = z.object({
  pool: z.string(),
  fromMs: z.number(),
  toMs: z.number(),
  workflows: z.number(),
  truncated: z.boolean(),
  skipped: z.number(),
  trace: z.array(TraceEntrySchema),
  arrivals_s: z.array(z.number()),
  workflow_ids: z.array(z.string()),
});
const ErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The admin token travels with the request: plain HTTP only to this machine. */
function gatewayOrigin(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url is not a URL: ${raw}`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK.has(url.hostname))) throw new UsageError(`--url must be https, or http on this machine (got ${url.origin})`);
  return url.origin;
}

function instant(name: string, raw: string | undefined): string {
  if (raw === undefined) throw new UsageError(`--${name} is required (an ISO date or epoch milliseconds)`);
  const ms = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isFinite(ms)) throw new UsageError(`--${name} must be an ISO date or epoch milliseconds (got "${raw}")`);
  return String(ms);
}

runCli(async () => {
  const { values } = parseArgs({
    options: {
      from: { type: "string" },
      to: { type: "string" },
      pool: { type: "string", default: "default" },
      out: { type: "string", default: "trace-export.json" },
      url: { type: "string", default: "http://127.0.0.1:8787" },
      "admin-token": { type: "string" },
      limit: { type: "string" },
    },
    strict: true,
  });
  const from = instant("from", values.from);
  const to = instant("to", values.to);
  if (Number(from) >= Number(to)) throw new UsageError("--from must be before --to");
  const limit = numberArg("limit", values.limit, 10_000, (n) => Number.isInteger(n) && n > 0 && n <= 50_000);
  const token = values["admin-token"] ?? process.env.HEXFLOW_ADMIN_TOKEN;
  if (token === undefined || token === "") throw new UsageError("an admin token is required: --admin-token T or HEXFLOW_ADMIN_TOKEN (`npm start` prints it)");
  const origin = gatewayOrigin(values.url);
  const query = new URLSearchParams({ pool: values.pool, from, to, limit: String(limit), format: "reference" });
  let res: Response;
  try {
    res = await fetch(`${origin}/admin/traces?${query}`, { headers: { authorization: `Bearer ${token}` } });
  } catch {
    throw new UsageError(`no hexflow at ${origin}: run \`npm start\` first (or pass --url)`);
  }
  const body: unknown = await res.json().catch(() => undefined);
  if (!res.ok) {
    const e = ErrorSchema.safeParse(body);
    throw new UsageError(`the gateway answered ${res.status}: ${e.success ? `${e.data.error.code}: ${e.data.error.message}` : "not a hexflow error"}`);
  }
  const data = ExportSchema.parse(body);
  if (data.trace.length === 0) throw new UsageError(`no replayable workflow arrived in pool "${data.pool}" in that window (${data.workflows} found, ${data.skipped} not replayable)`);
  const text = `${JSON.stringify(data.trace, null, 2)}\n`;
  const check = parseTrace(text, values.out);
  if (!check.ok) throw new Error(`the export does not load as a trace: ${check.error}`);
  const sidecar = values.out.replace(/\.json$/, "") + ".arrivals.json";
  writeFileSync(values.out, text);
  writeFileSync(sidecar, `${JSON.stringify({ pool: data.pool, fromMs: data.fromMs, toMs: data.toMs, arrivals_s: data.arrivals_s, workflow_ids: data.workflow_ids }, null, 2)}\n`);
  process.stdout.write(
    `wrote ${data.trace.length} workflows to ${values.out} and their arrivals to ${sidecar}` +
      `${data.skipped > 0 ? ` (${data.skipped} not replayable: failed, cancelled or without output lengths)` : ""}${data.truncated ? ` (truncated at --limit ${limit})` : ""}\n`,
  );
});
