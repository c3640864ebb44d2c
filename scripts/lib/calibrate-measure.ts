/**
 * The measuring half of `npm run calibrate`: prompts of a requested token length, warm-up, the
 * (input, output) grid one request at a time, and the concurrency sweep of one decode-heavy request.
 *
 * Times are converted to the server's clock: (wall − idle round trip) × time scale for the parts
 * measured from the send, and wall × time scale for the parts between two chunks of one stream.
 * Removing the round trip matters for an emulator (it would be multiplied by the time scale) and is
 * what a profile means for a real server too: the server's time, not this machine's network.
 */
import type { BatchSample, RequestTiming } from "../../src/core/cost-fit";
import { createRng, type Rng, uniformInt } from "../../src/core/rng";
import type { CalibrateArgs } from "./calibrate-args";
import { type CalibrationClient, ServerError, type StreamTiming } from "./calibrate-client";
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
        const t = await client.stream(promptOf(rng, wordsFor(rate, input)), output);
        checkOutput(t, output);
        grid.push({
          inputTokens: t.promptTokens,
          outputTokens: t.completionTokens,
          ttftS: toServerS(t.firstMs - t.sentMs - roundTripMs),
          totalS: toServerS(t.endMs - t.sentMs - roundTripMs),
          point: `${input}x${output}`,
        });
        gridBar.ended();
      }
    }
    gridBar.done(`${grid.length} requests`);

    const batch: Measurement["batch"] = [];
    const levels = args.concurrency.length > 1 ? args.concurrency : [];
    const batchBar = bars.run("batch slope (concurrency sweep)", levels.reduce((s, c) => s + c * args.reps, 0));
    for (let r = 0; r < args.reps; r++) {
      for (const c of levels) {
        const runs = Array.from({ length: c }, async () => {
          batchBar.submitted();
          const t = await client.stream(promptOf(rng, wordsFor(rate, args.batchInput)), args.batchOutput);
          checkOutput(t, args.batchOutput);
          batchBar.ended();
          return t;
        });
        for (const t of await Promise.all(runs)) {
          batch.push({
            concurrency: c,
            interTokenS: toServerS(t.endMs - t.firstMs) / (t.completionTokens - 1),
            contextTokens: t.promptTokens + t.completionTokens / 2,
          });
        }
      }
    }
    batchBar.done(levels.length === 0 ? "skipped (one concurrency level)" : `${batch.length} requests`);
    return { timeScale, timeScaleSource, roundTripMs, grid, batch, wallS: (performance.now() - started) / 1000 };
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
