/**
 * Ingestion: chat platform messages, edits and deletions into the history store, one
 * conversation per channel, each input answered (stored, unchanged, in conflict, deleted, a
 * change's status, rejected or failed) and applied changes told to a listener; the typed client for
 * users' own ingestion Lambdas; and the arrival positions it reserves on the channels table.
 */
export type {
  AppliedChange,
  ChangeListener,
  ChangeReport,
} from "./changes.js";
export { ChannelPositions, type ChannelPositionsOptions } from "./channel-positions.js";
export {
  type ChatChangeInput,
  type ChatMessageInput,
  type Conflict,
  DEFAULT_MAX_BATCH,
  emptyIngestResult,
  type Failure,
  historyMessage,
  type IngestOptions,
  type IngestResult,
  type IngestStore,
  ingest,
  ingestionProblem,
  MAX_BATCH_LIMIT,
  type Rejection,
} from "./ingest.js";
export { IngestClient, type IngestClientOptions } from "./ingest-client.js";
