/**
 * A result is held to what the results table stores (issue 20 §2): fields within bounds whatever
 * the extractor, the item within DynamoDB's 400 KB limit (degrading, never failing for ever), and
 * each candidate's evidence authors, so that one author's claim reads apart from a corroborated one.
 */

import { MAX_ITEM_BYTES } from "convoseg/dynamodb";
import { Analyzer, type Candidate, type Extractor } from "convoseg/extraction";
import type { SegmentResult } from "convoseg/knowledge/store";
import { MemoryResultStore } from "convoseg/knowledge/store";
import { SegmentExtractor } from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import { fitResult, resultItemSize } from "../../lib/knowledge/write/result-fit.js";
import { segmentOf } from "./fixtures.js";

const candidate = (topic: string, fields: Partial<Candidate> = {}): Candidate => ({
  topic,
  reason: `why ${topic}`,
  confidence: 0.9,
  tags: [],
  turnRange: null,
  subjective: false,
  ...fields,
});

/** An extractor that answers `candidates` for every segment. */
const answering = (candidates: Candidate[]): Extractor => ({
  extract: async () => ({ candidates }),
});

function extractorOf(extractor: Extractor) {
  const store = new MemoryResultStore();
  return {
    store,
    extractor: new SegmentExtractor({ store, extractor, model: "m", promptVersion: "2/test" }),
  };
}

describe("the result as stored", () => {
  it("holds any extractor's candidates to the field bounds, naming the cuts", async () => {
    const { segment, messages } = segmentOf("s1", ["a", "b"]);
    const { extractor, store } = extractorOf(
      answering([candidate("t".repeat(300_000), { reason: "r".repeat(5_000_000) })]),
    );
    await extractor.extract(segment, messages);
    const stored = (await store.getResult("help", "s1")) as SegmentResult;
    expect(stored.candidates[0].topic.length).toBeLessThanOrEqual(200);
    expect(stored.candidates[0].reason.length).toBeLessThanOrEqual(1000);
    expect(stored.trimmed).toEqual({ topics: 1, reasons: 1 });
    expect(resultItemSize(stored)).toBeLessThanOrEqual(MAX_ITEM_BYTES);
  });

  it("names in the result what the analyzer cut: a long message's text, a reply's fields", async () => {
    const { segment, messages } = segmentOf("s6", ["x".repeat(300_000), "short"]);
    const reply = {
      candidates: [
        {
          topic: "t".repeat(500),
          reason: "r",
          confidence: 0.9,
          tags: [],
          turn_range: [1, 2],
          subjective: false,
        },
      ],
    };
    const analyzer = new Analyzer({ chatJSON: async () => reply }, { route: "full" });
    const { extractor, store } = extractorOf(analyzer);
    await extractor.extract(segment, messages);
    const stored = (await store.getResult("help", "s6")) as SegmentResult;
    expect(stored.trimmed).toEqual({ turnTexts: 1, topics: 1 });
    expect(stored.candidates[0]).toMatchObject({ authorCount: 2, authors: ["alice", "bob"] });
  });

  it("stores the distinct authors of each candidate's evidence, system lines left out", async () => {
    const { segment, messages } = segmentOf("s2", ["a", "b", "c", "d", "e"]);
    messages[3] = { ...messages[3], author: "carol", kind: "system" };
    const { extractor, store } = extractorOf(
      answering([
        candidate("alone", { turnRange: [0, 0] }),
        // Turns as the extractor was shown them: the system line is not one of them.
        candidate("agreed", { turnRange: [0, 3] }),
        candidate("unplaced"),
      ]),
    );
    await extractor.extract(segment, messages);
    const [alone, agreed, unplaced] = ((await store.getResult("help", "s2")) as SegmentResult)
      .candidates;
    expect(alone).toMatchObject({ authorCount: 1, authors: ["alice"] });
    expect(agreed).toMatchObject({ authorCount: 2, authors: ["alice", "bob"] });
    expect(unplaced).not.toHaveProperty("authorCount");
    expect(unplaced).not.toHaveProperty("authors");
  });

  it("names at most 20 authors, counting them all", async () => {
    const texts = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    const { segment, messages } = segmentOf("s3", texts);
    const many = messages.map((m, i) => ({ ...m, author: `nick${i}` }));
    const { extractor, store } = extractorOf(answering([candidate("all", { turnRange: [0, 29] })]));
    await extractor.extract(segment, many);
    const [all] = ((await store.getResult("help", "s3")) as SegmentResult).candidates;
    expect(all.authorCount).toBe(30);
    expect(all.authors).toEqual(many.slice(0, 20).map((m) => m.author));
  });

  it("leaves out the message ids, then the least confident candidates, to fit the item", async () => {
    // 450 messages with ids of 1,000 bytes: the ids alone are over 400 KB.
    const texts = Array.from({ length: 450 }, (_, i) => `line ${i}`);
    const { segment, messages } = segmentOf("s4", texts);
    const long = messages.map((m, i) => ({
      ...m,
      id: `${String(i).padStart(4, "0")}${"x".repeat(996)}`,
    }));
    const { extractor, store } = extractorOf(answering([candidate("kept", { turnRange: [0, 1] })]));
    const outcome = await extractor.extract(
      { ...segment, first: { id: long[0].id, ts: long[0].ts } },
      long,
    );
    expect(outcome.status).toBe("extracted");
    const stored = (await store.getResult("help", "s4")) as SegmentResult;
    expect(stored).not.toHaveProperty("messageIds");
    expect(stored.trimmed).toEqual({ messageIds: 450 });
    expect(stored.candidates.map((c) => c.topic)).toEqual(["kept"]);
    expect(resultItemSize(stored)).toBeLessThanOrEqual(MAX_ITEM_BYTES);
  });

  it("drops the least confident candidates first, keeping the others' order", () => {
    const { segment } = segmentOf("s5", ["a"]);
    const result: SegmentResult = {
      v: 1,
      ...segment,
      messageIds: [segment.first.id],
      model: "m",
      promptVersion: "2/test",
      extractedAt: "2026-01-01T00:00:00.000Z",
      usage: { calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      candidates: [0.5, 0.9, 0.4, 0.8].map((confidence, i) => ({
        id: `c${i}`,
        topic: `t${i}`,
        reason: "r".repeat(1000),
        confidence,
        tags: [],
        subjective: false,
        turnRange: null,
        messageIds: null,
      })),
    };
    const whole = resultItemSize(result);
    expect(fitResult(result, {})).toEqual(result);
    const fitted = fitResult(result, { topics: 1 }, whole - 1500);
    expect(fitted.candidates.map((c) => c.topic)).toEqual(["t1", "t3"]);
    expect(fitted.trimmed).toEqual({ topics: 1, messageIds: 1, oversizeCandidates: 2 });
    expect(resultItemSize(fitted)).toBeLessThanOrEqual(whole - 1500);
  });
});
