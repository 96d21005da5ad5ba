/**
 * `import-chat` storing (a deployment's tables on the test DynamoDB Local, a workspace of its
 * own), and issue 22's "done when": a Slack export ZIP, a DiscordChatExporter file and a
 * Telegram result.json each go through `run --input <file> --report report.html` to a report
 * with their channels, threads and topics.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { beforeEach, describe, expect, inject, it, vi } from "vitest";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { exportFixture, jsonLines, SLACK_FOLDER, slackZip } from "./export-fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "convoseg-import-chat-store-"));
const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));
const DISCORD_PART1 = exportFixture(
  "discord",
  "server",
  "Test Guild - general [910000000000000001] part1.json",
);

/** The data a report embeds for its page. */
function reportData(file: string): {
  channels: {
    name: string;
    displayName?: string;
    counts: { messages: number };
    topics: { topic: string }[];
  }[];
} {
  const html = readFileSync(file, "utf8");
  const data = /<script type="application\/json" id="report-data"[^>]*>([\s\S]*?)<\/script>/.exec(
    html,
  );
  if (!data) throw new Error(`no report data in ${file}`);
  return JSON.parse(data[1]);
}

describe("run --input <export> --report", () => {
  beforeEach(() => {
    // The tier's emulators, fresh tables on them: no workspace.
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", inject("dynamodbEndpoint"));
    vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
  });

  it.each([
    ["a Slack export ZIP", "slack", ["C0GENERAL", "C0RANDOM", "G0SECRET", "D0DM1"], "C0GENERAL"],
    ["a DiscordChatExporter file", "discord", ["910000000000000001"], "910000000000000001"],
    ["a Telegram result.json", "telegram", ["-1001234567890"], "-1001234567890"],
  ])(
    "%s goes to a report of its channels, threads and topics",
    async (_, format, channels, threaded) => {
      const input =
        format === "slack"
          ? await slackZip(join(dir, "run.zip"))
          : format === "discord"
            ? DISCORD_PART1
            : exportFixture("telegram", "result.json");
      const report = join(dir, `${format}.html`);
      const segments = join(dir, `${format}-segments.jsonl`);
      const run = await cli(["run", "--input", input, "--report", report, "--out", segments]);
      expect(run.code, run.stderr).toBe(0);
      const data = reportData(report);
      expect(data.channels.map((c) => c.name)).toEqual(expect.arrayContaining(channels));
      const main = data.channels.find((c) => c.name === threaded);
      expect(main?.topics.length).toBeGreaterThan(0);
      // The summary names the same channels and topics.
      expect(run.stdout).toContain(`${main?.displayName} (${threaded}): `);
      expect(run.stdout).toContain(main?.topics[0].topic);
      // Replies (thread replies, or answers) are segmented with the channel they belong to.
      const out = join(dir, `${format}.jsonl`);
      expect((await cli(["import-chat", input, "--out", out])).code).toBe(0);
      const replies = jsonLines(readFileSync(out, "utf8")).filter(
        (m) => m.channel === threaded && (m.thread !== undefined || m.replyTo !== undefined),
      );
      expect(replies.length).toBeGreaterThan(0);
      const segmented = jsonLines(readFileSync(segments, "utf8"))
        .filter((s) => s.channel === threaded)
        .flatMap((s) => s.messageIds as string[]);
      for (const reply of replies) expect(segmented).toContain(reply.id);
    },
  );
});

describe("import-chat into a deployment's tables", () => {
  beforeEach(() => {
    stubLocalAws();
  });

  it("stores each message once: a re-import stores nothing new, other content is a conflict", async () => {
    const client = testDynamoDbClient();
    const suffix = Date.now().toString(36);
    const tables = ["--messages-table", `ic-${suffix}-m`, "--channels-table", `ic-${suffix}-c`];
    await createMessagesTable(client, `ic-${suffix}-m`);
    await createChannelsTable(client, `ic-${suffix}-c`);
    const server = exportFixture("discord", "server");
    const first = await cli(["import-chat", server, ...tables, "--json"]);
    expect(first.code, first.stderr).toBe(0);
    const stored = JSON.parse(first.stdout).store;
    expect(stored).toMatchObject({ stored: 8, unchanged: 0, conflicts: [], refused: [] });
    const again = await cli(["import-chat", server, DISCORD_PART1, ...tables, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).store).toMatchObject({ stored: 0, unchanged: 8 });
    const text = await cli(["import-chat", server, ...tables]);
    expect(text.stdout).toMatch(
      /^imported 8 messages in 1 channel from .*: 0 stored, 8 already there$/m,
    );
    // A later export with a message edited: reported as ingestion reports it, the stored one kept.
    const edited = await cli([
      "import-chat",
      exportFixture("discord", "edited-general.json"),
      ...tables,
    ]);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain(
      'channel "910000000000000001" message "1195000000000000006": stored already with another text (not stored: the stored message is kept)',
    );
    expect(edited.stderr).toMatch(/^import-chat: 1 message not stored: its id is taken/m);
  });

  it("names a table that is not there", async () => {
    const result = await cli([
      "import-chat",
      SLACK_FOLDER,
      "--messages-table",
      "no-such-messages",
      "--channels-table",
      "no-such-channels",
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^import-chat: no table .*no-such-messages/m);
  });
});

// Two commands start the workspace's own DynamoDB Local, and a run extracts: more than the default 30 s on a busy machine.
describe("import-chat into the workspace", () => {
  beforeEach(() => {
    // The workspace's own DynamoDB Local; the tier's SQS emulator for the run after it.
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", undefined);
    vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
  });

  it("keeps the messages for the next run, which segments them and stores nothing twice", async () => {
    const workspace = join(dir, "workspace");
    const input = exportFixture("telegram", "result.json");
    const imported = await cli(["import-chat", input, "--workspace", workspace]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/: 8 stored, 0 already there$/m);
    expect(imported.stdout).toMatch(/^next: npm start -- run --input /m);
    const again = await cli(["import-chat", input, "--workspace", workspace, "--json"]);
    expect(JSON.parse(again.stdout).store).toMatchObject({ stored: 0, unchanged: 8 });
    const run = await cli(["run", "--input", input, "--workspace", workspace]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^run: 8 messages were stored already, as sent$/m);
    expect(run.stdout).toMatch(/^Builders \(-1001234567890\): 8 messages in \d+ conversations? /m);
  }, 120_000);

  it("--conversations keeps how the workspace segments: the next run goes on so, a changed one is said", async () => {
    const workspace = join(dir, "contiguous");
    const input = exportFixture("telegram", "result.json");
    const imported = await cli([
      "import-chat",
      input,
      "--workspace",
      workspace,
      "--conversations",
      "contiguous",
      "--json",
    ]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout).store).toMatchObject({ conversations: "contiguous" });
    const kept = JSON.parse(readFileSync(join(workspace, "workspace.json"), "utf8"));
    expect(kept.conversations).toBe("contiguous");
    const run = await cli(["run", "--input", input, "--workspace", workspace]);
    expect(run.code, run.stderr).toBe(0);
    // Contiguous: the channel's timeline is one stream, so no "(N segments)" beside conversations.
    expect(run.stdout).toMatch(/^Builders \(-1001234567890\): 8 messages in \d+ conversations?,/m);
    expect(run.stderr).not.toMatch(/^conversations: /m);
    const linked = await cli([
      "run",
      "--workspace",
      workspace,
      "--conversations",
      "linked",
      "--input",
      input,
    ]);
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.stderr).toMatch(
      /^conversations: linked from now on \(this workspace was segmented contiguous; /m,
    );
    expect(JSON.parse(readFileSync(join(workspace, "workspace.json"), "utf8")).conversations).toBe(
      "linked",
    );
  }, 180_000);
});
