import { z } from "zod";
import { CHESS_STEP_MEANS, CHESS_TEMPLATE, PARITY_STEP_PAIRS } from "./chess";
import { createLeastLoaded } from "./dispatch/least-loaded";
import { createRandom } from "./dispatch/random";
import { createRoundRobin } from "./dispatch/round-robin";
import type { DispatchPolicy } from "./dispatch/types";
import { createWorkloadBalanced } from "./dispatch/workload-balanced";
import type { LoadMode } from "./load";
import { edf } from "./queue/edf";
import { fcfs } from "./queue/fcfs";
import { leastLaxity } from "./queue/least-laxity";
import { leastSlack } from "./queue/least-slack";
import type { QueuePolicy } from "./queue/types";
import { createParitySharedPlanner, cursorPlanner, type StagePlanner } from "./remaining";
import type { StepTokens } from "./chess";

export const DispatchNameSchema = z.enum(["rr", "least-loaded", "wb", "random"]);
export const QueueNameSchema = z.enum(["fcfs", "pq", "edf", "lst"]);

export const PolicySpecSchema = z.object({
  name: z.string(),
  dispatch: DispatchNameSchema,
  queue: QueueNameSchema,
  /** The authors' quirks of DESIGN 2.1: cumulative load, fixed step pairs, shared remaining list, wb parity. */
  parity: z.boolean(),
  /** Whether α means anything to this policy (only wb dispatch reads it). */
  tunesAlpha: z.boolean(),
  /** least-loaded dispatch: instances sampled per call (absent = the whole pool). */
  choices: z.number().int().positive().optional(),
  /**
   * The load dispatch weighs: "all" (absent) is every outstanding call of the instance; "ahead" only what the
   * call would wait behind in that instance's priority queue (core/load loadAhead), so an urgent call does not
   * shun a server whose queue holds only slack-rich work.
   */
  loadView: z.enum(["all", "ahead"]).optional(),
  /** wb dispatch: θ of the urgency rule (dispatch/workload-balanced); absent, one α for every call. */
  urgency: z.number().positive().optional(),
  description: z.string(),
});
export type PolicySpec = z.infer<typeof PolicySpecSchema>;

const spec = (p: PolicySpec): Readonly<PolicySpec> => Object.freeze(p);

/** Named combinations (DESIGN 2.2). One immutable registry; variants are entries, not copies. */
export const POLICIES: Readonly<Record<string, Readonly<PolicySpec>>> = Object.freeze({
  "rr-fcfs": spec({ name: "rr-fcfs", dispatch: "rr", queue: "fcfs", parity: false, tunesAlpha: false, description: "round-robin + FCFS: vLLM behind a plain load balancer" }),
  "rr-pq": spec({ name: "rr-pq", dispatch: "rr", queue: "pq", parity: false, tunesAlpha: false, description: "round-robin + least-laxity queue (paper ablation)" }),
  "wb-fcfs": spec({ name: "wb-fcfs", dispatch: "wb", queue: "fcfs", parity: false, tunesAlpha: true, description: "workload-balanced dispatch + FCFS (paper ablation)" }),
  // Least-loaded baselines scan the whole pool: on a small pool with exact load that is their best
  // configuration (power-of-two sampling loses ~9% capacity on the reference pool; see least-loaded-p2c).
  "least-loaded": spec({ name: "least-loaded", dispatch: "least-loaded", queue: "fcfs", parity: false, tunesAlpha: false, description: "least outstanding work (load + t̂ on that GPU) + FCFS" }),
  "least-loaded-p2c": spec({ name: "least-loaded-p2c", dispatch: "least-loaded", queue: "fcfs", parity: false, tunesAlpha: false, choices: 2, description: "power-of-two-choices on outstanding work + FCFS (Ray Serve-like)" }),
  edf: spec({ name: "edf", dispatch: "least-loaded", queue: "edf", parity: false, tunesAlpha: false, description: "least-loaded dispatch + earliest deadline first (QLM-like)" }),
  random: spec({ name: "random", dispatch: "random", queue: "fcfs", parity: false, tunesAlpha: false, description: "uniform random dispatch + FCFS (reference floor)" }),
  hexgen: spec({ name: "hexgen", dispatch: "wb", queue: "pq", parity: false, tunesAlpha: true, description: "HexGen-Flow: WB dispatch + least-laxity queue, tuned α (hexflow defaults)" }),
  "hexgen-lst": spec({ name: "hexgen-lst", dispatch: "wb", queue: "lst", parity: false, tunesAlpha: true, description: "ablation: WB dispatch + least workflow slack (queue/least-slack)" }),
  "hexgen-ahead": spec({ name: "hexgen-ahead", dispatch: "wb", queue: "pq", parity: false, tunesAlpha: true, loadView: "ahead", description: "ablation: WB dispatch on the load ahead in the queue + least laxity" }),
  "edf-ahead": spec({ name: "edf-ahead", dispatch: "least-loaded", queue: "edf", parity: false, tunesAlpha: false, loadView: "ahead", description: "ablation: least work ahead in the queue + EDF" }),
  "hexgen-urgency": spec({ name: "hexgen-urgency", dispatch: "wb", queue: "pq", parity: false, tunesAlpha: true, urgency: 1, description: "ablation: WB dispatch with α raised for workflows with little slack + least laxity" }),
  // Issue 11 (docs/benchmarks.md, "Against the physical limits"): no mechanism measured beside HexGen-Flow's two
  // earned its place (each ablation entry here, and six more tried and dropped), so hexflow is WB + least laxity
  // with α tuned, until one does. It is its own entry so that pools select "hexflow" and follow what it becomes.
  hexflow: spec({ name: "hexflow", dispatch: "wb", queue: "pq", parity: false, tunesAlpha: true, description: "hexflow: the best configuration measured (WB dispatch + least laxity, α tuned); see docs/benchmarks.md" }),
  "hexflow-all": spec({ name: "hexflow-all", dispatch: "wb", queue: "lst", parity: false, tunesAlpha: true, loadView: "ahead", urgency: 1, description: "ablation: every mechanism (load ahead, urgency, least workflow slack)" }),
  "hexgen-parity": spec({ name: "hexgen-parity", dispatch: "wb", queue: "pq", parity: true, tunesAlpha: true, description: "HexGen-Flow with every quirk of the authors' code (DESIGN 2.1)" }),
});

export const POLICY_NAMES: readonly string[] = Object.keys(POLICIES);

export function getPolicy(name: string): Readonly<PolicySpec> | undefined {
  return Object.hasOwn(POLICIES, name) ? POLICIES[name] : undefined;
}

/** The live parts of a policy: fresh state per scheduler (or per simulation run). */
export interface PolicyRuntime {
  spec: Readonly<PolicySpec>;
  dispatch: DispatchPolicy;
  queue: QueuePolicy;
  loadMode: LoadMode;
  estimatorMode: "call" | "step-pair";
  stepTokens: Readonly<Record<string, StepTokens>>;
  planner: StagePlanner;
}

export type QueueName = z.infer<typeof QueueNameSchema>;
export const QUEUE_POLICIES: Readonly<Record<QueueName, QueuePolicy>> = Object.freeze({ fcfs, pq: leastLaxity, edf, lst: leastSlack });

function createDispatch(p: PolicySpec): DispatchPolicy {
  switch (p.dispatch) {
    case "rr":
      return createRoundRobin();
    case "least-loaded":
      return createLeastLoaded(p.choices ?? Number.POSITIVE_INFINITY);
    case "random":
      return createRandom();
    case "wb":
      return createWorkloadBalanced({ parity: p.parity, ...(p.urgency === undefined ? {} : { urgency: p.urgency }) });
  }
}

export function instantiatePolicy(p: Readonly<PolicySpec>, template: readonly string[] = CHESS_TEMPLATE): PolicyRuntime {
  return {
    spec: p,
    dispatch: createDispatch(p),
    queue: QUEUE_POLICIES[p.queue],
    loadMode: p.parity ? "cumulative" : "outstanding",
    estimatorMode: p.parity ? "step-pair" : "call",
    stepTokens: p.parity ? PARITY_STEP_PAIRS : CHESS_STEP_MEANS,
    planner: p.parity ? createParitySharedPlanner(template) : cursorPlanner,
  };
}
