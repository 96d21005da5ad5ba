import { buildDigest, DIGEST_LIMITS, DigestError } from "convoseg/digest";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DAY, memorySources, question, result, SINCE, support, UNTIL } from "./fixtures.js";

const period = { since: SINCE, until: UNTIL, now: new Date(UNTIL) };

describe("buildDigest", () => {
  it("says a topic first seen in the period new, one seen before too recurring, with the period's evidence only", async () => {
    const sources = memorySources({
      supports: [
        support("help", "old1", "grub bootloader", SINCE - 10 * DAY),
        support("help", "s1", "GRUB boot-loader", SINCE + DAY),
        support("help", "s2", "grub bootloader", SINCE + 2 * DAY),
        support("help", "s3", "wifi driver", SINCE + 3 * DAY),
        support("help", "old2", "printer queue", SINCE - DAY),
        support("help", "later", "kernel panic", UNTIL + DAY),
      ],
    });

    const digest = await buildDigest(sources, { channels: ["help"], ...period });

    expect(digest.topics.map((t) => [t.topic, t.kind, t.segments, t.earlierSegments])).toEqual([
      ["wifi driver", "new", 1, 0],
      ["grub bootloader", "recurring", 2, 1],
    ]);
    const grub = digest.topics[1];
    expect(grub.aliases).toEqual(["GRUB boot-loader"]);
    expect(grub.firstSeen).toBe(SINCE - 10 * DAY);
    expect(grub.evidence.map((e) => e.segmentId)).toEqual(["s1", "s2"]);
    expect(grub.evidence[0]).toMatchObject({ channel: "help", messageIds: ["s1-m0", "s1-m1"] });
    expect(digest).toMatchObject({ v: 1, channels: ["help"], since: SINCE, until: UNTIL });
    expect(digest.generatedAt).toBe(new Date(UNTIL).toISOString());
    expect(digest.omitted).toBeUndefined();
  });

  it("lists the period's unanswered, unclear and answered questions apart, oldest first, answered ones with their answers", async () => {
    const sources = memorySources({
      results: [
        result("help", "s2", SINCE + 2 * DAY, SINCE + 2 * DAY + 600_000, [
          question("q3", SINCE + 2 * DAY, "unclear", "does it boot?"),
          question("q4", SINCE + 2 * DAY + 60_000, "answered", "which version?", "use 2.06"),
        ]),
        result("help", "s1", SINCE + DAY, SINCE + DAY + 600_000, [
          question("q1", SINCE + DAY, "unanswered", "why is wifi slow?"),
          question("q2", SINCE + DAY + 1, "answered", "how to reset?", "hold the button"),
        ]),
        result("help", "s0", SINCE - DAY, SINCE - DAY + 1, [
          question("q0", SINCE - DAY, "unanswered", "before the period"),
        ]),
        // Extracted before questions were: none.
        result("help", "s3", SINCE + 3 * DAY, SINCE + 3 * DAY + 1),
      ],
    });

    const digest = await buildDigest(sources, { channels: ["help"], ...period });

    expect(digest.unanswered.map((q) => [q.question, q.status])).toEqual([
      ["why is wifi slow?", "unanswered"],
    ]);
    expect(digest.unclear.map((q) => [q.question, q.status])).toEqual([
      ["does it boot?", "unclear"],
    ]);
    expect(digest.answered.map((q) => [q.question, q.answer, q.answerIds])).toEqual([
      ["how to reset?", "hold the button", ["q2-answer"]],
      ["which version?", "use 2.06", ["q4-answer"]],
    ]);
    expect(digest.answered[0]).toMatchObject({
      channel: "help",
      segmentId: "s1",
      askedId: "q2-ask",
    });
  });

  it("counts each channel's messages, conversations, people and every UTC day of the period", async () => {
    const at = (day: number, hour: number) => SINCE + day * DAY + hour * 3_600_000;
    const sources = memorySources({
      messages: [
        { channel: "a", ts: at(0, 1), author: "ann", segmentId: "s1" },
        { channel: "a", ts: at(0, 2), author: "bob", segmentId: "s1" },
        { channel: "a", ts: at(3, 23), author: "ann", segmentId: "s2" },
        { channel: "a", ts: at(6, 5) },
        { channel: "b", ts: at(2, 0), author: "cy", segmentId: "t1" },
      ],
    });

    const digest = await buildDigest(sources, { channels: ["a", "b", "a"], ...period });

    expect(digest.channels).toEqual(["a", "b"]);
    const [a, b] = digest.activity;
    expect(a).toMatchObject({ channel: "a", messages: 4, conversations: 2, activePeople: 2 });
    expect(a.days.map((d) => d.messages)).toEqual([2, 0, 0, 1, 0, 0, 1]);
    expect(a.days[0].day).toBe("2026-01-05");
    expect(a.days.at(-1)?.day).toBe("2026-01-11");
    expect(b).toMatchObject({ messages: 1, conversations: 1, activePeople: 1 });
  });

  it("caps the lists and says how many were left out", async () => {
    const n = DIGEST_LIMITS.topics + 3;
    const sources = memorySources({
      supports: Array.from({ length: n }, (_, i) =>
        support("c", `s${i}`, `subject${i} trouble`, SINCE + i * 1000),
      ),
      results: [
        result("c", "q", SINCE, SINCE + 1, [
          ...Array.from({ length: DIGEST_LIMITS.questions + 2 }, (_, i) =>
            question(`q${i}`, SINCE + i, "unanswered", `question ${i}?`),
          ),
          question("vague", SINCE + 1, "unclear", "is it fixed?"),
        ]),
      ],
    });

    const digest = await buildDigest(sources, { channels: ["c"], ...period });

    expect(digest.topics).toHaveLength(DIGEST_LIMITS.topics);
    expect(digest.unanswered).toHaveLength(DIGEST_LIMITS.questions);
    expect(digest.unanswered[0].question).toBe("question 0?");
    // Unclear ones are a list of their own, capped on their own.
    expect(digest.unclear.map((q) => q.question)).toEqual(["is it fixed?"]);
    expect(digest.omitted).toEqual({ topics: 3, unanswered: 2, unclear: 0, answered: 0 });
  });

  it("lists the recurring topics beside many new ones, half the cap each where both fill it", async () => {
    const fresh = Array.from({ length: DIGEST_LIMITS.topics + 5 }, (_, i) =>
      support("c", `n${i}`, `fresh${i} trouble`, SINCE + i * 1000),
    );
    const again = (n: number) =>
      Array.from({ length: n }, (_, i) => [
        support("c", `old${i}`, `kernel${i} panic`, SINCE - DAY),
        support("c", `new${i}`, `kernel${i} panic`, SINCE + i * 1000),
      ]).flat();

    const many = await buildDigest(memorySources({ supports: [...fresh, ...again(15)] }), {
      channels: ["c"],
      ...period,
    });
    const kinds = (d: Awaited<typeof many>) => d.topics.map((t) => t.kind);
    expect(kinds(many).filter((k) => k === "new")).toHaveLength(DIGEST_LIMITS.topics / 2);
    expect(kinds(many).filter((k) => k === "recurring")).toHaveLength(DIGEST_LIMITS.topics / 2);
    expect(many.omitted?.topics).toBe(DIGEST_LIMITS.topics + 5 + 15 - DIGEST_LIMITS.topics);

    // One kind's unused share goes to the other.
    const few = await buildDigest(memorySources({ supports: [...fresh, ...again(3)] }), {
      channels: ["c"],
      ...period,
    });
    expect(kinds(few).filter((k) => k === "recurring")).toHaveLength(3);
    expect(few.topics).toHaveLength(DIGEST_LIMITS.topics);
  });

  it("refuses no channel and an empty or reversed period, naming what is wrong", async () => {
    const sources = memorySources({});
    await expect(buildDigest(sources, { channels: [], ...period })).rejects.toMatchObject({
      code: "DIGEST_NO_CHANNELS",
    });
    const reversed = buildDigest(sources, { channels: ["c"], since: UNTIL, until: SINCE });
    await expect(reversed).rejects.toBeInstanceOf(DigestError);
    await expect(reversed).rejects.toThrow(/--since.*--until/);
    await expect(
      buildDigest(sources, { channels: ["c"], since: SINCE - 400 * DAY, until: SINCE }),
    ).rejects.toMatchObject({ code: "DIGEST_BAD_PERIOD" });
  });

  it("keeps every entry within the period and is the same whatever order the sources list in", async () => {
    const entry = fc.record({
      segment: fc.integer({ min: 0, max: 8 }),
      topic: fc.constantFrom("grub bootloader", "GRUB boot loader", "wifi", "dns", "dnssec"),
      ts: fc.integer({ min: SINCE - 5 * DAY, max: UNTIL + 2 * DAY }),
      status: fc.constantFrom("answered" as const, "unanswered" as const, "unclear" as const),
      author: fc.constantFrom("ann", "bob", undefined),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { maxLength: 30 }), fc.integer(), async (entries, seed) => {
        const supports = entries.map((e, i) =>
          support("c", `s${e.segment}`, e.topic, e.ts, { candidateId: `k${i}` }),
        );
        const results = [...new Set(entries.map((e) => e.segment))].map((s) =>
          result(
            "c",
            `s${s}`,
            SINCE,
            SINCE + 1,
            entries
              .filter((e) => e.segment === s)
              .map((e, i) =>
                question(
                  `q${s}-${i}`,
                  e.ts,
                  e.status,
                  `${e.topic}?`,
                  e.status === "answered" ? "yes" : undefined,
                ),
              ),
          ),
        );
        const messages = entries.map((e) => ({
          channel: "c",
          ts: e.ts,
          author: e.author,
          segmentId: `s${e.segment}`,
        }));
        const shuffle = <T>(list: T[]): T[] =>
          list
            .map((item, i) => ({ item, key: Math.imul(i + 1, seed | 1) >>> 0 }))
            .sort((a, b) => a.key - b.key)
            .map(({ item }) => item);
        const options = { channels: ["c"], ...period };
        const digest = await buildDigest(memorySources({ supports, results, messages }), options);
        const shuffled = await buildDigest(
          memorySources({
            supports: shuffle(supports),
            results: shuffle(results),
            messages: shuffle(messages),
          }),
          options,
        );

        expect(shuffled).toEqual(digest);
        for (const t of digest.topics) {
          expect(t.evidence.length).toBeGreaterThan(0);
          for (const e of t.evidence) expect(e.firstTs >= SINCE && e.firstTs < UNTIL).toBe(true);
        }
        for (const q of [...digest.unanswered, ...digest.answered]) {
          expect(q.askedTs >= SINCE && q.askedTs < UNTIL).toBe(true);
        }
        const inPeriod = entries.filter((e) => e.ts >= SINCE && e.ts < UNTIL).length;
        expect(digest.activity[0].messages).toBe(inPeriod);
        expect(digest.activity[0].days.reduce((n, d) => n + d.messages, 0)).toBe(inPeriod);
      }),
      { numRuns: 60 },
    );
  });
});
