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
    expect(format.stderr).toMatch(/--format must be md, html or json/);
    expect(lone.code).toBe(2);
    expect(lone.stderr).toMatch(/--results-table and --messages-table/);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`channel "helpx" has nothing in the results table`);
    expect(unknown.stderr).toContain("npm start -- digest help");
    expect(unknown.stdout).toBe("");
  });

  it("digests the workspace's last week by its simulated clock, channels by name, and refuses an unknown one", async () => {
    const { ws, chat } = await sampleRun("digest", { seed: 5, channels: ["desk"], perChannel: 60 });
    const wide = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));

    const json = await wide(["digest", "desk", "--since", "2w", "--format", "json", ...ws]);
    const unknown = await wide(["digest", "deskk", "--since", "7d", ...ws]);
    const questions = await wide(["questions", "desk", ...ws]);

    expect(json.code, json.stderr).toBe(0);
    const digest = JSON.parse(json.stdout) as Digest;
    // The workspace's clock, not the machine's: where the run on 2025's sample chat left it.
    expect(digest.until).toBeLessThan(Date.UTC(2026, 0, 1));
    expect(digest.until - digest.since).toBe(14 * DAY);
    const inPeriod = chat.filter((m) => m.ts >= digest.since && m.ts < digest.until);
    expect(digest.activity[0].messages).toBeGreaterThan(0);
    expect(digest.activity[0].messages).toBeLessThanOrEqual(inPeriod.length);
    // Every UTC day the period touches: 15 when it does not begin at midnight.
    const touched = Math.floor((digest.until - 1) / DAY) - Math.floor(digest.since / DAY) + 1;
    expect(digest.activity[0].days).toHaveLength(touched);
    expect(touched).toBeGreaterThanOrEqual(14);
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
});
