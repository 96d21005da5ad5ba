/**
 * What a mistyped or invisible-character-laden name probably meant: `topics` and `channel delete`
 * on a channel with nothing stored suggest stored channels (typed back with `shellArg`), and a
 * mistyped command or option the nearest that exists.
 */
import { type DynamoDBClient, paginateScan } from "@aws-sdk/client-dynamodb";
import { shellArg } from "./format.js";
import type { CommandIO } from "./io.js";

/** Suggestions shown at most. */
const MAX_SUGGESTIONS = 5;

/** The id as a reader sees it: no invisible or control characters, no case, compatibility forms folded. */
function seen(id: string): string {
  return id
    .normalize("NFKC")
    .replace(/[\p{Cc}\p{Cf}\p{Z}]/gu, "")
    .toLowerCase();
}

/** Edits (insert, delete, substitute) from `a` to `b`, by code point. */
function distance(a: string, b: string): number {
  const [x, y] = [[...a], [...b]];
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      const substitute = previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1);
      row.push(Math.min(previous[j] + 1, row[j - 1] + 1, substitute));
    }
    previous = row;
  }
  return previous[y.length];
}

/**
 * The ids of `known` near `wanted`, nearest first: the same once invisible characters, case and
 * compatibility forms are set aside, or a couple of edits away (one for ids of up to 4
 * characters). `wanted` itself is never one.
 */
export function nearNames(wanted: string, known: Iterable<string>): string[] {
  const target = seen(wanted);
  const allowed = [...target].length <= 4 ? 1 : 2;
  const scored: [string, number][] = [];
  for (const id of new Set(known)) {
    if (id === wanted) continue;
    const d = distance(seen(id), target);
    if (d <= allowed) scored.push([id, d]);
  }
  scored.sort(([a, da], [b, db]) => da - db || (a < b ? -1 : a > b ? 1 : 0));
  return scored.slice(0, MAX_SUGGESTIONS).map(([id]) => id);
}

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
    io.stderr.write(`${prefix}: no stored channel is near it (${known.size} channel(s) stored)\n`);
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
