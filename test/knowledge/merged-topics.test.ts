import { normalizeTopic } from "convoseg/extraction";
import { mergeSupports } from "convoseg/knowledge/read";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TopicSupport } from "../../lib/knowledge/store/schema/items.js";

const support = (
  topic: string,
  segmentId: string,
  ts: number,
  confidence = 0.5,
  tags: string[] = [],
): TopicSupport => ({
  v: 1,
  channel: "help",
  topic,
  normalizedTopic: normalizeTopic(topic),
  segmentId,
  candidateId: `${segmentId}-${normalizeTopic(topic)}`,
  late: false,
  confidence,
  reason: `said as ${topic}`,
  tags,
  messageIds: [`${segmentId}-a`, `${segmentId}-b`],
  firstTs: ts,
  lastTs: ts + 10,
});

const SUPPORTS = [
  support("grub bootloader", "s1", 100, 0.6, ["grub"]),
  support("grub bootloader", "s2", 200, 0.5),
  support("GRUB boot loader", "s2", 210, 0.9, ["boot"]),
  support("grub bootloaders", "s3", 50, 0.4),
  support("dnssec", "s1", 120),
  support("dns", "s3", 60),
];

describe("mergeSupports", () => {
  it("merges the wordings of a topic, counting a segment once and keeping every alias's evidence", () => {
    const [grub, ...others] = mergeSupports(SUPPORTS);
    expect(grub).toMatchObject({
      topic: "grub bootloader",
      normalizedTopic: "grub bootloader",
      aliases: ["grub bootloaders", "GRUB boot loader"],
      // s2 says two of the wordings.
      segments: 3,
      firstSeen: 50,
      lastSeen: 220,
      bestConfidence: 0.9,
      bestReason: "said as GRUB boot loader",
      tags: ["grub", "boot"],
    });
    expect(grub.evidence.map((e) => [e.segmentId, e.topic])).toEqual([
      ["s3", "grub bootloaders"],
      ["s1", "grub bootloader"],
      ["s2", "grub bootloader"],
      ["s2", "GRUB boot loader"],
    ]);
    expect(others.map((t) => [t.topic, t.aliases])).toEqual([
      ["dnssec", []],
      ["dns", []],
    ]);
  });

  it("gives the same topics for the same entries in any order", () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(SUPPORTS, { minLength: SUPPORTS.length }), (shuffled) => {
        expect(mergeSupports(shuffled)).toEqual(mergeSupports(SUPPORTS));
      }),
    );
  });

  it("names a wording by how most segments wrote it, not by its surest one-off", () => {
    const shouted = support("PAYMENTINTENT", "s9", 40, 1);
    const written = ["s4", "s5", "s6"].map((id, i) => support("PaymentIntent", id, 100 + i, 0.6));
    const [topic] = mergeSupports([shouted, ...written]);
    expect(topic).toMatchObject({
      topic: "PaymentIntent",
      aliases: [],
      segments: 4,
      bestConfidence: 1,
      bestReason: "said as PAYMENTINTENT",
    });
    expect(new Set(topic?.evidence.map((e) => e.topic))).toEqual(new Set(["PaymentIntent"]));
    // As many segments each way: the surer wording, then the earlier.
    const even = support("paymentintent", "s7", 200, 0.7);
    expect(mergeSupports([support("PaymentIntent", "s4", 100, 0.6), even])[0]?.topic).toBe(
      "paymentintent",
    );
    expect(
      mergeSupports([support("PaymentIntent", "s4", 100, 0.7), { ...even, confidence: 0.7 }])[0]
        ?.topic,
    ).toBe("PaymentIntent");
  });

  it("merges by exact normalized topic only when given no matcher", () => {
    expect(mergeSupports(SUPPORTS, []).map((t) => t.topic)).toEqual([
      "grub bootloader",
      "GRUB boot loader",
      "dnssec",
      "dns",
      "grub bootloaders",
    ]);
  });
});
