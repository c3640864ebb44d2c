/**
 * Prometheus text exposition format 0.0.4, rendered from plain data. Pure: the gateway's /metrics
 * builds families from D1 counters and the coordinators' pool views (src/core/metrics-catalog.ts).
 * prom-client is not used in the Worker: its entry point loads Node-only modules (README, dependencies).
 */

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type MetricType = "counter" | "gauge" | "histogram";
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  /** The sample's own name: the family's, or with `_bucket`, `_sum`, `_count` for a histogram. */
  name: string;
  labels: Labels;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: readonly Sample[];
}

const escapeHelp = (s: string): string => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
export const escapeLabelValue = (s: string): string => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

/** Go's strconv 'g' spelling, which Prometheus parses: integers without a fraction, ±Inf, NaN. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  return `{${entries.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",")}}`;
}

/** The families in order, each with its HELP and TYPE; a family with no samples still says it exists. */
export function renderPrometheus(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const f of families) {
    if (!NAME.test(f.name)) throw new Error(`invalid metric name ${f.name}`);
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      if (!NAME.test(s.name)) throw new Error(`invalid sample name ${s.name}`);
      for (const k of Object.keys(s.labels)) if (!LABEL.test(k) || k.startsWith("__")) throw new Error(`invalid label name ${k}`);
      lines.push(`${s.name}${labelText(s.labels)} ${formatValue(s.value)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
