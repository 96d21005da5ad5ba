import { KnowledgeItemError, LeaseLostError, SegmentBusyError } from "../errors.js";
import {
  NO_CALLS,
  normalizeTopic,
  type QuestionStatus,
  type SegmentTerms,
  type TermCounts,
  type WindowOutput,
} from "../extraction/index.js";
import { correctionItemKey, type QuestionCorrection } from "./correction-item.js";
import { type Channel, copy, scanItems, ttlOf } from "./memory-items.js";
import type { Lease, QuestionPage, ResultStore } from "./port.js";
import {
  questionEntriesOf,
  questionIndexChange,
  questionItemKey,
  questionPrefix,
} from "./question-entry.js";
import type { RedactionPlan } from "./redaction-plan.js";
import {
  type QuestionEntry,
  type SegmentResult,
  type SegmentSpan,
  type SegmentUsage,
  SPAN_WIDTHS_KEY,
  spanItemKey,
  spanOf,
  sumUsage,
  supportItemKey,
  type TopicSupport,
  termItemKey,
  termLogKey,
  termsHeadKey,
} from "./schema/items.js";
import { chunksToCount, ownContribution } from "./term-store.js";

/**
 * The results table in memory, for tests and tools that run extraction without DynamoDB: the
 * same semantics as `DynamoDbResultStore` (conditional leases, supports written before the result,
 * a lost lease refused, term statistics counted once per segment), nothing kept across processes.
 * Every value it returns is a copy. `beforeWrite` hears of each item write before it is made,
 * as a DynamoDB request would be (tests make it throw to crash the process there).
 */
export class MemoryResultStore implements ResultStore {
  private readonly channels = new Map<string, Channel>();

  constructor(private readonly options: { beforeWrite?: (item: string) => void } = {}) {}

  private write(item: string): void {
    this.options.beforeWrite?.(item);
  }

  private channel(channel: string): Channel {
    let found = this.channels.get(channel);
    if (found === undefined) {
      found = {
        results: new Map(),
        leases: new Map(),
        windows: new Map(),
        spans: new Map(),
        supports: new Map(),
        questions: new Map(),
        corrections: new Map(),
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
    this.write(`lease#${segmentId}`);
    const until = lease.now + lease.leaseMs;
    const spent = held?.spent ?? { ...NO_CALLS };
    const windows = held?.windows ?? new Set<string>();
    const expiresAt = ttlOf(lease.expiresAt);
    leases.set(segmentId, { owner: lease.owner, until, spent, windows, expiresAt });
    return { owner: lease.owner, until, spent: { ...spent }, windows: [...windows] };
  }

  async releaseLease(
    channel: string,
    segmentId: string,
    owner: string,
    spent: SegmentUsage,
  ): Promise<void> {
    const leases = this.channel(channel).leases;
    this.write(`lease#${segmentId}`);
    const held = leases.get(segmentId) ?? { spent: { ...NO_CALLS }, windows: new Set<string>() };
    const released =
      held.owner === owner
        ? { spent: held.spent, windows: held.windows, expiresAt: held.expiresAt }
        : held;
    leases.set(segmentId, { ...released, spent: sumUsage(held.spent, spent) });
  }

  async getWindow(channel: string, hash: string): Promise<WindowOutput | undefined> {
    return copy(this.channel(channel).windows.get(hash)?.output);
  }

  async putWindow(
    channel: string,
    hash: string,
    output: WindowOutput,
    expiresAt: number,
    segmentId?: string,
  ): Promise<void> {
    const state = this.channel(channel);
    if (segmentId !== undefined) {
      this.write(`lease#${segmentId}`);
      const lease = state.leases.get(segmentId) ?? { spent: { ...NO_CALLS }, windows: new Set() };
      lease.windows.add(hash);
      state.leases.set(segmentId, lease);
    }
    this.write(`window#${hash}`);
    state.windows.set(hash, { output: copy(output), segmentId, expiresAt: ttlOf(expiresAt) });
  }

  /** The window replies stored for a channel, by hash, with the segment they were stored for. */
  listWindows(channel: string): Map<string, string | undefined> {
    return new Map([...this.channel(channel).windows].map(([hash, w]) => [hash, w.segmentId]));
  }

  async findSpans(channel: string, times: readonly number[]): Promise<SegmentSpan[]> {
    const { spans, widths } = this.channel(channel);
    const holds = (span: SegmentSpan) => times.some((t) => span.firstTs <= t && t <= span.lastTs);
    // What the table's range queries read: spans ending at most the widest span after a time.
    return [...spans.values()]
      .map(({ span }) => span)
      .filter((span) => {
        const width = (span.late ? widths?.late : widths?.onTime) ?? -1;
        return holds(span) && span.lastTs - span.firstTs <= width;
      })
      .map(copy);
  }

  async deleteWindows(channel: string, hashes: readonly string[]): Promise<void> {
    for (const hash of hashes) {
      this.write(`window#${hash}`);
      this.channel(channel).windows.delete(hash);
    }
  }

  async saveRedaction(previous: SegmentResult, plan: RedactionPlan): Promise<boolean> {
    const state = this.channel(previous.channel);
    const own = (key: string) => {
      const entry = state.supports.get(key);
      return (
        entry !== undefined &&
        (entry.extractedAt === undefined || entry.extractedAt === previous.extractedAt)
      );
    };
    for (const support of plan.supports) {
      const key = supportItemKey(support.normalizedTopic, previous.segmentId);
      this.write(key);
      if (own(key)) state.supports.set(key, copy(support));
    }
    for (const topic of plan.removedTopics) {
      const key = supportItemKey(topic, previous.segmentId);
      this.write(key);
      if (own(key)) state.supports.delete(key);
    }
    const unchanged = () => {
      const current = state.results.get(previous.segmentId);
      return (
        current?.extractedAt === previous.extractedAt && current.redactions === previous.redactions
      );
    };
    const change = questionIndexChange(
      questionEntriesOf(previous),
      plan.next ? questionEntriesOf(plan.next) : [],
    );
    if (change.put.length + change.deleted.length > 0) {
      // The table's transactions check the result first, as this does.
      if (!unchanged()) return false;
      this.applyQuestions(state, change.put, change.deleted);
    }
    this.write(`result#${previous.segmentId}`);
    if (!unchanged()) return false;
    if (plan.next === undefined) state.results.delete(previous.segmentId);
    else state.results.set(previous.segmentId, copy(plan.next));
    return true;
  }

  async saveResult(
    result: SegmentResult,
    supports: readonly TopicSupport[],
    previous: SegmentResult | undefined,
    owner: string,
  ): Promise<void> {
    const state = this.channel(result.channel);
    const keep = new Set<string>();
    const keys = supports.map((s) => supportItemKey(s.normalizedTopic, s.segmentId));
    // As the table refuses a batch that writes one key twice, before writing any of it.
    for (const key of keys) {
      if (keep.has(key)) throw new KnowledgeItemError(key, "written twice in one result");
      keep.add(key);
    }
    for (const [i, support] of supports.entries()) {
      const key = keys[i] as string;
      this.write(key);
      state.supports.set(key, copy(support));
    }
    for (const candidate of previous?.candidates ?? []) {
      const key = supportItemKey(normalizeTopic(candidate.topic), result.segmentId);
      if (!keep.has(key)) {
        this.write(key);
        state.supports.delete(key);
      }
    }
    const entries = questionEntriesOf(result);
    const { deleted } = questionIndexChange(previous ? questionEntriesOf(previous) : [], entries);
    this.applyQuestions(state, entries, deleted);
    const span = spanOf(result);
    this.write(spanItemKey(span));
    // Kept after the result, as the table's (redaction-store.ts spanPut).
    state.spans.set(spanItemKey(span), { span });
    this.write(SPAN_WIDTHS_KEY);
    const width = span.lastTs - span.firstTs;
    const kind = span.late ? "late" : "onTime";
    state.widths = { ...state.widths, [kind]: Math.max(width, state.widths?.[kind] ?? -1) };
    this.write(`result#${result.segmentId}`);
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

  async listQuestions(
    channel: string,
    options: { status?: QuestionStatus; limit: number; after?: string },
  ): Promise<QuestionPage> {
    const prefix = questionPrefix(options.status);
    const after = options.after;
    const keys = [...this.channel(channel).questions.keys()]
      .filter((key) => key.startsWith(prefix) && (after === undefined || key > after))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const page = keys.slice(0, options.limit);
    const entries = page.map((key) => copy(this.channel(channel).questions.get(key)));
    return {
      entries: entries.filter((entry) => entry !== undefined),
      next: keys.length > options.limit ? (page.at(-1) ?? null) : null,
    };
  }

  async listCorrections(channel: string): Promise<QuestionCorrection[]> {
    return [...this.channel(channel).corrections.values()].map(copy);
  }

  async saveCorrection(next?: QuestionCorrection, previous?: QuestionCorrection): Promise<boolean> {
    const target = next ?? previous;
    if (target === undefined) return true;
    const key = correctionItemKey(target);
    const corrections = this.channel(target.channel).corrections;
    const stored = corrections.get(key);
    if (previous && (stored?.at !== previous.at || stored.action !== previous.action)) return false;
    this.write(key);
    if (next === undefined) corrections.delete(key);
    else corrections.set(key, copy(next));
    return true;
  }

  private applyQuestions(
    state: Channel,
    put: readonly QuestionEntry[],
    deleted: readonly string[],
  ): void {
    for (const entry of put) {
      const key = questionItemKey(entry);
      this.write(key);
      state.questions.set(key, copy(entry));
    }
    for (const key of deleted) {
      this.write(key);
      state.questions.delete(key);
    }
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

  async withdrawTerms(channel: string, segmentId: string): Promise<number> {
    let withdrawn = 0;
    for (const [vocabulary, stats] of this.channel(channel).terms) {
      const log = stats.log.get(segmentId);
      if (log === undefined) continue;
      // Chunk by chunk, each at once, as the table's transactions take them out.
      while (log.length > 0) {
        const entry = log[0];
        this.write(termLogKey(vocabulary, segmentId, entry.chunk));
        if (entry.chunk === 0) stats.segments--;
        for (const term of entry.terms) {
          const was = stats.counts.get(term);
          // A term no item holds any more was removed already (a name erased).
          if (was === undefined) continue;
          if (was > 1) stats.counts.set(term, was - 1);
          else stats.counts.delete(term);
        }
        log.shift();
      }
      stats.log.delete(segmentId);
      withdrawn++;
    }
    return withdrawn;
  }

  async removeTerms(channel: string, matches: (term: string) => boolean): Promise<number> {
    let removed = 0;
    for (const [vocabulary, stats] of this.channel(channel).terms) {
      for (const [segmentId, log] of stats.log) {
        for (const entry of log) {
          if (!entry.terms.some(matches)) continue;
          this.write(termLogKey(vocabulary, segmentId, entry.chunk));
          entry.terms = entry.terms.filter((term) => !matches(term));
        }
      }
      for (const term of [...stats.counts.keys()].filter(matches)) {
        this.write(termItemKey(vocabulary, term));
        stats.counts.delete(term);
        removed++;
      }
    }
    return removed;
  }

  /**
   * Every item as the results table would hold it, keys included (for checks of what is kept,
   * as a Scan of the table makes them).
   */
  items(): Record<string, unknown>[] {
    return scanItems(this.channels);
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
