/**
 * The selected segment: what cut it, its extracted topics, and its messages with each topic's
 * evidence marked. Messages are added a chunk at a time as the list scrolls, so a segment of
 * thousands of messages opens as fast as a small one.
 */
import { type ChannelData, NOT_IN_INPUT, type SegmentData, type TopicData } from "../data.js";
import { append, clock, count, day, duration, el, time } from "./dom.js";
import { cutLabel, streamNoun, threadLabel } from "./labels.js";
import { INFERRED_ARROW, replyCounts, replyLinks, replyList } from "./replies.js";

const CHUNK = 250;
const TOPIC_COLORS = [
  "#2563eb",
  "#db2777",
  "#059669",
  "#d97706",
  "#7c3aed",
  "#0891b2",
  "#dc2626",
  "#4d7c0f",
];

export interface SegmentView {
  channel: ChannelData;
  index: number;
  /** The segment's messages as positions in the channel, in order; null without the messages. */
  positions: number[] | null;
  times: Float64Array | null;
  /** The text of the message at a channel position; undefined while the texts are being read. */
  text(position: number): string | undefined;
  /** Selects another segment of the channel (the one a late segment belongs after). */
  select(index: number): void;
  /** Lists only the segments of thread `thread` of the channel. */
  showThread(thread: number): void;
  /** A topic of the segment (an index into its topics) whose evidence to mark at once. */
  focusTopic?: number;
  /** A message of the segment (an index into its messages) to show and mark for a moment. */
  reveal?: number;
}

export class Details {
  private observer: IntersectionObserver | undefined;

  constructor(private readonly panel: HTMLElement) {
    this.clear();
  }

  clear(): void {
    this.observer?.disconnect();
    this.panel.replaceChildren(
      el(
        "p",
        { class: "hint" },
        "Select a segment (in the table, or on the timeline) to see its messages and topics.",
      ),
    );
  }

  show(view: SegmentView): void {
    this.observer?.disconnect();
    const segment = view.channel.segments[view.index];
    const topics = segment.extraction?.topics ?? [];
    const messages = el("ol", {
      class: topics.length > 0 ? "messages" : "messages no-topics",
      "aria-label": "messages",
    });
    const list = new MessageList(messages, view, topics);
    this.observer = list.observer;
    const links = view.positions ? replyLinks(view.channel, view.positions) : [];
    const replies = replyList(links, (i) => list.reveal(i));
    this.panel.replaceChildren();
    append(
      this.panel,
      el("h3", {}, `Segment #${view.index + 1}`, el("span", { class: "muted id" }, segment.id)),
      segmentFacts(segment, view),
      el("h4", {}, "Topics"),
      topicList(segment, topics, (topic) => list.focus(topic)),
      replies && el("h4", {}, `Replies (${replyCounts(links)})`),
      replies,
      el("h4", {}, `Messages (${count(segment.count)})`),
      links.some((link) => link.inferred) &&
        el(
          "p",
          { class: "muted key" },
          `${INFERRED_ARROW} (dashed): the message it answers as the reply linker inferred it, where the platform did not say; ↪: as the platform recorded it`,
        ),
      messages,
    );
    list.start();
    if (view.focusTopic !== undefined) list.focus(view.focusTopic);
    if (view.reveal !== undefined) list.reveal(view.reveal);
  }
}

function segmentFacts(segment: SegmentData, view: SegmentView): HTMLElement {
  const thread = segment.thread === undefined ? undefined : view.channel.threads[segment.thread];
  const facts = el(
    "dl",
    { class: "facts" },
    el("dt", {}, "from"),
    el("dd", {}, `${time(segment.first)} UTC`),
    el("dt", {}, "to"),
    el("dd", {}, `${time(segment.last)} UTC (${duration(segment.last - segment.first)})`),
    el("dt", {}, "cut before"),
    el("dd", {}, el("span", { class: `cut cut-${segment.cut}` }, cutLabel(segment, thread))),
  );
  const after = segment.belongsAfter;
  if (after !== null) {
    const link = el("button", { type: "button", class: "link" }, `show #${after + 1}`);
    link.addEventListener("click", () => view.select(after));
    append(facts, el("dt", {}, "belongs after"), el("dd", {}, link));
  }
  if (segment.thread !== undefined && thread !== undefined) {
    const t = segment.thread;
    const others = thread.segments.length;
    const link =
      others > 1
        ? el("button", { type: "button", class: "link" }, `its ${count(others)} segments`)
        : null;
    link?.addEventListener("click", () => view.showThread(t));
    append(
      facts,
      el("dt", {}, streamNoun(thread)),
      el("dd", {}, el("span", { class: "thread-label" }, threadLabel(thread)), link && " ", link),
    );
  }
  if (segment.missing > 0) {
    append(
      facts,
      el("dt", {}, "missing"),
      el("dd", { class: "warn" }, `${count(segment.missing)} of its messages are not in the input`),
    );
  }
  return facts;
}

function topicList(
  segment: SegmentData,
  topics: TopicData[],
  focus: (topic: number) => void,
): HTMLElement {
  const extraction = segment.extraction;
  if (extraction === null) return el("p", { class: "muted" }, "Not extracted.");
  const { usage } = extraction;
  const header = el(
    "p",
    { class: "muted" },
    `${extraction.model}, ${extraction.promptVersion}: ${count(usage.calls)} calls, ${count(usage.inputTokens)} input and ${count(usage.outputTokens)} output tokens`,
  );
  if (topics.length === 0)
    return el("div", {}, header, el("p", { class: "muted" }, "No topics found."));
  const list = el("ol", { class: "topics" });
  topics.forEach((topic, t) => {
    const range = topic.range;
    const evidence = el(
      "button",
      { type: "button", class: "link evidence", disabled: range === null ? "" : undefined },
      range === null
        ? "no evidence range"
        : range[0] === range[1]
          ? `message ${range[0] + 1}`
          : `messages ${range[0] + 1}–${range[1] + 1}`,
    );
    evidence.addEventListener("click", () => focus(t));
    const flags = [
      topic.subjective ? "subjective" : "",
      topic.wikiWorthy === true ? "wiki-worthy" : "",
    ].filter(Boolean);
    list.appendChild(
      el(
        "li",
        { class: "topic", style: `--topic: ${TOPIC_COLORS[t % TOPIC_COLORS.length]}` },
        el("span", { class: "chip" }, `T${t + 1}`),
        el("strong", { class: "topic-name" }, topic.topic),
        el("span", { class: "muted" }, ` ${Math.round(topic.confidence * 100)}%`),
        ...topic.tags.map((tag) => el("span", { class: "tag" }, tag)),
        ...flags.map((flag) => el("span", { class: "tag flag" }, flag)),
        " ",
        evidence,
        topic.reason === "" ? null : el("div", { class: "reason" }, topic.reason),
      ),
    );
  });
  return el("div", {}, header, list);
}

/** The messages of a segment, rendered a chunk at a time as the end comes into view. */
class MessageList {
  readonly observer: IntersectionObserver;
  private rendered = 0;
  private focused = -1;
  private previousDay = "";
  private readonly sentinel = el("li", { class: "sentinel", "aria-hidden": "true" });
  private readonly total: number;

  constructor(
    private readonly list: HTMLElement,
    private readonly view: SegmentView,
    private readonly topics: TopicData[],
  ) {
    const segment = view.channel.segments[view.index];
    this.total = view.positions ? view.positions.length : (segment.messageIds?.length ?? 0);
    this.observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) this.renderMore(this.rendered + CHUNK);
      },
      { root: list },
    );
  }

  start(): void {
    if (this.total === 0) {
      this.list.appendChild(el("li", { class: "muted" }, "None of its messages are in the input."));
      return;
    }
    this.renderMore(CHUNK);
  }

  /** Shows message `i` (rendering up to it) and marks it for a moment. */
  reveal(i: number): void {
    this.renderMore(i + 1);
    const row = this.list.querySelector<HTMLElement>(`.message[data-index="${i}"]`);
    if (row === null) return;
    row.scrollIntoView({ block: "nearest" });
    row.classList.remove("flash");
    // Restarted: a second click on the same link marks it again.
    void row.offsetWidth;
    row.classList.add("flash");
  }

  /** Marks topic `t`'s evidence and scrolls to it. */
  focus(t: number): void {
    const range = this.topics[t]?.range;
    if (!range) return;
    this.focused = this.focused === t ? -1 : t;
    this.list.classList.toggle("focusing", this.focused >= 0);
    for (const row of this.list.querySelectorAll<HTMLElement>(".message")) {
      const i = Number(row.dataset.index);
      row.classList.toggle("focus", this.focused >= 0 && i >= range[0] && i <= range[1]);
    }
    if (this.focused < 0) return;
    this.renderMore(range[0] + 1);
    this.list.querySelector(`[data-index="${range[0]}"]`)?.scrollIntoView({ block: "nearest" });
  }

  private renderMore(upTo: number): void {
    const end = Math.min(this.total, upTo);
    this.sentinel.remove();
    const fragment = document.createDocumentFragment();
    for (; this.rendered < end; this.rendered++) {
      const today = this.dayOf(this.rendered);
      if (today !== this.previousDay) fragment.appendChild(el("li", { class: "day" }, today));
      this.previousDay = today;
      fragment.appendChild(this.row(this.rendered));
    }
    this.list.appendChild(fragment);
    if (this.rendered < this.total) {
      this.list.appendChild(this.sentinel);
      this.observer.observe(this.sentinel);
    }
  }

  /** The UTC date of message `i` ("" without the messages). */
  private dayOf(i: number): string {
    const { positions, times } = this.view;
    return positions === null || times === null ? "" : day(times[positions[i]]);
  }

  private row(i: number): HTMLElement {
    const covering = this.topics.flatMap((topic, t) =>
      topic.range && i >= topic.range[0] && i <= topic.range[1] ? [t] : [],
    );
    const row = el("li", { class: "message", "data-index": i });
    if (covering.length > 0) row.classList.add("evidence");
    const range = this.topics[this.focused]?.range;
    if (range && i >= range[0] && i <= range[1]) row.classList.add("focus");
    const chips =
      this.topics.length > 0 &&
      el(
        "span",
        { class: "chips" },
        ...covering.map((t) =>
          el(
            "span",
            { class: "chip", style: `--topic: ${TOPIC_COLORS[t % TOPIC_COLORS.length]}` },
            `T${t + 1}`,
          ),
        ),
      );
    const { positions, times, channel } = this.view;
    const columns = channel.messages;
    if (positions === null || times === null || columns === null) {
      const id = channel.segments[this.view.index].messageIds?.[i] ?? "";
      append(row, chips, el("span", { class: "id only" }, id));
      return row;
    }
    const p = positions[i];
    const ts = times[p];
    const user = columns.user[p];
    if (columns.kind?.[p] === 2) row.classList.add("system");
    append(
      row,
      chips,
      el("time", { title: `${time(ts)} UTC, id ${columns.id[p]}` }, clock(ts)),
      el("span", { class: "author" }, user < 0 ? "—" : columns.users[user]),
      el("span", { class: "text" }, this.replyMark(p, times), this.view.text(p) ?? "…"),
    );
    return row;
  }

  /**
   * What message `p` answers, `↪ author` with its time, marked when it is outside the segment;
   * nothing when it answers none.
   */
  private replyMark(p: number, times: Float64Array): HTMLElement | undefined {
    const columns = this.view.channel.messages;
    const answered = columns?.replyTo?.[p] ?? -1;
    if (columns === null || answered === -1) return undefined;
    if (answered === NOT_IN_INPUT) {
      return el(
        "span",
        { class: "reply outside", title: "reply to a message that is not in the input" },
        "↪ (not in the input) ",
      );
    }
    const user = columns.user[answered];
    const who = user < 0 ? "a message" : columns.users[user];
    const when = times[answered];
    const elsewhere = columns.segment[answered] !== this.view.index;
    // A link the reply linker inferred is a guess: a dashed arrow, apart from the platform's.
    const inferred = columns.inferred?.[p] === 1;
    return el(
      "span",
      {
        class: `reply${elsewhere ? " outside" : ""}${inferred ? " inferred" : ""}`,
        title: `${inferred ? "inferred by the reply linker: " : ""}reply to ${who}, ${time(when)} UTC${elsewhere ? ", outside this segment" : ""}`,
      },
      `${inferred ? INFERRED_ARROW : "↪"} ${who}${elsewhere ? " (outside)" : ""} `,
    );
  }
}
