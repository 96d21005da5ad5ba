/**
 * The local workspace's search index (`.convoseg/search`): built from its tables by the first
 * `search` after they changed, and removed with what an erasure or a channel deletion removed
 * (`on-disk.ts`). It is a cache of what the tables hold, nothing more: rebuilt whole, so no
 * document outlives the message or result it came from.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader, type Topic } from "convoseg/knowledge/read";
import type { SegmentResult } from "convoseg/knowledge/store";
import type { ChatMessage } from "convoseg/messages";
import { searchDocuments } from "convoseg/search";
import { LanceSearchIndex } from "convoseg/search/lancedb";
import type { Workspace } from "../../local/workspace.js";
import { formatCount } from "./format.js";
import type { CommandIO } from "./io.js";
import { chatMessagesOf } from "./workspace-messages.js";

export const SEARCH_DIR = "search";
/** What the index was built from: the database files as they were then. */
const BUILT = "built.json";

/** The database files' names, sizes and times: any write to the tables changes one. */
function tablesFingerprint(workspace: Pick<Workspace, "dir">): string {
  const dir = join(workspace.dir, "dynamodb");
  if (!existsSync(dir)) return "";
  return JSON.stringify(
    readdirSync(dir)
      // SQLite's shared-memory index changes as readers come and go: no write of the tables.
      .filter((name) => !name.endsWith("-shm"))
      .sort()
      .map((name) => {
        const { size, mtimeMs } = statSync(join(dir, name));
        return [name, size, mtimeMs];
      }),
  );
}

/**
 * The workspace's index, built first when there is none or the tables changed since; says on
 * standard error when it builds, and how many documents.
 */
export async function workspaceSearchIndex(
  workspace: Pick<Workspace, "dir" | "dynamodb" | "tables" | "ledger">,
  io: Pick<CommandIO, "stderr" | "now">,
): Promise<LanceSearchIndex> {
  const dir = join(workspace.dir, SEARCH_DIR);
  const fingerprint = tablesFingerprint(workspace);
  const built = join(dir, BUILT);
  const current = existsSync(built) && readFileSync(built, "utf8") === fingerprint;
  if (!current) {
    const started = io.now();
    io.stderr.write(
      "search: indexing the workspace's messages, conversations, topics and questions\n",
    );
    const documents = searchDocuments(await workspaceSources(workspace));
    await LanceSearchIndex.build(dir, documents);
    writeFileSync(built, fingerprint);
    io.stderr.write(
      `search: indexed ${formatCount(documents.length)} documents in ${((io.now() - started) / 1000).toFixed(1)} s (again only after the workspace changes)\n`,
    );
  }
  const index = await LanceSearchIndex.open(dir);
  if (index === undefined) throw new Error(`search: no index in ${dir} after building it`);
  return index;
}

/** Every message, result and topic of the workspace's channels, as search documents come from. */
async function workspaceSources(workspace: Pick<Workspace, "dynamodb" | "tables" | "ledger">) {
  const client = workspace.dynamodb();
  const reader = new KnowledgeReader({ client, tableName: workspace.tables.resultsTable });
  const store = new DynamoDbStore({ client, tableName: workspace.tables.messagesTable });
  const channels = [
    ...new Set([
      ...(await workspace.ledger.entries()).map((e) => e.channel),
      ...(await store.conversations()),
    ]),
  ].sort();
  const messages: ChatMessage[] = [];
  const results: SegmentResult[] = [];
  const topics: { channel: string; topic: Topic }[] = [];
  for (const channel of channels) {
    results.push(...(await reader.results(channel)));
    for (const topic of await reader.topics(channel)) topics.push({ channel, topic });
    messages.push(...chatMessagesOf(channel, await store.read(channel)));
  }
  return { messages, results, topics };
}
