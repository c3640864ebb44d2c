/**
 * Live progress of the long CLIs (bench, bench:e2e, chaos, demo and the other benchmarks). On a terminal:
 * cli-progress bars redrawn in place, one per run. Elsewhere (CI, a pipe) redraws would only fill the log
 * with control characters, so it writes sparse plain lines instead: when a run starts, changes phase and
 * ends, and at most one progress line per `everyMs` in between.
 */
import { MultiBar, type Params, type SingleBar } from "cli-progress";

/** A run of workflows: each submitted, each ended, its phases. */
export interface RunProgress {
  submitted(): void;
  ended(): void;
  /** The stage the run is in (e.g. load, drain, check). */
  phase(name: string): void;
  /** The real number of workflows, once known (a Poisson workload's count is only estimated up front). */
  resize(total: number): void;
  done(summary: string): void;
}

/** A fixed number of steps of computation (the simulator benchmark's runs). */
export interface StepProgress {
  /** One step finished; `what` names it. */
  step(what: string): void;
  done(summary: string): void;
}

export interface Progress {
  run(label: string, total: number): RunProgress;
  steps(label: string, total: number): StepProgress;
  /** A line of news (a fault applied, a warning), printed above the bars on a terminal. */
  note(line: string): void;
  stop(): void;
}

export interface ProgressOptions {
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Nothing at all: for --json and --quiet modes. */
  quiet?: boolean;
  /** Without a terminal, the least time between two progress lines of one run (default 30 s). */
  everyMs?: number;
  now?: () => number;
  /** Labels are padded to this width so that the bars line up. */
  labelWidth?: number;
}

/** "45s", "3m07s", "1h05m"; "–" for an unknown time. */
export function durationText(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "–";
  const t = Math.round(seconds);
  if (t < 60) return `${t}s`;
  if (t < 3600) return `${Math.floor(t / 60)}m${String(t % 60).padStart(2, "0")}s`;
  return `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, "0")}m`;
}

interface State {
  label: string;
  unit: string;
  value: number;
  total: number;
  submitted: number | null;
  phase: string;
  detail: string;
  startedAt: number;
  endedAt: number | null;
}

/** "3/8 ended, 5 submitted · 12s elapsed, ETA 20s · detail": the same words on a bar and in a log line. */
function describe(s: State, now: number): string {
  const elapsedS = ((s.endedAt ?? now) - s.startedAt) / 1000;
  const counts = `${s.value}/${s.total} ${s.unit}${s.submitted === null ? "" : `, ${s.submitted} submitted`}`;
  // A linear ETA from the share done so far; unknown before the first step.
  const eta = s.value > 0 && s.value < s.total ? (elapsedS / s.value) * (s.total - s.value) : Number.NaN;
  const timing = s.endedAt !== null || s.value >= s.total ? `${durationText(elapsedS)}` : `${durationText(elapsedS)} elapsed, ETA ${durationText(eta)}`;
  return `${counts} · ${timing}${s.detail === "" ? "" : ` · ${s.detail}`}`;
}

const NOOP: Progress = {
  run: () => ({ submitted: () => undefined, ended: () => undefined, phase: () => undefined, resize: () => undefined, done: () => undefined }),
  steps: () => ({ step: () => undefined, done: () => undefined }),
  note: () => undefined,
  stop: () => undefined,
};

export function progressBars(o: ProgressOptions = {}): Progress {
  if (o.quiet === true) return NOOP;
  const stream = o.stream ?? process.stderr;
  const now = o.now ?? (() => Date.now());
  const width = o.labelWidth ?? 30;
  return stream.isTTY === true ? ttyProgress(stream, now, width) : lineProgress(stream, now, o.everyMs ?? 30_000);
}

/** The common part of a run and a step counter: `update` is told after every change. */
function tracker(s: State, update: (s: State, kind: "change" | "phase" | "resize" | "done") => void): { run: RunProgress; steps: StepProgress } {
  const done = (summary: string): void => {
    s.detail = summary;
    update(s, "done");
  };
  return {
    run: {
      submitted: () => {
        s.submitted = (s.submitted ?? 0) + 1;
        update(s, "change");
      },
      ended: () => {
        s.value++;
        update(s, "change");
      },
      phase: (name) => {
        s.phase = name;
        update(s, "phase");
      },
      resize: (total) => {
        s.total = total;
        update(s, "resize");
      },
      done,
    },
    steps: {
      step: (what) => {
        s.value++;
        s.detail = what;
        update(s, "change");
      },
      done,
    },
  };
}

function ttyProgress(stream: NodeJS.WritableStream, now: () => number, width: number): Progress {
  // cli-progress's own bar formatter is not among the names its CommonJS build exports to ESM.
  const bar = (progress: number): string => {
    const full = Math.round(Math.min(1, Math.max(0, progress)) * 24);
    return `${"\u2588".repeat(full)}${"\u2591".repeat(24 - full)}`;
  };
  const format = (_: unknown, params: Params, s: State): string => `${s.label.padEnd(width)} |${bar(params.progress)}| ${s.phase === "" ? "" : `[${s.phase}] `}${describe(s, now())}`;
  const bars = new MultiBar({ format, hideCursor: true, clearOnComplete: false, stream });
  // cli-progress prints its log lines only while it draws bars: before the first, they go straight out.
  let active = false;
  const make = (label: string, total: number, unit: string, submitted: number | null): { run: RunProgress; steps: StepProgress } => {
    const s: State = { label, unit, value: 0, total, submitted, phase: "", detail: "", startedAt: now(), endedAt: null };
    // cli-progress hands its payload to `format` as is: the state object itself, kept current here.
    const one: SingleBar = bars.create(Math.max(1, total), 0, s);
    active = true;
    return tracker(s, (st, kind) => {
      if (kind === "done") st.endedAt = now();
      if (kind === "resize") one.setTotal(Math.max(1, st.total));
      one.update(st.value, st);
      if (kind === "done") one.stop();
      // Drawn now rather than on cli-progress's timer, which a synchronous caller (the simulator) starves.
      bars.update();
    });
  };
  return {
    run: (label, total) => make(label, total, "ended", 0).run,
    steps: (label, total) => make(label, total, "runs", null).steps,
    note: (line) => (active ? bars.log(`${line}\n`) : void stream.write(`${line}\n`)),
    stop: () => bars.stop(),
  };
}

function lineProgress(stream: NodeJS.WritableStream, now: () => number, everyMs: number): Progress {
  const line = (text: string): void => void stream.write(`${text}\n`);
  const make = (label: string, total: number, unit: string, noun: string, submitted: number | null): { run: RunProgress; steps: StepProgress } => {
    const s: State = { label, unit, value: 0, total, submitted, phase: "", detail: "", startedAt: now(), endedAt: null };
    let last = s.startedAt;
    line(`${label}: started, ${total} ${noun}`);
    return tracker(s, (st, kind) => {
      const t = now();
      if (kind === "done") {
        st.endedAt = t;
        return line(`${label}: ${st.detail} (${durationText((t - st.startedAt) / 1000)})`);
      }
      if (kind === "phase") return line(`${label}: phase ${st.phase}`);
      if (kind === "resize") return;
      if (t - last < everyMs) return;
      last = t;
      line(`${label}: ${st.phase === "" ? "" : `[${st.phase}] `}${describe(st, t)}`);
    });
  };
  return {
    run: (label, total) => make(label, total, "ended", "workflows", 0).run,
    steps: (label, total) => make(label, total, "runs", "runs", null).steps,
    note: line,
    stop: () => undefined,
  };
}
