/**
 * Ingestion: chat messages, edits and deletions into the history store, one conversation per
 * channel. Each input is answered (stored, unchanged, in conflict, deleted, a change's status,
 * rejected or failed) and applied changes are told to a listener; with the typed client for
 * users' own ingestion Lambdas, the arrival positions it reserves on the channels table and the
 * channels' message counts kept from the messages table's stream.
 */
export type { AppliedChange, ChangeListener } from "./changes.js";
export { ChannelPositions } from "./channel-positions.js";
export {
  type ChannelScope,
  inScope,
  type ProducerGrant,
  parseChannelScope,
  parseProducerGrants,
} from "./grants.js";
export {
  type ChatChangeInput,
  type ChatMessageInput,
  DEFAULT_MAX_BATCH,
  emptyIngestResult,
  historyMessage,
  type IngestResult,
  type IngestStore,
  ingest,
  ingestionProblem,
  MAX_BATCH_LIMIT,
} from "./ingest.js";
export { IngestClient } from "./ingest-client.js";
export {
  type LambdaStreamRecord,
  MessageCounts,
  messageStreamRecords,
} from "./message-counts.js";
