declare module "parse-prometheus-text-format" {
  /** Prometheus text format to prom2json-like objects; validated with zod by scripts/lib/calibrate-metrics.ts. */
  export default function parsePrometheusTextFormat(text: string): unknown;
}
