/**
 * `GET /channels/{c}/digest` over HTTP on 127.0.0.1: the period asked of the source (durations
 * back from now, ISO dates and times for imported history), caps, ETags, 501.
 */

import { apiHandler, DIGEST_PERIOD, memoryApiSources } from "convoseg/api";
import type { Digest } from "convoseg/digest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiServer, startApiServer } from "../../../cli/serve/serve-http.js";
import { digest } from "../digest/schedule-fixtures.js";

const NOW = Date.UTC(2026, 10, 30, 8, 0, 42, 123);
const asked: { channel: string; since: number; until: number }[] = [];
let served: ApiServer;
let bare: ApiServer;

beforeAll(async () => {
  const source = {
    digest: async (channel: string, period: { since: number; until: number }): Promise<Digest> => {
      asked.push({ channel, ...period });
      return digest({ channels: [channel], ...period });
    },
  };
  served = await startApiServer({
    handler: apiHandler(memoryApiSources({ channels: ["help", "a/b"], digest: source }), {
      now: () => NOW,
    }),
    host: "127.0.0.1",
    port: 0,
  });
  bare = await startApiServer({
    handler: apiHandler(memoryApiSources({ channels: ["help"] })),
    host: "127.0.0.1",
    port: 0,
  });
});

afterAll(async () => {
  await served?.close();
  await bare?.close();
});

const NOW_MINUTE = Math.floor(NOW / 60_000) * 60_000;

describe("GET /channels/{c}/digest", () => {
  it("builds the last 7 days by default, ending at the current minute", async () => {
    asked.length = 0;
    const response = await fetch(`${served.url}/channels/help/digest`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Digest;
    expect(asked).toEqual([
      { channel: "help", since: NOW_MINUTE - DIGEST_PERIOD.defaultMs, until: NOW_MINUTE },
    ]);
    expect(body).toMatchObject({ v: 1, channels: ["help"], until: NOW_MINUTE });
    expect(body.topics.map((t) => t.kind)).toEqual(["new", "recurring"]);
  });

  it("takes ?since= as a duration back from now, and a percent-encoded channel", async () => {
    asked.length = 0;
    const response = await fetch(`${served.url}/channels/a%2Fb/digest?since=36h`);
    expect(response.status).toBe(200);
    expect(asked).toEqual([
      { channel: "a/b", since: NOW_MINUTE - 36 * 3_600_000, until: NOW_MINUTE },
    ]);
  });

  it("answers 304 to the ETag it gave while nothing changed", async () => {
    const first = await fetch(`${served.url}/channels/help/digest?since=2d`);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"/);
    const again = await fetch(`${served.url}/channels/help/digest?since=2d`, {
      headers: { "if-none-match": etag as string },
    });
    expect(again.status).toBe(304);
  });

  it("refuses a since too long, too short or malformed, and unknown parameters, unread", async () => {
    asked.length = 0;
    for (const since of [
      "367d",
      "53w",
      "30m",
      "7 days",
      "-1d",
      "",
      "1e3d",
      "3600000",
      "2026-13-01",
    ]) {
      const response = await fetch(
        `${served.url}/channels/help/digest?since=${encodeURIComponent(since)}`,
      );
      expect(response.status, since).toBe(400);
      const body = (await response.json()) as { error: { code: string; parameter: string } };
      expect(body.error).toMatchObject({ code: "API_BAD_PARAMETER", parameter: "since" });
      expect(JSON.stringify(body)).not.toContain(since || "\u0000");
    }
    const unknown = await fetch(`${served.url}/channels/help/digest?from=2018-05-29`);
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: { parameter: "query" } });
    expect(asked).toEqual([]);
  });

  it("takes ?since= and ?until= as ISO dates or times: imported history's week", async () => {
    asked.length = 0;
    const week = await fetch(
      `${served.url}/channels/help/digest?since=2018-05-23&until=2018-05-30`,
    );
    const back = await fetch(`${served.url}/channels/help/digest?since=3d&until=2018-06-01T12:00Z`);
    const year = await fetch(`${served.url}/channels/help/digest?since=366d`);

    expect([week.status, back.status, year.status]).toEqual([200, 200, 200]);
    expect(await week.json()).toMatchObject({
      since: Date.UTC(2018, 4, 23),
      until: Date.UTC(2018, 4, 30),
    });
    // A duration as since counts back from until; until as a duration or absent, from now.
    expect(asked).toEqual([
      { channel: "help", since: Date.UTC(2018, 4, 23), until: Date.UTC(2018, 4, 30) },
      { channel: "help", since: Date.UTC(2018, 4, 29, 12), until: Date.UTC(2018, 5, 1, 12) },
      { channel: "help", since: NOW_MINUTE - 366 * 86_400_000, until: NOW_MINUTE },
    ]);
  });

  it("keeps a dated period's ETag whenever it is asked, and answers 304 to it", async () => {
    const source = {
      digest: async (channel: string, period: { since: number; until: number }) =>
        digest({ channels: [channel], ...period }),
    };
    const at = (now: number) =>
      apiHandler(memoryApiSources({ channels: ["help"], digest: source }), { now: () => now });
    const request = (etag?: string) => ({
      method: "GET",
      rawPath: "/channels/help/digest",
      rawQuery: "since=2018-05-23&until=2018-05-30",
      headers: etag === undefined ? {} : { "if-none-match": etag },
    });

    const first = await at(NOW)(request());
    const later = await at(NOW + 40 * 86_400_000)(request(first.headers.etag));

    expect(first.status).toBe(200);
    expect(later.status).toBe(304);
  });

  it("refuses a bad until, and a period that is reversed or over 366 days, naming the parameter", async () => {
    asked.length = 0;
    const cases: [string, string][] = [
      ["until=yesterday", "until"],
      ["until=2018-05-30T08:00", "until"],
      ["since=2018-01-01&until=2020-01-01", "since"],
      ["since=2018-06-02&until=2018-06-01", "since"],
      ["since=2018-05-29", "since"],
      ["until=2018-05-30T00:30Z&since=2018-05-30", "since"],
    ];
    for (const [query, parameter] of cases) {
      const response = await fetch(`${served.url}/channels/help/digest?${query}`);
      expect(response.status, query).toBe(400);
      const body = (await response.json()) as { error: { code: string; parameter: string } };
      expect(body.error, query).toMatchObject({ code: "API_BAD_PARAMETER", parameter });
    }
    expect(asked).toEqual([]);
  });

  it("is a 501 where no digest source is wired", async () => {
    const response = await fetch(`${bare.url}/channels/help/digest?since=7d`);
    expect(response.status).toBe(501);
    expect(await response.json()).toMatchObject({ error: { code: "API_UNAVAILABLE" } });
  });
});
