/**
 * The operator dashboard: polls `GET /admin/pools/:pool/dashboard` every 2 s with the admin token and draws
 * the pool. The token comes from the URL fragment (`/dashboard#token=…`, which browsers never send to a
 * server; `npm start` prints such a link) or the form, and stays in this tab's sessionStorage only.
 */
import { GanttChart, PALETTE, TimeChart, type XY } from "./charts";
import { fetchDashboard, type Dashboard, type Timeline } from "./data";
import { renderFigures, renderInstances, renderRecent } from "./panels";

const POLL_MS = 2000;
/** Queue history is gathered by the page itself (the server keeps no gauge history): this many polls. */
const QUEUE_HISTORY = 300;

function el<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`the page has no #${id}`);
  return found;
}

const params = new URLSearchParams(location.search);
const pool = params.get("pool") ?? "default";
// The series' window, step and span (`/dashboard?windowS=300&stepS=5`) pass through to the API, which checks them.
const seriesQuery = new URLSearchParams([...params].filter(([k]) => k === "windowS" || k === "stepS" || k === "spanS"));
const fragment = new URLSearchParams(location.hash.slice(1));
const fromFragment = fragment.get("token");
if (fromFragment !== null) {
  sessionStorage.setItem("hexflow-admin-token", fromFragment);
  history.replaceState(null, "", location.pathname + location.search);
}

const status = el("status", HTMLElement);
const login = el("login", HTMLFormElement);
const p95 = new TimeChart(el("chart-p95", HTMLCanvasElement), "P95 latency (s)", { min: 0 });
const attainment = new TimeChart(el("chart-attainment", HTMLCanvasElement), "SLO attainment", { min: 0, max: 1, percent: true });
const throughput = new TimeChart(el("chart-throughput", HTMLCanvasElement), "workflows / s", { min: 0 });
const alpha = new TimeChart(el("chart-alpha", HTMLCanvasElement), "α", { min: 0, max: 1 }, true);
const queues = new TimeChart(el("chart-queues", HTMLCanvasElement), "queued calls", { min: 0 });
const gantt = new GanttChart(el("chart-gantt", HTMLCanvasElement));
const queueHistory = new Map<string, XY[]>();
let chosen: string | undefined;
let polls = 0;

/** α as a step line over the window: what was in force before each decision, what each installed one set, α now. */
function alphaSteps(d: Dashboard, fromMs: number): XY[] {
  const inWindow = d.tuning.filter((t) => t.atMs >= fromMs);
  const start = inWindow[0]?.currentAlpha ?? d.view.alpha;
  const steps = inWindow.flatMap((t) => (t.installed && t.bestAlpha !== null ? [{ x: t.atMs, y: t.bestAlpha }] : []));
  return [{ x: fromMs, y: start }, ...steps, { x: d.nowMs, y: d.view.alpha }];
}

function drawSeries(d: Dashboard): void {
  const pts = d.series.points;
  const range = { fromMs: d.nowMs - d.series.windowS * 1000, toMs: d.nowMs };
  p95.update(
    [
      { label: `P95 over ${d.series.spanS} s`, points: pts.map((p) => ({ x: p.atMs, y: p.p95S })) },
      { label: "median SLO", points: pts.map((p) => ({ x: p.atMs, y: p.sloP50S })) },
    ],
    range,
  );
  attainment.update([{ label: "met / ended", points: pts.map((p) => ({ x: p.atMs, y: p.attainment })) }], range);
  throughput.update([{ label: "succeeded / s", points: pts.map((p) => ({ x: p.atMs, y: p.throughputPerS })) }], range);
  const decisions = d.tuning.filter((t) => t.atMs >= range.fromMs).map((t) => ({ x: t.atMs, y: t.bestAlpha ?? t.currentAlpha }));
  alpha.update(
    [
      { label: "α in force", points: alphaSteps(d, range.fromMs) },
      { label: "tuning decisions (best α found)", points: decisions, pointsShown: true },
    ],
    range,
  );
  for (const i of d.view.instances) {
    const h = queueHistory.get(i.id) ?? [];
    h.push({ x: d.nowMs, y: i.queued });
    if (h.length > QUEUE_HISTORY) h.shift();
    queueHistory.set(i.id, h);
  }
  queues.update([...queueHistory].map(([id, points]) => ({ label: id, points })));
}

function drawTimeline(w: Timeline | undefined): void {
  el("gantt-title", HTMLElement).textContent = w === undefined ? "no workflow has ended yet" : `${w.kind} ${w.id} · ${w.status} · ${w.latencyS?.toFixed(1) ?? "–"} s of ${w.sloS.toFixed(0)} s SLO`;
  if (w === undefined) return gantt.update([], []);
  const instances = [...new Set(w.calls.map((c) => c.instance))].sort();
  const steps = [...new Set(w.calls.map((c) => c.step))];
  const queued = { label: "queued", color: "#475569", spans: w.calls.flatMap((c) => (c.enqueuedS !== null && c.startedS !== null && c.startedS > c.enqueuedS ? [{ instance: c.instance, from: c.enqueuedS, to: c.startedS }] : [])) };
  const running = steps.map((step, i) => ({
    label: step,
    color: PALETTE[i % PALETTE.length] ?? "#38bdf8",
    spans: w.calls.flatMap((c) => (c.step === step && c.finishedS !== null ? [{ instance: c.instance, from: c.startedS ?? c.enqueuedS ?? c.releasedS, to: c.finishedS }] : [])),
  }));
  gantt.update(instances, [queued, ...running]);
}

function draw(d: Dashboard): void {
  renderFigures(el("figures", HTMLElement), d);
  renderInstances(el("instances", HTMLTableSectionElement), d.view.instances);
  drawSeries(d);
  if (chosen === undefined || !d.recent.some((w) => w.id === chosen)) chosen = d.recent[0]?.id;
  const choose = (id: string): void => {
    chosen = id;
    renderRecent(el("recent", HTMLElement), d.recent, chosen, choose);
    drawTimeline(d.recent.find((w) => w.id === id));
  };
  renderRecent(el("recent", HTMLElement), d.recent, chosen, choose);
  drawTimeline(d.recent.find((w) => w.id === chosen));
}

async function poll(): Promise<void> {
  const token = sessionStorage.getItem("hexflow-admin-token");
  if (token === null) {
    login.hidden = false;
    status.textContent = "enter the admin token";
    return;
  }
  const got = await fetchDashboard(pool, token, seriesQuery);
  if (!got.ok) {
    if (got.status === 401) {
      sessionStorage.removeItem("hexflow-admin-token");
      login.hidden = false;
    }
    status.textContent = `pool ${pool}: ${got.message}`;
    status.className = "error";
    return;
  }
  login.hidden = true;
  polls++;
  draw(got.data);
  status.className = "";
  status.textContent = `pool ${pool} · updated ${new Date(got.data.nowMs).toLocaleTimeString([], { hour12: false })}`;
  document.body.dataset["polls"] = String(polls);
}

login.addEventListener("submit", (e) => {
  e.preventDefault();
  const input = el("token", HTMLInputElement);
  sessionStorage.setItem("hexflow-admin-token", input.value.trim());
  input.value = "";
  void poll();
});

void poll();
setInterval(() => void poll(), POLL_MS);
