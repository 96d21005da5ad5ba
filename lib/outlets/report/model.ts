import { compareIds, compareRefs } from "../../base/identity/index.js";
import type { CandidatesLine } from "../../segmentation/pipeline/contract/index.js";
import { openConversationStart } from "../../segmentation/segmenter/index.js";
import {
  type ChannelData,
  type CutCause,
  DROPPED,
  type ExtractionData,
  type ExtractionSummary,
  type MessageColumns,
  NOT_IN_INPUT,
  OPEN,
  type Report,
  type ReportData,
  type ReportSummary,
  type ReportTexts,
  type SegmentData,
  type SizeDistribution,
  type TopicData,
  type Usage,
} from "./data.js";
import { channelGaps } from "./gaps.js";
import { reportKnowledge } from "./knowledge.js";
import type { ReportInput, ReportMessage, SegmentRecord } from "./records.js";
import { channelThreads } from "./threads.js";
import { channelTopics } from "./topics.js";

/**
 * The report's data: per channel its segments in delivery order, each with the cause of the cut
 * before it (the segmenter's rules: a gap longer than `settle` starts a conversation, and only the
 * size cap cuts inside one; late segments are cut by their lateness), the messages in channel
 * order with the segment each is in, and what extraction found; plus the totals.
 */
export function buildReport(input: ReportInput): Report {
  const segmentsByChannel = groupBy(input.segments, (s) => s.channel);
  const messagesByChannel = input.messages && groupBy(input.messages, (m) => m.channel);
  const extractions = new Map(
    (input.candidates ?? []).map((c) => [segmentKey(c.channel, c.segmentId), c]),
  );
  const names = new Set([...segmentsByChannel.keys(), ...(messagesByChannel?.keys() ?? [])]);
  const texts: ReportTexts = [];
  const sample = new Set(input.sampleChannels);
  const channels = [...names]
    .sort((a, b) => Number(sample.has(a)) - Number(sample.has(b)) || compareIds(a, b))
    .map((name) => {
      const built = buildChannel(
        name,
        segmentsByChannel.get(name) ?? [],
        messagesByChannel?.get(name),
        {
          extractions,
          settle: input.settle,
          now: input.now,
        },
      );
      texts.push(built.texts);
      return sample.has(name) ? { ...built.channel, sample: true as const } : built.channel;
    });
  const data: ReportData = {
    v: 1,
    generatedAt: input.generatedAt,
    settleMs: input.settle,
    sources: input.sources ?? [],
    summary: summarize(channels, input),
    channels,
    knowledge: reportKnowledge(input),
  };
  return { data, texts };
}

interface ChannelContext {
  extractions: ReadonlyMap<string, CandidatesLine>;
  settle: number;
  now: number;
}

function buildChannel(
  name: string,
  records: readonly SegmentRecord[],
  unsorted: readonly ReportMessage[] | undefined,
  context: ChannelContext,
): { channel: ChannelData; texts: string[] } {
  const messages = unsorted && [...unsorted].sort(compareRefs);
  const placed = messages && placeMessages(records, messages);
  const { threads, threadOf } = channelThreads(records, messages);
  const gaps = channelGaps(records, threads, threadOf, messages, placed?.segmentOf);
  const indexById = new Map(records.map((r, i) => [r.segmentId, i]));
  const segments = records.map((record, i): SegmentData => {
    const thread = threadOf[i];
    const gapMs = gaps[i];
    const belongsAfter = record.belongsAfter;
    return {
      id: record.segmentId,
      first: record.first.ts,
      last: record.last.ts,
      count: record.messageIds.length,
      cut: cutCause(record, gapMs, context.settle),
      gapMs,
      belongsAfter: belongsAfter === null ? null : (indexById.get(belongsAfter) ?? null),
      belongsAfterId: belongsAfter,
      missing: placed ? placed.missing[i] : 0,
      ...(placed ? {} : { messageIds: [...record.messageIds] }),
      extraction: extraction(
        context.extractions.get(segmentKey(name, record.segmentId)),
        placed ? placed.order[i] : record.messageIds,
      ),
      ...(thread === undefined ? {} : { thread }),
    };
  });
  let columns: MessageColumns | null = null;
  let open = 0;
  let dropped = 0;
  if (messages && placed) {
    const openFrom = openConversationStart(messages, context.settle, context.now);
    placed.segmentOf.forEach((segment, position) => {
      if (segment !== DROPPED) return;
      if (position >= openFrom) {
        placed.segmentOf[position] = OPEN;
        open++;
      } else dropped++;
    });
    columns = messageColumns(messages, placed.segmentOf, inferredParents(records));
  }
  const missing = segments.reduce((sum, s) => sum + s.missing, 0);
  const tsOf = messages && new Map(messages.map((m) => [m.id, m.ts]));
  const order = placed?.order;
  const topics = channelTopics(segments, (s, range) => {
    const ids = order?.[s];
    const first = range && ids && tsOf?.get(ids[range[0]]);
    const last = range && ids && tsOf?.get(ids[range[1]]);
    return typeof first === "number" && typeof last === "number"
      ? [first, last]
      : [segments[s].first, segments[s].last];
  });
  const displayName = messages?.findLast((m) => m.channelName !== undefined)?.channelName;
  const channel: ChannelData = {
    name,
    ...(displayName === undefined || displayName === name ? {} : { displayName }),
    counts: {
      messages: messages ? messages.length : segments.reduce((sum, s) => sum + s.count, 0),
      segments: segments.length,
      lateSegments: segments.filter((s) => s.cut === "late").length,
      open,
      dropped,
      missing,
      topics: segments.reduce((sum, s) => sum + (s.extraction?.topics.length ?? 0), 0),
    },
    topics,
    segments,
    threads,
    messages: columns,
  };
  return { channel, texts: messages ? messages.map((m) => m.text ?? "") : [] };
}

function cutCause(record: SegmentRecord, gapMs: number | null, settle: number): CutCause {
  if (record.late) return "late";
  if (gapMs === null) return "start";
  // The segmenter's rule: a gap strictly longer than settle starts a new conversation.
  return gapMs > settle ? "silence" : "size";
}

interface Placement {
  /** Each message's segment index, DROPPED when it is in none (open ones are told apart later). */
  segmentOf: Int32Array;
  /** Each segment's message ids that the input has, in channel order. */
  order: string[][];
  /** How many of each segment's message ids the input does not have. */
  missing: number[];
}

function placeMessages(records: readonly SegmentRecord[], messages: ReportMessage[]): Placement {
  const positionOf = new Map(messages.map((m, i) => [m.id, i]));
  const segmentOf = new Int32Array(messages.length).fill(DROPPED);
  const missing: number[] = [];
  const order = records.map((record, k) => {
    const positions: number[] = [];
    for (const id of record.messageIds) {
      const position = positionOf.get(id);
      if (position === undefined) continue;
      positions.push(position);
      segmentOf[position] = k;
    }
    missing.push(record.messageIds.length - positions.length);
    return positions.sort((a, b) => a - b).map((p) => messages[p].id);
  });
  return { segmentOf, order, missing };
}

function messageColumns(
  messages: ReportMessage[],
  segmentOf: Int32Array,
  inferred: ReadonlyMap<string, string>,
): MessageColumns {
  const userIndex = new Map<string, number>();
  const columns: MessageColumns = {
    tsDelta: [],
    id: [],
    user: [],
    users: [],
    segment: Array.from(segmentOf),
  };
  let previous = 0;
  for (const message of messages) {
    columns.tsDelta.push(message.ts - previous);
    previous = message.ts;
    columns.id.push(message.id);
    const user = message.user;
    if (user === undefined || user === null) {
      columns.user.push(-1);
      continue;
    }
    let index = userIndex.get(user);
    if (index === undefined) {
      index = columns.users.push(user) - 1;
      userIndex.set(user, index);
    }
    columns.user.push(index);
  }
  addReplies(messages, columns, inferred);
  const kinds = messages.map((m) => KIND_CODES[m.kind ?? "user"]);
  if (kinds.some((k) => k !== 0)) columns.kind = kinds;
  return columns;
}

/** {@link MessageColumns.kind}'s codes. */
const KIND_CODES = { user: 0, bot: 1, system: 2 } as const;

/**
 * The parents the reply linker inferred, by message id, as the segments' inline bodies carry them
 * (`run --report` reads its input file, whose messages have none).
 */
function inferredParents(records: readonly SegmentRecord[]): Map<string, string> {
  const parents = new Map<string, string>();
  for (const record of records) {
    for (const { id, inferredReplyTo } of record.messages ?? []) {
      if (inferredReplyTo !== undefined) parents.set(id, inferredReplyTo);
    }
  }
  return parents;
}

/**
 * Each message's answered message as a channel position, when any message answers one: the
 * platform's link (`replyTo`, else its thread's root), else the one the reply linker inferred
 * (the message's `inferredReplyTo`, else `inferred`'s), flagged in `columns.inferred`.
 */
function addReplies(
  messages: ReportMessage[],
  columns: MessageColumns,
  inferred: ReadonlyMap<string, string>,
): void {
  const own = (m: ReportMessage, id: string | undefined) => (id === m.id ? undefined : id);
  const platform = (m: ReportMessage) => own(m, m.replyTo ?? m.thread);
  const linked = (m: ReportMessage) => own(m, m.inferredReplyTo ?? inferred.get(m.id));
  const answers = (m: ReportMessage) => platform(m) ?? linked(m);
  if (!messages.some((m) => answers(m) !== undefined)) return;
  const position = new Map<string, number>();
  messages.forEach((m, i) => {
    if (!position.has(m.id)) position.set(m.id, i);
  });
  columns.replyTo = messages.map((m) => {
    const id = answers(m);
    return id === undefined ? -1 : (position.get(id) ?? NOT_IN_INPUT);
  });
  const flags = messages.map((m) => (platform(m) === undefined && linked(m) !== undefined ? 1 : 0));
  if (flags.some((f) => f === 1)) columns.inferred = flags;
}

/** The segment's extraction, each evidence range as indexes into `messageIds` (segment order). */
function extraction(
  record: CandidatesLine | undefined,
  messageIds: readonly string[],
): ExtractionData | null {
  if (record === undefined) return null;
  const indexOf = new Map(messageIds.map((id, i) => [id, i]));
  const topics = record.candidates.map((c): TopicData => {
    const from = c.messageIds && indexOf.get(c.messageIds[0]);
    const to = c.messageIds && indexOf.get(c.messageIds[1]);
    return {
      topic: c.topic,
      reason: c.reason,
      confidence: c.confidence,
      tags: [...c.tags],
      subjective: c.subjective,
      ...(c.wikiWorthy === undefined ? {} : { wikiWorthy: c.wikiWorthy }),
      range: typeof from === "number" && typeof to === "number" && from <= to ? [from, to] : null,
    };
  });
  return {
    model: record.model,
    promptVersion: record.promptVersion,
    usage: { ...record.usage },
    topics,
  };
}

function summarize(channels: ChannelData[], input: ReportInput): ReportSummary {
  const segments = channels.flatMap((c) => c.segments);
  const total = (count: (c: ChannelData) => number) =>
    channels.reduce((sum, c) => sum + count(c), 0);
  const conversations = total((c) => c.threads.filter((t) => t.linked).length);
  return {
    channels: channels.length,
    ...(conversations === 0 ? {} : { conversations }),
    messages: input.messages ? input.messages.length : null,
    segments: segments.length,
    lateSegments: total((c) => c.counts.lateSegments),
    lateMessages: segments.filter((s) => s.cut === "late").reduce((sum, s) => sum + s.count, 0),
    inSegments: segments.reduce((sum, s) => sum + s.count, 0),
    open: total((c) => c.counts.open),
    dropped: total((c) => c.counts.dropped),
    missing: total((c) => c.counts.missing),
    sizes: sizeDistribution(segments.map((s) => s.count)),
    extraction: input.candidates ? extractionSummary(segments, input.candidates) : null,
  };
}

/** Counts in power-of-two buckets (1, 2–3, 4–7, …), with nearest-rank quantiles. */
export function sizeDistribution(counts: readonly number[]): SizeDistribution | null {
  if (counts.length === 0) return null;
  const sorted = [...counts].sort((a, b) => a - b);
  const max = sorted[sorted.length - 1];
  const buckets = Array.from({ length: Math.floor(Math.log2(max)) + 1 }, (_, b) => ({
    from: 2 ** b,
    to: 2 ** (b + 1) - 1,
    segments: 0,
  }));
  for (const count of sorted) buckets[Math.floor(Math.log2(count))].segments++;
  const rank = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
  return { buckets, min: sorted[0], median: rank(0.5), p90: rank(0.9), max };
}

function extractionSummary(
  segments: readonly SegmentData[],
  candidates: readonly CandidatesLine[],
): ExtractionSummary {
  const extracted = segments.flatMap((s) => (s.extraction ? [s.extraction] : []));
  const usage: Usage = {
    calls: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  for (const e of extracted) {
    for (const field of Object.keys(usage) as (keyof Usage)[]) usage[field] += e.usage[field];
  }
  return {
    segments: extracted.length,
    topics: extracted.reduce((sum, e) => sum + e.topics.length, 0),
    usage,
    models: [...new Set(extracted.map((e) => e.model))].sort(),
    promptVersions: [...new Set(extracted.map((e) => e.promptVersion))].sort(),
    unmatched: candidates.length - extracted.length,
  };
}

function segmentKey(channel: string, segmentId: string): string {
  return `${channel}\u0000${segmentId}`;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
