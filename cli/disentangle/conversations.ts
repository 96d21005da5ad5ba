/**
 * A channel's messages linked and grouped: each message's parent (the platform's, or the reply
 * linker's), and the conversation it is in, named by the root its parents lead to.
 */
import {
  type LinkChoice,
  type LinkDecision,
  type LinkInput,
  mergesOf,
  ReplyLinker,
  settleMerges,
} from "convoseg/linker";
import type { ChatMessage } from "convoseg/messages";
import { advised, linkInput } from "../shared/conversation-streams.js";
import { formatCount } from "../shared/format.js";
import type { Progress } from "../shared/progress.js";

/** One channel, disentangled: its messages in the product's order, with a decision for each. */
export interface LinkedChannel {
  channel: string;
  messages: ChatMessage[];
  /** `decisions[i]` is `messages[i]`'s. */
  decisions: LinkDecision[];
  /**
   * `conversations[i]`: the id of the root `messages[i]`'s parents lead to, or where the linker
   * merged that conversation into another, the conversation the linker kept.
   */
  conversations: string[];
  /** Platform parents that name no message of the channel (each its conversation's id). */
  unknownParents: number;
}

/** How often the status line is offered an update while a channel is linked. */
const PROGRESS_EVERY = 1024;

/** Links `messages` (one channel, in the product's order) and groups them in conversations. */
export function disentangleChannel(
  channel: string,
  messages: ChatMessage[],
  options: {
    ignoreLinks: boolean;
    progress: Progress;
    status: string;
    /** Choices for the linker by message id (`--ask-links`' answers). */
    choices?: ReadonlyMap<string, LinkChoice>;
  },
): LinkedChannel {
  const { ignoreLinks, progress, status, choices } = options;
  function* inputs(): Generator<LinkInput> {
    for (let i = 0; i < messages.length; i++) {
      if (i % PROGRESS_EVERY === 0) {
        progress.update(
          () => `${status}: ${formatCount(i)} of ${formatCount(messages.length)} messages`,
        );
      }
      yield linkInput(messages[i] as ChatMessage, ignoreLinks);
    }
  }
  const linker = new ReplyLinker(advised(choices) ? { mergeMargin: 0 } : {});
  const decisions: LinkDecision[] = [];
  for (const input of inputs()) decisions.push(linker.link(input, choices?.get(input.id)));
  const index = new Map(messages.map((m, i) => [m.id, i]));
  const parents = decisions.map((d) => (d.parent === undefined ? undefined : index.get(d.parent)));
  const unknownParents = decisions.filter(
    (d, i) => d.parent !== undefined && parents[i] === undefined,
  ).length;
  return {
    channel,
    messages,
    decisions,
    // A root the linker merged into another conversation is named as the linker names it.
    conversations: roots(decisions, parents).map(settleMerges(mergesOf(decisions))),
    unknownParents,
  };
}

/**
 * Each message's conversation: the id of the message its parents lead to that has none, or the
 * parent id itself where a parent names no message of the channel. A platform's links could go in
 * a circle (a reply to a later message that replies back): its earliest message is then the root.
 */
function roots(decisions: LinkDecision[], parents: (number | undefined)[]): string[] {
  const found: (string | undefined)[] = new Array(decisions.length);
  for (let start = 0; start < decisions.length; start++) {
    if (found[start] !== undefined) continue;
    const path: number[] = [];
    const onPath = new Set<number>();
    let at = start;
    let root: string;
    for (;;) {
      const known = found[at];
      if (known !== undefined) {
        root = known;
        break;
      }
      if (onPath.has(at)) {
        root = (decisions[Math.min(...path.slice(path.indexOf(at)))] as LinkDecision).id;
        break;
      }
      path.push(at);
      onPath.add(at);
      const decision = decisions[at] as LinkDecision;
      const parent = parents[at];
      if (decision.parent === undefined) {
        root = decision.id;
        break;
      }
      if (parent === undefined) {
        root = decision.parent;
        break;
      }
      at = parent;
    }
    for (const p of path) found[p] = root;
  }
  return found as string[];
}
