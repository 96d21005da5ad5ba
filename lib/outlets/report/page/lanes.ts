/**
 * A channel's conversations as rows under its timeline: one row per platform thread or linked
 * conversation with a message in view, its messages as marks at their times on the timeline's
 * axis, so that interleaved conversations read apart. The busiest few are shown, the rest folded
 * behind a button; zooming the timeline zooms the rows.
 */
import type { ChannelData } from "../data.js";
import { counted, el } from "./dom.js";
import { streamNoun, threadLabel } from "./labels.js";
import type { LaneView } from "./timeline.js";
import { firstAtOrAfter } from "./timeline.js";

/** Rows shown while folded. */
const FOLDED_ROWS = 8;
/** Rows shown unfolded: the busiest, so that a channel of years stays drawable. */
const MOST_ROWS = 200;
const ROW = 20;
/** The row of the channel's own segments (no thread's, no conversation's). */
const CHANNEL_STREAM = -1;

interface Row {
  stream: number;
  messages: number[];
}

export class Lanes {
  private readonly canvas = el("canvas", { class: "lanes-canvas", role: "img" });
  private readonly caption = el("span", { class: "muted" });
  private readonly toggle = el("button", { type: "button" });
  private view: LaneView | null = null;
  private rows: Row[] = [];
  private unfolded = false;
  private channelRowInView = false;
  private selected = -1;
  private highlighted: ReadonlySet<number> | null = null;
  /** Each message's stream (thread index, or the channel's own), or undefined in no segment. */
  private readonly streamOf: (number | undefined)[];

  constructor(
    private readonly container: HTMLElement,
    private readonly channel: ChannelData,
    private readonly times: Float64Array,
    pick: (segment: number) => void,
  ) {
    const segmentOf = channel.messages?.segment ?? [];
    this.streamOf = segmentOf.map((s) =>
      s >= 0 ? (channel.segments[s]?.thread ?? CHANNEL_STREAM) : undefined,
    );
    container.replaceChildren(
      el("div", { class: "toolbar" }, this.caption, this.toggle),
      this.canvas,
    );
    this.toggle.addEventListener("click", () => {
      this.unfolded = !this.unfolded;
      this.draw();
    });
    this.canvas.addEventListener("click", (event) => {
      const segment = this.segmentAt(event.offsetX, event.offsetY);
      if (segment >= 0) pick(segment);
    });
  }

  /** Draws the rows of what the timeline shows now. */
  show(view: LaneView): void {
    this.view = view;
    this.draw();
  }

  select(segment: number): void {
    this.selected = segment;
    this.draw();
  }

  highlight(segments: ReadonlySet<number> | null): void {
    this.highlighted = segments;
    this.draw();
  }

  /** The streams with a message in view, busiest first, cut to what is shown, by start. */
  private rowsInView(view: LaneView): { rows: Row[]; total: number; all: Row[] } {
    const byStream = new Map<number, number[]>();
    const times = this.times;
    for (let p = firstAtOrAfter(times, view.min); p < times.length && times[p] <= view.max; p++) {
      const stream = this.streamOf[p];
      if (stream === undefined) continue;
      const list = byStream.get(stream);
      if (list === undefined) byStream.set(stream, [p]);
      else list.push(p);
    }
    const all = [...byStream].map(([stream, messages]) => ({ stream, messages }));
    this.channelRowInView = byStream.has(CHANNEL_STREAM);
    const shown = all
      .sort((a, b) => b.messages.length - a.messages.length || a.messages[0] - b.messages[0])
      .slice(0, this.unfolded ? MOST_ROWS : FOLDED_ROWS)
      .sort((a, b) => a.messages[0] - b.messages[0]);
    return { rows: shown, total: all.length, all };
  }

  private draw(): void {
    const view = this.view;
    if (view === null) return;
    const { rows, total, all } = this.rowsInView(view);
    this.rows = rows;
    const streams = this.streamsNamed(all);
    const own = this.channelRowInView ? " (and a row of the channel's messages in neither)" : "";
    this.caption.textContent =
      total === 0
        ? "Nothing in view is in a segment."
        : rows.length === total
          ? `${streams} in view${own}, a row each, by when they start in view; click a row to select its segment there. `
          : `The ${rows.length} busiest rows of the ${streams} in view${own}, by when they start in view; click a row to select its segment there. `;
    this.toggle.hidden = total <= FOLDED_ROWS;
    this.toggle.textContent = this.unfolded ? "fold" : `show ${Math.min(total, MOST_ROWS)} rows`;
    this.paint(view);
  }

  private paint(view: LaneView): void {
    const dpr = devicePixelRatio;
    // The canvas has the timeline's border, so that its plot area lines up with the timeline's.
    const width = Math.max(0, this.container.clientWidth - 2);
    const height = this.rows.length * ROW + 4;
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${height}px`;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    const ctx = this.canvas.getContext("2d");
    if (ctx === null) return;
    ctx.scale(dpr, dpr);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "bottom";
    const x = (ts: number) =>
      view.left + ((ts - view.min) / (view.max - view.min || 1)) * view.width;
    const labels = this.rows.map((row) => this.rowLabel(row.stream));
    // What the picture shows, for a reader that cannot see it (and the tests).
    this.canvas.setAttribute("aria-label", `rows: ${labels.join("; ")}`);
    ctx.save();
    ctx.beginPath();
    ctx.rect(view.left, 0, view.width, height);
    ctx.clip();
    this.rows.forEach((row, r) => {
      const y = r * ROW + ROW - 5;
      const first = x(this.times[row.messages[0]]);
      const last = x(this.times[row.messages[row.messages.length - 1]]);
      ctx.fillStyle = r % 2 === 0 ? "rgba(148, 163, 184, 0.10)" : "rgba(148, 163, 184, 0.0)";
      ctx.fillRect(view.left, r * ROW, view.width, ROW);
      ctx.strokeStyle = "#94a3b8";
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(first, y);
      ctx.lineTo(Math.max(last, first + 1), y);
      ctx.stroke();
      let lastPixel = Number.NEGATIVE_INFINITY;
      for (const p of row.messages) {
        const px = Math.round(x(this.times[p]));
        const segment = this.channel.messages?.segment[p] ?? -1;
        const marked = segment === this.selected || (this.highlighted?.has(segment) ?? false);
        if (px === lastPixel && !marked) continue;
        lastPixel = px;
        ctx.fillStyle =
          segment === this.selected
            ? "#ca8a04"
            : marked
              ? "#db2777"
              : segment % 2 === 0
                ? "#1e40af"
                : "#0f766e";
        ctx.beginPath();
        ctx.arc(px, y, marked ? 3.5 : 2.5, 0, 2 * Math.PI);
        ctx.fill();
      }
      // The label sits over its own row's start, cut where the plot ends.
      const label = labels[r];
      ctx.fillStyle = "rgba(255, 255, 255, 0.8)";
      const at = Math.min(Math.max(first, view.left), view.left + view.width - 40);
      ctx.fillRect(at, y - 15, Math.min(ctx.measureText(label).width + 4, 360), 11);
      ctx.fillStyle = "#334155";
      ctx.fillText(label, at + 2, y - 4, 356);
    });
    ctx.restore();
  }

  /** `2 threads and 14 conversations`, of the rows' streams (the channel's own left out). */
  private streamsNamed(rows: readonly Row[]): string {
    const count = { thread: 0, conversation: 0 };
    for (const { stream } of rows) {
      const thread = this.channel.threads[stream];
      if (thread !== undefined) count[streamNoun(thread)]++;
    }
    const { thread: threads, conversation: conversations } = count;
    if (threads > 0 && conversations > 0)
      return `${counted(threads, "thread")} and ${counted(conversations, "conversation")}`;
    return threads > 0 ? counted(threads, "thread") : counted(conversations, "conversation");
  }

  private rowLabel(stream: number): string {
    const thread = this.channel.threads[stream];
    if (thread !== undefined) return threadLabel(thread);
    // The channel's own row, said in its streams' noun: linked conversations, else threads.
    return this.channel.threads.some((t) => streamNoun(t) === "conversation")
      ? "the channel, in no conversation"
      : "the channel, outside threads";
  }

  /** The segment of the message of a clicked row nearest the click's time, else -1. */
  private segmentAt(offsetX: number, offsetY: number): number {
    const view = this.view;
    const row = this.rows[Math.floor(offsetY / ROW)];
    if (view === null || row === undefined) return -1;
    const ts = view.min + ((offsetX - view.left) / view.width) * (view.max - view.min);
    let best = -1;
    let distance = Number.POSITIVE_INFINITY;
    for (const p of row.messages) {
      const d = Math.abs(this.times[p] - ts);
      if (d < distance) {
        distance = d;
        best = p;
      }
    }
    return best < 0 ? -1 : (this.channel.messages?.segment[best] ?? -1);
  }
}
