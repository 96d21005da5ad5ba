/**
 * The health section's charts over time, drawn by uPlot as the timeline is: questions asked and
 * answered with the share answered, time to first answer, conversations per day. Each bucket's
 * bar stands over its day or week; times are UTC.
 */
import uPlot from "uplot";
import type { ChannelHealthData } from "../data.js";
import { count, day, duration, el } from "./dom.js";
import { timeTicks } from "./timeline.js";

export const HEALTH_COLORS = {
  asked: "#93c5fd",
  answered: "#15803d",
  share: "#7c3aed",
  median: "#1e40af",
  p90: "#c2410c",
  conversations: "#0f766e",
} as const;

const DAY = 86_400_000;
/** Where the time-to-answer axis has ticks (ms): the units people wait in. */
const WAIT_TICKS = [1, 10, 60, 300, 900, 3600, 4 * 3600, 86_400, 7 * 86_400, 30 * 86_400].map(
  (s) => s * 1000,
);
const CHART_HEIGHT = 220;
/** `0.4`, `12`: a rate as precise as its size needs. */
export const perDayText = (n: number): string => (n >= 10 ? count(Math.round(n)) : n.toFixed(1));

/** The room a chart has in its panel (its padding aside). */
export function chartWidth(panel: HTMLElement | null): number {
  return Math.max(280, (panel?.clientWidth ?? 0) - 24);
}

/** A bucket's length in ms. */
const stepOf = (h: ChannelHealthData): number => (h.bucket === "day" ? DAY : 7 * DAY);

/** Each bucket's middle: its bar stands over its day (or week), not astride its first instant. */
const middles = (h: ChannelHealthData): number[] => h.starts.map((s) => s + stepOf(h) / 2);

/** Tick spacings on the time axis: whole days at least, whole weeks for weekly buckets. */
const TIME_INCRS = [1, 2, 7, 14, 30, 90, 180, 365].map((d) => d * DAY);

/** The options every time chart shares: UTC time on x, a legend, the bucket's name on hover. */
function timeOptions(
  box: HTMLElement,
  h: ChannelHealthData,
  y: uPlot.Axis[],
  scales: uPlot.Scales,
  series: uPlot.Series[],
): uPlot.Options {
  const step = stepOf(h);
  const first = h.starts[0];
  const last = h.starts[h.starts.length - 1];
  return {
    width: chartWidth(box),
    height: CHART_HEIGHT,
    ms: 1,
    // Room on the right for the last date's label where no axis is there.
    padding: [10, y.length > 1 ? 0 : 40, 0, 0],
    tzDate: (ts) => uPlot.tzDate(new Date(ts), "Etc/UTC"),
    cursor: { y: false, points: { size: 6 } },
    // The page's own legend and readout (mount): uPlot's is a table, and the page makes none.
    legend: { show: false },
    scales: { x: { time: true, range: () => [first, last + step] }, ...scales },
    axes: [
      {
        space: 70,
        incrs: TIME_INCRS.filter((incr) => incr >= step),
        values: (_, splits, _a, _s, increment) => timeTicks(splits, increment),
      },
      ...y,
    ],
    series: [
      {
        label: h.bucket === "day" ? "day" : "week of",
        value: (_, ts) => (ts === null ? "" : day(ts - step / 2)),
      },
      ...series,
    ],
  };
}

const bars = (size: number, max: number) => uPlot.paths.bars?.({ size: [size, max], align: 0 });

export function questionsChart(box: HTMLElement, h: ChannelHealthData): uPlot {
  const { questions, answered } = h.perBucket;
  const share = questions.map((n, i) => (n === 0 ? null : (100 * answered[i]) / n));
  const opts = timeOptions(
    box,
    h,
    [
      { label: "questions", labelSize: 18, size: 44, incrs: WHOLE },
      {
        scale: "%",
        side: 1,
        label: "% answered",
        labelSize: 18,
        size: 48,
        grid: { show: false },
        values: (_, splits) => splits.map((v) => `${v}%`),
      },
    ],
    {
      y: { range: (_, __, max) => [0, Math.max(1, max) * 1.1] },
      "%": { range: [0, 105] },
    },
    [
      {
        label: "asked",
        fill: HEALTH_COLORS.asked,
        stroke: HEALTH_COLORS.asked,
        width: 0,
        paths: bars(0.8, 48),
        points: { show: false },
        value: (_, v) => (v === null ? "" : count(v)),
      },
      {
        label: "answered",
        fill: HEALTH_COLORS.answered,
        stroke: HEALTH_COLORS.answered,
        width: 0,
        paths: bars(0.5, 30),
        points: { show: false },
        value: (_, v) => (v === null ? "" : count(v)),
      },
      {
        label: "share answered",
        scale: "%",
        stroke: HEALTH_COLORS.share,
        // Points alone: a line would join buckets with a handful of questions into a zigzag.
        paths: () => null,
        points: { show: true, size: 7, width: 0, fill: HEALTH_COLORS.share },
        value: (_, v) => (v === null ? "" : `${Math.round(v)}%`),
      },
    ],
  );
  // The whole span's share as a dashed line: the bucket's points read against it.
  opts.hooks = { ...opts.hooks, draw: [(u) => overallLine(u, 100 * (h.answeredShare ?? 0))] };
  return mount(box, opts, [middles(h), questions, answered, share]);
}

function overallLine(u: uPlot, share: number): void {
  const { ctx } = u;
  const { left, width } = u.bbox;
  const dpr = devicePixelRatio;
  const y = Math.round(u.valToPos(share, "%", true));
  ctx.save();
  ctx.strokeStyle = HEALTH_COLORS.share;
  ctx.setLineDash([5 * dpr, 4 * dpr]);
  ctx.lineWidth = dpr;
  ctx.beginPath();
  ctx.moveTo(left, y);
  ctx.lineTo(left + width, y);
  ctx.stroke();
  ctx.font = `${11 * dpr}px system-ui, sans-serif`;
  ctx.textAlign = "right";
  const label = `${Math.round(share)}% answered overall`;
  const x = left + width - 4 * dpr;
  // On a backing, so that it reads over the bars it may cross.
  ctx.fillStyle = "rgba(255, 255, 255, 0.9)";
  ctx.fillRect(
    x - ctx.measureText(label).width - 3 * dpr,
    y - 16 * dpr,
    ctx.measureText(label).width + 6 * dpr,
    14 * dpr,
  );
  ctx.fillStyle = HEALTH_COLORS.share;
  ctx.fillText(label, x, y - 5 * dpr);
  ctx.restore();
}

export function waitsChart(box: HTMLElement, h: ChannelHealthData): uPlot {
  const { medianMs, p90Ms } = h.perBucket;
  // A log scale has no 0: an instant answer is drawn at a second, one within the clock of a log
  // that keeps minutes at a minute (it is known only to be under one).
  const least = Math.max(1000, h.firstAnswer.clockMs);
  let top = Math.max(60_000, least);
  for (const v of p90Ms) if (v !== null) top = Math.max(top, v);
  const opts = timeOptions(
    box,
    h,
    [
      {
        label: "time to first answer",
        labelSize: 18,
        size: 56,
        splits: (u) => {
          const { min = 0, max = 0 } = u.scales.y;
          return WAIT_TICKS.filter((t) => t >= min && t <= max);
        },
        // uPlot keeps only powers of ten on a log axis unless told otherwise.
        filter: (_, splits) => splits,
        values: (_, splits) => splits.map((v) => duration(v)),
      },
    ],
    // A decade at least, so that a tick above the floor is shown.
    { y: { distr: 3, log: 10, auto: false, range: [least, Math.max(top * 2, least * 10)] } },
    [
      {
        label: "median",
        stroke: HEALTH_COLORS.median,
        width: 2,
        points: { show: true, size: 5, fill: HEALTH_COLORS.median },
        value: (_, v) => (v === null ? "" : duration(v)),
      },
      {
        label: "p90",
        stroke: HEALTH_COLORS.p90,
        width: 2,
        dash: [6, 4],
        points: { show: true, size: 5, fill: HEALTH_COLORS.p90 },
        value: (_, v) => (v === null ? "" : duration(v)),
      },
    ],
  );
  const floor = (list: (number | null)[]) =>
    list.map((v) => (v === null ? null : Math.max(least, v)));
  return mount(box, opts, [middles(h), floor(medianMs), floor(p90Ms)]);
}

export function conversationsChart(box: HTMLElement, h: ChannelHealthData): uPlot {
  // A week's bucket is an average over its days within the data's span (the first and last
  // weeks can be partial).
  const perDay = h.perBucket.conversations.map((n, i) => {
    const start = Math.max(h.starts[i], Math.floor(h.since / DAY) * DAY);
    const end = Math.min(h.starts[i] + (h.bucket === "day" ? DAY : 7 * DAY), h.until);
    return n / Math.max(1, Math.round((end - start) / DAY));
  });
  const opts = timeOptions(
    box,
    h,
    [
      {
        label: "conversations / day",
        labelSize: 18,
        size: 44,
        ...(h.bucket === "day" && { incrs: WHOLE }),
      },
    ],
    { y: { range: (_, __, max) => [0, Math.max(1, max) * 1.1] } },
    [
      {
        label: "conversations a day",
        fill: "rgba(15, 118, 110, 0.6)",
        stroke: HEALTH_COLORS.conversations,
        width: 0,
        paths: bars(0.8, 48),
        points: { show: false },
        value: (_, v) => (v === null ? "" : perDayText(v)),
      },
    ],
  );
  return mount(box, opts, [middles(h), perDay]);
}

/** Whole counts only on a count axis. */
const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000];

function mount(box: HTMLElement, opts: uPlot.Options, data: uPlot.AlignedData): uPlot {
  const chart = el("div", { class: "health-chart" });
  const hint = "Point at a bar for its figures.";
  const readout = el("div", { class: "health-readout muted" }, hint);
  const series = opts.series.slice(1);
  const legend = el(
    "div",
    { class: "health-legend" },
    ...series.map((s) => {
      const swatch = el("span", { class: s.dash ? "swatch dashed" : "swatch" });
      const color = String(typeof s.fill === "string" ? s.fill : s.stroke);
      // Style properties, not an attribute: nothing from the data is ever parsed as CSS.
      if (s.dash) swatch.style.borderColor = color;
      else swatch.style.background = color;
      return el("span", { class: "legend-item" }, swatch, String(s.label));
    }),
  );
  box.append(chart, legend, readout);
  const describe = (u: uPlot, idx: number): string => {
    const x = opts.series[0] as { label: string; value: (u: uPlot, v: number) => string };
    const figures = series.map((s, k) => {
      const value = (s.value as (u: uPlot, v: number | null) => string)(
        u,
        u.data[k + 1][idx] ?? null,
      );
      return `${String(s.label)} ${value === "" ? "—" : value}`;
    });
    return `${x.label} ${x.value(u, u.data[0][idx])}: ${figures.join(" · ")}`;
  };
  opts.hooks = {
    ...opts.hooks,
    setCursor: [
      (u) => {
        const idx = u.cursor.idx;
        readout.textContent = idx === null || idx === undefined ? hint : describe(u, idx);
      },
    ],
  };
  return new uPlot(opts, data, chart);
}
