/**
 * Chat with a model over a history store. A provider-neutral chat model contract, the middleware
 * that replays a conversation's history into each model call and persists the fresh exchange, and
 * the window store that bounds what is replayed. Built on `lib/history`, whose error family its
 * errors belong to; the pipeline does not use it.
 */
export {
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type ChatStreamer,
  cloneRequest,
  type ModelCallOptions,
  type ResponseDelta,
  StreamAccumulator,
  validateRequest,
} from "./chat.js";
export { CommitError } from "./commit-error.js";
export { Middleware, MiddlewareError, NilStreamError } from "./middleware.js";
export { InvalidWindowError, WindowStore, WindowTooSmallError } from "./window-store.js";
