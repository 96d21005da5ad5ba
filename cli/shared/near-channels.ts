/**
 * The stored channels a command on a channel with nothing stored suggests (`topics`, `channel
 * delete`, `report --channel`), typed back with `shellArg`, and where they are read from.
 */
import { type DynamoDBClient, paginateScan } from "@aws-sdk/client-dynamodb";
import { plural, shellArg } from "./format.js";
import type { CommandIO } from "./io.js";
import { nearNames } from "./near-names.js";

/**
 * Says on standard error which stored channels are near `channel`, as commands to run again
 * (`npm start -- <invocation> <id>`), or that none is.
 */
export function suggestChannels(
  prefix: string,
  invocation: string,
  channel: string,
  known: Set<string>,
  io: CommandIO,
): void {
  const near = nearNames(channel, known);
  if (near.length === 0) {
    io.stderr.write(
      `${prefix}: no stored channel is near it (${plural(known.size, "channel")} stored)\n`,
    );
    return;
  }
  io.stderr.write(`${prefix}: did you mean (with the same options)\n`);
  for (const id of near) {
    io.stderr.write(`  npm start -- ${invocation} ${shellArg(id)}\n`);
  }
}

/**
 * Pages of the results table scanned for its channels at most: the suggestions of an unknown
 * channel are worth a few reads, not a full scan of a large deployment's table.
 */
const SCAN_PAGES = 20;

/**
 * The channels (and imported conversations) the results table has items of: its partition keys,
 * but the deployment's own spend partition (` deployment`: a leading space, no channel id).
 */
export async function resultChannels(
  client: DynamoDBClient,
  tableName: string,
): Promise<Set<string>> {
  const channels = new Set<string>();
  let pages = 0;
  const scan = paginateScan(
    { client },
    {
      TableName: tableName,
      ProjectionExpression: "#c",
      ExpressionAttributeNames: { "#c": "channel" },
    },
  );
  for await (const page of scan) {
    for (const item of page.Items ?? []) {
      const id = item.channel?.S;
      if (id !== undefined && !/^\s/.test(id)) channels.add(id);
    }
    if (++pages >= SCAN_PAGES) break;
  }
  return channels;
}
