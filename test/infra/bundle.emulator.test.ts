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

/** One of each error class of the library, made by a module the test bundles. */
const ERRORS = join(root, "test/infra/error-classes.ts");

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
  "CorrectionError",
  "ErasureError",
  "ErasureRequestError",
  "ErasureScopeError",
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
  "ApiBodyError",
  "SlackDeliveryError",
  "DigestBucketError",
  "SnsDeliveryError",
  "AskError",
];

describe("a minified bundle", () => {
  it("keeps every error's literal name and stable code, though it renames the classes", async () => {
    const result = await build({
      entryPoints: [ERRORS],
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
