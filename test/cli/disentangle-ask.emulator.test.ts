/**
 * `disentangle --ask-links` against a scripted OpenAI-compatible server on 127.0.0.1: the unsure
 * links are asked in batches, the answers among the options shown are taken (a start, a parent),
 * one naming a message never shown is not, and a server that fails leaves the linker's links.
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
const run = (args: string[]) => runCli(args, T0 + 86_400_000);
const serve = closedAfterEach(startChatCompletionsServer);

const dir = mkdtempSync(join(tmpdir(), "convoseg-disentangle-ask-"));
const input = join(dir, "chat.jsonl");
writeFileSync(
  input,
  unsureChat(T0)
    .map((m) => JSON.stringify(m))
    .join("\n"),
);

const lines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: string; conversation: string; parent?: string });

/** disentangle of the input, plain and asking the model at `url`. */
const both = async (url: string) => ({
  plain: await run(["disentangle", input, "--json"]),
  asked: await run(["disentangle", input, "--json", "--ask-links", "--llm-endpoint", `${url}/v1`]),
});

describe("disentangle --ask-links", () => {
  it("takes the answers offered: the first question starts a conversation, the others their first option", async () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    const server = await serve((request) => {
      const [prompt] = prompts([request]);
      const questions = prompt?.match(/^Question \d+:/gm) ?? [];
      return chatCompletion(
        JSON.stringify({
          answers: [
            ...questions.map((_, i) => ({ question: i + 1, choice: i === 0 ? "new" : 1 })),
            { question: 2, choice: 9 },
          ],
        }),
      );
    });
    const { plain, asked } = await both(server.url);
    expect(asked.code, asked.stderr).toBe(0);
    expect(server.requests.length).toBeGreaterThan(0);
    const count = questionCount(prompts(server.requests));
    expect(asked.stderr).toContain(
      `disentangle: help: asked the model about ${count} links, took ${count} answers`,
    );
    // Every message once, in order; the first question's message now starts a conversation.
    const before = lines(plain.stdout);
    const after = lines(asked.stdout);
    expect(after.map((l) => l.id)).toEqual(before.map((l) => l.id));
    const first = firstAsked(prompts(server.requests)[0] ?? "");
    const started = after.find((l) => l.id === first);
    expect(started).toMatchObject({ conversation: first });
    expect(started?.parent).toBeUndefined();
  });

  it("keeps the linker's links when the model fails, and says so", async () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    const server = await serve(() => chatError(400));
    const { plain, asked } = await both(server.url);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toBe(plain.stdout);
    expect(asked.stderr).toMatch(
      /took 0 answers, 0 changing a link; 1 batch failed \(.*\), the linker's own links kept/,
    );
  });

  it("refuses a model flag without --ask-links", async () => {
    const { code, stderr } = await run(["disentangle", input, "--model", "m"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--model needs --ask-links/);
  });
});
