/**
 * The community's health, one channel at a time: whether questions get answered and how fast,
 * what is left waiting, who answers and how busy the channel is. Charts over time are uPlot's, as
 * the timeline's; the short categorical ones are plain bars. Names go in as text nodes only.
 */
import uPlot from "uplot";
import type { ChannelHealthData, ReportData } from "../data.js";
import { count, counted, day, duration, el } from "./dom.js";
import { timeTicks } from "./timeline.js";

const HEALTH_COLORS = {
  asked: "#93c5fd",
  answered: "#15803d",
  share: "#7c3aed",
  median: "#1e40af",
  p90: "#c2410c",
  conversations: "#0f766e",
} as const;
/** Unanswered questions by age: the longer they wait, the warmer. */
const AGE_COLORS = ["#fcd34d", "#f59e0b", "#ea580c", "#b91c1c"];

const DAY = 86_400_000;
/** Where the time-to-answer axis has ticks (ms): the units people wait in. */
const WAIT_TICKS = [1, 10, 60, 300, 900, 3600, 4 * 3600, 86_400, 7 * 86_400, 30 * 86_400].map(
  (s) => s * 1000,
);
const CHART_HEIGHT = 220;

/**
 * Draws `#health`: a channel picker when there are several, then the chosen channel's figures.
 * The first channel with questions is shown first (the user's own before the sample's).
 */
export function renderHealth(container: HTMLElement, data: ReportData): void {
  const heading = el("h2", {}, "The community's health");
  const byName = new Map((data.knowledge?.health ?? []).map((h) => [h.channel, h]));
  const channels = data.channels.flatMap((c) => {
    const health = byName.get(c.name);
    return health === undefined ? [] : [{ label: c.displayName ?? c.name, health }];
  });
  if (channels.length === 0) {
    container.replaceChildren(heading, el("p", { class: "muted" }, "No data."));
    return;
  }
  const body = el("div", { class: "health-body" });
  let plots: uPlot[] = [];
  const show = (index: number) => {
    for (const plot of plots) plot.destroy();
    plots = showChannel(body, channels[index].health);
  };
  const first = Math.max(
    0,
    channels.findIndex((c) => c.health.questions > 0),
  );
  const parts: Node[] = [
    heading,
    el(
      "p",
      { class: "muted lead" },
      "Does the community answer its questions, and how fast? Per channel, over all of its data (UTC).",
    ),
  ];
  if (channels.length > 1) {
    const select = el(
      "select",
      { id: "health-channel" },
      ...channels.map((c, i) =>
        el("option", { value: i, ...(i === first && { selected: "" }) }, c.label),
      ),
    );
    select.addEventListener("change", () => show(Number(select.value)));
    parts.push(el("label", { class: "health-picker" }, "Channel ", select));
  }
  container.replaceChildren(...parts, body);
  show(first);
  new ResizeObserver(() => {
    for (const plot of plots) {
      const width = chartWidth(plot.root.parentElement);
      if (width !== plot.width) plot.setSize({ width, height: plot.height });
    }
  }).observe(body);
}

/** One channel's headline, cards and charts; returns its plots (destroyed when another shows). */
function showChannel(body: HTMLElement, h: ChannelHealthData): uPlot[] {
  const per = h.bucket === "day" ? "day" : "week";
  const grid = el("div", { class: "health-grid" });
  body.replaceChildren(headline(h), cards(h), grid);
  const plots: uPlot[] = [];
  const panel = (name: string, title: string, note: string) => {
    const box = el("div", { class: "health-panel", "data-health": name }, el("h3", {}, title));
    if (note !== "") box.appendChild(el("p", { class: "muted note" }, note));
    grid.appendChild(box);
    return box;
  };
  const empty = (box: HTMLElement, text: string) =>
    box.appendChild(el("p", { class: "health-empty" }, text));
  const asked = panel(
    "questions",
    `Questions asked and answered, per ${per}`,
    "Bars: questions asked (light) and answered (dark). Dots: the share answered; dashed: over all.",
  );
  const waits = panel(
    "first-answer",
    `Time to first answer, per ${per}`,
    "From the question to its first answer: half came sooner than the median, 9 in 10 sooner than p90. Days without an answer are gaps.",
  );
  const ages = panel(
    "unanswered",
    "Unanswered questions by age",
    `How long each has waited, on ${day(h.until - 1)} (the data's last day).`,
  );
  const answerers = panel(
    "answerers",
    "Who answers most",
    "Questions each person answered (not their own). People who asked not to be named are left out.",
  );
  if (h.questions === 0) {
    const why =
      "No questions yet: none was found in this channel's extracted conversations. (Conversations extracted by an older version, or with run --candidates, were not searched for questions.)";
    for (const box of [asked, waits, ages, answerers]) empty(box, why);
  } else {
    plots.push(questionsChart(asked, h));
    if (h.firstAnswer.measured === 0)
      empty(waits, "No answered question whose answer is still kept: nothing to time yet.");
    else plots.push(waitsChart(waits, h));
    if (h.unanswered === 0) empty(ages, "None: every question was answered or is unclear.");
    else ages.appendChild(ageBars(h));
    if (h.answerers.length === 0) empty(answerers, "Nobody to name yet.");
    else answerers.appendChild(answererBars(h));
  }
  const busy = panel(
    "conversations",
    "Conversations per day",
    h.bucket === "day"
      ? "Conversations begun each day."
      : "Conversations begun, a day on average over each week.",
  );
  if (h.conversations === 0) empty(busy, "No conversations yet: nothing was segmented.");
  else plots.push(conversationsChart(busy, h));
  return plots;
}

const percent = (share: number): string => `${Math.round(share * 100)}%`;

/** The one sentence a reader takes away: how many get an answer, and how soon. */
function headline(h: ChannelHealthData): HTMLElement {
  if (h.questions === 0) {
    return el("p", { class: "health-headline" }, "No questions yet in this channel.");
  }
  const { medianMs, p90Ms } = h.firstAnswer;
  const speed =
    medianMs === null || p90Ms === null
      ? "."
      : `; half of the answers came within ${duration(medianMs)}, 9 in 10 within ${duration(p90Ms)}.`;
  return el(
    "p",
    { class: "health-headline" },
    el("strong", {}, `${percent(h.answeredShare ?? 0)} of ${counted(h.questions, "question")}`),
    ` got an answer${speed}`,
    h.unanswered > 0 ? ` ${count(h.unanswered)} still wait${h.unanswered === 1 ? "s" : ""}.` : "",
  );
}

function cards(h: ChannelHealthData): HTMLElement {
  const days = Math.max(1, Math.round((h.until - h.since) / DAY));
  const card = (label: string, value: string, note: string, name: string) =>
    el(
      "div",
      { class: "card", "data-stat": name },
      el("div", { class: "label" }, label),
      el("div", { class: "value" }, value),
      el("div", { class: "note" }, note),
    );
  const { medianMs, p90Ms, measured } = h.firstAnswer;
  return el(
    "div",
    { class: "cards" },
    card("questions asked", count(h.questions), `${count(h.unclear)} unclear`, "health-questions"),
    card(
      "answered",
      h.answeredShare === null ? "—" : percent(h.answeredShare),
      `${count(h.answered)} of ${count(h.questions)}`,
      "health-answered",
    ),
    card(
      "first answer, median",
      medianMs === null ? "—" : duration(medianMs),
      `p90 ${p90Ms === null ? "—" : duration(p90Ms)}, over ${counted(measured, "answer")}`,
      "health-first-answer",
    ),
    card("unanswered", count(h.unanswered), "waiting for an answer", "health-unanswered"),
    card(
      "conversations",
      count(h.conversations),
      `${perDayText(h.conversations / days)} a day over ${counted(days, "day")}`,
      "health-conversations",
    ),
  );
}

/** `0.4`, `12`: a rate as precise as its size needs. */
const perDayText = (n: number): string => (n >= 10 ? count(Math.round(n)) : n.toFixed(1));

/** The room a chart has in its panel (its padding aside). */
function chartWidth(panel: HTMLElement | null): number {
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
    legend: { live: true },
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

function questionsChart(box: HTMLElement, h: ChannelHealthData): uPlot {
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
  opts.hooks = { draw: [(u) => overallLine(u, 100 * (h.answeredShare ?? 0))] };
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

function waitsChart(box: HTMLElement, h: ChannelHealthData): uPlot {
  const { medianMs, p90Ms } = h.perBucket;
  let top = 60_000;
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
    { y: { distr: 3, log: 10, auto: false, range: [1000, top * 2] } },
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
  // A log scale has no 0: an instant answer is drawn at a second.
  const floor = (list: (number | null)[]) =>
    list.map((v) => (v === null ? null : Math.max(1000, v)));
  return mount(box, opts, [middles(h), floor(medianMs), floor(p90Ms)]);
}

function conversationsChart(box: HTMLElement, h: ChannelHealthData): uPlot {
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
  box.appendChild(chart);
  return new uPlot(opts, data, chart);
}

const AGE_LABELS: Record<string, string> = {
  "1": "under 1 day",
  "7": "1 to 7 days",
  "30": "7 to 30 days",
  null: "over 30 days",
};

function ageBars(h: ChannelHealthData): HTMLElement {
  const most = Math.max(1, ...h.unansweredByAge.map((a) => a.questions));
  return barList(
    h.unansweredByAge.map((a, i) => ({
      label: AGE_LABELS[String(a.upToDays)],
      value: a.questions,
      width: a.questions / most,
      color: AGE_COLORS[i] ?? AGE_COLORS[AGE_COLORS.length - 1],
    })),
  );
}

function answererBars(h: ChannelHealthData): HTMLElement {
  const most = Math.max(1, ...h.answerers.map((a) => a.answers));
  return barList(
    h.answerers.map((a) => ({
      label: a.name,
      value: a.answers,
      width: a.answers / most,
      color: HEALTH_COLORS.answered,
    })),
  );
}

/** Labelled horizontal bars: a label, a bar as long as its share of the longest, the count. */
function barList(
  rows: { label: string; value: number; width: number; color: string }[],
): HTMLElement {
  return el(
    "div",
    { class: "health-bars", role: "list" },
    ...rows.map((r) => {
      const bar = el("span", { class: r.value === 0 ? "health-bar none" : "health-bar" });
      // Style properties, not a style attribute: no text from the data is ever parsed as CSS.
      bar.style.width = `${(r.width * 100).toFixed(1)}%`;
      bar.style.background = r.color;
      return el(
        "div",
        { class: "health-bar-row", role: "listitem" },
        el("span", { class: "health-bar-label", title: r.label }, r.label),
        el("span", { class: "health-bar-track" }, bar),
        el("span", { class: "health-bar-value" }, count(r.value)),
      );
    }),
  );
}
