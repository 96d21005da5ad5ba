/**
 * `segment --ask-links` against a scripted OpenAI-compatible server on 127.0.0.1: a channel's own
 * stream is asked about before it is split, so an answer moves a message to another conversation
 * and so another segment; a thread's replies are never asked about; a server that fails leaves
 * the linker's segments, and says so on stderr; the model flags are refused where they mean
 * nothing.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../support/cli.js";
import {
  chatCompletion,
  chatError,
  closedAfterEach,
  startChatCompletionsServer,
} from "../support/llm-servers.js";
import { firstAsked, prompts, questionCount, unsureChat } from "../support/unsure-links.js";

const T0 = Date.UTC(2024, 2, 1, 10);
// Days later: every conversation has settled, and each is a closed segment.
const run = (args: string[]) => runCli(args, T0 + 3 * 86_400_000);
const serve = closedAfterEach(startChatCompletionsServer);

const dir = mkdtempSync(join(tmpdir(), "convoseg-segment-ask-"));
const input = join(dir, "chat.jsonl");
// The linker's unsure chat, and a thread under its first message: a stream of its own.
writeFileSync(
  input,
  [
    ...unsureChat(T0),
    ...[1, 2].map((k) => ({
      id: `t${k}`,
      ts: T0 + k * 60_000,
      channel: "help",
      user: "eve",
      text: `threaded reply ${k}`,
      thread: "m0",
    })),
  ]
    .map((m) => JSON.stringify(m))
    .join("\n"),
);

interface Segment {
  thread: string | null;
  conversation: string | null;
  messageIds: string[];
}

const segments = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Segment);

const asking = (url: string, ...args: string[]) =>
  run(["segment", input, ...args, "--ask-links", "--llm-endpoint", `${url}/v1`]);

describe("segment --ask-links", () => {
  it("segments the conversations the model's answers make: a message answered 'new' starts one", async () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    // Only the first question is answered: it starts a conversation; the linker keeps the rest.
    const server = await serve(() =>
      chatCompletion(JSON.stringify({ answers: [{ question: 1, choice: "new" }] })),
    );
    const plain = await run(["segment", input, "--json"]);
    const asked = await asking(server.url, "--json");
    expect(asked.code, asked.stderr).toBe(0);
    expect(server.requests.length).toBeGreaterThan(0);
    const count = questionCount(prompts(server.requests));
    expect(count).toBeGreaterThan(1);
    expect(asked.stderr).toContain(
      `segment: help: asked the model about ${count} links, took 1 answer, 1 changing a link\n`,
    );
    // The channel's own messages only: a thread's replies are no question nor option.
    expect(prompts(server.requests).join("\n")).not.toContain("threaded reply");

    const moved = firstAsked(prompts(server.requests)[0] ?? "") ?? "";
    expect(moved).toMatch(/^m\d+$/);
    const before = segments(plain.stdout);
    const after = segments(asked.stdout);
    // Alone, the linker put the message in an earlier message's conversation; answered, it
    // leads a conversation of its own, and so a segment of its own.
    expect(before.find((s) => s.messageIds.includes(moved))?.conversation).not.toBe(moved);
    expect(after.find((s) => s.messageIds.includes(moved))).toMatchObject({
      thread: null,
      conversation: moved,
    });
    expect(after).not.toEqual(before);
    // Every message in exactly one segment, the thread's as before.
    const ids = (list: Segment[]) => list.flatMap((s) => s.messageIds).sort();
    expect(ids(after)).toEqual(ids(before));
    const thread = (list: Segment[]) => list.filter((s) => s.thread !== null);
    expect(thread(after)).toEqual(thread(before));

    const table = await asking(server.url);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(
      `\n  asked the model about ${count} links: 1 answer changed a link\n`,
    );
  });

  it("keeps the linker's segments when the model fails, and says so on stderr", async () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    const server = await serve(() => chatError(400));
    const plain = await run(["segment", input, "--json"]);
    const asked = await asking(server.url, "--json");
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toBe(plain.stdout);
    expect(asked.stderr).toMatch(
      /^segment: help: asked the model about \d+ links, took 0 answers, 0 changing a link; 1 batch failed \(.*\), the linker's own links kept$/m,
    );

    const plainTable = await run(["segment", input]);
    const table = await asking(server.url);
    expect(table.code, table.stderr).toBe(0);
    const line =
      /\n {2}asked the model about \d+ links: 0 answers changed a link, 1 batch failed\n/;
    expect(table.stdout).toMatch(line);
    expect(table.stdout.replace(line, "\n")).toBe(plainTable.stdout);
  });

  it.each([
    [["--model", "m"], /segment: --model needs --ask-links/],
    [["--llm-endpoint", "http://127.0.0.1:1/v1"], /segment: --llm-endpoint needs --ask-links/],
    [["--extractor", "openai"], /segment: --extractor needs --ask-links/],
    [
      ["--ask-links", "--conversations", "contiguous"],
      /segment: --ask-links needs --conversations linked \(contiguous links nothing\)/,
    ],
    [["--ask-links", "--extractor", "offline"], /--extractor must be one of openai, bedrock/],
  ])("refuses %j", async (args, message) => {
    const { code, stdout, stderr } = await run(["segment", input, ...args]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
  });
});
