/**
 * vLLM's Prometheus series (VLLM_API section 4), under vLLM's names, labels and buckets, so a
 * scraper written for a real server reads the emulator unchanged. Latencies are in emulated
 * seconds (wall seconds x time scale): the scheduler's clock (DESIGN section 5).
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export type FinishedReason = "stop" | "length" | "abort";

const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const REQUEST_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
const EMULATED = "Emulated seconds: wall-clock seconds x the emulator's time scale.";

export interface MetricsInfo {
  servedModelName: string;
  gpu: string;
  timeScale: number;
  blockSize: number;
  numGpuBlocks: number;
}

export class EmulatorMetrics {
  readonly registry = new Registry();
  private readonly running: Gauge;
  private readonly waiting: Gauge;
  private readonly kvUsage: Gauge;
  private readonly gpuCacheUsage: Gauge;
  private readonly promptTokens: Counter;
  private readonly generationTokens: Counter;
  private readonly success: Counter<"finished_reason">;
  private readonly preemptions: Counter;
  private readonly ttft: Histogram;
  private readonly e2e: Histogram;
  private readonly queue: Histogram;
  private readonly itl: Histogram;

  constructor(info: MetricsInfo) {
    const registers = [this.registry];
    // vLLM labels every series with the served model and the engine index (V1, one engine: "0").
    this.registry.setDefaultLabels({ model_name: info.servedModelName, engine: "0" });
    this.running = new Gauge({ name: "vllm:num_requests_running", help: "Number of requests in model execution batches.", registers });
    this.waiting = new Gauge({ name: "vllm:num_requests_waiting", help: "Number of requests waiting to be processed (incl. preempted).", registers });
    this.kvUsage = new Gauge({ name: "vllm:kv_cache_usage_perc", help: "KV-cache usage. 1 means 100 percent usage.", registers });
    this.gpuCacheUsage = new Gauge({
      name: "vllm:gpu_cache_usage_perc",
      help: "GPU KV-cache usage. 1 means 100 percent usage. Deprecated alias of vllm:kv_cache_usage_perc.",
      registers,
    });
    this.promptTokens = new Counter({ name: "vllm:prompt_tokens_total", help: "Number of prefill tokens processed.", registers });
    this.generationTokens = new Counter({ name: "vllm:generation_tokens_total", help: "Number of generation tokens processed.", registers });
    this.success = new Counter({
      name: "vllm:request_success_total",
      help: "Count of successfully processed requests.",
      labelNames: ["finished_reason"],
      registers,
    });
    for (const reason of ["stop", "length", "abort"] as const) this.success.labels(reason).inc(0);
    this.preemptions = new Counter({ name: "vllm:num_preemptions_total", help: "Cumulative number of preemptions from the engine.", registers });
    this.ttft = new Histogram({ name: "vllm:time_to_first_token_seconds", help: `Histogram of time to first token. ${EMULATED}`, buckets: TTFT_BUCKETS, registers });
    this.e2e = new Histogram({
      name: "vllm:e2e_request_latency_seconds",
      help: `Histogram of end-to-end request latency. ${EMULATED}`,
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.queue = new Histogram({
      name: "vllm:request_queue_time_seconds",
      help: `Histogram of time spent in WAITING phase for request. ${EMULATED}`,
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.itl = new Histogram({ name: "vllm:inter_token_latency_seconds", help: `Histogram of inter-token latency. ${EMULATED}`, buckets: ITL_BUCKETS, registers });
    new Gauge({
      name: "vllm:cache_config_info",
      help: "Information of the LLMEngine CacheConfig.",
      labelNames: ["block_size", "num_gpu_blocks", "cache_dtype", "enable_prefix_caching", "gpu_memory_utilization"],
      registers,
    })
      .labels(String(info.blockSize), String(info.numGpuBlocks), "auto", "False", "0.9")
      .set(1);
    new Gauge({
      name: "hexflow_emulator_time_scale",
      help: "Not a vLLM series: emulated seconds per wall-clock second of this emulated server.",
      labelNames: ["gpu"],
      registers,
    })
      .labels(info.gpu)
      .set(info.timeScale);
  }

  /** Refreshed once per engine step (and on arrivals), as vLLM refreshes its gauges. */
  setLoad(running: number, waiting: number, kvUsage: number): void {
    this.running.set(running);
    this.waiting.set(waiting);
    this.kvUsage.set(kvUsage);
    this.gpuCacheUsage.set(kvUsage);
  }

  addPreemptions(n: number): void {
    if (n > 0) this.preemptions.inc(n);
  }

  queued(seconds: number): void {
    this.queue.observe(Math.max(0, seconds));
  }

  /** vLLM counts a request's prompt tokens when its prefill completes, i.e. with its first token. */
  firstToken(seconds: number, promptTokens: number): void {
    this.ttft.observe(Math.max(0, seconds));
    this.promptTokens.inc(promptTokens);
  }

  tokens(count: number, interTokenSeconds: number | undefined): void {
    this.generationTokens.inc(count);
    if (interTokenSeconds !== undefined) this.itl.observe(Math.max(0, interTokenSeconds));
  }

  finished(reason: FinishedReason, e2eSeconds: number): void {
    this.success.labels(reason).inc();
    this.e2e.observe(Math.max(0, e2eSeconds));
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
