/** A tiny client for the emulator tests: JSON posts, SSE reading and /metrics look-ups. */
import { z } from "zod";

export const MODEL = "llama-3.1-70b";

export function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** Sizes stated in hexflow's headers, so the tests do not depend on the text-length estimate. */
export function sized(input: number, output: number): Record<string, string> {
  return { "x-hexflow-prompt-tokens": String(input), "x-hexflow-output-tokens": String(output) };
}

/** The `data:` payloads of an SSE body, in order, with `[DONE]` kept as the string. */
export async function readSse(res: Response): Promise<string[]> {
  const text = await res.text();
  const events: string[] = [];
  for (const block of text.split("\n\n")) {
    if (block.trim() === "") continue;
    if (!block.startsWith("data: ")) throw new Error(`not an SSE data event: ${block}`);
    events.push(block.slice("data: ".length));
  }
  return events;
}

/** One scrape of the emulator's /metrics: look up series by name and (some) labels. */
export async function scrape(base: string): Promise<(name: string, labels?: Record<string, string>) => number> {
  const lines = (await (await fetch(`${base}/metrics`)).text()).split("\n");
  return (name, labels = {}) => {
    for (const line of lines) {
      if (line.startsWith("#")) continue;
      const m = /^([^{\s]+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
      if (m === null || m[1] !== name) continue;
      const set = m[2] ?? "";
      if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) return Number(m[3]);
    }
    throw new Error(`no series ${name} ${JSON.stringify(labels)} in /metrics`);
  };
}

export async function metric(base: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  return (await scrape(base))(name, labels);
}

export const UsageSchema = z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });

export const ErrorBodySchema = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.null(), code: z.number() }),
});

export async function until(check: () => Promise<boolean>, timeoutMs = 2_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (performance.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error("condition not met in time");
}
