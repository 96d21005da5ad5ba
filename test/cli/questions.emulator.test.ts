/**
 * `questions` on a results table (DynamoDB Local, --table): the question index read oldest
 * unanswered first, answers shown, hostile chat text escaped, --status, --limit and --json, a
 * channel with nothing stored told apart.
 */

import { DynamoDbResultStore, type Question } from "convoseg/knowledge/store";
import { describe, expect, it } from "vitest";
import { formatAge } from "../../cli/questions.js";
import { createResultsTestTable } from "../knowledge/fixtures.js";
import { question, resultWith, save } from "../knowledge/question-index.js";
import { stubLocalAws } from "../support/aws-env.js";
import { runCli } from "../support/cli.js";
import { testDynamoDbClient } from "../support/dynamodb.js";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 6, 10);
const cli = (args: string[]) => runCli(args, NOW);

async function seeded(): Promise<string> {
  stubLocalAws();
  const client = testDynamoDbClient();
  const tableName = await createResultsTestTable(client);
  const store = new DynamoDbResultStore({ client, tableName });
  await save(
    store,
    resultWith("desk", "s1", [
      question("late", NOW - 2 * DAY),
      question("fixed", NOW - 5 * DAY, "answered", {
        question: "which kernel fixes wifi?",
        answer: "6.8 \u001b[31mor later\u202e",
        answerIds: ["m-7", "m-9"],
        askedBy: "bob",
      }),
    ]),
  );
  await save(
    store,
    resultWith("desk", "s2", [
      question("early", NOW - 9 * DAY, "unanswered", { question: "grub \u001b[2Jgone?" }),
      question("vague", NOW - 3 * 3_600_000, "unclear"),
    ]),
  );
  await save(store, resultWith("quiet", "s3", []));
  return tableName;
}

describe("questions command", () => {
  it("lists the unanswered oldest first, then unclear, then answered with answers, escaped", async () => {
    const table = await seeded();
    const text = await cli(["questions", "desk", "--table", table]);
    expect(text.code, text.stderr).toBe(0);
    expect([text.stdout.includes("\u001b"), text.stdout.includes("\u202e")]).toEqual([
      false,
      false,
    ]);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(
      '"desk": 4 questions (2 unanswered, 1 unclear, 1 answered), unanswered first, oldest first',
    );
    expect(lines.filter((l) => l.startsWith("- "))).toEqual([
      "- [unanswered] grub \\u001b[2Jgone?",
      "- [unanswered] how do I fix late?",
      "- [unclear] how do I fix vague?",
      "- [answered] which kernel fixes wifi?",
    ]);
    expect(lines[2]).toBe(
      `    asked 9d ago by ann, ${new Date(NOW - 9 * DAY).toISOString().slice(0, 16)}Z: segment s2, message m-early, id early`,
    );
    expect(text.stdout).toContain("    asked 3h ago by ann");
    expect(text.stdout).toContain("    answer: 6.8 \\u001b[31mor later\\u202e");
    expect(text.stdout).toContain("    answered by messages m-7, m-9");
  });

  it("takes --status and --limit, and --json as the reader returns", async () => {
    const table = await seeded();
    const one = await cli([
      "questions",
      "desk",
      "--table",
      table,
      "--status",
      "unanswered",
      "--limit",
      "1",
    ]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^"desk": 1 unanswered question, oldest first\n- grub /);
    const json = await cli([
      "questions",
      "desk",
      "--table",
      table,
      "--status",
      "answered",
      "--json",
    ]);
    const parsed = JSON.parse(json.stdout) as { channel: string; questions: Question[] };
    expect(parsed).toEqual({
      channel: "desk",
      questions: [
        {
          id: "fixed",
          question: "which kernel fixes wifi?",
          askedId: "m-fixed",
          askedTs: NOW - 5 * DAY,
          askedBy: "bob",
          status: "answered",
          answer: "6.8 \u001b[31mor later\u202e",
          answerIds: ["m-7", "m-9"],
          segmentId: "s1",
        },
      ],
    });
    const bad = await cli(["questions", "desk", "--table", table, "--status", "open"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--status must be one of answered, unanswered, unclear/);
  });

  it("says a channel with no questions yet apart from one with nothing stored", async () => {
    const table = await seeded();
    const quiet = await cli(["questions", "quiet", "--table", table]);
    expect([quiet.code, quiet.stdout]).toEqual([0, '"quiet": no questions extracted yet\n']);
    const unknown = await cli(["questions", "dsk", "--table", table]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toMatch(/^questions: channel "dsk" has nothing in the results table/);
    expect(unknown.stderr).toContain("npm start -- questions desk");
  });

  it("marks a question answered, reopened or hidden, and the listing shows the correction", async () => {
    const table = await seeded();
    const mark = (...args: string[]) =>
      cli(["questions", "mark", "desk", ...args, "--table", table]);
    const answered = await mark("late", "--answered-by", "m-8", "--by", "ops");
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toBe(
      '"desk": question late marked answered by message m-8 by ops: how do I fix late?\n',
    );
    const listed = await cli(["questions", "desk", "--table", table]);
    expect(listed.stdout.split("\n")[0]).toBe(
      '"desk": 4 questions (1 unanswered, 1 unclear, 2 answered), unanswered first, oldest first',
    );
    expect(listed.stdout).toContain(
      `- [answered] how do I fix late?\n    asked 2d ago by ann, ${new Date(NOW - 2 * DAY).toISOString().slice(0, 16)}Z: segment s1, message m-late, id late\n    corrected to answered by ops, ${new Date(NOW).toISOString().slice(0, 16)}Z\n    answered by message m-8`,
    );
    const reopened = await mark("fixed", "--reopen", "--json");
    expect(JSON.parse(reopened.stdout)).toMatchObject({
      channel: "desk",
      question: { id: "fixed", status: "unanswered", answerIds: [], corrected: true },
    });
    const hidden = await mark("vague", "--hide");
    expect(hidden.stdout).toBe('"desk": question vague marked hidden\n');
    const json = await cli(["questions", "desk", "--table", table, "--json"]);
    const { questions } = JSON.parse(json.stdout) as { questions: Question[] };
    expect(questions.map((q) => [q.id, q.status, q.correction?.action])).toEqual([
      ["early", "unanswered", undefined],
      ["fixed", "unanswered", "reopen"],
      ["late", "answered", "answered"],
    ]);
  });

  it("refuses a mark without one action, or of a question not in the channel", async () => {
    const table = await seeded();
    const none = await cli(["questions", "mark", "desk", "late", "--table", table]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^questions: questions mark takes one of --answered-by/);
    const two = await cli([
      "questions",
      "mark",
      "desk",
      "late",
      "--reopen",
      "--hide",
      "--table",
      table,
    ]);
    expect(two.code).toBe(2);
    const stray = await cli(["questions", "desk", "--reopen", "--table", table]);
    expect(stray.stderr).toMatch(/--reopen is for questions mark <channel> <question-id>/);
    const missing = await cli(["questions", "mark", "desk", "nope", "--hide", "--table", table]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      'questions: CorrectionError: correction: questionId nope is no question of channel "desk"\n',
    );
  });

  it("says ages in minutes, hours, days, then years past two", () => {
    expect(
      [59_999, 45 * 60_000, 5 * 3_600_000, 47 * 3_600_000, 3 * DAY, 729 * DAY, 3110 * DAY, -5].map(
        formatAge,
      ),
    ).toEqual(["0m", "45m", "5h", "47h", "3d", "729d", "8y", "0m"]);
  });
});
