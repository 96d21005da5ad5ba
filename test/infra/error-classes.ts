/**
 * One of each error class of the library, as the bundle test builds them: bundled with the
 * functions' own options (minified, which renames classes), each must still report its literal
 * `name` and stable `code`. Read by test/infra/bundle.emulator.test.ts as an esbuild entry.
 */
import {
  ApiBodyError,
  ApiCursorError,
  ApiError,
  ApiMethodError,
  ApiNotFoundError,
  ApiParameterError,
  ApiUnavailableError,
} from "convoseg/api";
import { AskError } from "convoseg/ask";
import {
  type ChatResponse,
  CommitError,
  InvalidWindowError,
  MiddlewareError,
  NilStreamError,
  WindowTooSmallError,
} from "convoseg/chat-model";
import { ConnectorError } from "convoseg/connectors";
import {
  DiscordAuthError,
  DiscordConfigError,
  DiscordDeadlineError,
  DiscordError,
  DiscordHttpError,
  DiscordRateLimitError,
} from "convoseg/connectors/discord";
import { DigestBucketError, SlackDeliveryError, SnsDeliveryError } from "convoseg/digest";
import { ErasureError, ErasureRequestError, ErasureScopeError } from "convoseg/erasure";
import { ExtractionError, InvalidModelOutputError, LLMError } from "convoseg/extraction";
import {
  HistoryError,
  InvalidConversationIdError,
  InvalidMessageError,
  InvalidWriteOutcomeError,
  MessageTooLargeError,
  NilStoreError,
  WriteError,
} from "convoseg/history";
import { LeaseReleaseError } from "convoseg/history/positions";
import {
  CorrectionError,
  KnowledgeConfigError,
  KnowledgeError,
  KnowledgeItemError,
  LeaseLostError,
  SegmentBusyError,
} from "convoseg/knowledge";
import {
  ChannelStateError,
  DispatchError,
  PipelineConfigError,
  PipelineError,
  SegmentDeliveryError,
  WorkerEventError,
} from "convoseg/pipeline";
import {
  InvalidSegmentMessageError,
  MissingSegmentMessagesError,
  SegmentTooLargeError,
} from "convoseg/pipeline/contract";

const outcome = { accepted: 0, uncertain: false };
const response: ChatResponse = {
  message: { role: "assistant", parts: [{ type: "text", text: "" }] },
};
/** @public The bundle test imports it from the bundle this file is built into. */
export const made = [
  new HistoryError("X", "x"),
  new NilStoreError(),
  new InvalidConversationIdError("empty"),
  new InvalidMessageError("id", "empty"),
  new InvalidWriteOutcomeError("x"),
  new WriteError(outcome, new Error("x")),
  new MessageTooLargeError(1, "too large"),
  new LeaseReleaseError(new Error("x")),
  new CommitError({ conversationId: "c", messages: [], outcome, response, cause: new Error("x") }),
  new NilStreamError(),
  new MiddlewareError("read history", new Error("x")),
  new InvalidWindowError("x"),
  new WindowTooSmallError(2, 1),
  new PipelineError("X", "x"),
  new PipelineConfigError("MAX_SIZE", "must be set"),
  new ChannelStateError("c", "x"),
  new SegmentTooLargeError("s", 2, 1),
  new InvalidSegmentMessageError("v", "x"),
  new MissingSegmentMessagesError("s", ["a"]),
  new SegmentDeliveryError(0, 1, "x"),
  new WorkerEventError("share", "x"),
  new DispatchError([{ index: 0, of: 2 }]),
  new ExtractionError("X", "x"),
  new LLMError("x", true, 429),
  new InvalidModelOutputError("not JSON", "x"),
  new KnowledgeError("X", "x"),
  new KnowledgeConfigError([{ setting: "ROUTE", problem: "x" }]),
  new SegmentBusyError("s", 0),
  new KnowledgeItemError("k", "x"),
  new LeaseLostError("s"),
  new CorrectionError("KNOWLEDGE_BAD_CORRECTION", "action", "x"),
  new ErasureError("X", "x"),
  new ErasureRequestError("user", "x"),
  new ErasureScopeError({ c1: 2 }),
  new ConnectorError("CONNECTOR_BAD_SIGNATURE", "X-Slack-Signature", "x"),
  new DiscordError("X", "x"),
  new DiscordAuthError(401, "/r"),
  new DiscordRateLimitError("/r", 4),
  new DiscordHttpError("/r", 404, "x"),
  new DiscordDeadlineError("/r"),
  new DiscordConfigError("S", "x"),
  new ApiError("X", 400, "x"),
  new ApiParameterError("limit", "x"),
  new ApiCursorError("x"),
  new ApiNotFoundError("route"),
  new ApiMethodError(),
  new ApiUnavailableError("questions"),
  new ApiBodyError("body.action", "x"),
  new SlackDeliveryError("SLACK_REJECTED", 404, 1),
  new DigestBucketError("k", 403, "AccessDenied"),
  new SnsDeliveryError("SNS_REJECTED", 403, "AuthorizationErrorException"),
  new AskError("ASK_POST_FAILED", "x"),
].map((e) => ({ name: e.name, code: e.code, constructor: e.constructor.name }));
