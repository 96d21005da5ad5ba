/**
 * A channel's own messages (those in no thread) as conversation streams: the reply linker
 * (`convoseg/linker`) puts each message in a conversation, and each conversation becomes a stream
 * of its own, to be segmented as a thread's replies are. `segment` reads channels so in `linked`
 * mode; the benchmarks compare it with `contiguous` segments.
 */
import {
  type LinkChoice,
  type LinkDecision,
  type LinkInput,
  ReplyLinker,
  settledConversations,
} from "convoseg/linker";
import type { ChatMessage } from "convoseg/messages";
import type { ConversationMode } from "convoseg/pipeline";

const CONVERSATION_MODES: readonly ConversationMode[] = ["linked", "contiguous"];

/** A `--conversations` value; undefined gives `linked`. Throws an error naming the two values. */
export function conversationsOption(text: string | undefined): ConversationMode {
  return chosenConversations(text) ?? "linked";
}

/** Refuses `--ask-links` beside `--conversations contiguous`, which links nothing to ask about. */
export function refuseAskLinksContiguous(askLinks: boolean, mode: string | undefined): void {
  if (askLinks && mode === "contiguous") {
    throw new Error("--ask-links needs --conversations linked (contiguous links nothing)");
  }
}

/** A `--conversations` value as given: undefined when not given. Throws as conversationsOption. */
export function chosenConversations(text: string | undefined): ConversationMode | undefined {
  if (text === undefined) return undefined;
  const mode = CONVERSATION_MODES.find((m) => m === text);
  if (mode === undefined) {
    throw new Error(
      `--conversations must be ${CONVERSATION_MODES.join(" or ")} (got ${JSON.stringify(text)})`,
    );
  }
  return mode;
}

/** One conversation's messages, in the order they were given. */
export interface ConversationStream<M> {
  /**
   * The conversation's id as the linker names it: its first message's id (for a platform reply to
   * a message the linker no longer holds, or to none of the channel, that message's id); null for
   * the channel's system lines, which stay in its own timeline, as the tick keeps them.
   */
  conversation: string | null;
  messages: M[];
}

/**
 * Groups `messages` by the conversation their decisions settle on (`decisions[i]` is
 * `messages[i]`'s, as `linkAll` returns them; a later decision may merge an earlier conversation
 * into another): each message in exactly one stream, each stream in the given order,
 * conversations in the order of their first message, then the system lines'. Pure.
 *
 * @throws RangeError when the decisions are not the messages', one for one.
 */
export function conversationStreams<M extends { readonly id: string }>(
  messages: readonly M[],
  decisions: readonly LinkDecision[],
): ConversationStream<M>[] {
  if (decisions.length !== messages.length) {
    throw new RangeError(
      `expected one decision per message (got ${decisions.length} for ${messages.length})`,
    );
  }
  const settled = settledConversations(decisions);
  const streams = new Map<string, ConversationStream<M>>();
  messages.forEach((message, i) => {
    const decision = decisions[i] as LinkDecision;
    if (decision.id !== message.id) {
      throw new RangeError(
        `decision ${i} is ${JSON.stringify(decision.id)}'s, not ${JSON.stringify(message.id)}'s`,
      );
    }
    const conversation = decision.source === "system" ? null : (settled[i] as string);
    const key = conversation ?? "";
    const stream = streams.get(key);
    if (stream) stream.messages.push(message);
    else streams.set(key, { conversation, messages: [message] });
  });
  // The system lines' stream last, so that a channel's conversations are listed together.
  const all = [...streams.values()];
  return [
    ...all.filter((s) => s.conversation !== null),
    ...all.filter((s) => s.conversation === null),
  ];
}

/**
 * The parent the platform gives `message`: its `replyTo`, or in a thread (`thread` naming
 * another message) the thread's root. None with `ignoreLinks`.
 */
function platformParent(message: ChatMessage, ignoreLinks: boolean): string | undefined {
  if (ignoreLinks) return undefined;
  if (message.replyTo !== undefined) return message.replyTo;
  return message.thread !== undefined && message.thread !== message.id ? message.thread : undefined;
}

/**
 * `message` as the linker reads it: its author's name (else id), its text, its kind, and unless
 * `ignoreLinks` its platform parent (`replyTo`, else a thread's root), taken as given.
 */
export function linkInput(message: ChatMessage, ignoreLinks: boolean): LinkInput {
  const replyTo = platformParent(message, ignoreLinks);
  return {
    id: message.id,
    ts: message.ts,
    author: message.user ?? message.userId ?? "",
    ...(message.userId === undefined ? {} : { authorId: message.userId }),
    text: message.text ?? "",
    ...(message.kind === undefined ? {} : { kind: message.kind }),
    ...(replyTo === undefined ? {} : { replyTo }),
  };
}

/**
 * Whether `--ask-links`' answers were taken: the linker then merges no conversations, as the
 * model decided what it was unsure of (and the tick does the same).
 */
export const advised = (choices: ReadonlyMap<string, LinkChoice> | undefined): boolean =>
  choices !== undefined && choices.size > 0;

/**
 * One channel's own messages (none a reply in a thread), in the order given (the product's),
 * linked by the reply linker and grouped in conversation streams. Their `replyTo`s are taken as
 * given unless `ignoreReplyTo` (annotations to measure against, not the platform's links), and
 * `choices` by message id (`--ask-links`' answers) as the linker takes them. System lines are
 * never linked: they stay together in the channel's own stream (`conversation` null).
 */
export function linkedConversations(
  messages: readonly ChatMessage[],
  options: { ignoreReplyTo?: boolean; choices?: ReadonlyMap<string, LinkChoice> } = {},
): ConversationStream<ChatMessage>[] {
  const { ignoreReplyTo = false, choices } = options;
  const linker = new ReplyLinker(advised(choices) ? { mergeMargin: 0 } : {});
  const decisions = messages.map((m) =>
    linker.link(linkInput(m, ignoreReplyTo), choices?.get(m.id)),
  );
  return conversationStreams(messages, decisions);
}
