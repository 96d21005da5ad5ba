/**
 * A digest delivered to an SNS topic (email, SQS, Lambda, chat integrations subscribe to it): a
 * port, and SNS's Publish behind it over the AWS SDK's client. The message is the digest's
 * Markdown (whose chat text is escaped), cut to SNS's 256 KB at a character boundary with a note
 * of where the rest is; the subject is ASCII, at most 100 characters, and carries no chat text
 * (the period and a count only): email subscribers see it as the mail's subject.
 */
import {
  PublishCommand,
  SNSClient,
  type SNSClientConfig,
  SNSServiceException,
} from "@aws-sdk/client-sns";
import { DigestError } from "./errors.js";
import type { Digest } from "./types.js";

export interface DigestSnsTopic {
  publish(subject: string, message: string): Promise<void>;
}

export const SNS_LIMITS = {
  /** A message's limit, in UTF-8 bytes. */
  messageBytes: 262_144,
  /** A subject's: ASCII, no line breaks. */
  subjectChars: 100,
} as const;

const day = (ms: number) => {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? "unknown" : date.toISOString().slice(0, 10);
};

/** `convoseg digest 2026-11-23..2026-11-29, 3 channels`: dates and a count, never chat text. */
export function snsDigestSubject(digest: Pick<Digest, "since" | "until" | "channels">): string {
  const n = digest.channels.length;
  const subject = `convoseg digest ${day(digest.since)}..${day(digest.until - 1)}, ${n} channel${n === 1 ? "" : "s"}`;
  // Printable ASCII by construction; kept so whatever changes above.
  return subject.replace(/[^\x20-\x7e]/g, "").slice(0, SNS_LIMITS.subjectChars);
}

/**
 * `markdown` within `maxBytes` UTF-8 bytes: whole when it fits, else cut at the last line break
 * (or character) that leaves room for a note naming where the full digest is (`fullKey`).
 */
export function snsDigestMessage(
  markdown: string,
  options: { fullKey?: string; maxBytes?: number } = {},
): string {
  const maxBytes = options.maxBytes ?? SNS_LIMITS.messageBytes;
  const bytes = Buffer.from(markdown, "utf8");
  if (bytes.length <= maxBytes) return markdown;
  const where = options.fullKey === undefined ? "in the bucket" : `at ${options.fullKey}`;
  const note = `\n\n…truncated to fit an SNS message: the full digest is ${where}.\n`;
  let cut = Math.max(0, maxBytes - Buffer.byteLength(note, "utf8"));
  // Back to the start of a character: never half of a multi-byte one.
  while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut--;
  let kept = bytes.subarray(0, cut).toString("utf8");
  const line = kept.lastIndexOf("\n");
  if (line > 0) kept = kept.slice(0, line);
  return `${kept}${note}`;
}

/** A Publish SNS refused or that never got through; carries the status and AWS's error name. */
export class SnsDeliveryError extends DigestError {
  override readonly name: string = "SnsDeliveryError";
  /** `SNS_REJECTED` (4xx: the topic, its policy or its key), `SNS_UNAVAILABLE` (throttling, 5xx, network). */
  override readonly code: "SNS_REJECTED" | "SNS_UNAVAILABLE";
  /** The last HTTP status, or undefined when no response came (network error, timeout). */
  readonly status: number | undefined;
  /** The SDK's name for AWS's error (`AuthorizationErrorException`, `NotFoundException`, …). */
  readonly awsCode: string | undefined;

  constructor(
    code: SnsDeliveryError["code"],
    status: number | undefined,
    awsCode: string | undefined,
  ) {
    super(
      code,
      `digestSnsTopic: Publish failed (${status === undefined ? "no response" : `HTTP ${status}`}${awsCode ? ` ${awsCode}` : ""})`,
    );
    this.code = code;
    this.status = status;
    this.awsCode = awsCode;
  }
}

export interface DigestSnsClientOptions {
  /** Unset: the SDK's own (`AWS_REGION`). */
  region?: string;
  /** Unset: the SDK's own (`AWS_ENDPOINT_URL_SNS`, else SNS's regional endpoint). */
  endpoint?: string;
  /** Unset: the SDK's default chain (a Lambda function's role, from its environment). */
  credentials?: SNSClientConfig["credentials"];
  /** A request's limit per attempt (default 10 s). */
  requestTimeoutMs?: number;
  /** Attempts in all, for throttling, 5xx, network errors and timeouts (default 3). */
  maxAttempts?: number;
}

/** An SNS client for the digest: a bounded wait per attempt, three attempts. */
export function digestSnsClient(options: DigestSnsClientOptions = {}): SNSClient {
  return new SNSClient({
    ...(options.region !== undefined && { region: options.region }),
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    ...(options.credentials !== undefined && { credentials: options.credentials }),
    maxAttempts: options.maxAttempts ?? 3,
    requestHandler: {
      connectionTimeout: 5_000,
      requestTimeout: options.requestTimeoutMs ?? 10_000,
      // Else a request past its timeout only warns, and waits on.
      throwOnRequestTimeout: true,
    },
  });
}

export interface SnsTopicOptions {
  topicArn: string;
  client: SNSClient;
  /** The longest a publish may take, its retries included (default 60 s). */
  deadlineMs?: number;
}

const AWS_CODE = /^[A-Za-z][A-Za-z0-9.]{0,63}$/;

export function snsTopic(options: SnsTopicOptions): DigestSnsTopic {
  const deadlineMs = options.deadlineMs ?? 60_000;
  return {
    async publish(subject, message) {
      try {
        await options.client.send(
          new PublishCommand({ TopicArn: options.topicArn, Subject: subject, Message: message }),
          { abortSignal: AbortSignal.timeout(deadlineMs) },
        );
      } catch (error) {
        if (error instanceof SNSServiceException) {
          const status = error.$metadata.httpStatusCode;
          const awsCode = AWS_CODE.test(error.name) ? error.name : undefined;
          const unavailable =
            status === undefined || status >= 500 || status === 429 || /thrott/i.test(error.name);
          throw new SnsDeliveryError(
            unavailable ? "SNS_UNAVAILABLE" : "SNS_REJECTED",
            status,
            awsCode,
          );
        }
        // A network error, a timeout, or the deadline: no response. Its message is not kept.
        throw new SnsDeliveryError("SNS_UNAVAILABLE", undefined, undefined);
      }
    },
  };
}
