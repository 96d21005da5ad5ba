/**
 * Digests: what a set of channels talked about over a period, as plain text, Markdown, HTML or
 * JSON. New and recurring topics with their evidence, unanswered and answered questions and
 * activity, built from the knowledge the results table keeps, and delivered to S3, Slack and SNS
 * on a schedule.
 */

export { type DigestBucket, DigestBucketError, digestS3Client, s3Bucket } from "./bucket.js";
export {
  assembleDigest,
  buildDigest,
  channelDigests,
  channelQuestions,
  DIGEST_LIMITS,
  type DigestChannel,
} from "./build.js";
export { DigestError } from "./errors.js";
export { channelFaq } from "./faq.js";
export { digestHtml } from "./html.js";
export { digestJson, digestMarkdown } from "./markdown.js";
export { digestText } from "./plain.js";
export {
  type DigestGroup,
  type DigestRenderers,
  platformGroups,
  runScheduledDigest,
  runScheduledDigests,
  type ScheduledDigestDeps,
} from "./schedule.js";
export { askedPeriod } from "./since.js";
export { postSlackWebhook, SlackDeliveryError, slackDigestPayload } from "./slack.js";
export {
  digestSnsClient,
  SNS_LIMITS,
  SnsDeliveryError,
  snsDigestMessage,
  snsDigestSubject,
  snsTopic,
} from "./sns.js";
export {
  type ActivityMessage,
  type DigestSources,
  dynamoDbDigestSources,
  storeDigestSources,
} from "./sources.js";
export type { Digest, DigestEvidence, DigestQuestion, DigestTopic } from "./types.js";
