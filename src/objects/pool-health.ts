/**
 * The coordinator's view of how its pool is doing, kept apart from the scheduling state: each
 * instance's self-calibrated cost model (core/calibration) fed by the service times the instances
 * report, and the degradation trigger's windows (core/degradation) fed by ended workflows. Both live
 * in the coordinator's SQLite (tables created by its migration v3) so a restart forgets nothing.
 */
import { calibratedCost, CalibrationStateSchema, newCalibration, observeService, type CalibrationState, type ServiceObservation } from "../core/calibration";
import { estimateSeconds, type CostCoeffs } from "../core/cost-model";
import { check, DegradationStateSchema, newDegradationState, observe, rebase, type DegradationState, type DegradationStats, type WorkflowSample } from "../core/degradation";

/**
 * The degradation windows are written every this many workflows (and at every trigger and rebase):
 * a restart may forget the last few samples, which the windows of hundreds do not miss.
 */
const SAVE_EVERY = 10;
/**
 * The test runs every this many workflows, as in test/node/degradation.test.ts, whose false-positive
 * rate (0.5% of 1,000-workflow stretches of stationary traffic) is thus the rate here too: checks on
 * overlapping windows are correlated, and checking after every workflow would raise it.
 */
const CHECK_EVERY = 10;
/** Calibrated coefficients move the scheduler only when one moved this much since it was built. */
const REBUILD_THRESHOLD = 0.05;

export interface CalibrationView {
  cost: CostCoeffs;
  /** Seconds per output token per extra co-running sequence (batching interference, not priced). */
  interferenceS: number;
  samples: number;
  downWeighted: number;
  /** Calibrated decode seconds per token over the GPU profile's: above 1, the server is slower than its type. */
  decodeRatio: number;
}

export interface DegradationView {
  lastTriggerAtS: number | null;
  rebasedAtS: number | null;
  /** Samples in the reference window (frozen at the last tuning) and since. */
  windows: { reference: number; current: number };
  lastCheck: { reason: string; stats: DegradationStats } | null;
}

const samePrior = (a: CostCoeffs, b: CostCoeffs): boolean => a.overheadS === b.overheadS && a.prefillS === b.prefillS && a.decodeS === b.decodeS;

/**
 * Compared on what they predict for a prompt-heavy and an output-heavy call rather than coefficient by
 * coefficient: a zero overhead that becomes 1 ms is an infinite relative change and no change at all.
 */
const SHAPES = [
  { input: 4000, output: 20 },
  { input: 500, output: 500 },
];
function moved(from: CostCoeffs, to: CostCoeffs): boolean {
  return SHAPES.some(({ input, output }) => {
    const a = estimateSeconds(from, input, output);
    return Math.abs(estimateSeconds(to, input, output) - a) > REBUILD_THRESHOLD * a;
  });
}

export class PoolHealth {
  private readonly calibrations = new Map<string, CalibrationState>();
  /** The costs the current scheduler was built with, per instance. */
  private readonly inUse = new Map<string, CostCoeffs>();
  private degradation: DegradationState;
  private lastCheck: DegradationView["lastCheck"] = null;
  private unsaved = 0;
  private unchecked = 0;

  constructor(private readonly sql: SqlStorage) {
    for (const r of sql.exec<{ instance_id: string; json: string }>("SELECT instance_id, json FROM calibration").toArray()) {
      this.calibrations.set(r.instance_id, CalibrationStateSchema.parse(JSON.parse(r.json)));
    }
    const row = sql.exec<{ json: string }>("SELECT json FROM health WHERE key = 'degradation'").toArray()[0];
    this.degradation = row === undefined ? newDegradationState() : DegradationStateSchema.parse(JSON.parse(row.json));
  }

  /** The cost model to schedule and simulate with: the calibrated one once it has enough samples. */
  cost(instanceId: string, prior: CostCoeffs): CostCoeffs {
    const cost = calibratedCost(this.state(instanceId, prior));
    this.inUse.set(instanceId, cost);
    return cost;
  }

  /**
   * Folds one report's service times in; answers true when some instance's calibrated cost moved far
   * enough from the one the scheduler uses that it should be rebuilt.
   */
  observeServices(instanceId: string, prior: CostCoeffs, services: readonly ServiceObservation[]): boolean {
    if (services.length === 0) return false;
    let s = this.state(instanceId, prior);
    for (const obs of services) s = observeService(s, obs);
    this.calibrations.set(instanceId, s);
    this.sql.exec("INSERT OR REPLACE INTO calibration (instance_id, json) VALUES (?, ?)", instanceId, JSON.stringify(s));
    const used = this.inUse.get(instanceId);
    return used !== undefined && moved(used, calibratedCost(s));
  }

  forget(instanceId: string): void {
    this.calibrations.delete(instanceId);
    this.inUse.delete(instanceId);
    this.sql.exec("DELETE FROM calibration WHERE instance_id = ?", instanceId);
  }

  calibrationView(instanceId: string, prior: CostCoeffs): CalibrationView {
    const s = this.state(instanceId, prior);
    const cost = calibratedCost(s);
    return { cost, interferenceS: s.coeffs.interferenceS, samples: s.samples, downWeighted: s.downWeighted, decodeRatio: cost.decodeS / prior.decodeS };
  }

  /** One ended workflow; answers the trigger's reason when the pool degraded enough to re-tune now. */
  workflowEnded(sample: WorkflowSample, nowS: number): { trigger: boolean; reason: string } {
    const observed = observe(this.degradation, sample);
    if (++this.unchecked < CHECK_EVERY) {
      this.degradation = observed;
      if (++this.unsaved >= SAVE_EVERY) this.saveDegradation(observed);
      return { trigger: false, reason: "not checked yet" };
    }
    this.unchecked = 0;
    const d = check(observed, nowS);
    this.lastCheck = { reason: d.reason, stats: d.stats };
    this.degradation = d.state;
    if (d.trigger || ++this.unsaved >= SAVE_EVERY) this.saveDegradation(d.state);
    return { trigger: d.trigger, reason: d.reason };
  }

  /** After a tuning decision: what the tuner saw becomes the reference. */
  tuned(nowS: number): void {
    this.saveDegradation(rebase(this.degradation, nowS));
  }

  degradationView(): DegradationView {
    return { lastTriggerAtS: this.degradation.lastTriggerAtS, rebasedAtS: this.degradation.rebasedAtS, windows: { reference: this.degradation.reference.length, current: this.degradation.current.length }, lastCheck: this.lastCheck };
  }

  /** A registration with a different cost prior (a new GPU, an admin override) starts over. */
  private state(instanceId: string, prior: CostCoeffs): CalibrationState {
    const s = this.calibrations.get(instanceId);
    if (s !== undefined && samePrior(s.prior, prior)) return s;
    const fresh = newCalibration(prior);
    this.calibrations.set(instanceId, fresh);
    return fresh;
  }

  private saveDegradation(s: DegradationState): void {
    this.degradation = s;
    this.unsaved = 0;
    this.sql.exec("INSERT OR REPLACE INTO health (key, json) VALUES ('degradation', ?)", JSON.stringify(s));
  }
}
