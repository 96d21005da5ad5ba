/**
 * `faq` on a results table (DynamoDB Local, --table): recurring questions grouped from the
 * question index across segments and statuses, the best answer and the evidence shown, hostile
 * chat text escaped, --limit and --json, a channel with nothing stored told apart.
 */

import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { describe, expect, it, vi } from "vitest";
import { createResultsTestTable } from "../knowledge/fixtures.js";
import { question, resultWith, save } from "../knowledge/question-index.js";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";
import {
  closedAfterEach,
  type RecordedRequest,
  startEmbeddingsServer,
} from "../support/llm-servers.js";

const embeddings = closedAfterEach(startEmbeddingsServer);

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 6, 10);
const cli = (args: string[]) => runCli(args, NOW);
const minute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16)}Z`;

async function seeded(): Promise<string> {
  stubLocalAws();
  const client = testDynamoDbClient();
  const tableName = await createResultsTestTable(client);
  const store = new DynamoDbResultStore({ client, tableName });
  await save(
    store,
    resultWith("desk", "s1", [
      question("a", NOW - 9 * DAY, "unanswered", {
        question: "how do I install nvidia drivers?",
        askedBy: "ana",
      }),
      question("b", NOW - 5 * DAY, "answered", {
        question: "how to install the NVIDIA driver",
        askedBy: "bo",
        answer: "ubuntu-drivers \u001b[31minstall\u202e",
        answerIds: ["m-7", "m-9"],
      }),
      question("c", NOW - 4 * DAY, "unanswered", {
        question: "how do I uninstall nvidia drivers",
        askedBy: "cy",
      }),
    ]),
  );
  await save(
    store,
    resultWith("desk", "s2", [
      question("d", NOW - 2 * DAY, "answered", {
        question: "installing nvidia drivers, how?",
        askedBy: "ana",
        answer: "additional drivers",
        answerIds: ["m-20"],
      }),
      question("e", NOW - DAY, "unclear", {
        question: "wifi not working after suspend",
        askedBy: "dee",
      }),
      question("f", NOW - 3_600_000, "unanswered", {
        question: "wireless doesn't work after suspend",
        askedBy: "eve",
      }),
    ]),
  );
  await save(store, resultWith("quiet", "s3", [question("g", NOW - DAY)]));
  return tableName;
}

describe("faq command", () => {
  it("groups the channel's recurring questions, asked by most people first, with answers and evidence", async () => {
    const table = await seeded();
    const text = await cli(["faq", "desk", "--table", table]);
    expect(text.code, text.stderr).toBe(0);
    expect([text.stdout.includes("\u001b"), text.stdout.includes("\u202e")]).toEqual([
      false,
      false,
    ]);
    expect(text.stdout.trimEnd().split("\n")).toEqual([
      '"desk": 2 recurring questions, asked by most people first (of 6 questions asked)',
      "- how do I install nvidia drivers?",
      // ana asked twice.
      `    asked 3 times by 2 people, ${minute(NOW - 9 * DAY)} to ${minute(NOW - 2 * DAY)}; 2 answered`,
      "    answer: ubuntu-drivers \\u001b[31minstall\\u202e",
      "    answered by messages m-7, m-9 (asked in m-b)",
      '    also asked as: "how to install the NVIDIA driver", "installing nvidia drivers, how?"',
      "    asked in messages m-d, m-b, m-a",
      "- wifi not working after suspend",
      `    asked 2 times by 2 people, ${minute(NOW - DAY)} to ${minute(NOW - 3_600_000)}; 0 answered`,
      `    also asked as: "wireless doesn't work after suspend"`,
      "    asked in messages m-f, m-e",
    ]);
  });

  it("takes --limit and --json, and tells no recurring questions from nothing stored", async () => {
    const table = await seeded();
    const one = await cli(["faq", "desk", "--table", table, "--limit", "1"]);
    expect(one.stdout).toMatch(
      /^"desk": 2 recurring questions, the first 1, asked by most people first/,
    );
    expect(one.stdout).not.toContain("wifi");
    const json = await cli(["faq", "desk", "--table", table, "--json", "--limit", "1"]);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.channel).toBe("desk");
    expect(parsed.questions).toBe(6);
    expect(parsed.faq).toHaveLength(1);
    expect(parsed.faq[0]).toMatchObject({
      question: "how do I install nvidia drivers?",
      count: 3,
      people: 2,
      answer: { text: "ubuntu-drivers \u001b[31minstall\u202e", answerIds: ["m-7", "m-9"] },
    });
    const quiet = await cli(["faq", "quiet", "--table", table]);
    expect([quiet.code, quiet.stdout]).toEqual([
      0,
      '"quiet": no recurring questions yet (1 question asked, none by two people)\n',
    ]);
    const unknown = await cli(["faq", "dsk", "--table", table]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^faq: channel "dsk" has nothing in the results table/);
    const bad = await cli(["faq", "desk", "--table", table, "--limit", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit must be a positive integer/);
  });

  it("with --embeddings also groups what a model finds alike, never two questions its words oppose", async () => {
    const table = await seeded();
    await save(
      new DynamoDbResultStore({ client: testDynamoDbClient(), tableName: table }),
      resultWith("desk", "s4", [
        question("h", NOW - 1_800_000, "unanswered", {
          question: "my laptop radio dies on resume",
        }),
      ]),
    );
    // A model that finds the suspend questions and the laptop radio one alike, and every
    // nvidia question alike (install and uninstall too).
    const server = await embeddings((request: RecordedRequest) => {
      const { input } = request.body as { input: string[] };
      const vector = (text: string) =>
        /nvidia/i.test(text) ? [0, 1] : /suspend|resume/.test(text) ? [1, 0] : [0.6, 0.8];
      return { body: { data: input.map((text, index) => ({ index, embedding: vector(text) })) } };
    });
    vi.stubEnv("OPENAI_API_KEY", "test");
    const flags = ["--embeddings", "openai:alike", "--embeddings-url", `${server.url}/v1`];
    const json = await cli(["faq", "desk", "--table", table, "--json", ...flags]);
    expect(json.code, json.stderr).toBe(0);
    const faq = JSON.parse(json.stdout).faq as { question: string; wordings: string[] }[];
    const suspend = faq.find((e) => e.question === "wifi not working after suspend");
    expect(suspend?.wordings.sort()).toEqual([
      "my laptop radio dies on resume",
      "wireless doesn't work after suspend",
    ]);
    // Uninstalling stays its own question, however near the model finds it.
    for (const entry of faq)
      expect([entry.question, ...entry.wordings]).not.toContain(
        "how do I uninstall nvidia drivers",
      );
    const broken = await embeddings(() => ({ status: 400, body: { error: { message: "no" } } }));
    const failed = await cli([
      "faq",
      "desk",
      "--table",
      table,
      "--embeddings",
      "openai:broken",
      "--embeddings-url",
      `${broken.url}/v1`,
    ]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/faq: embedding the questions with broken failed/);
    const alone = await cli(["faq", "desk", "--table", table, "--similarity", "0.9"]);
    expect([alone.code, alone.stderr]).toEqual([
      2,
      expect.stringContaining("--similarity needs --embeddings"),
    ]);
  });
});
