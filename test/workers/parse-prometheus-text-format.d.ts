declare module "parse-prometheus-text-format" {
  /** Prometheus text format to prom2json-like objects; validated by the caller (test/workers/metrics.test.ts). */
  export default function parsePrometheusTextFormat(text: string): unknown;
}
