/** The top of the report: the totals and the segment size distribution. */
import uPlot from "uplot";
import type { ReportData, SizeDistribution } from "../data.js";
import { count, el } from "./dom.js";

export function renderSummary(container: HTMLElement, data: ReportData): void {
  const s = data.summary;
  const cards = el("div", { class: "cards" });
  const card = (label: string, value: string, note?: string, name?: string) =>
    cards.appendChild(
      el(
        "div",
        { class: "card", "data-stat": name },
        el("div", { class: "label" }, label),
        el("div", { class: "value" }, value),
        note === undefined ? null : el("div", { class: "note" }, note),
      ),
    );
  card("channels", count(s.channels), undefined, "channels");
  card(
    "messages",
    s.messages === null ? "—" : count(s.messages),
    s.messages === null ? "input not given" : `${count(s.inSegments)} in segments`,
    "messages",
  );
  if (s.conversations !== undefined) {
    card("conversations", count(s.conversations), "linked by the reply linker", "conversations");
  }
  card("segments", count(s.segments), undefined, "segments");
  card("late", count(s.lateSegments), `segments (${count(s.lateMessages)} messages)`, "late");
  if (s.messages !== null) {
    card("still open", count(s.open), "messages withheld", "open");
    card("in no segment", count(s.dropped), "below min-items, or not stored", "dropped");
  }
  if (s.missing > 0)
    card("missing", count(s.missing), "segment messages not in the input", "missing");
  const extraction = s.extraction;
  if (extraction !== null) {
    card(
      "extracted",
      `${count(extraction.segments)} of ${count(s.segments)}`,
      `${count(extraction.topics)} topics over the segments, ${count(data.channels.reduce((sum, c) => sum + c.topics.length, 0))} distinct`,
      "extracted",
    );
    card("LLM calls", count(extraction.usage.calls), extraction.models.join(", "), "calls");
    card(
      "tokens",
      count(extraction.usage.inputTokens + extraction.usage.outputTokens),
      `${count(extraction.usage.inputTokens)} in (${count(extraction.usage.cacheReadTokens)} cached), ${count(extraction.usage.outputTokens)} out`,
      "tokens",
    );
  }
  const sizes = el("div", { class: "card sizes" }, el("div", { class: "label" }, "segment sizes"));
  cards.appendChild(sizes);
  container.replaceChildren(cards);
  if (s.sizes !== null) renderSizes(sizes, s.sizes);
  if (extraction !== null && extraction.unmatched > 0) {
    container.appendChild(
      el(
        "p",
        { class: "warn" },
        `${count(extraction.unmatched)} candidate line(s) name a segment that is not among the segments; left out.`,
      ),
    );
  }
}

function renderSizes(card: HTMLElement, sizes: SizeDistribution): void {
  card.appendChild(
    el(
      "div",
      { class: "note" },
      `min ${count(sizes.min)}, median ${count(sizes.median)}, p90 ${count(sizes.p90)}, max ${count(sizes.max)} messages; bars: segments of 1, 2–3, 4–7, … messages`,
    ),
  );
  const chart = el("div", { class: "size-chart" });
  card.appendChild(chart);
  // Each bar is labelled with the least size it counts: 1, 2, 4, … (a bar holds up to the next).
  const labels = sizes.buckets.map((b) => `${b.from}`);
  new uPlot(
    {
      width: 300,
      height: 120,
      legend: { show: false },
      cursor: { show: false },
      scales: {
        x: { time: false, range: [-0.5, labels.length - 0.5] },
        y: { range: (_, __, max) => [0, Math.max(1, max) * 1.1] },
      },
      axes: [
        {
          splits: () => labels.map((_, i) => i),
          values: (_, splits) => splits.map((i) => labels[i] ?? ""),
          size: 30,
          font: "10px system-ui, sans-serif",
        },
        // Whole segments only.
        {
          size: 40,
          font: "10px system-ui, sans-serif",
          incrs: [
            1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000,
          ],
        },
      ],
      series: [
        {},
        {
          label: "segments",
          fill: "rgba(37, 99, 235, 0.6)",
          stroke: "#1e40af",
          paths: uPlot.paths.bars?.({ size: [0.8, 40] }),
          points: { show: false },
        },
      ],
    },
    [labels.map((_, i) => i), sizes.buckets.map((b) => b.segments)],
    chart,
  );
}
