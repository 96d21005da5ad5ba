import { EXTRACT_DEFAULTS } from "../config/config.js";
import { KnowledgeConfigError, KnowledgeError } from "../errors.js";
import { KIND_COUNTS, KINDS, type RedactionCountName, type RedactionPath } from "../kinds.js";
import type { MessageChange, MessageStates } from "../store/message-states.js";
import type { ResultStore } from "../store/port.js";
import {
  NO_REDACTION,
  neededIds,
  planRedaction,
  type RedactionCounts,
  type RedactionPlan,
} from "../store/redaction-plan.js";
import type { SegmentResult } from "../store/schema/items.js";
import { redactCorrections } from "./correction-follow.js";

/**
 * Redaction's metrics (EMF names, as `ExtractionMetrics`'): counts only, one per count the
 * registry's kinds report (`lib/knowledge/kinds.ts`), and the changes redacted.
 */
export type RedactionMetricName = "MessageChangesRedacted" | MetricOf<RedactionCountName>;

type MetricOf<N> = N extends RedactionCountName
  ? Extract<(typeof KINDS)[number]["counts"], Record<N, unknown>>[N] extends { metric: infer M }
    ? M
    : never
  : never;

/** Every redaction metric: the changes redacted, then each kind's counts in registry order. */
export const REDACTION_METRICS: readonly RedactionMetricName[] = [
  "MessageChangesRedacted",
  ...[...KIND_COUNTS.values()].flatMap((count) =>
    count.metric === null ? [] : [count.metric as RedactionMetricName],
  ),
];

export interface RedactionMetrics {
  add(name: RedactionMetricName, value: number): void;
}

/** The default {@link KnowledgeRedactorOptions.reextractChangedShare}: the deployment's. */
const DEFAULT_REEXTRACT_CHANGED_SHARE = Number(EXTRACT_DEFAULTS.REEXTRACT_CHANGED_SHARE);

/**
 * Sends a segment to be extracted again (`convoseg-reextract`): `result` is its redacted result,
 * the segment to send (`queueReextraction` sends it by reference to the messages table).
 */
export type RequestReextraction = (
  channel: string,
  segmentId: string,
  result: SegmentResult,
) => Promise<void>;

/** The store's reads and writes a redaction makes. */
type RedactionStore = Pick<
  ResultStore,
  | "getResult"
  | "findSpans"
  | "deleteWindows"
  | "saveRedaction"
  | "withdrawTerms"
  | "listCorrections"
  | "saveCorrection"
>;

/** The paths made elsewhere: the result plan written last, corrections per channel, indexes told. */
const NOT_SEGMENT_STEPS = ["result plan", "corrections follow", "index rewritten"] as const;

/**
 * The writes of each redaction path but those: made before the result is written (which a
 * retry redoes them before), each counting what it did.
 */
const SEGMENT_STEPS: Record<
  Exclude<RedactionPath, (typeof NOT_SEGMENT_STEPS)[number]>,
  (
    store: RedactionStore,
    channel: string,
    segmentId: string,
    plan: RedactionPlan,
  ) => Promise<Partial<RedactionCounts>>
> = {
  "replies deleted": async (store, channel, _segmentId, plan) => {
    await store.deleteWindows(channel, plan.windows);
    return { windowsDeleted: plan.windows.length };
  },
  "terms withdrawn": async (store, channel, segmentId) => ({
    termSegmentsWithdrawn: await store.withdrawTerms(channel, segmentId),
  }),
  "nothing to redact": async () => ({}),
};

/**
 * The registry's redaction paths, each once, the result plan's (written last), the corrections'
 * (per channel, once the segments are redacted) and the derived indexes' (`onRedacted`, told
 * after the result's write) left out.
 */
const STEPS = [...new Set(KINDS.map((kind) => kind.redact))].flatMap((path) =>
  (NOT_SEGMENT_STEPS as readonly RedactionPath[]).includes(path)
    ? []
    : [SEGMENT_STEPS[path as keyof typeof SEGMENT_STEPS]],
);

export interface KnowledgeRedactorOptions {
  store: RedactionStore;
  states: MessageStates;
  /**
   * Re-extract a segment once more than this share of its messages was edited or deleted since
   * its extraction: 0 on every change, 1 never (default {@link DEFAULT_REEXTRACT_CHANGED_SHARE}).
   */
  reextractChangedShare?: number;
  /** Sends the segment to be extracted again; without it, none is. */
  requestReextraction?: RequestReextraction;
  metrics?: RedactionMetrics;
  /**
   * Told each segment redacted, with its result as it now stands (undefined: removed or expired)
   * and the ids deleted: the search index's writer. After the result's write, so that a retry
   * after a failure here redacts nothing again and tells it again.
   */
  onRedacted?: (
    channel: string,
    segmentId: string,
    result: SegmentResult | undefined,
    deleted: readonly string[],
  ) => Promise<void>;
}

/** Tries of one segment's redaction when other writes keep coming first. */
const MAX_TRIES = 5;

/**
 * Makes the results table follow edits and deletions the message store applied after delivery:
 * finds the segments that hold each changed message by its span (reads that grow with the
 * changes, not the channel), and per segment redacts every kind of the registry its way
 * (`lib/knowledge/kinds.ts`): removes candidates whose evidence was only deleted messages, drops
 * deleted ids from the rest and from the topic index, recounts their authors, deletes the
 * segment's window replies (they may quote the text) and withdraws its terms from the channel's
 * statistics (they hold its words). Idempotent, and a retry
 * after a crash between any two writes ends in the same state: every write is planned from the
 * stored result and applied before the result itself, which is written last.
 */
export class KnowledgeRedactor {
  private readonly share: number;

  constructor(private readonly options: KnowledgeRedactorOptions) {
    const share = options.reextractChangedShare ?? DEFAULT_REEXTRACT_CHANGED_SHARE;
    if (!Number.isFinite(share) || share < 0 || share > 1) {
      throw new KnowledgeConfigError([
        {
          setting: "reextractChangedShare",
          problem: `must be a number from 0 (re-extract on every change) to 1 (never) (got ${JSON.stringify(share)})`,
        },
      ]);
    }
    this.share = share;
  }

  /** Redacts what the changes of one channel touch: what ingestion calls after applying them. */
  async redact(channel: string, changes: readonly MessageChange[]): Promise<RedactionCounts> {
    const spans = await this.options.store.findSpans(
      channel,
      changes.map((c) => c.ts),
    );
    const total = { ...NO_REDACTION };
    for (const span of spans) {
      const held = changes.filter((c) => span.firstTs <= c.ts && c.ts <= span.lastTs);
      add(total, await this.redactSegment(channel, span.segmentId, held));
    }
    // A correction's messages may lie in any segment, or in none yet: the channel's are read.
    const deleted = changes.filter((c) => c.kind === "delete").map((c) => c.id);
    await redactCorrections(this.options.store, channel, deleted);
    this.options.metrics?.add("MessageChangesRedacted", changes.length);
    return total;
  }

  /** Redacts one segment's result for changes of its messages (the consumer's own check). */
  async redactSegment(
    channel: string,
    segmentId: string,
    changes: readonly MessageChange[],
  ): Promise<RedactionCounts> {
    const { store, states } = this.options;
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const result = await store.getResult(channel, segmentId);
      // Expired (or never saved): what it counted into the kept term statistics still goes.
      if (result === undefined) {
        const withdrawn = await store.withdrawTerms(channel, segmentId);
        const deleted = changes.filter((c) => c.kind === "delete").map((c) => c.id);
        await this.options.onRedacted?.(channel, segmentId, undefined, deleted);
        return { ...NO_REDACTION, termSegmentsWithdrawn: withdrawn };
      }
      const known = await states.states(
        channel,
        changes.map((c) => c.id),
        { consistent: true },
      );
      const deleted = new Set(
        changes.filter((c) => c.kind === "delete" || known.get(c.id)?.deleted).map((c) => c.id),
      );
      const more = neededIds(result, deleted).filter((id) => !known.has(id));
      if (more.length > 0) {
        for (const [id, state] of await states.states(channel, more, { consistent: true })) {
          known.set(id, state);
        }
      }
      // Without a way to ask, no re-extraction is pending.
      const share = this.options.requestReextraction === undefined ? 1 : this.share;
      const plan = planRedaction(result, changes, known, share);
      let counts = { ...NO_REDACTION };
      let redacted: SegmentResult | undefined = result;
      if (plan !== undefined) {
        for (const step of STEPS) {
          counts = { ...counts, ...(await step(store, channel, segmentId, plan)) };
        }
        if (!(await store.saveRedaction(result, plan))) continue;
        counts = {
          ...counts,
          results: 1,
          candidatesRemoved: plan.removedTopics.length,
          // A removed result (`next` undefined) takes all its questions with it.
          questionsRemoved: (result.questions?.length ?? 0) - (plan.next?.questions?.length ?? 0),
          topicEntriesUpdated: plan.supports.length,
          topicEntriesDeleted: plan.removedTopics.length,
        };
        redacted = plan.next;
      }
      // Asked for after the write, so that the segment sent is the redacted one; a crash
      // before the flag is cleared asks again on the retry.
      if (redacted?.reextractPending) {
        await this.options.requestReextraction?.(channel, segmentId, redacted);
        const { reextractPending: _, ...sent } = redacted;
        await store.saveRedaction(redacted, {
          next: { ...sent, redactions: (redacted.redactions ?? 0) + 1 },
          supports: [],
          removedTopics: [],
          windows: [],
        });
        counts.reextractionsRequested = 1;
      }
      await this.options.onRedacted?.(channel, segmentId, redacted, [...deleted]);
      this.report(counts);
      return counts;
    }
    throw new KnowledgeError(
      "KNOWLEDGE_REDACTION_CONFLICT",
      `segment ${segmentId}: its result kept changing during ${MAX_TRIES} tries to redact it; retry the redaction`,
    );
  }

  private report(counts: RedactionCounts): void {
    const { metrics } = this.options;
    if (metrics === undefined) return;
    for (const [name, count] of KIND_COUNTS) {
      if (count.metric !== null) {
        metrics.add(count.metric as RedactionMetricName, counts[name as RedactionCountName]);
      }
    }
  }
}

function add(total: RedactionCounts, counts: RedactionCounts): void {
  for (const key of Object.keys(total) as (keyof RedactionCounts)[]) total[key] += counts[key];
}
