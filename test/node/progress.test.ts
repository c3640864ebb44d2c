import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { durationText, progressBars } from "../../scripts/lib/progress";

/** A stream that keeps what it is given; `isTTY` decides which kind of progress it gets. */
function capture(isTTY: boolean): { stream: Writable & { isTTY: boolean }; text: () => string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream: Object.assign(w, { isTTY, columns: 160 }), text: () => chunks.join("") };
}

// Any ANSI escape (colours, cursor moves, line clears) or carriage return: what a log must not get.
const CONTROL = /\u001b|\r/;

describe("progress without a terminal", () => {
  it("writes sparse plain lines: start, phases, at most one progress line per interval, the end", () => {
    const out = capture(false);
    let t = 0;
    const p = progressBars({ stream: out.stream, now: () => t, everyMs: 10_000 });
    const run = p.run("rate 0.5 seed 3 hexgen", 40);
    run.phase("load");
    for (let i = 0; i < 40; i++) {
      t += 500;
      run.submitted();
      run.ended();
    }
    run.phase("drain");
    run.done("40/40 succeeded in 20 s");
    p.note("a fault applied");
    p.stop();
    const lines = out.text().trimEnd().split("\n");
    expect(lines).toEqual([
      "rate 0.5 seed 3 hexgen: started, 40 workflows",
      "rate 0.5 seed 3 hexgen: phase load",
      // Written on the first change past each 10 s: a submission, before the matching end.
      "rate 0.5 seed 3 hexgen: [load] 19/40 ended, 20 submitted · 10s elapsed, ETA 11s",
      "rate 0.5 seed 3 hexgen: [load] 39/40 ended, 40 submitted · 20s elapsed, ETA 1s",
      "rate 0.5 seed 3 hexgen: phase drain",
      "rate 0.5 seed 3 hexgen: 40/40 succeeded in 20 s (20s)",
      "a fault applied",
    ]);
    expect(out.text()).not.toMatch(CONTROL);
  });

  it("counts steps with elapsed time, ETA and the last step's name", () => {
    const out = capture(false);
    let t = 0;
    const p = progressBars({ stream: out.stream, now: () => t, everyMs: 60_000 });
    const s = p.steps("simulator benchmark", 4);
    for (const what of ["vllm synthetic capacity edf", "vllm synthetic rate 0.5 edf", "parity synthetic capacity edf", "parity synthetic rate 0.5 edf"]) {
      t += 30_000;
      s.step(what);
    }
    s.done("4 runs");
    expect(out.text().trimEnd().split("\n")).toEqual([
      "simulator benchmark: started, 4 runs",
      "simulator benchmark: 2/4 runs · 1m00s elapsed, ETA 1m00s · vllm synthetic rate 0.5 edf",
      "simulator benchmark: 4/4 runs · 2m00s · parity synthetic rate 0.5 edf",
      "simulator benchmark: 4 runs (2m00s)",
    ]);
    expect(out.text()).not.toMatch(CONTROL);
  });

  it("writes nothing at all when quiet (the --json modes)", () => {
    const out = capture(false);
    const p = progressBars({ stream: out.stream, quiet: true });
    const r = p.run("x", 2);
    r.submitted();
    r.ended();
    r.done("done");
    p.note("news");
    p.stop();
    expect(out.text()).toBe("");
  });
});

describe("progress on a terminal", () => {
  it("draws a cli-progress bar with the label, the counts and the summary", () => {
    const out = capture(true);
    const p = progressBars({ stream: out.stream });
    const r = p.run("demo", 2);
    r.submitted();
    r.submitted();
    r.ended();
    r.ended();
    r.done("2/2 ended");
    p.stop();
    const text = out.text();
    expect(text).toMatch(CONTROL);
    expect(text).toContain("demo");
    expect(text).toContain("|████████████████████████| 2/2 ended, 2 submitted");
    expect(text).toContain("2/2 ended");
  });
});

describe("durationText", () => {
  it("formats seconds, minutes and hours, and marks an unknown time", () => {
    expect([durationText(4.4), durationText(65), durationText(3 * 3600 + 5 * 60), durationText(Number.NaN)]).toEqual(["4s", "1m05s", "3h05m", "–"]);
  });
});
