/**
 * Turning an outbox into queue bodies with a bounded amount of message text in memory: each
 * segment's messages are fetched a few at a time, and once they would not fit inline the text is
 * let go and the segment goes by reference. Messages that are no longer stored (the channel was
 * cleared) or were deleted are left out and reported; a segment with none left is not sent. The
 * text is read here, at delivery, so an edit made before then is what goes out.
 */
import type { Message } from "../../history/index.js";
import {
  inlineEnvelopeBytes,
  inlineMessageBytes,
  inlineSegmentBody,
  referenceSegmentBody,
} from "./contract/segment-message.js";
import type { PlannedSegment, SegmentDelivery } from "./types.js";

/** Messages fetched per read: at most 25 items of 400 KB (10 MB) of text in hand at once. */
export const FETCH_BATCH = 25;
/** Bodies handed to the sink at once (bounded memory; the sink batches them again). */
const SEND_BATCH = 10;

export interface BodyOptions {
  maxBodyBytes: number;
  /** The messages table, named in reference-form bodies. */
  tableName: string;
}

export interface DeliveryReport {
  /** The segments sent, as sent (without their missing messages). */
  sent: PlannedSegment[];
  /** Ids of messages of the outbox that were no longer stored. */
  missing: string[];
  /** Ids of messages of the outbox deleted before delivery (`Editor`): left out. */
  deleted: string[];
}

/**
 * Sends `segments` in order through `send`, a few bodies at a time, fetching their messages from
 * `fetch` in batches of {@link FETCH_BATCH}.
 */
export async function deliverSegments(
  segments: readonly PlannedSegment[],
  fetch: (ids: readonly string[]) => Promise<Message[]>,
  send: (entries: SegmentDelivery[]) => Promise<void>,
  options: BodyOptions,
): Promise<DeliveryReport> {
  const report: DeliveryReport = { sent: [], missing: [], deleted: [] };
  let pending: SegmentDelivery[] = [];
  for (const segment of segments) {
    const built = await buildBody(segment, fetch, options);
    report.missing.push(...built.missing);
    report.deleted.push(...built.deleted);
    if (built.delivery === undefined) continue;
    pending.push(built.delivery);
    report.sent.push(built.delivery.segment);
    if (pending.length >= SEND_BATCH) {
      await send(pending);
      pending = [];
    }
  }
  if (pending.length > 0) await send(pending);
  return report;
}

/**
 * One segment's body: inline while its messages fit `maxBodyBytes`, else the reference form (the
 * rest is then only checked for presence, its text dropped batch by batch).
 */
async function buildBody(
  segment: PlannedSegment,
  fetch: (ids: readonly string[]) => Promise<Message[]>,
  options: BodyOptions,
): Promise<{ delivery?: SegmentDelivery; missing: string[]; deleted: string[] }> {
  const root = await threadRoot(segment, fetch);
  const present = new Set<string>();
  const deleted = new Set<string>();
  let inline: Message[] | undefined = [];
  let bytes = inlineEnvelopeBytes(segment, root);
  for (let at = 0; at < segment.messages.length; at += FETCH_BATCH) {
    const ids = segment.messages.slice(at, at + FETCH_BATCH).map((ref) => ref.id);
    for (const message of await fetch(ids)) {
      if (message.id === undefined) continue;
      if (message.deleted) {
        deleted.add(message.id);
        continue;
      }
      present.add(message.id);
      if (inline === undefined) continue;
      bytes += inlineMessageBytes(segment.segmentId, message);
      // Separators: one per message added here, one fewer in the body.
      if (bytes - 1 > options.maxBodyBytes) inline = undefined;
      else inline.push(message);
    }
  }
  const absent = segment.messages.filter((ref) => !present.has(ref.id)).map((ref) => ref.id);
  const missing = absent.filter((id) => !deleted.has(id));
  const gone = { missing, deleted: absent.filter((id) => deleted.has(id)) };
  // The id stays the planned one: a resend after a crash must carry the id of the first send.
  const kept: PlannedSegment =
    absent.length === 0
      ? segment
      : { ...segment, messages: segment.messages.filter((ref) => present.has(ref.id)) };
  if (kept.messages.length === 0) return gone;
  if (inline !== undefined) {
    const body = inlineSegmentBody(kept, inline, root);
    if (Buffer.byteLength(body) <= options.maxBodyBytes)
      return { delivery: { segment: kept, body }, ...gone };
  }
  return { delivery: { segment: kept, body: referenceSegmentBody(kept, options, root) }, ...gone };
}

/**
 * The root message of a thread's segment, read with it (one more item): context for the body,
 * as of the send like the rest. Undefined for the channel's stream, or a root not stored (or
 * deleted, or without a timestamp): the segment goes without it.
 */
async function threadRoot(
  segment: PlannedSegment,
  fetch: (ids: readonly string[]) => Promise<Message[]>,
): Promise<Message | undefined> {
  if (segment.thread === undefined) return undefined;
  const [root] = await fetch([segment.thread]);
  if (root === undefined || root.deleted || root.id !== segment.thread || root.ts === undefined) {
    return undefined;
  }
  return root;
}
