/**
 * A fanned-out tick's share claims on the channels table: one item per share, claimed for a
 * worker's invocation so that one worker at a time works a share (`../fan-out.ts`).
 */
import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { isConditionFailure } from "../../../base/dynamodb/index.js";
import { CHANNEL_KEY, ITEM_KEY, SHARE_CLAIM_ITEM } from "../schema/table.js";
import type { TickShare } from "../types.js";
import { type ChannelsTable, N, S } from "./attributes.js";

/** A share's claim item; its partition key is no channel's, its item name no channel item's. */
const shareClaimKey = (share: TickShare) => ({
  [CHANNEL_KEY]: S(`due-share/${share.index}/${share.of}`),
  [ITEM_KEY]: S(SHARE_CLAIM_ITEM),
});

/** See `ChannelStore.claimShare`. */
export async function claimShare(
  table: ChannelsTable,
  share: TickShare,
  owner: string,
  until: number,
  wallNow: number,
): Promise<boolean> {
  try {
    await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: shareClaimKey(share),
        UpdateExpression: "SET #until = :until, #owner = :owner",
        ConditionExpression: "attribute_not_exists(#until) OR #until <= :now",
        ExpressionAttributeNames: { "#until": "until", "#owner": "owner" },
        ExpressionAttributeValues: { ":until": N(until), ":owner": S(owner), ":now": N(wallNow) },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** See `ChannelStore.releaseShare`. */
export async function releaseShare(
  table: ChannelsTable,
  share: TickShare,
  owner: string,
): Promise<void> {
  try {
    await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: shareClaimKey(share),
        UpdateExpression: "REMOVE #until, #owner",
        ConditionExpression: "#owner = :owner",
        ExpressionAttributeNames: { "#until": "until", "#owner": "owner" },
        ExpressionAttributeValues: { ":owner": S(owner) },
      }),
    );
  } catch (error) {
    // Claimed by another after this claim ran out: theirs now.
    if (!isConditionFailure(error)) throw error;
  }
}
