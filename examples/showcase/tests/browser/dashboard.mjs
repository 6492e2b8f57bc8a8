// The operations dashboard (docs/operations/dashboard.json, a Grafana
// dashboard) drawn without Grafana: every panel's queries are run through
// Prometheus's HTTP API (/api/v1/query_range over a window), and the
// panels are drawn by this script as inline SVG line charts in a page it
// writes itself (Grafana's 24-column grid from each panel's gridPos, the
// panel's unit from fieldConfig, a legend from legendFormat), then
// screenshot in chromium. No chart library, no network beyond Prometheus.
//
// It fails (exit status 1, naming the panel and the query) when
// Prometheus refuses a query (a wrong expression in the dashboard breaks
// CI) and when a query gives no series with a number in the window,
// except the queries listed in MAY_BE_EMPTY below, which the load of
// .ci/dashboard cannot fill. The screenshot is written either way (the
// empty panels say "No data").
//
//   node dashboard.mjs PROMETHEUS_URL DASHBOARD_JSON OUT_PNG [START END]
//
// START and END are Unix times in seconds (the window the load ran;
// default: the last 5 minutes). The page is written beside the PNG
// (OUT.html).
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, basename, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { fail, launch } from "./lib.mjs";

const [prometheus, dashboardPath, out, startArg, endArg] = process.argv.slice(2);
if (!prometheus || !dashboardPath || !out) {
  fail("usage: node dashboard.mjs PROMETHEUS_URL DASHBOARD_JSON OUT_PNG [START END]");
}

// Queries that may answer no series, by panel title and legendFormat,
// with the reason. Everything else must have data.
const MAY_BE_EMPTY = {
  // Written only with REALTIME_BACKEND=redis or nats: the showcase here is
  // one process with the in-process hub.
  "Realtime / bus up": "no realtime backend (one process, in-process hub)",
};

const end = endArg ? Number(endArg) : Math.floor(Date.now() / 1000);
const start = startArg ? Number(startArg) : end - 300;
if (!(end > start)) fail(`the window ${start} .. ${end} is empty`);
// A few seconds, about 150 points at most.
const step = Math.max(2, Math.ceil((end - start) / 150));

const dashboard = JSON.parse(readFileSync(dashboardPath, "utf8"));
const panels = (dashboard.panels || []).filter((p) => p.type !== "row");
if (panels.length === 0) fail(`${dashboardPath}: no panels`);

// Grafana's variables that a query may hold, given this window's values.
const expand = (expr) =>
  expr
    .replaceAll("$__rate_interval", "1m")
    .replaceAll("$__interval", `${step}s`)
    .replaceAll("$__range", `${end - start}s`);

const problems = [];
const query = async (expr) => {
  const url = new URL("/api/v1/query_range", prometheus);
  const body = new URLSearchParams({ query: expr, start, end, step });
  let res;
  try {
    res = await fetch(url, { method: "POST", body });
  } catch (e) {
    fail(`Prometheus at ${prometheus}: ${e.message}`);
  }
  const text = await res.text();
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    return { error: `HTTP ${res.status}: ${text.slice(0, 200)}` };
  }
  if (answer.status !== "success") {
    return { error: `${answer.errorType || "HTTP " + res.status}: ${answer.error || text.slice(0, 200)}` };
  }
  if (answer.data.resultType !== "matrix") {
    return { error: `a ${answer.data.resultType}, not a range of series` };
  }
  return { result: answer.data.result };
};

// A series' name: legendFormat's {{label}}s filled in, or its labels.
const legendOf = (format, metric) => {
  if (format && format !== "__auto") {
    const name = format.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g, (_, l) => metric[l] ?? "");
    if (name.trim()) return name.trim();
  }
  const labels = Object.entries(metric).filter(([k]) => k !== "__name__");
  const inner = labels.map(([k, v]) => `${k}="${v}"`).join(", ");
  return (metric.__name__ || "") + (inner ? `{${inner}}` : "") || "value";
};

const drawn = [];
for (const panel of panels) {
  const series = [];
  const errors = [];
  for (const target of panel.targets || []) {
    if (target.hide || !target.expr) continue;
    const key = `${panel.title} / ${target.legendFormat || target.expr}`;
    const { error, result } = await query(expand(target.expr));
    if (error) {
      errors.push(error);
      problems.push(`panel "${panel.title}": Prometheus refused ${JSON.stringify(target.expr)}: ${error}`);
      continue;
    }
    let numbers = 0;
    for (const s of result) {
      const points = s.values.map(([t, v]) => [t, Number(v)]);
      numbers += points.filter(([, v]) => Number.isFinite(v)).length;
      series.push({ name: legendOf(target.legendFormat, s.metric), points });
    }
    if (numbers === 0 && !(key in MAY_BE_EMPTY)) {
      problems.push(
        `panel "${panel.title}": no data for ${JSON.stringify(target.expr)} ` +
          `(${result.length} series, none with a number between ${start} and ${end})`,
      );
    }
    const shown = numbers === 0 && key in MAY_BE_EMPTY ? ` (may be empty: ${MAY_BE_EMPTY[key]})` : "";
    console.log(`${panel.title}: ${JSON.stringify(target.expr)}: ${result.length} series, ${numbers} points${shown}`);
  }
  drawn.push({
    title: panel.title,
    grid: panel.gridPos || { x: 0, y: 0, w: 12, h: 8 },
    unit: panel.fieldConfig?.defaults?.unit || "short",
    series,
    errors,
  });
}

// What the page draws with: the data, the window, and the code below
// (run in the page, where the legend's size can be measured).
const page = {
  title: dashboard.title || basename(dashboardPath),
  source: dashboardPath,
  start,
  end,
  step,
  panels: drawn,
};

// Runs in the page: draws every panel into its box.
function draw(data) {
  const WIDTH = 1600;
  const PAD = 8;
  const CELL = 30;
  const GAP = 8;
  const HEADER = 52;
  const COLORS = [
    "#73bf69", "#f2cc0c", "#8ab8ff", "#ff780a", "#f2495c", "#5794f2", "#b877d9", "#705da0",
    "#37872d", "#fade2a", "#447ebc", "#c15c17", "#890f02", "#0a437c", "#6d1f62", "#584477",
    "#96d98d", "#ffb357", "#ca95e5", "#ff9830",
  ];
  const SVG = "http://www.w3.org/2000/svg";
  const el = (tag, attrs = {}, text) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const h = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  // Units as Grafana names them: the scale for the largest value, then
  // the suffix.
  const scaleFor = (unit, max) => {
    const m = Math.abs(max);
    const si = (suffix) =>
      m >= 1e9 ? [1e9, "G" + suffix] : m >= 1e6 ? [1e6, "M" + suffix] : m >= 1e3 ? [1e3, "K" + suffix] : [1, suffix];
    switch (unit) {
      case "s":
        return m >= 1 ? [1, " s"] : m >= 1e-3 ? [1e-3, " ms"] : [1e-6, " µs"];
      case "ms":
        return m >= 1000 ? [1000, " s"] : [1, " ms"];
      case "percentunit":
        return [0.01, "%"];
      case "percent":
        return [1, "%"];
      case "bytes": {
        const units = ["B", "KiB", "MiB", "GiB", "TiB"];
        let i = 0;
        while (i < units.length - 1 && m >= 1024 ** (i + 1)) i++;
        return [1024 ** i, " " + units[i]];
      }
      case "reqps": {
        const [f, prefix] = si("");
        return [f, prefix + " req/s"];
      }
      default:
        return si("");
    }
  };
  const niceStep = (range, count) => {
    const raw = range / Math.max(1, count);
    const mag = 10 ** Math.floor(Math.log10(raw));
    const f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
  };
  const decimals = (step) => Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
  const pad2 = (n) => String(n).padStart(2, "0");
  const clock = (t) => {
    const d = new Date(t * 1000);
    return `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
  };

  const root = document.getElementById("grid");
  const col = (WIDTH - 2 * PAD + GAP) / 24;
  let bottom = 0;
  let total = 0;
  for (const panel of data.panels) {
    const g = panel.grid;
    const box = h("section", "panel");
    const left = PAD + g.x * col;
    const top = HEADER + g.y * (CELL + GAP);
    const width = g.w * col - GAP;
    const height = g.h * CELL + (g.h - 1) * GAP;
    Object.assign(box.style, { left: left + "px", top: top + "px", width: width + "px", height: height + "px" });
    bottom = Math.max(bottom, top + height);
    box.append(h("h2", "", panel.title));
    const chart = h("div", "chart");
    const legend = h("ul", "legend");
    box.append(chart, legend);
    root.append(box);
    if (panel.errors.length) {
      // Prometheus refused a query: its message, as Grafana shows it.
      const note = h("p", "error", "Query error: " + panel.errors[0]);
      box.insertBefore(note, chart);
    }

    // Each series with its colour (in query order, as Grafana), its
    // numbers, and its mean for the legend's order.
    const series = panel.series.map((s, i) => {
      const finite = s.points.filter(([, v]) => Number.isFinite(v));
      const mean = finite.length ? finite.reduce((a, [, v]) => a + v, 0) / finite.length : -Infinity;
      const max = finite.length ? Math.max(...finite.map(([, v]) => v)) : NaN;
      return { ...s, color: COLORS[i % COLORS.length], finite, mean, max };
    });
    const withData = series.filter((s) => s.finite.length);

    // The legend: the series with the largest means first; what does
    // not fit in three lines is counted in "+N more".
    const ordered = [...withData].sort((a, b) => b.mean - a.mean);
    const items = ordered.map((s) => {
      const li = h("li");
      const swatch = h("span", "swatch");
      swatch.style.background = s.color;
      li.append(swatch, document.createTextNode(s.name));
      legend.append(li);
      return li;
    });
    const maxLines = 3;
    const lineHeight = 17;
    if (legend.scrollHeight > maxLines * lineHeight + 2) {
      const more = h("li", "more");
      legend.append(more);
      let hidden = 0;
      for (let i = items.length - 1; i > 0; i--) {
        items[i].remove();
        hidden++;
        more.textContent = `+${hidden} more`;
        if (legend.scrollHeight <= maxLines * lineHeight + 2) break;
      }
    }
    total += series.length;

    const cw = chart.clientWidth;
    const ch = chart.clientHeight;
    const svg = el("svg", { width: cw, height: ch, viewBox: `0 0 ${cw} ${ch}` });
    chart.append(svg);
    if (withData.length === 0) {
      svg.append(el("text", { x: cw / 2, y: ch / 2, "text-anchor": "middle", class: "nodata" }, "No data"));
      box.classList.add("empty");
      continue;
    }

    // The y axis: from 0 (or the lowest value) to a round number above
    // the highest, in the unit's scale.
    let lo = Math.min(0, ...withData.map((s) => Math.min(...s.finite.map(([, v]) => v))));
    let hi = Math.max(...withData.map((s) => s.max));
    if (hi <= lo) hi = lo + 1;
    const [scale, suffix] = scaleFor(panel.unit, Math.max(Math.abs(hi), Math.abs(lo)));
    const ticksWanted = Math.max(2, Math.floor(ch / 45));
    const ystep = niceStep((hi - lo) / scale, ticksWanted) * scale;
    lo = Math.floor(lo / ystep) * ystep;
    hi = Math.ceil(hi / ystep - 1e-9) * ystep;
    const fmt = (v) => (v / scale).toFixed(decimals(ystep / scale)) + suffix;
    const labels = [];
    for (let v = lo; v <= hi + ystep / 2; v += ystep) labels.push([v, fmt(Math.abs(v) < ystep / 1e6 ? 0 : v)]);

    // Left margin: the longest tick label.
    const probe = el("text", { class: "tick" }, labels.map(([, l]) => l).sort((a, b) => b.length - a.length)[0]);
    svg.append(probe);
    const ml = Math.ceil(probe.getComputedTextLength()) + 12;
    probe.remove();
    const mr = 12;
    const mt = 8;
    const mb = 22;
    const pw = cw - ml - mr;
    const ph = ch - mt - mb;
    const x = (t) => ml + ((t - data.start) / (data.end - data.start)) * pw;
    const y = (v) => mt + ph - ((v - lo) / (hi - lo)) * ph;

    for (const [v, label] of labels) {
      const yy = Math.round(y(v)) + 0.5;
      svg.append(el("line", { x1: ml, x2: ml + pw, y1: yy, y2: yy, class: "grid" }));
      svg.append(el("text", { x: ml - 6, y: yy + 4, "text-anchor": "end", class: "tick" }, label));
    }
    // The time axis: a round interval giving about one label per 110 px.
    const spans = [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600];
    const wanted = (data.end - data.start) / Math.max(2, Math.floor(pw / 110));
    const tstep = spans.find((s) => s >= wanted) || 3600;
    for (let t = Math.ceil(data.start / tstep) * tstep; t <= data.end; t += tstep) {
      const xx = Math.round(x(t)) + 0.5;
      svg.append(el("line", { x1: xx, x2: xx, y1: mt, y2: mt + ph, class: "grid" }));
      // A label that would run past the chart's ends is left out.
      if (xx - 28 >= ml - 6 && xx + 28 <= cw) {
        svg.append(el("text", { x: xx, y: ch - 6, "text-anchor": "middle", class: "tick" }, clock(t)));
      }
    }
    svg.append(el("line", { x1: ml, x2: ml + pw, y1: mt + ph + 0.5, y2: mt + ph + 0.5, class: "axis" }));

    // One line per series, broken where a point is missing or not a
    // number; a lone point is a dot.
    for (const s of series) {
      let d = "";
      let prev = null;
      let run = [];
      const flush = () => {
        if (run.length === 1) {
          svg.append(el("circle", { cx: run[0][0], cy: run[0][1], r: 2, fill: s.color }));
        }
        run = [];
      };
      for (const [t, v] of s.points) {
        if (!Number.isFinite(v)) {
          flush();
          prev = null;
          continue;
        }
        const p = [x(t).toFixed(1), y(v).toFixed(1)];
        if (prev === null || t - prev > data.step * 1.5) {
          flush();
          d += `M${p[0]},${p[1]}`;
        } else {
          d += `L${p[0]},${p[1]}`;
        }
        run.push(p);
        prev = t;
      }
      flush();
      if (d) svg.append(el("path", { d, stroke: s.color, class: "series" }));
    }
  }
  root.style.height = bottom + PAD + "px";
  document.getElementById("meta").textContent =
    `${data.source} · ${new Date(data.start * 1000).toISOString().slice(0, 10)} ` +
    `${clock(data.start)} to ${clock(data.end)} UTC · Prometheus query_range, step ${data.step} s · ` +
    `${data.panels.length} panels, ${total} series`;
  window.drawn = true;
}

const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${page.title}</title>
<style>
  * { box-sizing: border-box; }
  body { margin: 0; background: #111217; color: #ccccdc; font: 13px "DejaVu Sans", "Liberation Sans", sans-serif; }
  #grid { position: relative; width: 1600px; }
  header { position: absolute; left: 8px; top: 0; right: 8px; height: 52px; display: flex; align-items: baseline; gap: 16px; padding-top: 14px; }
  header h1 { margin: 0; font-size: 20px; color: #fff; font-weight: 600; }
  header p { margin: 0; color: #9fa7b3; font-size: 13px; }
  .panel { position: absolute; background: #181b1f; border: 1px solid #2c3235; border-radius: 3px; display: flex; flex-direction: column; padding: 0 8px 6px; overflow: hidden; }
  .panel h2 { margin: 0; font-size: 14px; font-weight: 600; color: #e0e0ea; line-height: 30px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  .chart { flex: 1; min-height: 0; }
  .chart svg { display: block; }
  .legend { list-style: none; margin: 2px 0 0; padding: 0; display: flex; flex-wrap: wrap; column-gap: 14px; font-size: 12px; line-height: 17px; color: #ccccdc; }
  .legend li { white-space: nowrap; display: flex; align-items: center; }
  .legend li.more { color: #8e8e8e; }
  .swatch { display: inline-block; width: 14px; height: 4px; border-radius: 2px; margin-right: 6px; }
  .grid { stroke: #2c3235; stroke-width: 1; }
  .axis { stroke: #464c54; stroke-width: 1; }
  .tick { fill: #9fa7b3; font-size: 11px; }
  .series { fill: none; stroke-width: 1.5; stroke-linejoin: round; }
  .nodata { fill: #8e8e8e; font-size: 14px; }
  .error { margin: 0 0 4px; color: #ff7383; font-size: 12px; }
</style></head>
<body><div id="grid"><header><h1></h1><p id="meta"></p></header></div>
<script>
const data = ${JSON.stringify(page).replaceAll("<", "\\u003c")};
document.querySelector("h1").textContent = data.title;
(${draw.toString()})(data);
</script></body></html>
`;

mkdirSync(dirname(resolve(out)), { recursive: true });
const htmlPath = resolve(out).replace(/\.png$/, "") + ".html";
writeFileSync(htmlPath, html);

const browser = await launch();
try {
  const context = await browser.newContext({ viewport: { width: 1600, height: 900 } });
  // The page is the script's own: nothing may be fetched.
  await context.route("**/*", (route) =>
    route.request().url().startsWith("file:") ? route.continue() : route.abort(),
  );
  const tab = await context.newPage();
  const errors = [];
  tab.on("pageerror", (e) => errors.push(e.message));
  await tab.goto(pathToFileURL(htmlPath).href);
  await tab.waitForFunction(() => window.drawn === true, null, { timeout: 10000 }).catch(() => {});
  if (errors.length) fail(`the page's script: ${errors.join("; ")}`);
  if (!(await tab.evaluate(() => window.drawn === true))) fail("the page did not finish drawing");
  await tab.screenshot({ path: out, fullPage: true });
} finally {
  await browser.close();
}
console.log(`dashboard: ${panels.length} panels drawn to ${out} (${htmlPath})`);

if (problems.length) {
  for (const p of problems) console.error("FAIL: " + p);
  fail(`${problems.length} of the dashboard's queries failed or had no data (the screenshot is ${out})`);
}
console.log("dashboard: every query ran and every panel the load fills has data");
