/**
 * A channel's threads for the report: which of its segments are a thread's (thread replies
 * segmented on their own) or a linked conversation's (the reply linker's, `linked` mode), and how
 * to label each (its root's or first message's author and words).
 */
import { compareIds } from "../../base/identity/index.js";
import type { ChatMessage } from "../../history/messages/index.js";
import { THREAD_EXCERPT, type ThreadData } from "./data.js";
import type { SegmentRecord } from "./records.js";

/**
 * The threads of a channel's `records` (in delivery order), in the order their first segment
 * was delivered, and each record's thread index (undefined: the channel's own segment).
 *
 * A segment is a thread's when its line names the thread (`thread`); a line that does not (one
 * written before segments named their thread) when every one of its messages in `messages` is a
 * reply in the same thread. The label comes from the first `threadRoot` a line of the thread
 * carries, else from the root among `messages`; without either the page says "thread <id>".
 *
 * After the threads come the linked conversations, in the order they started: a segment that is
 * no thread's is the conversation's its line names (`conversation`), labelled by the
 * conversation's first message among `messages` that is more than a greeting.
 */
export function channelThreads(
  records: readonly SegmentRecord[],
  messages: readonly ChatMessage[] | undefined,
): { threads: ThreadData[]; threadOf: (number | undefined)[] } {
  const byId = messages && new Map(messages.map((m) => [m.id, m]));
  const indexOf = new Map<string, number>();
  const threads: ThreadData[] = [];
  const threadOf = records.map((record, s) => {
    const root = record.thread ?? (byId && sharedThread(record.messageIds, byId));
    if (root === undefined) return undefined;
    let t = indexOf.get(root);
    if (t === undefined) {
      t = threads.push({ root, segments: [] }) - 1;
      indexOf.set(root, t);
    }
    const thread = threads[t];
    thread.segments.push(s);
    const known = record.threadRoot;
    if (known && thread.author === undefined && thread.excerpt === undefined) {
      label(thread, known.author, known.text);
    }
    return t;
  });
  const conversations = linkedConversations(records, threadOf, threads.length);
  threads.push(...conversations);
  for (const thread of threads) {
    const message = byId?.get(thread.root);
    const named =
      thread.linked && byId && message ? openingWords(message, thread, records, byId) : message;
    if (named && thread.author === undefined && thread.excerpt === undefined) {
      label(thread, named.user ?? undefined, named.text ?? undefined);
    }
    if (thread.linked && message) thread.start = message.ts;
  }
  return { threads, threadOf };
}

/**
 * The linked conversations of the segments that are no thread's (`threadOf` undefined), ordered
 * by their first segment's first message (then id), each segment's index (after `offset`
 * threads) set in `threadOf`.
 */
function linkedConversations(
  records: readonly SegmentRecord[],
  threadOf: (number | undefined)[],
  offset: number,
): ThreadData[] {
  const byRoot = new Map<string, ThreadData>();
  records.forEach((record, s) => {
    const root = record.conversation;
    if (root === undefined || threadOf[s] !== undefined) return;
    const known = byRoot.get(root);
    if (known === undefined) {
      byRoot.set(root, { root, linked: true, start: record.first.ts, segments: [s] });
      return;
    }
    known.segments.push(s);
    known.start = Math.min(known.start ?? record.first.ts, record.first.ts);
  });
  const conversations = [...byRoot.values()].sort(
    (a, b) => (a.start ?? 0) - (b.start ?? 0) || compareIds(a.root, b.root),
  );
  conversations.forEach((conversation, k) => {
    for (const s of conversation.segments) threadOf[s] = offset + k;
  });
  return conversations;
}

/**
 * The message that names a linked conversation: its first that is more than a greeting, else its
 * `first`. On IRC the linker often joins someone's "hi" to the question they ask next, and a row
 * labelled "nbro: “Hi”" says nothing of what was talked about.
 */
function openingWords(
  first: ChatMessage,
  conversation: ThreadData,
  records: readonly SegmentRecord[],
  byId: ReadonlyMap<string, ChatMessage>,
): ChatMessage {
  if (!isGreeting(first.text ?? "")) return first;
  for (const s of conversation.segments)
    for (const id of records[s]?.messageIds ?? []) {
      const message = byId.get(id);
      if (message !== undefined && !isGreeting(message.text ?? "")) return message;
    }
  return first;
}

/** Words of a greeting to a room, and who it greets ("o" of the wave "o/"). */
const GREETINGS = new Set(
  "hi hello hey heya hiya howdy yo hola greetings morning evening afternoon gm sup".split(" "),
);
const GREETED = new Set(
  "good all everyone everybody guys folks people there yall y'all again room channel o".split(" "),
);

/** Whether a text only greets ("Hi", "hello everyone!", "good morning all"): five words at most. */
function isGreeting(text: string): boolean {
  const words = text.toLowerCase().match(/[\p{L}']+/gu) ?? [];
  if (words.length === 0 || words.length > 5) return false;
  return (
    words.some((w) => GREETINGS.has(w)) && words.every((w) => GREETINGS.has(w) || GREETED.has(w))
  );
}

/** The thread all of a segment's known messages are replies in, if they share one. */
function sharedThread(
  ids: readonly string[],
  byId: ReadonlyMap<string, ChatMessage>,
): string | undefined {
  let shared: string | undefined;
  for (const id of ids) {
    const message = byId.get(id);
    // A message the input lacks says nothing either way.
    if (message === undefined) continue;
    if (message.thread === undefined || (shared !== undefined && message.thread !== shared)) {
      return undefined;
    }
    shared = message.thread;
  }
  return shared;
}

function label(thread: ThreadData, author: string | undefined, text: string | undefined): void {
  if (author !== undefined && author !== "") thread.author = author;
  const excerpt = text === undefined ? "" : excerptOf(text);
  if (excerpt !== "") thread.excerpt = excerpt;
}

/**
 * The start of a text on one line: whitespace collapsed, cut at a word when one ends near the
 * limit, with "…" when cut. Counted in code points, so that no surrogate pair is split.
 */
export function excerptOf(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  if (chars.length <= THREAD_EXCERPT) return flat;
  const cut = chars.slice(0, THREAD_EXCERPT - 1).join("");
  const space = cut.lastIndexOf(" ");
  return `${space >= THREAD_EXCERPT / 2 ? cut.slice(0, space) : cut}…`;
}
