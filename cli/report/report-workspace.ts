/**
 * The report's input straight from a workspace's tables: every segment delivered on it (its
 * ledger), what extraction stored for them (the results table), and every message of its
 * channels (the messages table, with the links the reply linker inferred), so that `report`
 * needs no files after `run`.
 */
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import type { SegmentResult } from "convoseg/knowledge/store";
import type { ReportInput, ReportMessage } from "convoseg/report";
import type { Workspace } from "../../local/workspace.js";
import { chatMessagesOf } from "../shared/workspace-messages.js";

export async function workspaceReportInput(
  workspace: Workspace,
): Promise<Pick<ReportInput, "segments" | "candidates" | "messages">> {
  const client = workspace.dynamodb();
  const entries = await workspace.ledger.entries();
  const reader = new KnowledgeReader({ client, tableName: workspace.tables.resultsTable });
  const store = new DynamoDbStore({ client, tableName: workspace.tables.messagesTable });
  const channels = [
    ...new Set([...entries.map((e) => e.channel), ...(await store.conversations())]),
  ];
  const candidates: SegmentResult[] = [];
  const messages: ReportMessage[] = [];
  for (const channel of channels) {
    // As every read of questions shows them: people's corrections over the model's.
    candidates.push(...(await reader.correctedResults(channel)));
    messages.push(...chatMessagesOf(channel, await store.read(channel)));
  }
  return { segments: entries.map((e) => e.segment), candidates, messages };
}
