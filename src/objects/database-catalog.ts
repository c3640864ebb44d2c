import { DurableObject } from "cloudflare:workers";
import { DatabaseRecordSchema, type DatabaseRecord } from "../core/database";
import { err, ok, type Result } from "./result";
import { migrate, parseJson } from "./sqlite";

const MIGRATIONS = [`CREATE TABLE databases (name TEXT PRIMARY KEY, json TEXT NOT NULL, created_at TEXT NOT NULL)`];

/**
 * One per tenant: the databases registered for Text-to-SQL, with their targets (a connector's token
 * included, so only this object and the Worker's executor ever hold it) and schemas. Registration is
 * create-only: changing a database is DELETE then POST, so a name never silently points elsewhere.
 */
export class DatabaseCatalogObject extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => migrate(ctx.storage.sql, MIGRATIONS));
  }

  put(record: DatabaseRecord): Result<DatabaseRecord> {
    const parsed = DatabaseRecordSchema.safeParse(record);
    if (!parsed.success) return err("invalid_request", `not a database record: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    if (this.row(parsed.data.name) !== undefined) return err("conflict", `database ${parsed.data.name} is already registered; delete it first to change it`);
    this.ctx.storage.sql.exec("INSERT INTO databases (name, json, created_at) VALUES (?, ?, ?)", parsed.data.name, JSON.stringify(parsed.data), parsed.data.createdAt);
    return ok(parsed.data);
  }

  get(name: string): Result<DatabaseRecord> {
    const json = this.row(name);
    return json === undefined ? err("not_found", `no database ${name}`) : ok(parseJson(json, DatabaseRecordSchema));
  }

  list(): DatabaseRecord[] {
    return this.ctx.storage.sql
      .exec<{ json: string }>("SELECT json FROM databases ORDER BY name")
      .toArray()
      .map((r) => parseJson(r.json, DatabaseRecordSchema));
  }

  remove(name: string): Result<{ name: string }> {
    if (this.row(name) === undefined) return err("not_found", `no database ${name}`);
    this.ctx.storage.sql.exec("DELETE FROM databases WHERE name = ?", name);
    return ok({ name });
  }

  private row(name: string): string | undefined {
    return this.ctx.storage.sql.exec<{ json: string }>("SELECT json FROM databases WHERE name = ?", name).toArray()[0]?.json;
  }
}
