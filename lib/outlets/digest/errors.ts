/**
 * The digest module's base error: a stable `code` and a literal `name` (bundling renames
 * classes); the message names the flag, option or setting at fault. Delivery errors (the bucket,
 * Slack, SNS) are subclasses carrying what was answered, never a body or an address.
 */
export class DigestError extends Error {
  override readonly name: string = "DigestError";
  readonly code: DigestErrorCode;

  constructor(code: DigestErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export type DigestErrorCode =
  /** A `--since` or `--until` that is no duration or date. */
  | "DIGEST_BAD_TIME"
  /** A period that is empty, reversed or longer than {@link MAX_PERIOD_DAYS}. */
  | "DIGEST_BAD_PERIOD"
  /** No channel named. */
  | "DIGEST_NO_CHANNELS"
  /** The bucket refused a PutObject or never answered ({@link DigestBucketError}). */
  | "DIGEST_BUCKET_WRITE"
  /** The Slack webhook answered 4xx: not retried ({@link SlackDeliveryError}). */
  | "SLACK_REJECTED"
  /** The Slack webhook answered 5xx or 429, or not at all, after every attempt. */
  | "SLACK_UNAVAILABLE"
  /** SNS refused the Publish (4xx: the topic, its policy or its key): {@link SnsDeliveryError}. */
  | "SNS_REJECTED"
  /** SNS throttled the Publish, answered 5xx, or not at all, after every attempt. */
  | "SNS_UNAVAILABLE";

/** The longest period a digest covers: its activity lists every day of it. */
export const MAX_PERIOD_DAYS = 366;
