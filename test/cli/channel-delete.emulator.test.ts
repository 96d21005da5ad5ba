import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "convoseg/dynamodb";
import { KeyphraseExtractor } from "convoseg/extraction/offline";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { IngestClient } from "convoseg/ingest";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { promptVersionOf, SegmentExtractor } from "convoseg/knowledge/write";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { segmentDocuments } from "convoseg/search";
import { LanceChannelIndexes } from "convoseg/search/lancedb";
import { describe, expect, it, vi } from "vitest";
import { main } from "../../cli/commands.js";
import { CHAT_ANALYSIS, createResultsTestTable, segmentOf } from "../knowledge/fixtures.js";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { sampleRun, scanWorkspace, textsOnDisk } from "../support/workspace-run.js";

const NOW = Date.UTC(2100, 0, 1);
const cli = (args: string[]) => runCli(args, NOW);

/** The partitions of every table of the workspace at `dir`, with their item counts. */
async function workspaceCensus(dir: string) {
  const found: Record<string, Record<string, number>> = {};
  for (const [role, items] of Object.entries(await scanWorkspace(dir))) {
    found[role] = {};
    for (const item of items) {
      const partition = String(item.conversation ?? item.channel);
      found[role][partition] = (found[role][partition] ?? 0) + 1;
    }
  }
  return found;
}

/** `channel delete` with a terminal on standard input that answers `answer`. */
async function onTerminal(args: string[], answer: string) {
  const stdin = Object.assign(Readable.from([answer]), { isTTY: true });
  let stdout = "";
  let stderr = "";
  const code = await main(args, {
    stdin,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    now: () => NOW,
  });
  return { code, stdout, stderr };
}

describe("channel delete", () => {
  it("removes a workspace channel's state, ledger, messages and results, and nothing of another", async () => {
    const { dir, ws } = await sampleRun(
      "delete",
      { seed: 5, channels: ["desk", "ops"], perChannel: 20 },
      cli,
    );
    const before = await workspaceCensus(dir);
    for (const role of ["messagesTable", "channelsTable", "resultsTable", "segmentsTable"]) {
      expect(before[role].desk, role).toBeGreaterThan(0);
    }

    const dry = await cli(["channel", "delete", "desk", "--dry-run", ...ws]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^channel "desk" holds \(dry run: nothing deleted\):\n/);
    expect(dry.stdout).toContain(`  messages:      20 items (table convoseg-messages)`);
    expect(dry.stdout).toMatch(/ {2}channel state: \d+ items? \(table convoseg-channels\)/);
    expect(dry.stdout).toMatch(/ {2}ledger: +\d+ items? \(table convoseg-segments\)/);
    const refused = await cli(["channel", "delete", "desk", ...ws]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^channel delete: not deleting channel "desk" \(\d+ items\) without --yes: standard input is no terminal to ask on; run again with --yes, or --dry-run/,
    );
    expect(await workspaceCensus(dir)).toEqual(before);

    const ids = Array.from({ length: 20 }, (_, i) => `desk-${String(i).padStart(4, "0")}`);
    expect(textsOnDisk(dir, ids).length).toBeGreaterThan(0);
    const deleted = await cli(["channel", "delete", "desk", "--yes", ...ws]);
    expect(deleted.code, deleted.stderr).toBe(0);
    // Not a copy of its messages left in the database files either.
    expect(deleted.stderr).toContain(
      "channel delete: rewrote the workspace's database files without the channel's messages",
    );
    expect(textsOnDisk(dir, ids)).toEqual([]);
    expect(deleted.stdout).toBe(dry.stdout.replace("holds (dry run: nothing deleted)", "deleted"));
    const after = await workspaceCensus(dir);
    for (const role of Object.keys(before)) {
      expect(after[role], role).not.toHaveProperty("desk");
      expect(after[role].ops, role).toBe(before[role].ops);
    }

    const again = await cli(["channel", "delete", "desk", "--yes", ...ws]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^channel delete: nothing is stored of channel "desk" in the workspace /,
    );
    const typo = await cli(["channel", "delete", "opz", "--yes", ...ws]);
    expect(typo.stderr).toContain(
      "channel delete: did you mean (with the same options)\n  npm start -- channel delete ops\n",
    );
  }, 240_000);

  it("asks on a terminal, and deletes only on yes; against a deployment's tables and search index", async () => {
    stubLocalAws();
    const client = testDynamoDbClient();
    const suffix = Date.now().toString(36);
    const tables = {
      messagesTable: `delete-messages-${suffix}`,
      channelsTable: `delete-channels-${suffix}`,
      resultsTable: await createResultsTestTable(client),
    };
    await createMessagesTable(client, tables.messagesTable);
    await createChannelsTable(client, tables.channelsTable);
    const { segment, messages } = segmentOf("s0", ["the grub bootloader", "grub again"], "ops");
    await new IngestClient({ client, ...tables }).ingest(
      messages.map((m) => ({ ...m, channel: "ops" })),
    );
    const { result } = await new SegmentExtractor({
      store: new DynamoDbResultStore({ client, tableName: tables.resultsTable }),
      extractor: new KeyphraseExtractor(),
      model: "offline",
      promptVersion: promptVersionOf(CHAT_ANALYSIS),
    }).extract(segment, messages);
    // The deployment's search index, in a directory (the stack's is on S3).
    const searchIndex = join(mkdtempSync(join(tmpdir(), "convoseg-delete-search-")), "index");
    const index = new LanceChannelIndexes(searchIndex);
    await index.replaceSegment("ops", "s0", segmentDocuments(result, messages));
    const documents = await index.count("ops");
    expect(documents).toBeGreaterThan(0);
    const args = [
      "channel",
      "delete",
      "ops",
      "--table",
      tables.channelsTable,
      "--messages-table",
      tables.messagesTable,
      "--results-table",
      tables.resultsTable,
      "--search-index",
      searchIndex,
    ];

    const declined = await onTerminal(args, "no\n");
    expect(declined.code).toBe(1);
    expect(declined.stderr).toMatch(/^channel "ops" holds:\n {2}channel state: 1 item /);
    expect(declined.stderr).toMatch(/Delete all of it from the tables named\? Type yes to go on: /);
    expect(declined.stderr).toMatch(/channel delete: nothing deleted\n$/);
    const kept = await documentClient(client).send(
      new ScanCommand({ TableName: tables.messagesTable }),
    );
    expect(kept.Items?.length).toBeGreaterThan(0);

    const accepted = await onTerminal(args, "yes\n");
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toMatch(/^channel "ops" deleted:\n {2}channel state: 1 item /);
    expect(accepted.stdout).toContain(`search index:  ${documents} items (table ${searchIndex})`);
    expect(await index.count("ops")).toBe(0);
    expect(await index.search({ text: "grub" })).toEqual([]);
    index.close();
    for (const table of Object.values(tables)) {
      const { Items = [] } = await documentClient(client).send(
        new ScanCommand({ TableName: table }),
      );
      expect(Items, table).toEqual([]);
    }
  });

  it.each([
    [["channel", "delete"], /expected one channel id/],
    [["channel", "show", "x", "--yes"], /--yes is for delete/],
    [["channel", "delete", "x", "--workspace", "w", "--results-table", "r"], /name two places/],
    [
      ["channel", "delete", "x", "--table", "c"],
      /needs its three tables: --table, --messages-table and --results-table/,
    ],
  ])("rejects %j with usage", async (args, message) => {
    vi.stubEnv("CHANNELS_TABLE", undefined);
    vi.stubEnv("MESSAGES_TABLE", undefined);
    vi.stubEnv("RESULTS_TABLE", undefined);
    const { code, stderr } = await cli(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
