/** One channel: its timeline, its segment table and the selected segment's details. */
import { type ChannelData, OPEN } from "../data.js";
import { Details } from "./details.js";
import { count, day, el, span, time } from "./dom.js";
import { cutLabel, sampleTag, streamNoun, threadLabel } from "./labels.js";
import { Lanes } from "./lanes.js";
import { messageText, whenTextsRead } from "./texts.js";
import { CUT_COLORS, MARK_COLORS, Timeline } from "./timeline.js";
import { VirtualList } from "./virtual-list.js";

const ROW_HEIGHT = 28;

/** What the channel view asks of the page around it. */
export interface ChannelLinks {
  /** Lists only thread `thread`'s segments (-1: all again), and marks its row in the channel list. */
  showThread(thread: number): void;
}

export class ChannelView {
  private readonly timeline: Timeline;
  /** The threads' and conversations' rows under the timeline, where the channel has any. */
  private readonly lanes: Lanes | null;
  private readonly table: VirtualList;
  private readonly details: Details;
  private readonly resizeObserver: ResizeObserver;
  /** Each message's epoch ms in channel order (null without the messages). */
  private readonly times: Float64Array | null;
  /** Each segment's messages as channel positions, in order (null without the messages). */
  private readonly members: number[][] | null;
  private selected = -1;
  private readonly tableViewport = el("div", { class: "rows" });
  /** The topic the table is filtered to (an index into the channel's topics), or -1. */
  private topic = -1;
  /** The segments the table lists, in order: all, or those that support `topic`. */
  private rows: number[];
  private readonly filterBar = el("div", { class: "filter-bar", hidden: "" });

  constructor(
    container: HTMLElement,
    /** The channel's index in the report, and the channel. */
    private readonly index: number,
    private readonly channel: ChannelData,
    settleMs: number,
    private readonly links: ChannelLinks,
    onDrawn: () => void,
  ) {
    ({ times: this.times, members: this.members } = unpack(channel));
    this.rows = channel.segments.map((_, i) => i);
    const { counts } = channel;
    const chart = el("div", { class: "timeline" });
    const lanesBox = el("div", { class: "lanes" });
    const readout = el(
      "div",
      { class: "readout muted" },
      "Hover over the timeline to read a message.",
    );
    const showAll = el("button", { type: "button" }, "whole channel");
    const panel = el("aside", { class: "details", "aria-live": "polite" });
    container.replaceChildren(
      el(
        "h2",
        {},
        "Channel ",
        el("span", { class: "channel-name" }, channel.displayName ?? channel.name),
        channel.displayName === undefined ? "" : el("span", { class: "muted" }, ` ${channel.name}`),
        sampleTag(channel),
      ),
      el(
        "p",
        { class: "muted" },
        `${count(counts.messages)} ${counts.messages === 1 ? "message" : "messages"}, ${linkedCount(channel)}${count(counts.segments)} ${counts.segments === 1 ? "segment" : "segments"} (${count(counts.lateSegments)} late), ${count(counts.open)} still open, ${count(counts.dropped)} in no segment`,
      ),
      legend(channel.messages !== null),
      el(
        "div",
        { class: "toolbar" },
        el("span", { class: "muted" }, "Drag across the timeline to zoom, double-click or "),
        showAll,
        el("span", { class: "muted" }, " to see it all; click a band to select its segment."),
      ),
      chart,
      readout,
      lanesBox,
      el(
        "div",
        { class: "split" },
        el(
          "section",
          { class: "segments" },
          el("h3", {}, "Segments"),
          this.filterBar,
          el(
            "div",
            { class: "row head segment-grid" },
            ...["#", "first (UTC)", "last (UTC)", "msgs", "cut before", "topics"].map((h) =>
              el("span", {}, h),
            ),
          ),
          this.tableViewport,
        ),
        panel,
      ),
    );
    this.details = new Details(panel);
    this.table = new VirtualList(
      this.tableViewport,
      ROW_HEIGHT,
      this.rows.length,
      (row) => this.segmentRow(row),
      14,
    );
    this.lanes =
      this.times !== null && channel.threads.length > 0
        ? new Lanes(lanesBox, channel, this.times, (segment) => this.select(segment, false))
        : null;
    if (this.lanes === null) lanesBox.remove();
    this.timeline = new Timeline(chart, channel, this.times, settleMs, {
      pick: (segment) => this.select(segment, false),
      view: (view) => this.lanes?.show(view),
      hover: (position) => {
        readout.replaceChildren(...this.describeMessage(position));
      },
      drawn: onDrawn,
    });
    showAll.addEventListener("click", () => this.timeline.showAll());
    this.resizeObserver = new ResizeObserver(() => this.timeline.setWidth(chart.clientWidth));
    this.resizeObserver.observe(chart);
    // A segment selected before the texts were read shows them once they are.
    whenTextsRead(() => {
      if (this.selected >= 0) this.showDetails(this.selected);
    });
  }

  /**
   * Selects segment `index`: marks it in the table and on the timeline, shows its details (with
   * the message at channel position `position` shown among them).
   */
  select(index: number, zoom = true, position?: number): void {
    if (index < 0 || index >= this.channel.segments.length) return;
    this.selected = index;
    this.table.refresh();
    const row = this.rows.indexOf(index);
    if (row >= 0) this.table.reveal(row);
    this.timeline.select(index, zoom);
    this.lanes?.select(index);
    this.showDetails(index, position);
  }

  /**
   * Lists only the segments that support topic `topic` of the channel (-1: all of them again),
   * marks them on the timeline, and selects the first with the topic's evidence marked.
   */
  showTopic(topic: number): void {
    const chosen = this.channel.topics[topic];
    if (chosen === undefined) {
      this.showAll();
      return;
    }
    this.topic = topic;
    this.filter(
      chosen.supports.map(([segment]) => segment),
      "support ",
      el("strong", { class: "filter-topic" }, chosen.topic),
      ` (${span(chosen.first, chosen.last)}) `,
    );
  }

  /** Lists only the segments of thread `thread` (-1: all of them again), and selects the first. */
  showThread(thread: number): void {
    const chosen = this.channel.threads[thread];
    if (chosen === undefined) {
      this.showAll();
      return;
    }
    this.topic = -1;
    const one = chosen.segments.length === 1;
    this.filter(
      chosen.segments,
      chosen.linked
        ? `${one ? "is" : "are"} the conversation started by `
        : `${one ? "is" : "are"} the thread of `,
      el("strong", { class: "filter-thread" }, threadLabel(chosen)),
      " ",
    );
  }

  /** Lists `rows` alone, says why in the filter bar, and selects the first. */
  private filter(rows: number[], verb: string, ...why: (Node | string)[]): void {
    this.rows = rows;
    this.table.setCount(rows.length);
    this.timeline.highlight(new Set(rows));
    this.lanes?.highlight(new Set(rows));
    const all = el("button", { type: "button" }, "show all segments");
    all.addEventListener("click", () => this.links.showThread(-1));
    const n = rows.length;
    this.filterBar.replaceChildren(
      el(
        "span",
        {},
        `${count(n)} of ${count(this.channel.segments.length)} segments ${verb}`,
        ...why,
      ),
      all,
    );
    this.filterBar.hidden = false;
    // The whole channel, where the chosen conversations stand out among the others.
    this.timeline.showAll();
    this.select(rows[0], false);
  }

  /** Lists every segment again. */
  private showAll(): void {
    const filtered = !this.filterBar.hidden;
    this.topic = -1;
    this.rows = this.channel.segments.map((_, i) => i);
    if (!filtered) return;
    this.table.setCount(this.rows.length);
    this.timeline.highlight(null);
    this.lanes?.highlight(null);
    this.filterBar.hidden = true;
    this.filterBar.replaceChildren();
    if (this.selected >= 0) this.select(this.selected, false);
  }

  destroy(): void {
    this.resizeObserver.disconnect();
    this.timeline.destroy();
  }

  private showDetails(index: number, position?: number): void {
    const support = this.channel.topics[this.topic]?.supports.find(([s]) => s === index);
    const reveal = position === undefined ? -1 : (this.members?.[index]?.indexOf(position) ?? -1);
    this.details.show({
      channel: this.channel,
      index,
      focusTopic: support?.[1],
      reveal: reveal < 0 ? undefined : reveal,
      positions: this.members?.[index] ?? null,
      times: this.times,
      text: (position) => messageText(this.index, position),
      select: (other) => this.select(other),
      showThread: (thread) => this.links.showThread(thread),
    });
  }

  /** Row `row` of the table: the segment `rows[row]`. */
  private segmentRow(row: number): HTMLElement {
    const i = this.rows[row];
    const segment = this.channel.segments[i];
    const topics = segment.extraction?.topics.length;
    const lastTime =
      day(segment.last) === day(segment.first) ? time(segment.last).slice(11) : time(segment.last);
    const thread = segment.thread === undefined ? undefined : this.channel.threads[segment.thread];
    const element = el(
      "div",
      {
        class: `row segment-row segment-grid${i === this.selected ? " selected" : ""}${segment.cut === "late" ? " late" : ""}${thread && !thread.linked ? " in-thread" : ""}`,
        role: "button",
        tabindex: 0,
        "data-segment": i,
        title: thread && `in the ${streamNoun(thread)} of ${threadLabel(thread)}`,
      },
      // A thread's segments stand out among the channel's; in linked mode nearly all are a
      // conversation's, and the mark would say nothing.
      el("span", { class: "num" }, thread && !thread.linked ? `↳ ${i + 1}` : i + 1),
      el("span", {}, time(segment.first)),
      el("span", {}, lastTime),
      el("span", { class: "num" }, count(segment.count)),
      el("span", { class: `cut cut-${segment.cut}` }, cutLabel(segment, thread)),
      el("span", { class: "num" }, topics === undefined ? "—" : count(topics)),
    );
    element.addEventListener("click", () => this.select(i));
    element.addEventListener("keydown", (event) => {
      const next = { ArrowDown: row + 1, ArrowUp: row - 1, Enter: row, " ": row }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      const segment = this.rows[next];
      if (segment === undefined) return;
      this.select(segment);
      // Selecting renders the rows anew: the focus moves to the new row.
      this.tableViewport.querySelector<HTMLElement>(`[data-segment="${segment}"]`)?.focus();
    });
    return element;
  }

  private describeMessage(position: number | null): (Node | string)[] {
    const columns = this.channel.messages;
    if (position === null || columns === null || this.times === null) {
      return ["Hover over the timeline to read a message."];
    }
    const s = columns.segment[position];
    const where = s >= 0 ? `segment #${s + 1}` : s === OPEN ? "still open" : "in no segment";
    const user = columns.user[position];
    const text = messageText(this.index, position) ?? "…";
    return [
      el("time", {}, `${time(this.times[position])} UTC`),
      " ",
      el("span", { class: "author" }, user < 0 ? "—" : columns.users[user]),
      " ",
      el("span", { class: "text" }, text.length > 240 ? `${text.slice(0, 240)}…` : text),
      el("span", { class: "muted" }, ` (${where})`),
    ];
  }
}

/** `12 conversations in `: how many conversations the reply linker found, when it linked any. */
function linkedCount(channel: ChannelData): string {
  const linked = channel.threads.filter((t) => t.linked).length;
  return linked === 0
    ? ""
    : `${count(linked)} ${linked === 1 ? "conversation" : "conversations"} in `;
}

/** Message times from their deltas, and each segment's message positions, in one pass each. */
function unpack(channel: ChannelData): { times: Float64Array | null; members: number[][] | null } {
  const columns = channel.messages;
  if (columns === null) return { times: null, members: null };
  const n = columns.tsDelta.length;
  const times = new Float64Array(n);
  let ts = 0;
  for (let p = 0; p < n; p++) {
    ts += columns.tsDelta[p];
    times[p] = ts;
  }
  const members: number[][] = channel.segments.map(() => []);
  for (let p = 0; p < n; p++) {
    const s = columns.segment[p];
    if (s >= 0) members[s].push(p);
  }
  return { times, members };
}

function legend(withMessages: boolean): HTMLElement {
  const item = (color: string, label: string, kind: "mark" | "line" | "band") =>
    el(
      "span",
      { class: "legend-item" },
      el("span", { class: `swatch ${kind}`, style: `--c: ${color}` }),
      label,
    );
  return el(
    "div",
    { class: "legend" },
    withMessages && item(MARK_COLORS.segment, "message in a segment", "mark"),
    withMessages && item(MARK_COLORS.late, "in a late segment", "mark"),
    withMessages && item(MARK_COLORS.open, "still open", "mark"),
    withMessages && item(MARK_COLORS.dropped, "in no segment", "mark"),
    item("rgba(59, 130, 246, 0.35)", "segment", "band"),
    item("rgba(234, 88, 12, 0.4)", "late segment", "band"),
    item(CUT_COLORS.silence, "cut: silence over settle", "line"),
    item(CUT_COLORS.size, "cut: size cap, at the largest gap", "line"),
    item("#7c3aed", "settle", "line"),
  );
}
