/**
 * What the bounds cut from a stored result is counted in the consumer's metrics and its log line,
 * by kind (issue 20 §2): an operator sees that replies or chats are being cut, never the text.
 */

import type { Candidate, Extractor } from "convoseg/extraction";
import { MemoryResultStore } from "convoseg/knowledge/store";
import {
  type ExtractionMetricName,
  SegmentExtractor,
  segmentConsumer,
} from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import { sqsEvent } from "../support/sqs.js";
import { segmentOf } from "./fixtures.js";

const SECRET = "do-not-log";

const candidate = (topic: string, fields: Partial<Candidate> = {}): Candidate => ({
  topic,
  reason: `why ${topic}`,
  confidence: 0.9,
  tags: [],
  turnRange: null,
  subjective: false,
  ...fields,
});

/** The consumer on the memory store with `extractor`, its metrics summed and its logs kept. */
function consumer(extractor: Extractor) {
  const store = new MemoryResultStore();
  const metrics = new Map<ExtractionMetricName, number>();
  const logs: { message: string; attributes: Record<string, unknown> }[] = [];
  const log = (message: string, attributes: Record<string, unknown>) =>
    logs.push({ message, attributes });
  const handler = segmentConsumer({
    extractor: new SegmentExtractor({ store, extractor, model: "m", promptVersion: "2/test" }),
    messages: { getMessages: async () => [] },
    messagesTable: "messages",
    metrics: { add: (name, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
    logger: { info: log, warn: log, error: log },
  });
  return { handler, store, metrics, logs };
}

const body = (segmentId: string, texts: string[]) => {
  const { segment, messages } = segmentOf(segmentId, texts);
  return JSON.stringify({ v: 1, ...segment, messageIds: messages.map((m) => m.id), messages });
};

describe("the trimmed counts of a stored result", () => {
  it("are a metric per kind and part of the log line, without the text that was cut", async () => {
    const { handler, store, metrics, logs } = consumer({
      extract: async () => ({
        candidates: [
          candidate(SECRET.repeat(100), {
            tags: Array.from({ length: 8 }, (_, i) => `${SECRET}-${i}`),
          }),
        ],
        // What the analyzer cut before the prompt and from the reply.
        trimmed: { turnTexts: 2, candidates: 3 },
      }),
    });

    const response = await handler(sqsEvent([body("s1", ["a", "b"])]));

    expect(response.batchItemFailures).toEqual([]);
    const stored = await store.getResult("help", "s1");
    // The topic's cut, its reason's (which quotes it) and the tags past 5.
    expect(stored?.trimmed).toEqual({
      turnTexts: 2,
      candidates: 3,
      topics: 1,
      reasons: 1,
      tags: 3,
    });
    expect([...metrics].filter(([name]) => name.startsWith("Trimmed")).sort()).toEqual([
      ["TrimmedCandidates", 3],
      ["TrimmedReasons", 1],
      ["TrimmedTags", 3],
      ["TrimmedTopics", 1],
      ["TrimmedTurnTexts", 2],
    ]);
    const line = logs.find((l) => l.message === "segment extracted");
    expect(line?.attributes.trimmed).toEqual(stored?.trimmed);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
  });

  it("count what fitting the item cut: the message ids and the candidates over its size", async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `m${i}`);
    const { handler, store, metrics } = consumer({
      extract: async () => ({
        candidates: Array.from({ length: 1000 }, (_, i) =>
          candidate(`topic ${i}`, { reason: "r".repeat(900), confidence: i / 1000 }),
        ),
      }),
    });

    await handler(sqsEvent([body("big", texts)]));

    const stored = await store.getResult("help", "big");
    expect(stored?.trimmed?.messageIds).toBe(10);
    expect(stored?.trimmed?.oversizeCandidates).toBeGreaterThan(0);
    expect(metrics.get("TrimmedMessageIds")).toBe(10);
    expect(metrics.get("TrimmedOversizeCandidates")).toBe(stored?.trimmed?.oversizeCandidates);
  });

  it("are not counted again when a redelivery finds the result stored", async () => {
    const { handler, metrics } = consumer({
      extract: async () => ({ candidates: [], trimmed: { turnTexts: 1 } }),
    });

    await handler(sqsEvent([body("s1", ["a"])]));
    await handler(sqsEvent([body("s1", ["a"])]));

    expect(metrics.get("SegmentsAlreadyExtracted")).toBe(1);
    expect(metrics.get("TrimmedTurnTexts")).toBe(1);
  });
});
