/**
 * `faq` on a results table (DynamoDB Local, --table): recurring questions grouped from the
 * question index across segments and statuses, the best answer and the evidence shown, hostile
 * chat text escaped, --limit and --json, a channel with nothing stored told apart.
 */

import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { createResultsTestTable } from "../knowledge/fixtures.js";
import { question, resultWith, save } from "../knowledge/question-index.js";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";

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
      question("a", NOW - 9 * DAY, "unanswered", { question: "how do I install nvidia drivers?" }),
      question("b", NOW - 5 * DAY, "answered", {
        question: "how to install the NVIDIA driver",
        answer: "ubuntu-drivers \u001b[31minstall\u202e",
        answerIds: ["m-7", "m-9"],
      }),
      question("c", NOW - 4 * DAY, "unanswered", { question: "how do I uninstall nvidia drivers" }),
    ]),
  );
  await save(
    store,
    resultWith("desk", "s2", [
      question("d", NOW - 2 * DAY, "answered", {
        question: "installing nvidia drivers, how?",
        answer: "additional drivers",
        answerIds: ["m-20"],
      }),
      question("e", NOW - DAY, "unclear", { question: "wifi not working after suspend" }),
      question("f", NOW - 3_600_000, "unanswered", {
        question: "wireless doesn't work after suspend",
      }),
    ]),
  );
  await save(store, resultWith("quiet", "s3", [question("g", NOW - DAY)]));
  return tableName;
}

describe("faq command", () => {
  it("groups the channel's recurring questions, most asked first, with answers and evidence", async () => {
    const table = await seeded();
    const text = await cli(["faq", "desk", "--table", table]);
    expect(text.code, text.stderr).toBe(0);
    expect([text.stdout.includes("\u001b"), text.stdout.includes("\u202e")]).toEqual([
      false,
      false,
    ]);
    expect(text.stdout.trimEnd().split("\n")).toEqual([
      '"desk": 2 recurring questions, most asked first (of 6 questions asked)',
      "- how do I install nvidia drivers?",
      `    asked 3 times, ${minute(NOW - 9 * DAY)} to ${minute(NOW - 2 * DAY)}; 2 answered`,
      "    answer: ubuntu-drivers \\u001b[31minstall\\u202e",
      "    answered by messages m-7, m-9 (asked in m-b)",
      '    also asked as: "how to install the NVIDIA driver", "installing nvidia drivers, how?"',
      "    asked in messages m-d, m-b, m-a",
      "- wifi not working after suspend",
      `    asked 2 times, ${minute(NOW - DAY)} to ${minute(NOW - 3_600_000)}; 0 answered`,
      `    also asked as: "wireless doesn't work after suspend"`,
      "    asked in messages m-f, m-e",
    ]);
  });

  it("takes --limit and --json, and tells no recurring questions from nothing stored", async () => {
    const table = await seeded();
    const one = await cli(["faq", "desk", "--table", table, "--limit", "1"]);
    expect(one.stdout).toMatch(/^"desk": 2 recurring questions, the first 1, most asked first/);
    expect(one.stdout).not.toContain("wifi");
    const json = await cli(["faq", "desk", "--table", table, "--json", "--limit", "1"]);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.channel).toBe("desk");
    expect(parsed.questions).toBe(6);
    expect(parsed.faq).toHaveLength(1);
    expect(parsed.faq[0]).toMatchObject({
      question: "how do I install nvidia drivers?",
      count: 3,
      answer: { text: "ubuntu-drivers \u001b[31minstall\u202e", answerIds: ["m-7", "m-9"] },
    });
    const quiet = await cli(["faq", "quiet", "--table", table]);
    expect([quiet.code, quiet.stdout]).toEqual([
      0,
      '"quiet": no recurring questions yet (1 question asked, none twice)\n',
    ]);
    const unknown = await cli(["faq", "dsk", "--table", table]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^faq: channel "dsk" has nothing in the results table/);
    const bad = await cli(["faq", "desk", "--table", table, "--limit", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit must be a positive integer/);
  });
});
