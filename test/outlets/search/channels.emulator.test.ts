import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SearchError } from "convoseg/search";
import { deployedSearchIndex, LanceChannelIndexes } from "convoseg/search/lancedb";
import { describe, expect, it } from "vitest";
import { doc } from "./fixtures.js";

const fresh = () => join(mkdtempSync(join(tmpdir(), "convoseg-channels-")), "index");

/** Every file under `dir` holding `word` (as LanceDB writes text: plain UTF-8). */
function filesHolding(dir: string, word: string): string[] {
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((name) => {
      const path = join(d, name);
      return statSync(path).isDirectory() ? walk(path) : [path];
    });
  return walk(dir).filter((file) => readFileSync(file).includes(word));
}

const ids = (hits: { id: string }[]) => hits.map((h) => h.id).sort();

describe("LanceChannelIndexes", () => {
  it("keeps each channel in its own table, named by a hash, and searches them together", async () => {
    const dir = fresh();
    const index = new LanceChannelIndexes(dir);
    try {
      await index.replaceSegment("ubuntu", "s1", [
        doc({ id: "m1", text: "the zebra gallops", segment: "s1" }),
      ]);
      await index.replaceSegment("o'brien's; DROP", "s9", [
        doc({ id: "m9", text: "a zebra here too", segment: "s9", channel: "o'brien's; DROP" }),
      ]);
      const tables = readdirSync(dir).filter((name) => name.endsWith(".lance"));
      expect(tables.sort()).toEqual(
        [LanceChannelIndexes.tableOf("o'brien's; DROP"), LanceChannelIndexes.tableOf("ubuntu")]
          .map((t) => `${t}.lance`)
          .sort(),
      );
      expect(ids(await index.search({ text: "zebras" }))).toEqual(["m1", "m9"]);
      expect(ids(await index.search({ text: "zebra", channels: ["o'brien's; DROP"] }))).toEqual([
        "m9",
      ]);
      expect(await index.search({ text: "zebra", channels: ["nowhere"] })).toEqual([]);
      await expect(
        index.replaceSegment("ubuntu", "s2", [doc({ id: "x", text: "x", channel: "other" })]),
      ).rejects.toThrow(SearchError);
    } finally {
      index.close();
    }
  });

  it("replaces a segment's documents in one write: a question no longer found goes, topics stay", async () => {
    const index = new LanceChannelIndexes(fresh());
    try {
      await index.replaceSegment("ubuntu", "s1", [
        doc({ id: "m1", text: "grub fails to boot", segment: "s1" }),
        doc({ id: "q1", kind: "question", text: "why does grub fail", segment: "s1" }),
        doc({ id: "t1", kind: "topic", text: "grub boot", segment: "s1" }),
      ]);
      await index.replaceSegment("ubuntu", "s1", [
        doc({ id: "m1", text: "grub boots now", segment: "s1" }),
      ]);
      const hits = await index.search({ text: "grub" });
      expect(ids(hits)).toEqual(["m1", "t1"]);
      expect(hits.find((h) => h.id === "m1")?.snippet).toBe("grub boots now");
      await index.replaceSegment("ubuntu", "s1", []);
      expect(ids(await index.search({ text: "grub" }))).toEqual(["t1"]);
      // An empty segment of a channel never written writes nothing.
      await index.replaceSegment("empty", "s1", []);
      expect(await index.search({ text: "grub", channels: ["empty"] })).toEqual([]);
    } finally {
      index.close();
    }
  });

  it("pages past the hundredth hit across channels, best first, without repeats", async () => {
    const index = new LanceChannelIndexes(fresh());
    try {
      for (const channel of ["a", "b"]) {
        const docs = Array.from({ length: 70 }, (_, i) =>
          doc({ id: `${channel}${i}`, text: `kernel ${"panic ".repeat(1 + (i % 5))}`, channel }),
        );
        await index.replaceSegment(channel, "s", docs);
      }
      const pages = [];
      for (let offset = 0; offset < 140; offset += 50)
        pages.push(...(await index.search({ text: "panic", limit: 50, offset })));
      expect(pages).toHaveLength(140);
      expect(new Set(pages.map((h) => h.id)).size).toBe(140);
      const scores = pages.map((h) => h.score);
      expect(scores).toEqual([...scores].sort((x, y) => y - x));
    } finally {
      index.close();
    }
  });

  it("forgets what cites a message or names a person, and a purge leaves none of it on disk", async () => {
    const dir = fresh();
    const index = new LanceChannelIndexes(dir);
    try {
      await index.replaceSegment("ubuntu", "s1", [
        doc({ id: "m1", text: "xylophonist secret words", segment: "s1", author: "mallory" }),
        doc({ id: "m2", text: "an answer about drivers", segment: "s1", evidence: ["m2"] }),
        doc({
          id: "c1",
          kind: "conversation",
          text: "Mallory asked about drivers",
          segment: "s1",
          evidence: ["m2"],
        }),
        doc({ id: "q1", kind: "question", text: "drivers?", segment: "s1", evidence: ["m1"] }),
      ]);
      await index.replaceSegment("ubuntu", "s2", [
        doc({ id: "m3", text: "thanks mallory, drivers work", segment: "s2" }),
      ]);
      expect(filesHolding(dir, "xylophonist").length).toBeGreaterThan(0);
      expect(await index.forget("ubuntu", ["m1"], ["mallory"])).toEqual(["s1"]);
      expect(await index.forgetNaming("ubuntu", ["MALLORY"])).toEqual(["s1"]);
      // Someone else's message that names them stays: it is theirs, as the message store keeps it.
      expect(ids(await index.search({ text: "drivers" }))).toEqual(["m2", "m3"]);
      expect(await index.forget("nowhere", ["m1"])).toEqual([]);
      expect(await index.forget("ubuntu", [])).toEqual([]);
      // Deleted, but still in the table's files until they are rewritten.
      expect(filesHolding(dir, "xylophonist").length).toBeGreaterThan(0);
      await index.purge("ubuntu");
      expect(filesHolding(dir, "xylophonist")).toEqual([]);
      expect(filesHolding(dir, "asked about")).toEqual([]);
      expect(ids(await index.search({ text: "drivers" }))).toEqual(["m2", "m3"]);
      // Writes go on after a purge.
      await index.replaceSegment("ubuntu", "s3", [
        doc({ id: "m4", text: "more drivers", segment: "s3" }),
      ]);
      expect(ids(await index.search({ text: "drivers" }))).toEqual(["m2", "m3", "m4"]);
    } finally {
      index.close();
    }
  });

  it("purges a channel emptied of documents, and drops a channel's table whole", async () => {
    const dir = fresh();
    const index = new LanceChannelIndexes(dir);
    try {
      await index.replaceSegment("ubuntu", "s1", [doc({ id: "m1", text: "zebra", segment: "s1" })]);
      await index.forget("ubuntu", ["m1"]);
      await index.purge("ubuntu");
      expect(filesHolding(dir, "zebra")).toEqual([]);
      expect(await index.search({ text: "zebra" })).toEqual([]);
      await index.purge("nowhere");
      await index.drop("ubuntu");
      await index.drop("ubuntu");
      expect(readdirSync(dir).filter((name) => name.endsWith(".lance"))).toEqual([]);
      expect(filesHolding(dir, LanceChannelIndexes.tableOf("ubuntu"))).toEqual([]);
    } finally {
      index.close();
    }
  });

  it("sees another writer's commits at once, and connects again after a failed connection", async () => {
    const dir = fresh();
    const writer = new LanceChannelIndexes(dir);
    const reader = new LanceChannelIndexes(dir);
    try {
      await writer.replaceSegment("ubuntu", "s1", [
        doc({ id: "m1", text: "zebra", segment: "s1" }),
      ]);
      expect(ids(await reader.search({ text: "zebra" }))).toEqual(["m1"]);
      await writer.replaceSegment("ubuntu", "s2", [
        doc({ id: "m2", text: "zebra", segment: "s2" }),
      ]);
      expect(ids(await reader.search({ text: "zebra" }))).toEqual(["m1", "m2"]);
    } finally {
      writer.close();
      reader.close();
    }
    // A reader that may lag lists the tables again only once its interval passed.
    let now = 1_000_000;
    const lagging = new LanceChannelIndexes(dir, { readConsistencySeconds: 10, now: () => now });
    expect(ids(await lagging.search({ text: "zebra" }))).toEqual(["m1", "m2"]);
    const late = new LanceChannelIndexes(dir);
    await late.replaceSegment("later", "s3", [
      doc({ id: "m3", text: "zebra", segment: "s3", channel: "later" }),
    ]);
    late.close();
    expect(ids(await lagging.search({ text: "zebra" }))).toEqual(["m1", "m2"]);
    now += 10_000;
    expect(ids(await lagging.search({ text: "zebra" }))).toEqual(["m1", "m2", "m3"]);
    lagging.close();
    const broken = new LanceChannelIndexes("unknown-scheme://nowhere");
    await expect(broken.search({ text: "zebra" })).rejects.toThrow();
    await expect(broken.search({ text: "zebra" })).rejects.toThrow();
  });

  it("never finds a document past the retention, and a write of its channel removes it", async () => {
    const dir = fresh();
    let now = 10 * 86_400_000;
    const index = deployedSearchIndex({ uri: dir, retentionDays: "2", now: () => now });
    if (index === undefined) throw new Error("no index");
    try {
      await index.replaceSegment("ubuntu", "s1", [
        doc({ id: "old", text: "zebra of old", ts: now - 3 * 86_400_000, segment: "s1" }),
        doc({ id: "new", text: "zebra of now", ts: now - 86_400_000, segment: "s1" }),
      ]);
      expect(ids(await index.search({ text: "zebra", since: 0 }))).toEqual(["new"]);
      // A reader that keeps everything sees what the write removed: the expired one.
      const everything = new LanceChannelIndexes(dir);
      expect(ids(await everything.search({ text: "zebra" }))).toEqual(["new"]);
      now += 2 * 86_400_000;
      expect(await index.search({ text: "zebra" })).toEqual([]);
      await index.replaceSegment("ubuntu", "s2", [
        doc({ id: "m2", text: "x", ts: now, segment: "s2" }),
      ]);
      expect(await index.search({ text: "zebra", since: 0, until: now })).toEqual([]);
      expect(await everything.search({ text: "zebra" })).toEqual([]);
      everything.close();
    } finally {
      index.close();
    }
    expect(deployedSearchIndex({ uri: " " })).toBeUndefined();
    for (const days of ["0", "two", "1.5"])
      expect(() => deployedSearchIndex({ uri: dir, retentionDays: days })).toThrow(
        /SEARCH_RETENTION_DAYS must be a whole number of days/,
      );
    expect(deployedSearchIndex({ uri: dir, retentionDays: "" })).toBeInstanceOf(
      LanceChannelIndexes,
    );
  });
});
