/** `GET /channels/{c}/faq` over a questions source: grouped across its pages, bounded, schema-true. */
import { apiHandler, memoryApiSources, type QuestionsSource } from "convoseg/api";
import { describe, expect, it } from "vitest";
import { FaqPage } from "../../../lib/outlets/api/schemas.js";
import { get } from "./fixtures.js";

const asked = (question: string, i: number, answer?: string) => ({
  question,
  askedId: `q${i}`,
  askedTs: 1000 * i,
  status: answer === undefined ? ("unanswered" as const) : ("answered" as const),
  ...(answer !== undefined && { answer }),
  answerIds: answer === undefined ? [] : [`a${i}`],
  segmentId: `s${i}`,
});

/** A source over `items` that pages by index, recording the limits it was asked for. */
function source(items: ReturnType<typeof asked>[]): { port: QuestionsSource; limits: number[] } {
  const limits: number[] = [];
  return {
    limits,
    port: {
      async questions(_channel, { limit = 20, cursor }) {
        limits.push(limit);
        const from = cursor === undefined ? 0 : Number(cursor);
        const page = items.slice(from, from + Math.min(limit, 3));
        const next = from + page.length;
        return { items: page, cursor: next < items.length ? String(next) : null };
      },
    },
  };
}

const body = (response: { body: string }) => JSON.parse(response.body);

describe("GET /channels/{c}/faq", () => {
  it("groups the channel's questions across the source's pages, most asked first", async () => {
    const { port } = source([
      asked("how do I install nvidia drivers?", 1),
      asked("wifi not working after suspend", 2),
      asked("how to install the nvidia driver", 3, "ubuntu-drivers install"),
      asked("wireless doesn't work after suspend", 4),
      asked("installing nvidia drivers, how?", 5),
      asked("what is a kernel", 6),
      asked("how do I uninstall nvidia drivers", 7),
    ]);
    const handle = apiHandler(memoryApiSources({ questions: port }));
    const response = await handle(get("/channels/help/faq"));
    expect(response.status).toBe(200);
    const page = body(response);
    expect(FaqPage.parse(page)).toEqual(page);
    expect(page).toMatchObject({ channel: "help", questions: 7, complete: true });
    expect(page.faq.map((e: { question: string; count: number }) => [e.question, e.count])).toEqual(
      [
        ["how do I install nvidia drivers?", 3],
        ["wifi not working after suspend", 2],
      ],
    );
    expect(page.faq[0].answer).toEqual({
      text: "ubuntu-drivers install",
      askedId: "q3",
      answerIds: ["a3"],
      corrected: false,
    });
    const one = body(await handle(get("/channels/help/faq?limit=1")));
    expect(one.faq).toHaveLength(1);
  });

  it("says a channel with nothing kept apart, refuses other parameters, and needs a source", async () => {
    const { port } = source([]);
    const handle = apiHandler(memoryApiSources({ questions: port, channels: ["quiet"] }));
    const quiet = body(await handle(get("/channels/quiet/faq")));
    expect(quiet).toEqual({ channel: "quiet", questions: 0, complete: true, faq: [] });
    const unknown = await handle(get("/channels/nope/faq"));
    expect(unknown.status).toBe(404);
    const bad = await handle(get("/channels/quiet/faq?status=answered"));
    expect(bad.status).toBe(400);
    const big = await handle(get("/channels/quiet/faq?limit=101"));
    expect(body(big).error).toMatchObject({ code: "API_BAD_PARAMETER", parameter: "limit" });
    const missing = await apiHandler(memoryApiSources({}))(get("/channels/quiet/faq"));
    expect([missing.status, body(missing).error.code]).toEqual([501, "API_UNAVAILABLE"]);
  });

  it("reads at most 5,000 questions and says when there were more", async () => {
    const many = Array.from({ length: 5001 }, (_, i) => asked("how do I mount a usb drive", i));
    const limits: number[] = [];
    const port: QuestionsSource = {
      async questions(_channel, { limit = 20, cursor }) {
        limits.push(limit);
        const from = cursor === undefined ? 0 : Number(cursor);
        const next = from + limit;
        return { items: many.slice(from, next), cursor: next < many.length ? String(next) : null };
      },
    };
    const page = body(
      await apiHandler(memoryApiSources({ questions: port }))(get("/channels/help/faq")),
    );
    expect(page).toMatchObject({ questions: 5000, complete: false });
    expect(page.faq[0]).toMatchObject({ count: 5000, moreAsked: 4990 });
    expect(limits).toEqual([1000, 1000, 1000, 1000, 1000]);
  });
});
