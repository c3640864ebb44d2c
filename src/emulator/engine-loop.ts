/**
 * Drives the simulator's vLLM engine model in scaled real time. Engine time is a virtual clock:
 * each step ends at the previous step's end plus its duration, and the loop sleeps until the wall
 * clock (x time scale) reaches that end. When timers fire late (at high time scales a step is well
 * under a millisecond), the loop runs every step that is already due in one go, so lateness never
 * accumulates: a call's end is off by at most one timer delay, not one per step.
 *
 * In front of the engine sits vLLM's own FCFS waiting list (the engine's AdmissionSource), so
 * `vllm:num_requests_waiting` is what it is on a real server. Each step the engine reports which
 * calls got a token (streamed one per step) and which finished; an aborted call leaves the engine
 * at the next step boundary, freeing its KV blocks.
 */
import { KV_READ_FACTOR_PER_TOKEN } from "../core/gpu";
import type { AdmissionSource, EngineCall } from "../sim/engine/types";
import { VllmEngine } from "../sim/engine/vllm";
import type { EmulatorConfig } from "./config";
import type { EmulatorMetrics } from "./metrics";

export interface Job {
  id: string;
  promptTokens: number;
  /** The true output length: the engine generates exactly this many tokens. */
  outputTokens: number;
  /** How the request ends unless aborted, for `vllm:request_success_total`. */
  finishReason: "stop" | "length";
  /** Tokens produced since the previous call, `done` with the last one. Never called after an abort. */
  onTokens(count: number, done: boolean): void;
}

interface Live {
  job: Job;
  arrivalS: number;
  admittedS: number | undefined;
  lastTokenS: number | undefined;
  pending: number;
  /** Wall-clock ms of the last chunk handed to the client. */
  lastFlushMs: number;
  done: boolean;
  aborted: boolean;
}

/** Bounds one synchronous catch-up run so sockets are served even when the loop cannot keep up. */
const MAX_STEPS_PER_TICK = 256;

export class EngineLoop {
  private readonly engine: VllmEngine;
  private readonly waiting: EngineCall[] = [];
  private readonly popped: EngineCall[] = [];
  private readonly live = new Map<string, Live>();
  private readonly source: AdmissionSource;
  private step: { endS: number } | undefined;
  private idle = true;
  private engineTimeS = 0;
  /** Cancels the pending wake-up (a timer or an immediate), if any. */
  private cancelWake: (() => void) | undefined;
  private stopped = false;
  /** Calls aborted while a step was planned: the engine may only drop them once it is applied. */
  private readonly abortAfterStep: string[] = [];
  private preemptionsSeen = 0;
  private readonly t0 = performance.now();

  constructor(
    private readonly cfg: EmulatorConfig,
    private readonly metrics: EmulatorMetrics,
  ) {
    this.engine = new VllmEngine(cfg.cost, cfg.capacity, KV_READ_FACTOR_PER_TOKEN[cfg.model]);
    this.source = {
      peek: () => this.waiting[0],
      pop: () => {
        const call = this.waiting.shift();
        if (call !== undefined) this.popped.push(call);
        return call;
      },
    };
    this.refreshLoad();
  }

  /** Emulated seconds since the loop started. */
  nowS(): number {
    return ((performance.now() - this.t0) / 1000) * this.cfg.timeScale;
  }

  /** Whether a sequence of this many tokens (prompt + output) can ever be held in the KV cache. */
  fits(tokens: number): boolean {
    return this.engine.fits({ id: "", inputTokens: tokens, outputTokens: 1 });
  }

  submit(job: Job): void {
    if (this.stopped) return;
    this.live.set(job.id, { job, arrivalS: this.nowS(), admittedS: undefined, lastTokenS: undefined, pending: 0, lastFlushMs: Number.NEGATIVE_INFINITY, done: false, aborted: false });
    this.waiting.push({ id: job.id, inputTokens: job.promptTokens, outputTokens: job.outputTokens });
    this.refreshLoad();
    this.wake();
  }

  /** A client went away: counts as `abort`; its KV blocks are freed at once or at the end of the step in flight. */
  abort(id: string): void {
    const l = this.live.get(id);
    if (l === undefined || l.aborted || l.done) return;
    l.aborted = true;
    this.metrics.finished("abort", this.nowS() - l.arrivalS);
    const at = this.waiting.findIndex((c) => c.id === id);
    if (at >= 0) {
      this.waiting.splice(at, 1);
      this.live.delete(id);
      this.refreshLoad();
    } else if (this.step === undefined) {
      // No step in flight, so the engine may drop it right away.
      this.dropFromEngine(id);
      this.refreshLoad();
      // The freed blocks may let a waiting call in.
      this.wake();
    } else {
      this.abortAfterStep.push(id);
    }
  }

  stop(): void {
    this.stopped = true;
    this.clearTimer();
    this.live.clear();
    this.waiting.length = 0;
  }

  private wake(): void {
    if (this.cancelWake !== undefined || this.stopped) return;
    this.tickSoon();
  }

  private tickSoon(): void {
    const handle = setImmediate(() => this.tick());
    this.cancelWake = () => clearImmediate(handle);
  }

  private tickIn(delayMs: number): void {
    const handle = setTimeout(() => this.tick(), delayMs);
    this.cancelWake = () => clearTimeout(handle);
  }

  private clearTimer(): void {
    this.cancelWake?.();
    this.cancelWake = undefined;
  }

  private tick(): void {
    this.cancelWake = undefined;
    const now = this.nowS();
    for (let steps = 0; !this.stopped; steps++) {
      if (steps >= MAX_STEPS_PER_TICK) {
        this.tickSoon();
        break;
      }
      const step = this.step ?? this.planNext(now);
      if (step === undefined) break;
      if (step.endS > now) {
        const delayMs = ((step.endS - now) / this.cfg.timeScale) * 1000;
        // A timer never fires sooner than ~1 ms; at high time scales a step is shorter than that,
        // so sub-millisecond waits yield to I/O once and look again instead of oversleeping.
        if (delayMs < 1) this.tickSoon();
        else this.tickIn(delayMs);
        break;
      }
      this.completeStep(step.endS);
    }
    this.deliver();
    this.refreshLoad();
  }

  private planNext(now: number): { endS: number } | undefined {
    const plan = this.engine.planStep(this.source);
    if (plan === null) {
      this.idle = true;
      return undefined;
    }
    // Steps run back to back while busy; after idling the clock restarts at the present. While the
    // loop catches up on late timers a step may start (in engine time) a little before a call it
    // admits arrived: pushing the clock forward instead would let every late timer stretch the
    // engine's timeline, and the call's delivery is late by as much anyway.
    const startS = this.idle ? now : this.engineTimeS;
    this.idle = false;
    for (const call of this.popped) {
      const l = this.live.get(call.id);
      if (l !== undefined && l.admittedS === undefined) {
        l.admittedS = startS;
        this.metrics.queued(startS - l.arrivalS);
      }
    }
    this.popped.length = 0;
    this.step = { endS: startS + plan.durationS };
    return this.step;
  }

  private completeStep(endS: number): void {
    const finished = this.engine.finishStep();
    this.step = undefined;
    this.engineTimeS = endS;
    // The engine reuses this array on its next step; it is read before then.
    for (const id of this.engine.producedLastStep()) {
      const l = this.live.get(id);
      if (l === undefined || l.aborted) continue;
      if (l.lastTokenS === undefined) {
        this.metrics.firstToken(endS - l.arrivalS, l.job.promptTokens);
        this.metrics.tokens(1, undefined);
      } else {
        this.metrics.tokens(1, endS - l.lastTokenS);
      }
      l.lastTokenS = endS;
      l.pending += 1;
    }
    for (const id of finished) {
      const l = this.live.get(id);
      if (l === undefined) continue;
      if (l.aborted) {
        this.live.delete(id);
        continue;
      }
      l.done = true;
      this.metrics.finished(l.job.finishReason, endS - l.arrivalS);
    }
    const preemptions = this.engine.stats().preemptions;
    this.metrics.addPreemptions(preemptions - this.preemptionsSeen);
    this.preemptionsSeen = preemptions;
    for (const id of this.abortAfterStep) this.dropFromEngine(id);
    this.abortAfterStep.length = 0;
  }

  /** Between steps only. A call that finished in the step just applied is already gone from the engine. */
  private dropFromEngine(id: string): void {
    this.engine.abort(id);
    this.live.delete(id);
  }

  private deliver(): void {
    const wallMs = performance.now();
    for (const [id, l] of this.live) {
      if (l.aborted || (l.pending === 0 && !l.done)) continue;
      // Held tokens go out with a later step's (the engine keeps stepping while the call runs) or with the last.
      if (!l.done && wallMs - l.lastFlushMs < this.cfg.streamIntervalMs) continue;
      l.lastFlushMs = wallMs;
      const count = l.pending;
      l.pending = 0;
      if (l.done) this.live.delete(id);
      l.job.onTokens(count, l.done);
    }
  }

  private refreshLoad(): void {
    const s = this.engine.stats();
    this.metrics.setLoad(s.running, s.waiting + this.waiting.length, s.kvUsage);
  }
}
