/** `GET /channels/{c}/stats` over memory sources: the period's figures, opt-outs, bounds, 501s. */
import {
  apiHandler,
  memoryApiSources,
  type QuestionsSource,
  type StatsSource,
  storeStatsSource,
} from "convoseg/api";
import type { SegmentResult } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { StatsPage } from "../../../lib/outlets/api/schemas.js";
import { get, result } from "./fixtures.js";

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** Monday 2026-01-05, noon UTC: the handler's now. */
const NOW = Date.UTC(2026, 0, 5, 12);

type Asked = Awaited<ReturnType<QuestionsSource["questions"]>>["items"][number];

const asked = (i: number, askedTs: number, answerIds: string[] = [], askedBy = "asker"): Asked => ({
  question: `question ${i}?`,
  askedId: `q${i}`,
  askedTs,
  askedBy,
  status: answerIds.length === 0 ? "unanswered" : "answered",
  answerIds,
  segmentId: `s${i}`,
});

/** Pages `items` three at a time, as the questions index would (cursor: the next index). */
function questionsOf(items: Asked[]): QuestionsSource {
  return {
    async questions(_channel, { limit = 20, cursor }) {
      const from = cursor === undefined ? 0 : Number(cursor);
      const page = items.slice(from, from + Math.min(limit, 1000));
      const next = from + page.length;
      return { items: page, cursor: next < items.length ? String(next) : null };
    },
  };
}

const started = (channel: string, id: string, ts: number): SegmentResult => {
  const r = result(channel, id);
  return { ...r, first: { ...r.first, ts } };
};

const messages: Record<string, { id?: string; ts?: number; author?: string; deleted?: boolean }> = {
  a1: { id: "a1", ts: NOW - 2 * DAY + HOUR, author: "cat" },
  a2: { id: "a2", ts: NOW - DAY + 2 * HOUR, author: "Dee" },
  // An erased person's answer: deleted, and its author gone.
  a3: { id: "a3", ts: NOW - DAY + HOUR, deleted: true },
  a4: { id: "a4" },
};
const read: string[][] = [];
const stats: StatsSource = storeStatsSource(
  {
    async listResults(channel) {
      return [
        started(channel, "s1", NOW - 2 * DAY),
        started(channel, "s2", NOW - 2 * DAY + HOUR),
        started(channel, "s3", NOW - 30 * DAY),
      ];
    },
  },
  {
    async getMessages(_channel, ids) {
      read.push([...ids]);
      return ids.flatMap((id) => messages[id] ?? []);
    },
  },
);

const questions = questionsOf([
  asked(1, NOW - 2 * DAY, ["a1"]),
  asked(2, NOW - DAY, ["a2", "a3"]),
  asked(3, NOW - DAY + HOUR, ["a3"]),
  asked(4, NOW - DAY + 2 * HOUR, ["a4"]),
  asked(5, NOW - 3 * HOUR),
  asked(6, NOW - 20 * DAY, ["a1"]),
]);

const handler = (options: { statsOptOut?: string[] } = {}, data = { questions, stats }) =>
  apiHandler(memoryApiSources({ channels: ["help"], ...data }), { now: () => NOW, ...options });

const body = (response: { body: string }) => JSON.parse(response.body);

describe("GET /channels/{c}/stats", () => {
  it("computes the last week's figures by day from questions, answers and results", async () => {
    read.length = 0;
    const response = await handler()(get("/channels/help/stats"));
    expect(response.status).toBe(200);
    const page = StatsPage.parse(body(response));
    expect(page).toMatchObject({
      channel: "help",
      complete: true,
      since: NOW - 7 * DAY,
      until: NOW,
      bucket: "day",
      questions: 5,
      answered: 4,
      unanswered: 1,
      answeredShare: 0.8,
      // a1 an hour after q1, a2 two hours after q2; q3's only answer was erased, q4's has no time.
      firstAnswer: { measured: 2, medianMs: HOUR, p90Ms: 2 * HOUR },
      unansweredByAge: [
        { upToDays: 1, questions: 1 },
        { upToDays: 7, questions: 0 },
        { upToDays: 30, questions: 0 },
        { upToDays: null, questions: 0 },
      ],
      answerers: [
        { name: "Dee", answers: 1 },
        { name: "cat", answers: 1 },
      ],
      conversations: 2,
    });
    expect(page.buckets).toHaveLength(8);
    expect(page.buckets.map((b) => b.label).slice(-3)).toEqual([
      "2026-01-03",
      "2026-01-04",
      "2026-01-05",
    ]);
    // The answering messages of the period's answered questions, each once, in one read.
    expect(read).toEqual([["a1", "a2", "a3", "a4"]]);
  });

  it("never names a person who opted out, and buckets by ISO week on request", async () => {
    const response = await handler({ statsOptOut: ["dee"] })(
      get("/channels/help/stats?since=2025-12-01&until=2026-01-05&bucket=week"),
    );
    const page = StatsPage.parse(body(response));
    expect(page.answerers).toEqual([{ name: "cat", answers: 2 }]);
    expect(page.bucket).toBe("week");
    expect(page.buckets[0].label).toBe("2025-W49");
    expect(page.conversations).toBe(3);
  });

  it("reads no message when no question in the period was answered", async () => {
    read.length = 0;
    const page = body(
      await handler()(get("/channels/help/stats?since=2025-01-01&until=2025-02-01")),
    );
    expect(page).toMatchObject({ questions: 0, answeredShare: null, conversations: 0 });
    expect(read).toEqual([]);
  });

  it("says it is not complete past the answering messages it reads", async () => {
    const many = Array.from({ length: 5001 }, (_, i) => asked(i, NOW - HOUR, [`m${i}`]));
    const response = await handler(
      {},
      { questions: questionsOf(many), stats },
    )(get("/channels/help/stats"));
    expect(body(response)).toMatchObject({ complete: false, questions: 5000 });
  });

  it("answers 400 for a bad bucket or period, 404 for an unknown channel", async () => {
    const h = handler();
    const bucket = await h(get("/channels/help/stats?bucket=month"));
    expect([bucket.status, body(bucket).error.parameter]).toEqual([400, "bucket"]);
    const since = await h(get("/channels/help/stats?since=soon"));
    expect([since.status, body(since).error.parameter]).toEqual([400, "since"]);
    const other = await h(get("/channels/help/stats?other=1"));
    expect(other.status).toBe(400);
    const unknown = await h(get("/channels/nowhere/stats"));
    expect([unknown.status, body(unknown).error.code]).toEqual([404, "API_NOT_FOUND"]);
  });

  it("answers 501 without a questions index or a stats source", async () => {
    const bare = apiHandler(memoryApiSources({ channels: ["help"], stats }));
    const noQuestions = await bare(get("/channels/help/stats"));
    expect([noQuestions.status, body(noQuestions).error.code]).toEqual([501, "API_UNAVAILABLE"]);
    const noStats = await apiHandler(memoryApiSources({ channels: ["help"], questions }))(
      get("/channels/help/stats"),
    );
    expect(noStats.status).toBe(501);
    expect(body(noStats).error.message).toMatch(/^stats /);
  });
});
