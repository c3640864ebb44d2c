import type { WorkflowSpec } from "../../src/core/workflow";

/** A workflow spec as the gateway's replay request. */
export function replayRequest(spec: WorkflowSpec, sloMs?: number): { kind: "replay"; calls: { step: string; inputTokens: number; outputTokens: number }[]; sloMs?: number } {
  const calls = spec.stages.flatMap((s) => s.calls.map((c) => ({ step: c.step, inputTokens: c.inputTokens, outputTokens: c.outputTokens })));
  return sloMs === undefined ? { kind: "replay", calls } : { kind: "replay", calls, sloMs };
}

export interface WorkflowStatus {
  id: string;
  status: string;
  createdAt: string;
  latencyMs: number | null;
  sloMs: number | null;
  sloMet: boolean | null;
  error?: { code: string; message: string };
  stages: {
    step: string;
    calls: {
      id: string;
      instance: string;
      outputTokens: number;
      completionTokens: number | null;
      releasedMs: number | null;
      enqueuedMs: number | null;
      admittedMs: number | null;
      finishedMs: number | null;
    }[];
  }[];
}

/**
 * `wrangler dev`'s proxy may close an idle keep-alive socket just as the client reuses it (an
 * ECONNRESET that a POST must not retry blindly), so local clients open one connection per request.
 */
export const NO_KEEPALIVE = { connection: "close" } as const;

export async function submitReplay(base: string, body: unknown): Promise<string> {
  const res = await fetch(`${base}/v1/workflows`, { method: "POST", headers: { ...NO_KEEPALIVE, "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  let json: { id?: string; error?: { message: string } } = {};
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    // not JSON: reported below with the raw text
  }
  if (res.status !== 202 || json.id === undefined) throw new Error(`submit failed: ${res.status} ${json.error?.message ?? text.slice(0, 300)}`);
  return json.id;
}

export async function getWorkflow(base: string, id: string): Promise<WorkflowStatus> {
  return (await (await fetch(`${base}/v1/workflows/${id}`, { headers: NO_KEEPALIVE })).json()) as WorkflowStatus;
}

export const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);

/**
 * Polls workflows until each has ended (or the time runs out); `onEnd` hears each as it ends.
 * Returns the ended ones by id, so a caller can see which did not end in time.
 */
export async function waitForAll(
  base: string,
  ids: readonly string[],
  o: { pollMs: number; timeoutMs: number; onEnd?: (w: WorkflowStatus, ended: number) => void },
): Promise<Map<string, WorkflowStatus>> {
  const done = new Map<string, WorkflowStatus>();
  const deadline = Date.now() + o.timeoutMs;
  while (done.size < ids.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, o.pollMs));
    for (const id of ids) {
      if (done.has(id)) continue;
      const w = await getWorkflow(base, id);
      if (!TERMINAL.has(w.status)) continue;
      done.set(id, w);
      o.onEnd?.(w, done.size);
    }
  }
  return done;
}
