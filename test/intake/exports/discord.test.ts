import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ExportFormatError } from "convoseg/exports";
import { describe, expect, it } from "vitest";
import { byId, fixture, readAll, tempDir } from "./support.js";

const SERVER = fixture("discord", "server");
const PART1 = join(SERVER, "Test Guild - general [910000000000000001] part1.json");
const PART2 = join(SERVER, "Test Guild - general [910000000000000001] part2.json");
const THREAD = join(SERVER, "Test Guild - general - startup crash [1195000000000000005].json");
/** A forward, a bot's and a webhook's embed-only posts, a person's link with its preview. */
const FORWARDS = fixture("discord", "forwards-and-embeds.json");

describe("DiscordChatExporter JSON", () => {
  it("reads snowflake ids, UTC times from offsets, authors, replies and attachments", async () => {
    const { messages } = await readAll([PART1]);
    expect(byId(messages, "1195000000000000002")).toEqual({
      id: "1195000000000000002",
      ts: "2024-01-10T10:00:05.500Z",
      channel: "910000000000000001",
      channelName: "general",
      user: "Ben",
      text: "Yes @Ana, see #910000000000000002 :) :party:",
      userId: "800000000000000002",
      replyTo: "1195000000000000001",
      kind: "user",
      platform: "discord",
      guild: "900000000000000001",
    });
    expect(byId(messages, "1195000000000000003")).toMatchObject({
      kind: "bot",
      text: "Build finished\n[attachment: build.log]",
    });
    expect(byId(messages, "1195000000000000004")).toMatchObject({ kind: "system", user: null });
  });

  it("puts a thread's file on its parent channel with thread set, without the starter copy", async () => {
    const { messages, report } = await readAll([SERVER]);
    expect(new Set(messages.map((m) => m.channel))).toEqual(new Set(["910000000000000001"]));
    expect(byId(messages, "1195000000000000011")).toMatchObject({
      channel: "910000000000000001",
      channelName: "general",
      thread: "1195000000000000005",
    });
    // A reply inside the thread names the thread channel: still the same (parent) channel here.
    expect(byId(messages, "1195000000000000012").replyTo).toBe("1195000000000000011");
    expect(messages.some((m) => m.id === "1195000000000000010")).toBe(false);
    const thread = report.files.find((f) => f.file === THREAD);
    expect(thread?.skipped).toEqual({
      "type: thread starter message (the root is in the parent channel)": 1,
    });
    const ts = messages.map((m) => m.ts);
    expect(ts).toEqual([...ts].sort());
  });

  it("deduplicates overlapping exports of a channel by id, and lists a changed repeat as a conflict", async () => {
    const whole = await readAll([SERVER]);
    expect(whole.report.duplicates).toBe(2);
    expect(new Set(whole.messages.map((m) => m.id)).size).toBe(whole.messages.length);
    const edited = await readAll([PART2, fixture("discord", "edited-general.json")]);
    expect(edited.report.conflicts).toEqual([
      { channel: "910000000000000001", id: "1195000000000000006", fields: ["text"] },
    ]);
    expect(byId(edited.messages, "1195000000000000006").text).toBe(
      "next day, 2024-01-11 10:00 UTC",
    );
  });

  it("skips a message without a usable timestamp, naming the entry and the field", async () => {
    const { report } = await readAll([PART1]);
    expect(report.skippedItems).toEqual([
      {
        file: PART1,
        at: "messages[5]",
        field: "timestamp",
        reason: "expected an ISO 8601 date-time with a zone (got a string)",
      },
    ]);
  });

  it("refuses a truncated file and a channel without an id, naming file, entry and field", async () => {
    const truncated = fixture("malformed", "discord-truncated.json");
    await expect(readAll([{ path: truncated, format: "discord" }])).rejects.toMatchObject({
      name: "ExportFormatError",
      file: truncated,
      at: expect.stringMatching(/^messages\[1\] \(character \d+\)$/),
      field: "document",
    });
    const noId = fixture("malformed", "discord-no-channel-id.json");
    const error = await readAll([noId]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExportFormatError);
    expect(error).toMatchObject({ file: noId, at: "channel", field: "id" });
  });

  it("gives each message its file's guild for its link, none for a direct message's or a bad id", async () => {
    const dir = tempDir();
    const exported = (name: string, guild: unknown) => {
      const file = join(dir, `${name}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          guild: { id: guild, name: "x" },
          channel: { id: "920000000000000001", type: "DirectTextChat", name: name },
          messages: [
            {
              id: "1195000000000000001",
              timestamp: "2024-01-01T00:00:00Z",
              author: { id: "800000000000000001", name: "Ana" },
              content: "hi",
            },
          ],
        }),
      );
      return file;
    };
    const [guilded] = (await readAll([exported("general", "900000000000000001")])).messages;
    expect(guilded.guild).toBe("900000000000000001");
    // DiscordChatExporter names a direct message's "guild" 0; a hostile id is no snowflake.
    for (const guild of ["0", "9/../evil", 9e17, null]) {
      const [message] = (await readAll([exported("dm", guild)])).messages;
      expect(message, String(guild)).not.toHaveProperty("guild");
    }
  });

  it("refuses a message that is not JSON inside a well-formed file, naming its entry", async () => {
    const dir = tempDir();
    const file = join(dir, "bad.json");
    writeFileSync(
      file,
      '{"guild":{"id":"1"},"channel":{"id":"5","type":"GuildTextChat","name":"x"},"messages":[{"id":"1","timestamp":"2024-01-01T00:00:00Z","author":{"id":"2"},"content":01}]}',
    );
    await expect(readAll([file])).rejects.toMatchObject({ at: "messages[0]", field: "entry" });
  });
});

describe("DiscordChatExporter forwards and embeds", () => {
  it("reads a forward's message as [forwarded] text, and links it to nothing", async () => {
    const { messages } = await readAll([FORWARDS]);
    const forward = byId(messages, "1330000000000000010");
    expect(forward).toMatchObject({
      user: "Ana",
      kind: "user",
      text: "[forwarded] The deploy is at 14:00, @Bob owns it\n[attachment: plan.pdf]",
    });
    // A forward quotes the message, it does not answer it, even in the same channel.
    expect(forward.replyTo).toBeUndefined();
  });

  it("reads a bot's embed-only message as its title, description and fields", async () => {
    const { messages } = await readAll([FORWARDS]);
    expect(byId(messages, "1330000000000000020")).toMatchObject({
      kind: "bot",
      text: "Build #812 failed\nmain: 3 tests failed in `ingest`\nBranch: main\nCommit: a1b2c3d",
    });
    expect(byId(messages, "1330000000000000030").text).toBe(
      "[acme/api] 1 new commit\n[`a1b2c3d`](https://github.com/acme/api/commit/a1b2c3d) Retry failed uploads - ana",
    );
    // A person's link preview repeats the link: the text stays what they wrote.
    expect(byId(messages, "1330000000000000040").text).toBe("see https://example.com/runbook");
  });
});
