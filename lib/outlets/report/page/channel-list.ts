/**
 * The channel list: a row per channel, and under a channel a row per thread whose replies were
 * segmented on their own, then per conversation the reply linker found (in the order they
 * started, so that their rows interleave as the conversations did). A click shows the channel (a
 * thread's or conversation's row: with only its segments listed); a channel's rows fold and
 * unfold.
 */
import type { ChannelData, ReportData, ThreadData } from "../data.js";
import { clock, count, day, el, time } from "./dom.js";
import { sampleTag, streamNoun, threadLabel } from "./labels.js";
import { VirtualList } from "./virtual-list.js";

/**
 * A channel with more threads and conversations than this starts folded: its own row stays easy
 * to find.
 */
const UNFOLDED_THREADS = 8;

/** A row of the list: a channel, or (with `thread`) one of its threads. */
interface Row {
  channel: number;
  thread?: number;
}

export interface ChannelList {
  /** Marks the row of `channel` (of its thread `thread`, when given) as the one shown. */
  mark(channel: number, thread?: number): void;
}

export function renderChannelList(
  container: HTMLElement,
  data: ReportData,
  show: (channel: number, thread?: number) => void,
): ChannelList {
  let current: Row = { channel: -1 };
  const unfolded = new Set(
    data.channels.flatMap((c, i) =>
      c.threads.length > 0 && c.threads.length <= UNFOLDED_THREADS ? [i] : [],
    ),
  );
  let rows: Row[] = [];
  const layout = () => {
    rows = data.channels.flatMap((c, channel): Row[] => [
      { channel },
      ...(unfolded.has(channel) ? c.threads.map((_, thread) => ({ channel, thread })) : []),
    ]);
  };
  layout();
  const header = el(
    "div",
    { class: "row head channel-grid" },
    ...["channel", "messages", "segments", "late", "open", "no segment", "topics"].map((h) =>
      el("span", {}, h),
    ),
  );
  const viewport = el("div", { class: "rows" });
  container.replaceChildren(header, viewport);
  const fold = (channel: number, open: boolean) => {
    if (open === unfolded.has(channel) || data.channels[channel].threads.length === 0) return;
    if (open) unfolded.add(channel);
    else unfolded.delete(channel);
    layout();
    list.setCount(rows.length, true);
  };
  const list = new VirtualList(
    viewport,
    28,
    rows.length,
    (r) => {
      const row = rows[r];
      const channel = data.channels[row.channel];
      const selected = row.channel === current.channel && row.thread === current.thread;
      const element =
        row.thread === undefined
          ? channelRow(channel, unfolded.has(row.channel), (open) => fold(row.channel, open))
          : threadRow(channel, channel.threads[row.thread]);
      element.classList.toggle("selected", selected);
      element.dataset.channel = String(row.channel);
      if (row.thread !== undefined) element.dataset.thread = String(row.thread);
      element.addEventListener("click", () => show(row.channel, row.thread));
      element.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") show(row.channel, row.thread);
        else if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
          fold(row.channel, event.key === "ArrowRight");
        } else return;
        event.preventDefault();
      });
      return element;
    },
    8,
  );
  return {
    mark(channel: number, thread?: number) {
      current = { channel, thread };
      if (thread !== undefined) fold(channel, true);
      list.refresh();
      const r = rows.findIndex((row) => row.channel === channel && row.thread === thread);
      if (r >= 0) list.reveal(r);
    },
  };
}

function channelRow(
  channel: ChannelData,
  open: boolean,
  fold: (open: boolean) => void,
): HTMLElement {
  const { name, displayName, counts, messages, threads } = channel;
  // Without the input messages nothing is known to be open or in no segment.
  const known = (n: number) => (messages === null ? "—" : count(n));
  let toggle: HTMLElement | null = null;
  if (threads.length > 0) {
    const what = streamCounts(threads);
    toggle = el(
      "button",
      {
        type: "button",
        class: "fold",
        "aria-expanded": String(open),
        title: open ? `fold its ${what.nouns}` : `list its ${what.nouns} under it`,
      },
      `${open ? "▾" : "▸"} ${what.text}`,
    );
    toggle.addEventListener("click", (event) => {
      // Folding is not showing: the row's own click would show the channel.
      event.stopPropagation();
      fold(!open);
    });
  }
  return el(
    "div",
    {
      class: "row channel-row channel-grid",
      role: "button",
      tabindex: 0,
      ...(threads.length > 0 ? { "aria-expanded": String(open) } : {}),
    },
    el(
      "span",
      { class: "name-cell" },
      el("span", { class: "name", title: name }, displayName ?? name),
      sampleTag(channel),
      toggle,
    ),
    ...[
      count(counts.messages),
      count(counts.segments),
      count(counts.lateSegments),
      known(counts.open),
      known(counts.dropped),
      count(counts.topics),
    ].map((text) => el("span", { class: "num" }, text)),
  );
}

/** Whether each channel's segments all fall on one UTC day, once worked out. */
const oneDay = new WeakMap<ChannelData, boolean>();

/** When a conversation started: `14:02`, or `03-18 14:02` in a channel of several days. */
function startedAt(channel: ChannelData, ms: number): string {
  let single = oneDay.get(channel);
  if (single === undefined) {
    const days = new Set(channel.segments.flatMap((s) => [day(s.first), day(s.last)]));
    single = days.size <= 1;
    oneDay.set(channel, single);
  }
  return single ? clock(ms).slice(0, 5) : time(ms).slice(5, 16);
}

/** `3 threads, 12 conversations`: what a channel's fold button lists. */
function streamCounts(threads: readonly ThreadData[]): { text: string; nouns: string } {
  const linked = threads.filter((t) => t.linked).length;
  const parts = [
    [threads.length - linked, "thread", "threads"],
    [linked, "conversation", "conversations"],
  ] as const;
  const shown = parts.filter(([n]) => n > 0);
  return {
    text: shown.map(([n, one, many]) => `${count(n)} ${n === 1 ? one : many}`).join(", "),
    nouns: shown.map(([, , many]) => many).join(" and "),
  };
}

/**
 * A thread's row, or a linked conversation's: its label (a conversation's led by the time it
 * started), indented under its channel, and the counts of its segments.
 */
function threadRow(channel: ChannelData, thread: ThreadData): HTMLElement {
  const segments = thread.segments.map((s) => channel.segments[s]);
  const sum = (of: (s: (typeof segments)[number]) => number) =>
    segments.reduce((total, s) => total + of(s), 0);
  const label = threadLabel(thread);
  const started = thread.linked && thread.start !== undefined ? thread.start : undefined;
  const title =
    started === undefined
      ? `${streamNoun(thread)} of ${label} (root ${thread.root})`
      : `conversation of ${label}, started ${time(started)} UTC (message ${thread.root})`;
  return el(
    "div",
    {
      class: `row thread-row channel-grid${thread.linked ? " conversation-row" : ""}`,
      role: "button",
      tabindex: 0,
    },
    el(
      "span",
      { class: "thread-name", title },
      "↳ ",
      started === undefined ? null : el("time", { class: "started" }, startedAt(channel, started)),
      started === undefined ? null : " ",
      label,
    ),
    ...[
      count(sum((s) => s.count)),
      count(segments.length),
      count(segments.filter((s) => s.cut === "late").length),
      // Open and unsegmented messages are the channel's: a thread's row has none to count.
      "",
      "",
      count(sum((s) => s.extraction?.topics.length ?? 0)),
    ].map((text) => el("span", { class: "num" }, text)),
  );
}
