/**
 * The report's first screen: what was talked about. A card per channel (busiest first) with its
 * top topics, how many conversations support each and when; a topic leads to its channel's
 * segments that support it.
 */
import type { ChannelData, ReportData } from "../data.js";
import { count, el, span } from "./dom.js";
import { sampleTag } from "./labels.js";

/** Cards shown before "all channels", and topics per card before "all topics". */
const CARDS = 12;
const TOPICS = 8;
/** Topics a card shows at most, expanded: `npm start -- topics` lists every one. */
const MAX_TOPICS = 200;

/** What a click on a topic asks for: channel `channel`'s topic `topic`. */
export type PickTopic = (channel: number, topic: number) => void;

export function renderTopics(container: HTMLElement, data: ReportData, pick: PickTopic): void {
  const heading = el("h2", {}, "What was talked about");
  if (data.summary.extraction === null) {
    container.replaceChildren(
      heading,
      el(
        "p",
        { class: "muted" },
        "No topics: nothing was extracted (a report made with --candidates, or by run with extraction on, lists them here).",
      ),
    );
    return;
  }
  // Busiest first: where most was said is what a reader looks for first; the demo's last.
  const rank = (i: number) => [
    Number(data.channels[i].sample ?? false),
    -data.channels[i].counts.segments,
  ];
  const order = data.channels
    .map((_, i) => i)
    .sort((a, b) => rank(a)[0] - rank(b)[0] || rank(a)[1] - rank(b)[1] || a - b);
  const cards = el("div", { class: "topic-cards" });
  const shown = (n: number) =>
    cards.replaceChildren(...order.slice(0, n).map((i) => card(i, data.channels[i], pick)));
  shown(CARDS);
  container.replaceChildren(
    heading,
    el(
      "p",
      { class: "muted lead" },
      "Each channel's topics, by how many conversations (segments) support them, and when they were said. Click a topic to see its conversations.",
    ),
    cards,
  );
  if (order.length > CARDS) {
    const more = el("button", { type: "button" }, `all ${count(order.length)} channels`);
    more.addEventListener("click", () => {
      shown(order.length);
      more.remove();
    });
    container.appendChild(more);
  }
}

function card(index: number, channel: ChannelData, pick: PickTopic): HTMLElement {
  const { counts, topics, segments } = channel;
  const first = segments.reduce((min, s) => Math.min(min, s.first), Number.POSITIVE_INFINITY);
  const last = segments.reduce((max, s) => Math.max(max, s.last), Number.NEGATIVE_INFINITY);
  const list = el("ol", { class: "topic-list" });
  const most = topics[0]?.supports.length ?? 1;
  const rows = (n: number) =>
    list.replaceChildren(
      ...topics.slice(0, n).map((topic, t) => {
        const support = topic.supports.length;
        const row = el(
          "li",
          {
            class: "topic-row",
            role: "button",
            tabindex: 0,
            "data-topic": t,
            title: `show the ${support === 1 ? "conversation" : `${count(support)} conversations`} that support it`,
          },
          el(
            "span",
            { class: "topic-label" },
            el("span", { class: "topic-name" }, topic.topic),
            // Its other wordings, merged into it: chat text, so text nodes only, as everywhere.
            topic.aliases.length > 0 &&
              el(
                "span",
                { class: "aliases", title: `also: ${topic.aliases.join(", ")}` },
                `also: ${topic.aliases.join(", ")}`,
              ),
          ),
          el(
            "span",
            { class: "support" },
            el(
              "span",
              { class: "track" },
              el("span", { class: "bar", style: `--share: ${(support / most).toFixed(3)}` }),
            ),
            el("span", { class: "num" }, `${count(support)}`),
            support === 1 ? " conversation" : " conversations",
          ),
          el("span", { class: "when" }, span(topic.first, topic.last)),
        );
        row.addEventListener("click", () => pick(index, t));
        row.addEventListener("keydown", (event) => {
          if (event.key !== "Enter" && event.key !== " ") return;
          event.preventDefault();
          pick(index, t);
        });
        return row;
      }),
    );
  rows(TOPICS);
  const body =
    topics.length === 0 ? el("p", { class: "muted" }, "No topics extracted.") : el("div", {}, list);
  if (topics.length > TOPICS) {
    const all = Math.min(topics.length, MAX_TOPICS);
    const more = el(
      "button",
      { type: "button", class: "link more" },
      topics.length > MAX_TOPICS
        ? `the first ${count(all)} of ${count(topics.length)} topics`
        : `all ${count(all)} topics`,
    );
    more.addEventListener("click", () => {
      rows(all);
      more.remove();
    });
    body.appendChild(more);
  }
  return el(
    "article",
    { class: "topic-card", "data-channel": index },
    el(
      "h3",
      { class: "card-channel", title: channel.name },
      channel.displayName ?? channel.name,
      sampleTag(channel),
    ),
    el(
      "p",
      { class: "muted" },
      `${count(counts.messages)} ${counts.messages === 1 ? "message" : "messages"}, ${conversations(channel)}${segments.length > 0 ? `, ${span(first, last)}` : ""}`,
    ),
    body,
  );
}

/**
 * `115 conversations` (a segment each), or where the reply linker linked them `114 conversations
 * in 115 segments`.
 */
function conversations({ counts, threads }: ChannelData): string {
  const linked = threads.filter((t) => t.linked).length;
  const segments = counts.segments;
  if (linked === 0)
    return `${count(segments)} ${segments === 1 ? "conversation" : "conversations"}`;
  return `${count(linked)} ${linked === 1 ? "conversation" : "conversations"} in ${count(segments)} ${segments === 1 ? "segment" : "segments"}`;
}
