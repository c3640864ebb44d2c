/**
 * The coordinator's instance registry in its SQLite storage (table `instances`, COORDINATOR_MIGRATIONS),
 * parsed once and cached until the next write, since every stage release reads it.
 */
import { InstanceRecordSchema, type InstanceRecord } from "../core/pool";

export class InstanceRegistry {
  private cached: InstanceRecord[] | undefined;

  constructor(private readonly sql: SqlStorage) {}

  all(): InstanceRecord[] {
    this.cached ??= this.sql
      .exec<{ json: string }>("SELECT json FROM instances ORDER BY rowid")
      .toArray()
      .map((r) => InstanceRecordSchema.parse(JSON.parse(r.json)));
    return this.cached;
  }

  get(id: string): InstanceRecord | undefined {
    return this.all().find((r) => r.id === id);
  }

  insert(rec: InstanceRecord): void {
    this.sql.exec("INSERT INTO instances (id, json) VALUES (?, ?)", rec.id, JSON.stringify(rec));
    this.cached = undefined;
  }

  update(rec: InstanceRecord): void {
    this.sql.exec("UPDATE instances SET json = ? WHERE id = ?", JSON.stringify(rec), rec.id);
    this.cached = undefined;
  }

  delete(id: string): void {
    this.sql.exec("DELETE FROM instances WHERE id = ?", id);
    this.cached = undefined;
  }
}
