/**
 * The SQLite worker thread: sql.js is synchronous, so a runaway statement blocks only this thread,
 * which the connector terminates when the statement timeout passes. The database file is read into
 * memory (writes could never reach it) and queries run with query_only on. The file is re-read when
 * its size or modification time changes, so the connector follows the database it serves.
 */
import { statSync, readFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import initSqlJs, { type Database } from "sql.js";
import { type SqliteReply, SqliteRequestSchema, SqliteWorkerDataSchema } from "./sqlite-protocol";
import { readSqliteSchema, runSqliteQuery } from "./sqlite-queries";

const port = parentPort;
if (port === null) throw new Error("sqlite-worker.ts must run in a worker thread");
const { file } = SqliteWorkerDataSchema.parse(workerData);
const SQL = await initSqlJs();

let loaded: { db: Database; version: string } | undefined;

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

function database(): Database {
  const stat = statSync(file);
  const version = `${stat.size}:${stat.mtimeMs}`;
  if (loaded?.version === version) return loaded.db;
  const db = new SQL.Database(readFileSync(file));
  db.run("PRAGMA query_only = ON");
  // Fails here, not on the first query, when the file is not a database.
  db.exec("SELECT count(*) FROM sqlite_schema");
  loaded?.db.close();
  loaded = { db, version };
  return db;
}

const send = (reply: SqliteReply) => port.postMessage(reply);

port.on("message", (raw: unknown) => {
  const request = SqliteRequestSchema.parse(raw);
  let db: Database;
  try {
    db = database();
  } catch (e) {
    send({ kind: "unavailable", id: request.id, message: `cannot open ${file}: ${message(e)}` });
    return;
  }
  try {
    if (request.kind === "schema") send({ kind: "schema", id: request.id, schema: readSqliteSchema(db) });
    else send({ kind: "rows", id: request.id, ...runSqliteQuery(db, request.sql, request.maxRows) });
  } catch (e) {
    send({ kind: "error", id: request.id, message: message(e) });
  }
});

try {
  database();
  send({ kind: "ready" });
} catch (e) {
  send({ kind: "unavailable", message: `cannot open ${file}: ${message(e)}` });
}
