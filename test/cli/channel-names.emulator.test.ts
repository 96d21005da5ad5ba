/**
 * Commands take a channel's name where it is unambiguous (issue 22 §1): `topics` and `channel`
 * on a workspace whose messages carry `channelName`; a name two channels carry is refused with
 * their ids; an id always wins over a name.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { resolveChannel } from "../../cli/shared/channel-names.js";
import { sampleChat } from "../../local/sample.js";
import { runCli } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "convoseg-names-"));
const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));
const HOUR = 3_600_000;
const SEGMENTING = ["--settle", "1h", "--tick", "15m", "--max-size", "8"];

/** Chat in three channels by id: two of them carry the same name. */
function chatFile(): string {
  const names: Record<string, string> = { C1: "desk", C2: "random", C3: "random" };
  const lines = Object.entries(names).flatMap(([channel, channelName]) =>
    sampleChat({
      seed: 3,
      channels: [channel],
      perChannel: 12,
      settle: HOUR,
      topical: true,
      start: Date.UTC(2025, 0, 6),
    }).map((m) => JSON.stringify({ ...m, channel, channelName, platform: "slack" })),
  );
  const path = join(dir, "chat.jsonl");
  writeFileSync(path, lines.join("\n"));
  return path;
}

beforeEach(() => {
  // The workspace's own DynamoDB Local; the tier's SQS emulator.
  vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", undefined);
  vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
});

describe("a channel given by its name", () => {
  const ws = ["--workspace", join(dir, "ws")];
  // One run for every command below; each command then has its own budget, as a loaded
  // machine starts DynamoDB Local slowly for each.
  beforeAll(async () => {
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", undefined);
    vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
    const run = await cli(["run", "--input", chatFile(), ...SEGMENTING, ...ws]);
    expect(run.code, run.stderr).toBe(0);
  }, 180_000);

  it("resolves a name, with or without its #, in topics", async () => {
    const byName = await cli(["topics", "desk", ...ws, "--json"]);
    expect(byName.code, byName.stderr).toBe(0);
    expect(byName.stderr).toContain('topics: "desk" is channel C1');
    expect(JSON.parse(byName.stdout).channel).toBe("C1");
    const hashed = await cli(["topics", "#desk", ...ws, "--json"]);
    expect(JSON.parse(hashed.stdout).channel).toBe("C1");
  }, 90_000);

  it("heads topics, questions and the digest by the name people know, beside the id", async () => {
    const text = await cli(["topics", "C1", ...ws]);
    expect(text.stdout).toMatch(/^desk \(C1\): (\d+ topics?, most supported first|no topics)/);
    const asked = await cli(["questions", "desk", ...ws]);
    expect(asked.stdout).toMatch(/^desk \(C1\): /);
    const digest = await cli(["digest", "desk", "--format", "text", ...ws]);
    expect(digest.stdout).toMatch(/^Digest: desk \(C1\)\n/);
    expect(digest.stdout).toMatch(/^ {2}desk \(C1\): \d+ messages?, /m);
  }, 120_000);

  it("refuses an ambiguous name with the ids of its channels, in topics and channel reset", async () => {
    const ambiguous = await cli(["topics", "random", ...ws]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(
      'topics: "random" names 2 channels (C2, C3): give the id of one (npm start -- channels lists them)',
    );
    expect((await cli(["channel", "reset", "random", ...ws])).code).toBe(2);
  }, 90_000);

  it("resolves a name in channel show and the report", async () => {
    const show = await cli(["channel", "show", "desk", ...ws]);
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout).channel).toBe("C1");
    const out = join(dir, "desk.html");
    const page = await cli(["report", "--channel", "desk", "--out", out, ...ws]);
    expect(page.code, page.stderr).toBe(0);
    expect(page.stderr).toContain('report: "desk" is channel C1');
    expect(page.stderr).toMatch(/: 1 channel, /);
  }, 90_000);

  it("refuses an id that is another channel's name, takes a platform's id, and leaves an unknown one to the command", async () => {
    const asked: string[] = [];
    let listed = 0;
    const directory = {
      conversations: async () => {
        listed++;
        return ["C1", "general", "C0DEV", "random"];
      },
      nameOf: async (id: string) => {
        asked.push(id);
        return ({ C1: "general", C0DEV: "dev", general: "#general" } as Record<string, string>)[id];
      },
    };
    // The sample's `general` beside an imported Slack #general: which one is not guessed.
    expect(await resolveChannel("general", directory)).toEqual({ ambiguous: ["C1", "general"] });
    // An id no other channel carries as a name, its own name aside, is itself.
    expect(await resolveChannel("random", directory)).toEqual({ channel: "random", stored: true });
    asked.length = 0;
    expect(await resolveChannel("C0DEV", directory)).toEqual({ channel: "C0DEV", stored: true });
    expect(asked).toEqual([]);
    expect(await resolveChannel("#dev", directory)).toEqual({
      channel: "C0DEV",
      byName: "#dev",
      stored: true,
    });
    // An unknown id is passed on, said not to be stored, for the command to say so.
    expect(await resolveChannel("nope", directory)).toEqual({ channel: "nope", stored: false });
    // Whether it is stored comes with the resolution: the list is read once each.
    expect(listed).toBe(5);
  });
});
