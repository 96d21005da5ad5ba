/**
 * `questions mark` on a local workspace: the channel given by its name, the answering message
 * checked against the workspace's messages (a deleted one refused), and the listing after it.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { textMessage } from "convoseg/history";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { describe, expect, it, vi } from "vitest";
import { writeSeededQuestions } from "../../bench/api-seed.js";
import { openWorkspace } from "../../local/workspace.js";
import { runCli } from "../support/cli.js";

describe("questions mark on a workspace", () => {
  it("marks a question of a channel named as people know it, answered by one of its messages", async () => {
    // The workspace's own DynamoDB Local.
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", undefined);
    const dir = mkdtempSync(join(tmpdir(), "convoseg-mark-"));
    const workspace = await openWorkspace({ dir, create: true, note: () => {} });
    let asked: string;
    try {
      const client = workspace.dynamodb();
      const history = new DynamoDbStore({ client, tableName: workspace.tables.messagesTable });
      const sent = Date.UTC(2026, 0, 2);
      await history.write("C0GENERAL", [
        textMessage("user", "reinstall it", { id: "m1", ts: sent, channelName: "general" }),
        textMessage("user", "oops", { id: "m2", ts: sent + 1000, channelName: "general" }),
      ]);
      await history.change("C0GENERAL", { kind: "delete", id: "m2" });
      await writeSeededQuestions(client, workspace.tables.resultsTable, "C0GENERAL", 4);
      const reader = new KnowledgeReader({ client, tableName: workspace.tables.resultsTable });
      const page = await reader.questions("C0GENERAL", { status: "unanswered" });
      asked = page.items[0].id;
    } finally {
      await workspace.close();
    }
    const cli = (...args: string[]) =>
      runCli(["questions", ...args, "--workspace", dir], Date.UTC(2026, 0, 3));
    const deleted = await cli("mark", "general", asked, "--answered-by", "m2");
    expect(deleted.code).toBe(1);
    expect(deleted.stderr).toContain('answerId "m2" is no message of channel "C0GENERAL"');
    const marked = await cli("mark", "general", asked, "--answered-by", "m1", "--by", "ops");
    expect(marked.code, marked.stderr).toBe(0);
    expect(marked.stdout).toMatch(
      new RegExp(`^"C0GENERAL": question ${asked} marked answered by message m1 by ops: `),
    );
    const listed = await cli("general", "--status", "answered", "--json");
    const { questions } = JSON.parse(listed.stdout) as {
      questions: { id: string; answerIds: string[]; correction?: { by?: string } }[];
    };
    expect(questions.find((q) => q.id === asked)).toMatchObject({
      answerIds: ["m1"],
      correction: { by: "ops" },
    });
    // Four workspace opens, each starting its DynamoDB Local: slow on a loaded machine.
  }, 120_000);
});
