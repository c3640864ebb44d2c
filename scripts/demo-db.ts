/**
 * Writes the Velo & Co demo database (a regional bicycle retailer) as a SQLite script for Cloudflare D1:
 * `npx tsx scripts/demo-db.ts [--out data/demo/demo.sql] [--seed 1]`. The output is checked in, so
 * `npm start` loads it without running this; rerun it only after changing scripts/lib/demo-data.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { UsageError, numberArg, runCli } from "./lib/cli";
import { DEFAULT_SEED, generateDemoDatabase } from "./lib/demo-data/generate";

const HELP = `usage: npx tsx scripts/demo-db.ts [options]
  --out PATH   where to write the SQL script (default data/demo/demo.sql)
  --seed S     non-negative integer seed (default ${DEFAULT_SEED})`;

runCli(() => {
  const { values } = parseArgs({
    options: {
      out: { type: "string", default: "data/demo/demo.sql" },
      seed: { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  if (values.out === "") throw new UsageError("--out must be a file path");
  const seed = numberArg("seed", values.seed, DEFAULT_SEED, (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff);
  const db = generateDemoDatabase(seed);
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, db.sql);
  const rows = db.tables.reduce((sum, t) => sum + t.rows, 0);
  process.stdout.write(`wrote ${values.out}: ${db.tables.length} tables, ${rows} rows, ${Buffer.byteLength(db.sql)} bytes (seed ${seed})\n`);
});
