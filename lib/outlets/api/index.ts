/**
 * The read API: a pure router and handler from an HTTP request to a JSON response over small
 * ports (one bounded DynamoDB read each), their DynamoDB implementation, validated cursors, the
 * response schemas (zod) and the OpenAPI document built from them. The Lambda handler
 * (functions/api) and `npm start -- serve` (cli/serve/serve.ts) put it behind their transports.
 */
export { type CursorCodec, type CursorScope, cursorCodec, MAX_CURSOR_CHARS } from "./cursor.js";
export {
  type DynamoDbApiSourcesOptions,
  dynamoDbApiSources,
  type ReadCost,
} from "./dynamodb.js";
export {
  ApiCursorError,
  ApiError,
  ApiMethodError,
  ApiNotFoundError,
  ApiParameterError,
  ApiUnavailableError,
} from "./errors.js";
export {
  type ApiHandler,
  type ApiHandlerOptions,
  type ApiRequest,
  type ApiResponse,
  apiHandler,
  CHANNEL_LIMITS,
  DIGEST_PERIOD,
  ITEMS_PER_CHANNEL,
  QUESTION_LIMITS,
  segmentBody,
  TOPIC_LIMITS,
} from "./handler.js";
export { type MemoryApiData, memoryApiSources } from "./memory.js";
export { openApiDocument } from "./openapi.js";
export type {
  ApiSources,
  ChannelsPosition,
  ChannelsRead,
  DigestSource,
  KeyedSupport,
  QuestionsSource,
  TopicEntriesRead,
} from "./ports.js";
export { MAX_ID_CHARS, MAX_PATH_CHARS, MAX_QUERY_CHARS } from "./request.js";
export * as apiBodies from "./schemas.js";
export {
  ENTRIES_PER_TOPIC,
  entryBudget,
  MAX_ENTRIES,
  MIN_ENTRIES,
  topicsPage,
} from "./topics-page.js";
