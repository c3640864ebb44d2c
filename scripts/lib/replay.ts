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
  bestEffort?: boolean;
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

/** A gateway and the tenant key its public routes need. */
export interface Gateway {
  url: string;
  apiKey: string;
}

/** Headers of a tenant request: its key, one connection per request, JSON. */
export function tenantHeaders(gw: Gateway, extra: Record<string, string> = {}): Record<string, string> {
  return { ...NO_KEEPALIVE, authorization: `Bearer ${gw.apiKey}`, "content-type": "application/json", ...extra };
}

/** A submission the gateway refused: its status and error code (e.g. 503 overloaded, 429 rate_limited). */
export class SubmitError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/**
 * Submits one workflow under a fresh idempotency key. A 503 that is not hexflow's own JSON error (the local
 * Worker restarting mid-request, as wrangler dev answers) is sent again with the same key, so the workflow
 * starts at most once; hexflow's own refusals (overloaded, rate limited) are the caller's to handle.
 */
export async function submitReplay(gw: Gateway, body: unknown, attempts = 3): Promise<string> {
  const key = `replay-${crypto.randomUUID()}`;
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${gw.url}/v1/workflows`, { method: "POST", headers: tenantHeaders(gw, { "idempotency-key": key }), body: JSON.stringify(body) });
    const text = await res.text();
    let json: { id?: string; error?: { code?: string; message: string } } = {};
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      // not JSON: reported below with the raw text
    }
    if (res.status === 503 && json.error === undefined && attempt < attempts) {
      await new Promise((r) => setTimeout(r, 500 * attempt));
      continue;
    }
    if (res.status !== 202 || json.id === undefined) throw new SubmitError(`submit failed: ${res.status} ${json.error?.message ?? text.slice(0, 300)}`, res.status, json.error?.code ?? null);
    return json.id;
  }
}

export async function getWorkflow(gw: Gateway, id: string): Promise<WorkflowStatus> {
  return (await (await fetch(`${gw.url}/v1/workflows/${id}`, { headers: tenantHeaders(gw) })).json()) as WorkflowStatus;
}

export const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);

/**
 * Polls workflows until each has ended (or the time runs out); `onEnd` hears each as it ends.
 * Returns the ended ones by id, so a caller can see which did not end in time.
 */
export async function waitForAll(
  base: Gateway,
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
