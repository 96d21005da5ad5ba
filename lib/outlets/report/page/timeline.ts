/**
 * A channel's timeline, drawn by uPlot: one mark per message at its time, its height the silence
 * before it (log scale, so that the cuts stand out: a silence cut lies above the settle line, a
 * size cut is the highest mark of its stretch), with the segments as bands behind the marks and
 * each cut labelled on its band's left edge.
 */
import uPlot from "uplot";
import { type ChannelData, DROPPED, OPEN } from "../data.js";
import { duration } from "./dom.js";
import { cutTag } from "./labels.js";

export const MARK_COLORS = {
  segment: "#1e40af",
  late: "#c2410c",
  open: "#15803d",
  dropped: "#6b7280",
} as const;
export const CUT_COLORS = { silence: "#2563eb", size: "#dc2626", late: "#c2410c" } as const;

const SECOND = 1000;
const DAY = 86_400 * SECOND;
/** Where the y axis has ticks: the units people think of silences in (seconds). */
const GAP_TICKS = [1, 10, 60, 600, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400, 365 * 86400];

export interface TimelineEvents {
  /** A click on the timeline that lands on a segment (by its message or its band). */
  pick(segment: number): void;
  /** The message nearest the cursor, or null when the cursor leaves. */
  hover(position: number | null): void;
  /** After the first drawing. */
  drawn(): void;
  /** After each drawing: the x axis drawn, for what lines up under it. */
  view?(view: LaneView): void;
}

/** The timeline's x axis: the times at its ends, and where its plot area lies (CSS pixels). */
export interface LaneView {
  min: number;
  max: number;
  left: number;
  width: number;
}

export class Timeline {
  private readonly plot: uPlot;
  private selected = -1;
  /** Segments marked apart from the others (those of a topic), or null. */
  private highlighted: ReadonlySet<number> | null = null;
  private readonly bandOrder: number[];

  constructor(
    container: HTMLElement,
    private readonly channel: ChannelData,
    /** Each message's epoch ms, in channel order; null without the messages. */
    private readonly times: Float64Array | null,
    private readonly settleMs: number,
    events: TimelineEvents,
  ) {
    // Late segments last, so that their bands are drawn over the ones they overlap.
    this.bandOrder = channel.segments
      .map((_, i) => i)
      .sort(
        (a, b) =>
          Number(channel.segments[a].cut === "late") - Number(channel.segments[b].cut === "late"),
      );
    const { data, top } = this.plotData();
    let drawn = false;
    this.plot = new uPlot(
      {
        width: Math.max(320, container.clientWidth),
        height: 260,
        ms: 1,
        tzDate: (ts) => uPlot.tzDate(new Date(ts), "Etc/UTC"),
        legend: { show: false },
        cursor: { y: false, points: { size: 7 } },
        scales: {
          x: { time: true },
          // A fixed range: uPlot need not scan every series for its extremes at each redraw.
          y: { distr: 3, log: 10, auto: false, range: [0.5, top] },
        },
        axes: [
          {
            // Room for the widest label, a time with seconds.
            space: 80,
            values: (_, splits, _axis, _space, increment) => timeTicks(splits, increment),
          },
          {
            size: 56,
            splits: (u) => {
              const { min = 0, max = 0 } = u.scales.y;
              return GAP_TICKS.filter((t) => t >= min && t <= max);
            },
            // uPlot keeps only powers of ten on a log axis unless told otherwise.
            filter: (_, splits) => splits,
            values: (_, splits) => splits.map((s) => duration(s * SECOND)),
            label: "silence before",
            labelSize: 18,
          },
        ],
        series: [
          {},
          markSeries("in a segment", MARK_COLORS.segment),
          markSeries("in a late segment", MARK_COLORS.late),
          markSeries("still open", MARK_COLORS.open),
          markSeries("in no segment", MARK_COLORS.dropped),
        ],
        hooks: {
          drawClear: [(u) => this.drawBands(u)],
          draw: [
            (u) => {
              this.drawSettleLine(u);
              this.drawCuts(u);
              events.view?.({
                min: u.scales.x.min ?? 0,
                max: u.scales.x.max ?? 0,
                left: u.bbox.left / devicePixelRatio,
                width: u.bbox.width / devicePixelRatio,
              });
              if (!drawn) {
                drawn = true;
                events.drawn();
              }
            },
          ],
          setCursor: [(u) => events.hover(this.times ? (u.cursor.idx ?? null) : null)],
        },
      },
      data,
      container,
    );
    this.listenForClicks(events);
  }

  /**
   * Marks segment `index` and, with `zoom`, shows it with the cuts on either side: the silence to
   * each neighbour is in view when it is no longer than twice the segment (else half of it is).
   */
  select(index: number, zoom: boolean): void {
    this.selected = index;
    const segment = this.channel.segments[index];
    if (!zoom || !segment) {
      this.plot.redraw(false, false);
      return;
    }
    const span = Math.max(segment.last - segment.first, 60 * SECOND);
    let before = Number.POSITIVE_INFINITY;
    let after = Number.POSITIVE_INFINITY;
    for (const other of this.channel.segments) {
      if (other === segment || other.cut === "late") continue;
      if (other.last < segment.first) before = Math.min(before, segment.first - other.last);
      if (other.first > segment.last) after = Math.min(after, other.first - segment.last);
    }
    const margin = (gap: number) => (gap <= 2 * span ? gap + span / 10 : span / 2);
    this.plot.setScale("x", {
      min: segment.first - margin(before),
      max: segment.last + margin(after),
    });
  }

  /** Marks `segments` apart from the others (null: none). */
  highlight(segments: ReadonlySet<number> | null): void {
    this.highlighted = segments;
    this.plot.redraw(false, false);
  }

  showAll(): void {
    const x = this.plot.data[0];
    if (x.length === 0) return;
    // A single instant gets a minute either side: a scale of no width shows nothing.
    const pad = x[0] === x[x.length - 1] ? 60 * SECOND : 0;
    this.plot.setScale("x", { min: x[0] - pad, max: x[x.length - 1] + pad });
  }

  setWidth(width: number): void {
    const wanted = Math.max(320, width);
    // A resize observer reports the first size too: only a change is worth a redraw.
    if (wanted !== this.plot.width) this.plot.setSize({ width: wanted, height: this.plot.height });
  }

  destroy(): void {
    this.plot.destroy();
  }

  /** x: message times (segment bounds without the messages); y: per status, the silence before. */
  private plotData(): { data: uPlot.AlignedData; top: number } {
    const { times, channel } = this;
    const settle = this.settleMs / SECOND;
    if (times === null || channel.messages === null) {
      const bounds = [...new Set(channel.segments.flatMap((s) => [s.first, s.last]))].sort(
        (a, b) => a - b,
      );
      const empty = bounds.map(() => null);
      return { data: [bounds, empty, empty, empty, empty], top: Math.max(settle, 1) * 30 };
    }
    const n = times.length;
    const gaps = new Float64Array(n);
    const { segment } = channel.messages;
    let widest = settle;
    // A thread segmented on its own is its own conversation: the silence before a reply of it is
    // since the thread's previous message, as its cuts are measured (-1: the channel's own).
    const previous = new Map<number, number>();
    const firsts: number[] = [];
    for (let p = 0; p < n; p++) {
      const s = segment[p];
      const stream = s >= 0 ? (channel.segments[s].thread ?? -1) : -1;
      const before = previous.get(stream);
      previous.set(stream, times[p]);
      if (before === undefined) {
        firsts.push(p);
        continue;
      }
      gaps[p] = Math.max(1, (times[p] - before) / SECOND);
      widest = Math.max(widest, gaps[p]);
    }
    const top = widest * 3;
    // A stream's first message has no silence before it: it sits at the top.
    for (const p of firsts) gaps[p] = widest * 2;
    const series: (number | null)[][] = [0, 1, 2, 3].map(() => new Array(n).fill(null));
    for (let p = 0; p < n; p++) {
      const s = segment[p];
      const status =
        s === OPEN ? 2 : s === DROPPED ? 3 : channel.segments[s].cut === "late" ? 1 : 0;
      series[status][p] = gaps[p];
    }
    return { data: [times, ...series], top };
  }

  private drawBands(u: uPlot): void {
    const { ctx } = u;
    const { top, height, left, width } = u.bbox;
    const min = u.scales.x.min ?? 0;
    const max = u.scales.x.max ?? 0;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    // Bands narrower than a pixel that would land on the pixel just drawn are skipped: at the
    // scale of years, thousands of segments share a few hundred pixels.
    let lastPixel = Number.NEGATIVE_INFINITY;
    for (const i of this.bandOrder) {
      const segment = this.channel.segments[i];
      if (segment.last < min || segment.first > max) continue;
      const x0 = u.valToPos(segment.first, "x", true);
      const x1 = Math.max(u.valToPos(segment.last, "x", true), x0 + 1);
      const late = segment.cut === "late";
      const marked = this.highlighted?.has(i) ?? false;
      if (!late && !marked && i !== this.selected && Math.floor(x1) <= lastPixel) continue;
      if (!late) lastPixel = Math.floor(x1);
      ctx.fillStyle =
        i === this.selected
          ? "rgba(234, 179, 8, 0.45)"
          : marked
            ? "rgba(219, 39, 119, 0.28)"
            : late
              ? "rgba(234, 88, 12, 0.22)"
              : i % 2 === 0
                ? "rgba(59, 130, 246, 0.12)"
                : "rgba(20, 184, 166, 0.14)";
      ctx.fillRect(x0, top, x1 - x0, height);
    }
    ctx.restore();
  }

  private drawSettleLine(u: uPlot): void {
    const { ctx } = u;
    const { left, width } = u.bbox;
    const y = u.valToPos(this.settleMs / SECOND, "y", true);
    ctx.save();
    ctx.strokeStyle = "#7c3aed";
    ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
    ctx.lineWidth = devicePixelRatio;
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(left + width, y);
    ctx.stroke();
    ctx.fillStyle = "#7c3aed";
    ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
    ctx.textAlign = "right";
    ctx.fillText(`settle ${duration(this.settleMs)}`, left + width - 4, y - 4 * devicePixelRatio);
    ctx.restore();
  }

  /** A line at each cut in view, and its cause where there is room for the words. */
  private drawCuts(u: uPlot): void {
    const { ctx } = u;
    const { top, height, left, width } = u.bbox;
    const min = u.scales.x.min ?? 0;
    const max = u.scales.x.max ?? 0;
    const dpr = devicePixelRatio;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    ctx.font = `${11 * dpr}px system-ui, sans-serif`;
    ctx.textBaseline = "top";
    ctx.textAlign = "left";
    let lastLine = Number.NEGATIVE_INFINITY;
    let labelEnd = Number.NEGATIVE_INFINITY;
    let row = 0;
    for (const i of this.bandOrder) {
      const segment = this.channel.segments[i];
      if (segment.cut === "start" || segment.first < min || segment.first > max) continue;
      const x = Math.round(u.valToPos(segment.first, "x", true));
      const color = CUT_COLORS[segment.cut];
      if (x !== lastLine || segment.cut === "late") {
        ctx.fillStyle = color;
        ctx.fillRect(x, top, dpr, height);
        lastLine = x;
      }
      const label = cutTag(segment);
      const labelWidth = ctx.measureText(label).width;
      // Two rows of labels: a label that would run into the one before it goes to the other
      // row, and is left out when that one is taken too.
      const fits = x + 3 * dpr > labelEnd;
      if (!fits && row === 1) continue;
      row = fits ? 0 : 1;
      ctx.fillStyle = "rgba(255, 255, 255, 0.85)";
      const y = top + 3 * dpr + row * 14 * dpr;
      ctx.fillRect(x + 2 * dpr, y - dpr, labelWidth + 4 * dpr, 13 * dpr);
      ctx.fillStyle = color;
      ctx.fillText(label, x + 4 * dpr, y);
      if (fits) labelEnd = x + labelWidth + 10 * dpr;
    }
    ctx.restore();
  }

  /** A click (not a drag, which zooms) picks the segment of the nearest message, or of the band. */
  private listenForClicks(events: TimelineEvents): void {
    let downAt: number | null = null;
    this.plot.over.addEventListener("mousedown", (event) => {
      downAt = event.clientX;
    });
    this.plot.over.addEventListener("mouseup", (event) => {
      if (downAt === null || Math.abs(event.clientX - downAt) > 3) return;
      downAt = null;
      const picked = this.segmentAt(this.plot.posToVal(this.plot.cursor.left ?? 0, "x"));
      if (picked >= 0) events.pick(picked);
    });
  }

  private segmentAt(ts: number): number {
    const { segments, messages } = this.channel;
    const nearest = this.plot.cursor.idx;
    if (messages !== null && nearest !== null && nearest !== undefined) {
      const s = messages.segment[nearest];
      if (s >= 0) return s;
    }
    // Late bands lie over others: the last drawn that holds the time wins.
    for (let k = this.bandOrder.length - 1; k >= 0; k--) {
      const segment = segments[this.bandOrder[k]];
      if (segment.first <= ts && ts <= segment.last) return this.bandOrder[k];
    }
    return -1;
  }
}

function markSeries(label: string, color: string): uPlot.Series {
  return {
    label,
    stroke: color,
    paths: () => null,
    points: {
      show: true,
      size: 4,
      width: 0,
      fill: color,
      filter: onePerPixel,
    },
  };
}

/**
 * The marks worth drawing: one per pixel of the plot. Of 180,000 messages over years most land on
 * a pixel already taken, and drawing each would make every zoom and pan slow.
 */
function onePerPixel(u: uPlot, seriesIdx: number): number[] {
  const xs = u.data[0];
  const ys = u.data[seriesIdx];
  const min = u.scales.x.min ?? 0;
  const max = u.scales.x.max ?? 0;
  const { width, height } = u.bbox;
  const taken = new Uint8Array(Math.ceil(width + 1) * Math.ceil(height + 1));
  const shown: number[] = [];
  for (let i = firstAtOrAfter(xs, min); i < xs.length && xs[i] <= max; i++) {
    const y = ys[i];
    if (y === null || y === undefined) continue;
    const px = Math.round(u.valToPos(xs[i], "x", true) - u.bbox.left);
    const py = Math.round(u.valToPos(y, "y", true) - u.bbox.top);
    const cell = px * Math.ceil(height + 1) + Math.min(Math.max(py, 0), Math.ceil(height));
    if (taken[cell]) continue;
    taken[cell] = 1;
    shown.push(i);
  }
  return shown;
}

/** Tick labels in UTC, as precise as the spacing of the ticks needs. */
export function timeTicks(splits: number[], increment: number): string[] {
  const iso = (ms: number) => new Date(ms).toISOString();
  if (increment >= 365 * DAY) return splits.map((t) => iso(t).slice(0, 4));
  if (increment >= 28 * DAY) return splits.map((t) => iso(t).slice(0, 7));
  if (increment >= DAY) return splits.map((t) => iso(t).slice(0, 10));
  // Within a day: the time, and the date under the first tick and wherever the day changes.
  const length = increment >= 60 * SECOND ? 16 : 19;
  return splits.map((t, i) => {
    const text = iso(t).slice(11, length);
    const date = iso(t).slice(0, 10);
    return i === 0 || date !== iso(splits[i - 1]).slice(0, 10) ? `${text}\n${date}` : text;
  });
}

export function firstAtOrAfter(xs: ArrayLike<number>, value: number): number {
  let low = 0;
  let high = xs.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (xs[middle] < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
