import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ExportFormatError, ExportInputError } from "convoseg/exports";
import { describe, expect, it } from "vitest";
import { writeZip } from "../../support/zip.js";
import { byId, fixture, readAll, tempDir } from "./support.js";

const WORKSPACE = fixture("slack", "workspace");
/** A workspace whose #builds holds what apps post today: bot_id, app_id, bot_profile, no subtype. */
const APPS = fixture("slack", "apps");

/** The fixture's files as ZIP entries under `prefix` (exports are zipped with or without a top folder). */
function workspaceFiles(prefix = ""): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else
        files[prefix + relative(WORKSPACE, path).split("\\").join("/")] = readFileSync(
          path,
          "utf8",
        );
    }
  };
  walk(WORKSPACE);
  return files;
}

describe("Slack workspace export", () => {
  it("reads channels, private channels, DMs and group DMs by their ids, each oldest first", async () => {
    const { messages } = await readAll([WORKSPACE]);
    const channels = [...new Set(messages.map((m) => m.channel))];
    expect(channels).toEqual(["C0GENERAL", "C0RANDOM", "D0DM1", "G0MPIM", "G0SECRET", "orphan"]);
    const names = Object.fromEntries(messages.map((m) => [m.channel, m.channelName]));
    expect(names).toMatchObject({
      C0GENERAL: "general",
      G0SECRET: "secret-plans",
      D0DM1: "ana.l, Ben Okafor",
      G0MPIM: "ana.l, Ben Okafor, cy",
    });
    for (const channel of channels) {
      const ts = messages.filter((m) => m.channel === channel).map((m) => m.ts);
      expect(ts).toEqual([...ts].sort());
    }
    for (const m of messages) {
      expect(m.ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(m.platform).toBe("slack");
    }
  });

  it("keeps thread replies from other days on the parent channel, with thread set", async () => {
    const { messages } = await readAll([WORKSPACE]);
    const root = byId(messages, "1704880800.000200");
    expect(root.thread).toBeUndefined();
    const nextDay = byId(messages, "1704967300.000100");
    expect(nextDay).toMatchObject({ channel: "C0GENERAL", thread: "1704880800.000200" });
    // thread_broadcast: a reply shown in the channel too, still a reply of its thread.
    expect(byId(messages, "1704881000.000400")).toMatchObject({
      thread: "1704880800.000200",
      kind: "user",
    });
  });

  it("keeps a tombstone parent as a system line so its replies keep their root", async () => {
    const { messages } = await readAll([WORKSPACE]);
    expect(byId(messages, "1704881400.000800")).toMatchObject({ kind: "system", user: null });
    expect(byId(messages, "1704881500.000900").thread).toBe("1704881400.000800");
  });

  it("marks bots and the platform's own lines, and renders mentions, links and entities", async () => {
    const { messages } = await readAll([WORKSPACE]);
    expect(byId(messages, "1704881100.000500")).toMatchObject({
      kind: "bot",
      user: "deploybot",
      userId: "B0DEPLOY",
      text: "Deploy 42 failed",
    });
    expect(byId(messages, "1704880000.000100")).toEqual({
      id: "1704880000.000100",
      ts: "2024-01-10T09:46:40.000Z",
      channel: "C0GENERAL",
      channelName: "general",
      user: null,
      text: "@cy has joined the channel",
      userId: "U0CY",
      kind: "system",
      platform: "slack",
    });
    expect(byId(messages, "1704880800.000200").text).toBe(
      "Has anyone tried the new build? See run 42 (https://ci.example.org/run/42) & #random",
    );
    expect(byId(messages, "1704880900.000300")).toMatchObject({
      user: "Ben Okafor",
      userId: "U0BEN",
      text: "@ana.l yes, it fails on <linux>",
    });
    expect(byId(messages, "1704967300.000100").text).toBe("Fixed now, @here. Mail ops@example.org");
    // An author missing from users.json: the message's own profile, and an unknown mention's id.
    expect(byId(messages, "1704967500.000300")).toMatchObject({
      user: "newbie",
      text: "hi all @U0GONE",
    });
    expect(byId(messages, "1704881300.000700").text).toBe("log attached\n[file: build.log]");
  });

  it("reports what it skipped per file, the repeated ts, and a folder no list names", async () => {
    const { messages, report } = await readAll([WORKSPACE]);
    expect(messages.filter((m) => m.id === "1704881300.000700")).toHaveLength(1);
    expect(report.duplicates).toBe(1);
    const day = report.files.find((f) => f.file.endsWith(join("general", "2024-01-10.json")));
    expect(day?.skipped).toEqual({
      "subtype: hidden subtype message_changed": 1,
      'ts: expected a Slack timestamp string such as "1736478630.905399" (got nothing)': 1,
    });
    expect(report.skippedItems).toContainEqual(expect.objectContaining({ at: "[7]", field: "ts" }));
    expect(report.notes.join(" ")).toMatch(/listed in no channels file/);
    expect(report.channels[0]).toEqual({
      channel: "C0GENERAL",
      channelName: "general",
      platform: "slack",
      messages: 11,
      first: "2024-01-10T09:46:40.000Z",
      last: "2024-01-11T10:05:00.000Z",
    });
    expect(report.channels.map((c) => c.messages)).toEqual([11, 2, 1, 1, 1, 1]);
    expect(byId(messages, "1705136400.000100").channel).toBe("orphan");
  });

  it("reads a ZIP entry by entry, with or without a top folder, as it reads the folder", async () => {
    const folder = await readAll([WORKSPACE]);
    const dir = tempDir();
    for (const prefix of ["", "My Workspace Slack export Jan 1 2024/"]) {
      const zip = join(dir, `export-${prefix.length}.zip`);
      await writeZip(zip, workspaceFiles(prefix));
      const zipped = await readAll([zip]);
      expect(zipped.messages).toEqual(folder.messages);
      expect(zipped.report.files[0].file).toMatch(/\.zip!/);
    }
  });

  it("refuses a channel list entry without an id, naming the file, the entry and the field", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "users.json"), "[]");
    writeFileSync(join(dir, "channels.json"), '[{"id":"C1","name":"general"},{"name":"no-id"}]');
    const error = await readAll([dir]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExportFormatError);
    expect(error).toMatchObject({
      code: "EXPORT_MALFORMED",
      name: "ExportFormatError",
      file: join(dir, "channels.json"),
      at: "channels.json[1]",
      field: "id",
    });
  });

  it("refuses a day file that is not a JSON array, naming it, without quoting its content", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "channels.json"), '[{"id":"C1","name":"general"}]');
    mkdirSync(join(dir, "general"));
    writeFileSync(join(dir, "general", "2024-01-01.json"), '[{"ts": "1.0", "text": "secret words"');
    const error = (await readAll([dir]).catch((e: unknown) => e)) as ExportFormatError;
    expect(error).toBeInstanceOf(ExportFormatError);
    expect(error.file).toBe(join(dir, "general", "2024-01-01.json"));
    expect(error.field).toBe("json");
    expect(error.message).not.toContain("secret");
    writeFileSync(join(dir, "general", "2024-01-01.json"), '{"messages": []}');
    await expect(readAll([dir])).rejects.toMatchObject({ field: "messages", at: "file" });
  });

  it("refuses a ZIP without channels.json, and a damaged ZIP, as unreadable inputs", async () => {
    const dir = tempDir();
    const zip = join(dir, "other.zip");
    await writeZip(zip, { "notes.txt": "hello" });
    await expect(readAll([zip])).rejects.toBeInstanceOf(ExportInputError);
    await expect(readAll([{ path: zip, format: "slack" }])).rejects.toMatchObject({
      field: "channels.json",
    });
    const damaged = join(dir, "damaged.zip");
    writeFileSync(damaged, Buffer.concat([Buffer.from("PK\u0003\u0004"), Buffer.alloc(64, 7)]));
    await expect(readAll([{ path: damaged, format: "slack" }])).rejects.toMatchObject({
      name: "ExportInputError",
      code: "EXPORT_UNREADABLE_INPUT",
    });
  });
});

describe("Slack posts by apps", () => {
  it("takes an app's post (its bot user in user, bot_id, no subtype) as a bot's, named by bot_profile.name", async () => {
    const { messages } = await readAll([APPS]);
    expect(byId(messages, "1706781600.000100")).toEqual({
      id: "1706781600.000100",
      ts: "2024-02-01T10:00:00.000Z",
      channel: "C0BUILDS",
      channelName: "builds",
      user: "CI",
      text: "Build #812 failed on main: logs (https://ci.example.com/812)",
      userId: "B0CI",
      kind: "bot",
      platform: "slack",
    });
    // The bot's own thread reply, and an app post whose words are only in an attachment.
    expect(byId(messages, "1706781900.000300")).toMatchObject({
      kind: "bot",
      user: "CI",
      userId: "B0CI",
      thread: "1706781600.000100",
    });
    expect(byId(messages, "1706782000.000400")).toMatchObject({
      kind: "bot",
      user: "GitHub",
      userId: "B0GITHUB",
      text: "[acme/api] Pull request opened: #42 Retry failed uploads by ana",
    });
    // Slackbot posts as USLACKBOT with no bot_id.
    expect(byId(messages, "1706785200.000500")).toMatchObject({
      kind: "bot",
      user: "Slackbot",
      userId: "USLACKBOT",
    });
    // A person's message beside them stays a person's.
    expect(byId(messages, "1706781700.000200")).toMatchObject({
      kind: "user",
      user: "ana.l",
      userId: "U0ANA",
    });
  });
});
