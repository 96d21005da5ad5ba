import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Digest } from "convoseg/digest";
import { textMessage } from "convoseg/history";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import type { TopicSupport } from "convoseg/knowledge/store";
import { DynamoDbResultStore, type SegmentResult } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { openWorkspace } from "../../local/workspace.js";
import { createMessagesTestTable, createResultsTestTable } from "../knowledge/fixtures.js";
import { DAY, question, result, SINCE, support, UNTIL } from "../outlets/digest/fixtures.js";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { sampleRun } from "../support/workspace-run.js";

const cli = (args: string[]) => runCli(args, UNTIL);

/** Saves a result and its topic entries as extraction does: under its lease. */
async function save(store: DynamoDbResultStore, saved: SegmentResult, supports: TopicSupport[]) {
  const lease = { owner: "test", now: 0, leaseMs: 60_000, expiresAt: 2_000_000_000 };
  await store.acquireLease(saved.channel, saved.segmentId, lease);
  await store.saveResult(saved, supports, undefined, "test");
}

/** A deployment's tables with a week of `help`: two conversations, a question of each kind. */
async function deployment(client: DynamoDBClient): Promise<string[]> {
  const resultsTable = await createResultsTestTable(client);
  const messagesTable = await createMessagesTestTable(client);
  const store = new DynamoDbResultStore({ client, tableName: resultsTable });
  const messages = new DynamoDbStore({ client, tableName: messagesTable });
  const talks = [
    { id: "old", ts: SINCE - 9 * DAY, topic: "grub bootloader", authors: ["ann", "bob"] },
    { id: "s1", ts: SINCE + DAY, topic: "GRUB boot-loader", authors: ["ann", "cy"] },
    { id: "s2", ts: SINCE + 3 * DAY, topic: "wifi <b>driver</b> @here", authors: ["dee", "dee"] },
  ];
  for (const talk of talks) {
    const ids = [`${talk.id}-m0`, `${talk.id}-m1`];
    await messages.write(
      "help",
      ids.map((id, i) =>
        textMessage("user", "text", { id, ts: talk.ts + i * 60_000, author: talk.authors[i] }),
      ),
    );
    const questions =
      talk.id === "s1"
        ? [
            question("q1", talk.ts, "unanswered", "why does it hang?"),
            question("q2", talk.ts + 1, "answered", "which version?", "2.06 works"),
          ]
        : [];
    await save(store, result("help", talk.id, talk.ts, talk.ts + 60_000, questions), [
      support("help", talk.id, talk.topic, talk.ts),
    ]);
  }
  return ["--results-table", resultsTable, "--messages-table", messagesTable];
}

describe("digest command", () => {
  it("writes a deployment's week as Markdown (default), JSON and an HTML page", async () => {
    stubLocalAws();
    const tables = await deployment(testDynamoDbClient());

    const md = await cli(["digest", "help", "--since", "7d", ...tables]);
    const week = await cli(["digest", "help", "--format", "json", ...tables]);
    const json = await cli(["digest", "help", "--since", "7d", "--format", "json", ...tables]);
    const out = join(mkdtempSync(join(tmpdir(), "convoseg-digest-")), "digest.html");
    const html = await cli([
      "digest",
      "help",
      "--since",
      "2026-01-05",
      "--format",
      "html",
      "--out",
      out,
      "--report-href",
      "r.html",
      ...tables,
    ]);

    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toMatch(/^# Digest: help\n/);
    expect(md.stdout).toContain("| help | 4 | 2 | 3 |");
    expect(md.stdout).toContain("**wifi \\<b\\>driver\\</b\\> \\@here** in help: 1 conversation");
    expect(md.stdout).toContain("(report.html#segment=help/s1)");
    expect(md.stdout).toMatch(
      /## Unanswered \(1\), oldest first[\s\S]*why does it hang\?[\s\S]*## Answered \(1\)[\s\S]*answer: 2\\\.06 works/,
    );
    expect(json.code, json.stderr).toBe(0);
    const digest = JSON.parse(json.stdout) as Digest;
    expect(digest).toMatchObject({ since: SINCE, until: UNTIL, channels: ["help"] });
    expect(digest.topics.map((t) => [t.topic, t.kind])).toEqual([
      ["wifi <b>driver</b> @here", "new"],
      ["grub bootloader", "recurring"],
    ]);
    expect(digest.activity[0].days).toHaveLength(7);
    // Without --since, a deployment's last week to now: the same digest, said on stderr.
    expect(week.code, week.stderr).toBe(0);
    expect(JSON.parse(week.stdout)).toEqual(digest);
    expect(week.stderr).toBe(
      "digest: the last week, 2026-01-05 to 2026-01-11 (no --since given)\n",
    );
    expect(digest.generatedAt).toBe(new Date(UNTIL).toISOString());
    expect(html.code, html.stderr).toBe(0);
    expect(html.stdout).toBe("");
    const page = readFileSync(out, "utf8");
    expect(page).toContain('<a href="r.html#segment=help/s1" title="segment s1">');
    expect(page).toContain("wifi &lt;b&gt;driver&lt;/b&gt; @here");
    expect(page).toContain("<svg");
  });

  it("refuses a bad --since or --format, a lone table, and says an unknown channel with near ids", async () => {
    stubLocalAws();
    const tables = await deployment(testDynamoDbClient());

    const since = await cli(["digest", "help", "--since", "last week", ...tables]);
    const format = await cli(["digest", "help", "--since", "7d", "--format", "pdf", ...tables]);
    const lone = await cli(["digest", "help", "--since", "7d", ...tables.slice(0, 2)]);
    const unknown = await cli(["digest", "helpx", "--since", "7d", ...tables]);

    expect(since.code).toBe(2);
    expect(since.stderr).toMatch(/^digest: --since must be a duration/);
    expect(format.code).toBe(2);
    expect(format.stderr).toMatch(/--format must be text, md, html or json/);
    expect(lone.code).toBe(2);
    expect(lone.stderr).toMatch(/--results-table and --messages-table/);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`channel "helpx" has nothing in the results table`);
    expect(unknown.stderr).toContain("npm start -- digest help");
    expect(unknown.stdout).toBe("");
  });

  it("digests the workspace's last weeks of its stored chat, channels by name, and refuses an unknown one", async () => {
    const { ws, chat } = await sampleRun("digest", { seed: 5, channels: ["desk"], perChannel: 60 });
    const wide = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));

    const json = await wide(["digest", "desk", "--since", "2w", "--format", "json", ...ws]);
    const unknown = await wide(["digest", "deskk", "--since", "7d", ...ws]);
    const questions = await wide(["questions", "desk", ...ws]);

    expect(json.code, json.stderr).toBe(0);
    const digest = JSON.parse(json.stdout) as Digest;
    // The stored chat's end, not the machine's clock: 2025's sample chat.
    expect(digest.until).toBeLessThan(Date.UTC(2026, 0, 1));
    expect(digest.until - digest.since).toBe(14 * DAY);
    const inPeriod = chat.filter((m) => m.ts >= digest.since && m.ts < digest.until);
    expect(digest.activity[0].messages).toBeGreaterThan(0);
    expect(digest.activity[0].messages).toBeLessThanOrEqual(inPeriod.length);
    // Whole UTC days: the period ends at the midnight after the last stored message.
    expect(digest.activity[0].days).toHaveLength(14);
    expect(digest.topics.length).toBeGreaterThan(0);
    for (const topic of digest.topics) {
      for (const e of topic.evidence) expect(e.firstTs).toBeGreaterThanOrEqual(digest.since);
    }
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`channel "deskk" has no stored messages in the workspace`);
    expect(unknown.stderr).toContain("npm start -- digest desk");
    // Ages are told from the same clock: days before where the run left it, not 75 years.
    expect(questions.code, questions.stderr).toBe(0);
    const ages = [...questions.stdout.matchAll(/ asked (\d+)([mhdy]) ago/g)];
    expect(ages.length).toBeGreaterThan(0);
    for (const [, n, unit] of ages)
      expect(unit === "d" ? Number(n) <= 30 : unit !== "y").toBe(true);
  }, 90_000); // A sample run and three commands, each starting the emulators: 20 s on a quiet machine.

  it("digests imported history by its own last week, whatever the clock, in dates a person reads", async () => {
    const { dir, ws } = await sampleRun("digest-history", {
      seed: 7,
      channels: ["rust"],
      perChannel: 40,
    });
    // The clock years past the data: as when 2018's chat is imported into a workspace whose
    // last run was of 2025's.
    const workspace = await openWorkspace({ dir, create: false, note: () => {} });
    workspace.advanceClock(Date.UTC(2030, 0, 1));
    await workspace.close();
    const now = Date.UTC(2031, 5, 1, 9, 30);
    const at = (args: string[], tty = false) => runCli(args, now, "", { tty });

    const json = await at(["digest", "rust", "--format", "json", ...ws]);
    const back = await at(["digest", "rust", "--since", "7d", "--format", "json", ...ws]);
    expect(json.code, json.stderr).toBe(0);
    const digest = JSON.parse(json.stdout) as Digest;
    const first = day(digest.since);
    const last = day(digest.until - 1);
    const since = await at(["digest", "rust", "--since", first, "--format", "json", ...ws]);
    const long = await at(["digest", "rust", "--since", "2020-01-01", ...ws]);
    const terminal = await at(["digest", "rust", ...ws], true);
    const piped = await at(["digest", "rust", ...ws]);

    // The week ending with the stored chat's last day, not the clock's 2030 nor now's 2031.
    expect(digest.until % DAY).toBe(0);
    expect(digest.until).toBeLessThan(Date.UTC(2026, 0, 1));
    expect(digest.until - digest.since).toBe(7 * DAY);
    expect(digest.activity[0].messages).toBeGreaterThan(0);
    expect(json.stderr).toContain(
      `digest: the last week of the stored chat, ${first} to ${last} (no --since given)\n`,
    );
    // Generated on the machine's clock; the period's dates are the data's.
    expect(digest.generatedAt).toBe(new Date(now).toISOString());
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toEqual(digest);
    expect(back.stderr).toContain(
      `digest: ${first} to ${last}, up to the end of the stored chat (${last}), not to now\n`,
    );
    expect(since.code, since.stderr).toBe(0);
    expect(JSON.parse(since.stdout)).toMatchObject({ since: digest.since, until: digest.until });
    // Too long a period names both flags, its length and the fix; no error class leaks.
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(
      new RegExp(
        `^digest: --since 2020-01-01 to the end of the stored chat \\(${last}\\) is [\\d,]+ days; a digest covers at most 366 days: add --until 2020-01-08 for a week`,
        "m",
      ),
    );
    expect(long.stderr).not.toMatch(/DigestError|Usage:/);
    expect(long.stdout).toBe("");
    // A terminal gets plain text, a pipe Markdown.
    expect(terminal.code, terminal.stderr).toBe(0);
    expect(terminal.stdout).toMatch(/^Digest: rust\n/);
    expect(terminal.stdout).toContain(`${first} to ${last} (UTC), generated 2031-06-01 09:30`);
    expect(terminal.stdout).not.toMatch(/\\|^#|\]\(/m);
    expect(piped.stdout).toMatch(/^# Digest: rust\n/);
  }, 120_000); // A sample run and six commands, each starting DynamoDB Local.
});

/** `2018-05-30` (UTC). */
const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
