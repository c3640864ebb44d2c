/**
 * The calibrator's view of a vLLM server: its models, its time scale (emulators only), the idle
 * round trip, and one streamed completion timed on the wall clock. Every body is parsed with zod.
 */
import { z } from "zod";

/** A server answered badly or not at all: one line for the user, exit code 1. */
export class ServerError extends Error {}

const ModelsSchema = z.object({ data: z.array(z.object({ id: z.string(), max_model_len: z.number().int().positive().nullish() })) });

const UsageSchema = z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() });

const ChunkSchema = z.object({
  choices: z.array(z.object({ text: z.string().nullish(), finish_reason: z.string().nullish() })),
  usage: UsageSchema.nullish(),
});

export interface StreamTiming {
  /** performance.now() milliseconds: request sent, first token chunk, last chunk. */
  sentMs: number;
  firstMs: number;
  endMs: number;
  promptTokens: number;
  completionTokens: number;
}

export class CalibrationClient {
  constructor(
    private readonly url: string,
    private readonly model: string,
    private readonly apiKey: string | undefined,
    private readonly timeoutMs: number,
  ) {}

  private headers(): Record<string, string> {
    return { "content-type": "application/json", ...(this.apiKey === undefined ? {} : { authorization: `Bearer ${this.apiKey}` }) };
  }

  private async get(path: string): Promise<Response> {
    try {
      return await fetch(`${this.url}${path}`, { headers: this.headers(), signal: AbortSignal.timeout(30_000) });
    } catch (e) {
      throw new ServerError(`cannot reach ${this.url}${path}: ${describe(e)}`);
    }
  }

  /** The model's context limit, if the server states it; fails if it does not serve the model. */
  async checkModel(): Promise<number | undefined> {
    const res = await this.get("/v1/models");
    if (!res.ok) throw new ServerError(`${this.url}/v1/models answered ${res.status}`);
    const parsed = ModelsSchema.safeParse(await res.json().catch(() => undefined));
    if (!parsed.success) throw new ServerError(`${this.url}/v1/models is not an OpenAI model list`);
    const m = parsed.data.data.find((d) => d.id === this.model);
    if (m === undefined) throw new ServerError(`${this.url} does not serve model "${this.model}" (it serves: ${parsed.data.data.map((d) => d.id).join(", ")})`);
    return m.max_model_len ?? undefined;
  }

  /** The server's Prometheus text, or undefined if it has no /metrics. */
  async metricsText(): Promise<string | undefined> {
    const res = await this.get("/metrics").catch(() => undefined);
    if (res === undefined || !res.ok) return undefined;
    return await res.text();
  }

  /** An emulator states its time scale in /metrics (hexflow_emulator_time_scale); a real vLLM does not. */
  async reportedTimeScale(): Promise<number | undefined> {
    const text = await this.metricsText();
    if (text === undefined) return undefined;
    const m = /^hexflow_emulator_time_scale(?:\{[^}]*\})?\s+(\S+)/m.exec(text);
    const k = Number(m?.[1]);
    return m !== null && Number.isFinite(k) && k > 0 ? k : undefined;
  }

  /** Median wall milliseconds of `n` idle GET /health round trips: the network share of every measured request. */
  async idleRoundTripMs(n = 15): Promise<number> {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const res = await this.get("/health");
      await res.arrayBuffer();
      if (!res.ok) throw new ServerError(`${this.url}/health answered ${res.status}`);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)] ?? 0;
  }

  /** One streamed completion of exactly `maxTokens` tokens (ignore_eos), timed on this machine's clock. */
  async stream(prompt: string, maxTokens: number): Promise<StreamTiming> {
    const body = JSON.stringify({
      model: this.model,
      prompt,
      max_tokens: maxTokens,
      // vLLM's extension: no early stop at EOS, so the output is as long as asked.
      ignore_eos: true,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    const sentMs = performance.now();
    let res: Response;
    try {
      res = await fetch(`${this.url}/v1/completions`, { method: "POST", headers: this.headers(), body, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (e) {
      throw new ServerError(`POST ${this.url}/v1/completions failed: ${describe(e)}`);
    }
    if (!res.ok || res.body === null) {
      const text = (await res.text().catch(() => "")).replace(/\s+/g, " ").slice(0, 300);
      throw new ServerError(`POST ${this.url}/v1/completions answered ${res.status}: ${text}`);
    }
    let firstMs: number | undefined;
    let endMs = sentMs;
    let usage: z.infer<typeof UsageSchema> | undefined;
    let buffered = "";
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const now = performance.now();
        buffered += decoder.decode(value, { stream: true });
        const events = buffered.split(/\r?\n\r?\n/);
        buffered = events.pop() ?? "";
        for (const event of events) {
          const data = event.split(/\r?\n/).find((l) => l.startsWith("data:"))?.slice(5).trim();
          if (data === undefined || data === "[DONE]") continue;
          const chunk = ChunkSchema.safeParse(JSONparse(data));
          if (!chunk.success) throw new ServerError(`unexpected stream chunk from ${this.url}: ${data.slice(0, 200)}`);
          if (chunk.data.choices.length > 0) {
            firstMs ??= now;
            endMs = now;
          }
          if (chunk.data.usage !== undefined && chunk.data.usage !== null) usage = chunk.data.usage;
        }
      }
    } catch (e) {
      if (e instanceof ServerError) throw e;
      throw new ServerError(`stream from ${this.url} broke: ${describe(e)}`);
    }
    if (firstMs === undefined) throw new ServerError(`${this.url} streamed no tokens`);
    if (usage === undefined) throw new ServerError(`${this.url} sent no usage (stream_options.include_usage); cannot count tokens`);
    return { sentMs, firstMs, endMs, promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens };
  }
}

function JSONparse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const cause = e.cause instanceof Error ? ` (${e.cause.message})` : "";
    return `${e.message}${cause}`;
  }
  return String(e);
}
