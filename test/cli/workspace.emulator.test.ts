import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { beforeEach, describe, expect, inject, it, vi } from "vitest";
import { sampleChat } from "../../local/sample.js";
import { openWorkspace } from "../../local/workspace.js";
import { runCli } from "../support/cli.js";
import {
  chatCompletion,
  closedAfterEach,
  type RecordedRequest,
  startChatCompletionsServer,
} from "../support/llm-servers.js";

const dir = mkdtempSync(join(tmpdir(), "convoseg-workspace-"));
const startServer = closedAfterEach(startChatCompletionsServer);
const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));
const HOUR = 3_600_000;
const SEGMENTING = ["--settle", "1h", "--tick", "15m", "--max-size", "8"];

function chatFile(name: string, start: number, perChannel = 30): string {
  const path = join(dir, name);
  const chat = sampleChat({
    seed: 3,
    channels: ["desk"],
    perChannel,
    settle: HOUR,
    topical: true,
    start,
  });
  // Ids of their own per file, so that a second file is new data.
  writeFileSync(path, chat.map((m) => JSON.stringify({ ...m, id: `${name}-${m.id}` })).join("\n"));
  return path;
}

const jsonLines = <T>(file: string): T[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);

/** Every result and ledger entry of the workspace at `path`. */
async function contents(path: string) {
  const workspace = await openWorkspace({ dir: path, create: false, note: () => {} });
  try {
    const reader = new KnowledgeReader({
      client: workspace.dynamodb(),
      tableName: workspace.tables.resultsTable,
    });
    const entries = await workspace.ledger.entries();
    const results = [];
    for (const channel of new Set(entries.map((e) => e.channel))) {
      results.push(...(await reader.results(channel)));
    }
    return { entries, results };
  } finally {
    await workspace.close();
  }
}

beforeEach(() => {
  // The workspace's own DynamoDB Local; the tier's SQS emulator.
  vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", undefined);
  vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
  vi.stubEnv("OPENAI_API_KEY", "test-key");
});

describe("the local workspace", () => {
  it("keeps what run stored for topics, channel, report and reextract, with no table flags", async () => {
    const workspace = join(dir, "reuse");
    const ws = ["--workspace", workspace];
    const out = join(dir, "reuse-segments.jsonl");
    const run = await cli([
      "run",
      "--input",
      chatFile("reuse.jsonl", Date.UTC(2025, 0, 6)),
      ...SEGMENTING,
      ...ws,
      "--out",
      out,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^Kept in the workspace .*reuse: \d+ segments of 1 channel, \d+ extracted/m,
    );
    const segments = jsonLines<{ segmentId: string }>(out);

    const topics = await cli(["topics", "desk", ...ws]);
    expect(topics.code, topics.stderr).toBe(0);
    expect(topics.stdout).toMatch(/^"desk": \d+ topics?, most supported first$/m);
    expect(topics.stdout).toContain(`segment ${segments[0].segmentId}`.slice(0, 10));

    const channel = await cli(["channel", "show", "desk", ...ws]);
    expect(channel.code, channel.stderr).toBe(0);
    expect(JSON.parse(channel.stdout)).toMatchObject({
      channel: "desk",
      outbox: { delivered: true },
    });

    const page = join(dir, "reuse.html");
    const report = await cli(["report", ...ws, "--out", page]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stderr).toContain(`1 channel, ${segments.length} segments`);
    expect(readFileSync(page, "utf8")).toContain("<html");

    const again = await cli(["reextract", "desk", segments[0].segmentId, ...ws]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^segment ${segments[0].segmentId}: re-extracted`));
    const { results } = await contents(workspace);
    expect(results.find((r) => r.segmentId === segments[0].segmentId)?.replaced).toBeDefined();
  }, 240_000);

  it("appends a second run's messages to the same channels and extracts only the new segments", async () => {
    const workspace = join(dir, "incremental");
    const ws = ["--workspace", workspace];
    const first = join(dir, "first.jsonl");
    const second = join(dir, "second.jsonl");
    const one = await cli([
      "run",
      "--input",
      chatFile("a.jsonl", Date.UTC(2025, 0, 6)),
      ...SEGMENTING,
      ...ws,
      "--candidates",
      first,
    ]);
    expect(one.code, one.stderr).toBe(0);
    const before = await contents(workspace);
    const two = await cli([
      "run",
      "--input",
      chatFile("b.jsonl", Date.UTC(2025, 2, 1)),
      ...SEGMENTING,
      ...ws,
      "--candidates",
      second,
    ]);
    expect(two.code, two.stderr).toBe(0);
    const after = await contents(workspace);

    const old = jsonLines<{ segmentId: string }>(first).map((l) => l.segmentId);
    const added = jsonLines<{ segmentId: string }>(second).map((l) => l.segmentId);
    expect(old.length).toBeGreaterThan(2);
    expect(added.length).toBeGreaterThan(2);
    expect(added.filter((id) => old.includes(id))).toEqual([]);
    expect(after.entries.map((e) => e.segmentId).sort()).toEqual([...old, ...added].sort());
    expect(after.results.map((r) => r.segmentId).sort()).toEqual([...old, ...added].sort());
    expect(new Set(after.entries.map((e) => e.channel))).toEqual(new Set(["desk"]));
    // The old segments were not extracted again.
    const when = (results: typeof before.results) =>
      new Map(results.map((r) => [r.segmentId, r.extractedAt]));
    for (const [id, at] of when(before.results)) expect(when(after.results).get(id)).toBe(at);
    expect(two.stdout).toMatch(
      new RegExp(
        `Kept in the workspace .*: ${old.length + added.length} segments of 1 channel, ${old.length + added.length} extracted`,
      ),
    );
  }, 240_000);

  it("says which messages a second run could not store because their ids are taken, and exits 1", async () => {
    const workspace = join(dir, "taken");
    const ws = ["--workspace", workspace, "--extractor", "none"];
    const input = chatFile("taken.jsonl", Date.UTC(2025, 0, 6), 12);
    expect((await cli(["run", "--input", input, ...SEGMENTING, ...ws])).code).toBe(0);
    // The same file again: stored already, as sent.
    const again = await cli(["run", "--input", input, ...SEGMENTING, ...ws]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/12 messages were stored already, as sent/);
    // Another file reusing the ids (as the IRC files' ids start at 0 in each file).
    const reused = chatFile("taken.jsonl", Date.UTC(2025, 5, 1), 12);
    const taken = await cli(["run", "--input", reused, ...SEGMENTING, ...ws]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(
      /^line 1: id "taken\.jsonl-[^"]+" of channel "desk" is stored already with another ts/m,
    );
    expect(taken.stderr).toMatch(
      /run: 12 messages were not stored: their ids .* \(the first 5 above\)/,
    );
    expect(taken.stderr).not.toMatch(/valid messages? not stored/);
  }, 240_000);

  it("--fresh starts from empty", async () => {
    const workspace = join(dir, "fresh");
    const ws = ["--workspace", workspace];
    const input = chatFile("fresh.jsonl", Date.UTC(2025, 0, 6), 12);
    expect((await cli(["run", "--input", input, ...SEGMENTING, ...ws])).code).toBe(0);
    const other = join(dir, "other.jsonl");
    writeFileSync(
      other,
      JSON.stringify({
        id: "x1",
        ts: Date.UTC(2025, 0, 6),
        channel: "other",
        text: "the grub bootloader",
      }),
    );
    const fresh = await cli(["run", "--input", other, ...SEGMENTING, ...ws, "--fresh"]);
    expect(fresh.code, fresh.stderr).toBe(0);
    const { entries, results } = await contents(workspace);
    expect(entries.map((e) => e.channel)).toEqual(["other"]);
    expect(results.map((r) => r.channel)).toEqual(["other"]);
    const gone = await cli(["topics", "desk", ...ws]);
    expect(gone.code).toBe(1);
    expect(gone.stdout).toBe("");
    expect(gone.stderr).toContain(
      'topics: channel "desk" has no stored messages in the workspace (not a channel with no topics yet)',
    );
    const invisible = await cli(["topics", "other\u200b", ...ws]);
    expect(invisible.code).toBe(1);
    expect(invisible.stderr).toContain('channel "other\\u200b" has no stored messages');
    expect(invisible.stderr).toContain(
      "did you mean (with the same options)\n  npm start -- topics other\n",
    );
  }, 240_000);

  it("says in one line to run first when a read command finds no workspace", async () => {
    const empty = mkdtempSync(join(tmpdir(), "convoseg-empty-"));
    for (const args of [
      ["topics", "desk"],
      ["channel", "show", "desk"],
      ["report"],
      ["reextract", "desk", "s1"],
    ]) {
      const { code, stderr } = await cli([...args, "--workspace", empty]);
      expect(code, args.join(" ")).toBe(1);
      expect(stderr).toBe(
        `${args[0]}: no workspace in ${empty}: run npm start -- run first (it makes one there), or pass the --workspace DIR a run used\n`,
      );
    }
  });
});

/** A model that names the first word after "the" in its excerpt, holding the answer when told. */
function answer(request: RecordedRequest) {
  const prompt = (request.body as { messages: { content: string }[] }).messages[0].content;
  const topic = /the (\w+)/.exec(prompt)?.[1] ?? "chat";
  return chatCompletion(
    JSON.stringify({
      candidates: [
        {
          topic,
          reason: "asked",
          confidence: 0.8,
          tags: [],
          turn_range: [1, 1],
          subjective: false,
          wiki_worthy: null,
        },
      ],
    }),
  );
}

const promptOf = (request: RecordedRequest) => JSON.stringify(request.body);

describe("a run killed during extraction", () => {
  it("is finished by the next run: every segment extracted once, none twice", async () => {
    const workspace = join(dir, "killed");
    let killing = true;
    // The third model call never gets an answer while the first run lives.
    const server = await startServer((request, index) =>
      killing && index === 2 ? { ...answer(request), delayMs: 600_000 } : answer(request),
    );
    const input = chatFile("killed.jsonl", Date.UTC(2025, 0, 6));
    const args = [
      "run",
      "--input",
      input,
      ...SEGMENTING,
      "--workspace",
      workspace,
      "--llm-endpoint",
      `${server.url}/v1`,
    ];
    const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_API_KEY: "test-key" };
    delete env.AWS_ENDPOINT_URL_DYNAMODB;
    delete env.AWS_ENDPOINT_URL_SQS;
    const child: ChildProcess = spawn(
      process.execPath,
      ["--import", "tsx", "cli/main.ts", ...args],
      {
        stdio: "ignore",
        env,
      },
    );
    const exited = new Promise((resolve) => child.once("exit", resolve));
    while (server.requests.length < 3) {
      if (child.exitCode !== null) throw new Error(`run ended first (${child.exitCode})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill("SIGKILL");
    await exited;
    killing = false;

    const again = await cli(args);

    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/took over the lock of .* which is no longer running/);
    expect(again.stdout).toMatch(/, and \d+ segments? an earlier command left, taken up first; /);
    const segmented = await cli(["segment", input, "--json", "--settle", "1h", "--max-size", "8"]);
    const count = segmented.stdout.trim().split("\n").length;
    const { entries, results } = await contents(workspace);
    const ids = entries.map((e) => e.segmentId).sort();
    expect(ids).toHaveLength(count);
    expect(results.map((r) => r.segmentId).sort()).toEqual(ids);
    // Each segment is one window: one answered call per segment, none answered twice.
    const answered = server.requests.filter((r) => !r.abandoned).map(promptOf);
    expect(answered).toHaveLength(ids.length);
    expect(new Set(answered).size).toBe(answered.length);
  }, 300_000);
});
