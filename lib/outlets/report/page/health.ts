/**
 * The community's health, one channel at a time: whether questions get answered and how fast,
 * what is left waiting, who answers and how busy the channel is. Charts over time are uPlot's, as
 * the timeline's; the short categorical ones are plain bars. Names go in as text nodes only.
 */
import type uPlot from "uplot";
import type { ChannelHealthData, ReportData } from "../data.js";
import { count, counted, day, el, elapsed, within } from "./dom.js";
import {
  chartWidth,
  conversationsChart,
  HEALTH_COLORS,
  perDayText,
  questionsChart,
  waitsChart,
} from "./health-charts.js";

/** Unanswered questions by age: the longer they wait, the warmer. */
const AGE_COLORS = ["#fcd34d", "#f59e0b", "#ea580c", "#b91c1c"];

const DAY = 86_400_000;

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
  const { medianMs, p90Ms, clockMs } = h.firstAnswer;
  const speed =
    medianMs === null || p90Ms === null
      ? "."
      : `; half of the answers came within ${within(medianMs, clockMs)}, 9 in 10 within ${within(p90Ms, clockMs)}.`;
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
  const { medianMs, p90Ms, measured, clockMs } = h.firstAnswer;
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
      medianMs === null ? "—" : elapsed(medianMs, clockMs),
      `p90 ${p90Ms === null ? "—" : elapsed(p90Ms, clockMs)}, over ${counted(measured, "answer")}`,
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
