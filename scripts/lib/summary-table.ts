/**
 * The summary table a long CLI prints when it ends: cli-table3 lays out the columns (widths from the
 * content, Unicode box lines), with no colours so that logs and pipes get plain text.
 */
import Table from "cli-table3";

export type Cell = string | number | null | undefined;

export interface Column {
  header: string;
  /** Figures are right-aligned (the default) so their digits line up; names are left-aligned. */
  align?: "left" | "right";
}

const text = (c: Cell): string => (c === null || c === undefined || (typeof c === "number" && !Number.isFinite(c)) ? "–" : String(c));

export function renderTable(columns: readonly Column[], rows: readonly (readonly Cell[])[], title?: string): string {
  const t = new Table({
    head: columns.map((c) => c.header),
    colAligns: columns.map((c) => c.align ?? "right"),
    style: { head: [], border: [], compact: true },
  });
  for (const r of rows) t.push(columns.map((_, i) => text(r[i])));
  return `${title === undefined ? "" : `${title}\n`}${t.toString()}\n`;
}

/** Number formats of the tables: "–" for a missing or undefined figure. */
export const fmt = {
  fixed: (n: number | undefined, digits: number): string => (n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : "–"),
  percent: (n: number | undefined): string => (n !== undefined && Number.isFinite(n) ? `${(100 * n).toFixed(0)}%` : "–"),
  times: (n: number | undefined): string => (n !== undefined && Number.isFinite(n) ? `${n.toFixed(2)}x` : "–"),
};

/** A GitHub-flavoured Markdown table (the reports under bench/results). */
export function markdownTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return `| ${head.join(" | ")} |\n|${head.map(() => "---").join("|")}|\n${rows.map((r) => `| ${r.join(" | ")} |`).join("\n")}\n`;
}
