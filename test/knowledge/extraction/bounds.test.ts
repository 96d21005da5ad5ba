/**
 * Model output is bounded and checked (issue 20 §2): what a reply may carry into storage, and
 * what a turn may carry into a prompt, against the real analyzer and a scripted model.
 */

import { Analyzer, type ExtractionTurn, type LLM, type Turn } from "convoseg/extraction";
import {
  MAX_REASON_CHARS,
  MAX_TAG_CHARS,
  MAX_TAGS,
  MAX_TOPIC_CHARS,
} from "convoseg/extraction/bounds";
import { replySchema } from "convoseg/extraction/prompts";
import { describe, expect, it } from "vitest";
import { memoryOutputs } from "../../support/window-outputs.js";

const wire = (topic: string, fields: Record<string, unknown> = {}) => ({
  topic,
  reason: `why ${topic}`,
  confidence: 0.9,
  tags: [],
  turn_range: [1, 1],
  subjective: false,
  ...fields,
});

/** Answers every call with `reply`, recording the user message of each request. */
function scripted(reply: unknown): LLM & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    prompts,
    chatJSON: async (messages: readonly Turn[]) => {
      prompts.push(messages.find((m) => m.role === "user")?.content ?? "");
      return reply;
    },
  };
}

const turns: ExtractionTurn[] = [
  { role: "user", kind: "user", author: "alice", text: "the router keeps rebooting" },
  { role: "user", kind: "user", author: "bob", text: "update its firmware" },
];

describe("bounded replies", () => {
  it("cuts over-long fields and drops candidates past the cap, counting each by name", async () => {
    const huge = wire("x".repeat(50_000), {
      reason: `<b>${"y".repeat(5_000_000)}</b>`,
      tags: Array.from({ length: 200 }, (_, i) => `tag${i}${"z".repeat(i === 0 ? 100 : 0)}`),
    });
    const reply = { candidates: [huge, ...Array.from({ length: 9_999 }, (_, i) => wire(`t${i}`))] };
    const outputs = memoryOutputs();
    const extraction = await new Analyzer(scripted(reply), { route: "full" }).extract(turns, {
      outputs,
    });
    const [first] = extraction.candidates;
    expect(first.topic.length).toBeLessThanOrEqual(MAX_TOPIC_CHARS);
    expect(first.topic.endsWith("…")).toBe(true);
    expect(first.reason.length).toBeLessThanOrEqual(MAX_REASON_CHARS);
    expect(first.tags).toHaveLength(MAX_TAGS);
    for (const tag of first.tags) expect(tag.length).toBeLessThanOrEqual(MAX_TAG_CHARS);
    // The default cap: the first 20 in the model's order.
    expect(extraction.candidates).toHaveLength(20);
    expect(extraction.trimmed).toEqual({
      topics: 1,
      reasons: 1,
      // 195 tags past the count, and the first cut to its length.
      tags: 196,
      candidates: 9_980,
    });
    // What was stored for a retry is the bounded reply, never the whole one.
    const [stored] = outputs.stored.values();
    expect(stored.candidates).toHaveLength(20);
    expect(JSON.stringify(stored).length).toBeLessThan(20_000);
    expect(stored.trimmed).toEqual(extraction.trimmed);
    // A retry that reuses the stored reply reports the same cuts.
    const again = await new Analyzer(scripted(new Error("not asked")), { route: "full" }).extract(
      turns,
      { outputs },
    );
    expect(again).toEqual(extraction);
  });

  it("keeps maxCandidates when given, and falls back to the default for non-positive values", async () => {
    const reply = { candidates: Array.from({ length: 30 }, (_, i) => wire(`t${i}`)) };
    const three = await new Analyzer(scripted(reply), { route: "full", maxCandidates: 3 }).extract(
      turns,
    );
    expect(three.candidates.map((c) => c.topic)).toEqual(["t0", "t1", "t2"]);
    expect(three.trimmed).toEqual({ candidates: 27 });
    const zero = await new Analyzer(scripted(reply), { route: "full", maxCandidates: 0 }).extract(
      turns,
    );
    expect(zero.candidates).toHaveLength(20);
  });

  it("names no cut when nothing was cut", async () => {
    const extraction = await new Analyzer(scripted({ candidates: [wire("firmware")] }), {
      route: "sliding",
    }).extract(turns);
    expect(extraction).toEqual({
      candidates: [expect.objectContaining({ topic: "firmware", turnRange: [0, 0] })],
      questions: [],
    });
  });

  it("cuts each turn's text to maxTurnChars before it reaches a prompt, counted", async () => {
    const llm = scripted({ candidates: [] });
    const long: ExtractionTurn = {
      role: "user",
      kind: "user",
      author: "eve",
      text: "a".repeat(300_000),
    };
    const extraction = await new Analyzer(llm, { route: "sliding", maxTurnChars: 100 }).extract([
      long,
      turns[0],
    ]);
    expect(extraction.trimmed).toEqual({ turnTexts: 1 });
    expect(llm.prompts[0]).toContain(`"eve": "${"a".repeat(99)}…"`);
    expect(llm.prompts[0]).not.toContain("a".repeat(100));
    // The default is a few thousand characters.
    const byDefault = scripted({ candidates: [] });
    await new Analyzer(byDefault, { route: "sliding" }).extract([long]);
    expect(byDefault.prompts[0]).toContain(`${"a".repeat(3999)}…"`);
    expect(byDefault.prompts[0]).not.toContain("a".repeat(4000));
  });

  it("states every bound in the reply schema and the prompt", async () => {
    const schema = JSON.stringify(replySchema(false));
    for (const bound of [MAX_TOPIC_CHARS, MAX_REASON_CHARS, MAX_TAG_CHARS, 20]) {
      expect(schema).toContain(`at most ${bound}`);
    }
    const llm = scripted({ candidates: [] });
    await new Analyzer(llm, { route: "full" }).extract(turns);
    expect(llm.prompts[0]).toContain(`at most ${MAX_TOPIC_CHARS} characters`);
    expect(llm.prompts[0]).toContain("at most 20 candidates");
  });
});
