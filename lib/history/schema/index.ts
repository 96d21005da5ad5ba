/**
 * The messages table's schema, version 1 (a public contract). Its key, index and attribute names,
 * and the item of a message as a writer of the table puts it. What the CDK stack and writers of
 * their own import, without the store.
 */
export {
  ACTIVITY_ATTRIBUTES,
  AUTHOR_KEY,
  authorEntry,
  authorKeyOf,
  authorRefKey,
  BY_AUTHOR_ATTRIBUTES,
  BY_AUTHOR_INDEX,
  BY_POSITION_ATTRIBUTES,
  BY_POSITION_INDEX,
  CHANGE_ATTRIBUTES,
  CHANNEL_FACT_ATTRIBUTES,
  CONVERSATIONS_INDEX,
  DELETED,
  INFERRED_REPLY_ATTRIBUTES,
  indexEntry,
  LISTED,
  MESSAGES_TTL_ATTRIBUTE,
  messageAuthorKey,
  messageItem,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
  storedSize,
  TOMBSTONE_ATTRIBUTES,
  userIdKeyOf,
} from "../dynamodb/schema.js";
