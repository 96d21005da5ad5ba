/** `GET /search` over a search source that holds a ranked list: parameters, pages, cursors. */
import { apiHandler, memoryApiSources, type SearchSource } from "convoseg/api";
import type { SearchHit, SearchQuery } from "convoseg/search";
import { describe, expect, it } from "vitest";
import { get } from "./fixtures.js";

const NOW = Date.UTC(2026, 0, 31);

const hit = (n: number): SearchHit => ({
  id: `message:help:m${n}`,
  kind: "message",
  channel: "help",
  ts: NOW - n,
  author: "ana",
  authorId: "U1",
  title: "",
  status: "",
  segment: "s1",
  evidence: [`m${n}`],
  permalink: "",
  score: 100 - n,
  snippet: `wifi ${n}`,
  marks: [[0, 4]],
});

/** A source of 45 hits for any query, recording what it was asked. */
function ranked(): { source: SearchSource; asked: SearchQuery[] } {
  const asked: SearchQuery[] = [];
  const all = Array.from({ length: 45 }, (_, n) => hit(n));
  return {
    asked,
    source: {
      async search(query) {
        asked.push(query);
        const offset = query.offset ?? 0;
        return all.slice(offset, offset + (query.limit ?? 20));
      },
    },
  };
}

const handlerWith = (source?: SearchSource) =>
  apiHandler(memoryApiSources({ ...(source && { search: source }) }), { now: () => NOW });
const body = (response: { body: string }) => JSON.parse(response.body);

describe("GET /search", () => {
  it("pages through the hits best first, each page asking one past it, the cursor bound to the query", async () => {
    const { source, asked } = ranked();
    const handle = handlerWith(source);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const suffix: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
      const response = await handle(get(`/search?q=wifi&limit=20${suffix}`));
      expect(response.status).toBe(200);
      const page = body(response);
      seen.push(...page.hits.map((h: SearchHit) => h.id));
      cursor = page.cursor;
    } while (cursor !== null);
    expect(seen).toEqual(Array.from({ length: 45 }, (_, n) => `message:help:m${n}`));
    expect(asked.map((q) => [q.offset, q.limit])).toEqual([
      [0, 21],
      [20, 21],
      [40, 21],
    ]);
    const first = body(await handle(get("/search?q=wifi&limit=20")));
    const other = await handle(get(`/search?q=grub&limit=20&cursor=${first.cursor}`));
    expect([other.status, body(other).error.parameter]).toEqual([400, "cursor"]);
  });

  it("passes its filters on: channels and kinds repeated, times from now", async () => {
    const { source, asked } = ranked();
    const handle = handlerWith(source);
    const response = await handle(
      get(
        "/search?q=wifi+driver&channel=ops&channel=help&kind=question&status=unanswered&since=2d&until=2026-01-30&author=U1",
      ),
    );
    expect(response.status).toBe(200);
    expect(asked[0]).toEqual({
      text: "wifi driver",
      channels: ["help", "ops"],
      kinds: ["question"],
      status: "unanswered",
      since: NOW - 2 * 86_400_000,
      until: Date.UTC(2026, 0, 30),
      authorId: "U1",
      limit: 21,
      offset: 0,
    });
    // Only the contract's fields: nothing else a source's hits carry.
    expect(Object.keys(body(response).hits[0]).sort()).toEqual(Object.keys(hit(0)).sort());
  });

  it("refuses what it cannot take, naming the parameter, before asking the source", async () => {
    const { source, asked } = ranked();
    const handle = handlerWith(source);
    const refused = async (query: string) => {
      const response = await handle(get(`/search?${query}`));
      expect(response.status, query).toBe(400);
      return body(response).error.parameter;
    };
    expect(await refused("")).toBe("q");
    expect(await refused("q=%20")).toBe("q");
    expect(await refused(`q=${"a".repeat(501)}`)).toBe("q");
    expect(await refused("q=x&kind=thread")).toBe("kind");
    expect(await refused("q=x&status=open")).toBe("status");
    expect(await refused("q=x&status=answered&status=unclear")).toBe("status");
    expect(await refused("q=x&since=yesterday")).toBe("since");
    expect(await refused("q=x&until=2y")).toBe("until");
    expect(await refused("q=x&until=366d")).toBe("until");
    expect(await refused("q=x&limit=51")).toBe("limit");
    expect(await refused("q=x&sort=new")).toBe("query");
    expect(
      await refused(`q=x&${Array.from({ length: 21 }, (_, i) => `channel=c${i}`).join("&")}`),
    ).toBe("channel");
    expect(await refused("q=x&channel=%20c")).toBe("channel");
    expect(await refused("q=x&author=%20u")).toBe("author");
    expect(
      await refused("q=x&kind=message&kind=topic&kind=question&kind=conversation&kind=message"),
    ).toBe("kind");
    expect(await refused(`q=x&${"a=b&".repeat(600)}`)).toBe("query");
    expect(asked).toEqual([]);
  });

  it("takes times as zoned ISO times too, and ends the pages at the thousandth hit", async () => {
    const asked: SearchQuery[] = [];
    const endless: SearchSource = {
      async search(query) {
        asked.push(query);
        return Array.from({ length: query.limit ?? 20 }, (_, n) => hit(n + (query.offset ?? 0)));
      },
    };
    const handle = handlerWith(endless);
    const response = await handle(get("/search?q=wifi&since=2026-01-30T12:00Z&limit=50"));
    expect(response.status).toBe(200);
    expect(asked[0]?.since).toBe(Date.UTC(2026, 0, 30, 12));
    let cursor: string | null = body(response).cursor;
    let pages = 1;
    while (cursor !== null && pages < 100) {
      const page = body(
        await handle(
          get(
            `/search?q=wifi&since=2026-01-30T12:00Z&limit=50&cursor=${encodeURIComponent(cursor)}`,
          ),
        ),
      );
      cursor = page.cursor;
      pages++;
    }
    // Offsets 0 to 1000 by 50: the page at 1000 is the last one a cursor leads to.
    expect(pages).toBe(21);
    expect(asked.at(-1)?.offset).toBe(1000);
  });

  it("answers 501 where the sources keep no search index", async () => {
    const response = await handlerWith()(get("/search?q=wifi"));
    expect([response.status, body(response).error.code]).toEqual([501, "API_UNAVAILABLE"]);
  });
});
