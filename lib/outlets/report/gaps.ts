/**
 * The silence before each segment of a channel, which tells what cut it. A thread whose replies
 * are segmented on their own is a conversation stream of its own, beside the channel's, and so is
 * a linked conversation: its segments' gaps are measured within the thread (the conversation),
 * and the channel's own without the threads'.
 */
import { compareRefs, type MessageRef } from "../../base/identity/index.js";
import type { ChatMessage } from "../../history/messages/index.js";
import type { ThreadData } from "./data.js";
import { DROPPED } from "./data.js";
import type { SegmentRecord } from "./records.js";

/** The channel's own stream, beside its threads' (0, 1, …). */
const CHANNEL = -1;

/**
 * Per segment, the gap from the previous message of its stream to its first one (null for a
 * stream's first segment, and for late ones). `segmentOf` is each of `messages`' segment index,
 * {@link DROPPED} for none; without the messages, gaps are measured between segments.
 */
export function channelGaps(
  records: readonly SegmentRecord[],
  threads: readonly ThreadData[],
  threadOf: readonly (number | undefined)[],
  messages: readonly ChatMessage[] | undefined,
  segmentOf: Int32Array | undefined,
): (number | null)[] {
  const streamOf = threadOf.map((t) => t ?? CHANNEL);
  const gaps: (number | null)[] = records.map(() => null);
  // One pass each over the segments and the messages, however many threads there are.
  const segmentsOf = bucket(records.length, (i) => streamOf[i]);
  // A linked conversation may be named by a thread's root (its first message): only threads here.
  const threadIndex = new Map(threads.flatMap((t, i) => (t.linked ? [] : [[t.root, i] as const])));
  const messagesOf =
    messages &&
    segmentOf &&
    bucket(messages.length, (p) => {
      const s = segmentOf[p];
      if (s !== DROPPED) return streamOf[s];
      // A message in no segment counts in its thread's stream when that thread has segments.
      const thread = messages[p].thread;
      return (thread === undefined ? undefined : threadIndex.get(thread)) ?? CHANNEL;
    });
  const late = records.map((r) => r.late);
  for (const [stream, indexes] of segmentsOf) {
    const subset = indexes.map((i) => records[i]);
    const positions = messagesOf?.get(stream) ?? [];
    const found =
      messages && segmentOf
        ? gapsWithMessages(
            subset,
            positions.map((p) => messages[p]),
            positions.map((p) => segmentOf[p]),
            late,
          )
        : gapsBetweenSegments(subset);
    indexes.forEach((i, k) => {
      gaps[i] = found[k];
    });
  }
  return gaps;
}

/** The indexes 0 … n-1 by `key`, each list in order. */
function bucket(n: number, key: (i: number) => number): Map<number, number[]> {
  const buckets = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const k = key(i);
    const list = buckets.get(k);
    if (list) list.push(i);
    else buckets.set(k, [i]);
  }
  return buckets;
}

/**
 * Per segment, the gap from the stream's previous message to its first one. Messages of late
 * segments are passed over: they arrived after the cuts around them had been made. `segmentOf`
 * and `late` index the channel's segments.
 */
function gapsWithMessages(
  records: readonly SegmentRecord[],
  messages: readonly ChatMessage[],
  segmentOf: readonly number[],
  late: readonly boolean[],
): (number | null)[] {
  return records.map((record) => {
    if (record.late) return null;
    let before = lowerBound(messages, record.first) - 1;
    while (before >= 0 && segmentOf[before] !== DROPPED && late[segmentOf[before]]) before--;
    return before < 0 ? null : record.first.ts - messages[before].ts;
  });
}

/** Without the messages: per segment, the gap from the previous segment's last message. */
function gapsBetweenSegments(records: readonly SegmentRecord[]): (number | null)[] {
  const gaps: (number | null)[] = records.map(() => null);
  const inOrder = records
    .map((record, index) => ({ record, index }))
    .filter(({ record }) => !record.late)
    .sort((a, b) => compareRefs(a.record.first, b.record.first) || a.index - b.index);
  inOrder.forEach(({ record, index }, i) => {
    if (i > 0) gaps[index] = record.first.ts - inOrder[i - 1].record.last.ts;
  });
  return gaps;
}

/** Position of the first message not before `ref` in channel order. */
function lowerBound(messages: readonly ChatMessage[], ref: MessageRef): number {
  let low = 0;
  let high = messages.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareRefs(messages[middle], ref) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}
