/**
 * The measuring half of `npm run calibrate`: prompts of a requested token length, warm-up, the
 * (input, output) grid one request at a time, and the concurrency sweep of one decode-heavy request.
 *
 * With server timing (the default when /metrics has vLLM's request histograms) every figure is the
 * server's own. With wall timing, times are converted to the server's clock: (wall − idle round
 * trip) × time scale for the parts measured from the send, and wall × time scale for the parts
 * between two chunks of one stream; timer and HTTP jitter then enter the fit, multiplied by the
 * time scale on an emulator (docs/calibration.md).
 */
import type { BatchSample, RequestTiming } from "../../src/core/cost-fit";
import { createRng, type Rng, uniformInt } from "../../src/core/rng";
import type { CalibrateArgs } from "./calibrate-args";
import { type CalibrationClient, ServerError, type StreamTiming } from "./calibrate-client";
import { ServerTimer } from "./calibrate-server-timing";
import { progressBars } from "./progress";

/** Short, common English words: one token each for Llama-style tokenizers (after a space). */
const WORDS = ["time", "people", "year", "way", "day", "man", "thing", "woman", "life", "child", "world", "school", "state", "family", "student", "group", "country", "problem", "hand", "part", "place", "case", "week", "company", "system", "program", "question", "work", "number", "night", "point", "home", "water", "room", "mother", "area", "money", "story", "fact", "month", "lot", "right", "study", "book", "eye", "job", "word", "business", "issue", "side"];

/**
 * Random words, different from the first token on, so that vLLM's prefix cache (on by default in V1)
 * can never skip a measured prefill.
 */
function promptOf(rng: Rng, words: number): string {
  return Array.from({ length: Math.max(1, words) }, () => WORDS[uniformInt(rng, WORDS.length)] ?? "time").join(" ");
}

/** Tokens per word and fixed tokens (BOS, …), learnt from the server's own usage.prompt_tokens. */
interface TokenRate {
  perWord: number;
  fixed: number;
}

function wordsFor(rate: TokenRate, tokens: number): number {
  return Math.max(1, Math.round((tokens - rate.fixed) / rate.perWord));
}

export interface Measurement {
  /** Whose clock timed the requests: the server's /metrics histograms, or this machine's. */
  timing: "server" | "wall";
  /** Mean server-side queue time of the grid's requests (server timing with the queue histogram only). */
  meanQueueS: number | undefined;
  timeScale: number;
  timeScaleSource: "flag" | "server" | "default";
  roundTripMs: number;
  grid: RequestTiming[];
  batch: (BatchSample & { contextTokens: number })[];
  wallS: number;
}

export async function measure(client: CalibrationClient, args: CalibrateArgs, maxModelLen: number | undefined): Promise<Measurement> {
  const started = performance.now();
  const longest = Math.max(...args.inputs, args.batchInput) + Math.max(...args.outputs, args.batchOutput);
  if (maxModelLen !== undefined && longest > maxModelLen) {
    throw new ServerError(`the grid's longest request (${longest} tokens) exceeds the server's max_model_len ${maxModelLen}; lower --inputs/--outputs`);
  }
  const reported = args.timeScale === undefined ? await client.reportedTimeScale() : undefined;
  const timeScale = args.timeScale ?? reported ?? 1;
  const timeScaleSource = args.timeScale !== undefined ? "flag" : reported !== undefined ? "server" : "default";
  const rng = createRng(0x5eed ^ Math.floor(Math.random() * 0x7fffffff));

  // Two probes learn the tokenizer's rate; they and the warm-ups also warm the server (CUDA graphs, allocator).
  const probe = async (words: number) => (await client.stream(promptOf(rng, words), 1)).promptTokens;
  const [a, b] = [await probe(50), await probe(400)];
  const perWord = (b - a) / 350;
  if (!(perWord > 0)) throw new ServerError(`the server's prompt token counts do not grow with the prompt (${a} → ${b})`);
  const rate = { perWord, fixed: a - 50 * perWord };
  for (let i = 0; i < args.warmup; i++) await client.stream(promptOf(rng, wordsFor(rate, 128)), 16);
  const roundTripMs = await client.idleRoundTripMs();
  // Read after the probes and warm-ups, so the histograms exist even on a server that creates them lazily.
  const timer = new ServerTimer(client, args.model, args.url);
  const serverTimed = args.timing !== "wall" && (await timer.available());
  if (args.timing === "server" && !serverTimed) {
    throw new ServerError(`${args.url}/metrics has no vllm:time_to_first_token_seconds and vllm:e2e_request_latency_seconds histograms; use --timing wall`);
  }
  const queues: number[] = [];

  const toServerS = (wallMs: number) => (Math.max(0, wallMs) / 1000) * timeScale;
  const bars = progressBars();
  const points = args.inputs.flatMap((input) => args.outputs.map((output) => ({ input, output })));
  const gridBar = bars.run("grid (one request at a time)", points.length * args.reps);
  const grid: RequestTiming[] = [];
  try {
    // Repetitions outermost, so slow drift (thermal, other tenants) spreads over every point.
    for (let r = 0; r < args.reps; r++) {
      for (const { input, output } of points) {
        gridBar.submitted();
        const prompt = () => promptOf(rng, wordsFor(rate, input));
        if (serverTimed) {
          const s = await timer.request(prompt, output);
          checkOutput(s.t, output);
          if (s.queueS !== undefined) queues.push(s.queueS);
          grid.push({ inputTokens: s.t.promptTokens, outputTokens: s.t.completionTokens, ttftS: s.ttftS, totalS: s.totalS, point: `${input}x${output}` });
        } else {
          const t = await client.stream(prompt(), output);
          checkOutput(t, output);
          grid.push({
            inputTokens: t.promptTokens,
            outputTokens: t.completionTokens,
            ttftS: toServerS(t.firstMs - t.sentMs - roundTripMs),
            totalS: toServerS(t.endMs - t.sentMs - roundTripMs),
            point: `${input}x${output}`,
          });
        }
        gridBar.ended();
      }
    }
    gridBar.done(`${grid.length} requests`);

    const batch: Measurement["batch"] = [];
    const levels = args.concurrency.length > 1 ? args.concurrency : [];
    const batchBar = bars.run("batch slope (concurrency sweep)", levels.reduce((s, c) => s + c * args.reps, 0));
    for (let r = 0; r < args.reps; r++) {
      for (const c of levels) {
        const run = async () => {
          batchBar.submitted();
          const t = await client.stream(promptOf(rng, wordsFor(rate, args.batchInput)), args.batchOutput);
          checkOutput(t, args.batchOutput);
          batchBar.ended();
          return t;
        };
        const level = serverTimed ? await timer.concurrent(c, run) : { ts: await Promise.all(Array.from({ length: c }, run)), interTokenS: undefined };
        const context = (t: StreamTiming) => t.promptTokens + t.completionTokens / 2;
        if (level.interTokenS !== undefined) {
          // The server's mean over every token of the level: one sample, weighted like a lone request's.
          batch.push({ concurrency: c, interTokenS: level.interTokenS, contextTokens: level.ts.reduce((a, t) => a + context(t), 0) / c });
        } else {
          for (const t of level.ts) batch.push({ concurrency: c, interTokenS: toServerS(t.endMs - t.firstMs) / (t.completionTokens - 1), contextTokens: context(t) });
        }
      }
    }
    batchBar.done(levels.length === 0 ? "skipped (one concurrency level)" : `${batch.length} requests`);
    const meanQueueS = queues.length > 0 ? queues.reduce((a, b) => a + b, 0) / queues.length : undefined;
    return { timing: serverTimed ? "server" : "wall", meanQueueS, timeScale, timeScaleSource, roundTripMs, grid, batch, wallS: (performance.now() - started) / 1000 };
  } finally {
    bars.stop();
  }
}

/** ignore_eos is vLLM's; a server that stops early anyway would silently skew the decode fit. */
function checkOutput(t: StreamTiming, asked: number): void {
  if (t.completionTokens !== asked) {
    throw new ServerError(`asked for ${asked} output tokens, got ${t.completionTokens}: the server does not honour ignore_eos/max_tokens`);
  }
}
