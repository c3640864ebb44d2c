import type { Assignment } from "./dispatcher";
import type { Candidate } from "./dispatch/types";
import type { ReleasedCall } from "./workflow-run";

/**
 * Stage-makespan placement (issue 11). Why: a fan-out stage ends with its slowest call, so a call that is not the
 * bottleneck gains nothing from a fast GPU; sent to a slower one that finishes it in time, it leaves the fast GPU
 * to a call that needs it. Inputs: each call's estimate on the fastest type, each candidate's load and estimate.
 * Trade-offs: "finishes in time" uses the serial model (load + t̂, as least-loaded does), which overstates a
 * batched server's finish, so it errs towards the policy's own choice; stages of one call are unchanged.
 */
export interface StagePlacementOps {
  fastest(call: ReleasedCall): number;
  candidates(call: ReleasedCall): Candidate[];
  assign(call: ReleasedCall): Assignment;
  commit(call: ReleasedCall, chosen: Candidate): Assignment;
  loadOf(instanceId: string): number;
}

/** One assignment per call, in the calls' order; after a failure every call not yet placed carries it. */
export function placeForMakespan(calls: readonly ReleasedCall[], ops: StagePlacementOps): Assignment[] {
  const order = calls.map((c, i) => ({ i, t: ops.fastest(c) })).sort((a, b) => b.t - a.t || a.i - b.i);
  const out: (Assignment | undefined)[] = calls.map(() => undefined);
  let finishBy: number | undefined;
  let failure: Assignment | undefined;
  for (const { i } of order) {
    const call = calls[i];
    if (call === undefined) continue;
    if (failure !== undefined) {
      out[i] = failure;
      continue;
    }
    if (finishBy === undefined) {
      const a = ops.assign(call);
      out[i] = a;
      if (!a.ok) failure = a;
      // Its instance's load now includes it: the serial finish of the stage's bottleneck.
      else finishBy = ops.loadOf(a.instanceId);
      continue;
    }
    let slowest: Candidate | undefined;
    for (const c of ops.candidates(call)) {
      if (c.load + c.estimate > finishBy + 1e-9) continue;
      if (slowest === undefined || c.estimate > slowest.estimate || (c.estimate === slowest.estimate && c.load < slowest.load)) slowest = c;
    }
    const a = slowest === undefined ? ops.assign(call) : ops.commit(call, slowest);
    out[i] = a;
    if (!a.ok) failure = a;
  }
  return out.map((a) => a ?? { ok: false, error: { code: "no_instance", message: "stage placement skipped a call" } });
}
