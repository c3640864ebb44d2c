/**
 * `npm run bench:text2sql`: the 30 demo questions as text2sql workflows, end to end on the local stack
 * (emulated GPUs in Text-to-SQL mode, the demo database in local D1), at a time-scaled Poisson rate.
 * Reports what ended how (none may be lost), how many answers are executable SQL, the self-correction
 * rounds they took, and latency; results in bench/results/text2sql-latest.{json,md}.
 *
 * The emulator writes plausible SQL over the linked schema, wrong on purpose at --sql-error-rate: the
 * answers exercise the workflow, they are not a model's accuracy. Gold-result matches are reported for
 * completeness and say nothing about a real model.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { z } from "zod";
import { createRng, exponential } from "../src/core/rng";
import { percentile } from "../src/core/stats";
import { REFERENCE_POOL } from "../src/sim/cluster";
import { localOrigin, numberArg, runCli } from "./lib/cli";
import { DemoQuestionsSchema } from "./lib/demo-data/questions-schema";
import { progressBars } from "./lib/progress";
import { TERMINAL, submitReplay, tenantHeaders, type Gateway } from "./lib/replay";
import { apiKeyFor } from "./lib/credentials";
import { startStack, type Stack } from "./lib/stack";
import { openDemoDatabase, sameResult } from "./lib/text2sql-score";

const ViewSchema = z.object({
  id: z.string(),
  status: z.string(),
  latencyMs: z.number().nullable(),
  sloMet: z.boolean().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  stages: z.array(z.object({ step: z.string(), calls: z.array(z.unknown()) })),
  text2sql: z.object({
    sql: z.string().nullable(),
    rows: z.array(z.unknown()).nullable(),
    selfCorrectionRounds: z.number(),
    candidates: z.array(z.object({ status: z.string().nullable(), reviseRounds: z.number(), attempts: z.array(z.object({ status: z.string() })) })),
    sqlMsTotal: z.number(),
  }),
});
type View = z.infer<typeof ViewSchema>;

runCli(async () => {
  const { values } = parseArgs({
    options: {
      url: { type: "string" },
      "api-key": { type: "string" },
      rate: { type: "string" },
      "time-scale": { type: "string" },
      seed: { type: "string" },
      candidates: { type: "string" },
      "max-rounds": { type: "string" },
      "timeout-s": { type: "string" },
    },
    strict: true,
  });
  const rate = numberArg("rate", values.rate, 0.05);
  const timeScale = numberArg("time-scale", values["time-scale"], 20);
  const seed = numberArg("seed", values.seed, 1, Number.isInteger);
  const candidates = numberArg("candidates", values.candidates, 3, (n) => Number.isInteger(n) && n >= 1 && n <= 8);
  const maxRounds = numberArg("max-rounds", values["max-rounds"], 3, (n) => Number.isInteger(n) && n >= 0 && n <= 10);
  const timeoutMs = numberArg("timeout-s", values["timeout-s"], 900) * 1000;
  const questions = DemoQuestionsSchema.parse(JSON.parse(readFileSync(new URL("../data/demo/questions.json", import.meta.url), "utf8")));

  let stack: Stack | undefined;
  const gw: Gateway = values.url === undefined
    ? (stack = await startStack({ fleet: [...REFERENCE_POOL], timeScale, port: 0, pool: "default", keepState: false, stateDir: ".wrangler/state-bench-text2sql", quiet: true, demoDatabase: true }))
    : { url: localOrigin(values.url), apiKey: apiKeyFor(localOrigin(values.url), values["api-key"]) };
  try {
    const rng = createRng(seed);
    const bars = progressBars();
    const bar = bars.run(`${questions.length} demo questions @ ${rate}/s`, questions.length);
    const ids: string[] = [];
    const started = Date.now();
    for (const q of questions) {
      ids.push(await submitReplay(gw, { kind: "text2sql", database: "demo", question: q.question, candidates, maxRounds }));
      bar.submitted();
      await new Promise((r) => setTimeout(r, (exponential(rng, rate) / timeScale) * 1000));
    }
    const views = new Map<string, View>();
    while (views.size < ids.length && Date.now() - started < timeoutMs) {
      await new Promise((r) => setTimeout(r, 1000));
      for (const id of ids) {
        if (views.has(id)) continue;
        const raw: unknown = await (await fetch(`${gw.url}/v1/workflows/${id}`, { headers: tenantHeaders(gw) })).json();
        const v = ViewSchema.parse(raw);
        if (!TERMINAL.has(v.status)) continue;
        views.set(id, v);
        bar.ended();
      }
    }
    const wallS = (Date.now() - started) / 1000;
    bar.done(`${views.size}/${ids.length} ended`);
    bars.stop();

    const db = await openDemoDatabase();
    const rows = questions.map((q, i) => {
      const v = views.get(ids[i] ?? "");
      const sql = v?.text2sql.sql ?? null;
      return {
        id: q.id, question: q.question, workflow: ids[i], status: v?.status ?? "lost", error: v?.error?.code ?? null,
        rounds: v?.text2sql.selfCorrectionRounds ?? null,
        revisedCandidates: v?.text2sql.candidates.filter((c) => c.reviseRounds > 0).length ?? null,
        fixedByRevise: v?.text2sql.candidates.filter((c) => c.reviseRounds > 0 && c.status !== "error").length ?? null,
        calls: v?.stages.reduce((n, s) => n + s.calls.length, 0) ?? null,
        latencyS: v?.latencyMs === null || v === undefined ? null : v.latencyMs / 1000, sloMet: v?.sloMet ?? null,
        sql, rowCount: v?.text2sql.rows?.length ?? null, matchesGold: sql === null ? false : sameResult(db, sql, q.gold_sql),
        sqlMs: v?.text2sql.sqlMsTotal ?? null,
      };
    });
    const count = (p: (r: (typeof rows)[number]) => boolean) => rows.filter(p).length;
    const lat = rows.flatMap((r) => (r.latencyS === null ? [] : [r.latencyS]));
    const roundsHist = new Map<number, number>();
    for (const r of rows) if (r.rounds !== null) roundsHist.set(r.rounds, (roundsHist.get(r.rounds) ?? 0) + 1);
    const summary = {
      submitted: ids.length, succeeded: count((r) => r.status === "succeeded"), failed: count((r) => r.status === "failed"),
      lost: count((r) => r.status === "lost"), executableSql: count((r) => r.sql !== null),
      withSelfCorrection: count((r) => (r.rounds ?? 0) > 0),
      roundsHistogram: Object.fromEntries([...roundsHist].sort((a, b) => a[0] - b[0])),
      revisedCandidates: rows.reduce((n, r) => n + (r.revisedCandidates ?? 0), 0),
      fixedByRevise: rows.reduce((n, r) => n + (r.fixedByRevise ?? 0), 0),
      failures: Object.fromEntries([...new Set(rows.flatMap((r) => (r.error === null ? [] : [r.error])))].map((c) => [c, count((r) => r.error === c)])),
      matchesGold: count((r) => r.matchesGold), sloMet: count((r) => r.sloMet === true),
      p50S: percentile(lat, 0.5), p95S: percentile(lat, 0.95), wallS,
    };
    const config = { rate, timeScale, seed, candidates, maxRounds, fleet: stack === undefined ? "attached" : REFERENCE_POOL.join(",") };
    mkdirSync("bench/results", { recursive: true });
    writeFileSync("bench/results/text2sql-latest.json", `${JSON.stringify({ config, summary, rows }, null, 2)}\n`);
    const md = [
      `# text2sql: the 30 demo questions end to end`, "", `config: ${JSON.stringify(config)}`, "",
      "| question | status | rounds | revised → fixed | calls | latency s | SLO | rows | gold |", "|---|---|---|---|---|---|---|---|---|",
      ...rows.map((r) => `| ${r.id} | ${r.status}${r.error ? ` (${r.error})` : ""} | ${r.rounds ?? "-"} | ${r.revisedCandidates ?? "-"} → ${r.fixedByRevise ?? "-"} | ${r.calls ?? "-"} | ${r.latencyS?.toFixed(1) ?? "-"} | ${r.sloMet ? "met" : "missed"} | ${r.rowCount ?? "-"} | ${r.matchesGold ? "yes" : "no"} |`),
      "", "```json", JSON.stringify(summary, null, 2), "```", "",
    ].join("\n");
    writeFileSync("bench/results/text2sql-latest.md", md);
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\nwritten: bench/results/text2sql-latest.{json,md}\n`);
    if (summary.lost > 0) process.exitCode = 1;
  } finally {
    await stack?.stop();
  }
});
