/**
 * The authors' engine (simulator/core/engine_optimized.py), for parity runs: a step either prefills
 * ONE call alone (the queue's head, if the 0.95 KV watermark allows) or decodes every running call
 * by one token in a step whose time does not depend on the batch size. Prefill time is the profile's
 * latency minus output × the fixed decode time per token, as their obtain_latency.py computes it;
 * decode time is that fixed per-token constant. KV capacity is their one-GPU, 4-bit planner's.
 */
import { PARITY_DECODE_S, estimateSeconds, type CostCoeffs } from "../../core/cost-model";
import type { AdmissionSource, Engine, EngineCall, EngineStats, StepPlan } from "./types";

interface Seq {
  id: string;
  input: number;
  output: number;
  generated: number;
  blocks: number;
}

const BLOCK = 16;

export class ParityEngine implements Engine {
  private readonly running: Seq[] = [];
  private readonly maxBlocks: number;
  private allocated = 0;
  private prefilling: Seq | undefined;
  private decoding: Seq[] = [];
  private stepsRun = 0;
  private readonly decodeS: number;

  constructor(
    private readonly cost: CostCoeffs,
    gpu: keyof typeof PARITY_DECODE_S,
    kvTokens: number,
  ) {
    this.maxBlocks = Math.floor(kvTokens / BLOCK);
    this.decodeS = PARITY_DECODE_S[gpu];
  }

  fits(call: EngineCall): boolean {
    return Math.ceil(call.inputTokens / BLOCK) <= this.maxBlocks * 0.95;
  }

  planStep(source: AdmissionSource): StepPlan | null {
    this.prefilling = undefined;
    this.decoding = [];
    const head = source.peek();
    if (head !== undefined && this.maxBlocks * 0.95 - this.allocated >= Math.ceil(head.inputTokens / BLOCK)) {
      source.pop();
      const blocks = Math.ceil(head.inputTokens / BLOCK);
      this.allocated += blocks;
      this.prefilling = { id: head.id, input: head.inputTokens, output: Math.max(1, head.outputTokens), generated: 0, blocks };
      const total = estimateSeconds(this.cost, head.inputTokens, head.outputTokens);
      return { durationS: Math.max(0, total - head.outputTokens * this.decodeS), admitted: [head.id] };
    }
    for (const seq of this.running) {
      const need = Math.ceil((seq.input + seq.generated + 1) / BLOCK) - seq.blocks;
      if (need > 0 && this.maxBlocks - this.allocated < need) continue; // their _decode skips it this step
      this.allocated += Math.max(0, need);
      seq.blocks += Math.max(0, need);
      this.decoding.push(seq);
    }
    // Their code would crash on a batch with no allocatable sequence; decoding without growing the
    // KV blocks is the closest behaviour that cannot deadlock.
    if (this.decoding.length === 0) this.decoding = [...this.running];
    if (this.decoding.length === 0) return null;
    return { durationS: this.decodeS, admitted: [] };
  }

  finishStep(): string[] {
    this.stepsRun += 1;
    if (this.prefilling !== undefined) {
      this.running.push(this.prefilling);
      this.prefilling = undefined;
      return [];
    }
    const finished: string[] = [];
    for (const seq of this.decoding) {
      seq.generated += 1;
      if (seq.generated >= seq.output) {
        finished.push(seq.id);
        this.allocated -= seq.blocks;
        this.running.splice(this.running.indexOf(seq), 1);
      }
    }
    this.decoding = [];
    return finished;
  }

  stats(): EngineStats {
    return { running: this.running.length, waiting: 0, kvUsage: this.allocated / this.maxBlocks, preemptions: 0, stepsRun: this.stepsRun };
  }
}
