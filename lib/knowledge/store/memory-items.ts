/**
 * The memory results store's state, and its items as the results table would hold them (keys
 * and TTLs included, as a Scan reads them), for the checks of what each kind keeps.
 */

import type { WindowOutput } from "../extraction/index.js";
import { correctionItemKey, type QuestionCorrection } from "./correction-item.js";
import {
  leaseItemKey,
  type QuestionEntry,
  resultItemKey,
  type SegmentResult,
  type SegmentSpan,
  type SegmentUsage,
  SPAN_WIDTHS_KEY,
  type SpanWidths,
  type TermLogEntry,
  type TopicSupport,
  termItemKey,
  termLogKey,
  termsHeadKey,
  windowItemKey,
} from "./schema/items.js";
import { RESULTS_TTL_ATTRIBUTE } from "./schema/table.js";

/** Epoch seconds, as DynamoDB's TTL reads `expiresAt`: what the table's items carry. */
export const ttlOf = (epochMs: number) => Math.ceil(epochMs / 1000);

/** One channel's items in the memory store. */
export interface Channel {
  results: Map<string, SegmentResult>;
  leases: Map<
    string,
    {
      owner?: string;
      until?: number;
      spent: SegmentUsage;
      windows: Set<string>;
      /** Epoch seconds (set by a lease), as the table's TTL attribute holds it. */
      expiresAt?: number;
    }
  >;
  windows: Map<string, { output: WindowOutput; segmentId?: string; expiresAt: number }>;
  /** By span item key: kept past their results. */
  spans: Map<string, { span: SegmentSpan }>;
  widths?: Partial<SpanWidths>;
  /** By support item key, so that topics group as the table's sort order groups them. */
  supports: Map<string, TopicSupport>;
  /** By question entry key. */
  questions: Map<string, QuestionEntry>;
  /** By correction item key. */
  corrections: Map<string, QuestionCorrection>;
  /** Per vocabulary: segments counted, segments per term, and each segment's log. */
  terms: Map<
    string,
    { segments: number; counts: Map<string, number>; log: Map<string, TermLogEntry[]> }
  >;
}

/** Every item of the channels, keys included. */
export function scanItems(channels: ReadonlyMap<string, Channel>): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (const [channel, state] of channels) {
    const put = (item: string, fields: object) =>
      items.push({ channel, item, v: 1, ...copy(fields) });
    for (const [segmentId, result] of state.results) put(resultItemKey(segmentId), result);
    for (const [segmentId, lease] of state.leases) {
      const { expiresAt, ...held } = lease;
      put(leaseItemKey(segmentId), {
        ...held,
        windows: [...lease.windows],
        ...expiry(expiresAt),
      });
    }
    for (const [hash, { output, segmentId, expiresAt }] of state.windows) {
      put(windowItemKey(hash), {
        ...output,
        ...(segmentId === undefined ? {} : { segmentId }),
        ...expiry(expiresAt),
      });
    }
    for (const [key, { span }] of state.spans) put(key, { ...span });
    if (state.widths !== undefined) {
      put(SPAN_WIDTHS_KEY, { ...state.widths });
    }
    for (const [key, support] of state.supports) put(key, support);
    for (const [key, entry] of state.questions) put(key, entry);
    for (const correction of state.corrections.values()) {
      put(correctionItemKey(correction), correction);
    }
    for (const [vocabulary, stats] of state.terms) {
      put(termsHeadKey(vocabulary), { segments: stats.segments });
      for (const [term, segments] of stats.counts) {
        put(termItemKey(vocabulary, term), { term, segments });
      }
      for (const [segmentId, log] of stats.log) {
        for (const entry of log) put(termLogKey(vocabulary, segmentId, entry.chunk), entry);
      }
    }
  }
  return items;
}

/** An item's TTL attribute, absent when it has none. */
const expiry = (expiresAt: number | undefined) =>
  expiresAt === undefined ? {} : { [RESULTS_TTL_ATTRIBUTE]: expiresAt };

export function copy<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}
