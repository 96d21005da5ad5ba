import { mergeTopics, type TopicAlias, type TopicMatcher } from "convoseg/topics";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const alias = (topic: string, segments: string[], firstSeen = 0, lastSeen = firstSeen) => ({
  topic,
  segments,
  firstSeen,
  lastSeen,
});

describe("mergeTopics", () => {
  it("merges wordings of one topic, named by the most supported, counting a segment once", () => {
    const [grub, other] = mergeTopics([
      alias("GRUB boot loader", ["s1", "s2"], 10, 20),
      alias("grub bootloader", ["s2", "s3", "s4"], 5, 50),
      alias("grub bootloaders", ["s4"], 1, 2),
      alias("dns", ["s1"], 0, 0),
    ]);
    expect(grub.topic).toBe("grub bootloader");
    expect(grub.aliases.map((a) => a.topic)).toEqual([
      "grub bootloader",
      "GRUB boot loader",
      "grub bootloaders",
    ]);
    expect(grub.segments).toEqual(["s1", "s2", "s3", "s4"]);
    expect([grub.firstSeen, grub.lastSeen]).toEqual([1, 50]);
    expect(other.topic).toBe("dns");
  });

  it("breaks a tie of support by the earliest seen, then by code order", () => {
    expect(mergeTopics([alias("SSH keys", ["a"], 5), alias("ssh key", ["b"], 3)])[0].topic).toBe(
      "ssh key",
    );
    expect(mergeTopics([alias("ssh key", ["a"], 3), alias("SSH keys", ["b"], 3)])[0].topic).toBe(
      "SSH keys",
    );
  });

  it("joins the links of another matcher, transitively", () => {
    const synonyms: TopicMatcher = (topics) =>
      topics.includes("wifi") && topics.includes("wireless") ? [["wireless", "wifi"]] : [];
    const merged = mergeTopics(
      [alias("wifi", ["a"]), alias("wireless", ["b"]), alias("Wi-Fi", ["c"]), alias("dns", ["d"])],
      [synonyms],
    );
    // Without the token matcher, Wi-Fi stays on its own.
    expect(merged.map((t) => t.aliases.map((a) => a.topic).sort())).toEqual([
      ["wifi", "wireless"],
      ["Wi-Fi"],
      ["dns"],
    ]);
  });

  describe("invariants", () => {
    const WORDS = [
      "boot",
      "loader",
      "bootloader",
      "grub",
      "wi",
      "fi",
      "wifi",
      "on",
      "linux",
      "issue",
    ];
    const topic = fc
      .array(fc.constantFrom(...WORDS, "Bootloaders", "boot-loader", "LINUX", "issues"), {
        minLength: 1,
        maxLength: 3,
      })
      .map((words) => words.join(" "));
    const aliases = fc.uniqueArray(
      fc.record({
        topic,
        segments: fc.array(fc.constantFrom("s1", "s2", "s3", "s4", "s5"), { minLength: 1 }),
        firstSeen: fc.integer({ min: 0, max: 5 }),
        span: fc.integer({ min: 0, max: 5 }),
      }),
      { selector: (a) => a.topic, maxLength: 14 },
    );
    const asAliases = (
      list: { topic: string; segments: string[]; firstSeen: number; span: number }[],
    ) => list.map((a): TopicAlias => alias(a.topic, a.segments, a.firstSeen, a.firstSeen + a.span));

    it("puts every alias in exactly one canonical topic", () => {
      fc.assert(
        fc.property(aliases, (list) => {
          const input = asAliases(list);
          const placed = mergeTopics(input).flatMap((t) => t.aliases);
          expect(placed).toHaveLength(input.length);
          for (const a of input) expect(placed.filter((p) => p === a)).toHaveLength(1);
        }),
      );
    });

    it("gives the same result whatever the order of its input", () => {
      fc.assert(
        fc.property(
          aliases.chain((list) =>
            fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length })),
          ),
          ([list, shuffled]) => {
            expect(mergeTopics(asAliases(shuffled))).toEqual(mergeTopics(asAliases(list)));
          },
        ),
      );
    });

    it("changes nothing when merged again", () => {
      fc.assert(
        fc.property(aliases, (list) => {
          const once = mergeTopics(asAliases(list));
          const again = mergeTopics(
            once.map((t) => alias(t.topic, t.segments, t.firstSeen, t.lastSeen)),
          );
          expect(again.map((t) => [t.topic, t.segments, t.firstSeen, t.lastSeen])).toEqual(
            once.map((t) => [t.topic, t.segments, t.firstSeen, t.lastSeen]),
          );
        }),
      );
    });

    it("counts each segment once, however many aliases cite it", () => {
      fc.assert(
        fc.property(aliases, (list) => {
          for (const t of mergeTopics(asAliases(list))) {
            expect(new Set(t.segments).size).toBe(t.segments.length);
            expect(new Set(t.segments)).toEqual(new Set(t.aliases.flatMap((a) => a.segments)));
          }
        }),
      );
    });
  });
});
