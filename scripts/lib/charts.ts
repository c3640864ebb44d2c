import * as vega from "vega";
import * as vl from "vega-lite";
import type { ScenarioResult } from "../../src/sim/benchmark";

/**
 * SLO attainment vs SLO scale, one panel per (rate, trace), one line per policy. Vega-Lite compiles
 * the spec and Vega renders it to SVG headless, so charts are declarative data, not drawn by hand.
 */
export async function attainmentChartSvg(rows: readonly ScenarioResult[], scales: readonly number[], title: string): Promise<string> {
  const values = rows.flatMap((r) =>
    Object.entries(r.policies).flatMap(([policy, p]) =>
      scales.map((scale, i) => ({ policy, scale, attainment: p.curve[i] ?? null, panel: `${r.trace} @ ${r.rate}/s` })),
    ),
  );
  const spec: vl.TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    data: { values },
    facet: { field: "panel", type: "nominal", title: null },
    columns: 4,
    spec: {
      width: 220,
      height: 160,
      mark: { type: "line", point: { size: 18 } },
      encoding: {
        x: { field: "scale", type: "quantitative", title: "SLO scale", scale: { domain: [scales[0] ?? 1, scales.at(-1) ?? 15] } },
        y: { field: "attainment", type: "quantitative", title: "SLO attainment", scale: { domain: [0, 1] }, axis: { format: "%" } },
        color: { field: "policy", type: "nominal", title: "policy" },
      },
    },
  };
  const compiled = vl.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  return view.toSVG();
}
