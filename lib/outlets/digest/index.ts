/**
 * Digests: what a set of channels talked about over a period (new and recurring topics with
 * their evidence, unanswered and answered questions, activity), built from the knowledge the
 * results table keeps, and rendered as Markdown, HTML or JSON.
 */

export {
  type DigestBucket,
  DigestBucketError,
  type DigestS3ClientOptions,
  digestS3Client,
  type S3BucketOptions,
  s3Bucket,
} from "./bucket.js";
export {
  assembleDigest,
  type BuildDigestOptions,
  buildDigest,
  type ChannelDigests,
  channelDigests,
  DIGEST_LIMITS,
  type DigestChannel,
  resultQuestions,
} from "./build.js";
export { DigestError, type DigestErrorCode, MAX_PERIOD_DAYS } from "./errors.js";
export { digestHtml } from "./html.js";
export { digestJson, digestMarkdown, type RenderOptions } from "./markdown.js";
export {
  type DigestRenderers,
  digestKeys,
  runScheduledDigest,
  type ScheduledDigestDeps,
  type ScheduledDigestOptions,
  type ScheduledDigestSummary,
  type SlackOutcome,
  type SnsOutcome,
} from "./schedule.js";
export { parseSince } from "./since.js";
export {
  postSlackWebhook,
  SLACK_LIMITS,
  type SlackBlock,
  SlackDeliveryError,
  type SlackPayload,
  type SlackPayloadOptions,
  type SlackPostOptions,
  slackDigestPayload,
  slackEscape,
} from "./slack.js";
export {
  type DigestSnsClientOptions,
  type DigestSnsTopic,
  digestSnsClient,
  SNS_LIMITS,
  SnsDeliveryError,
  type SnsTopicOptions,
  snsDigestMessage,
  snsDigestSubject,
  snsTopic,
} from "./sns.js";
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
