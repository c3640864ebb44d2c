/**
 * A GpuInstanceObject's log of admissions (table `admissions`): which call went to vLLM when, with its
 * laxity and queue key then, so the order the queue policy produced can be read back (the admin queue
 * view, the overtaking figures). Only the most recent entries are kept.
 */

/** The log keeps the most recent entries only. */
const ADMISSION_LOG_ROWS = 10_000;

export interface Admission {
  callId: string;
  enqueuedAt: number;
  admittedAt: number;
  laxityS: number;
  key: number;
}

export function logAdmission(sql: SqlStorage, a: Admission): void {
  sql.exec("INSERT INTO admissions (call_id, enqueued_at, admitted_at, laxity, key) VALUES (?, ?, ?, ?, ?)", a.callId, a.enqueuedAt, a.admittedAt, a.laxityS, a.key);
  sql.exec("DELETE FROM admissions WHERE seq <= (SELECT MAX(seq) FROM admissions) - ?", ADMISSION_LOG_ROWS);
}

export function admissions(sql: SqlStorage): Admission[] {
  return sql
    .exec<{ call_id: string; enqueued_at: number; admitted_at: number; laxity: number; key: number }>("SELECT call_id, enqueued_at, admitted_at, laxity, key FROM admissions ORDER BY seq")
    .toArray()
    .map((r) => ({ callId: r.call_id, enqueuedAt: r.enqueued_at, admittedAt: r.admitted_at, laxityS: r.laxity, key: r.key }));
}
