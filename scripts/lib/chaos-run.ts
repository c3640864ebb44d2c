/**
 * One chaos run (or its fault-free baseline): a local stack with call logs, a seeded Poisson workload submitted
 * open-loop with idempotency keys, the fault schedule played against the emulators and the Worker, then the
 * accounting of scripts/lib/chaos-check.ts. Used by `npm run chaos` and test/e2e/chaos.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GpuType } from "../../src/core/gpu";
import { REFERENCE_POOL } from "../../src/sim/cluster";
import { buildWorkload } from "../../src/sim/workload";
import { TERMINAL_STATUSES, fetchTraceRows, pollWorkflow, setEmulatorFault, submitWithKey, type TraceRows } from "./chaos-client";
import { chaosFigures, chaosVerdict, readCallLogs, type ChaosFigures, type PlannedWorkflow } from "./chaos-check";
import { chaosSchedule, describeAction, type ChaosAction, type ChaosSchedule } from "./chaos-schedule";
import { adminFetch } from "./admin-client";
import { localOrigin } from "./cli";
import { replayRequest } from "./replay";
import { startStack, type Stack } from "./stack";

export interface ChaosOptions {
  seed: number;
  /** Emulated seconds of load. */
  durationS: number;
  /** Workflows per emulated second. */
  rate: number;
  timeScale: number;
  fleet?: readonly GpuType[];
  /** false: the same workload without any fault (the baseline). */
  faults: boolean;
  /** Real seconds to wait, after the last submission, for every accepted workflow to end. */
  timeoutS: number;
  /** Kill/restart cycles of the dead server (default 4). */
  cycles?: number;
  /** The instances' requestTimeoutMs, in emulated seconds (how soon a hung call counts as timed out). */
  requestTimeoutS?: number;
  /** Where the run's fresh state directory goes (default the system's temporary directory). */
  stateDir?: string;
  keepStateDir?: boolean;
  /** Progress: each submission answered, each workflow ended (or refused). */
  onSubmitted?: () => void;
  onEnded?: () => void;
  /** One line per fault as it is applied, and other news. */
  log?: (line: string) => void;
  /** The run's phases as they begin: the stack starting, the load (with its number of workflows), the drain after it, the checks. */
  onPhase?: (phase: ChaosPhase, workflows: number) => void;
}

export type ChaosPhase = "stack" | "load" | "drain" | "check";

export interface AppliedEvent {
  /** Planned, emulated seconds from the start of the load. */
  atS: number;
  action: string;
  /** When it was applied (emulated seconds) and how long it took (real ms). */
  appliedAtS: number;
  tookMs: number;
  error?: string;
}

export interface ChaosRun {
  options: Omit<ChaosOptions, "onSubmitted" | "onEnded" | "log" | "onPhase">;
  fleet: string[];
  schedule: ChaosSchedule | null;
  events: AppliedEvent[];
  counts: { kills: number; restarts: number; bursts: number; workerRestarts: number; failedActions: number };
  /** Share of the load phase the victim was actually down: from each kill to the end of its restart. */
  deadShare: number | null;
  figures: ChaosFigures;
  verdict: { ok: boolean; problems: string[] };
  /** Real seconds: the load phase, the drain after it, the whole run. */
  wall: { loadS: number; drainS: number; totalS: number };
  stateDir: string;
}

/** About how long an emulator process takes to start (Node, tsx, the server), real seconds. */
const RESTART_LEAD_REAL_S = 2;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

async function apply(stack: Stack, a: ChaosAction): Promise<void> {
  const url = (id: string): string => stack.emulators.find((e) => e.id === id)?.url ?? "";
  switch (a.kind) {
    case "kill":
      return stack.killEmulator(a.instance);
    case "restart":
      return stack.startEmulator(a.instance);
    case "burst":
      return setEmulatorFault(url(a.instance), a.mode, a.count);
    case "restart-worker":
      return stack.restartWorker();
  }
}

export async function runChaos(o: ChaosOptions): Promise<ChaosRun> {
  const started = performance.now();
  const log = o.log ?? (() => undefined);
  const fleet = [...(o.fleet ?? REFERENCE_POOL)];
  // Always a fresh directory (the stack wipes its state directory): `stateDir` is where it goes.
  const stateDir = mkdtempSync(join(o.stateDir ?? tmpdir(), o.faults ? "hexflow-chaos-" : "hexflow-chaos-baseline-"));
  const callLogDir = join(stateDir, "call-logs");
  const requestTimeoutMs = Math.round(((o.requestTimeoutS ?? 120) / o.timeScale) * 1000);
  o.onPhase?.("stack", Math.ceil(o.rate * o.durationS));
  const stack = await startStack({ fleet, timeScale: o.timeScale, port: 0, pool: "default", keepState: false, stateDir, quiet: true, admission: "off", callLogDir, registration: { requestTimeoutMs } });
  const gw = { url: stack.url, apiKey: stack.apiKey };
  try {
    // Sent only to this machine: the stack's own gateway and emulators.
    for (const u of [stack.url, ...stack.emulators.map((e) => e.url)]) localOrigin(u);
    const expected = Math.ceil(o.rate * o.durationS);
    const workload = buildWorkload({ kind: "synthetic" }, 2 * expected + 20, o.rate, o.seed).filter((w) => w.arrivalS < o.durationS);
    const planned: PlannedWorkflow[] = workload.map((w, index) => ({ index, key: `chaos-${o.seed}-${index}`, arrivalS: w.arrivalS }));
    const schedule = o.faults ? chaosSchedule({ seed: o.seed, durationS: o.durationS, instances: stack.emulators.map((e) => e.id), ...(o.cycles === undefined ? {} : { cycles: o.cycles }), restartLeadS: RESTART_LEAD_REAL_S * o.timeScale }) : null;
    const realMs = (s: number): number => (s / o.timeScale) * 1000;
    o.onPhase?.("load", workload.length);
    const t0 = performance.now();
    const wallT0 = Date.now();
    const nowS = (): number => ((performance.now() - t0) / 1000) * o.timeScale;

    // The fault schedule: one chain per target (each emulator, the Worker), so a slow restart delays only its own.
    const events: AppliedEvent[] = [];
    const chains = new Map<string, ChaosSchedule["events"]>();
    for (const e of schedule?.events ?? []) {
      const target = e.action.kind === "restart-worker" ? "worker" : e.action.instance;
      chains.set(target, [...(chains.get(target) ?? []), e]);
    }
    const faultsDone = Promise.all(
      [...chains.values()].map(async (chain) => {
        for (const e of chain) {
          await sleep(t0 + realMs(e.atS) - performance.now());
          const at = performance.now();
          const applied: AppliedEvent = { atS: e.atS, action: describeAction(e.action), appliedAtS: nowS(), tookMs: 0 };
          try {
            await apply(stack, e.action);
          } catch (err) {
            applied.error = message(err);
          }
          applied.tookMs = performance.now() - at;
          events.push(applied);
          log(`t=${applied.appliedAtS.toFixed(0)}s ${applied.action}${applied.error === undefined ? "" : ` FAILED: ${applied.error}`} (${applied.tookMs.toFixed(0)} ms)`);
        }
      }),
    );

    // The load: open loop, each workflow at its arrival time; retried with its key while the gateway is away.
    const retry = { maxAttempts: 12, backoffMs: 500, maxTotalMs: 90_000 };
    const submissions = workload.map(async (w, i) => {
      await sleep(t0 + realMs(w.arrivalS) - performance.now());
      const p = planned[i];
      if (p === undefined) return;
      p.submit = await submitWithKey(gw, replayRequest(w.spec), p.key, retry);
      o.onSubmitted?.();
      if (p.submit.ids.length === 0) o.onEnded?.();
    });

    // Polls, a few at a time, of the accepted workflows not yet ended; a failed poll is tried again next round.
    let loadOver = false;
    const ended = new Set<number>();
    const pollRound = async (): Promise<void> => {
      const open = planned.filter((p) => p.submit?.ids[0] !== undefined && !ended.has(p.index));
      for (let k = 0; k < open.length; k += 4) {
        await Promise.all(
          open.slice(k, k + 4).map(async (p) => {
            const id = p.submit?.ids[0];
            if (id === undefined) return;
            const r = await pollWorkflow(gw, id);
            // An answer that says nothing (the Worker restarting) does not replace a known state.
            if (r.kind !== "unknown" || p.final === undefined) p.final = r;
            if (r.kind === "view" && TERMINAL_STATUSES.has(r.view.status)) {
              ended.add(p.index);
              o.onEnded?.();
            }
          }),
        );
      }
    };
    const allEnded = (): boolean => planned.every((p) => p.submit !== undefined && (p.submit.ids[0] === undefined || ended.has(p.index)));
    let drainDeadline = Number.POSITIVE_INFINITY;
    const polling = (async () => {
      while (performance.now() < drainDeadline) {
        await pollRound();
        if (loadOver && allEnded()) return;
        await sleep(1000);
      }
    })();
    await Promise.all(submissions);
    await faultsDone;
    const loadS = (performance.now() - t0) / 1000;
    // The schedule ends with every server up; faults left armed (a burst's unused count) end with the load.
    for (const e of stack.emulators) {
      if (e.child.exitCode !== null || e.child.signalCode !== null) await stack.startEmulator(e.id).catch((err: unknown) => log(`restarting ${e.id} after the load failed: ${message(err)}`));
      await setEmulatorFault(e.url, "none").catch((err: unknown) => log(`clearing the faults of ${e.id} failed: ${message(err)}`));
    }
    o.onPhase?.("drain", workload.length);
    drainDeadline = performance.now() + o.timeoutS * 1000;
    loadOver = true;
    await polling;
    const drainS = (performance.now() - t0) / 1000 - loadS;
    o.onPhase?.("check", workload.length);
    // A last look at whatever did not end; then every accepted key once more (the same id must come back,
    // marked replayed); then the traces (their rows are written by an alarm after the end).
    await pollRound();
    const accepted = planned.filter((p) => p.submit?.ids[0] !== undefined);
    const open = accepted.filter((p) => !(p.final?.kind === "view" && TERMINAL_STATUSES.has(p.final.view.status)));
    // For the post-mortem of a lost workflow: where the pool's instances stand now (health, queued, running).
    if (open.length > 0) process.stderr.write(`chaos: ${open.length} accepted workflows have not ended; the pool now: ${await (await adminFetch(stack.url, stack.adminToken, `/pools/${stack.pool}`)).text().catch(() => "unreadable")}\n`);
    for (let k = 0; k < accepted.length; k += 4) {
      await Promise.all(
        accepted.slice(k, k + 4).map(async (p) => {
          const w = workload[p.index];
          if (w === undefined) return;
          const again = await submitWithKey(gw, replayRequest(w.spec), p.key, { maxAttempts: 3, backoffMs: 500, maxTotalMs: 10_000 });
          p.recheck = { id: again.ids[0] ?? null, replayed: again.replayed > 0, ...(again.refusal === undefined ? {} : { refusal: `${again.refusal.status ?? "no answer"} ${again.refusal.code}` }) };
        }),
      );
    }
    const traces = await readTraces(gw, stack.pool, wallT0, planned);
    const figures = chaosFigures(planned, traces, readCallLogs(callLogDir));
    const count = (prefix: string): number => events.filter((e) => e.action.startsWith(prefix) && e.error === undefined).length;
    return {
      options: { seed: o.seed, durationS: o.durationS, rate: o.rate, timeScale: o.timeScale, fleet, faults: o.faults, timeoutS: o.timeoutS, requestTimeoutS: o.requestTimeoutS ?? 120, ...(o.cycles === undefined ? {} : { cycles: o.cycles }) },
      fleet: stack.emulators.map((e) => `${e.id} (${e.gpu})`),
      schedule,
      events: events.sort((a, b) => a.atS - b.atS),
      counts: {
        kills: count("kill "),
        restarts: count("restart ") - count("restart the gateway"),
        bursts: events.filter((e) => / x\d on /.test(e.action) && e.error === undefined).length,
        workerRestarts: count("restart the gateway"),
        failedActions: events.filter((e) => e.error !== undefined).length,
      },
      deadShare: schedule === null ? null : deadShare(events, loadS * o.timeScale, o.timeScale),
      figures,
      verdict: chaosVerdict(figures),
      wall: { loadS, drainS, totalS: (performance.now() - started) / 1000 },
      stateDir,
    };
  } finally {
    await stack.stop();
    if (o.keepStateDir !== true) rmSync(stateDir, { recursive: true, force: true });
  }
}

/** The tenant's traces of the run, once the ended workflows' rows are in (or after 20 s real); null if the route fails. */
async function readTraces(gw: { url: string; apiKey: string }, pool: string, wallT0: number, planned: readonly PlannedWorkflow[]): Promise<TraceRows | null> {
  const endedIds = planned.flatMap((p) => (p.final?.kind === "view" && TERMINAL_STATUSES.has(p.final.view.status) ? [p.final.view.id] : []));
  const deadline = performance.now() + 20_000;
  let rows: TraceRows | null = null;
  for (;;) {
    try {
      rows = await fetchTraceRows(gw, pool, wallT0 - 60_000, Date.now() + 60_000);
    } catch {
      rows = null;
    }
    const traced = new Set(rows?.workflows.map((r) => r.workflow_id) ?? []);
    if ((rows !== null && endedIds.every((id) => traced.has(id))) || performance.now() > deadline) return rows;
    await sleep(1000);
  }
}

function deadShare(events: readonly AppliedEvent[], spanS: number, timeScale: number): number {
  let dead = 0;
  let since: number | undefined;
  for (const e of [...events].sort((a, b) => a.appliedAtS - b.appliedAtS)) {
    if (e.action.startsWith("kill ")) since = e.appliedAtS;
    else if (e.action.startsWith("restart ") && !e.action.startsWith("restart the gateway") && since !== undefined) {
      dead += e.appliedAtS + (e.tookMs / 1000) * timeScale - since;
      since = undefined;
    }
  }
  if (since !== undefined) dead += spanS - since;
  return spanS > 0 ? Math.min(1, dead / spanS) : 0;
}
