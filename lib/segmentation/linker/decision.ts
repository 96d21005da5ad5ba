/**
 * What the reply linker takes and gives: a message, the decision made for it, a choice made
 * outside its model, and its options.
 */
import type { LinkerModel } from "./model.js";
import type { LinkerMessage } from "./window.js";

/** A message as the linker takes it, with the structure its platform gave, if any. */
export interface LinkInput extends LinkerMessage {
  /** The platform's own reply or thread parent: taken as given, never second-guessed. */
  readonly replyTo?: string;
}

export interface LinkDecision {
  readonly id: string;
  /** The message this one answers; absent when it starts a conversation. */
  readonly parent?: string;
  /**
   * The id of the conversation's first message: its own when it starts one, else its parent's
   * conversation (the parent's own id when the parent lies outside the window).
   */
  readonly conversation: string;
  /**
   * Where the link comes from: the platform (`replyTo` given), the linker (`inferred`), or
   * nowhere (`system`: joins and parts are never linked).
   */
  readonly source: "platform" | "inferred" | "system";
  /**
   * Inferred links: a second parent, in the conversation the model found nearly as likely (by
   * less than `mergeMargin`): the message joins both, and they become one conversation.
   */
  readonly also?: string;
  /**
   * With `also`: the id of the conversation that became part of `conversation`. Every message
   * that was in it is in `conversation` now (the linker's window says so already).
   */
  readonly merged?: string;
  /**
   * Inferred links: how much likelier the chosen conversation is than the next option (the log
   * of their summed probabilities' ratio; small means unsure).
   */
  readonly margin?: number;
  /**
   * Inferred links, with `alternatives`: the likeliest conversations, best first, each as its
   * best candidate parent's id or null for "starts a conversation" (what an advisor may be shown).
   */
  readonly options?: readonly (string | null)[];
  /** Inferred links: the parent was chosen for the linker (`LinkChoice`), not by its model. */
  readonly chosen?: true;
}

/**
 * A decision made outside the model for one message: a parent recorded before, or an advisor's
 * answer. `parent` null starts a conversation. A parent the linker would not consider (outside
 * the window, a system line, later) is ignored, and the model decides.
 */
export interface LinkChoice {
  readonly parent: string | null;
}

export interface ReplyLinkerOptions {
  /** The learned model; @default the model shipped with convoseg. */
  readonly model?: LinkerModel;
  /**
   * Added to the score of "starts a conversation": below zero, fewer conversations are split,
   * at the price of more mixed ones. @default the model's own, chosen on the dev split
   */
  readonly startBias?: number;
  /**
   * When the two likeliest conversations for a message are this close (the log of their summed
   * probabilities' ratio below it), the message joins both and they become one: a conversation
   * wrongly split in two is often joined again by a message that could belong to either. A link
   * chosen for the linker (`LinkChoice`) merges only where the model picks that parent itself (a
   * parent recorded by a run that died merges again as it did). 0 never merges.
   * @default the model's own, chosen on the dev split
   */
  readonly mergeMargin?: number;
  /**
   * Two conversations merge only while they hold at most this many of the window's messages
   * together: a large conversation's summed probability grows with its candidates, and merging
   * without a bound lets it swallow its channel's talk one conversation at a time.
   * @default the model's own, chosen on the dev split
   */
  readonly mergeLimit?: number;
  /** How many best options an inferred decision lists (`LinkDecision.options`). @default 0 */
  readonly alternatives?: number;
}
