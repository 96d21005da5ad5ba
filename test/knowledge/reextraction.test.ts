/**
 * What a re-extraction request sends: the stored segment by reference, flagged, with FIFO ids
 * that never collide with the segment's original delivery and repeat for a repeated request; and
 * that a request naming the result it replaces re-extracts only while that result is stored.
 */
import type { SendMessageCommand } from "@aws-sdk/client-sqs";
import { Analyzer } from "convoseg/extraction";
import { MemoryResultStore, type SegmentResult } from "convoseg/knowledge/store";
import {
  promptVersionOf,
  queueReextraction,
  reextractionMessage,
  SegmentExtractor,
  storedSegmentBody,
} from "convoseg/knowledge/write";
import { fifoId, parseSegmentBody } from "convoseg/pipeline/contract";
import { describe, expect, it } from "vitest";
import {
  REEXTRACT_ATTRIBUTE,
  REEXTRACT_REPLACING_ATTRIBUTE,
} from "../../lib/knowledge/write/consumer.js";
import { ANALYSIS } from "./fixtures.js";
import { extractorFor, NOW, segmentAt, topicModel } from "./redaction.js";

const FIFO = "http://sqs.local/000000000000/segments.fifo";
const STANDARD = "http://sqs.local/000000000000/segments";

async function storedResult(): Promise<SegmentResult> {
  const store = new MemoryResultStore();
  const { segment, messages } = segmentAt("ops room", "s1", ["grub boot", "grub boot ok"], NOW);
  return (await extractorFor(store).extract(segment, messages)).result;
}

function sender() {
  const sent: SendMessageCommand["input"][] = [];
  return {
    sent,
    sqs: { send: async (command: SendMessageCommand) => void sent.push(command.input) },
  };
}

describe("storedSegmentBody", () => {
  it("is the result's segment by reference to the messages table, as the consumer parses it", async () => {
    const result = await storedResult();
    const body = storedSegmentBody(result, "messages");
    expect(body).toEqual({
      v: 1,
      segmentId: "s1",
      channel: "ops room",
      late: false,
      belongsAfter: null,
      count: 2,
      first: result.first,
      last: result.last,
      messageIds: ["s1-m0", "s1-m1"],
      reference: { table: "messages" },
    });
    expect(parseSegmentBody(JSON.stringify(body))).toEqual(body);
  });

  it("is undefined for a result stored without its message ids", async () => {
    const { messageIds: _, ...unlisted } = await storedResult();
    expect(storedSegmentBody(unlisted, "messages")).toBeUndefined();
  });
});

describe("reextractionMessage", () => {
  it("flags the message and groups it by channel, deduplicated apart from the delivery", async () => {
    const body = storedSegmentBody(await storedResult(), "messages");
    if (body === undefined) throw new Error("no body");
    const input = reextractionMessage(FIFO, body, { requestKey: "k1", replacing: "then" });
    expect(input.MessageAttributes).toEqual({
      [REEXTRACT_ATTRIBUTE]: { DataType: "String", StringValue: "true" },
      [REEXTRACT_REPLACING_ATTRIBUTE]: { DataType: "String", StringValue: "then" },
    });
    // The tick's delivery of the segment: group by channel, dedup by segment id.
    expect(input.MessageGroupId).toBe(fifoId("ops room"));
    expect(input.MessageDeduplicationId).not.toBe(fifoId("s1"));
    expect(input.MessageDeduplicationId).toMatch(/^[!-~]{1,128}$/);
    expect(reextractionMessage(FIFO, body, { requestKey: "k1" }).MessageDeduplicationId).toBe(
      input.MessageDeduplicationId,
    );
    expect(reextractionMessage(FIFO, body, { requestKey: "k2" }).MessageDeduplicationId).not.toBe(
      input.MessageDeduplicationId,
    );
    expect(parseSegmentBody(input.MessageBody as string)).toEqual(body);
  });

  it("sets no FIFO ids on a standard queue, and no replacing attribute unless asked", async () => {
    const body = storedSegmentBody(await storedResult(), "messages");
    if (body === undefined) throw new Error("no body");
    const input = reextractionMessage(STANDARD, body, { requestKey: "k" });
    expect(input.MessageGroupId).toBeUndefined();
    expect(input.MessageDeduplicationId).toBeUndefined();
    expect(Object.keys(input.MessageAttributes ?? {})).toEqual([REEXTRACT_ATTRIBUTE]);
  });
});

describe("queueReextraction", () => {
  it("sends the same request for the same extraction, and names the result it replaces", async () => {
    const result = await storedResult();
    const { sent, sqs } = sender();
    const request = queueReextraction(sqs, FIFO, "messages");
    await request("ops room", "s1", result);
    await request("ops room", "s1", { ...result, redactions: 3 });
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual(sent[0]);
    expect(sent[0].MessageAttributes?.[REEXTRACT_REPLACING_ATTRIBUTE]?.StringValue).toBe(
      result.extractedAt,
    );
    await request("ops room", "s1", { ...result, extractedAt: "2026-07-02T00:00:00.000Z" });
    expect(sent[2].MessageDeduplicationId).not.toBe(sent[0].MessageDeduplicationId);
  });

  it("refuses a result without its message ids, naming the segment", async () => {
    const { messageIds: _, ...unlisted } = await storedResult();
    const { sent, sqs } = sender();
    await expect(
      queueReextraction(sqs, FIFO, "messages")("ops room", "s1", unlisted),
    ).rejects.toMatchObject({ code: "KNOWLEDGE_REEXTRACTION_UNLISTED", message: /segment s1/ });
    expect(sent).toEqual([]);
  });
});

describe("a forced extraction replacing a named result", () => {
  it("re-extracts while that result is stored, and keeps the one that replaced it", async () => {
    const store = new MemoryResultStore();
    const { segment, messages } = segmentAt("c", "s1", ["grub boot", "grub boot ok"], NOW);
    let clock = NOW;
    const extractor = new SegmentExtractor({
      store,
      extractor: new Analyzer(topicModel, { ...ANALYSIS, maxConcurrency: 1 }),
      model: "m",
      promptVersion: promptVersionOf(ANALYSIS),
      now: () => clock,
    });
    const first = (await extractor.extract(segment, messages)).result;
    clock += 60_000;
    const again = await extractor.extract(segment, messages, {
      force: true,
      replacing: first.extractedAt,
    });
    expect(again.status).not.toBe("already-extracted");
    clock += 60_000;
    const twice = await extractor.extract(segment, messages, {
      force: true,
      replacing: first.extractedAt,
    });
    expect(twice.status).toBe("already-extracted");
    expect(twice.result.extractedAt).toBe(again.result.extractedAt);
  });
});
