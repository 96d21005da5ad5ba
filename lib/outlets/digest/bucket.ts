/**
 * Where the scheduled digest writes its files: a port, and S3's PutObject behind it over the AWS
 * SDK's S3 client (signing, retries, endpoint rules). The bucket's default encryption applies; an
 * object of the same key is overwritten, which is what makes a period's run idempotent.
 */
import {
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { DigestError } from "./errors.js";

export interface DigestBucket {
  put(key: string, body: string, contentType: string): Promise<void>;
}

export interface S3BucketOptions {
  bucket: string;
  /** The client to send with ({@link digestS3Client} makes one with bounded timeouts). */
  client: S3Client;
  /** The longest a put may take, its retries included (default 60 s). */
  deadlineMs?: number;
}

export interface DigestS3ClientOptions {
  /** Unset: the SDK's own (`AWS_REGION`). */
  region?: string;
  /** Unset: the SDK's own (`AWS_ENDPOINT_URL_S3`, else the bucket's AWS host). */
  endpoint?: string;
  /** Path-style addressing (`<endpoint>/<bucket>/<key>`): what local servers and emulators take. */
  forcePathStyle?: boolean;
  /** Unset: the SDK's default chain (a Lambda function's role, from its environment). */
  credentials?: S3ClientConfig["credentials"];
  /** An idle socket's limit per attempt (default 10 s). */
  requestTimeoutMs?: number;
  /** Attempts in all, for throttling, 5xx, network errors and timeouts (default 3). */
  maxAttempts?: number;
}

/** An S3 client for the digest's writes: a bounded wait per attempt, three attempts. */
export function digestS3Client(options: DigestS3ClientOptions = {}): S3Client {
  return new S3Client({
    ...(options.region !== undefined && { region: options.region }),
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    ...(options.credentials !== undefined && { credentials: options.credentials }),
    forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
    maxAttempts: options.maxAttempts ?? 3,
    requestHandler: {
      connectionTimeout: 5_000,
      requestTimeout: options.requestTimeoutMs ?? 10_000,
      // Else a request past its timeout only warns, and waits on.
      throwOnRequestTimeout: true,
    },
  });
}

/** PutObject answered other than 2xx; carries the status and S3's error code, not the body. */
export class DigestBucketError extends DigestError {
  override readonly name: string = "DigestBucketError";
  override readonly code = "DIGEST_BUCKET_WRITE";
  /** The last HTTP status, or undefined when no response came (network error, timeout). */
  readonly status: number | undefined;
  /** S3's error code (`AccessDenied`, `NoSuchBucket`, …), when it sent one. */
  readonly s3Code: string | undefined;
  constructor(key: string, status: number | undefined, s3Code: string | undefined) {
    super(
      "DIGEST_BUCKET_WRITE",
      `digestBucket: PutObject ${key} failed (${status === undefined ? "no response" : `HTTP ${status}`}${s3Code ? ` ${s3Code}` : ""})`,
    );
    this.status = status;
    this.s3Code = s3Code;
  }
}

/** An error code as S3 names them; anything else (an SDK placeholder, a body) is dropped. */
const S3_CODE = /^[A-Za-z][A-Za-z0-9.]{0,63}$/;

export function s3Bucket(options: S3BucketOptions): DigestBucket {
  const deadlineMs = options.deadlineMs ?? 60_000;
  return {
    async put(key, body, contentType) {
      try {
        await options.client.send(
          new PutObjectCommand({
            Bucket: options.bucket,
            Key: key,
            Body: body,
            ContentType: contentType,
          }),
          { abortSignal: AbortSignal.timeout(deadlineMs) },
        );
      } catch (error) {
        // What S3 answered, by status and code; the SDK's message may quote its body.
        if (error instanceof S3ServiceException) {
          const status = error.$metadata.httpStatusCode;
          throw new DigestBucketError(
            key,
            status,
            S3_CODE.test(error.name) ? error.name : undefined,
          );
        }
        // A network error, a timeout, or the deadline: no response.
        throw new DigestBucketError(key, undefined, undefined);
      }
    },
  };
}
