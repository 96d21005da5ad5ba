import type { StoredQuestion } from "convoseg/knowledge/store";
import { buildReport, type ReportInput } from "convoseg/report";
import { describe, expect, it } from "vitest";
import { healthBucket, reportHealth, reportOptOut } from "../../../lib/outlets/report/health.js";
import { asked } from "../digest/fixtures.js";

const DAY = 86_400_000;
/** Thursday 2026-01-01 00:00 UTC. */
const START = Date.UTC(2026, 0, 1);

type Message = NonNullable<ReportInput["messages"]>[number];

function segment(channel: string, id: string, first: number, last: number) {
  return {
    channel,
    segmentId: id,
    messageIds: [`${id}-a`],
    late: false,
    belongsAfter: null,
    first: { id: `${id}-a`, ts: first },
    last: { id: `${id}-b`, ts: last },
  };
}

function line(channel: string, segmentId: string, questions?: StoredQuestion[]) {
  return {
    channel,
    segmentId,
    model: "offline",
    promptVersion: "t",
    usage: { calls: 1, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    candidates: [],
    ...(questions === undefined ? {} : { questions }),
  };
}

/** `help` over three days: three questions, two answered (by ann, by bob), one waiting. */
function helpInput(extra: Partial<ReportInput> = {}): ReportInput {
  const messages: Message[] = [
    { id: "q1-ask", ts: START, channel: "help", user: "cy" },
    { id: "a1", ts: START + 60_000, channel: "help", user: "ann", userId: "U1" },
    { id: "q2-ask", ts: START + DAY, channel: "help", user: "cy" },
    { id: "a2", ts: START + DAY + 600_000, channel: "help", userId: "U2" },
    { id: "q3-ask", ts: START + 2 * DAY, channel: "help", user: null },
  ];
  return {
    segments: [
      segment("help", "s1", START, START + 60_000),
      segment("help", "s2", START + DAY, START + DAY + 600_000),
      segment("help", "s3", START + 2 * DAY, START + 2 * DAY + 5 * 3_600_000),
    ],
    candidates: [
      line("help", "s1", [asked("q1", START, "answered", ["a1"], "cy")]),
      line("help", "s2", [asked("q2", START + DAY, "answered", ["a2", "gone"])]),
      line("help", "s3", [asked("q3", START + 2 * DAY, "unanswered")]),
      line("help", "s4"),
    ],
    messages,
    settle: 3_600_000,
    now: START + 3 * DAY,
    generatedAt: START + 3 * DAY,
    ...extra,
  };
}

describe("the report's health figures", () => {
  it("counts each channel's questions, answers and conversations by day over all of its data", () => {
    const [help] = reportHealth(helpInput());

    expect(help).toMatchObject({
      channel: "help",
      bucket: "day",
      since: START,
      // The end of the UTC day of the last segment's last message.
      until: START + 3 * DAY,
      questions: 3,
      answered: 2,
      unanswered: 1,
      answeredShare: 2 / 3,
      firstAnswer: { measured: 2, medianMs: 60_000, p90Ms: 600_000 },
      conversations: 3,
      // Asked a whole day before the end: no longer under a day old.
      unansweredByAge: [
        { upToDays: 1, questions: 0 },
        { upToDays: 7, questions: 1 },
        { upToDays: 30, questions: 0 },
        { upToDays: null, questions: 0 },
      ],
    });
    // A message without a name is counted by its user id.
    expect(help.answerers).toEqual([
      { name: "U2", answers: 1 },
      { name: "ann", answers: 1 },
    ]);
    expect(help.starts).toEqual([START, START + DAY, START + 2 * DAY]);
    expect(help.perBucket).toEqual({
      questions: [1, 1, 1],
      answered: [1, 1, 0],
      conversations: [1, 1, 1],
      medianMs: [60_000, 600_000, null],
      p90Ms: [60_000, 600_000, null],
    });
  });

  it("is embedded in the report's knowledge, and the digest in it names its answerers", () => {
    const { data } = buildReport(helpInput());

    expect(data.knowledge?.health?.map((h) => h.channel)).toEqual(["help"]);
    expect(data.knowledge?.digest?.health).toEqual([
      expect.objectContaining({
        channel: "help",
        questions: 3,
        answerers: [
          { name: "U2", answers: 1 },
          { name: "ann", answers: 1 },
        ],
      }),
    ]);
  });

  it("never names a person who opted out, by name or by the id their messages carry", () => {
    const byName = reportHealth(helpInput({ optOut: ["ANN"] }))[0];
    expect(byName.answerers.map((a) => a.name)).toEqual(["U2"]);
    // Their answers still count in the other figures.
    expect(byName.answered).toBe(2);
    const byId = reportHealth(helpInput({ optOut: ["u1", "U2"] }))[0];
    expect(byId.answerers).toEqual([]);
    const { data } = buildReport(helpInput({ optOut: ["u1"] }));
    expect(data.knowledge?.digest?.health?.[0].answerers).toEqual([{ name: "U2", answers: 1 }]);
  });

  it("times an answer by nobody named, and names no one for it", () => {
    const report: ReportInput = {
      segments: [segment("c", "s", START, START + 1000)],
      candidates: [line("c", "s", [asked("q", START, "answered", ["a"])])],
      messages: [
        { id: "q-ask", ts: START, channel: "c", user: "ann" },
        { id: "a", ts: START + 1000, channel: "c", user: null },
      ],
      settle: 1,
      now: START,
      generatedAt: START,
    };
    const [c] = reportHealth(report);
    expect(c.firstAnswer).toEqual({ measured: 1, medianMs: 1000, p90Ms: 1000, clockMs: 1000 });
    expect(c.answerers).toEqual([]);
    const digest = buildReport(report).data.knowledge?.digest?.health?.[0];
    expect(digest?.firstAnswer.measured).toBe(1);
    expect(digest?.answerers).toEqual([]);
  });

  it("reads the opt-out as the messages name people", () => {
    const messages: Message[] = [
      { id: "1", ts: START, channel: "c", user: "Ann", userId: "U1" },
      { id: "2", ts: START, channel: "c", user: "bob" },
      { id: "3", ts: START, channel: "c", user: null, userId: "U3" },
    ];
    expect(reportOptOut({ messages })).toEqual([]);
    expect(reportOptOut({ optOut: ["u1", "U3"], messages }).sort()).toEqual(["ann", "u1", "u3"]);
    expect(reportOptOut({ optOut: ["Bob"] })).toEqual(["bob"]);
  });

  it("lists a channel with messages or segments alone: no questions, its conversations counted", () => {
    const health = reportHealth({
      segments: [segment("ops", "o1", START + 5 * DAY, START + 5 * DAY)],
      messages: [{ id: "x", ts: START, channel: "chat", user: "ann" }],
      settle: 1,
      now: START,
      generatedAt: START,
    });

    expect(health.map((h) => [h.channel, h.questions, h.conversations, h.answeredShare])).toEqual([
      ["chat", 0, 0, null],
      ["ops", 0, 1, null],
    ]);
    expect(health[1].starts).toEqual([START + 5 * DAY]);
    expect(reportHealth({ segments: [], settle: 1, now: 0, generatedAt: 0 })).toEqual([]);
  });

  it("goes by week past 92 days, so a long history stays a few hundred numbers", () => {
    expect(healthBucket(START, START + 92 * DAY)).toBe("day");
    expect(healthBucket(START, START + 92 * DAY + 1)).toBe("week");
    const long = reportHealth({
      segments: [
        segment("help", "a", START, START),
        segment("help", "b", START + 365 * DAY, START),
      ],
      settle: 1,
      now: START,
      generatedAt: START,
    })[0];
    expect(long.bucket).toBe("week");
    // 2026-01-01 is a Thursday: its ISO week began on Monday 2025-12-29.
    expect(long.starts[0]).toBe(START - 3 * DAY);
    expect(long.starts.length).toBe(53);
    expect(long.perBucket.conversations.reduce((a, b) => a + b)).toBe(2);
  });

  it("reads a channel of many messages without spreading them into one call", () => {
    const messages: Message[] = Array.from({ length: 200_000 }, (_, i) => ({
      id: String(i),
      ts: START + i * 1000,
      channel: "big",
    }));
    const [big] = reportHealth({
      segments: [],
      messages,
      settle: 1,
      now: START,
      generatedAt: START,
    });
    expect(big.since).toBe(START);
    expect(big.until).toBe(START + 3 * DAY);
  });
});
