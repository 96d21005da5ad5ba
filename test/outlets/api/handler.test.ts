/** The read API's handler over in-memory sources: routes, pages, cursors, ETags, hostile input. */

import {
  type ApiResponse,
  type ApiSources,
  apiHandler,
  entryBudget,
  memoryApiSources,
  type QuestionsSource,
} from "convoseg/api";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { get, result, support } from "./fixtures.js";

const body = (response: ApiResponse) => JSON.parse(response.body);

/** `sources` with every call counted. */
function counted(sources: ApiSources) {
  const calls: string[] = [];
  const wrap =
    <A extends unknown[], R>(name: string, f: (...args: A) => Promise<R>) =>
    (...args: A) => {
      calls.push(name);
      return f(...args);
    };
  return {
    calls,
    sources: {
      channels: wrap("channels", sources.channels),
      topicEntries: wrap("topicEntries", sources.topicEntries),
      topicIndex: wrap("topicIndex", sources.topicIndex),
      describe: wrap("describe", sources.describe),
      segment: wrap("segment", sources.segment),
      known: wrap("known", sources.known),
      ...(sources.questions && {
        questions: { questions: wrap("questions", sources.questions.questions) },
      }),
    } satisfies ApiSources,
  };
}

/** Every page of `path`, following cursors. */
async function allPages(handle: ReturnType<typeof apiHandler>, path: string, key: string) {
  const pages: Record<string, unknown>[][] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const response = await handle(
      get(cursor === null ? path : `${path}${sep}cursor=${encodeURIComponent(cursor)}`),
    );
    expect(response.status).toBe(200);
    const page = body(response);
    pages.push(page[key]);
    cursor = page.cursor;
  } while (cursor !== null && pages.length < 10_000);
  return pages;
}

describe("GET /channels", () => {
  it("pages through every channel once, in key order", async () => {
    const channels = Array.from({ length: 25 }, (_, i) => `c${String(i).padStart(2, "0")}`);
    const handle = apiHandler(memoryApiSources({ channels }));
    const pages = await allPages(handle, "/channels?limit=4", "channels");
    expect(pages.flat().map((c) => c.channel)).toEqual(channels);
  });

  it("says each channel's name, platform, message count and first and last message time, null where unknown", async () => {
    const handle = apiHandler(
      memoryApiSources({
        channels: [
          {
            channel: "C1",
            name: "general",
            platform: "slack",
            messages: 41,
            first: 1000,
            last: 5000,
          },
          "imported",
        ],
      }),
    );
    expect(body(await handle(get("/channels"))).channels).toEqual([
      { channel: "C1", name: "general", platform: "slack", messages: 41, first: 1000, last: 5000 },
      { channel: "imported", name: null, platform: null, messages: null, first: null, last: null },
    ]);
  });

  it("describes at most limit channels a page, however many one read holds", async () => {
    const channels = Array.from({ length: 9 }, (_, i) => `c${i}`);
    const { sources, calls } = counted(memoryApiSources({ channels }));
    const handle = apiHandler(sources);
    // The memory source, as a Scan of channels with marks items only, reads limit × 3 a page.
    const pages = await allPages(handle, "/channels?limit=2", "channels");
    expect(pages.map((p) => p.length)).toEqual([2, 2, 2, 2, 1]);
    expect(pages.flat().map((c) => c.channel)).toEqual(channels);
    expect(calls.filter((c) => c === "describe")).toHaveLength(channels.length);
  });
});

describe("GET /channels/{c}/topics", () => {
  it("in key order, returns every index entry exactly once over its pages, each page one read", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 40 })), {
          maxLength: 300,
        }),
        fc.integer({ min: 1, max: 12 }),
        async (pairs, limit) => {
          const unique = new Map(
            pairs.map(([t, s]) => [`${t}/${s}`, support("help", `topic ${t}`, s)]),
          );
          const { sources, calls } = counted(
            memoryApiSources({ channels: ["help"], supports: [...unique.values()] }),
          );
          const handle = apiHandler(sources);
          const pages = await allPages(
            handle,
            `/channels/help/topics?sort=key&limit=${limit}`,
            "topics",
          );
          const seen = pages
            .flat()
            .flatMap((t) =>
              (t.evidence as { segmentId: string; topic: string }[]).map(
                (e) => `${t.normalizedTopic}:${e.segmentId}`,
              ),
            );
          // Each topic has at most 41 entries, under any page's budget: nothing is partial.
          expect(pages.flat().every((t) => t.partial === false)).toBe(true);
          expect(new Set(seen).size).toBe(seen.length);
          expect(seen.length).toBe(unique.size);
          expect(pages.every((p) => p.length <= limit)).toBe(true);
          // One read a page; an empty channel is looked up once more, to tell it from no channel.
          expect(calls.filter((c) => c === "topicEntries").length).toBe(pages.length);
          expect(calls.includes("known")).toBe(unique.size === 0);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("in key order, returns a topic with more entries than a page reads alone, partial, and moves on", async () => {
    const supports = [
      ...Array.from({ length: 200 }, (_, i) => support("help", "big", i)),
      support("help", "small", 1),
    ];
    const handle = apiHandler(memoryApiSources({ supports }));
    const pages = await allPages(handle, "/channels/help/topics?sort=key&limit=1", "topics");
    const big = pages.flat().find((t) => t.topic === "big");
    expect(big).toMatchObject({ partial: true, segments: entryBudget(1) });
    expect(pages.flat().find((t) => t.topic === "small")).toMatchObject({
      partial: false,
      segments: 1,
    });
    expect(pages.flat()).toHaveLength(2);
  });

  it("answers 304 to If-None-Match with its ETag, and 200 once the page changed", async () => {
    const supports = [support("help", "deploys", 1)];
    const first = await apiHandler(memoryApiSources({ supports }))(get("/channels/help/topics"));
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = apiHandler(memoryApiSources({ supports }));
    expect((await again(get("/channels/help/topics", { "if-none-match": etag }))).status).toBe(304);
    expect(
      (await again(get("/channels/help/topics", { "if-none-match": `"x", W/${etag}` }))).status,
    ).toBe(304);
    const changed = apiHandler(
      memoryApiSources({ supports: [...supports, support("help", "deploys", 2)] }),
    );
    const fresh = await changed(get("/channels/help/topics", { "if-none-match": etag }));
    expect(fresh.status).toBe(200);
    expect(fresh.headers.etag).not.toBe(etag);
  });
});

describe("cursors", () => {
  const supports = Array.from({ length: 10 }, (_, i) => support("help", `topic ${i}`, i));
  const firstCursor = async () =>
    body(await apiHandler(memoryApiSources({ supports }))(get("/channels/help/topics?limit=2")))
      .cursor as string;

  it("refuses a forged, edited, or another channel's or route's cursor as a 400 naming cursor, reading nothing", async () => {
    const cursor = await firstCursor();
    const [payload, tag] = cursor.split(".");
    const forged = Buffer.from(JSON.stringify([1, "0000000000000000"])).toString("base64url");
    const attempts = [
      `/channels/help/topics?cursor=${forged}.${tag}`,
      `/channels/help/topics?cursor=${payload}.${tag.slice(0, -1)}A`,
      `/channels/help/topics?cursor=${payload}`,
      `/channels/other/topics?cursor=${cursor}`,
      `/channels?cursor=${cursor}`,
      `/channels/help/topics?cursor=${"a".repeat(1500)}`,
      `/channels/help/topics?cursor=`,
    ];
    for (const path of attempts) {
      const { sources, calls } = counted(memoryApiSources({ supports }));
      const response = await apiHandler(sources)(get(path));
      expect({ path, status: response.status }).toEqual({ path, status: 400 });
      expect(body(response).error).toMatchObject({ code: "API_BAD_CURSOR", parameter: "cursor" });
      expect(calls).toEqual([]);
    }
  });

  it("refuses a cursor signed with another key", async () => {
    const signed = apiHandler(memoryApiSources({ supports }), { cursorKey: "k1" });
    const cursor = body(await signed(get("/channels/help/topics?limit=2"))).cursor;
    const other = apiHandler(memoryApiSources({ supports }), { cursorKey: "k2" });
    expect((await other(get(`/channels/help/topics?cursor=${cursor}`))).status).toBe(400);
    expect((await signed(get(`/channels/help/topics?cursor=${cursor}`))).status).toBe(200);
  });
});

describe("GET /channels/{c}/questions", () => {
  const asked = Array.from({ length: 7 }, (_, i) => ({
    question: `question ${i}?`,
    askedId: `q${i}`,
    askedTs: i,
    status: i % 2 === 0 ? ("unanswered" as const) : ("answered" as const),
    answerIds: [],
    segmentId: `s${i}`,
    embedding: "not in the contract",
  }));
  /** The port's shape, in memory: its own cursor is an index. */
  const port: QuestionsSource = {
    async questions(_channel, { status, limit = 20, cursor }) {
      const matching = asked.filter((q) => status === undefined || q.status === status);
      const from = cursor === undefined ? 0 : Number(cursor);
      const items = matching.slice(from, from + limit);
      return { items, cursor: from + limit < matching.length ? String(from + limit) : null };
    },
  };

  it("pages one status through the port, wrapping its cursors, with the contract's fields only", async () => {
    const handle = apiHandler(memoryApiSources({ questions: port }));
    const pages = await allPages(
      handle,
      "/channels/help/questions?status=unanswered&limit=2",
      "questions",
    );
    expect(pages.flat().map((q) => q.askedId)).toEqual(["q0", "q2", "q4", "q6"]);
    expect(pages.flat()[0]).not.toHaveProperty("embedding");
  });

  it("binds a cursor to its status", async () => {
    const handle = apiHandler(memoryApiSources({ questions: port }));
    const { cursor } = body(await handle(get("/channels/help/questions?status=answered&limit=1")));
    const response = await handle(
      get(`/channels/help/questions?status=unanswered&cursor=${cursor}`),
    );
    expect(response.status).toBe(400);
  });

  it("is a 501 without a questions source, and a 400 for an unknown status", async () => {
    const handle = apiHandler(memoryApiSources({}));
    const missing = await handle(get("/channels/help/questions"));
    expect([missing.status, body(missing).error.code]).toEqual([501, "API_UNAVAILABLE"]);
    const bad = await apiHandler(memoryApiSources({ questions: port }))(
      get("/channels/help/questions?status=open"),
    );
    expect(body(bad).error).toMatchObject({ code: "API_BAD_PARAMETER", parameter: "status" });
  });
});

describe("GET /channels/{c}/segments/{id}", () => {
  const handle = apiHandler(
    memoryApiSources({
      results: [result("help", "s1"), { ...result("help", "s2"), messageIds: undefined }],
    }),
  );

  it("returns the result's contract fields and its message ids", async () => {
    const found = body(await handle(get("/channels/help/segments/s1")));
    expect(found).toMatchObject({ segmentId: "s1", messageIds: ["m1", "m2"], count: 2 });
    expect(found).not.toHaveProperty("windows");
    expect(found).not.toHaveProperty("usage");
    expect(found.candidates[0]).not.toHaveProperty("authors");
    expect(body(await handle(get("/channels/help/segments/s2"))).messageIds).toBeNull();
  });

  it("is a 404 for a segment the channel does not have", async () => {
    const response = await handle(get("/channels/other/segments/s1"));
    expect([response.status, body(response).error.code]).toEqual([404, "API_NOT_FOUND"]);
  });
});

describe("hostile requests", () => {
  const secret = "my password is hunter2";
  const handle = apiHandler(memoryApiSources({ supports: [support("help", "x", 1)] }));
  const cases: [string, number, string | undefined][] = [
    [`/channels/${encodeURIComponent(`\u0000${secret}`)}/topics`, 400, "channel"],
    [`/channels/${encodeURIComponent(` ${secret}`)}/topics`, 400, "channel"],
    [`/channels/${"a".repeat(300)}/topics`, 400, "channel"],
    [`/channels/%E0%A4%A/topics`, 400, "path"],
    [`/channels/help/topics?limit=0`, 400, "limit"],
    [`/channels/help/topics?limit=101`, 400, "limit"],
    [`/channels/help/topics?limit=1e2`, 400, "limit"],
    [`/channels/help/topics?limit=2&limit=3`, 400, "limit"],
    [`/channels/help/topics?${encodeURIComponent(secret)}=1`, 400, "query"],
    [`/channels/help/topics?q=${"x".repeat(3000)}`, 400, "query"],
    [`/channels/help/segments/s1?x=1`, 400, "query"],
    [`/channels/help/digest?since=${encodeURIComponent(secret)}`, 400, "since"],
    [`/channels/help/digest?until=${encodeURIComponent(secret)}`, 400, "until"],
    [`/channels/help/digest/x`, 404, undefined],
    [`/${secret}`, 404, undefined],
  ];
  it.each(cases)(
    "%s is a %i naming %s, echoing nothing it was sent",
    async (path, status, parameter) => {
      const response = await handle(get(path));
      expect(response.status).toBe(status);
      const { error } = body(response);
      expect(error.parameter).toBe(parameter);
      expect(response.body).not.toContain("hunter2");
      expect(response.body).not.toContain("xxxxxxxx");
    },
  );

  it("answers 404 naming a channel nothing is kept of, and 200 for a known one with nothing yet", async () => {
    const { sources, calls } = counted(
      memoryApiSources({ channels: ["quiet"], supports: [support("help", "grub", 1)] }),
    );
    const handle = apiHandler(sources);
    const typo = await handle(get("/channels/hlep/topics"));
    expect(typo.status).toBe(404);
    expect(body(typo).error).toMatchObject({
      code: "API_NOT_FOUND",
      message: 'channel "hlep" not found',
    });
    expect((await handle(get("/channels/quiet/topics"))).status).toBe(200);
    // A page with topics is not looked up again: the lookup costs only empty pages.
    calls.length = 0;
    expect((await handle(get("/channels/help/topics"))).status).toBe(200);
    expect(calls).not.toContain("known");
  });

  it("answers 405 to anything but GET and HEAD", async () => {
    const response = await handle({ ...get("/channels"), method: "DELETE" });
    expect([response.status, response.headers.allow]).toEqual([405, "GET, HEAD"]);
    // Logged as what was sent, not as the GET it was refused for.
    expect(response.route).toBe("DELETE /channels");
    expect((await handle({ ...get("/channels"), method: "BREW\n" })).route).toBe("OTHER /channels");
    expect((await handle(get("/channels"))).route).toBe("GET /channels");
  });

  it("reads a percent-encoded channel id as its id", async () => {
    const sources = memoryApiSources({ supports: [support("a/b #c", "x", 1)] });
    const response = await apiHandler(sources)(
      get(`/channels/${encodeURIComponent("a/b #c")}/topics`),
    );
    expect(body(response).topics).toHaveLength(1);
  });
});

describe("npm start -- serve", () => {
  it("refuses a non-loopback host without --allow-remote, saying why (exit 2, nothing opened)", async () => {
    const { runCli } = await import("../../support/cli.js");
    const result = await runCli(["serve", "--host", "0.0.0.0", "--workspace", "/nonexistent"], 0);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/not a loopback address.*--allow-remote/);
    const port = await runCli(["serve", "--port", "70000"], 0);
    expect([port.code, port.stderr]).toEqual([2, expect.stringMatching(/--port must be/)]);
  });
});
