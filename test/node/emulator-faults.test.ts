import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { startEmulator, type EmulatorHandle } from "../../src/emulator";
import { ErrorBodySchema, post } from "./emulator-client";

const open: EmulatorHandle[] = [];
async function emulator(callLog?: string): Promise<EmulatorHandle> {
  const e = await startEmulator({ gpu: "L40S", timeScale: 200, ...(callLog === undefined ? {} : { callLog }) });
  open.push(e);
  return e;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close()));
});

const call = (e: EmulatorHandle, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  post(`${e.url}/v1/completions`, { prompt: "p", max_tokens: 3 }, headers, signal);

describe("emulator fault injection", () => {
  it.each([
    ["500", 500, "InternalServerError"],
    ["503", 503, "ServiceUnavailableError"],
  ] as const)("x-hexflow-fault: %s answers with that status and vLLM's error body", async (value, status, type) => {
    const e = await emulator();
    const res = await call(e, { "x-hexflow-fault": value });
    expect(res.status).toBe(status);
    expect(ErrorBodySchema.parse(await res.json()).error).toMatchObject({ code: status, type, param: null });
    expect((await call(e)).status).toBe(200);
  });

  it("x-hexflow-fault: hang never answers, while the server keeps serving others", async () => {
    const e = await emulator();
    const hung = call(e, { "x-hexflow-fault": "hang" }, AbortSignal.timeout(150)).then(
      () => "answered",
      (err: unknown) => (err instanceof Error ? err.name : "error"),
    );
    expect((await call(e)).status).toBe(200);
    expect(await hung).toBe("TimeoutError");
    expect((await fetch(`${e.url}/health`)).status).toBe(200);
  });

  it("x-hexflow-fault: die cuts open connections and closes the listener", async () => {
    const e = await emulator();
    // Settled into a value at once: the cut may land before the assertions below look at it.
    const streaming = post(`${e.url}/v1/completions`, { prompt: "p", max_tokens: 2000, stream: true })
      .then((r) => r.text())
      .then(
        () => "ended normally",
        () => "cut",
      );
    await new Promise((r) => setTimeout(r, 20));
    await expect(call(e, { "x-hexflow-fault": "die" })).rejects.toThrow();
    expect(await streaming).toBe("cut");
    await expect(fetch(`${e.url}/health`)).rejects.toThrow();
  });

  it("rejects an unknown fault value with 400", async () => {
    const e = await emulator();
    expect((await call(e, { "x-hexflow-fault": "explode" })).status).toBe(400);
  });

  it("POST /admin/fault applies a mode to the next n requests, then stops", async () => {
    const e = await emulator();
    const set = await post(`${e.url}/admin/fault`, { mode: "error503", count: 2 });
    expect(await set.json()).toEqual({ mode: "error503", remaining: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(e)).status);
    expect(statuses).toEqual([503, 503, 200]);
    // Without a count it lasts until switched off.
    await post(`${e.url}/admin/fault`, { mode: "error500" });
    expect([(await call(e)).status, (await call(e)).status]).toEqual([500, 500]);
    await post(`${e.url}/admin/fault`, { mode: "none" });
    expect((await call(e)).status).toBe(200);
    expect((await post(`${e.url}/admin/fault`, { mode: "melt" })).status).toBe(400);
  });

  it("POST /admin/fault hang and die act like the headers", async () => {
    const e = await emulator();
    await post(`${e.url}/admin/fault`, { mode: "hang", count: 1 });
    await expect(call(e, {}, AbortSignal.timeout(100))).rejects.toThrow();
    expect((await call(e)).status).toBe(200);
    await post(`${e.url}/admin/fault`, { mode: "die" });
    await expect(call(e)).rejects.toThrow();
    await expect(fetch(`${e.url}/health`)).rejects.toThrow();
  });

  it("x-hexflow-fault: drop starts a stream, cuts it without [DONE], and the server keeps serving", async () => {
    const e = await emulator();
    const res = await post(`${e.url}/v1/completions`, { prompt: "p", max_tokens: 60, stream: true }, { "x-hexflow-fault": "drop" });
    expect(res.status).toBe(200);
    const reader = res.body?.getReader();
    if (reader === undefined) throw new Error("no body");
    let text = "";
    const outcome = await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return "ended";
        text += Buffer.from(value).toString();
      }
    })().catch(() => "cut");
    expect(outcome).toBe("cut");
    expect(text).toMatch(/^data: \{/);
    expect(text).not.toContain("[DONE]");
    expect(text).not.toContain('"finish_reason":"length"');
    expect((await call(e)).status).toBe(200);
    expect((await fetch(`${e.url}/health`)).status).toBe(200);
  });

  it("POST /admin/fault drop cuts the next n answers, streamed or not, before their end", async () => {
    const e = await emulator();
    expect(await (await post(`${e.url}/admin/fault`, { mode: "drop", count: 2 })).json()).toEqual({ mode: "drop", remaining: 2 });
    // Not streamed: the 200 and its headers arrive, the body is cut half-way.
    const plain = await call(e);
    expect(plain.status).toBe(200);
    await expect(plain.text()).rejects.toThrow();
    const streamed = await post(`${e.url}/v1/completions`, { prompt: "p", max_tokens: 30, stream: true });
    await expect(streamed.text()).rejects.toThrow();
    expect(await (await call(e)).json()).toMatchObject({ choices: [{ finish_reason: "length" }] });
  });

  it("--call-log gets one line per generation request, before faults apply", async () => {
    const log = join(mkdtempSync(join(tmpdir(), "hexflow-call-log-")), "calls.jsonl");
    const e = await emulator(log);
    await call(e, { "x-hexflow-call-id": "wf-1:0:0" });
    await call(e, { "x-hexflow-call-id": "wf-1:0:0", "x-hexflow-fault": "503" });
    await call(e);
    await fetch(`${e.url}/health`);
    const lines = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { callId: string | null; atMs: number; port: number });
    expect(lines.map((l) => l.callId)).toEqual(["wf-1:0:0", "wf-1:0:0", null]);
    expect(lines.every((l) => l.port === e.port && l.atMs > 0)).toBe(true);
  });

  it("POST /admin/health turns /health to 503 and back; generation still works", async () => {
    const e = await emulator();
    expect(await (await post(`${e.url}/admin/health`, { healthy: false })).json()).toEqual({ healthy: false });
    const sick = await fetch(`${e.url}/health`);
    expect(sick.status).toBe(503);
    expect(await sick.text()).toBe("");
    expect((await call(e)).status).toBe(200);
    await post(`${e.url}/admin/health`, { healthy: true });
    expect((await fetch(`${e.url}/health`)).status).toBe(200);
  });
});

describe("npm run emulator", () => {
  const cli = (args: string[]) =>
    spawn(process.execPath, ["--import", "tsx", "scripts/emulator.ts", ...args], { cwd: new URL("../..", import.meta.url).pathname });

  it("prints one ready line with the URL and serves there; the die fault ends the process", async () => {
    const child = cli(["--gpu", "A6000", "--port", "0", "--time-scale", "20", "--served-model-name", "meta-llama/Llama-3.1-70B-Instruct"]);
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve));
      const m = /^ready (http:\/\/127\.0\.0\.1:(\d+)) gpu=A6000 timeScale=20$/.exec(line);
      expect(m).not.toBeNull();
      const url = m?.[1] ?? "";
      const models = await (await fetch(`${url}/v1/models`)).text();
      expect(models).toContain('"id":"meta-llama/Llama-3.1-70B-Instruct"');
      await expect(post(`${url}/v1/completions`, { prompt: "p" }, { "x-hexflow-fault": "die" })).rejects.toThrow();
      expect(await exited).toBe(1);
    } finally {
      child.kill();
    }
  }, 20_000);

  it("rejects a bad flag with one line on stderr and exit code 2", async () => {
    const child = cli(["--gpu", "TPU"]);
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(2);
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toMatch(/^error: --gpu must be one of/);
  }, 20_000);
});
