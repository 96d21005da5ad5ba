import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixture, readAll, tempDir } from "./support.js";

const BULK = fixture("mattermost", "bulk.jsonl");

describe("Mattermost bulk export", () => {
  it("reads posts and their replies, sorted, named by team and channel, with display names", async () => {
    const { messages } = await readAll([BULK]);
    const square = messages.filter((m) => m.channel === "eng/town-square");
    expect(square.map((m) => m.text)).toEqual([
      "Build is red\n[file: build.log]",
      "looking",
      "thanks",
      "second, but listed first",
      "ping",
      "ping",
      "deployed",
    ]);
    expect(square[0]).toMatchObject({
      channelName: "Town Square",
      user: "Ana Lima",
      userId: "ana",
    });
    expect(square[1]).toMatchObject({ user: "benny", thread: square[0].id });
    expect(square[6].kind).toBe("bot");
    expect(messages[0]).toMatchObject({
      channel: "dm:ana,ben",
      channelName: "Ana Lima, benny",
      text: "a DM",
      platform: "mattermost",
    });
  });

  it("makes ids from the content: exact repeats get distinct ids, re-reads the same ones", async () => {
    const first = await readAll([BULK]);
    const pings = first.messages.filter((m) => m.text === "ping");
    expect(pings[0].id).not.toBe(pings[1].id);
    expect(pings[0].id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const again = await readAll([BULK, BULK]);
    expect(again.messages).toEqual(first.messages);
    expect(again.report.duplicates).toBe(first.messages.length);
  });

  it("gives the same messages whatever order the post lines come in", async () => {
    const lines = readFileSync(BULK, "utf8").trimEnd().split("\n");
    const dir = tempDir();
    const reversed = join(dir, "reversed.jsonl");
    writeFileSync(reversed, `${[lines[0], ...lines.slice(1).reverse()].join("\n")}\n`);
    const a = await readAll([BULK]);
    const b = await readAll([reversed]);
    expect(b.messages).toEqual(a.messages);
  });

  it("reports each bad line by number and field, and goes on", async () => {
    const { report } = await readAll([BULK]);
    expect(report.skippedItems).toEqual([
      { file: BULK, at: "line 9", field: "json", reason: "not valid JSON" },
      {
        file: BULK,
        at: "line 12",
        field: "post.create_at",
        reason: "expected epoch milliseconds (got nothing)",
      },
      {
        file: BULK,
        at: "line 15",
        field: "type",
        reason: "not a line this reader knows (type mystery)",
      },
    ]);
  });

  it("skips a post or a reply that is a list, not an object, and keeps the others", async () => {
    const dir = tempDir();
    const file = join(dir, "lists.jsonl");
    const lines = [
      { type: "version", version: 1 },
      { type: "post", post: ["not", "a", "post"] },
      {
        type: "post",
        post: {
          team: "eng",
          channel: "town-square",
          user: "ana",
          message: "kept",
          create_at: 1_700_000_000_000,
          replies: [["not", "a", "reply"]],
        },
      },
    ];
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const { messages, report } = await readAll([file]);
    expect(messages.map((m) => m.text)).toEqual(["kept"]);
    expect(report.skippedItems.map((s) => [s.at, s.field, s.reason])).toEqual([
      ["line 2", "post", "expected an object (got an array)"],
      ["line 3", "post.replies[0]", "expected an object (got an array)"],
    ]);
  });
});
