/**
 * Delivery holds a bounded amount of message text: messages are fetched a batch at a time, and a
 * segment that will not fit inline stops holding text and goes by reference. Messages no longer
 * stored are left out and reported.
 */

import { type Message, textMessage } from "convoseg/history";
import { deliverSegments, type PlannedSegment, type SegmentDelivery } from "convoseg/pipeline";
import { parseSegmentBody } from "convoseg/pipeline/contract";
import { describe, expect, it } from "vitest";
import { FETCH_BATCH } from "../../../lib/segmentation/pipeline/delivery.js";

const T0 = 1_700_000_000_000;

function segment(prefix: string, count: number): PlannedSegment {
  return {
    segmentId: `${prefix}-id`,
    channel: "c",
    messages: Array.from({ length: count }, (_, i) => ({ id: `${prefix}${i}`, ts: T0 + i })),
    late: false,
    belongsAfter: null,
  };
}

/** A store of `text(id)` messages that records each fetch and how much text it handed out. */
function store(text: (id: string) => string | undefined) {
  const fetches: string[][] = [];
  return {
    fetches,
    fetch: async (ids: readonly string[]): Promise<Message[]> => {
      fetches.push([...ids]);
      return ids.flatMap((id, i) => {
        const body = text(id);
        return body === undefined ? [] : [textMessage("user", body, { id, ts: T0 + i })];
      });
    },
  };
}

const options = { maxBodyBytes: 64 * 1024, tableName: "messages" };

describe("deliverSegments", () => {
  it("fetches a batch at a time and sends a segment too large to be inline by reference", async () => {
    const big = store(() => "x".repeat(10 * 1024));
    const sent: SegmentDelivery[] = [];
    const report = await deliverSegments(
      [segment("a", 100)],
      big.fetch,
      async (entries) => void sent.push(...entries),
      options,
    );
    expect(big.fetches.every((ids) => ids.length <= FETCH_BATCH)).toBe(true);
    expect(big.fetches.flat()).toHaveLength(100);
    expect(report.missing).toEqual([]);
    const body = parseSegmentBody(sent[0].body);
    expect(body.reference).toEqual({ table: "messages" });
    expect(body.messageIds).toHaveLength(100);
    expect(Buffer.byteLength(sent[0].body)).toBeLessThan(options.maxBodyBytes);
  });

  it("keeps small segments inline, in order, and leaves out what is no longer stored", async () => {
    const small = store((id) =>
      id === "b1" || id.startsWith("gone") ? undefined : `text of ${id}`,
    );
    const sent: SegmentDelivery[] = [];
    const report = await deliverSegments(
      [segment("b", 3), segment("gone", 2), segment("d", 2)],
      small.fetch,
      async (entries) => void sent.push(...entries),
      options,
    );
    expect(report.missing).toEqual(["b1", "gone0", "gone1"]);
    expect(sent.map((e) => parseSegmentBody(e.body).messages?.map((m) => m.text))).toEqual([
      ["text of b0", "text of b2"],
      ["text of d0", "text of d1"],
    ]);
    expect(report.sent.map((s) => s.messages.length)).toEqual([2, 2]);
  });

  it("puts a segment inline exactly when its body fits", async () => {
    const exact = store(() => "y".repeat(1000));
    const inline = await new Promise<string>((resolve) => {
      void deliverSegments([segment("e", 5)], exact.fetch, async ([entry]) => resolve(entry.body), {
        ...options,
        maxBodyBytes: 1024 * 1024,
      });
    });
    const size = Buffer.byteLength(inline);
    const bodies: string[] = [];
    for (const limit of [size, size - 1]) {
      await deliverSegments(
        [segment("e", 5)],
        exact.fetch,
        async ([entry]) => void bodies.push(entry.body),
        { ...options, maxBodyBytes: limit },
      );
    }
    expect(parseSegmentBody(bodies[0]).messages).toHaveLength(5);
    expect(parseSegmentBody(bodies[1]).reference).toBeDefined();
  });

  it("sends what is stored at delivery: edited text, without deleted messages, under the planned id", async () => {
    const edited = new Map([["f1", "edited f1"]]);
    const deleted = new Set(["f0", "g0", "g1"]);
    const fetch = async (ids: readonly string[]): Promise<Message[]> =>
      ids.map((id, i) =>
        deleted.has(id)
          ? { role: "user", parts: [], id, ts: T0 + i, deleted: true }
          : textMessage("user", edited.get(id) ?? `text of ${id}`, { id, ts: T0 + i }),
      );
    const sent: SegmentDelivery[] = [];
    const report = await deliverSegments(
      [segment("f", 3), segment("g", 2)],
      fetch,
      async (entries) => void sent.push(...entries),
      options,
    );
    expect(report).toMatchObject({ missing: [], deleted: ["f0", "g0", "g1"] });
    // The first message's deletion keeps the id: a resend after a crash must match the first send.
    expect(sent.map((e) => e.segment.segmentId)).toEqual(["f-id"]);
    const body = parseSegmentBody(sent[0].body);
    expect(body.messages?.map((m) => [m.id, m.text])).toEqual([
      ["f1", "edited f1"],
      ["f2", "text of f2"],
    ]);
    expect(body.first.id).toBe("f1");
  });
});
