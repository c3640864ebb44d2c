/**
 * A short chaos run (issue 8): the reference fleet at time scale 20 for 120 emulated seconds (6 s of load),
 * one server killed and restarted twice, fault bursts on the others, one Worker restart, no baseline. Every
 * accepted workflow must end (succeeded, or failed with a reason), none may be lost or duplicated, and no call
 * may run more than MAX_CALL_ATTEMPTS times on the servers. `npm run chaos` is the full-size run.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chaosMarkdown } from "../../scripts/lib/chaos-report";
import { runChaos } from "../../scripts/lib/chaos-run";

describe("chaos harness, short run", () => {
  it("loses, duplicates and over-retries nothing while servers die, misbehave and the Worker restarts", async () => {
    const run = await runChaos({ seed: 7, durationS: 120, rate: 0.3, timeScale: 20, faults: true, cycles: 2, timeoutS: 90 });
    const report = chaosMarkdown(run, null, "test/e2e/chaos.test.ts");
    // The faults did happen: a kill and a restart of the victim, and the Worker restart.
    expect(run.counts.kills, report).toBeGreaterThanOrEqual(1);
    expect(run.counts.restarts, report).toBeGreaterThanOrEqual(1);
    expect(run.counts.workerRestarts, report).toBe(1);
    expect(run.counts.failedActions, report).toBe(0);
    const f = run.figures;
    expect(f.submitted, report).toBe(f.planned);
    expect(f.accepted, report).toBeGreaterThan(0);
    expect(f.retry.executions, report).toBeGreaterThan(0);
    expect({ lost: f.lost, duplicated: f.duplicated, overRetried: f.retry.violations.length, unexplained: f.unexplained }, report).toEqual({ lost: 0, duplicated: 0, overRetried: 0, unexplained: 0 });
    expect(f.succeeded + f.failed + f.cancelled, report).toBe(f.accepted);
  }, 240_000);

  it("npm run chaos refuses a bad option with one line and exit code 2, before starting anything", () => {
    const r = spawnSync(join(process.cwd(), "node_modules/.bin/tsx"), [join(process.cwd(), "scripts/chaos.ts"), "--rate", "fast"], { encoding: "utf8", timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('error: --rate must be a valid number (got "fast")');
  });
});
