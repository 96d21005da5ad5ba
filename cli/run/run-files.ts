/**
 * What a run writes besides its summary: each delivered segment (`--out`) and each extracted
 * segment's candidates (`--candidates`, docs/contracts/candidates-line.md), read from the results
 * stored for the segments it delivered.
 */
import { writeFile } from "node:fs/promises";
import type { KnowledgeReader } from "convoseg/knowledge/read";
import type { SegmentResult } from "convoseg/knowledge/store";
import type { CandidatesLine, SegmentMessageV1 } from "convoseg/pipeline/contract";

/** Writes `text` to `path`. */
export async function writeText(path: string, text: string): Promise<void> {
  try {
    await writeFile(path, text);
  } catch (error) {
    throw new Error(`cannot write ${path}: ${(error as Error).message}`);
  }
}

/** The stored result of each delivered segment that has one, in delivery order. */
export async function extractedResults(
  reader: KnowledgeReader,
  delivered: readonly SegmentMessageV1[],
): Promise<SegmentResult[]> {
  // One query per channel rather than a read per segment; in delivery order.
  const stored = new Map<string, SegmentResult>();
  for (const channel of new Set(delivered.map((segment) => segment.channel))) {
    for (const result of await reader.results(channel)) stored.set(result.segmentId, result);
  }
  return delivered.flatMap((segment) => {
    const result = stored.get(segment.segmentId);
    return result === undefined ? [] : [result];
  });
}

/** The `--candidates` line of a result: the contract in docs/contracts/candidates-line.md. */
export function candidatesLine(result: SegmentResult): string {
  const { channel, segmentId, late, model, promptVersion } = result;
  const { calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = result.usage;
  const usage = { calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens };
  const candidates: CandidatesLine["candidates"] = result.candidates.map((c) => ({
    id: c.id,
    topic: c.topic,
    reason: c.reason,
    confidence: c.confidence,
    tags: c.tags,
    subjective: c.subjective,
    ...(c.wikiWorthy === undefined ? {} : { wikiWorthy: c.wikiWorthy }),
    messageIds: c.messageIds,
    ...(c.authorCount === undefined ? {} : { authorCount: c.authorCount, authors: c.authors }),
  }));
  const line: CandidatesLine = {
    channel,
    segmentId,
    late,
    model,
    promptVersion,
    candidates,
    usage,
  };
  return `${JSON.stringify(line)}\n`;
}

/** The delivered segment as the output line: ids, flags and bounds; no message text. */
export function segmentLine(segment: SegmentMessageV1): string {
  const { channel, segmentId, messageIds, late, belongsAfter, count, first, last } = segment;
  // The thread whose stream it is of (null: the channel's own), as `segment --json` says it, and
  // the linked conversation's, only when it has one (contiguous lines stay as they were).
  const thread = segment.thread ?? null;
  const conversation =
    segment.conversation === undefined ? {} : { conversation: segment.conversation };
  return `${JSON.stringify({ channel, thread, ...conversation, segmentId, messageIds, late, belongsAfter, count, first, last })}\n`;
}
