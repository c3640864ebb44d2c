/**
 * Chart.js (bundled into the page: the dashboard works offline, no CDN) set up once per chart and fed new
 * points on every poll. Animations are off: a chart redrawn every 2 s should not spend the time moving.
 * Each canvas carries `data-points`, the number of points it shows, so a browser test can see it fill.
 */
import { BarController, BarElement, CategoryScale, Chart, Filler, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip, type ChartDataset, type ChartOptions } from "chart.js";

Chart.register(LineController, LineElement, PointElement, LinearScale, CategoryScale, BarController, BarElement, Legend, Tooltip, Filler);
Chart.defaults.animation = false;
Chart.defaults.font.family = "system-ui, sans-serif";
Chart.defaults.color = "#cbd5e1";
Chart.defaults.borderColor = "#334155";

export const PALETTE = ["#38bdf8", "#f472b6", "#a3e635", "#fbbf24", "#c084fc", "#f87171", "#2dd4bf", "#fb923c"];

export type XY = { x: number; y: number | null };

const clock = (ms: number): string => new Date(ms).toLocaleTimeString([], { hour12: false });

function timeAxis(): ChartOptions<"line">["scales"] {
  return { x: { type: "linear", ticks: { callback: (v) => clock(Number(v)), maxTicksLimit: 6 } } };
}

/** A line chart over wall-clock time; `series` are redrawn in place on each update. */
export class TimeChart {
  private readonly chart: Chart<"line", XY[]>;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    yTitle: string,
    y: { min?: number; max?: number; percent?: boolean } = {},
    private readonly stepped = false,
  ) {
    const scales = timeAxis() ?? {};
    this.chart = new Chart(canvas, {
      type: "line",
      data: { datasets: [] },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        parsing: false,
        spanGaps: true,
        plugins: { legend: { display: true, labels: { boxWidth: 10 } } },
        scales: {
          ...scales,
          y: { title: { display: true, text: yTitle }, ...(y.min === undefined ? {} : { min: y.min }), ...(y.max === undefined ? {} : { max: y.max }), ticks: y.percent === true ? { callback: (v) => `${Math.round(Number(v) * 100)}%` } : {} },
        },
      },
    });
  }

  /** `range`: the wall-clock span of the x axis, so the charts of one poll line up; the data's own extent otherwise. */
  update(series: { label: string; points: XY[]; pointsShown?: boolean }[], range?: { fromMs: number; toMs: number }): void {
    const datasets: ChartDataset<"line", XY[]>[] = series.map((s, i) => {
      const color = PALETTE[i % PALETTE.length] ?? "#38bdf8";
      return { label: s.label, data: s.points, borderColor: color, backgroundColor: color, borderWidth: 2, pointRadius: s.pointsShown === true ? 4 : 0, stepped: this.stepped ? "before" : false };
    });
    this.chart.data.datasets = datasets;
    const x = this.chart.options.scales?.["x"];
    if (x !== undefined) {
      x.min = range?.fromMs;
      x.max = range?.toMs;
    }
    this.chart.update();
    this.canvas.dataset["points"] = String(series.reduce((n, s) => n + s.points.filter((p) => p.y !== null).length, 0));
  }
}

/** Horizontal floating bars: one row per instance, a bar per call from its start to its end (s after arrival). */
export class GanttChart {
  private readonly chart: Chart<"bar", { x: [number, number]; y: string }[]>;

  constructor(private readonly canvas: HTMLCanvasElement) {
    this.chart = new Chart(canvas, {
      type: "bar",
      data: { datasets: [] },
      options: {
        indexAxis: "y",
        responsive: true,
        maintainAspectRatio: false,
        parsing: { xAxisKey: "x", yAxisKey: "y" },
        plugins: { legend: { display: true, labels: { boxWidth: 10 } } },
        scales: { x: { type: "linear", min: 0, title: { display: true, text: "seconds after arrival (pool clock)" } }, y: { type: "category", stacked: true } },
      },
    });
  }

  update(instances: string[], bars: { label: string; color: string; spans: { instance: string; from: number; to: number }[] }[]): void {
    this.chart.data.labels = instances;
    this.chart.data.datasets = bars.map((b) => ({ label: b.label, backgroundColor: b.color, borderSkipped: false, barPercentage: 0.7, grouped: false, data: b.spans.map((s) => ({ x: [s.from, s.to], y: s.instance })) }));
    this.chart.update();
    this.canvas.dataset["points"] = String(bars.reduce((n, b) => n + b.spans.length, 0));
  }
}
