/**
 * The local workspace's search index (`.convoseg/search`): built from its tables by the first
 * `search` after they changed, and removed with what an erasure or a channel deletion removed
 * (`on-disk.ts`). It is a cache of what the tables hold, nothing more: rebuilt whole, so no
 * document outlives the message or result it came from. With an embedder it holds each
 * document's vector too, and its cache of vectors (inside it, so removed with it) spares a
 * rebuild the texts embedded before.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader, type Topic } from "convoseg/knowledge/read";
import type { SegmentResult } from "convoseg/knowledge/store";
import type { ChatMessage } from "convoseg/messages";
import { SearchError, searchDocuments } from "convoseg/search";
import { LanceSearchIndex } from "convoseg/search/lancedb";
import type { Embedder } from "convoseg/topics";
import type { Workspace } from "../../local/workspace.js";
import { CommandFailure } from "./failures.js";
import { escapeControls, formatCount } from "./format.js";
import type { CommandIO } from "./io.js";
import { chatMessagesOf } from "./workspace-messages.js";

export const SEARCH_DIR = "search";
/** What the index was built from: the database files as they were then, and the model. */
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

/** What `built.json` says: the tables' fingerprint, and the model of the vectors, or null. */
interface Built {
  tables: string;
  model: string | null;
}

function readBuilt(file: string): Built | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Built;
  } catch {
    // None, or of an older build: built again.
    return undefined;
  }
}

/**
 * The workspace's index, built first when there is none, the tables changed since, or
 * `embedder` is given and the index holds no vectors of its model; says on standard error when
 * it builds, how many documents, and how many texts it embedded.
 */
export async function workspaceSearchIndex(
  workspace: Pick<Workspace, "dir" | "dynamodb" | "tables" | "ledger">,
  io: Pick<CommandIO, "stderr" | "now">,
  options: { embedder?: Embedder } = {},
): Promise<LanceSearchIndex> {
  const { embedder } = options;
  const dir = join(workspace.dir, SEARCH_DIR);
  const fingerprint = tablesFingerprint(workspace);
  const file = join(dir, BUILT);
  const built = readBuilt(file);
  const current =
    built?.tables === fingerprint && (embedder === undefined || built.model === embedder.model);
  if (!current) {
    const started = io.now();
    io.stderr.write(
      `search: indexing the workspace's messages, conversations, topics and questions${embedder === undefined ? "" : `, with ${embedder.model}'s embeddings`}\n`,
    );
    const documents = searchDocuments(await workspaceSources(workspace));
    const summary = await searchFailure(() => LanceSearchIndex.build(dir, documents, { embedder }));
    writeFileSync(file, JSON.stringify({ tables: fingerprint, model: summary.model ?? null }));
    const embedded =
      summary.model === undefined
        ? ""
        : `, ${formatCount(summary.embedded)} texts embedded (${formatCount(summary.cached)} from the cache)`;
    io.stderr.write(
      `search: indexed ${formatCount(documents.length)} documents in ${((io.now() - started) / 1000).toFixed(1)} s${embedded} (again only after the workspace changes)\n`,
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
    // As people corrected them: a hidden question is not found, a reopened one is unanswered.
    results.push(...(await reader.correctedResults(channel)));
    for (const topic of await reader.topics(channel)) topics.push({ channel, topic });
    messages.push(...chatMessagesOf(channel, await store.read(channel)));
  }
  return { messages, results, topics };
}

/** `call`, a `SearchError` of it said as a command's failure, once prefixed by the command. */
export async function searchFailure<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof SearchError)) throw error;
    throw new CommandFailure(error.message.replace(/^search: /, ""), { cause: error });
  }
}

/**
 * After a command changed the workspace's tables (`run`, `import-chat`, `reextract`): its index
 * built again now, so that the next search answers at once. A failure is said, not the
 * command's: its work is stored, and the next search builds the index itself.
 */
export async function refreshSearchIndex(
  workspace: Pick<Workspace, "dir" | "dynamodb" | "tables" | "ledger">,
  io: Pick<CommandIO, "stderr" | "now">,
): Promise<void> {
  try {
    (await workspaceSearchIndex(workspace, io)).close();
  } catch (error) {
    io.stderr.write(
      `search: the index was not built (${escapeControls((error as Error).message)}): the next search builds it\n`,
    );
  }
}
