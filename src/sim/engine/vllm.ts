/**
 * The default engine: vLLM V1's scheduler as VLLM_API.md section 5 describes it, timed by the
 * fitted profile. Continuous batching; each step carries every running decode (one token each) and
 * then prefill chunks in admission order up to max_num_batched_tokens (chunked prefill); KV in paged
 * blocks; a decode that needs a block when none is free preempts the latest-admitted sequence
 * (recompute). Our queue stays in front: a call is admitted only at a step boundary with token
 * budget left, a free sequence slot and blocks for its prompt, so vLLM's own waiting list never
 * reorders what the queue policy decided.
 *
 * Step time = d·(1 + κ·(Σctx − max ctx)) + p·(tokens computed) + o·(prefills starting), with
 * (o, p, d) the profile's coefficients and κ the KV-read factor. At batch one this reduces to the
 * profile (plus one d per extra prefill chunk), so a lone call takes what the profile measured.
 */
import type { CostCoeffs } from "../../core/cost-model";
import type { InstanceCapacity } from "../../core/gpu";
import type { AdmissionSource, Engine, EngineCall, EngineStats, StepPlan } from "./types";

interface Seq {
  id: string;
  input: number;
  output: number;
  promptLen: number;
  computed: number;
  generated: number;
  blocks: number;
  started: boolean;
  /** Tokens this sequence carries in the planned step. */
  stepTokens: number;
  stepDecode: boolean;
}

export class VllmEngine implements Engine {
  private running: Seq[] = [];
  private readonly preempted: Seq[] = [];
  private readonly totalBlocks: number;
  private freeBlocks: number;
  /** The planned step's sequences; reused across steps (the simulator runs millions of them). */
  private readonly plan: Seq[] = [];
  private preemptions = 0;
  private stepsRun = 0;
  /** Ids of the calls that produced a token in the step last applied. */
  private readonly produced: string[] = [];

  constructor(
    private readonly cost: CostCoeffs,
    private readonly cap: InstanceCapacity,
    private readonly kvReadFactor: number,
  ) {
    this.totalBlocks = Math.floor(cap.kvTokens / cap.blockSize);
    this.freeBlocks = this.totalBlocks;
  }

  fits(call: EngineCall): boolean {
    return this.blocksFor(call.inputTokens + 1) <= this.totalBlocks;
  }

  planStep(source: AdmissionSource): StepPlan | null {
    this.plan.length = 0;
    let budget = this.cap.maxBatchedTokens;
    // Preemption only takes sequences from the end of `running`, at or after index i, so an index
    // walk stays valid while the list shrinks.
    for (let i = 0; i < this.running.length; i++) {
      const seq = this.running[i];
      if (seq === undefined || seq.computed < seq.promptLen) continue;
      const need = this.blocksFor(seq.computed + 1) - seq.blocks;
      if (need > 0 && !this.reserve(need, seq)) continue;
      this.schedule(seq, 1, true);
      budget -= 1;
    }
    for (const seq of this.running) {
      if (budget <= 0) break;
      if (seq.computed >= seq.promptLen) continue;
      const tokens = Math.min(seq.promptLen - seq.computed, budget);
      this.schedule(seq, tokens, false);
      budget -= tokens;
    }
    const admitted: string[] = [];
    while (budget > 0 && this.running.length < this.cap.maxSeqs) {
      const seq = this.nextWaiting(source);
      if (seq === undefined) break;
      this.running.push(seq);
      if (!seq.started) admitted.push(seq.id);
      const tokens = Math.min(seq.promptLen, budget);
      this.schedule(seq, tokens, false);
      budget -= tokens;
    }
    if (this.plan.length === 0) return null;
    return { durationS: this.stepTime(), admitted };
  }

  finishStep(): string[] {
    const finished: string[] = [];
    this.produced.length = 0;
    for (const seq of this.plan) {
      seq.started = true;
      seq.computed += seq.stepTokens;
      if (seq.stepDecode || seq.computed >= seq.promptLen) {
        seq.generated += 1;
        this.produced.push(seq.id);
      }
      if (seq.generated >= seq.output) {
        finished.push(seq.id);
        this.freeBlocks += seq.blocks;
        seq.blocks = 0;
      }
    }
    if (finished.length > 0) this.running = this.running.filter((s) => s.generated < s.output);
    this.plan.length = 0;
    this.stepsRun += 1;
    return finished;
  }

  /** The calls that produced a token in the step last applied by finishStep (the emulator streams them). */
  producedLastStep(): readonly string[] {
    return this.produced;
  }

  /**
   * Drops a call whose client went away, freeing its KV blocks. Only between steps (after
   * finishStep, before planStep). False if the engine does not hold it (it is still in the queue).
   */
  abort(id: string): boolean {
    // A planned step still counts the call and would free its blocks again in finishStep.
    if (this.plan.length > 0) throw new Error("VllmEngine.abort called between planStep and finishStep");
    const at = this.running.findIndex((s) => s.id === id);
    const seq = at >= 0 ? this.running.splice(at, 1)[0] : undefined;
    if (seq !== undefined) {
      this.freeBlocks += seq.blocks;
      seq.blocks = 0;
      return true;
    }
    const back = this.preempted.findIndex((s) => s.id === id);
    if (back < 0) return false;
    this.preempted.splice(back, 1);
    return true;
  }

  stats(): EngineStats {
    return {
      running: this.running.length,
      waiting: this.preempted.length,
      kvUsage: 1 - this.freeBlocks / this.totalBlocks,
      preemptions: this.preemptions,
      stepsRun: this.stepsRun,
    };
  }

  private schedule(seq: Seq, tokens: number, decode: boolean): void {
    seq.stepTokens = tokens;
    seq.stepDecode = decode;
    this.plan.push(seq);
  }

  private stepTime(): number {
    let ctxSum = 0;
    let ctxMax = 0;
    let tokens = 0;
    let starting = 0;
    for (const seq of this.plan) {
      const t = seq.stepTokens;
      const ctx = seq.computed + t;
      ctxSum += ctx;
      if (ctx > ctxMax) ctxMax = ctx;
      tokens += t;
      if (!seq.started) starting += 1;
    }
    const c = this.cost;
    return c.decodeS * (1 + this.kvReadFactor * (ctxSum - ctxMax)) + c.prefillS * tokens + c.overheadS * starting;
  }

  /** Preempted sequences first (vLLM puts them at the head of its waiting list), then our queue. */
  private nextWaiting(source: AdmissionSource): Seq | undefined {
    const back = this.preempted[0];
    if (back !== undefined) {
      const need = this.blocksFor(back.promptLen);
      if (need > this.freeBlocks) return undefined;
      this.preempted.shift();
      back.blocks = need;
      this.freeBlocks -= need;
      return back;
    }
    const head = source.peek();
    if (head === undefined) return undefined;
    const need = this.blocksFor(head.inputTokens);
    if (need > this.freeBlocks) return undefined;
    source.pop();
    this.freeBlocks -= need;
    return {
      id: head.id,
      input: head.inputTokens,
      output: Math.max(1, head.outputTokens),
      promptLen: head.inputTokens,
      computed: 0,
      generated: 0,
      blocks: need,
      started: false,
      stepTokens: 0,
      stepDecode: false,
    };
  }

  /** Finds `need` blocks for `seq`, preempting the latest-admitted sequences; false if `seq` itself went. */
  private reserve(need: number, seq: Seq): boolean {
    while (this.freeBlocks < need) {
      const victim = this.running.at(-1);
      if (victim === undefined) return false;
      this.preempt(victim);
      if (victim === seq) return false;
    }
    this.freeBlocks -= need;
    seq.blocks += need;
    return true;
  }

  private preempt(seq: Seq): void {
    const at = this.running.indexOf(seq);
    if (at >= 0) this.running.splice(at, 1);
    this.freeBlocks += seq.blocks;
    seq.blocks = 0;
    seq.computed = 0;
    seq.promptLen = seq.input + seq.generated;
    this.preempted.unshift(seq);
    this.preemptions += 1;
  }

  private blocksFor(tokens: number): number {
    return Math.ceil(tokens / this.cap.blockSize);
  }
}
