/**
 * S3 PutObject to a server on 127.0.0.1: the request S3 takes (path, headers, body), signed as
 * the AWS SDK's own signer (@smithy/signature-v4, what every SDK client uses) signs it.
 */
import { createHash, createHmac } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";
import { afterEach, describe, expect, it } from "vitest";
import { DigestBucketError, DigestError, s3Bucket, s3EncodeKey } from "../../lib/digest/index.js";
import { type RawServer, startRawServer } from "../support/raw-servers.js";

const CREDENTIALS = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  sessionToken: "session-token",
};
const NOW = Date.UTC(2026, 10, 30, 8, 1, 2);

/** The Hash the SDK's signer takes, over node:crypto. */
class NodeHash {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView) {
    this.hash.update(bytes(data));
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === "string") return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

let server: RawServer | undefined;
let headers: Record<string, string | string[] | undefined>[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  headers = [];
});

async function s3Server(status: number, body = "") {
  server = await startRawServer((request, response) => {
    headers.push(request.headers);
    response.writeHead(status, { "content-type": "application/xml" }).end(body);
  });
  return server;
}

describe("s3Bucket", () => {
  it("PUTs the object path-style, signed as the SDK signs it", async () => {
    const s = await s3Server(200);
    const bucket = s3Bucket({
      bucket: "digests-bucket",
      region: "eu-west-1",
      credentials: () => CREDENTIALS,
      endpoint: s.url,
      now: () => NOW,
    });
    const key = "digests/2026-11-29/digest (1).md";
    await bucket.put(key, "# Digest ünïcode", "text/markdown; charset=utf-8");
    expect(s.requests).toEqual([
      {
        method: "PUT",
        path: "/digests-bucket/digests/2026-11-29/digest%20%281%29.md",
        body: "# Digest ünïcode",
      },
    ]);
    const sent = headers[0];
    const host = new URL(s.url).host;
    const signer = new SignatureV4({
      credentials: CREDENTIALS,
      region: "eu-west-1",
      service: "s3",
      sha256: NodeHash,
      uriEscapePath: false,
      applyChecksum: true,
    });
    const expected = await signer.sign(
      {
        method: "PUT",
        protocol: "http:",
        hostname: host.split(":")[0],
        port: Number(host.split(":")[1]),
        path: `/digests-bucket/${s3EncodeKey(key)}`,
        query: {},
        headers: {
          host,
          "content-type": "text/markdown; charset=utf-8",
          "x-amz-content-sha256": createHash("sha256").update("# Digest ünïcode").digest("hex"),
        },
        body: "# Digest ünïcode",
      },
      { signingDate: new Date(NOW) },
    );
    expect(sent.authorization).toBe(expected.headers.authorization);
    expect(sent["x-amz-security-token"]).toBe("session-token");
    expect(sent["x-amz-date"]).toBe("20261130T080102Z");
  });

  it("addresses the bucket's own AWS host without an endpoint", async () => {
    const urls: string[] = [];
    const bucket = s3Bucket({
      bucket: "b",
      region: "us-east-2",
      credentials: () => CREDENTIALS,
      fetch: async (url) => {
        urls.push(String(url));
        return new Response("", { status: 200 });
      },
    });
    await bucket.put("digests/x/digest.json", "{}", "application/json");
    expect(urls).toEqual(["https://b.s3.us-east-2.amazonaws.com/digests/x/digest.json"]);
  });

  it("fails with the status and S3's code, never the body or the credentials", async () => {
    const s = await s3Server(
      403,
      "<Error><Code>AccessDenied</Code><Message>secret detail</Message></Error>",
    );
    const bucket = s3Bucket({
      bucket: "b",
      region: "eu-west-1",
      credentials: () => CREDENTIALS,
      endpoint: s.url,
    });
    const error = await bucket.put("digests/k.md", "x", "text/plain").catch((e) => e);
    expect(error).toBeInstanceOf(DigestBucketError);
    expect(error).toBeInstanceOf(DigestError);
    expect(error).toMatchObject({ code: "DIGEST_BUCKET_WRITE", status: 403 });
    expect(error.message).toContain("AccessDenied");
    expect(error.message).not.toContain("secret detail");
    expect(error.message).not.toContain(CREDENTIALS.secretAccessKey);
  });
});
