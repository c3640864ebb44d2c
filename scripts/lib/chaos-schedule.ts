/**
 * The chaos harness's fault schedule: seeded, in pool-clock (emulated) seconds from the start of the load.
 *
 * - One server (picked by seed) is dead half the time: `cycles` periods, each with one kill and one restart;
 *   the dead span is 40-60% of its period (about half of the run in all) and ends before the period does.
 * - The other servers meet short bursts: the next k (1-3) generation requests hang, answer 500 or 503, or
 *   are dropped mid-stream (src/emulator/faults.ts), about every `burstEveryS`.
 * - The gateway Worker restarts once, around the middle of the run.
 */
import { forkRng, uniformInt, exponential } from "../../src/core/rng";

export type BurstMode = "hang" | "error500" | "error503" | "drop";
export const BURST_MODES: readonly BurstMode[] = ["hang", "error500", "error503", "drop"];

export type ChaosAction =
  | { kind: "kill"; instance: string }
  | { kind: "restart"; instance: string }
  | { kind: "burst"; instance: string; mode: BurstMode; count: number }
  | { kind: "restart-worker" };

export interface ChaosEvent {
  atS: number;
  action: ChaosAction;
}

export interface ScheduleOptions {
  seed: number;
  durationS: number;
  instances: readonly string[];
  /** Kill/restart cycles of the dead server (default 4). */
  cycles?: number;
  /** Mean gap between bursts on the other servers, emulated seconds (default durationS / 10). */
  burstEveryS?: number;
  /** Restart the gateway Worker once (default true). */
  workerRestart?: boolean;
  /**
   * How long an emulator takes to start, emulated seconds: its restart is issued this much before the dead
   * span ends, so the server is down for the span planned (default 0).
   */
  restartLeadS?: number;
}

export interface ChaosSchedule {
  victim: string;
  /** The victim's dead spans, emulated seconds: [from, to). */
  deadSpans: [number, number][];
  events: ChaosEvent[];
}

export function chaosSchedule(o: ScheduleOptions): ChaosSchedule {
  if (o.instances.length === 0) throw new Error("chaos schedule: no instances");
  const pick = forkRng(o.seed, 11);
  const victim = o.instances[uniformInt(pick, o.instances.length)] ?? "";
  const others = o.instances.filter((x) => x !== victim);
  const events: ChaosEvent[] = [];
  const deadSpans: [number, number][] = [];
  const cycles = o.cycles ?? 4;
  const period = o.durationS / cycles;
  const dead = forkRng(o.seed, 12);
  for (let k = 0; k < cycles; k++) {
    const span = period * (0.4 + 0.2 * dead.next());
    const from = k * period + (period - span) * dead.next();
    deadSpans.push([from, from + span]);
    const restartAt = Math.max(from + span / 2, from + span - (o.restartLeadS ?? 0));
    events.push({ atS: from, action: { kind: "kill", instance: victim } }, { atS: restartAt, action: { kind: "restart", instance: victim } });
  }
  const bursts = forkRng(o.seed, 13);
  const every = o.burstEveryS ?? o.durationS / 10;
  if (others.length > 0) {
    for (let t = exponential(bursts, 1 / every); t < o.durationS * 0.95; t += exponential(bursts, 1 / every)) {
      const instance = others[uniformInt(bursts, others.length)] ?? "";
      const mode = BURST_MODES[uniformInt(bursts, BURST_MODES.length)] ?? "error500";
      events.push({ atS: t, action: { kind: "burst", instance, mode, count: 1 + uniformInt(bursts, 3) } });
    }
  }
  if (o.workerRestart !== false) events.push({ atS: o.durationS * (0.45 + 0.1 * forkRng(o.seed, 14).next()), action: { kind: "restart-worker" } });
  events.sort((a, b) => a.atS - b.atS);
  return { victim, deadSpans, events };
}

export function describeAction(a: ChaosAction): string {
  switch (a.kind) {
    case "kill":
      return `kill ${a.instance}`;
    case "restart":
      return `restart ${a.instance}`;
    case "burst":
      return `${a.mode} x${a.count} on ${a.instance}`;
    case "restart-worker":
      return "restart the gateway Worker";
  }
}
