/**
 * The figures of a run's summary, gathered once it is over: each channel's counts, span, top
 * topics and questions, the extraction's totals, and what the workspace holds. run-summary.ts
 * says them.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { compareIds } from "convoseg/identity";
import { KnowledgeReader } from "convoseg/knowledge/read";
import type { SegmentResult } from "convoseg/knowledge/store";
import type { ChatMessage } from "convoseg/messages";
import type { SegmentMessageV1 } from "convoseg/pipeline/contract";
import type { LocalExtraction } from "../../local/extraction.js";
import type { Workspace } from "../../local/workspace.js";
import { readQuestions } from "../questions.js";
import type { RunExtractionOptions } from "./run-options.js";
import {
  type ChannelSummary,
  type ExtractionSummary,
  SUMMARY_CHANNELS,
  SUMMARY_TOPICS,
  type WorkspaceSummary,
} from "./run-summary.js";

/** What the workspace holds after the run: every segment it was delivered, and how many have a result. */
export async function workspaceSummary(
  workspace: Workspace,
  dynamodb: DynamoDBClient,
  resumed: number,
): Promise<WorkspaceSummary> {
  const reader = new KnowledgeReader({
    client: dynamodb,
    tableName: workspace.tables.resultsTable,
  });
  const entries = await workspace.ledger.entries();
  const left = await workspace.ledger.unextracted(reader);
  return {
    dir: workspace.dir,
    resumed,
    channels: new Set(entries.map((e) => e.channel)).size,
    segments: entries.length,
    extracted: entries.length - left.length,
  };
}

/** Each channel's counts, span and top topics, busiest (most segments, then name) first. */
export async function channelSummaries(
  messages: readonly ChatMessage[],
  delivered: readonly SegmentMessageV1[],
  reader: KnowledgeReader | undefined,
): Promise<ChannelSummary[]> {
  const byName = new Map<string, ChannelSummary>();
  for (const { channel, ts, channelName } of messages) {
    const known = byName.get(channel);
    if (known === undefined) {
      byName.set(channel, {
        name: channel,
        ...(channelName && channelName !== channel ? { displayName: channelName } : {}),
        messages: 1,
        segments: 0,
        first: ts,
        last: ts,
        topics: [],
      });
      continue;
    }
    known.messages++;
    known.first = Math.min(known.first, ts);
    known.last = Math.max(known.last, ts);
  }
  // In linked mode (segments name their conversation) a channel's conversations are its linked
  // ones and its threads, each a stream of its own however many segments it took.
  const linked = delivered.some((segment) => segment.conversation !== undefined);
  const streams = new Map<string, Set<string>>();
  for (const segment of delivered) {
    const known = byName.get(segment.channel);
    if (known === undefined) continue;
    known.segments++;
    if (!linked) continue;
    const stream =
      segment.thread !== undefined
        ? `thread ${segment.thread}`
        : segment.conversation !== undefined
          ? `conversation ${segment.conversation}`
          : undefined;
    if (stream === undefined) continue;
    const seen = streams.get(segment.channel) ?? new Set<string>();
    seen.add(stream);
    streams.set(segment.channel, seen);
  }
  if (linked) {
    for (const channel of byName.values()) {
      channel.conversations = streams.get(channel.name)?.size ?? 0;
    }
  }
  const channels = [...byName.values()].sort(
    (a, b) => b.segments - a.segments || compareIds(a.name, b.name),
  );
  if (reader !== undefined) {
    for (const channel of channels.slice(0, SUMMARY_CHANNELS)) {
      channel.topics = await reader.topics(channel.name, { limit: SUMMARY_TOPICS });
      const asked = await readQuestions(reader, channel.name, {});
      const unanswered = asked.filter((q) => q.status === "unanswered").length;
      const unclear = asked.filter((q) => q.status === "unclear").length;
      if (asked.length > 0) channel.questions = { total: asked.length, unanswered, unclear };
    }
  }
  return channels;
}

export function extractionSummary(
  extraction: LocalExtraction,
  options: RunExtractionOptions,
  results: readonly SegmentResult[],
  gaveUp: readonly SegmentMessageV1[],
): ExtractionSummary {
  const total = (field: "calls" | "inputTokens" | "outputTokens" | "cacheReadTokens") =>
    results.reduce((sum, r) => sum + r.usage[field], 0);
  const { route, windowSize, overlap } = options.analyzer;
  return {
    offline: options.extractor === "offline",
    model: options.modelId,
    route: `${route}${route === "sliding" ? ` ${windowSize}/${overlap}` : ""}`,
    extracted: results.length,
    givenUp: gaveUp.length,
    retried: extraction.metrics.get("ExtractionFailures") ?? 0,
    calls: total("calls"),
    inputTokens: total("inputTokens"),
    cacheReadTokens: total("cacheReadTokens"),
    outputTokens: total("outputTokens"),
  };
}
