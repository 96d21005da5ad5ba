/**
 * The body of a segment message on the queue: a public, versioned contract (v1) for consumers
 * outside this codebase. A segment whose messages fit the body limit carries them inline; a larger
 * one carries its bounds and message ids plus the table to fetch them from, so nothing is ever
 * truncated or dropped. Fields may be added within v1 and readers ignore fields they do not know;
 * a change that would break a v1 reader bumps `v`.
 *
 * A consumer (e.g. an SQS-triggered Lambda) reads a record like this; delivery is at least once,
 * so it dedupes by `segmentId`:
 *
 * ```ts
 * const segment = parseSegmentBody(record.body);
 * if (await alreadyProcessed(segment.segmentId)) return;
 * const store = new DynamoDbStore({ client, tableName: segment.reference?.table ?? HISTORY_TABLE });
 * const messages = await readSegmentMessages(segment, store); // in segment order
 * ```
 */
import {
  copyPlatformFields,
  type Message,
  type MessageKind,
  messageText,
  type PlatformFields,
} from "../../../history/index.js";
import { PipelineError } from "../errors.js";
import type { MessageRef, PlannedSegment } from "../types.js";

export interface SegmentMessageV1 {
  v: 1;
  segmentId: string;
  channel: string;
  late: boolean;
  belongsAfter: string | null;
  count: number;
  first: MessageRef;
  last: MessageRef;
  messageIds: string[];
  /** Present when the messages fit inline under the body limit. */
  messages?: InlineMessage[];
  /** Present instead of `messages` when they do not fit: fetch them with readSegmentMessages. */
  reference?: { table: string };
  /**
   * Added within v1: the id of the thread's root message when the segment is a thread's replies
   * (segmented as a stream of their own); absent for the channel's own stream.
   */
  thread?: string;
  /**
   * Added within v1, with `thread` only: the root message as context, not one of the segment's
   * messages (it is in one of the channel's own segments). Absent when the root is not stored
   * (deleted, cleared, or never ingested), or when it would not fit a reference-form body.
   */
  threadRoot?: InlineMessage;
  /**
   * Added within v1: in `linked` mode, the id of the first message of the conversation the reply
   * linker found these messages to be (its segments all name it); absent otherwise.
   */
  conversation?: string;
}

/**
 * One message of an inline body. The platform fields (`userId`, `replyTo`, `thread`, `platform`,
 * `channelName`) were added within v1: each only when the stored message has it, so a body of a
 * message without them, and every body written before them, reads as before.
 */
export interface InlineMessage extends PlatformFields {
  id: string;
  /** Platform timestamp, epoch ms. */
  ts: number;
  author?: string;
  text: string;
  /**
   * `bot` or `system` (a join, part or mode change); absent for a person's message, `user`, and
   * in every body written before kinds existed.
   */
  kind?: MessageKind;
  /**
   * Added within v1: the message this one answers as the reply linker inferred it (`linked`
   * mode), apart from the platform's `replyTo`; absent when it starts a conversation or the
   * platform said whom it answers.
   */
  inferredReplyTo?: string;
}

/** Where a reference-form segment's messages are read from: `DynamoDbStore` fits. */
export interface SegmentMessageSource {
  getMessages(channel: string, ids: readonly string[]): Promise<Message[]>;
}

/** The classic SQS body limit: a body under it is accepted by every queue in every region. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;

/** A segment so large that even its reference form (its message ids) exceeds the body limit. */
export class SegmentTooLargeError extends PipelineError {
  override readonly name: string = "SegmentTooLargeError";
  constructor(
    readonly segmentId: string,
    readonly bytes: number,
    readonly maxBodyBytes: number,
  ) {
    super(
      "PIPELINE_SEGMENT_TOO_LARGE",
      `segment ${segmentId}: even its reference form takes ${bytes} bytes, over the ${maxBodyBytes}-byte body limit; lower the segmenter's maxSize or raise the queue's MaximumMessageSize`,
    );
  }
}

/** A body that is not a v1 segment message; `field` names what is at fault. */
export class InvalidSegmentMessageError extends PipelineError {
  override readonly name: string = "InvalidSegmentMessageError";
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super("PIPELINE_INVALID_SEGMENT_MESSAGE", `invalid segment message: ${field}: ${reason}`);
  }
}

/** A reference-form segment whose messages the source no longer (or does not yet) hold. */
export class MissingSegmentMessagesError extends PipelineError {
  override readonly name: string = "MissingSegmentMessagesError";
  constructor(
    readonly segmentId: string,
    readonly missingIds: string[],
  ) {
    const shown = missingIds.slice(0, 5).join(", ");
    const more = missingIds.length > 5 ? ` and ${missingIds.length - 5} more` : "";
    super(
      "PIPELINE_MISSING_SEGMENT_MESSAGES",
      `segment ${segmentId}: ${missingIds.length} message(s) not found: ${shown}${more}`,
    );
  }
}

/**
 * The queue body for a segment: inline when its UTF-8 JSON fits `maxBodyBytes`, else the
 * reference form. `messages` must be the segment's own messages in segment order (checked: a
 * mismatch would deliver the wrong text under the segment's id). Throws a
 * {@link SegmentTooLargeError} rather than truncate when not even the reference fits.
 */
export function segmentBody(
  segment: PlannedSegment,
  messages: Message[],
  options: { maxBodyBytes: number; tableName: string },
  root?: Message,
): string {
  const inline = inlineSegmentBody(segment, messages, root);
  if (utf8Bytes(inline) <= options.maxBodyBytes) return inline;
  return referenceSegmentBody(segment, options, root);
}

/**
 * The inline body of a segment, whatever its size; a thread's segment carries `root` (its
 * thread's root message) as `threadRoot`.
 */
export function inlineSegmentBody(
  segment: PlannedSegment,
  messages: Message[],
  root?: Message,
): string {
  return encodeBody({
    ...segmentEnvelope(segment, root),
    messages: inlineMessages(segment, messages),
  } satisfies SegmentMessageV1);
}

/**
 * The reference form of a segment: its bounds and ids, and the table to read its messages from.
 * Throws a {@link SegmentTooLargeError} when even this exceeds `maxBodyBytes`.
 */
export function referenceSegmentBody(
  segment: PlannedSegment,
  options: { maxBodyBytes: number; tableName: string },
  root?: Message,
): string {
  const withRoot = (r?: Message) =>
    encodeBody({
      ...segmentEnvelope(segment, r),
      reference: { table: options.tableName },
    } satisfies SegmentMessageV1);
  // The root is context: a body too large for it goes without it, never not at all.
  const rooted = root === undefined ? undefined : withRoot(root);
  if (rooted !== undefined && utf8Bytes(rooted) <= options.maxBodyBytes) return rooted;
  const reference = withRoot();
  const bytes = utf8Bytes(reference);
  if (bytes > options.maxBodyBytes) {
    throw new SegmentTooLargeError(segment.segmentId, bytes, options.maxBodyBytes);
  }
  return reference;
}

/**
 * The UTF-8 bytes one message adds to a segment's inline body (its JSON and a separator): what
 * delivery adds up to decide, before fetching the rest, that a segment will not fit inline.
 */
export function inlineMessageBytes(segmentId: string, message: Message): number {
  return utf8Bytes(encodeBody(inlineMessage(segmentId, message))) + 1;
}

/**
 * The bytes of a segment's inline body before its messages: the envelope (with the thread's
 * `root` when given) and `"messages":[]`.
 */
export function inlineEnvelopeBytes(segment: PlannedSegment, root?: Message): number {
  return utf8Bytes(encodeBody({ ...segmentEnvelope(segment, root), messages: [] }));
}

/**
 * JSON that SQS accepts: SQS refuses U+FFFE and U+FFFF (and controls and lone surrogates, which
 * JSON.stringify already escapes), so those two are written as `\ufffe` and `\uffff` escapes,
 * which any JSON reader turns back into the same characters. Nothing is dropped.
 */
export function encodeBody(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\ufffe\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16)}`,
  );
}

/**
 * Whether SQS accepts `body` as a message body: only #x9, #xA, #xD, #x20 to #xD7FF, #xE000 to
 * #xFFFD and #x10000 to #x10FFFF (the local emulator does not check this).
 */
export function isSqsBody(body: string): boolean {
  for (let i = 0; i < body.length; i++) {
    const unit = body.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = body.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (
      (unit < 0x20 && unit !== 0x9 && unit !== 0xa && unit !== 0xd) ||
      (unit >= 0xdc00 && unit <= 0xdfff) ||
      unit === 0xfffe ||
      unit === 0xffff
    ) {
      return false;
    }
  }
  return true;
}

function segmentEnvelope(segment: PlannedSegment, root?: Message): SegmentMessageV1 {
  const first = segment.messages[0];
  const last = segment.messages.at(-1);
  if (first === undefined || last === undefined) {
    throw new Error(`segment ${segment.segmentId}: a segment needs at least one message`);
  }
  return {
    v: 1,
    segmentId: segment.segmentId,
    channel: segment.channel,
    late: segment.late,
    belongsAfter: segment.belongsAfter,
    count: segment.messages.length,
    first: { id: first.id, ts: first.ts },
    last: { id: last.id, ts: last.ts },
    messageIds: segment.messages.map((ref) => ref.id),
    ...(segment.thread === undefined ? {} : { thread: segment.thread }),
    ...(segment.thread === undefined || root === undefined
      ? {}
      : { threadRoot: inlineMessage(segment.segmentId, root) }),
    ...(segment.conversation === undefined ? {} : { conversation: segment.conversation }),
  };
}

function inlineMessages(segment: PlannedSegment, messages: Message[]): InlineMessage[] {
  if (messages.length !== segment.messages.length) {
    throw new Error(
      `segment ${segment.segmentId}: got ${messages.length} messages for ${segment.messages.length} refs`,
    );
  }
  return messages.map((message, i) => {
    const expected = segment.messages[i]?.id;
    if (message.id !== expected) {
      throw new Error(
        `segment ${segment.segmentId}: messages[${i}] has id ${message.id}, expected ${expected} (pass the segment's messages in segment order)`,
      );
    }
    return inlineMessage(segment.segmentId, message);
  });
}

function inlineMessage(segmentId: string, message: Message): InlineMessage {
  if (message.id === undefined || message.ts === undefined) {
    throw new Error(`segment ${segmentId}: a message without a platform id or ts cannot be sent`);
  }
  const inline: InlineMessage = { id: message.id, ts: message.ts, text: messageText(message) };
  if (message.author !== undefined) inline.author = message.author;
  if (message.kind !== undefined && message.kind !== "user") inline.kind = message.kind;
  copyPlatformFields(message, inline);
  if (message.inferredReplyTo !== undefined) inline.inferredReplyTo = message.inferredReplyTo;
  return inline;
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * The segment's messages in segment order: the inline ones, or for the reference form those
 * fetched from `source`, as they are now: edited text, and without those deleted since the
 * segment was sent (so there may be fewer than `count`, even none). Throws a
 * {@link MissingSegmentMessagesError} when any is missing (the channel was cleared) rather than
 * hand a consumer a partial segment.
 */
export async function readSegmentMessages(
  message: SegmentMessageV1,
  source: SegmentMessageSource,
): Promise<InlineMessage[]> {
  if (message.messages !== undefined) return message.messages;
  const fetched = await source.getMessages(message.channel, message.messageIds);
  const byId = new Map(fetched.map((m) => [m.id, m]));
  const missing = message.messageIds.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new MissingSegmentMessagesError(message.segmentId, missing);
  return message.messageIds.flatMap((id) => {
    const stored = byId.get(id) as Message;
    return stored.deleted ? [] : [inlineMessage(message.segmentId, stored)];
  });
}

/**
 * A thread's segment's root as context: the body's `threadRoot`, else (a reference-form body
 * that had no room for it, or a re-extraction request) the root read from `source` as it is
 * now. Undefined for the channel's own stream, or a root not stored or deleted.
 */
export async function readThreadRoot(
  message: SegmentMessageV1,
  source: SegmentMessageSource,
): Promise<InlineMessage | undefined> {
  if (message.thread === undefined) return undefined;
  if (message.threadRoot !== undefined) return message.threadRoot;
  const [root] = await source.getMessages(message.channel, [message.thread]);
  if (root === undefined || root.deleted || root.id !== message.thread || root.ts === undefined) {
    return undefined;
  }
  return inlineMessage(message.segmentId, root);
}
