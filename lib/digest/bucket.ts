/**
 * Where the scheduled digest writes its files: a port, and S3's PutObject behind it, signed with
 * Signature Version 4 over node:crypto (the project has no S3 client; one PUT needs none). The
 * bucket's default encryption applies; an object of the same key is overwritten, which is what
 * makes a period's run idempotent.
 */
import { createHash, createHmac } from "node:crypto";
import { DigestError } from "./errors.js";

export interface DigestBucket {
  put(key: string, body: string, contentType: string): Promise<void>;
}

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface S3BucketOptions {
  bucket: string;
  region: string;
  credentials: () => Promise<AwsCredentials> | AwsCredentials;
  /** Path-style on this origin (a local server, an emulator); else the bucket's AWS host. */
  endpoint?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
}

/** PutObject answered other than 2xx; carries the status and S3's error code, not the body. */
export class DigestBucketError extends DigestError {
  override readonly name: string = "DigestBucketError";
  override readonly code = "DIGEST_BUCKET_WRITE";
  readonly status: number | undefined;
  constructor(key: string, status: number | undefined, s3Code: string | undefined) {
    super(
      "DIGEST_BUCKET_WRITE",
      `digestBucket: PutObject ${key} failed (${status === undefined ? "no response" : `HTTP ${status}`}${s3Code ? ` ${s3Code}` : ""})`,
    );
    this.status = status;
  }
}

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) =>
  createHmac("sha256", key).update(data).digest();

/** RFC 3986 encoding as S3 signs paths: every byte but the unreserved ones and `/`. */
export function s3EncodeKey(key: string): string {
  return key
    .split("/")
    .map((part) =>
      encodeURIComponent(part).replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      ),
    )
    .join("/");
}

export function s3Bucket(options: S3BucketOptions): DigestBucket {
  const post = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  return {
    async put(key, body, contentType) {
      const credentials = await options.credentials();
      const base =
        options.endpoint === undefined
          ? new URL(`https://${options.bucket}.s3.${options.region}.amazonaws.com/`)
          : new URL(`${options.endpoint.replace(/\/$/, "")}/${s3EncodeKey(options.bucket)}/`);
      const path = `${base.pathname}${s3EncodeKey(key)}`;
      const amzDate = new Date(now()).toISOString().replace(/[-:]|\.\d{3}/g, "");
      const day = amzDate.slice(0, 8);
      const payload = Buffer.from(body, "utf8");
      const headers: Record<string, string> = {
        "content-type": contentType,
        host: base.host,
        "x-amz-content-sha256": sha256(payload),
        "x-amz-date": amzDate,
        ...(credentials.sessionToken && { "x-amz-security-token": credentials.sessionToken }),
      };
      const names = Object.keys(headers).sort();
      const signedHeaders = names.join(";");
      const canonical = [
        "PUT",
        path,
        "",
        ...names.map((n) => `${n}:${headers[n].trim()}`),
        "",
        signedHeaders,
        headers["x-amz-content-sha256"],
      ].join("\n");
      const scope = `${day}/${options.region}/s3/aws4_request`;
      const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonical)].join("\n");
      const signingKey = ["s3", "aws4_request"].reduce(
        (k, part) => hmac(k, part),
        hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), options.region),
      );
      const signature = createHmac("sha256", signingKey).update(toSign).digest("hex");
      const { host: _host, ...sent } = headers;
      let response: Response;
      try {
        response = await post(new URL(path, base), {
          method: "PUT",
          headers: {
            ...sent,
            authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
          },
          body: payload,
          redirect: "error",
          signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
        });
      } catch {
        throw new DigestBucketError(key, undefined, undefined);
      }
      if (response.ok) {
        await response.body?.cancel();
        return;
      }
      const text = await response.text().catch(() => "");
      const s3Code = /<Code>([A-Za-z]{1,64})<\/Code>/.exec(text)?.[1];
      throw new DigestBucketError(key, response.status, s3Code);
    },
  };
}
