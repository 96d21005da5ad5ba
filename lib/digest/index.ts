/**
 * Digests: what a set of channels talked about over a period (new and recurring topics with
 * their evidence, unanswered and answered questions, activity), built from the knowledge the
 * results table keeps, and rendered as Markdown, HTML or JSON.
 */
export {
  assembleDigest,
  type BuildDigestOptions,
  buildDigest,
  DIGEST_LIMITS,
  type DigestChannel,
} from "./build.js";
export { DigestError, type DigestErrorCode, MAX_PERIOD_DAYS } from "./errors.js";
export { digestHtml } from "./html.js";
export { digestJson, digestMarkdown, type RenderOptions } from "./markdown.js";
export { parseSince } from "./since.js";
export {
  type ActivityMessage,
  type DigestSources,
  dynamoDbDigestSources,
  type MessagesById,
  storeDigestSources,
} from "./sources.js";
export type {
  Digest,
  DigestActivity,
  DigestEvidence,
  DigestFormat,
  DigestQuestion,
  DigestTopic,
} from "./types.js";
