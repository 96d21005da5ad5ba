/**
 * What the segment consumer reports: its metric names and ports, and the metrics and log message
 * of one outcome (counts and ids only, never message text).
 */

import type { ResultTrimmed } from "../store/schema/items.js";
import type { ExtractionOutcome } from "./extract-segment.js";
import type { RedactionMetricName } from "./redact.js";

/** The metrics the consumer and its redactions report (EMF; see docs/extraction.md). */
export type ExtractionMetricName =
  | RedactionMetricName
  | "SegmentsExtracted"
  | "SegmentsAlreadyExtracted"
  | "ResultsReplaced"
  | "LLMCalls"
  | "InputTokens"
  | "OutputTokens"
  | "CacheReadTokens"
  | "CacheWriteTokens"
  | "InvalidModelOutputs"
  | "RepairRetries"
  | "CandidatesPerSegment"
  | "WindowLatency"
  | "WindowsReused"
  | "ExtractionFailures"
  | "SegmentWaits"
  | "BudgetPauses"
  | "CircuitOpen"
  | "AuthFailures"
  | "PermanentFailures"
  | "SegmentsDeadLettered"
  | "SegmentsAllDeleted"
  | "ChangesAfterExtraction"
  | TrimmedMetricName;

/** What the bounds cut from a stored result, by kind: `TrimmedTopics`, `TrimmedMessageIds`, … */
type TrimmedMetricName = `Trimmed${Capitalize<keyof ResultTrimmed>}`;

export interface ExtractionMetrics {
  add(name: ExtractionMetricName, value: number): void;
}

/** Structured logs: ids and counts only, never message text. */
export interface ExtractionLogger {
  info(message: string, attributes: Record<string, unknown>): void;
  warn(message: string, attributes: Record<string, unknown>): void;
  error(message: string, attributes: Record<string, unknown>): void;
}

export function reportOutcome(outcome: ExtractionOutcome, metrics: ExtractionMetrics): void {
  if (outcome.status === "already-extracted") {
    metrics.add("SegmentsAlreadyExtracted", 1);
    return;
  }
  metrics.add("SegmentsExtracted", 1);
  if (outcome.status === "replaced") metrics.add("ResultsReplaced", 1);
  metrics.add("WindowsReused", outcome.reusedWindows);
  metrics.add("CandidatesPerSegment", outcome.result.candidates.length);
  for (const [kind, count] of Object.entries(outcome.result.trimmed ?? {})) {
    metrics.add(trimmedMetric(kind as keyof ResultTrimmed), count as number);
  }
}

const trimmedMetric = (kind: keyof ResultTrimmed): TrimmedMetricName =>
  `Trimmed${kind[0].toUpperCase()}${kind.slice(1)}` as TrimmedMetricName;

export function outcomeMessage(outcome: ExtractionOutcome): string {
  if (outcome.status === "already-extracted") return "segment already extracted; acknowledged";
  if (outcome.status === "replaced") {
    const { model, promptVersion } = outcome.result.replaced ?? { model: "?", promptVersion: "?" };
    return `segment re-extracted: replaced the result of ${model} / prompt ${promptVersion}`;
  }
  return "segment extracted";
}
