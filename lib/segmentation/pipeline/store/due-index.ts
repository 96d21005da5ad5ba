/**
 * Reading the due index: the due channels of each shard in due order, merged across shards into
 * one stream, the earliest due time, and what is left in shards a migration leaves behind.
 */
import { paginateQuery, QueryCommand, type QueryCommandOutput } from "@aws-sdk/client-dynamodb";
import { CHANNEL_KEY, DUE_AT, DUE_INDEX, DUE_SHARD } from "../schema/table.js";
import { type ChannelsTable, N, S } from "./attributes.js";
import type { DueChannel } from "./channel-state.js";

/** The channels of one shard due at or before `now`, in due order. */
export async function* dueItems(
  table: ChannelsTable,
  shard: string,
  now: number,
): AsyncIterable<DueChannel> {
  const pages = paginateQuery(
    { client: table.client },
    {
      TableName: table.tableName,
      IndexName: DUE_INDEX,
      KeyConditionExpression: "#shard = :shard AND #due <= :now",
      ExpressionAttributeNames: { "#shard": DUE_SHARD, "#due": DUE_AT },
      ExpressionAttributeValues: { ":shard": S(shard), ":now": N(now) },
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      yield { channel: item[CHANNEL_KEY]?.S ?? "", dueAt: Number(item[DUE_AT]?.N) };
    }
  }
}

/**
 * Merges the shards' due channels, each in due order, into one stream in due order: under a
 * time budget the longest-waiting channels go first, whichever shard holds them.
 */
export async function* mergeByDue(shards: AsyncIterator<DueChannel>[]): AsyncIterable<DueChannel> {
  const heads = await Promise.all(shards.map((shard) => shard.next()));
  for (;;) {
    let best = -1;
    heads.forEach((head, i) => {
      if (
        !head.done &&
        (best < 0 || head.value.dueAt < (heads[best].value as { dueAt: number }).dueAt)
      )
        best = i;
    });
    if (best < 0) return;
    yield heads[best].value as DueChannel;
    heads[best] = await shards[best].next();
  }
}

/** The due items (whenever due) of these shards. */
export async function countDueItems(
  table: ChannelsTable,
  shards: readonly string[],
): Promise<number> {
  const counts = await Promise.all(
    shards.map(async (shard) => {
      let count = 0;
      const pages = paginateQuery(
        { client: table.client },
        {
          TableName: table.tableName,
          IndexName: DUE_INDEX,
          KeyConditionExpression: "#shard = :shard",
          ExpressionAttributeNames: { "#shard": DUE_SHARD },
          ExpressionAttributeValues: { ":shard": S(shard) },
          Select: "COUNT",
        },
      );
      for await (const page of pages) count += page.Count ?? 0;
      return count;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** The earliest due time in these shards, or null when none holds a due item. */
export async function earliestDue(
  table: ChannelsTable,
  shards: readonly string[],
): Promise<number | null> {
  const firsts = await Promise.all(
    shards.map((shard) =>
      table.client.send(
        new QueryCommand({
          TableName: table.tableName,
          IndexName: DUE_INDEX,
          KeyConditionExpression: "#shard = :shard",
          ExpressionAttributeNames: { "#shard": DUE_SHARD },
          ExpressionAttributeValues: { ":shard": S(shard) },
          Limit: 1,
        }),
      ),
    ),
  );
  const due = firsts.flatMap((result: QueryCommandOutput) => {
    const value = result.Items?.[0]?.[DUE_AT]?.N;
    return value === undefined ? [] : [Number(value)];
  });
  return due.length === 0 ? null : Math.min(...due);
}
