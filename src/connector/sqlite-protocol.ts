/** Messages between the connector and its SQLite worker thread. */
import { z } from "zod";
import { DatabaseSchemaSchema } from "../core/db-schema";

export const SqliteWorkerDataSchema = z.object({ file: z.string().min(1) });
export type SqliteWorkerData = z.infer<typeof SqliteWorkerDataSchema>;

export const SqliteRequestSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("query"), id: z.number().int(), sql: z.string(), maxRows: z.number().int().nonnegative() }),
  z.object({ kind: z.literal("schema"), id: z.number().int() }),
]);
export type SqliteRequest = z.infer<typeof SqliteRequestSchema>;

export const SqliteReplySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("ready") }),
  z.object({ kind: z.literal("rows"), id: z.number().int(), columns: z.array(z.string()), rows: z.array(z.array(z.unknown())), truncated: z.boolean() }),
  z.object({ kind: z.literal("schema"), id: z.number().int(), schema: DatabaseSchemaSchema }),
  z.object({ kind: z.literal("error"), id: z.number().int(), message: z.string() }),
  /** The database file could not be read (startup or reload); the thread stays up and retries on the next request. */
  z.object({ kind: z.literal("unavailable"), id: z.number().int().optional(), message: z.string() }),
]);
export type SqliteReply = z.infer<typeof SqliteReplySchema>;
