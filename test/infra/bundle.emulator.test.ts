/**
 * Error names survive bundling: the functions are bundled minified (which renames classes), and
 * logs, alarms and callers name errors by `name`. Builds a bundle of every error class with the
 * functions' own bundling options and reads each name back from it.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { BUNDLING } from "../../infra/function.js";

const root = new URL("../../", import.meta.url).pathname;

/** Each error class of the library, how to make one, and the name it must report. */
const ERRORS = `
import * as api from "convoseg/api";
import * as chat from "convoseg/chat-model";
import * as connectors from "convoseg/connectors";
import * as digest from "convoseg/digest";
import * as discord from "convoseg/connectors/discord";
import * as erasure from "convoseg/erasure";
import * as extraction from "convoseg/extraction";
import * as history from "convoseg/history";
import * as knowledge from "convoseg/knowledge";
import * as pipeline from "convoseg/pipeline";
import * as contract from "convoseg/pipeline/contract";
const outcome = { accepted: 0, uncertain: false };
const response = { message: { role: "assistant", parts: [{ type: "text", text: "" }] } };
export const made = [
  new history.HistoryError("X", "x"),
  new history.NilStoreError(),
  new history.InvalidConversationIdError("empty"),
  new history.InvalidMessageError("id", "empty"),
  new history.InvalidWriteOutcomeError("x"),
  new history.WriteError(outcome, new Error("x")),
  new history.MessageTooLargeError(1, "too large"),
  new history.LeaseReleaseError(new Error("x")),
  new chat.CommitError({ conversationId: "c", messages: [], outcome, response, cause: new Error("x") }),
  new chat.NilStreamError(),
  new chat.MiddlewareError("read history", new Error("x")),
  new chat.InvalidWindowError("x"),
  new chat.WindowTooSmallError(2, 1),
  new pipeline.PipelineError("X", "x"),
  new pipeline.PipelineConfigError("MAX_SIZE", "must be set"),
  new pipeline.ChannelStateError("c", "x"),
  new contract.SegmentTooLargeError("s", 2, 1),
  new contract.InvalidSegmentMessageError("v", "x"),
  new contract.MissingSegmentMessagesError("s", ["a"]),
  new pipeline.SegmentDeliveryError(0, 1, "x"),
  new pipeline.WorkerEventError("share", "x"),
  new pipeline.DispatchError([{ index: 0, of: 2 }]),
  new extraction.ExtractionError("X", "x"),
  new extraction.LLMError("x", true, 429),
  new extraction.InvalidModelOutputError("not JSON", "x"),
  new knowledge.KnowledgeError("X", "x"),
  new knowledge.KnowledgeConfigError([{ setting: "ROUTE", problem: "x" }]),
  new knowledge.SegmentBusyError("s", 0),
  new knowledge.KnowledgeItemError("k", "x"),
  new knowledge.LeaseLostError("s"),
  new erasure.ErasureError("X", "x"),
  new erasure.ErasureRequestError("user", "x"),
  new connectors.ConnectorError("CONNECTOR_BAD_SIGNATURE", "X-Slack-Signature", "x"),
  new discord.DiscordError("X", "x"),
  new discord.DiscordAuthError(401, "/r"),
  new discord.DiscordRateLimitError("/r", 4),
  new discord.DiscordHttpError("/r", 404, "x"),
  new discord.DiscordDeadlineError("/r"),
  new discord.DiscordConfigError("S", "x"),
  new api.ApiError("X", 400, "x"),
  new api.ApiParameterError("limit", "x"),
  new api.ApiCursorError("x"),
  new api.ApiNotFoundError("route"),
  new api.ApiMethodError(),
  new api.ApiUnavailableError("questions"),
  new digest.SlackDeliveryError("SLACK_REJECTED", 404, 1),
  new digest.DigestBucketError("k", 403, "AccessDenied"),
  new digest.SnsDeliveryError("SNS_REJECTED", 403, "AuthorizationErrorException"),
].map((e) => ({ name: e.name, code: e.code, constructor: e.constructor.name }));
`;

const EXPECTED = [
  "HistoryError",
  "NilStoreError",
  "InvalidConversationIdError",
  "InvalidMessageError",
  "InvalidWriteOutcomeError",
  "WriteError",
  "MessageTooLargeError",
  "LeaseReleaseError",
  "CommitError",
  "NilStreamError",
  "MiddlewareError",
  "InvalidWindowError",
  "WindowTooSmallError",
  "PipelineError",
  "PipelineConfigError",
  "ChannelStateError",
  "SegmentTooLargeError",
  "InvalidSegmentMessageError",
  "MissingSegmentMessagesError",
  "SegmentDeliveryError",
  "WorkerEventError",
  "DispatchError",
  "ExtractionError",
  "LLMError",
  "InvalidModelOutputError",
  "KnowledgeError",
  "KnowledgeConfigError",
  "SegmentBusyError",
  "KnowledgeItemError",
  "LeaseLostError",
  "ErasureError",
  "ErasureRequestError",
  "ConnectorError",
  "DiscordError",
  "DiscordAuthError",
  "DiscordRateLimitError",
  "DiscordHttpError",
  "DiscordDeadlineError",
  "DiscordConfigError",
  "ApiError",
  "ApiParameterError",
  "ApiCursorError",
  "ApiNotFoundError",
  "ApiMethodError",
  "ApiUnavailableError",
  "SlackDeliveryError",
  "DigestBucketError",
  "SnsDeliveryError",
];

describe("a minified bundle", () => {
  it("keeps every error's literal name and stable code, though it renames the classes", async () => {
    const result = await build({
      stdin: { contents: ERRORS, resolveDir: root, loader: "ts" },
      bundle: true,
      platform: "node",
      format: "esm",
      target: BUNDLING.target,
      minify: BUNDLING.minify,
      external: [...BUNDLING.externalModules],
      banner: { js: BUNDLING.banner },
      write: false,
    });
    const file = join(mkdtempSync(join(tmpdir(), "convoseg-bundle-")), "errors.mjs");
    writeFileSync(file, result.outputFiles[0].text);
    const { made } = (await import(pathToFileURL(file).href)) as {
      made: { name: string; code: string; constructor: string }[];
    };
    expect(made.map((e) => e.name)).toEqual(EXPECTED);
    for (const error of made) expect(error.code).toMatch(/^[A-Z_]+$/);
    // The bundle did rename them: the literal names are what kept them.
    expect(made.filter((e) => e.constructor !== e.name).length).toBeGreaterThan(10);
  });
});
