import type { WorkflowSpec } from "../../src/core/workflow";

/** A workflow spec as the gateway's replay request. */
export function replayRequest(spec: WorkflowSpec, sloMs?: number): { kind: "replay"; calls: { step: string; inputTokens: number; outputTokens: number }[]; sloMs?: number } {
  const calls = spec.stages.flatMap((s) => s.calls.map((c) => ({ step: c.step, inputTokens: c.inputTokens, outputTokens: c.outputTokens })));
  return sloMs === undefined ? { kind: "replay", calls } : { kind: "replay", calls, sloMs };
}

export interface WorkflowStatus {
  id: string;
  status: string;
  latencyMs: number | null;
  sloMs: number | null;
  sloMet: boolean | null;
  error?: { code: string; message: string };
  stages: { step: string; calls: { id: string; instance: string; outputTokens: number; completionTokens: number | null }[] }[];
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
