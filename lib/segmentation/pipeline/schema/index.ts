/**
 * The channels table's shape. Its keys and item names, the attributes ingestion (and an erasure) may write, the due
 * index and its shard arithmetic, and the table definition. What the CDK stack (`infra/`) and
 * every writer of the table (ingestion's `ChannelPositions`) build on.
 */
export {
  checkDueShards,
  DUE_SHARDS,
  dueShardOf,
  dueShardsRead,
  MAX_DUE_SHARDS,
  shareShards,
} from "./due-shards.js";
export {
  CHANNEL_KEY,
  COUNT_ATTRIBUTES,
  COUNTED_TO,
  channelItemKey,
  channelsTableDefinition,
  createChannelsTable,
  DUE_AT,
  DUE_INDEX,
  DUE_SHARD,
  holdName,
  ITEM_KEY,
  LINKER_RESET_ATTRIBUTES,
  MARK_ATTRIBUTES,
  MARKS_ITEM,
  MESSAGE_COUNT,
  SHARE_CLAIM_ITEM,
} from "./table.js";
