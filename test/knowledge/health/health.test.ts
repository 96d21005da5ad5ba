/** A channel's health figures: exact on small cases, and their invariants over any input. */
import { channelHealth, type HealthInput, type HealthQuestion } from "convoseg/health";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const DAY = 86_400_000;
/** Monday 2026-01-05, 00:00 UTC. */
const MONDAY = Date.UTC(2026, 0, 5);
const HOUR = 3_600_000;

const question = (
  askedTs: number,
  status: HealthQuestion["status"],
  answerIds: string[] = [],
  askedBy?: string,
): HealthQuestion => ({ askedTs, status, answerIds, ...(askedBy && { askedBy }) });

const base: HealthInput = {
  period: { since: MONDAY, until: MONDAY + 7 * DAY },
  bucket: "day",
  questions: [],
  answers: [],
  conversations: [],
};

describe("channelHealth", () => {
  it("says which clock its times keep: whole minutes, whole seconds, or finer", () => {
    const clock = (asked: number, answered: number) =>
      channelHealth({
        ...base,
        questions: [question(asked, "answered", ["a"])],
        answers: [{ id: "a", ts: answered }],
      }).firstAnswer.clockMs;
    expect(clock(MONDAY + HOUR, MONDAY + HOUR)).toBe(60_000);
    expect(clock(MONDAY + HOUR, MONDAY + HOUR + 5_000)).toBe(1_000);
    expect(clock(MONDAY + HOUR + 1, MONDAY + HOUR + 5_000)).toBe(1);
  });

  it("counts questions, the answered share, first answers, answerers and conversations per day", () => {
    const health = channelHealth({
      ...base,
      questions: [
        question(MONDAY + HOUR, "answered", ["a1", "a2"], "ann"),
        question(MONDAY + 2 * HOUR, "answered", ["a3"], "bob"),
        question(MONDAY + DAY, "answered", ["gone"]),
        question(MONDAY + DAY + HOUR, "unanswered"),
        question(MONDAY + 6 * DAY, "unclear"),
        question(MONDAY - HOUR, "answered", ["a1"]),
        question(MONDAY + 7 * DAY, "unanswered"),
      ],
      answers: [
        { id: "a1", ts: MONDAY + 3 * HOUR, author: "cat" },
        { id: "a2", ts: MONDAY + 2 * HOUR, author: "ann" },
        { id: "a3", ts: MONDAY + 2 * HOUR + 60_000, author: "cat" },
      ],
      conversations: [MONDAY, MONDAY + 5, MONDAY + 3 * DAY, MONDAY + 7 * DAY, MONDAY - 1],
    });
    expect(health).toMatchObject({
      questions: 5,
      answered: 3,
      unanswered: 1,
      unclear: 1,
      answeredShare: 0.6,
      // The first answering message, whoever wrote it (ann answered her own, then cat did).
      firstAnswer: { measured: 2, medianMs: 60_000, p90Ms: HOUR, clockMs: 60_000 },
      // Asked 6 days less an hour before the period's end.
      unansweredByAge: [
        { upToDays: 1, questions: 0 },
        { upToDays: 7, questions: 1 },
        { upToDays: 30, questions: 0 },
        { upToDays: null, questions: 0 },
      ],
      // ann's answer to her own question is not one she gave.
      answerers: [{ name: "cat", answers: 2 }],
      conversations: 3,
    });
    expect(health.buckets).toHaveLength(7);
    expect(health.buckets[0]).toEqual({
      start: MONDAY,
      label: "2026-01-05",
      questions: 2,
      answered: 2,
      conversations: 2,
      firstAnswer: { measured: 2, medianMs: 60_000, p90Ms: HOUR, clockMs: 60_000 },
    });
    expect(health.buckets[1]).toMatchObject({
      label: "2026-01-06",
      questions: 2,
      answered: 1,
      firstAnswer: { measured: 0, medianMs: null, p90Ms: null, clockMs: 60_000 },
    });
  });

  it("has no share nor times over a quiet period", () => {
    const health = channelHealth(base);
    expect(health.answeredShare).toBeNull();
    expect(health.firstAnswer).toEqual({ measured: 0, medianMs: null, p90Ms: null, clockMs: 1 });
    expect(health.answerers).toEqual([]);
  });

  it("ages unanswered questions at the period's end", () => {
    const until = MONDAY + 60 * DAY;
    const ages = channelHealth({
      ...base,
      period: { since: MONDAY, until },
      questions: [1, 3, 10, 45].map((days) => question(until - days * DAY + 1, "unanswered")),
    }).unansweredByAge.map((a) => a.questions);
    expect(ages).toEqual([1, 1, 1, 1]);
  });

  it("buckets by ISO week, Monday to Sunday, named by the week's year", () => {
    const since = Date.UTC(2025, 11, 31); // a Wednesday, in 2026-W01
    const health = channelHealth({
      ...base,
      period: { since, until: Date.UTC(2026, 0, 13) },
      bucket: "week",
      conversations: [since, Date.UTC(2026, 0, 4, 23), Date.UTC(2026, 0, 5)],
    });
    expect(
      health.buckets.map((b) => [b.label, new Date(b.start).toISOString().slice(0, 10)]),
    ).toEqual([
      ["2026-W01", "2025-12-29"],
      ["2026-W02", "2026-01-05"],
      ["2026-W03", "2026-01-12"],
    ]);
    expect(health.buckets.map((b) => b.conversations)).toEqual([2, 1, 0]);
    // A week of 2020's 53, and 2027-01-01 (a Friday), still in 2026's last week.
    const label = (ts: number) =>
      channelHealth({ ...base, period: { since: ts, until: ts + 1 }, bucket: "week" }).buckets[0]
        .label;
    expect(label(Date.UTC(2020, 11, 31))).toBe("2020-W53");
    expect(label(Date.UTC(2027, 0, 1))).toBe("2026-W53");
    expect(label(Date.UTC(1969, 11, 29))).toBe("1970-W01");
  });

  it("never names a person who opted out, in any case, and lists the top few, ties by name", () => {
    const health = channelHealth({
      ...base,
      questions: ["a", "b", "c", "d"].map((id) => question(MONDAY + HOUR, "answered", [id])),
      answers: [
        { id: "a", ts: MONDAY + 2 * HOUR, author: "Dee" },
        { id: "b", ts: MONDAY + 2 * HOUR, author: "eve" },
        { id: "c", ts: MONDAY + 2 * HOUR, author: "abe" },
        { id: "d", ts: MONDAY + 2 * HOUR },
      ],
      optOut: ["dee"],
      top: 1,
    });
    expect(health.answerers).toEqual([{ name: "abe", answers: 1 }]);
    expect(channelHealth({ ...base, top: -1 }).answerers).toEqual([]);
  });

  it("counts a bot's answer as an answer but never lists the bot among the people who answer", () => {
    const health = channelHealth({
      ...base,
      questions: [
        question(MONDAY + HOUR, "answered", ["f1"]),
        question(MONDAY + HOUR, "answered", ["f2", "p1"]),
      ],
      answers: [
        { id: "f1", ts: MONDAY + HOUR + 60_000, author: "ubottu", bot: true },
        { id: "f2", ts: MONDAY + HOUR + 60_000, author: "ubottu", bot: true },
        { id: "p1", ts: MONDAY + 3 * HOUR, author: "ann" },
      ],
    });
    expect(health.answered).toBe(2);
    expect(health.firstAnswer).toEqual({
      measured: 2,
      medianMs: 60_000,
      p90Ms: 60_000,
      clockMs: 60_000,
    });
    expect(health.answerers).toEqual([{ name: "ann", answers: 1 }]);
  });
});

const STATUSES = ["answered", "unanswered", "unclear"] as const;
const SPAN = 40 * DAY;
const names = fc.constantFrom("ann", "bob", "cat", "dee", "eve");

const inputs = fc
  .record({
    since: fc.integer({ min: MONDAY - SPAN, max: MONDAY }),
    length: fc.integer({ min: 1, max: SPAN }),
    bucket: fc.constantFrom("day" as const, "week" as const),
    questions: fc.array(
      fc.record({
        askedTs: fc.integer({ min: MONDAY - 2 * SPAN, max: MONDAY + 2 * SPAN }),
        status: fc.constantFrom(...STATUSES),
        answerIds: fc.array(fc.constantFrom("m0", "m1", "m2", "m3", "m4", "m5"), { maxLength: 3 }),
        askedBy: names,
      }),
      { maxLength: 40 },
    ),
    answers: fc.array(
      fc.record({
        id: fc.constantFrom("m0", "m1", "m2", "m3", "m4", "m5"),
        ts: fc.integer({ min: MONDAY - 2 * SPAN, max: MONDAY + 3 * SPAN }),
        author: names,
      }),
      { maxLength: 6 },
    ),
    conversations: fc.array(fc.integer({ min: MONDAY - 2 * SPAN, max: MONDAY + 2 * SPAN }), {
      maxLength: 40,
    }),
    optOut: fc.array(names, { maxLength: 2 }),
  })
  .map(
    ({ since, length, ...rest }): HealthInput => ({
      ...rest,
      period: { since, until: since + length },
    }),
  );

describe("channelHealth's invariants", () => {
  it("adds up: statuses, buckets and ages to the totals; share in [0, 1]; median ≤ p90", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const h = channelHealth(input);
        const sum = (pick: (b: (typeof h.buckets)[number]) => number) =>
          h.buckets.reduce((total, b) => total + pick(b), 0);
        expect(h.answered + h.unanswered + h.unclear).toBe(h.questions);
        expect(sum((b) => b.questions)).toBe(h.questions);
        expect(sum((b) => b.answered)).toBe(h.answered);
        expect(sum((b) => b.conversations)).toBe(h.conversations);
        expect(sum((b) => b.firstAnswer.measured)).toBe(h.firstAnswer.measured);
        expect(h.unansweredByAge.reduce((t, a) => t + a.questions, 0)).toBe(h.unanswered);
        if (h.answeredShare !== null) {
          expect(h.answeredShare).toBeGreaterThanOrEqual(0);
          expect(h.answeredShare).toBeLessThanOrEqual(1);
        }
        for (const times of [h.firstAnswer, ...h.buckets.map((b) => b.firstAnswer)]) {
          if (times.measured === 0) continue;
          expect(times.medianMs).toBeGreaterThanOrEqual(0);
          expect(times.medianMs).toBeLessThanOrEqual(times.p90Ms as number);
        }
        const step = input.bucket === "day" ? DAY : 7 * DAY;
        h.buckets.forEach((b, i) => {
          if (i > 0) expect(b.start - h.buckets[i - 1].start).toBe(step);
        });
        expect(h.buckets[0].start).toBeLessThanOrEqual(h.since);
        expect(h.buckets[h.buckets.length - 1].start + step).toBeGreaterThanOrEqual(h.until);
      }),
    );
  });

  it("never lists an opted-out person, and ranks by answers given", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const { answerers } = channelHealth(input);
        for (const { name } of answerers) expect(input.optOut).not.toContain(name);
        for (let i = 1; i < answerers.length; i++) {
          expect(answerers[i].answers).toBeLessThanOrEqual(answerers[i - 1].answers);
        }
      }),
    );
  });

  it("does not depend on the order of its inputs", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const reversed = {
          ...input,
          questions: [...input.questions].reverse(),
          conversations: [...input.conversations].reverse(),
        };
        expect(channelHealth(reversed)).toEqual(channelHealth(input));
      }),
    );
  });
});
