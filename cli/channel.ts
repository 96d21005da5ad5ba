import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  type ChannelSnapshot,
  DynamoDbChannelStore,
  hasWork,
} from "../lib/pipeline/store/index.js";
import { type Command, command, EXIT } from "./command.js";
import { onTable } from "./failures.js";
import { escapeControls } from "./format.js";

const CHANNEL_USAGE = `Usage: npm start -- channel <show|reset> <channel> [--table NAME]

Operator commands on a deployed (or local) pipeline's channels table. The AWS SDK's usual
environment picks the account, region and endpoint (AWS_ENDPOINT_URL_DYNAMODB for an emulator).

  show    print the channel's pipeline state: due time, read position, writers' holds, open
          tail, watermark, undelivered outbox, state size
  reset   forget what was read and emitted: the next tick re-reads the whole channel and
          delivers its segments again, with the same segment ids

Options:
  --table NAME      the channels table (default: $CHANNELS_TABLE)
  -h, --help        this help`;

/** `channel show|reset`: an operator's look at, or reset of, a channel's pipeline state. */
export const channelCommand: Command = command({
  name: "channel",
  summary: ["channel show|reset <id>", "operator commands on a pipeline's channel state"],
  usage: CHANNEL_USAGE,
  options: { table: { type: "string" } },
  parse: ({ positionals, values }) => {
    const [action, channel, ...extra] = positionals;
    const table = values.table ?? process.env.CHANNELS_TABLE;
    if (action !== "show" && action !== "reset") throw new Error("expected show or reset");
    if (channel === undefined || extra.length > 0) throw new Error("expected one channel id");
    if (table === undefined) {
      throw new Error("no channels table: pass --table or set CHANNELS_TABLE");
    }
    return { action, channel, table };
  },
  run: async ({ action, channel, table }, io) => {
    const store = new DynamoDbChannelStore({ client: new DynamoDBClient({}), tableName: table });
    const ref = {
      table,
      role: "the channels table",
      fix: "pass the stack's ChannelsTableName with --table (or set CHANNELS_TABLE)",
    };
    if (action === "reset") {
      await onTable(ref, () => store.reset(channel, io.now()));
      io.stdout.write(
        `channel ${escapeControls(JSON.stringify(channel))} reset: the next tick re-reads and re-delivers it\n`,
      );
      return EXIT.ok;
    }
    const snapshot = await onTable(ref, () => store.load(channel));
    io.stdout.write(`${JSON.stringify(describeSnapshot(snapshot), null, 2)}\n`);
    return EXIT.ok;
  },
});

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
