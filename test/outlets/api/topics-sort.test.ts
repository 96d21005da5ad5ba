/**
 * `GET /channels/{c}/topics?sort=`: `support` (the default) ranks the whole topic index as
 * `npm start -- topics` does, so that `?limit=3` is the top three (issue 40 §6); `key` pages the
 * index in its own order, one read a page.
 */
import type { ApiResponse, ApiSources } from "convoseg/api";
import { apiHandler, memoryApiSources } from "convoseg/api";
import { mergeSupports } from "convoseg/knowledge/read";
import type { TopicSupport } from "convoseg/knowledge/store";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { get, support } from "./fixtures.js";

const body = (response: ApiResponse) => JSON.parse(response.body);

/** `count` segments supporting each topic: topic `t<i>` in `counts[i]` segments. */
const supportsOf = (counts: readonly number[]): TopicSupport[] =>
  counts.flatMap((count, i) =>
    Array.from({ length: count }, (_, s) => support("help", `t${i}`, i * 100 + s)),
  );

/** The topic names of every page of `path`, following cursors, and how many pages. */
async function walk(handle: ReturnType<typeof apiHandler>, path: string) {
  const names: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const response = await handle(
      get(cursor === null ? path : `${path}&cursor=${encodeURIComponent(cursor)}`),
    );
    expect(response.status).toBe(200);
    const page = body(response);
    names.push(...page.topics.map((t: { topic: string }) => t.topic));
    cursor = page.cursor;
    pages++;
  } while (cursor !== null && pages < 1000);
  return { names, pages };
}

describe("GET /channels/{c}/topics?sort=support", () => {
  it("is the default: limit=3 is the three most supported, as npm start -- topics ranks them", async () => {
    const supports = supportsOf([1, 5, 2, 7, 1, 3]);
    const handle = apiHandler(memoryApiSources({ supports }));
    const page = body(await handle(get("/channels/help/topics?limit=3")));
    expect(page).toMatchObject({ channel: "help", sort: "support", complete: true });
    expect(page.topics.map((t: { topic: string }) => t.topic)).toEqual(["t3", "t1", "t5"]);
    expect(page.topics.map((t: { segments: number }) => t.segments)).toEqual([7, 5, 3]);
    // The same order as the CLI's reader, which merges and ranks the whole index.
    const ranked = mergeSupports(supports).map((t) => t.topic);
    expect(page.topics.map((t: { topic: string }) => t.topic)).toEqual(ranked.slice(0, 3));
  });

  it("pages the whole ranking once, in order, one index read a page", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 6 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 7 }),
        async (counts, limit) => {
          const supports = supportsOf(counts);
          const calls: string[] = [];
          const memory = memoryApiSources({ channels: ["help"], supports });
          const sources: ApiSources = {
            ...memory,
            topicIndex: (channel, options) => {
              calls.push("topicIndex");
              return memory.topicIndex(channel, options);
            },
          };
          const { names, pages } = await walk(
            apiHandler(sources),
            `/channels/help/topics?sort=support&limit=${limit}`,
          );
          expect(names).toEqual(mergeSupports(supports).map((t) => t.topic));
          expect(calls).toHaveLength(pages);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("resumes after the page's last rank when the index changed between pages", async () => {
    const before = supportsOf([4, 3, 2, 1]);
    const first = body(
      await apiHandler(memoryApiSources({ supports: before }))(
        get("/channels/help/topics?limit=2"),
      ),
    );
    expect(first.topics.map((t: { topic: string }) => t.topic)).toEqual(["t0", "t1"]);
    const next = async (supports: TopicSupport[]) =>
      body(
        await apiHandler(memoryApiSources({ supports }))(
          get(`/channels/help/topics?limit=2&cursor=${first.cursor}`),
        ),
      ).topics.map((t: { topic: string }) => t.topic);
    // t1, the page's last, gained a segment (its rank moved up) or was erased: no repeat, no skip.
    expect(await next([...before, support("help", "t1", 999)])).toEqual(["t2", "t3"]);
    expect(await next(before.filter((s) => s.topic !== "t1"))).toEqual(["t2", "t3"]);
  });

  it("ranks at most RANKED_ENTRIES entries, says so, and leaves out the topic the bound cut", async () => {
    // 10,001 entries: t0's 10,000 and t1's one, which sorts before or after them by its hash.
    const supports = supportsOf([1, 1]).concat(
      Array.from({ length: 9_999 }, (_, s) => support("help", "t0", 1000 + s)),
    );
    const page = body(
      await apiHandler(memoryApiSources({ supports }))(get("/channels/help/topics")),
    );
    expect(page.complete).toBe(false);
    // The read ends inside t0 either way: t0 is left out, unless it is all that was read.
    const expected = [
      { topic: "t1", segments: 1, partial: false },
      { topic: "t0", segments: 10_000, partial: true },
    ];
    expect(expected).toContainEqual(
      expect.objectContaining({
        topic: page.topics[0].topic,
        segments: page.topics[0].segments,
        partial: page.topics[0].partial,
      }),
    );
    expect(page.topics).toHaveLength(1);
  });
});

describe("GET /channels/{c}/topics?sort=", () => {
  const supports = supportsOf([1, 3, 2]);
  const handle = apiHandler(memoryApiSources({ supports }));

  it("refuses an unknown order as a 400 naming sort and the orders it takes", async () => {
    const response = await handle(get("/channels/help/topics?sort=top"));
    expect(response.status).toBe(400);
    expect(body(response).error).toEqual({
      code: "API_BAD_PARAMETER",
      message: "sort: must be one of support, key",
      parameter: "sort",
    });
  });

  it("gives each order its own ETag and its own cursors", async () => {
    const bySupport = await handle(get("/channels/help/topics?sort=support&limit=1"));
    const byKey = await handle(get("/channels/help/topics?sort=key&limit=1"));
    expect(body(byKey)).toMatchObject({ sort: "key" });
    expect(body(byKey)).not.toHaveProperty("complete");
    expect(bySupport.headers.etag).not.toBe(byKey.headers.etag);
    const notModified = await handle(
      get("/channels/help/topics?limit=1", { "if-none-match": bySupport.headers.etag }),
    );
    expect(notModified.status).toBe(304);
    const crossed = await handle(
      get(`/channels/help/topics?sort=key&cursor=${body(bySupport).cursor}`),
    );
    expect(body(crossed).error).toMatchObject({ code: "API_BAD_CURSOR" });
    const back = await handle(
      get(`/channels/help/topics?sort=support&cursor=${body(byKey).cursor}`),
    );
    expect(body(back).error).toMatchObject({ code: "API_BAD_CURSOR" });
  });
});
