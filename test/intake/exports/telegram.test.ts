import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { byId, fixture, readAll, tempDir } from "./support.js";

const ONE_CHAT = fixture("telegram", "result.json");
const FULL = fixture("telegram", "full-export.json");
const SUPERGROUP = "-1001234567890";

describe("Telegram Desktop result.json", () => {
  it("reads one chat: ids per chat, date_unixtime, entity text, replies, media named", async () => {
    const { messages } = await readAll([ONE_CHAT], { timezone: "Europe/Paris" });
    expect(byId(messages, `${SUPERGROUP}:3`)).toEqual({
      id: `${SUPERGROUP}:3`,
      ts: "2024-01-10T10:02:00.000Z",
      channel: SUPERGROUP,
      channelName: "Builders",
      user: "Ben",
      text: "See the docs (https://docs.example.org) and @ana!",
      userId: "user222",
      replyTo: `${SUPERGROUP}:2`,
      kind: "user",
      platform: "telegram",
    });
    expect(byId(messages, `${SUPERGROUP}:4`).text).toBe("[photo]");
    expect(byId(messages, `${SUPERGROUP}:5`).text).toBe("here\n[file: report.pdf]");
    expect(byId(messages, `${SUPERGROUP}:9`)).toMatchObject({ user: "user333" });
  });

  it("never reads the zone-less date when date_unixtime is there (its local time differs)", async () => {
    // The fixture's `date` of message 2 is 11:01 local; date_unixtime says 10:01 UTC.
    const { messages } = await readAll([ONE_CHAT], { timezone: "Asia/Tokyo" });
    expect(byId(messages, `${SUPERGROUP}:2`).ts).toBe("2024-01-10T10:01:00.000Z");
  });

  it("reads an old message's zone-less date in the configured zone, and counts it", async () => {
    const paris = await readAll([ONE_CHAT], { timezone: "Europe/Paris" });
    expect(byId(paris.messages, `${SUPERGROUP}:7`).ts).toBe("2024-01-10T11:00:00.000Z");
    expect(paris.report).toMatchObject({ timezone: "Europe/Paris", zonelessTimes: 1 });
    const utc = await readAll([ONE_CHAT], { timezone: "UTC" });
    expect(byId(utc.messages, `${SUPERGROUP}:7`).ts).toBe("2024-01-10T12:00:00.000Z");
  });

  it("makes service messages system lines with the actor as userId", async () => {
    const { messages } = await readAll([ONE_CHAT]);
    expect(byId(messages, `${SUPERGROUP}:1`)).toMatchObject({
      kind: "system",
      user: null,
      userId: "user111",
      text: 'Ana created the group "Builders" Ana, Ben',
    });
    expect(byId(messages, `${SUPERGROUP}:6`).text).toBe("Ben pinned a message");
  });

  it("words service actions as the live connector does, and a post as a chat with its signature", async () => {
    const { messages } = await readAll([fixture("telegram", "service.json")]);
    const text = (id: number) => byId(messages, `${SUPERGROUP}:${id}`).text;
    expect(text(102)).toBe('Ada Lovelace renamed the topic to "Billing and invoices"');
    expect(text(105)).toBe("Ada Lovelace ended the video chat (1 h 2 min)");
    expect(text(109)).toBe("Grace Hopper joined the group");
    expect(text(111)).toBe("Grace Hopper left the group");
    expect(text(116)).toBe("Ada Lovelace set messages to auto-delete after 1 day");
    expect(text(125)).toBe('Ada Lovelace created the channel "Help desk news"');
    expect(byId(messages, `${SUPERGROUP}:118`)).toMatchObject({
      user: "Help desk (Grace)",
      userId: "channel1234567890",
      kind: "user",
    });
  });

  it("shows contacts, places, games and invoices, never an empty line", async () => {
    const { messages } = await readAll([fixture("telegram", "service.json")]);
    expect(
      [120, 121, 122, 123, 124].map((id) => byId(messages, `${SUPERGROUP}:${id}`).text),
    ).toEqual([
      "[contact: Grace Hopper]",
      "[location]",
      "[place: Tour Eiffel]",
      "[game: Lumberjack]",
      "[invoice: Pro plan]",
    ]);
    expect(messages.every((m) => m.text !== "")).toBe(true);
  });

  it("skips a message without any date, naming its entry and field", async () => {
    const { report } = await readAll([ONE_CHAT]);
    expect(report.skippedItems).toEqual([
      expect.objectContaining({ file: ONE_CHAT, at: "messages[7]", field: "date_unixtime" }),
    ]);
  });

  it("reads a full export's chats.list and left_chats, each chat its own channel in id order", async () => {
    const { messages } = await readAll([FULL]);
    const channels = [...new Set(messages.map((m) => m.channel))];
    expect(channels).toEqual([SUPERGROUP, "-777", "222", "555"]);
    expect(byId(messages, "222:11").replyTo).toBe("222:10");
    expect(byId(messages, "555:2")).toMatchObject({ kind: "bot", user: "HelperBot" });
    expect(byId(messages, "555:1").kind).toBe("user");
    // The contacts list (dated too) is no chat.
    expect(messages.every((m) => m.text !== "")).toBe(true);
  });

  it("deduplicates a chat exported alone and inside a full export", async () => {
    const both = await readAll([ONE_CHAT, FULL]);
    const full = await readAll([FULL]);
    expect(both.messages).toEqual(full.messages);
    expect(both.report.duplicates).toBe(8);
  });

  it("refuses a chat id that is no integer, naming the file, the chat and the field", async () => {
    const file = fixture("malformed", "telegram-bad-id.json");
    await expect(readAll([file])).rejects.toMatchObject({
      name: "ExportFormatError",
      file,
      at: "(root)",
      field: "id",
    });
  });

  it("reads a one-chat export without a chat id under an id made from its file name, and says so", async () => {
    // Older Telegram Desktop exports and some tools write only the messages.
    const chat = {
      name: "Family",
      type: "private_group",
      messages: [
        { id: 1, type: "message", date_unixtime: "1551434400", from: "Ana", text: "hi all" },
        { id: 2, type: "message", date_unixtime: "1551434460", from: "Ben", text: "hello" },
      ],
    };
    const dir = join(tempDir(), "ChatExport_2019-03-01");
    mkdirSync(dir);
    const desktop = join(dir, "result.json");
    const named = join(dir, "Family chat (old).json");
    writeFileSync(desktop, JSON.stringify(chat));
    writeFileSync(named, JSON.stringify(chat));

    const first = await readAll([desktop]);
    expect(first.messages.map((m) => [m.id, m.channel, m.channelName, m.text])).toEqual([
      [
        "file-chatexport-2019-03-01-result:1",
        "file-chatexport-2019-03-01-result",
        "Family",
        "hi all",
      ],
      [
        "file-chatexport-2019-03-01-result:2",
        "file-chatexport-2019-03-01-result",
        "Family",
        "hello",
      ],
    ]);
    expect(first.report.notes).toEqual([
      `Telegram: ${desktop} names no chat id; its messages are stored as channel file-chatexport-2019-03-01-result, made from the file's name (import it under the same name to add to that channel)`,
    ]);
    // Stable: the same file read again gives the same ids; another file name, another channel.
    expect((await readAll([desktop])).messages.map((m) => m.id)).toEqual(
      first.messages.map((m) => m.id),
    );
    expect((await readAll([named])).messages[0]?.channel).toBe("file-family-chat-old");
  });
});
