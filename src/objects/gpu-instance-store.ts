/**
 * What a GpuInstanceObject keeps in its SQLite: the schema's migrations and the rows' shapes. Kept apart so
 * the object reads as what it does.
 */
import { z } from "zod";
import { QueueNameSchema } from "../core/policies";
import { InstanceRecordSchema } from "../core/pool";
import { ReleasedCallSchema } from "../core/workflow-run";
import { OUTBOX_MIGRATION } from "./report-outbox";

export const MIGRATIONS = [
  `CREATE TABLE config (key TEXT PRIMARY KEY, json TEXT NOT NULL);
   CREATE TABLE queue (call_id TEXT PRIMARY KEY, json TEXT NOT NULL);
   CREATE TABLE running (call_id TEXT PRIMARY KEY, json TEXT NOT NULL);
   CREATE TABLE admissions (seq INTEGER PRIMARY KEY AUTOINCREMENT, call_id TEXT NOT NULL, admitted_at REAL NOT NULL, laxity REAL NOT NULL, key REAL NOT NULL)`,
  // v2: when each admitted call had reached the queue, so overtaking can be read from the log.
  `ALTER TABLE admissions ADD COLUMN enqueued_at REAL NOT NULL DEFAULT 0`,
  // v3: reports not yet delivered to their workflows (report-outbox.ts).
  OUTBOX_MIGRATION,
];

// serving: the coordinator's word on the server's health; absent in configs stored before it existed.
export const ConfigSchema = z.object({ record: InstanceRecordSchema, pool: z.string(), queuePolicy: QueueNameSchema, serving: z.boolean().default(true) });
export type Config = z.infer<typeof ConfigSchema>;
export const QueuedSchema = z.object({ call: ReleasedCallSchema, estimateS: z.number(), enqueuedAt: z.number(), key: z.number(), seq: z.number() });
// concurrency: sequences running at admission, this one included (calibration's batching term); absent in rows stored before it existed.
export const RunningSchema = QueuedSchema.extend({ admittedAt: z.number(), admittedAtMs: z.number(), laxityS: z.number(), concurrency: z.number().int().min(1).optional() });
export type Running = z.infer<typeof RunningSchema>;

/** A call the instance holds (queued or running), for a coordinator rebuilding its load after a restart. */
export interface OutstandingCall {
  callId: string;
  estimateS: number;
  /** Pool-clock admission time; null while queued. */
  startedAt: number | null;
}

