/**
 * The reply links of a segment: each of its messages that answers another, and the message it
 * answers, within the segment by its number, else where it is (another segment, still open, in
 * no segment, or not in the input); a link the reply linker inferred is marked so.
 */
import { type ChannelData, DROPPED, NOT_IN_INPUT, OPEN } from "../data.js";
import { append, count, el } from "./dom.js";

/** What leads a link the reply linker inferred; `↪` leads the platform's. */
export const INFERRED_ARROW = "⇢";

/** Links listed at most: a segment of thousands of replies lists the first ones. */
const MAX_LINKS = 200;

/** Who wrote an answered message that names no author. */
const UNKNOWN = "a message";

/** A reply of a segment: its index in the segment, and what it answers. */
export interface ReplyLink {
  from: number;
  /** The answered message's index in the segment, or -1 when it is not in it. */
  to: number;
  /** Who wrote the answered message: an author, or "a message" when none is known. */
  who: string;
  /** Where the answered message is when not in the segment (`in #3`, `still open`…); "" when in. */
  where: string;
  /** Inferred by the reply linker, not said by the platform (`replyTo`, a thread). */
  inferred: boolean;
}

/** The reply links of the segment whose messages are at channel `positions`, in segment order. */
export function replyLinks(channel: ChannelData, positions: readonly number[]): ReplyLink[] {
  const columns = channel.messages;
  const answers = columns?.replyTo;
  if (columns === null || answers === undefined) return [];
  const indexOf = new Map(positions.map((p, i) => [p, i]));
  const links: ReplyLink[] = [];
  positions.forEach((p, from) => {
    const answered = answers[p];
    if (answered === -1) return;
    const inferred = columns.inferred?.[p] === 1;
    if (answered === NOT_IN_INPUT) {
      links.push({ from, to: -1, who: UNKNOWN, where: "not in the input", inferred });
      return;
    }
    const user = columns.user[answered];
    const who = user < 0 ? UNKNOWN : columns.users[user];
    const to = indexOf.get(answered) ?? -1;
    const where = to >= 0 ? "" : whereIs(columns.segment[answered]);
    links.push({ from, to, who, where, inferred });
  });
  return links;
}

/**
 * A Replies heading's count: `12`, `12, all inferred` (`1, inferred`), or `12: 2 by the platform,
 * 10 inferred`.
 */
export function replyCounts(links: readonly ReplyLink[]): string {
  const inferred = links.filter((link) => link.inferred).length;
  const total = count(links.length);
  if (inferred === 0) return total;
  if (inferred === links.length) return `${total}, ${links.length === 1 ? "" : "all "}inferred`;
  return `${total}: ${count(links.length - inferred)} by the platform, ${count(inferred)} inferred`;
}

function whereIs(segment: number): string {
  if (segment === OPEN) return "still open";
  if (segment === DROPPED) return "in no segment";
  return `in #${segment + 1}`;
}

/**
 * The segment's replies as a list of links, `message 7 ↪ message 3 (ana)`, or `message 2 ↪ ana,
 * outside this segment (in #1)`; an inferred one `message 7 ⇢ message 3 (ana), inferred` (the
 * word left to the heading when all are); a click shows the reply among the messages. Null: no
 * replies.
 */
export function replyList(
  links: readonly ReplyLink[],
  reveal: (index: number) => void,
): HTMLElement | null {
  if (links.length === 0) return null;
  const list = el("ul", { class: "reply-links" });
  const allInferred = links.every((link) => link.inferred);
  for (const link of links.slice(0, MAX_LINKS)) {
    const button = el("button", { type: "button", class: "link" }, `message ${link.from + 1}`);
    button.addEventListener("click", () => reveal(link.from));
    const arrow = link.inferred ? INFERRED_ARROW : "↪";
    const target =
      link.to >= 0
        ? el(
            "span",
            {},
            // Without an author the number says it all: "(a message)" would say nothing more.
            ` ${arrow} message ${link.to + 1}${link.who === UNKNOWN ? "" : ` (${link.who})`}`,
          )
        : el(
            "span",
            { class: "outside" },
            ` ${arrow} ${link.who}, outside this segment (${link.where})`,
          );
    const item = el("li", { "data-from": link.from, "data-to": link.to }, button, target);
    if (link.inferred) {
      item.classList.add("inferred");
      item.title = "inferred by the reply linker, not said by the platform";
      // When all are, the heading says so once.
      if (!allInferred) append(item, el("span", { class: "inferred-tag" }, ", inferred"));
    }
    list.appendChild(item);
  }
  if (links.length > MAX_LINKS) {
    list.appendChild(
      el("li", { class: "muted" }, `and ${count(links.length - MAX_LINKS)} more replies`),
    );
  }
  return list;
}
