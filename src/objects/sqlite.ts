/**
 * Versioned schema for a Durable Object's SQLite storage: migration i moves the schema from version
 * i to i + 1, applied once, in order, inside the object's constructor (blockConcurrencyWhile).
 */
export function migrate(sql: SqlStorage, migrations: readonly string[]): void {
  sql.exec("CREATE TABLE IF NOT EXISTS _schema (version INTEGER NOT NULL)");
  const row = sql.exec<{ version: number }>("SELECT version FROM _schema").toArray()[0];
  let version = row?.version ?? 0;
  if (row === undefined) sql.exec("INSERT INTO _schema (version) VALUES (0)");
  for (; version < migrations.length; version++) {
    const step = migrations[version];
    if (step !== undefined) sql.exec(step);
    sql.exec("UPDATE _schema SET version = ?", version + 1);
  }
}

/** Whether the object has ever written its schema: reading this creates no storage, a migration does. */
export function hasSchema(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_schema'").toArray().length > 0;
}

/** Reads one JSON column through a zod-like parser, so stored JSON crosses a checked boundary. */
export function parseJson<T>(text: string, schema: { parse(v: unknown): T }): T {
  return schema.parse(JSON.parse(text));
}
