import { env } from "cloudflare:workers";
import { REFERENCE_POOL } from "../../src/sim/cluster";
import { startWorkflow } from "../../src/core/workflow-run";
import { percentile } from "../../src/core/stats";

export interface LoadStep {
  offered: number;
  achieved: number;
  decisions: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
}

const SPEC = { kind: "replay", template: ["retriever"], stages: [{ step: "retriever", calls: [{ step: "retriever", inputTokens: 306, outputTokens: 7 }] }] };

const REPORT_MS = 10;

/** The reference pool on one coordinator; the instances' addresses are never called. */
export async function registerPool(pool: string): Promise<void> {
  const stub = env.COORDINATOR.getByName(pool);
  for (const [i, gpu] of REFERENCE_POOL.entries()) {
    const r = await stub.register(pool, { id: `${gpu.toLowerCase()}-${i}`, url: "http://127.0.0.1:9", gpu });
    if (!r.ok) throw new Error(r.error.message);
  }
}

/**
 * Open-loop stage dispatches at `rate` per second for `seconds`: each is one releaseStage RPC (a
 * one-call stage, so one decision) whose call then starts and finishes at once, reported in the
 * batches an instance sends (gpu-instance.ts), so the coordinator carries its whole per-call work and
 * its load stays steady. Latency is the
 * releaseStage round trip, at workerd's 1 ms clock resolution.
 */
export async function driveDispatches(pool: string, rate: number, seconds: number): Promise<LoadStep> {
  const stub = env.COORDINATOR.getByName(pool);
  const latencies: number[] = [];
  let failed = 0;
  let issued = 0;
  const inflight: Promise<void>[] = [];
  const total = Math.round(rate * seconds);
  const t0 = Date.now();
  const one = async (i: number): Promise<void> => {
    const start = Date.now();
    const r = await stub.releaseStage(startWorkflow(`wf-${rate}-${i}`, SPEC, 0, 600));
    latencies.push(Date.now() - start);
    if (!r.ok) {
      failed += 1;
      return;
    }
    for (const d of r.dispatched) {
      const b = reports.get(d.instanceId) ?? { started: [], finished: [] };
      b.started.push({ callId: d.call.id, atS: 0 });
      b.finished.push(d.call.id);
      reports.set(d.instanceId, b);
    }
  };
  // What the instances send: per instance, one report of its starts and finishes per LOAD_REPORT_MS.
  const reports = new Map<string, { started: { callId: string; atS: number }[]; finished: string[] }>();
  const flush = async (): Promise<void> => {
    const batches = [...reports];
    reports.clear();
    await Promise.all(batches.map(([id, b]) => stub.callsChanged(id, b.started, b.finished)));
  };
  let flushing = true;
  const flusher = (async () => {
    while (flushing) {
      await new Promise((r) => setTimeout(r, REPORT_MS));
      await flush();
    }
  })();
  while (issued < total) {
    const due = Math.min(total, Math.floor(((Date.now() - t0) / 1000) * rate) + 1);
    while (issued < due) inflight.push(one(issued++));
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  flushing = false;
  await flusher;
  await flush();
  const elapsedS = Math.max(seconds, (Date.now() - t0) / 1000);
  return { offered: rate, achieved: total / elapsedS, decisions: total - failed, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), failed };
}
