import { z } from "zod";
import { TraceEntrySchema, type TraceEntry } from "../core/chess";
import type { ParseResult } from "./cluster";

/**
 * Validates the text of a reference trace file. The error names the file and the first bad entry
 * and field, so a user can fix a hand-edited or exported trace.
 */
export function parseTrace(text: string, fileName: string): ParseResult<TraceEntry[]> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `${fileName}: not valid JSON (${e instanceof Error ? e.message : String(e)})` };
  }
  if (!Array.isArray(json)) return { ok: false, error: `${fileName}: expected a JSON array of workflows` };
  if (json.length === 0) return { ok: false, error: `${fileName}: the trace has no entries` };
  const entries: TraceEntry[] = [];
  for (const [i, item] of json.entries()) {
    const r = TraceEntrySchema.safeParse(item);
    if (!r.success) {
      const issue = r.error.issues[0];
      const where = issue === undefined ? "" : issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
      return { ok: false, error: `${fileName}: entry ${i}${where ? ` field ${where.replace(/^\./, "")}` : ""}: ${issue?.message ?? "invalid"}` };
    }
    entries.push(r.data);
  }
  return { ok: true, value: entries };
}

export const TraceFileSchema = z.array(TraceEntrySchema);
