/**
 * S3 PutObject over the SDK's client to a scripted server on 127.0.0.1, path-style, with static
 * test credentials: the request S3 takes (path, headers, body), and how its answers map.
 */
import type { IncomingHttpHeaders } from "node:http";
import { DigestBucketError, DigestError, digestS3Client, s3Bucket } from "convoseg/digest";
import { afterEach, describe, expect, it } from "vitest";
import { type RawServer, silent, startRawServer } from "../../support/raw-servers.js";

const CREDENTIALS = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  sessionToken: "session-token",
};

let server: RawServer | undefined;
let headers: IncomingHttpHeaders[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  headers = [];
});

/** A server answering each request with the next of `replies` (the last one repeats). */
async function s3Server(...replies: { status: number; body?: string }[]) {
  let n = 0;
  server = await startRawServer((request, response) => {
    headers.push(request.headers);
    const reply = replies[Math.min(n++, replies.length - 1)];
    response.writeHead(reply.status, { "content-type": "application/xml" }).end(reply.body ?? "");
  });
  return server;
}

function bucketAt(url: string, options: { requestTimeoutMs?: number } = {}) {
  return s3Bucket({
    bucket: "digests-bucket",
    client: digestS3Client({
      region: "eu-west-1",
      endpoint: url,
      credentials: CREDENTIALS,
      ...options,
    }),
  });
}

/** The path without the query the SDK adds (`?x-id=PutObject`). */
const pathOf = (path: string) => path.split("?")[0];

describe("s3Bucket", () => {
  it("PUTs the object path-style, its key encoded, signed with the credentials", async () => {
    const s = await s3Server({ status: 200 });
    const key = "digests/2026-11-29/digest (1) ü.md";
    await bucketAt(s.url).put(key, "# Digest ünïcode", "text/markdown; charset=utf-8");
    expect(s.requests).toHaveLength(1);
    const [request] = s.requests;
    expect(request.method).toBe("PUT");
    expect(pathOf(request.path)).toBe(
      "/digests-bucket/digests/2026-11-29/digest%20%281%29%20%C3%BC.md",
    );
    expect(request.body).toBe("# Digest ünïcode");
    const sent = headers[0];
    expect(sent["content-type"]).toBe("text/markdown; charset=utf-8");
    expect(sent.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );
    expect(sent["x-amz-security-token"]).toBe("session-token");
    expect(sent["x-amz-date"]).toMatch(/^\d{8}T\d{6}Z$/);
  });

  it("fails with the status and S3's code, never the body or the credentials", async () => {
    const s = await s3Server({
      status: 403,
      body: "<Error><Code>AccessDenied</Code><Message>secret detail</Message></Error>",
    });
    const error = await bucketAt(s.url)
      .put("digests/k.md", "x", "text/plain")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DigestBucketError);
    expect(error).toBeInstanceOf(DigestError);
    expect(error).toMatchObject({
      name: "DigestBucketError",
      code: "DIGEST_BUCKET_WRITE",
      status: 403,
      s3Code: "AccessDenied",
    });
    const message = (error as Error).message;
    expect(message).toContain("AccessDenied");
    expect(message).not.toContain("secret detail");
    expect(message).not.toContain(CREDENTIALS.secretAccessKey);
    // A refusal is not retried.
    expect(s.requests).toHaveLength(1);
  });

  it("retries a 500, then fails with its status", async () => {
    const s = await s3Server({
      status: 500,
      body: "<Error><Code>InternalError</Code><Message>x</Message></Error>",
    });
    const error = await bucketAt(s.url)
      .put("digests/k.json", "{}", "application/json")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "DIGEST_BUCKET_WRITE",
      status: 500,
      s3Code: "InternalError",
    });
    expect(s.requests).toHaveLength(3);
  });

  it("succeeds once a retried 503 gives way to a 200", async () => {
    const s = await s3Server({ status: 503 }, { status: 200 });
    await bucketAt(s.url).put("digests/k.md", "x", "text/plain");
    expect(s.requests).toHaveLength(2);
  });

  it("fails with no status when nothing answers in time, or nothing listens", async () => {
    server = await startRawServer(silent());
    const error = await bucketAt(server.url, { requestTimeoutMs: 200 })
      .put("digests/k.md", "x", "text/plain")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DigestBucketError);
    expect(error).toMatchObject({ status: undefined, s3Code: undefined });
    // A timeout is retried as a network error is.
    expect(server.requests).toHaveLength(3);
    const url = server.url;
    await server.close();
    server = undefined;
    const refused = await bucketAt(url)
      .put("digests/k.md", "x", "text/plain")
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "DIGEST_BUCKET_WRITE", status: undefined });
  });
});
