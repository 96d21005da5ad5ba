import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  type ChannelSnapshot,
  DynamoDbChannelStore,
  hasWork,
} from "../lib/pipeline/store/index.js";
import { type Command, type CommandIO, command, EXIT } from "./command.js";
import { onTable, type TableRef } from "./failures.js";
import { escapeControls } from "./format.js";
import {
  noteUnextracted,
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "./workspace-option.js";

const CHANNEL_USAGE = `Usage: npm start -- channel <show|reset> <channel> [--workspace DIR | --table NAME]

Operator commands on a pipeline's channels table: the local workspace's that run writes
(.convoseg in the current directory, or --workspace DIR) unless a table is named; with --table
(or CHANNELS_TABLE) the AWS SDK's usual environment picks the account, region and endpoint
(AWS_ENDPOINT_URL_DYNAMODB for an emulator).

  show    print the channel's pipeline state: due time, read position, writers' holds, open
          tail, watermark, undelivered outbox, state size
  reset   forget what was read and emitted: the next tick re-reads the whole channel and
          delivers its segments again, with the same segment ids

Options:
${WORKSPACE_HELP}
  --table NAME      the channels table (default: $CHANNELS_TABLE)
  -h, --help        this help`;

/** `channel show|reset`: an operator's look at, or reset of, a channel's pipeline state. */
export const channelCommand: Command = command({
  name: "channel",
  summary: ["channel show|reset <id>", "operator commands on a pipeline's channel state"],
  usage: CHANNEL_USAGE,
  options: { ...WORKSPACE_OPTION, table: { type: "string" } },
  parse: ({ positionals, values }) => {
    const [action, channel, ...extra] = positionals;
    if (values.workspace !== undefined && values.table !== undefined) {
      throw new Error("--workspace and --table name two places: give one");
    }
    const table =
      values.workspace === undefined ? (values.table ?? process.env.CHANNELS_TABLE) : undefined;
    if (action !== "show" && action !== "reset") throw new Error("expected show or reset");
    if (channel === undefined || extra.length > 0) throw new Error("expected one channel id");
    const workspace = workspaceDir(values.workspace, table !== undefined);
    return { action: action as "show" | "reset", channel, table, workspace };
  },
  run: async ({ action, channel, table, workspace }, io) => {
    if (workspace === undefined) {
      return act(action, channel, new DynamoDBClient({}), io.now(), io, {
        table: table as string,
        role: "the channels table",
        fix: "pass the stack's ChannelsTableName with --table (or set CHANNELS_TABLE)",
      });
    }
    return withWorkspace({ dir: workspace, create: false }, io, async (opened) => {
      await noteUnextracted("channel", opened, io);
      // Due on the workspace's simulated clock, where the next run's ticks are.
      return act(action, channel, opened.dynamodb(), opened.clock ?? io.now(), io, {
        table: opened.tables.channelsTable,
        role: "the workspace's channels table",
        fix: "run npm start -- run on the workspace first",
      });
    });
  },
});

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
