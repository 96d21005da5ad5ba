import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SearchDocument, SearchError, searchDocuments } from "convoseg/search";
import { LanceSearchIndex } from "convoseg/search/lancedb";
import { describe, expect, it } from "vitest";
import { doc } from "./fixtures.js";

const DOCS: SearchDocument[] = [
  doc({ id: "m1", text: "how do I install the nvidia drivers on hardy?", ts: 1_000 }),
  doc({ id: "m2", text: "grub: error: unknown filesystem (hd0)", ts: 2_000, channel: "it's" }),
  doc({
    id: "q1",
    kind: "question",
    status: "unanswered",
    title: "how to install nvidia drivers",
    text: "how to install nvidia drivers",
    ts: 3_000,
    authorId: "U1",
  }),
  doc({
    id: "q2",
    kind: "question",
    status: "answered",
    title: "wifi",
    text: "wifi drops",
    ts: 4_000,
  }),
];

describe("LanceSearchIndex", () => {
  it("finds documents by their words, stemmed, with the words marked, filtered as asked", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "convoseg-search-")), "index");
    await LanceSearchIndex.build(dir, DOCS);
    const index = await LanceSearchIndex.open(dir);
    if (index === undefined) throw new Error("no index");
    try {
      const hits = await index.search({ text: "installing driver" });
      expect(hits.map((h) => h.id).sort()).toEqual(["m1", "q1"]);
      const m1 = hits.find((h) => h.id === "m1");
      expect(m1?.marks.map(([s, e]) => m1.snippet.slice(s, e))).toEqual(["install", "drivers"]);
      expect(m1?.evidence).toEqual(["m1"]);
      expect(
        (await index.search({ text: "nvidia", status: "unanswered" })).map((h) => h.id),
      ).toEqual(["q1"]);
      expect((await index.search({ text: "nvidia", kinds: ["message"] })).map((h) => h.id)).toEqual(
        ["m1"],
      );
      expect((await index.search({ text: "nvidia", since: 2_000 })).map((h) => h.id)).toEqual([
        "q1",
      ]);
      expect((await index.search({ text: "nvidia", authorId: "U1" })).map((h) => h.id)).toEqual([
        "q1",
      ]);
      // A quote in a channel id is a value, and query syntax in the words is words.
      expect(
        (await index.search({ text: 'grub: error (hd0) " OR', channels: ["it's"] })).map(
          (h) => h.id,
        ),
      ).toEqual(["m2"]);
      expect(await index.search({ text: "nvidia", channels: ["x' OR '1'='1"] })).toEqual([]);
      // Two channels, an end of the period, and pages: the second page starts past the first.
      const both = await index.search({
        text: "nvidia drivers",
        channels: ["ubuntu", "it's"],
        until: 3_500,
      });
      expect(both.map((h) => h.id).sort()).toEqual(["m1", "q1"]);
      const [firstHit] = await index.search({ text: "nvidia drivers", limit: 1 });
      const [secondHit] = await index.search({ text: "nvidia drivers", limit: 1, offset: 1 });
      expect(firstHit?.id).not.toBe(secondHit?.id);
    } finally {
      index.close();
    }
  });

  it("answers a Discord message's hit with its link, and a Telegram public group's", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "convoseg-search-")), "index");
    const guild = "900000000000000001";
    const channel = "910000000000000001";
    await LanceSearchIndex.build(
      dir,
      searchDocuments({
        messages: [
          {
            id: "1195000000000000002",
            ts: 1,
            channel,
            text: "grub rescue prompt",
            platform: "discord",
            guild,
          },
          {
            id: "-1001234567890:55",
            ts: 2,
            channel: "-1001234567890",
            text: "grub rescue again",
            platform: "telegram",
            chatUsername: "ubuntu_help",
          },
        ],
        results: [],
        topics: [],
      }),
    );
    const index = await LanceSearchIndex.open(dir);
    if (index === undefined) throw new Error("no index");
    try {
      const hits = await index.search({ text: "grub rescue" });
      expect(hits.map((h) => h.permalink).sort()).toEqual([
        `https://discord.com/channels/${guild}/${channel}/1195000000000000002`,
        "https://t.me/ubuntu_help/55",
      ]);
    } finally {
      index.close();
    }
  });

  it("names every problem of a query at once", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "convoseg-search-")), "index");
    await LanceSearchIndex.build(dir, []);
    const index = await LanceSearchIndex.open(dir);
    if (index === undefined) throw new Error("no index");
    try {
      const error = await index
        .search({ text: " ", limit: 0, kinds: ["thread" as never] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SearchError);
      expect((error as SearchError).message).toBe(
        'search: the query is empty: give the words to look for; limit must be a whole number from 1 to 100 (got 0); kind "thread" is not one of message, conversation, topic, question',
      );
      expect(await index.search({ text: "anything" })).toEqual([]);
      const more = await index
        .search({
          text: "x".repeat(501),
          offset: 1001,
          channels: [" c"],
          status: "open" as never,
          since: Number.NaN,
          authorId: "a\u0007b",
        })
        .catch((e: unknown) => e);
      expect((more as SearchError).message).toBe(
        'search: the query is 501 characters long, more than 500; offset must be a whole number from 0 to 1000 (got 1001); channel " c" leading or trailing whitespace; status "open" is not one of answered, unanswered, unclear; since must be a time (epoch ms); author must be a platform user id: 1 to 200 characters, no control characters',
      );
    } finally {
      index.close();
    }
  });

  it("replaces an index whole, leaving no file of the old one", async () => {
    const parent = mkdtempSync(join(tmpdir(), "convoseg-search-"));
    const dir = join(parent, "index");
    await LanceSearchIndex.build(dir, DOCS);
    await LanceSearchIndex.build(dir, DOCS.slice(1));
    const index = await LanceSearchIndex.open(dir);
    try {
      expect(await index?.search({ text: "hardy" })).toEqual([]);
    } finally {
      index?.close();
    }
    expect(readdirSync(parent)).toEqual(["index"]);
    expect(await LanceSearchIndex.open(join(parent, "none"))).toBeUndefined();
  });

  it("runs Lance with four compute threads at least, where a person set none", () => {
    // Fewer hang building a full-text index of a few hundred thousand documents (docs/search.md).
    expect(Number(process.env.LANCE_CPU_THREADS)).toBeGreaterThanOrEqual(4);
  });
});
