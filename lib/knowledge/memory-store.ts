import {
  NO_CALLS,
  normalizeTopic,
  type SegmentTerms,
  type TermCounts,
  type WindowOutput,
} from "../extraction/index.js";
import { LeaseLostError, SegmentBusyError } from "./errors.js";
import {
  type SegmentResult,
  type SegmentUsage,
  sumUsage,
  supportItemKey,
  type TermLogEntry,
  type TopicSupport,
  termsHeadKey,
} from "./schema/items.js";
import type { Lease, ResultStore } from "./store.js";
import { chunksToCount, ownContribution } from "./term-store.js";

interface Channel {
  results: Map<string, SegmentResult>;
  leases: Map<string, { owner?: string; until?: number; spent: SegmentUsage }>;
  windows: Map<string, WindowOutput>;
  /** By support item key, so that topics group as the table's sort order groups them. */
  supports: Map<string, TopicSupport>;
  /** Per vocabulary: segments counted, segments per term, and each segment's log. */
  terms: Map<
    string,
    { segments: number; counts: Map<string, number>; log: Map<string, TermLogEntry[]> }
  >;
}

/**
 * The results table in memory, for tests and tools that run extraction without DynamoDB: the
 * same semantics as `DynamoDbResultStore` (conditional leases, supports written before the result,
 * a lost lease refused, term statistics counted once per segment), nothing kept across processes.
 * Every value it returns is a copy.
 */
export class MemoryResultStore implements ResultStore {
  private readonly channels = new Map<string, Channel>();

  private channel(channel: string): Channel {
    let found = this.channels.get(channel);
    if (found === undefined) {
      found = {
        results: new Map(),
        leases: new Map(),
        windows: new Map(),
        supports: new Map(),
        terms: new Map(),
      };
      this.channels.set(channel, found);
    }
    return found;
  }

  async getResult(channel: string, segmentId: string): Promise<SegmentResult | undefined> {
    return copy(this.channel(channel).results.get(segmentId));
  }

  async acquireLease(
    channel: string,
    segmentId: string,
    lease: { owner: string; now: number; leaseMs: number; expiresAt: number },
  ): Promise<Lease> {
    const leases = this.channel(channel).leases;
    const held = leases.get(segmentId);
    if (
      held?.until !== undefined &&
      held.until >= lease.now &&
      held.owner !== undefined &&
      held.owner !== lease.owner
    ) {
      throw new SegmentBusyError(segmentId, held.until);
    }
    const until = lease.now + lease.leaseMs;
    const spent = held?.spent ?? { ...NO_CALLS };
    leases.set(segmentId, { owner: lease.owner, until, spent });
    return { owner: lease.owner, until, spent: { ...spent } };
  }

  async releaseLease(
    channel: string,
    segmentId: string,
    owner: string,
    spent: SegmentUsage,
  ): Promise<void> {
    const leases = this.channel(channel).leases;
    const held = leases.get(segmentId) ?? { spent: { ...NO_CALLS } };
    const released = held.owner === owner ? { spent: held.spent } : held;
    leases.set(segmentId, { ...released, spent: sumUsage(held.spent, spent) });
  }

  async getWindow(channel: string, hash: string): Promise<WindowOutput | undefined> {
    return copy(this.channel(channel).windows.get(hash));
  }

  async putWindow(channel: string, hash: string, output: WindowOutput): Promise<void> {
    this.channel(channel).windows.set(hash, copy(output));
  }

  async saveResult(
    result: SegmentResult,
    supports: readonly TopicSupport[],
    previous: SegmentResult | undefined,
    owner: string,
  ): Promise<void> {
    const state = this.channel(result.channel);
    const keep = new Set<string>();
    for (const support of supports) {
      const key = supportItemKey(support.normalizedTopic, support.segmentId);
      keep.add(key);
      state.supports.set(key, copy(support));
    }
    for (const candidate of previous?.candidates ?? []) {
      const key = supportItemKey(normalizeTopic(candidate.topic), result.segmentId);
      if (!keep.has(key)) state.supports.delete(key);
    }
    if (state.leases.get(result.segmentId)?.owner !== owner) {
      throw new LeaseLostError(result.segmentId);
    }
    state.results.set(result.segmentId, copy(result));
    state.leases.delete(result.segmentId);
  }

  async listResults(channel: string): Promise<SegmentResult[]> {
    return [...this.channel(channel).results.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, result]) => copy(result));
  }

  async listSupports(channel: string): Promise<TopicSupport[]> {
    return [...this.channel(channel).supports.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, support]) => copy(support));
  }

  async termCounts(
    channel: string,
    vocabulary: string,
    terms: readonly string[],
    segmentId: string,
  ): Promise<TermCounts> {
    termsHeadKey(vocabulary); // the same check of the name as the table's keys make
    const stats = this.channel(channel).terms.get(vocabulary);
    const own = ownContribution(stats?.log.get(segmentId) ?? []);
    const frequencies = new Map<string, number>();
    for (const term of new Set(terms)) {
      const others = (stats?.counts.get(term) ?? 0) - (own.terms.has(term) ? 1 : 0);
      if (others > 0) frequencies.set(term, others);
    }
    return { segments: Math.max(0, (stats?.segments ?? 0) - (own.counted ? 1 : 0)), frequencies };
  }

  async countTerms(channel: string, segmentId: string, terms: SegmentTerms): Promise<void> {
    termsHeadKey(terms.vocabulary);
    const all = this.channel(channel).terms;
    let stats = all.get(terms.vocabulary);
    if (stats === undefined) {
      stats = { segments: 0, counts: new Map(), log: new Map() };
      all.set(terms.vocabulary, stats);
    }
    const log = stats.log.get(segmentId) ?? [];
    for (const entry of chunksToCount(segmentId, log, terms.terms)) {
      if (entry.chunk === 0) stats.segments++;
      for (const term of entry.terms) stats.counts.set(term, (stats.counts.get(term) ?? 0) + 1);
      log.push(entry);
    }
    stats.log.set(segmentId, log);
  }

  /** What the channel's statistics of `vocabulary` hold (for tests and tools). */
  termStatistics(
    channel: string,
    vocabulary: string,
  ): { segments: number; counts: Map<string, number> } {
    const stats = this.channel(channel).terms.get(vocabulary);
    return { segments: stats?.segments ?? 0, counts: new Map(stats?.counts ?? []) };
  }
}

function copy<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}
