import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { checkLayers, main, scanLayers } from "../../scripts/check-layers.ts";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const script = path.join(repoRoot, "scripts/check-layers.ts");
const tsx = path.join(repoRoot, "node_modules/.bin/tsx");

function write(root: string, rel: string, text: string): void {
  const abs = path.join(root, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, text);
}

function runCli(root: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(tsx, [script, root], { encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("scripts/check-layers", () => {
  let clean: string;
  let dirty: string;

  beforeAll(() => {
    clean = mkdtempSync(path.join(tmpdir(), "hexflow-layers-clean-"));
    write(
      clean,
      "src/core/queue.ts",
      [
        'import type { Workflow } from "./workflow";',
        'import { z } from "zod";',
        "// a comment mentioning import 'node:fs' is not an import",
        'const s = "import { x } from \\"hono\\"";',
        "export const schema = z.object({ id: z.string() });",
        "export type Q = Workflow[];",
        "export { s };",
      ].join("\n"),
    );
    write(clean, "src/core/workflow.ts", "export interface Workflow { id: string }\n");
    write(clean, "src/sim/engine.ts", 'import { schema } from "../core/queue";\nexport const e = schema;\n');
    // Runtime layers may import anything; they are not scanned.
    write(clean, "src/api/routes.ts", 'import { Hono } from "hono";\nexport const app = new Hono();\n');

    dirty = mkdtempSync(path.join(tmpdir(), "hexflow-layers-dirty-"));
    write(dirty, "src/core/ok.ts", "export const ok = 1;\n");
    write(
      dirty,
      "src/core/bad.ts",
      [
        'import { readFileSync } from "node:fs";', // 1
        'import path from "path";', // 2
        'import { DurableObject } from "cloudflare:workers";', // 3
        'import { Hono } from "hono";', // 4
        'export { cors } from "hono/cors";', // 5
        'import type { Env } from "@cloudflare/workers-types";', // 6
        'import { engine } from "../sim/engine";', // 7
        'import { route } from "../api/routes";', // 8
        "export async function load() {", // 9
        '  return import("../../workers/gateway/index");', // 10
        "}", // 11
        'import { randomUUID } from "crypto";', // 12
        'import { x } from "../../scripts/bench";', // 13
        'import type { W } from "wrangler";', // 14
      ].join("\n"),
    );
    write(
      dirty,
      "src/sim/nested/deep.ts",
      [
        'import { spawn } from "child_process";', // 1
        'import { emu } from "../../emulator/server";', // 2
        'import { up } from "../../upstream/client";', // 3
        'import { obj } from "../../objects/workflow";', // 4
        'import { core } from "../../core/ok";', // 5 allowed: sim may use core
        'import { readFile } from "fs/promises";', // 6
      ].join("\n"),
    );
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(() => {
    rmSync(clean, { recursive: true, force: true });
    rmSync(dirty, { recursive: true, force: true });
  });

  it("finds no violation in a clean tree", () => {
    const result = scanLayers(clean);
    expect(result.files).toEqual(["src/core/queue.ts", "src/core/workflow.ts", "src/sim/engine.ts"]);
    expect(result.violations).toEqual([]);
  });

  it("reports every forbidden import with file and line", () => {
    const found = checkLayers(dirty).map((v) => `${v.file}:${v.line} ${v.specifier}`);
    expect(found).toEqual([
      "src/core/bad.ts:1 node:fs",
      "src/core/bad.ts:2 path",
      "src/core/bad.ts:3 cloudflare:workers",
      "src/core/bad.ts:4 hono",
      "src/core/bad.ts:5 hono/cors",
      "src/core/bad.ts:6 @cloudflare/workers-types",
      "src/core/bad.ts:7 ../sim/engine",
      "src/core/bad.ts:8 ../api/routes",
      "src/core/bad.ts:10 ../../workers/gateway/index",
      "src/core/bad.ts:12 crypto",
      "src/core/bad.ts:13 ../../scripts/bench",
      "src/core/bad.ts:14 wrangler",
      "src/sim/nested/deep.ts:1 child_process",
      "src/sim/nested/deep.ts:2 ../../emulator/server",
      "src/sim/nested/deep.ts:3 ../../upstream/client",
      "src/sim/nested/deep.ts:4 ../../objects/workflow",
      "src/sim/nested/deep.ts:6 fs/promises",
    ]);
  });

  it("reports ambient clock, randomness, timers, network and process use in the pure layers", () => {
    const root = mkdtempSync(path.join(tmpdir(), "hexflow-layers-ambient-"));
    write(
      root,
      "src/sim/clock.ts",
      [
        "export const a = Date.now();", // 1
        "export const b = Math.random();", // 2
        "export const c = new Date();", // 3
        "export const d = new Date(0);", // 4 allowed: a fixed date is data
        "setTimeout(() => {}, 1);", // 5
        "export const e = process.env.X;", // 6
        'void fetch("http://x");', // 7
        "export const f = Math.max(1, 2);", // 8 allowed
      ].join("\n"),
    );
    try {
      expect(checkLayers(root).map((v) => `${v.line} ${v.specifier}`)).toEqual([
        "1 Date.now",
        "2 Math.random",
        "3 new Date()",
        "5 setTimeout()",
        "6 process.env",
        "7 fetch()",
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("explains core -> sim as a layering error", () => {
    const v = checkLayers(dirty).find((x) => x.specifier === "../sim/engine");
    expect(v?.reason).toMatch(/core must not depend on src\/sim/);
  });

  it("main() returns 0 and prints 'layers ok (N files)' on a clean tree", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(main([clean])).toBe(0);
    expect(log.mock.calls).toEqual([["layers ok (3 files)"]]);
    expect(error).not.toHaveBeenCalled();
  });

  it("main() returns 1 and prints one line per violation on a dirty tree", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(main([dirty])).toBe(1);
    expect(error).toHaveBeenCalledTimes(17);
    expect(error.mock.calls[6]).toEqual(['src/core/bad.ts:7: imports "../sim/engine" (src/core must not depend on src/sim)']);
    expect(log).not.toHaveBeenCalled();
  });

  it("the CLI (tsx scripts/check-layers.ts <root>) exits 1 on a dirty tree", () => {
    const r = runCli(dirty);
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(17);
    expect(lines[0]).toBe('src/core/bad.ts:1: imports "node:fs" (Node built-in)');
  });
});
