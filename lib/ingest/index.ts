/**
 * Ingestion: chat platform messages into the history store, one conversation per channel, each
 * message answered (stored, unchanged, in conflict, rejected or failed); the typed client for
 * users' own ingestion Lambdas; and the arrival positions it reserves on the channels table.
 */
export { ChannelPositions, type ChannelPositionsOptions } from "./channel-positions.js";
export {
  type ChatMessageInput,
  type Conflict,
  DEFAULT_MAX_BATCH,
  type Failure,
  historyMessage,
  type IngestOptions,
  type IngestResult,
  ingest,
  ingestionProblem,
  MAX_BATCH_LIMIT,
  type Rejection,
} from "./ingest.js";
export { IngestClient, type IngestClientOptions } from "./ingest-client.js";
