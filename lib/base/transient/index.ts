/**
 * The transient-error rule: whether a failed SDK or HTTP request may succeed when made again.
 * Shared by the DynamoDB stores, SQS delivery and the LLM adapters; imports nothing.
 */
export {
  httpStatusOf,
  IN_FLIGHT_NETWORK_CODES,
  isNetworkFailure,
  isTransient,
  isTransientStatus,
} from "./classify.js";
