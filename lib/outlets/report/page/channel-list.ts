/**
 * The channel list: a row per channel, and under a channel a row per thread whose replies were
 * segmented on their own. A click shows the channel (a thread's row: with only the thread's
 * segments listed); a channel's threads fold and unfold.
 */
import type { ChannelData, ReportData, ThreadData } from "../data.js";
import { count, el } from "./dom.js";
import { threadLabel } from "./labels.js";
import { VirtualList } from "./virtual-list.js";

/** A channel with more threads than this starts folded: its own row stays easy to find. */
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
    toggle = el(
      "button",
      {
        type: "button",
        class: "fold",
        "aria-expanded": String(open),
        title: open ? "fold its threads" : "list its threads under it",
      },
      `${open ? "▾" : "▸"} ${count(threads.length)} ${threads.length === 1 ? "thread" : "threads"}`,
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

/** A thread's row: its label, indented under its channel, and the counts of its segments. */
function threadRow(channel: ChannelData, thread: ThreadData): HTMLElement {
  const segments = thread.segments.map((s) => channel.segments[s]);
  const sum = (of: (s: (typeof segments)[number]) => number) =>
    segments.reduce((total, s) => total + of(s), 0);
  const label = threadLabel(thread);
  return el(
    "div",
    { class: "row thread-row channel-grid", role: "button", tabindex: 0 },
    el(
      "span",
      { class: "thread-name", title: `thread of ${label} (root ${thread.root})` },
      `↳ ${label}`,
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
