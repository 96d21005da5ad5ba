/**
 * What `topics`, `questions` and `faq` share: their flags' parse, and reading a channel's entries from a results table or the
 * local workspace (where a channel may be named by its channelName), and saying so when the
 * channel has nothing stored at all (unlike a channel with no entries yet), with the stored
 * channel ids near it.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { channelArgument, messagesDirectory } from "./channel-names.js";
import { onTable } from "./failures.js";
import { escapeControls } from "./format.js";
import type { CommandIO } from "./io.js";
import { resultChannels, suggestChannels } from "./near-channels.js";
import { noteUnextracted, withWorkspace, workspaceDir } from "./workspace-option.js";

/** Where a channel's entries are read and how many are shown: the flags `topics`, `questions` and `faq` share. */
export interface ChannelPlace {
  /** The channel as given: an id, or on the workspace a name. */
  channel: string;
  table: string | undefined;
  workspace: string | undefined;
  limit: number | undefined;
}

/**
 * One channel, from `--workspace` or `--table` (else `$RESULTS_TABLE`, else the default
 * workspace), and `--limit`. Throws an error naming the flag or argument at fault.
 */
export function channelPlace(
  values: { workspace?: string; table?: string; limit?: string },
  positionals: readonly string[],
): ChannelPlace {
  if (values.workspace !== undefined && values.table !== undefined) {
    throw new Error("--workspace and --table name two places: give one");
  }
  const table =
    values.workspace === undefined ? (values.table ?? process.env.RESULTS_TABLE) : undefined;
  const [channel, ...extra] = positionals;
  if (channel === undefined || extra.length > 0) throw new Error("expected one channel id");
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
    throw new Error(`--limit must be a positive integer (got ${JSON.stringify(values.limit)})`);
  }
  return { channel, table, workspace: workspaceDir(values.workspace, table !== undefined), limit };
}

export interface ChannelReadOptions<T> {
  /** The command's name, as its messages start: `topics`, `questions`. */
  command: string;
  /** What it lists, plural: `topics`, `questions`. */
  what: string;
  /** The channel as given: an id, or on the workspace a name. */
  given: string;
  /** The results table (--table or RESULTS_TABLE), when no workspace is read. */
  table: string | undefined;
  workspace: string | undefined;
  read(client: DynamoDBClient, tableName: string, channel: string): Promise<T[]>;
}

export type ChannelRead<T> =
  /**
   * The channel's entries; `known` (the stored channels) only when there were none; `now` the
   * time ages are told from: the clock, or on the workspace its simulated clock (where its last
   * run left it, so that a replay of 2018 is not "8y ago"); `name` its display name, when the
   * workspace's messages give it one other than its id.
   */
  | { channel: string; items: T[]; known?: Set<string>; now: number; name?: string }
  /** A name several channels carry: already said on standard error. */
  | { ambiguous: true };

export async function readChannel<T>(
  options: ChannelReadOptions<T>,
  io: CommandIO,
): Promise<ChannelRead<T>> {
  const { command, given, table, workspace, read } = options;
  if (workspace === undefined) {
    const client = new DynamoDBClient({});
    const ref = {
      table: table as string,
      role: "the results table",
      fix: "pass the stack's ResultsTableName with --table (or set RESULTS_TABLE)",
    };
    const now = io.now();
    const items = await onTable(ref, () => read(client, ref.table, given));
    if (items.length > 0) return { channel: given, items, now };
    const known = await onTable(ref, () => resultChannels(client, ref.table));
    return { channel: given, items, known, now };
  }
  return withWorkspace({ dir: workspace, create: false }, io, async (opened) => {
    await noteUnextracted(command, opened, io);
    const client = opened.dynamodb();
    // The workspace's messages know the channels' names: `topics general` works too.
    const directory = messagesDirectory(client, opened.tables.messagesTable);
    const channel = (await channelArgument(command, given, directory, io))?.channel;
    if (channel === undefined) return { ambiguous: true } as const;
    const ref = {
      table: opened.tables.resultsTable,
      role: "the workspace's results table",
      fix: "run npm start -- run on the workspace first",
    };
    const now = opened.clock ?? io.now();
    const items = await onTable(ref, () => read(client, ref.table, channel));
    // Headed by the name people know it by: `general (C0GENERAL)`.
    const name = await directory.nameOf(channel);
    const named = name !== undefined && name !== channel ? { name } : {};
    if (items.length > 0) return { channel, items, now, ...named };
    const messages = new DynamoDbStore({ client, tableName: opened.tables.messagesTable });
    const known = new Set([
      ...(await messages.conversations()),
      ...(await resultChannels(client, opened.tables.resultsTable)),
    ]);
    return { channel, items, known, now, ...named };
  });
}

/** Says that `channel` has nothing stored (unlike a channel with none of `what` yet), and what is near it. */
export function unknownChannel(
  options: Pick<ChannelReadOptions<unknown>, "command" | "what" | "table" | "workspace">,
  channel: string,
  known: Set<string>,
  io: CommandIO,
): void {
  const { command, what, table, workspace } = options;
  const name = escapeControls(JSON.stringify(channel));
  io.stderr.write(
    workspace === undefined
      ? `${command}: channel ${name} has nothing in the results table ${JSON.stringify(table)}: no stored messages, or none extracted yet\n`
      : `${command}: channel ${name} has no stored messages in the workspace (not a channel with no ${what} yet)\n`,
  );
  suggestChannels(command, what, channel, known, io);
}
