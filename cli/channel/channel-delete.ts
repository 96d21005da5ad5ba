/**
 * `channel delete`: removes a channel entirely (`deleteChannel`, lib/lifecycle/channel-deletion) from the local
 * workspace or a deployment's tables, after saying what it holds; asks first on a terminal, and
 * refuses without `--yes` elsewhere.
 */
import { createInterface } from "node:readline";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type ChannelPart, deleteChannel, type PartCount } from "convoseg/channel-deletion";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { LanceChannelIndexes } from "convoseg/search/lancedb";
import { EXIT } from "../shared/command.js";
import { onTable, type TableRef } from "../shared/failures.js";
import { escapeControls, plural } from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";
import { resultChannels, suggestChannels } from "../shared/near-channels.js";

/** Where the channel's data is: the three tables, and what else a local workspace keeps. */
export interface ChannelPlace {
  client: DynamoDBClient;
  messagesTable: string;
  channelsTable: string;
  resultsTable: string;
  pipelineParts?: readonly ChannelPart[];
  /** The deployment's search index, removed last. */
  derivedParts?: readonly ChannelPart[];
  /** `the workspace …` or `the tables …`, as messages say it. */
  where: string;
  /** What to do when a table is missing. */
  fix: string;
}

export interface DeleteRequest {
  channel: string;
  dryRun: boolean;
  yes: boolean;
}

/** Counts, asks (or refuses) and deletes; resolves to the exit code. */
export async function deleteChannelCommand(
  request: DeleteRequest,
  place: ChannelPlace,
  io: CommandIO,
): Promise<number> {
  const { channel } = request;
  const name = escapeControls(JSON.stringify(channel));
  const ref: TableRef = {
    table: `${place.channelsTable}, ${place.messagesTable}, ${place.resultsTable}`,
    role: "the channels, messages and results tables",
    fix: place.fix,
  };
  const run = (dryRun: boolean) => onTable(ref, () => deleteChannel({ ...place, channel, dryRun }));
  const counts = await run(true);
  if (total(counts) === 0) {
    io.stderr.write(`channel delete: nothing is stored of channel ${name} in ${place.where}\n`);
    const known = await onTable(ref, async () => {
      const messages = new DynamoDbStore({ client: place.client, tableName: place.messagesTable });
      return new Set([
        ...(await messages.conversations()),
        ...(await resultChannels(place.client, place.resultsTable)),
      ]);
    });
    suggestChannels("channel delete", "channel delete", channel, known, io);
    return EXIT.failed;
  }
  if (request.dryRun) {
    io.stdout.write(report(`channel ${name} holds (dry run: nothing deleted)`, counts));
    return EXIT.ok;
  }
  if (!request.yes) {
    const terminal = (io.stdin as { isTTY?: boolean }).isTTY === true;
    if (!terminal) {
      io.stderr.write(
        `channel delete: not deleting channel ${name} (${plural(total(counts), "item")}) without --yes: standard input is no terminal to ask on; run again with --yes, or --dry-run to see what it holds\n`,
      );
      return EXIT.failed;
    }
    io.stderr.write(report(`channel ${name} holds`, counts));
    const answer = await ask(io, `Delete all of it from ${place.where}? Type yes to go on: `);
    if (answer !== "yes" && answer !== "y") {
      io.stderr.write("channel delete: nothing deleted\n");
      return EXIT.failed;
    }
  }
  io.stdout.write(report(`channel ${name} deleted`, await run(false)));
  return EXIT.ok;
}

const total = (counts: readonly PartCount[]) => counts.reduce((sum, c) => sum + c.items, 0);

/** One line per part, in deletion order. */
function report(title: string, counts: readonly PartCount[]): string {
  const width = Math.max(...counts.map((c) => c.name.length));
  const lines = counts.map((c) => {
    const kinds = Object.entries(c.kinds ?? {}).map(([kind, n]) => `${n} ${kind}`);
    return `  ${`${c.name}:`.padEnd(width + 1)} ${plural(c.items, "item")} (table ${c.table})${kinds.length > 0 ? `: ${kinds.join(", ")}` : ""}`;
  });
  return `${title}:\n${lines.join("\n")}\n`;
}

/** The first line the user types after `question` (empty when the input ends first). */
async function ask(io: CommandIO, question: string): Promise<string> {
  io.stderr.write(question);
  const lines = createInterface({ input: io.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) return line.trim().toLowerCase();
    return "";
  } finally {
    lines.close();
  }
}

/**
 * The deployment's search index at `uri` (`SEARCH_INDEX_URI`: the registry's search documents,
 * a table per channel) as a part `channel delete` removes; none when unset or empty.
 */
export function searchIndexParts(uri: string | undefined): ChannelPart[] {
  if (uri === undefined || uri.trim() === "") return [];
  const index = new LanceChannelIndexes(uri.trim());
  return [
    {
      name: "search index",
      table: uri.trim(),
      count: (channel) => index.count(channel),
      remove: async (channel) => {
        const found = await index.count(channel);
        await index.drop(channel);
        return found;
      },
    },
  ];
}
