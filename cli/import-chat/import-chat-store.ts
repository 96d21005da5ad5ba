/**
 * What `import-chat` shares between its outcomes: its options and context, and the store into
 * the workspace or a deployment's tables through the ingest client (./import-chat.ts).
 */
import { DescribeTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  type ExportFormat,
  type ExportMessage,
  type ExportReading,
  toChatMessage,
} from "convoseg/exports";
import { IngestClient } from "convoseg/ingest";
import type { ConversationMode } from "convoseg/pipeline";
import { DUE_SHARDS } from "convoseg/pipeline/schema";
import type { Workspace } from "../../local/workspace.js";
import { EXIT } from "../shared/command.js";
import {
  channelTable,
  type ImportedInput,
  messagePlace,
  readJson,
  reportLines,
} from "../shared/export-input.js";
import { CommandFailure, tableProblem } from "../shared/failures.js";
import { escapeControls, formatCount, plural, shellArg } from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";
import type { Progress } from "../shared/progress.js";

/** Where the messages go. */
export type Target =
  | { kind: "dry-run" }
  | { kind: "out"; file: string }
  | { kind: "workspace"; dir: string }
  | { kind: "tables"; messagesTable: string; channelsTable: string };

export interface ImportChatOptions {
  inputs: string[];
  format: ExportFormat | "auto";
  timezone?: string;
  target: Target;
  json: boolean;
  /** How the workspace's channels are to be segmented from now on, when given. */
  conversations?: ConversationMode;
}

/** Conflicts and refusals shown one by one; the rest are counted. */
const SHOWN = 5;

export interface ImportContext {
  options: ImportChatOptions;
  inputs: ImportedInput[];
  reading: ExportReading;
  progress: Progress;
  /** The status line progress shows. */
  status: { line: () => string };
  /** How far the reading is and how long the rest may take, for the storing line. */
  read: { eta: () => string };
  io: CommandIO;
}

/** What the inputs were, in words: `export.zip (slack)`. */
const inputsText = (inputs: readonly ImportedInput[]) =>
  inputs.map(({ path, format }) => `${path} (${format})`).join(", ");

/** Counts and dates of what was read: the head line of every outcome. */
export function readSummary(context: ImportContext): string {
  const { channels } = context.reading.report;
  const messages = channels.reduce((sum, c) => sum + c.messages, 0);
  return `${plural(messages, "message")} in ${plural(channels.length, "channel")} from ${inputsText(context.inputs)}`;
}

/** Where `store` writes: the tables, a client of them, and the clock due times are in. */
export interface StoreTarget {
  messagesTable: string;
  channelsTable: string;
  client: DynamoDBClient;
  /** The pipeline clock at the newest message read so far (see {@link workspaceTables}). */
  now: (newest: number) => number;
  workspace?: Workspace;
}

/**
 * The workspace's tables. Its pipeline clock is simulated: a message arrives when the clock
 * reaches it (never before the clock where the last command left it), as `run` ingests, and the
 * clock goes on to the newest message imported, so that the next run on the workspace takes
 * the imported channels up where they are due.
 */
export function workspaceTables(workspace: Workspace): StoreTarget {
  const start = workspace.clock ?? Number.NEGATIVE_INFINITY;
  return {
    messagesTable: workspace.tables.messagesTable,
    channelsTable: workspace.tables.channelsTable,
    client: workspace.dynamodb(),
    now: (newest) => Math.max(start, newest),
    workspace,
  };
}

/** What ingestion answered for the messages of the import. */
interface Stored {
  stored: number;
  unchanged: number;
  deleted: number;
  conflicts: { channel: string; id: string; fields: string[] }[];
  refused: { channel: string; id: string; field: string; problem: string }[];
}

/** Ingests the messages batch by batch through the ingest client, as a deployment's callers do. */
export async function store(context: ImportContext, target: StoreTarget): Promise<number> {
  const { reading, progress, status, read } = context;
  const where =
    target.workspace === undefined
      ? `tables ${target.messagesTable} and ${target.channelsTable}`
      : `the workspace ${target.workspace.dir}`;
  let now = 0;
  const client = new IngestClient({
    messagesTable: target.messagesTable,
    channelsTable: target.channelsTable,
    client: target.client,
    dueShards: DUE_SHARDS,
    now: () => now,
  });
  const done: Stored = { stored: 0, unchanged: 0, deleted: 0, conflicts: [], refused: [] };
  let newest = Number.NEGATIVE_INFINITY;
  if (target.workspace === undefined) await checkTables(target);
  try {
    for await (const batch of reading.batches()) {
      const chats = batch.map(toChatMessage);
      const batchNewest = chats.reduce((max, m) => Math.max(max, m.ts), Number.NEGATIVE_INFINITY);
      newest = Math.max(newest, batchNewest);
      now = target.now(batchNewest);
      const result = await client.ingest(chats);
      if (result.failed.length === batch.length) {
        // Nothing of a batch confirmed (the store is unreachable, or refuses every write): the
        // rest would fail alike, each said on a line of its own.
        throw new CommandFailure(`storing into ${where} failed: ${result.failed[0].error}`);
      }
      tally(done, batch, result);
      status.line = () => {
        const eta = read.eta();
        return `storing into ${where}: ${plural(done.stored + done.unchanged, "message")} done (${formatCount(done.stored)} new)${eta === "" ? "" : `; ${eta}`}`;
      };
      progress.update(status.line);
    }
  } catch (error) {
    if (done.stored + done.unchanged === 0) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new CommandFailure(
      `${reason} (${plural(done.stored, "message")} were stored before it; the same command stores only the rest once that is fixed)`,
      { cause: error },
    );
  }
  if (target.workspace !== undefined && newest > Number.NEGATIVE_INFINITY) {
    target.workspace.advanceClock(target.now(newest));
  }
  const { conversations } = context.options;
  if (conversations !== undefined) target.workspace?.chooseConversations(conversations);
  progress.finish();
  return storedOutcome(context, done, target, where);
}

/**
 * A deployment's two tables, looked up first, so that a wrong name, region or credentials is
 * said once (as every command says it) rather than as a failure of each message. A caller whose
 * role may write but not describe the tables goes on without the check.
 */
async function checkTables(target: StoreTarget): Promise<void> {
  const roles = [
    [target.messagesTable, "the messages table", "MessagesTableName with --messages-table"],
    [target.channelsTable, "the channels table", "ChannelsTableName with --channels-table"],
  ] as const;
  for (const [table, role, flag] of roles) {
    const ref = { table, role, fix: `pass the stack's ${flag}` };
    try {
      await target.client.send(new DescribeTableCommand({ TableName: table }));
    } catch (error) {
      if ((error as { name?: string }).name === "AccessDeniedException") continue;
      throw new CommandFailure(tableProblem(error, ref), { cause: error });
    }
  }
}

function tally(
  done: Stored,
  batch: readonly ExportMessage[],
  result: Awaited<ReturnType<IngestClient["ingest"]>>,
): void {
  done.stored += result.stored.length;
  done.unchanged += result.unchanged.length;
  done.deleted += result.deleted.length;
  for (const { index, fields } of result.conflicts) {
    done.conflicts.push({ channel: batch[index].channel, id: batch[index].id, fields });
  }
  for (const { index, field, problem } of result.rejected) {
    done.refused.push({ channel: batch[index].channel, id: batch[index].id, field, problem });
  }
  for (const { index, error } of result.failed) {
    const { channel, id } = batch[index];
    done.refused.push({ channel, id, field: "store", problem: error });
  }
}

function storedOutcome(
  context: ImportContext,
  done: Stored,
  target: StoreTarget,
  where: string,
): number {
  const { reading, io, options } = context;
  const { report } = reading;
  for (const line of reportLines(report)) io.stderr.write(`import-chat: ${line}\n`);
  for (const { channel, id, field, problem } of done.refused.slice(0, SHOWN)) {
    io.stderr.write(
      `${escapeControls(`${messagePlace({ channel, id })}: ${field}: ${problem}`)} (not stored)\n`,
    );
  }
  for (const { channel, id, fields } of done.conflicts.slice(0, SHOWN)) {
    io.stderr.write(
      `${escapeControls(`${messagePlace({ channel, id })}: stored already with another ${fields.join(" and ")}`)} (not stored: the stored message is kept)\n`,
    );
  }
  const notStored = done.refused.length + done.conflicts.length;
  if (done.conflicts.length > 0) {
    io.stderr.write(
      `import-chat: ${plural(done.conflicts.length, "message")} not stored: ${done.conflicts.length === 1 ? "its id is taken by a stored message" : "their ids are taken by stored messages"} with other content${done.conflicts.length > SHOWN ? ` (the first ${SHOWN} above)` : ""} (an export of edited messages, or another platform's channel of the same id)\n`,
    );
  }
  if (done.refused.length > 0) {
    io.stderr.write(
      `import-chat: ${plural(done.refused.length, "message")} refused or not confirmed by the store${done.refused.length > SHOWN ? ` (the first ${SHOWN} above)` : ""}; importing again is safe (ids deduplicate)\n`,
    );
  }
  if (options.json) {
    const { stored, unchanged, deleted, conflicts, refused } = done;
    const into =
      target.workspace === undefined
        ? { messagesTable: target.messagesTable, channelsTable: target.channelsTable }
        : {
            workspace: target.workspace.dir,
            conversations: target.workspace.conversations ?? "linked",
          };
    io.stdout.write(
      `${JSON.stringify({ ...readJson(context.inputs, report), store: { ...into, stored, unchanged, deleted, conflicts, refused } })}\n`,
    );
  } else {
    const inputs = context.inputs.map(({ path }) => shellArg(path)).join(" ");
    io.stdout.write(
      `${[
        `imported ${escapeControls(readSummary(context))} into ${escapeControls(where)}: ${formatCount(done.stored)} stored, ${formatCount(done.unchanged)} already there${done.deleted > 0 ? `, ${formatCount(done.deleted)} deleted before` : ""}${notStored > 0 ? `, ${formatCount(notStored)} not stored` : ""}`,
        ...channelTable(report.channels),
        ...(options.conversations === undefined || target.workspace === undefined
          ? []
          : [
              `conversations: ${options.conversations} (kept in the workspace: the next run segments its channels so)`,
            ]),
        ...(context.inputs.length === 1 && context.options.target.kind === "workspace"
          ? [
              `next: npm start -- run --input ${inputs}   (segments and extracts them; what is stored is not stored twice), then npm start -- report --open`,
            ]
          : []),
      ].join("\n")}\n`,
    );
  }
  return notStored > 0 ? EXIT.failed : EXIT.ok;
}
