/**
 * SQLite through sql.js in a worker thread. One statement runs at a time, in arrival order; a
 * statement that outlives the timeout has its thread terminated (the only way to stop synchronous
 * WebAssembly) and the next request gets a fresh thread that re-reads the file.
 */
import { Worker } from "node:worker_threads";
import type { DatabaseSchema } from "../core/db-schema";
import { type BackendResult, backendError, type QueryRows, type SqlBackend } from "./backend";
import { type SqliteReply, SqliteReplySchema, type SqliteRequest, type SqliteWorkerData } from "./sqlite-protocol";

type Job = { request: SqliteRequest; settle: (reply: BackendResult<SqliteReply>) => void };
type Thread = { worker: Worker; ready: Promise<BackendResult<true>> };

const WORKER_FILE = new URL("./sqlite-worker.ts", import.meta.url).href;

// The worker is TypeScript; tsx's scoped import compiles it the same way under `tsx` and under vitest.
function bootstrapSource(): string {
  const tsxApi = import.meta.resolve("tsx/esm/api");
  return `import(${JSON.stringify(tsxApi)}).then((api) => api.tsImport(${JSON.stringify(WORKER_FILE)}, ${JSON.stringify(WORKER_FILE)}))`;
}

export class SqliteBackend implements SqlBackend {
  readonly dialect = "sqlite" as const;
  private thread: Thread | undefined;
  private readonly queue: Job[] = [];
  private running: Job | undefined;
  private nextId = 1;
  private closed = false;

  private constructor(
    private readonly file: string,
    private readonly timeoutMs: number,
  ) {}

  /** Starts the worker and resolves once it has read `file`; rejects with the reason when it cannot. */
  static async open(file: string, timeoutMs: number): Promise<SqliteBackend> {
    const backend = new SqliteBackend(file, timeoutMs);
    const ready = await backend.start().ready;
    if (!ready.ok) {
      await backend.close();
      throw new Error(ready.error.message);
    }
    return backend;
  }

  async schema(): Promise<BackendResult<DatabaseSchema>> {
    const reply = await this.run({ kind: "schema", id: this.nextId++ });
    if (!reply.ok) return reply;
    if (reply.value.kind === "schema") return { ok: true, value: reply.value.schema };
    return this.unexpected(reply.value);
  }

  async query(sql: string, maxRows: number): Promise<BackendResult<QueryRows>> {
    const reply = await this.run({ kind: "query", id: this.nextId++, sql, maxRows });
    if (!reply.ok) return reply;
    const r = reply.value;
    if (r.kind === "rows") return { ok: true, value: { columns: r.columns, rows: r.rows, truncated: r.truncated } };
    return this.unexpected(r);
  }

  async close(): Promise<void> {
    this.closed = true;
    const pending = this.running === undefined ? this.queue.splice(0) : [this.running, ...this.queue.splice(0)];
    this.running = undefined;
    for (const job of pending) job.settle(backendError("database_unavailable", "the connector is shutting down"));
    const thread = this.thread;
    this.thread = undefined;
    if (thread !== undefined) await thread.worker.terminate();
  }

  private unexpected<T>(reply: SqliteReply): BackendResult<T> {
    if (reply.kind === "error") return backendError("sql_error", reply.message);
    if (reply.kind === "unavailable") return backendError("database_unavailable", reply.message);
    throw new Error(`unexpected reply from the SQLite worker: ${reply.kind}`);
  }

  private run(request: SqliteRequest): Promise<BackendResult<SqliteReply>> {
    if (this.closed) return Promise.resolve(backendError("database_unavailable", "the connector is shutting down"));
    return new Promise((settle) => {
      this.queue.push({ request, settle });
      void this.pump();
    });
  }

  private start(): Thread {
    const data: SqliteWorkerData = { file: this.file };
    const worker = new Worker(bootstrapSource(), { eval: true, workerData: data });
    const ready = new Promise<BackendResult<true>>((resolve) => {
      worker.on("message", (raw: unknown) => {
        const reply = SqliteReplySchema.parse(raw);
        if (reply.kind === "ready") resolve({ ok: true, value: true });
        else if (reply.kind === "unavailable" && reply.id === undefined) resolve(backendError("database_unavailable", reply.message));
        else this.finish(worker, { ok: true, value: reply });
      });
      const lost = (why: string) => {
        resolve(backendError("database_unavailable", why));
        this.finish(worker, backendError("database_unavailable", why));
      };
      worker.on("error", (e) => lost(`the SQLite worker failed: ${e.message}`));
      worker.on("exit", (code) => lost(`the SQLite worker exited (code ${code})`));
    });
    this.thread = { worker, ready };
    return this.thread;
  }

  /** Settles the running job with what `worker` reported; reports of a replaced worker are stale. */
  private finish(worker: Worker, result: BackendResult<SqliteReply>): void {
    if (this.thread?.worker !== worker) return;
    if (!result.ok) this.thread = undefined;
    const job = this.running;
    if (job === undefined) return;
    if (result.ok && "id" in result.value && result.value.id !== job.request.id) return;
    this.running = undefined;
    job.settle(result);
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.running !== undefined || this.closed) return;
    const job = this.queue.shift();
    if (job === undefined) return;
    this.running = job;
    const thread = this.thread ?? this.start();
    const ready = await thread.ready;
    // The worker may have died while starting, and finish() settled the job already.
    if (this.running !== job) return;
    if (!ready.ok) {
      if (this.thread === thread) this.thread = undefined;
      void thread.worker.terminate();
      this.running = undefined;
      job.settle(ready);
      void this.pump();
      return;
    }
    const timer = setTimeout(() => {
      if (this.running !== job) return;
      this.running = undefined;
      void thread.worker.terminate();
      // Warm the replacement now: the next request should not also wait for a thread to start.
      this.thread = undefined;
      if (!this.closed) this.start();
      job.settle(backendError("statement_timeout", `the statement ran longer than ${this.timeoutMs} ms and was stopped`));
      void this.pump();
    }, this.timeoutMs);
    const settle = job.settle;
    job.settle = (reply) => {
      clearTimeout(timer);
      settle(reply);
    };
    thread.worker.postMessage(job.request);
  }
}
