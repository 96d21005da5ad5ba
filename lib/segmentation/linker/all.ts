/** A whole channel's decisions at once, and the conversations they settle on. */
import type { LinkDecision, LinkInput, ReplyLinkerOptions } from "./decision.js";
import { ReplyLinker } from "./linker.js";

/** Every decision for a whole channel at once, in order (the `disentangle` command's core). */
export function linkAll(
  messages: Iterable<LinkInput>,
  options: ReplyLinkerOptions = {},
): LinkDecision[] {
  const linker = new ReplyLinker(options);
  const decisions: LinkDecision[] = [];
  for (const message of messages) decisions.push(linker.link(message));
  return decisions;
}

/** Two conversations the linker made one: `gone`'s messages are `kept`'s now. */
export interface ConversationMerge {
  readonly gone: string;
  readonly kept: string;
}

/** A conversation's id once every one of `merges` (in the order made) is made. */
export function settleMerges(
  merges: readonly ConversationMerge[],
): (conversation: string) => string {
  const into = new Map(merges.map((m) => [m.gone, m.kept]));
  return (conversation) => {
    let at = conversation;
    for (let next = into.get(at); next !== undefined; next = into.get(at)) at = next;
    return at;
  };
}

/** The merges `decisions` made (`LinkDecision.merged`), in their order. */
export function mergesOf(decisions: readonly LinkDecision[]): ConversationMerge[] {
  return decisions.flatMap((d) =>
    d.merged === undefined ? [] : [{ gone: d.merged, kept: d.conversation }],
  );
}

/**
 * Each decision's conversation once all of `decisions` (in order) are made: `result[i]` is
 * `decisions[i]`'s. A decision's own `conversation` is the one at its time, and a later decision
 * may have merged that into another (`LinkDecision.merged`).
 */
export function settledConversations(decisions: readonly LinkDecision[]): string[] {
  const settled = settleMerges(mergesOf(decisions));
  return decisions.map((d) => settled(d.conversation));
}
