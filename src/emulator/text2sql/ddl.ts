/**
 * A small reader for the CREATE TABLE text in a prompt's `### schema` section (as written by
 * schemaToDdl): table names and their column names, unquoted, in order.
 */
import { SCHEMA_MARKER } from "../../core/text2sql/format";

export interface DdlTable {
  name: string;
  columns: string[];
}

const IDENT = String.raw`"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*`;

function unquote(name: string): string {
  return name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name;
}

/** The text of a `### <name>` section, up to the next blank-line-separated `###` heading. */
export function section(prompt: string, marker: string): string | undefined {
  const lines = prompt.split("\n");
  const start = lines.findIndex((l) => l.trim() === marker);
  if (start < 0) return undefined;
  const body: string[] = [];
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line.startsWith("###") && (lines[i - 1] ?? "").trim() === "") break;
    body.push(line);
  }
  return body.join("\n").trim();
}

/** The tables of the prompt's schema section; [] when there is none. */
export function readDdl(prompt: string): DdlTable[] {
  const ddl = section(prompt, SCHEMA_MARKER);
  if (ddl === undefined) return [];
  const tables: DdlTable[] = [];
  const create = new RegExp(String.raw`CREATE\s+TABLE\s+(${IDENT})\s*\(([\s\S]*?)\n\);`, "gi");
  const column = new RegExp(String.raw`^\s*(${IDENT})`);
  for (const m of ddl.matchAll(create)) {
    const columns: string[] = [];
    for (const line of (m[2] ?? "").split("\n")) {
      if (/^\s*(PRIMARY\s+KEY|FOREIGN\s+KEY|UNIQUE|CHECK|CONSTRAINT)\b/i.test(line)) continue;
      const c = column.exec(line);
      if (c?.[1] !== undefined) columns.push(unquote(c[1]));
    }
    if (columns.length > 0) tables.push({ name: unquote(m[1] ?? ""), columns });
  }
  return tables;
}
