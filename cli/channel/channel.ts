import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type ChannelSnapshot, DynamoDbChannelStore, hasWork } from "convoseg/pipeline/store";
import type { Workspace } from "../../local/workspace.js";
import { channelArgument, messagesDirectory } from "../shared/channel-names.js";
import { type Command, command, EXIT } from "../shared/command.js";
import { onTable, type TableRef } from "../shared/failures.js";
import { escapeControls } from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";
import { eraseWorkspaceFiles } from "../shared/on-disk.js";
import {
  noteUnextracted,
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "../shared/workspace-option.js";
import { deleteChannelCommand, searchIndexParts } from "./channel-delete.js";

const CHANNEL_USAGE = `Usage: npm start -- channel <show|reset> <channel> [--workspace DIR | --table NAME]
       npm start -- channel delete <channel> [--dry-run] [--yes] [--workspace DIR |
         --table NAME --messages-table NAME --results-table NAME [--search-index URI]]

Operator commands on a pipeline's channels: the local workspace's that run writes (.convoseg in
the current directory, or --workspace DIR) unless a table is named; with --table (or
CHANNELS_TABLE) the AWS SDK's usual environment picks the account, region and endpoint
(AWS_ENDPOINT_URL_DYNAMODB for an emulator). Where a messages table is known (the workspace's,
or delete's) the channel may be given by its name (the channelName its messages carry) when no
other channel has that name; an ambiguous name, or an id another channel has as its name, exits
2 with the ids.

  show    print the channel's pipeline state: due time, read position, writers' holds, open
          tail, watermark, undelivered outbox, state size
  reset   forget what was read and emitted: the next tick re-reads the whole channel and
          delivers its segments again, with the same segment ids
  delete  remove the channel entirely: its pipeline state (and the workspace's ledger of its
          segments), its messages, and every results-table item of it (results, topic
          entries, window replies, term statistics, spend, leases), and its search documents
          (the workspace's index; a deployment's channel table with --search-index); prints
          the items per table. Asks first on a terminal; elsewhere it needs --yes. Run it
          again to finish one that was interrupted

Options:
${WORKSPACE_HELP}
  --table NAME            the channels table (default: $CHANNELS_TABLE)
  --messages-table NAME   delete: the messages table (default: $MESSAGES_TABLE)
  --results-table NAME    delete: the results table (default: $RESULTS_TABLE)
  --search-index URI      delete: the deployment's search index, s3://bucket/search or a
                          directory (default: $SEARCH_INDEX_URI; unset: none)
  --dry-run               delete: count what it would remove, remove nothing
  --yes                   delete: do not ask
  -h, --help              this help`;

const DELETE_ONLY = ["messages-table", "results-table", "search-index", "dry-run", "yes"] as const;

/** `channel show|reset`: an operator's look at, or reset of, a channel's pipeline state. */
export const channelCommand: Command = command({
  name: "channel",
  usage: CHANNEL_USAGE,
  options: {
    ...WORKSPACE_OPTION,
    table: { type: "string" },
    "messages-table": { type: "string" },
    "results-table": { type: "string" },
    "search-index": { type: "string" },
    "dry-run": { type: "boolean" },
    yes: { type: "boolean" },
  },
  parse: ({ positionals, values }) => {
    const [action, channel, ...extra] = positionals;
    const tableFlags = [
      values.table,
      values["messages-table"],
      values["results-table"],
      values["search-index"],
    ];
    if (values.workspace !== undefined && tableFlags.some((t) => t !== undefined)) {
      throw new Error("--workspace and a table flag name two places: give one");
    }
    const table =
      values.workspace === undefined ? (values.table ?? process.env.CHANNELS_TABLE) : undefined;
    if (action !== "show" && action !== "reset" && action !== "delete") {
      throw new Error("expected show, reset or delete");
    }
    if (channel === undefined || extra.length > 0) throw new Error("expected one channel id");
    const misplaced = DELETE_ONLY.find((flag) => values[flag] !== undefined);
    if (action !== "delete" && misplaced !== undefined) {
      throw new Error(`--${misplaced} is for delete`);
    }
    const workspace = workspaceDir(values.workspace, table !== undefined);
    const others = {
      messages: values["messages-table"],
      results: values["results-table"],
      searchIndex: values["search-index"],
    };
    if (workspace === undefined && action === "delete") {
      others.messages ??= process.env.MESSAGES_TABLE;
      others.results ??= process.env.RESULTS_TABLE;
      others.searchIndex ??= process.env.SEARCH_INDEX_URI;
      if (others.messages === undefined || others.results === undefined) {
        throw new Error(
          "delete on a deployment needs its three tables: --table, --messages-table and --results-table (or CHANNELS_TABLE, MESSAGES_TABLE and RESULTS_TABLE)",
        );
      }
    }
    const remove = { dryRun: values["dry-run"] ?? false, yes: values.yes ?? false, ...others };
    return { action: action as "show" | "reset" | "delete", channel, table, workspace, remove };
  },
  run: async ({ action, channel: given, table, workspace, remove }, io) => {
    if (action === "delete") {
      const request = { channel: given, dryRun: remove.dryRun, yes: remove.yes };
      if (workspace === undefined) {
        const client = new DynamoDBClient({});
        const directory = messagesDirectory(client, remove.messages as string);
        const channel = (await channelArgument("channel", given, directory, io))?.channel;
        if (channel === undefined) return EXIT.usage;
        return deleteChannelCommand(
          { ...request, channel },
          {
            client,
            channelsTable: table as string,
            messagesTable: remove.messages as string,
            resultsTable: remove.results as string,
            derivedParts: searchIndexParts(remove.searchIndex),
            where: "the tables named",
            fix: "pass the stack's ChannelsTableName, MessagesTableName and ResultsTableName",
          },
          io,
        );
      }
      return withWorkspace({ dir: workspace, create: false }, io, async (opened) => {
        const channel = await workspaceChannel(opened, given, io);
        if (channel === undefined) return EXIT.usage;
        const code = await deleteChannelCommand(
          { ...request, channel },
          {
            client: opened.dynamodb(),
            ...opened.tables,
            pipelineParts: [opened.ledger.channelPart],
            where: `the workspace ${opened.dir}`,
            fix: "run npm start -- run on the workspace first",
          },
          io,
        );
        if (code === EXIT.ok && !request.dryRun) {
          await eraseWorkspaceFiles(opened, io, "channel delete", "the channel's messages");
        }
        return code;
      });
    }
    if (workspace === undefined) {
      // The channels table alone knows no names: a deployment's channel is given by its id.
      return act(action, given, new DynamoDBClient({}), io.now(), io, {
        table: table as string,
        role: "the channels table",
        fix: "pass the stack's ChannelsTableName with --table (or set CHANNELS_TABLE)",
      });
    }
    return withWorkspace({ dir: workspace, create: false }, io, async (opened) => {
      await noteUnextracted("channel", opened, io);
      const channel = await workspaceChannel(opened, given, io);
      if (channel === undefined) return EXIT.usage;
      // Due on the workspace's simulated clock, where the next run's ticks are.
      return act(action, channel, opened.dynamodb(), opened.clock ?? io.now(), io, {
        table: opened.tables.channelsTable,
        role: "the workspace's channels table",
        fix: "run npm start -- run on the workspace first",
      });
    });
  },
});

/** The workspace's channel `given` names, by id or by name (undefined: an ambiguous name). */
async function workspaceChannel(opened: Workspace, given: string, io: CommandIO) {
  const directory = messagesDirectory(opened.dynamodb(), opened.tables.messagesTable);
  return (await channelArgument("channel", given, directory, io))?.channel;
}

/** Shows or resets the channel in the channels table `ref` names. */
async function act(
  action: "show" | "reset",
  channel: string,
  client: DynamoDBClient,
  now: number,
  io: CommandIO,
  ref: TableRef,
): Promise<number> {
  const store = new DynamoDbChannelStore({ client, tableName: ref.table });
  if (action === "reset") {
    await onTable(ref, () => store.reset(channel, now));
    io.stdout.write(
      `channel ${escapeControls(JSON.stringify(channel))} reset: the next tick re-reads and re-delivers it\n`,
    );
    return EXIT.ok;
  }
  const snapshot = await onTable(ref, () => store.load(channel));
  io.stdout.write(`${JSON.stringify(describeSnapshot(snapshot), null, 2)}\n`);
  return EXIT.ok;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The state an operator reads: times as ISO, the tail and outbox summarised (ids, no text). */
function describeSnapshot({ channel, marks, record, stateBytes }: ChannelSnapshot) {
  const { planner, outbox, readUpTo, broken } = record.state;
  const { tail, watermark, recent } = planner;
  const pending = hasWork(outbox) && marks.delivered < record.version;
  return {
    channel,
    version: record.version,
    dueAt: iso(marks.dueAt),
    readUpTo: readUpTo?.toString() ?? null,
    lastPosition: marks.seq?.toString() ?? null,
    holds: marks.holds.map((h) => ({ first: h.first.toString(), count: h.count })),
    brokenHolds: broken.length,
    openTail: { messages: tail.length, first: tail[0] ?? null, last: tail.at(-1) ?? null },
    watermark,
    lastSegment: recent.at(-1)?.segmentId ?? null,
    outbox: {
      delivered: !pending,
      segments: outbox.segments.map((s) => s.segmentId),
      dropped: outbox.dropped.length,
      late: outbox.late,
    },
    leaseUntil: iso(record.leaseUntil),
    stateBytes,
  };
}
