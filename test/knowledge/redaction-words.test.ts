/**
 * A deleted message's words do not outlive it: when a candidate's evidence loses a message, the
 * topic stays only while what is left still says each of its words, and its tags and reason
 * keep only what is still said. This is what leaves nothing of an erased person in a topic
 * whose range also held someone else's message.
 */

import { describe, expect, it } from "vitest";
import type { MessageState } from "../../lib/knowledge/store/message-states.js";
import { planRedaction } from "../../lib/knowledge/store/redaction-plan.js";
import type { StoredCandidate } from "../../lib/knowledge/store/schema/items.js";
import { segmentResult } from "../support/segment-result.js";

const TEXTS: Record<string, string> = {
  m1: "the quuxolator in the bootloader is broken",
  m2: "try reflashing the Bootloader",
  m3: "thanks, that fixed it",
};

const candidate = (topic: string, tags: string[], reason: string): StoredCandidate => ({
  id: topic,
  topic,
  reason,
  confidence: 0.9,
  tags,
  subjective: false,
  turnRange: [0, 2],
  messageIds: ["m1", "m3"],
  authorCount: 3,
  authors: ["alice", "bob", "carol"],
});

const result = (candidates: StoredCandidate[]) =>
  segmentResult("help", "s", {
    count: 3,
    first: { id: "m1", ts: 1 },
    last: { id: "m3", ts: 3 },
    messageIds: ["m1", "m2", "m3"],
    candidates,
  });

const states = (deleted: string) =>
  new Map<string, MessageState>(
    Object.entries(TEXTS).map(([id, text], i): [string, MessageState] =>
      id === deleted
        ? [id, { deleted: true, ts: i + 1 }]
        : [id, { deleted: false, ts: i + 1, text, author: `a${i}` }],
    ),
  );

describe("a deletion inside a candidate's evidence", () => {
  it("removes a topic only the deleted message said, with its topic entry", () => {
    const plan = planRedaction(
      result([candidate("quuxolator", ["quuxolator"], "said once")]),
      [{ id: "m1", ts: 1, kind: "delete" }],
      states("m1"),
      1,
    );
    expect(plan?.next?.candidates).toEqual([]);
    expect(plan?.removedTopics).toEqual(["quuxolator"]);
    expect(plan?.supports).toEqual([]);
  });

  it("keeps a topic the others still say, without the tags and reason only the deleted one said", () => {
    const plan = planRedaction(
      result([candidate("bootloader", ["bootloader", "quuxolator"], "the quuxolator broke")]),
      [{ id: "m1", ts: 1, kind: "delete" }],
      states("m1"),
      1,
    );
    const kept = plan?.next?.candidates[0];
    expect(kept?.topic).toBe("bootloader");
    expect(kept?.tags).toEqual(["bootloader"]);
    expect(kept?.reason).toBe("");
    expect(kept?.messageIds).toEqual(["m2", "m3"]);
    expect(plan?.supports.map((s) => [s.topic, s.tags, s.reason])).toEqual([
      ["bootloader", ["bootloader"], ""],
    ]);
  });

  it("leaves a candidate whose evidence lost nothing as it was", () => {
    const outside = candidate("quuxolator", ["x"], "kept");
    const plan = planRedaction(
      result([{ ...outside, turnRange: [1, 2], messageIds: ["m2", "m3"] }]),
      [{ id: "m1", ts: 1, kind: "delete" }],
      states("m1"),
      1,
    );
    expect(plan?.next?.candidates.map((c) => [c.topic, c.reason])).toEqual([
      ["quuxolator", "kept"],
    ]);
  });
});
