import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compareIds } from "convoseg/identity";
import { parseChatMessage } from "convoseg/messages";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { exportFixture, jsonLines, SLACK_FOLDER, slackZip } from "./export-fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "convoseg-import-chat-"));
const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));

/** The `--out` line's keys, in the order it writes them; the first six are always there. */
const KEYS = [
  "id",
  "ts",
  "channel",
  "channelName",
  "user",
  "text",
  "userId",
  "replyTo",
  "thread",
  "kind",
  "platform",
  "guild",
];

async function outLines(inputs: string[], name: string, extra: string[] = []) {
  const out = join(dir, name);
  const result = await cli(["import-chat", ...inputs, "--out", out, ...extra]);
  expect(result.code, result.stderr).toBe(0);
  return { result, lines: jsonLines(readFileSync(out, "utf8")), text: readFileSync(out, "utf8") };
}

describe("import-chat --out", () => {
  it.each([
    ["a Slack export ZIP", "slack.zip"],
    ["a Slack export folder", SLACK_FOLDER],
    ["a DiscordChatExporter folder", exportFixture("discord", "server")],
    ["a Telegram result.json", exportFixture("telegram", "result.json")],
    ["a Telegram full export", exportFixture("telegram", "full-export.json")],
    ["a Mattermost bulk export", exportFixture("mattermost", "bulk.jsonl")],
    ["a WhatsApp chat", exportFixture("whatsapp", "club-dmy.txt")],
    ["a folder of IRC logs", exportFixture("irc")],
  ])(
    "writes %s as one chat input object per message, channel by channel, oldest first",
    async (_, input) => {
      const path = input === "slack.zip" ? await slackZip(join(dir, "slack.zip")) : input;
      const { text, lines } = await outLines([path], `${readdirSync(dir).length}.jsonl`, [
        "--timezone",
        "UTC",
      ]);
      expect(text.endsWith("\n")).toBe(true);
      expect(text.split("\n").length - 1).toBe(lines.length);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        const keys = Object.keys(line);
        expect(keys.slice(0, 6)).toEqual(KEYS.slice(0, 6));
        // The optional keys, when there, in their order.
        expect(keys).toEqual(KEYS.filter((key) => keys.includes(key)));
        expect(line.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(typeof line.id).toBe("string");
        expect(line.user === null || typeof line.user === "string").toBe(true);
        if (line.kind !== undefined) expect(["user", "bot", "system"]).toContain(line.kind);
        // Each line is chat input as segment and run --input read it.
        expect(parseChatMessage(line).id).toBe(line.id);
      }
      for (let i = 1; i < lines.length; i++) {
        const [a, b] = [lines[i - 1], lines[i]];
        if (a.channel === b.channel) expect((a.ts as string) <= (b.ts as string)).toBe(true);
        else expect(compareIds(a.channel as string, b.channel as string)).toBeLessThan(0);
      }
      const ids = lines.map((line) => `${line.channel}\u0000${line.id}`);
      expect(new Set(ids).size).toBe(ids.length);
    },
  );

  it("puts thread replies on their parent channel, and names the channel as the platform does", async () => {
    const { lines } = await outLines([SLACK_FOLDER], "threads.jsonl");
    const replies = lines.filter((line) => line.thread !== undefined);
    expect(replies.length).toBeGreaterThan(0);
    for (const reply of replies) {
      expect(reply.channel).toBe("C0GENERAL");
      expect(lines.some((l) => l.channel === reply.channel && l.id === reply.thread)).toBe(true);
    }
    expect(lines.find((l) => l.channel === "C0GENERAL")?.channelName).toBe("general");
  });

  it("merges overlapping inputs by id: the same export twice, or overlapping files, gives each message once", async () => {
    const once = await outLines([exportFixture("discord", "server")], "discord-once.jsonl");
    const part = (n: number) =>
      exportFixture("discord", "server", `Test Guild - general [910000000000000001] part${n}.json`);
    const twice = await outLines(
      [exportFixture("discord", "server"), part(1), part(2)],
      "discord-twice.jsonl",
    );
    expect(twice.text).toBe(once.text);
    const json = await cli([
      "import-chat",
      exportFixture("discord", "server"),
      part(2),
      "--dry-run",
      "--json",
    ]);
    expect(JSON.parse(json.stdout).duplicates).toBeGreaterThan(
      JSON.parse(
        (await cli(["import-chat", exportFixture("discord", "server"), "--dry-run", "--json"]))
          .stdout,
      ).duplicates,
    );
  });

  it("segments the same from its --out file as from the export itself", async () => {
    const out = join(dir, "segment-same.jsonl");
    expect((await cli(["import-chat", SLACK_FOLDER, "--out", out])).code).toBe(0);
    const options = ["--json", "--settle", "1h", "--now", "2030-01-01T00:00:00Z"];
    const fromOut = await cli(["segment", out, ...options]);
    const fromExport = await cli(["segment", SLACK_FOLDER, ...options]);
    expect(fromOut.code, fromOut.stderr).toBe(0);
    expect(fromExport.code, fromExport.stderr).toBe(0);
    expect(jsonLines(fromExport.stdout).length).toBeGreaterThan(3);
    expect(fromExport.stdout).toBe(fromOut.stdout);
    // What the export's reader skipped is said on standard error, file and reason.
    expect(fromExport.stderr).toMatch(
      /^segment: \S*general\/2024-01-10\.json: skipped 1: subtype: hidden subtype message_changed \(at entry \[5\]\)$/m,
    );
  });

  it("leaves no file behind when it cannot write --out", async () => {
    const out = join(dir, "missing-dir", "out.jsonl");
    const result = await cli(["import-chat", SLACK_FOLDER, "--out", out]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^import-chat: cannot write --out \S*out\.jsonl: ENOENT/m);
    expect(existsSync(join(dir, "missing-dir"))).toBe(false);
  });
});

describe("import-chat --dry-run", () => {
  it("--json: counts and dates per channel, skipped entries by reason, and the zone used", async () => {
    const zip = await slackZip(join(dir, "dry.zip"));
    const result = await cli(["import-chat", zip, "--dry-run", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      dryRun: true,
      inputs: [{ path: zip, format: "slack" }],
      messages: 17,
      first: "2024-01-10T09:46:40.000Z",
      last: "2024-01-13T09:00:00.000Z",
      skipped: {
        "subtype: hidden subtype message_changed": 1,
        'ts: expected a Slack timestamp string such as "1736478630.905399" (got nothing)': 1,
      },
      duplicates: 1,
    });
    expect(report.timezone).toEqual(expect.any(String));
    expect(report.channels[0]).toEqual({
      channel: "C0GENERAL",
      channelName: "general",
      platform: "slack",
      messages: 11,
      first: "2024-01-10T09:46:40.000Z",
      last: "2024-01-11T10:05:00.000Z",
    });
    expect(
      report.channels.reduce((sum: number, c: { messages: number }) => sum + c.messages, 0),
    ).toBe(17);
    expect(report.skippedItems[0]).toMatchObject({
      file: expect.stringMatching(/dry\.zip!general\/2024-01-10\.json$/),
    });
    // The same export as a folder reads the same.
    const folder = JSON.parse(
      (await cli(["import-chat", SLACK_FOLDER, "--dry-run", "--json"])).stdout,
    );
    expect(folder.channels).toEqual(report.channels);
  });

  it("names the zone zone-less times were read in, given or the machine's", async () => {
    const chat = exportFixture("whatsapp", "club-dmy.txt");
    const paris = JSON.parse(
      (await cli(["import-chat", chat, "--dry-run", "--json", "--timezone", "Europe/Paris"]))
        .stdout,
    );
    const utc = JSON.parse(
      (await cli(["import-chat", chat, "--dry-run", "--json", "--timezone", "UTC"])).stdout,
    );
    expect(paris.timezone).toBe("Europe/Paris");
    expect(paris.zonelessTimes).toBe(paris.messages);
    // 21:41 in Paris in December is 20:41 UTC.
    expect(Date.parse(utc.first) - Date.parse(paris.first)).toBe(3_600_000);
    const text = await cli(["import-chat", chat, "--dry-run"]);
    expect(text.stdout).toMatch(
      /^times without a zone: \d+, read in \S+, this machine's zone \(--timezone ZONE to say another\)$/m,
    );
  });

  it("prints a table of the channels and what was skipped", async () => {
    const result = await cli(["import-chat", SLACK_FOLDER, "--dry-run"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^would import 17 messages in 6 channels from \S+ \(slack\) \(dry run: nothing stored\)\n {2}channel +name +platform +messages +first +last\n {2}C0GENERAL +general +slack +11 +2024-01-10 09:46Z +2024-01-11 10:05Z$/m,
    );
    expect(result.stdout).toMatch(/^skipped: 2 entries/m);
  });
});

describe("import-chat refusals", () => {
  it.each([
    ["discord-truncated.json", "messages[1] (character 262)", "document"],
    ["discord-no-channel-id.json", "channel", "id"],
    ["telegram-bad-id.json", "(root)", "id"],
    ["whatsapp-mixed.txt", "line 3", "date"],
  ])("%s: names the file, the entry or line, and the field", async (name, at, field) => {
    const file = exportFixture("malformed", name);
    for (const args of [
      ["import-chat", file, "--dry-run"],
      ["import-chat", file, "--out", join(dir, `${name}.jsonl`)],
      ["run", "--input", file],
      ["segment", file],
    ]) {
      const result = await cli(args);
      expect(result.code, args.join(" ")).toBe(1);
      const command = args[0];
      expect(result.stderr).toContain(`${command}: ${file}: ${at}: ${field}: `);
    }
    expect(existsSync(join(dir, `${name}.jsonl`))).toBe(false);
  });

  it("says which input is no export it reads", async () => {
    const result = await cli(["import-chat", "package.json", "--dry-run"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "import-chat: package.json: not a Slack, DiscordChatExporter, Telegram, Mattermost or WhatsApp export nor an IRC log (give --format to say which)\n",
    );
  });

  it.each([
    [[], /expected an export/],
    [[SLACK_FOLDER, "--format", "hexchat"], /--format must be auto, slack, discord, .*, irc/],
    [[SLACK_FOLDER, "--timezone", "Mars/Base"], /--timezone: "Mars\/Base" is no IANA time zone/],
    [[SLACK_FOLDER, "--dry-run", "--out", "x.jsonl"], /--dry-run stores nothing: leave out --out/],
    [
      [SLACK_FOLDER, "--out", "x.jsonl", "--workspace", "w"],
      /--out and --workspace name two places/,
    ],
    [[SLACK_FOLDER, "--messages-table", "m"], /a deployment needs both tables/],
    [[SLACK_FOLDER, "--conversations", "threads"], /--conversations must be linked or contiguous/],
    [
      [SLACK_FOLDER, "--out", "x.jsonl", "--conversations", "contiguous"],
      /--conversations is a workspace's, and --out writes chat input/,
    ],
    [
      [SLACK_FOLDER, "--messages-table", "m", "--channels-table", "c", "--conversations", "linked"],
      /a deployment segments as its conversations setting says/,
    ],
  ])("refuses %j as a usage error", async (args, message) => {
    const result = await cli(["import-chat", ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});
