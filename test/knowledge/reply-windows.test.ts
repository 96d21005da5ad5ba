/**
 * Reply-aware windows on the extraction path (issue 24 §2): a segment body's `replyTo` (or, for
 * a thread reply, its `thread` root) reaches the analyzer through SegmentExtractor, and the
 * sliding window that first shows the reply also shows what it answers; without links the
 * windows are the plain ones.
 */

import { Analyzer, type LLM } from "convoseg/extraction";
import { MemoryResultStore, type SegmentEnvelope } from "convoseg/knowledge/store";
import { promptVersionOf, SegmentExtractor } from "convoseg/knowledge/write";
import type { InlineMessage } from "convoseg/pipeline/contract";
import { describe, expect, it } from "vitest";

const T0 = Date.UTC(2025, 2, 3, 8);
const ANALYSIS = {
  route: "sliding",
  windowSize: 4,
  overlap: 1,
  prefixStep: 5,
  maxWindows: 8,
} as const;

/** Eight messages, ids "0" to "7"; `links` gives some a field naming an earlier one. */
function messages(links: Record<number, Partial<InlineMessage>> = {}): InlineMessage[] {
  return Array.from({ length: 8 }, (_, i) => ({
    id: String(i),
    ts: T0 + i * 1000,
    author: `u${i % 3}`,
    text: `message ${i}`,
    ...links[i],
  }));
}

function envelope(body: InlineMessage[]): SegmentEnvelope {
  return {
    segmentId: "c:1",
    channel: "c",
    late: false,
    belongsAfter: null,
    count: body.length,
    first: { id: body[0].id, ts: body[0].ts },
    last: { id: body[body.length - 1].id, ts: body[body.length - 1].ts },
  };
}

/** The message numbers each prompt showed, in order of the calls. */
async function windowsShown(body: InlineMessage[]): Promise<number[][]> {
  const prompts: string[] = [];
  const llm: LLM = {
    chatJSON: async (request) => {
      prompts.push(request.find((m) => m.role === "user")?.content ?? "");
      return { candidates: [] };
    },
  };
  await new SegmentExtractor({
    store: new MemoryResultStore(),
    extractor: new Analyzer(llm, { ...ANALYSIS, maxConcurrency: 1 }),
    model: "m",
    promptVersion: promptVersionOf(ANALYSIS),
    now: () => T0,
  }).extract(envelope(body), body);
  return prompts.map((p) => [...p.matchAll(/"message (\d+)"/g)].map((m) => Number(m[1])));
}

describe("SegmentExtractor: sliding windows with replies", () => {
  it("shows the plain windows when no message replies", async () => {
    expect(await windowsShown(messages())).toEqual([
      [0, 1, 2, 3],
      [3, 4, 5, 6],
      [6, 7],
    ]);
  });

  it("shows a reply in one window with the message it answers", async () => {
    const windows = await windowsShown(messages({ 5: { replyTo: "2" } }));
    expect(windows).toEqual([
      [0, 1, 2, 3],
      [2, 3, 4, 5],
      [5, 6, 7],
    ]);
  });

  it("shows a thread reply with its root, and ignores a link to no message of the segment", async () => {
    const windows = await windowsShown(
      messages({ 5: { thread: "2" }, 6: { replyTo: "elsewhere" }, 7: { replyTo: "7" } }),
    );
    expect(windows).toEqual([
      [0, 1, 2, 3],
      [2, 3, 4, 5],
      [5, 6, 7],
    ]);
  });
});
