/**
 * The read API. A pure router and handler from an HTTP request to a JSON response over small ports
 * (one bounded DynamoDB read each), their DynamoDB implementation, validated cursors, the response
 * schemas (zod) and the OpenAPI document built from them, all over one list of routes
 * (`API_ROUTES`), which the deployed HTTP API (infra/api.ts) reads too. The Lambda handler
 * (functions/api) and `npm start -- serve` (cli/serve/serve.ts) put it behind their transports.
 */
export { storeCorrections } from "./correction-route.js";
export { cursorCodec } from "./cursor.js";
export { dynamoDbApiSources, type ReadCost } from "./dynamodb.js";
export {
  ApiBodyError,
  ApiCursorError,
  ApiError,
  ApiMethodError,
  ApiNotFoundError,
  ApiParameterError,
  ApiUnavailableError,
} from "./errors.js";
export { type ApiHandler, type ApiResponse, apiHandler } from "./handler.js";
export { DIGEST_PERIOD, QUESTION_LIMITS } from "./limits.js";
export { memoryApiSources } from "./memory.js";
export { openApiDocument } from "./openapi.js";
export type {
  ApiSources,
  ChannelsPosition,
  QuestionsSource,
  SearchSource,
  StatsSource,
} from "./ports.js";
export {
  API_METHODS,
  API_ROUTES,
  API_WRITE_METHODS,
  API_WRITE_ROUTES,
  matchRoute,
  matchWriteRoute,
} from "./routes.js";
export * as apiBodies from "./schemas.js";
export { storeStatsSource } from "./stats-route.js";
export { entryBudget, TOPIC_LIMITS } from "./topics-page.js";
