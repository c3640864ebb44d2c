/** The parts of the page that are plain DOM: the instance table, the headline figures, the recent workflows list. */
import type { Dashboard, Instance, Timeline } from "./data";

function cell(text: string, cls?: string): HTMLTableCellElement {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls !== undefined) td.className = cls;
  return td;
}

/** One row per instance, rebuilt on every poll (a pool has tens of instances, not thousands). */
export function renderInstances(body: HTMLTableSectionElement, instances: readonly Instance[]): void {
  const rows = instances.map((i) => {
    const tr = document.createElement("tr");
    tr.dataset["instance"] = i.id;
    tr.append(
      cell(i.id),
      cell(i.gpu),
      cell(i.state),
      cell(i.health.status, `health ${i.health.status}`),
      cell(String(i.queued), "num"),
      cell(String(i.running), "num"),
      cell(i.loadS.toFixed(1), "num"),
      cell(i.health.lastError ?? ""),
    );
    return tr;
  });
  body.replaceChildren(...rows);
}

const fmt = (x: number | null | undefined, digits: number, unit = ""): string => (x === null || x === undefined ? "–" : `${x.toFixed(digits)}${unit}`);

/** The headline figures: the latest point of each series, α, the instances' health at a glance. */
export function renderFigures(root: HTMLElement, d: Dashboard): void {
  const last = d.series.points.at(-1);
  const healthy = d.view.instances.filter((i) => i.health.status === "healthy").length;
  const figures: [string, string][] = [
    ["policy", d.view.policy],
    ["α", `${d.view.alpha.toFixed(2)} (v${d.view.alphaVersion}${d.view.pinned ? ", pinned" : ""})`],
    ["instances healthy", `${healthy} / ${d.view.instances.length}`],
    ["queued · running", `${d.view.instances.reduce((n, i) => n + i.queued, 0)} · ${d.view.instances.reduce((n, i) => n + i.running, 0)}`],
    [`P95 (last ${d.series.spanS} s)`, fmt(last?.p95S, 1, " s")],
    ["SLO attainment", last?.attainment === null || last === undefined ? "–" : `${(last.attainment * 100).toFixed(1)}%`],
    ["throughput", fmt(last?.throughputPerS, 2, " wf/s")],
  ];
  root.replaceChildren(
    ...figures.map(([k, v]) => {
      const div = document.createElement("div");
      div.className = "figure";
      const label = document.createElement("span");
      label.textContent = k;
      const value = document.createElement("strong");
      value.textContent = v;
      div.append(label, value);
      return div;
    }),
  );
}

/** The recent workflows as buttons; the chosen one's timeline is drawn below. */
export function renderRecent(list: HTMLElement, recent: readonly Timeline[], chosen: string | undefined, choose: (id: string) => void): void {
  list.replaceChildren(
    ...recent.map((w) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = `workflow ${w.status}${w.id === chosen ? " chosen" : ""}`;
      b.dataset["workflow"] = w.id;
      const met = w.sloMet === null ? "" : w.sloMet ? " ✓" : " ✗ SLO";
      b.textContent = `${w.kind} ${w.id.slice(0, 8)} · ${w.status} · ${fmt(w.latencyS, 1, " s")} / ${w.sloS.toFixed(0)} s${met} · ${w.calls.length} calls`;
      b.addEventListener("click", () => choose(w.id));
      return b;
    }),
  );
}
