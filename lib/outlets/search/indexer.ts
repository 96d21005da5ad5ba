/**
 * Keeps a deployed search index following the stores: a segment's documents are written when its
 * result is stored, written again from the stores when its messages are edited or deleted, and an
 * erasure takes the person's documents out and leaves no older version of them on disk.
 */
import type { Message } from "../../history/index.js";
import type { Topic } from "../../knowledge/read/index.js";
import { correctResult, type SegmentResult } from "../../knowledge/store/index.js";
import type { SearchDocument } from "./documents.js";
import { segmentDocuments } from "./segment.js";

/** The index's writes (`LanceChannelIndexes` fits). */
export interface SegmentIndex {
  replaceSegment(
    channel: string,
    segmentId: string,
    documents: readonly SearchDocument[],
  ): Promise<void>;
  /** Removes the documents citing one of `messageIds` or written by one of `authors`; their segments. */
  forget(
    channel: string,
    messageIds: readonly string[],
    authors?: readonly string[],
  ): Promise<string[]>;
  /** Removes documents of other kinds than messages whose words name one of `names`; their segments. */
  forgetNaming(channel: string, names: readonly string[]): Promise<string[]>;
  purge(channel: string): Promise<void>;
}

type SegmentMessages = Parameters<typeof segmentDocuments>[1];

interface SearchIndexerDependencies {
  index: SegmentIndex;
  /** A segment's stored result (the results table). */
  results: { getResult(channel: string, segmentId: string): Promise<SegmentResult | undefined> };
  /** Stored messages by id, deleted ones marked (the messages table). */
  messages: { getMessages(channel: string, ids: readonly string[]): Promise<Message[]> };
  /** The channel's topics; without it, topics are not indexed. */
  topics?: (channel: string) => Promise<Topic[]>;
  /** The channel's question corrections (people's), laid over each result indexed. */
  corrections?: (channel: string) => Promise<Parameters<typeof correctResult>[1]>;
}

export class SearchIndexer {
  constructor(private readonly deps: SearchIndexerDependencies) {}

  /**
   * After `result` was stored (or found stored) for a segment of these `messages` (absent: read
   * from the store).
   */
  async stored(result: SegmentResult, messages?: SegmentMessages): Promise<void> {
    const ids = result.messageIds ?? [result.first.id, result.last.id];
    messages ??= await this.deps.messages.getMessages(result.channel, ids);
    const corrections = await this.deps.corrections?.(result.channel);
    // As people corrected it: a hidden question is not found, a reopened one is unanswered.
    if (corrections !== undefined && corrections.length > 0)
      result = correctResult(result, corrections);
    const topics = result.candidates.length === 0 ? [] : await this.deps.topics?.(result.channel);
    await this.deps.index.replaceSegment(
      result.channel,
      result.segmentId,
      segmentDocuments(result, messages, topics),
    );
  }

  /**
   * After a segment's result was redacted for its messages' edits and deletions (`result`
   * undefined: it was removed): its documents written again from the stores, and documents of
   * other segments citing a deleted message (a topic's) removed.
   */
  async redacted(
    channel: string,
    segmentId: string,
    result: SegmentResult | undefined,
    deleted: readonly string[],
  ): Promise<void> {
    if (deleted.length > 0) await this.deps.index.forget(channel, deleted);
    if (result === undefined) await this.deps.index.replaceSegment(channel, segmentId, []);
    else await this.stored(result);
  }

  /**
   * After an erasure deleted a person's `messageIds` in `channel` and removed their `names` from
   * its results: what cites those messages, what they wrote and what names them is taken out,
   * the segments it came from are written again from the stores, and the channel's index is
   * rewritten without older versions, so that nothing of them stays on disk.
   */
  async erased(
    channel: string,
    messageIds: readonly string[],
    names: readonly string[],
  ): Promise<void> {
    const { index } = this.deps;
    const segments = new Set([
      ...(await index.forget(channel, messageIds, names)),
      ...(await index.forgetNaming(channel, names)),
    ]);
    segments.delete("");
    for (const segmentId of [...segments].sort()) await this.refresh(channel, segmentId);
    await index.purge(channel);
  }

  private async refresh(channel: string, segmentId: string) {
    const result = await this.deps.results.getResult(channel, segmentId);
    if (result === undefined) {
      await this.deps.index.replaceSegment(channel, segmentId, []);
      return;
    }
    await this.stored(result);
  }
}
