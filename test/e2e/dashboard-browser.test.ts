/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The page functions below run in the browser (playwright serialises them), so they need the DOM types.
/**
 * The dashboard in a real browser: Debian's Chromium, driven by playwright-core, against the local stack
 * (4 emulated GPUs, wrangler dev) under a steady load. It checks that the instance table and every chart
 * render from live data and keep updating, and saves a screenshot to bench/results/dashboard.png.
 *
 * Without Chromium the test is skipped, unless HEXFLOW_REQUIRE_BROWSER=1 (set by .ci/run, which installs
 * it), where a missing browser is a failure rather than a silent skip.
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRng, exponential } from "../../src/core/rng";
import { REFERENCE_POOL } from "../../src/sim/cluster";
import { syntheticWorkflow } from "../../src/sim/synthetic";
import { NO_KEEPALIVE, replayRequest, submitReplay } from "../../scripts/lib/replay";
import { startStack, type Stack } from "../../scripts/lib/stack";

const TIME_SCALE = 40;
const RESULTS = new URL("../../bench/results/", import.meta.url).pathname;
const executable = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p): p is string => p !== undefined && p !== "" && existsSync(p));
const required = process.env.HEXFLOW_REQUIRE_BROWSER === "1";

let stack: Stack;
let browser: Browser;
let loading = true;
let load: Promise<void> = Promise.resolve();

/** Poisson arrivals of synthetic CHESS workflows (0.35/s on the pool clock, about 2/3 of the fleet's capacity) until the test ends. */
async function steadyLoad(seed: number): Promise<void> {
  const rng = createRng(seed);
  while (loading) {
    await submitReplay(stack, replayRequest(syntheticWorkflow(rng))).catch(() => undefined);
    await new Promise((r) => setTimeout(r, (exponential(rng, 0.35) / TIME_SCALE) * 1000));
  }
}

const points = (page: Page, canvas: string): Promise<number> => page.$eval(`#${canvas}`, (c) => Number((c as HTMLCanvasElement).dataset["points"] ?? 0));
const polls = (page: Page): Promise<number> => page.$eval("body", (b) => Number(b.dataset["polls"] ?? 0));
/** Pixels that are not transparent: a chart that drew nothing has none. */
const inked = (page: Page, canvas: string): Promise<number> =>
  page.$eval(`#${canvas}`, (c) => {
    const cv = c as HTMLCanvasElement;
    const data = cv.getContext("2d")?.getImageData(0, 0, cv.width, cv.height).data ?? new Uint8ClampedArray();
    let n = 0;
    for (let i = 3; i < data.length; i += 4) if ((data[i] ?? 0) > 0) n++;
    return n;
  });

describe.skipIf(executable === undefined && !required)("the dashboard in headless Chromium", () => {
  beforeAll(async () => {
    if (executable === undefined) throw new Error("HEXFLOW_REQUIRE_BROWSER=1 but no Chromium found (CHROMIUM_PATH, /usr/bin/chromium)");
    stack = await startStack({ fleet: REFERENCE_POOL, timeScale: TIME_SCALE, port: 0, pool: "default", keepState: false, stateDir: mkdtempSync(join(tmpdir(), "hexflow-dash-")), quiet: process.env.HEXFLOW_E2E_LOGS === undefined });
    load = steadyLoad(11);
    browser = await chromium.launch({ executablePath: executable, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  }, 120_000);

  afterAll(async () => {
    loading = false;
    await load;
    await browser?.close();
    await stack?.stop();
  });

  it("shows the pool's instances, live charts and a workflow timeline, and keeps them up to date", async () => {
    const page = await browser.newPage({ viewport: { width: 1500, height: 1400 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("response", (r) => {
      if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
    });
    // Nothing may come from outside the gateway: the page works offline.
    const foreign: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(stack.url)) foreign.push(r.url());
    });

    await page.goto(`${stack.url}/dashboard?pool=${stack.pool}&windowS=120&stepS=2&spanS=30#token=${stack.adminToken}`);
    // The token moves from the fragment into the tab's session storage and out of the address bar.
    await page.waitForFunction(() => Number(document.body.dataset["polls"] ?? 0) >= 1, undefined, { timeout: 30_000 });
    expect(page.url()).not.toContain("token=");

    const rows = await page.$$eval("#instances tr", (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(0, 4).map((td) => td.textContent ?? "")));
    expect(rows.map((r) => [r[0], r[1], r[3]])).toEqual(stack.emulators.map((e) => [e.id, e.gpu, "healthy"]));

    // Workflows end, the traces reach D1 and the series fill; a tuning decision appears on the α chart.
    await page.waitForFunction(() => Number(document.getElementById("chart-p95")?.dataset["points"] ?? 0) > 0 && Number(document.getElementById("chart-gantt")?.dataset["points"] ?? 0) > 0, undefined, { timeout: 90_000 });
    const tune = await fetch(`${stack.url}/admin/pools/${stack.pool}/tune`, { method: "POST", headers: { ...NO_KEEPALIVE, authorization: `Bearer ${stack.adminToken}` } });
    expect(tune.status).toBe(200);

    const before = { polls: await polls(page), p95: await points(page, "chart-p95"), queues: await points(page, "chart-queues"), figures: await page.textContent("#figures") };
    await page.waitForFunction((n) => Number(document.body.dataset["polls"] ?? 0) >= n + 3, before.polls, { timeout: 30_000 });
    // The queue chart gains a point per instance on every poll; the α chart now has the decision.
    expect(await points(page, "chart-queues")).toBeGreaterThanOrEqual(before.queues + 3 * stack.emulators.length);
    expect(await points(page, "chart-alpha")).toBeGreaterThanOrEqual(2);
    expect(await points(page, "chart-p95")).toBeGreaterThan(0);
    for (const c of ["chart-p95", "chart-attainment", "chart-throughput", "chart-alpha", "chart-queues", "chart-gantt"]) expect(await inked(page, c), c).toBeGreaterThan(500);
    const figures = await page.textContent("#figures");
    expect(figures).toMatch(/instances healthy\s*4 \/ 4/);
    expect(figures).toMatch(/SLO attainment\s*\d+(\.\d)?%/);
    expect(await page.$$eval("#recent button", (bs) => bs.length)).toBeGreaterThan(0);

    mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: join(RESULTS, "dashboard.png"), fullPage: true });
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
  });

  it("asks for the token when it has none, and says so when it is wrong", async () => {
    const page = await browser.newPage();
    await page.goto(`${stack.url}/dashboard`);
    await page.waitForSelector("#login:not([hidden])");
    await page.fill("#token", "not-the-admin-token");
    await page.click("#login button");
    await page.waitForFunction(() => document.getElementById("status")?.textContent?.includes("admin credential required") === true);
    expect(await page.$$eval("#instances tr", (trs) => trs.length)).toBe(0);
  });
});
