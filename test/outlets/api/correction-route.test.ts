/**
 * `POST /channels/{c}/questions/{id}/correction` over a memory results store: recorded, then
 * shown by the questions route; a bad body names its field; GET is refused, as is POST on a
 * read route; a server that may not write answers 501.
 */
import { apiHandler, memoryApiSources, storeCorrections, storeStatsSource } from "convoseg/api";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { MemoryResultStore } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { CorrectionResult, QuestionsPage } from "../../../lib/outlets/api/schemas.js";
import { question, resultWith, save } from "../../knowledge/question-index.js";

const NOW = Date.UTC(2026, 6, 10);
const PATH = "/channels/help/questions/wifi/correction";

async function served(writes = true) {
  const store = new MemoryResultStore();
  await save(
    store,
    resultWith("help", "s1", [
      question("grub", NOW - 2000),
      question("wifi", NOW - 1000, "answered", { answer: "6.8", answerIds: ["m-7"] }),
    ]),
  );
  const messages = {
    getMessages: async (_c: string, ids: readonly string[]) =>
      ids.filter((id) => id.startsWith("m-")).map((id) => ({ id })),
  };
  const handle = apiHandler(
    memoryApiSources({
      channels: ["help"],
      questions: new KnowledgeReader({ store }),
      stats: storeStatsSource(store, {
        getMessages: async (_c, ids) => ids.map((id) => ({ id, ts: NOW, author: "bob" })),
      }),
      ...(writes && { corrections: storeCorrections(store, { messages, now: () => NOW }) }),
    }),
    { now: () => NOW + 1000 },
  );
  const post = (body: unknown, path = PATH) =>
    handle({
      method: "POST",
      rawPath: path,
      rawQuery: "",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const questions = async (status = "") => {
    const response = await handle({
      method: "GET",
      rawPath: "/channels/help/questions",
      rawQuery: status,
      headers: {},
    });
    return QuestionsPage.parse(JSON.parse(response.body)).questions;
  };
  const stats = async () => {
    const response = await handle({
      method: "GET",
      rawPath: "/channels/help/stats",
      rawQuery: "since=7d",
      headers: {},
    });
    return JSON.parse(response.body) as { questions: number; answered: number };
  };
  return { handle, post, questions, stats };
}

describe("POST /channels/{c}/questions/{id}/correction", () => {
  it("records a correction, answers with the question as reads now show it, and the questions route shows it corrected", async () => {
    const { post, questions, stats } = await served();
    expect(await stats()).toMatchObject({ questions: 2, answered: 1 });
    const reopened = await post({ action: "reopen", by: "U42" });
    expect(reopened.status, reopened.body).toBe(200);
    expect(reopened.headers["cache-control"]).toBe("no-store");
    expect(reopened.route).toBe("POST /channels/{c}/questions/{id}/correction");
    const body = CorrectionResult.parse(JSON.parse(reopened.body));
    expect(body).toMatchObject({
      channel: "help",
      questionId: "wifi",
      correction: { action: "reopen", by: "U42", at: new Date(NOW).toISOString() },
      question: { id: "wifi", status: "unanswered", answerIds: [], corrected: true },
    });
    expect((await questions("status=unanswered")).map((q) => [q.id, q.correction?.by])).toEqual([
      ["grub", undefined],
      ["wifi", "U42"],
    ]);
    expect(await questions("status=answered")).toEqual([]);
    // The community's health counts the person's word: none answered now.
    expect(await stats()).toMatchObject({ questions: 2, answered: 0 });
    const answered = await post({ action: "answered", answerId: "m-9" });
    expect(JSON.parse(answered.body).question).toMatchObject({ answerIds: ["m-9"] });
    const hidden = await post({ action: "hidden" });
    expect(JSON.parse(hidden.body).question).toBeNull();
    expect((await questions()).map((q) => q.id)).toEqual(["grub"]);
  });

  it("names the field at fault in a bad body, and says an unknown question is not found", async () => {
    const { post, handle } = await served();
    const refused = async (body: unknown, path?: string) => {
      const response = await post(body, path);
      const { error } = JSON.parse(response.body);
      return [response.status, error.code, error.parameter];
    };
    expect(await refused("")).toEqual([400, "API_BAD_BODY", "body"]);
    expect(await refused("{")).toEqual([400, "API_BAD_BODY", "body"]);
    expect(await refused([1])).toEqual([400, "API_BAD_BODY", "body"]);
    expect(await refused({ action: "close" })).toEqual([400, "API_BAD_BODY", "body.action"]);
    expect(await refused({ action: "reopen", extra: 1 })).toEqual([400, "API_BAD_BODY", "body"]);
    expect(await refused({ action: "answered" })).toEqual([400, "API_BAD_BODY", "body.answerId"]);
    expect(await refused({ action: "hidden", answerId: "m-1" })).toEqual([
      400,
      "API_BAD_BODY",
      "body.answerId",
    ]);
    expect(await refused({ action: "reopen", by: 7 })).toEqual([400, "API_BAD_BODY", "body.by"]);
    // The answering message must be one of the channel's.
    expect(await refused({ action: "answered", answerId: "x-1" })).toEqual([
      400,
      "API_BAD_BODY",
      "body.answerId",
    ]);
    const other = "/channels/help/questions/nope/correction";
    expect(await refused({ action: "reopen" }, other)).toEqual([404, "API_NOT_FOUND", undefined]);
    expect((await post("x".repeat(5000))).status).toBe(400);
    // Not JSON by its type: a page's cross-origin form post is refused before anything is read.
    const plain = await handle({
      method: "POST",
      rawPath: PATH,
      rawQuery: "",
      headers: { "content-type": "text/plain" },
      body: '{"action":"hidden"}',
    });
    expect([plain.status, JSON.parse(plain.body).error.parameter]).toEqual([400, "content-type"]);
  });

  it("takes POST only, on the write route only; a server that may not write answers 501", async () => {
    const { handle } = await served();
    const get = await handle({ method: "GET", rawPath: PATH, rawQuery: "", headers: {} });
    expect([get.status, get.headers.allow]).toEqual([405, "POST"]);
    const onRead = await handle({
      method: "POST",
      rawPath: "/channels/help/questions",
      rawQuery: "",
      headers: {},
      body: "{}",
    });
    expect([onRead.status, onRead.headers.allow]).toEqual([405, "GET, HEAD"]);
    const readOnly = await served(false);
    const refused = await readOnly.post({ action: "reopen" });
    expect([refused.status, JSON.parse(refused.body).error.code]).toEqual([501, "API_UNAVAILABLE"]);
  });
});
