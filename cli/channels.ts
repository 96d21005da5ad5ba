/**
 * `channels`: what a workspace holds, channel by channel: its name, id and platform, how many
 * messages, and when the first and the last was sent. Read from the messages table, the one
 * place every channel is (a channel with no segment yet, or no result, included).
 */
import { type DynamoDBClient, paginateScan } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { PARTITION_KEY, POSITION, SORT_KEY } from "convoseg/history/schema";
import { type Command, command, EXIT } from "./shared/command.js";
import { columns, escapeControls, formatCount, isoMinute } from "./shared/format.js";
import {
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "./shared/workspace-option.js";

const CHANNELS_USAGE = `Usage: npm start -- channels [--workspace DIR] [--json]

Lists the channels the local workspace holds, most messages first: each one's name (the latest
its messages carry), id, platform, messages (deleted ones left out) and the times of its first
and last message. The name or the id is what topics, questions, digest and report take. The
channels of the generated sample (run without --input) come last, their platform "sample".

Options:
${WORKSPACE_HELP}
  --json            one JSON object per channel per line: {"channel", "name", "platform",
                    "messages", "first", "last", "sample"} (times in epoch ms; name and
                    platform null when no message says; sample true for the sample's)
  -h, --help        this help`;

/** One channel of the workspace, as `channels` lists it. */
interface ChannelEntry {
  channel: string;
  name: string | null;
  platform: string | null;
  messages: number;
  first: number | null;
  last: number | null;
  /** Filled by the generated sample (`run` without `--input`), not by the user's chat. */
  sample: boolean;
}

export const channelsCommand: Command = command({
  name: "channels",
  usage: CHANNELS_USAGE,
  options: { ...WORKSPACE_OPTION, json: { type: "boolean" } },
  parse: ({ values, positionals }) => {
    if (positionals.length > 0) {
      throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
    }
    return { dir: workspaceDir(values.workspace, false) as string, json: values.json ?? false };
  },
  run: async ({ dir, json }, io) => {
    const entries = await withWorkspace({ dir, create: false }, io, async (workspace) => {
      const sample = new Set(workspace.sampleChannels);
      const found = await workspaceChannels(workspace.dynamodb(), workspace.tables.messagesTable);
      // The user's own first: the demo never stands in for their data.
      return found
        .map((entry) => ({ ...entry, sample: sample.has(entry.channel) }))
        .sort((a, b) => Number(a.sample) - Number(b.sample));
    });
    if (json) {
      for (const entry of entries) io.stdout.write(`${JSON.stringify(entry)}\n`);
      return EXIT.ok;
    }
    if (entries.length === 0) {
      io.stdout.write(
        "No channels yet: npm start -- run --input FILE (or import-chat) adds some\n",
      );
      return EXIT.ok;
    }
    io.stdout.write(table(entries));
    return EXIT.ok;
  },
});

/** Every channel of the messages table with its counts: one scan of what a message's row names. */
export async function workspaceChannels(
  client: DynamoDBClient,
  tableName: string,
): Promise<Omit<ChannelEntry, "sample">[]> {
  const byChannel = new Map<string, Omit<ChannelEntry, "sample"> & { namedAt: number }>();
  const pages = paginateScan(
    { client },
    {
      TableName: tableName,
      ProjectionExpression: "#c, #k, #p, ts, channelName, platform, deleted",
      ExpressionAttributeNames: { "#c": PARTITION_KEY, "#k": SORT_KEY, "#p": POSITION },
    },
  );
  for await (const page of pages) {
    for (const raw of page.Items ?? []) {
      const item = unmarshall(raw);
      // A message has a position; a held change and the channel's own item have none.
      if (item[POSITION] === undefined || item.deleted === true) continue;
      const channel = String(item[PARTITION_KEY]);
      const entry = byChannel.get(channel) ?? {
        channel,
        name: null,
        platform: null,
        messages: 0,
        first: null,
        last: null,
        namedAt: -Infinity,
      };
      byChannel.set(channel, entry);
      entry.messages++;
      const ts = typeof item.ts === "number" ? item.ts : undefined;
      if (ts !== undefined) {
        entry.first = entry.first === null ? ts : Math.min(entry.first, ts);
        entry.last = entry.last === null ? ts : Math.max(entry.last, ts);
      }
      if (typeof item.platform === "string") entry.platform = item.platform;
      // The latest name: a renamed channel is listed as it is called now.
      if (typeof item.channelName === "string" && (ts ?? -Infinity) >= entry.namedAt) {
        entry.name = item.channelName;
        entry.namedAt = ts ?? -Infinity;
      }
    }
  }
  return [...byChannel.values()]
    .map(({ namedAt: _, ...entry }) => entry)
    .sort((a, b) => b.messages - a.messages || (a.channel < b.channel ? -1 : 1));
}

/** The entries as aligned columns, chat-supplied names and ids made safe for a terminal. */
function table(entries: readonly ChannelEntry[]): string {
  const rows = [
    ["name", "id", "platform", "messages", "first", "last"],
    ...entries.map((e) => [
      escapeControls(e.name ?? "-"),
      escapeControls(e.channel),
      e.sample ? "sample" : (e.platform ?? "-"),
      formatCount(e.messages),
      e.first === null ? "-" : isoMinute(e.first),
      e.last === null ? "-" : isoMinute(e.last),
    ]),
  ];
  return `${columns(rows, [3]).join("\n")}\n`;
}
