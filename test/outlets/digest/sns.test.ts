/**
 * The digest published to SNS: its subject (ASCII, no chat text) and message (SNS's 256 KB, cut
 * at a character), and the Publish over the SDK's client to a scripted server on 127.0.0.1 that
 * speaks SNS's query protocol.
 */
import type { IncomingHttpHeaders } from "node:http";
import {
  DigestError,
  digestMarkdown,
  digestSnsClient,
  SNS_LIMITS,
  SnsDeliveryError,
  snsDigestMessage,
  snsDigestSubject,
  snsTopic,
} from "convoseg/digest";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { type RawServer, silent, startRawServer } from "../../support/raw-servers.js";
import { digest, topic } from "./schedule-fixtures.js";

const TOPIC_ARN = "arn:aws:sns:eu-west-1:123456789012:convoseg-digests";
const CREDENTIALS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "test-secret-key" };

const published = (body: string) =>
  `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>${body}</MessageId></PublishResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></PublishResponse>`;
const refused = (code: string, type = "Sender") =>
  `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>${type}</Type><Code>${code}</Code><Message>secret detail of ${TOPIC_ARN}</Message></Error><RequestId>r-2</RequestId></ErrorResponse>`;

let server: RawServer | undefined;
let headers: IncomingHttpHeaders[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  headers = [];
});

/** A server answering each request with the next of `replies` (the last one repeats). */
async function snsServer(...replies: { status: number; body: string }[]) {
  let n = 0;
  server = await startRawServer((request, response) => {
    headers.push(request.headers);
    const reply = replies[Math.min(n++, replies.length - 1)];
    response.writeHead(reply.status, { "content-type": "text/xml" }).end(reply.body);
  });
  return server;
}

const topicAt = (url: string, options: { requestTimeoutMs?: number } = {}) =>
  snsTopic({
    topicArn: TOPIC_ARN,
    client: digestSnsClient({
      region: "eu-west-1",
      endpoint: url,
      credentials: CREDENTIALS,
      ...options,
    }),
  });

const form = (body: string) => Object.fromEntries(new URLSearchParams(body));

const HOSTILE = [
  "<!channel> ünïcode 🎉",
  "evil\r\nBcc: victim@example.com",
  "@here",
  "x".repeat(500),
  "\u202eright-to-left",
];

describe("snsDigestSubject", () => {
  it("names the period and the count of channels", () => {
    const d = digest({ channels: ["help", "dev", "ops"] });
    expect(snsDigestSubject(d)).toBe("convoseg digest 2026-11-23..2026-11-29, 3 channels");
    expect(snsDigestSubject(digest())).toBe("convoseg digest 2026-11-23..2026-11-29, 1 channel");
  });

  it("is printable ASCII within 100 characters, with no chat text, whatever the channels", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ unit: "grapheme" }), fc.constantFrom(...HOSTILE)), {
          minLength: 1,
          maxLength: 200,
        }),
        (channels) => {
          const subject = snsDigestSubject(digest({ channels }, channels[0]));
          expect(subject).toMatch(/^[\x20-\x7e]{1,100}$/);
          expect(subject).toMatch(
            /^convoseg digest \d{4}-\d{2}-\d{2}\.\.\d{4}-\d{2}-\d{2}, \d+ channels?$/,
          );
        },
      ),
    );
  });
});

describe("snsDigestMessage", () => {
  it("keeps a digest that fits whole", () => {
    const markdown = digestMarkdown(digest());
    expect(snsDigestMessage(markdown)).toBe(markdown);
  });

  it("cuts a huge digest to SNS's bytes at a character, with a note of where the rest is", () => {
    // Multi-byte text everywhere: a cut by bytes would land inside characters.
    const long = "ü€😀 grub ".repeat(400);
    const huge = digest({
      topics: Array.from({ length: 300 }, (_, i) => topic(`${long} ${i}`)),
    });
    const markdown = digestMarkdown(huge);
    expect(Buffer.byteLength(markdown)).toBeGreaterThan(SNS_LIMITS.messageBytes);
    const message = snsDigestMessage(markdown, { fullKey: "digests/2026-11-29/digest.md" });
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(SNS_LIMITS.messageBytes);
    expect(Buffer.byteLength(message)).toBeGreaterThan(SNS_LIMITS.messageBytes - 20_000);
    expect(message).not.toContain("\ufffd");
    expect(message).toMatch(/the full digest is at digests\/2026-11-29\/digest\.md\.\n$/);
    const kept = message.slice(0, message.indexOf("\n\n…truncated"));
    expect(markdown.startsWith(kept)).toBe(true);
  });

  it("cuts one endless line at a character boundary too", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", minLength: 1 }),
        fc.integer({ min: 200, max: 400 }),
        (s, max) => {
          const text = s.repeat(Math.ceil(1000 / s.length)).replace(/\n/g, " ");
          const message = snsDigestMessage(text, { maxBytes: max });
          expect(Buffer.byteLength(message)).toBeLessThanOrEqual(max);
          // A cut inside a character would leave a replacement character the text did not have.
          if (!text.includes("\ufffd")) expect(message).not.toContain("\ufffd");
          const kept = message.slice(0, message.indexOf("\n\n…truncated"));
          expect(text.startsWith(kept)).toBe(true);
        },
      ),
    );
  });
});

describe("snsTopic", () => {
  it("publishes the subject and message to the topic, signed, by the query protocol", async () => {
    const s = await snsServer({ status: 200, body: published("m-1") });
    const message = "# Digest: \\<\\!channel\\>\n";
    await topicAt(s.url).publish("convoseg digest 2026-11-23..2026-11-29, 1 channel", message);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0].method).toBe("POST");
    expect(form(s.requests[0].body)).toMatchObject({
      Action: "Publish",
      TopicArn: TOPIC_ARN,
      Subject: "convoseg digest 2026-11-23..2026-11-29, 1 channel",
      Message: message,
    });
    expect(headers[0]["content-type"]).toMatch(/^application\/x-www-form-urlencoded/);
    expect(headers[0].authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/sns\/aws4_request, /,
    );
  });

  it("sends a bounded huge digest whole, its bytes intact", async () => {
    const s = await snsServer({ status: 200, body: published("m-2") });
    const markdown = digestMarkdown(
      digest({ topics: Array.from({ length: 400 }, (_, i) => topic(`${"😀 ".repeat(700)}${i}`)) }),
    );
    const message = snsDigestMessage(markdown);
    await topicAt(s.url).publish("s", message);
    const sent = form(s.requests[0].body).Message;
    expect(sent).toBe(message);
    expect(Buffer.byteLength(sent)).toBeLessThanOrEqual(SNS_LIMITS.messageBytes);
  });

  it.each([
    [403, "AuthorizationError", "AuthorizationErrorException"],
    [404, "NotFound", "NotFoundException"],
    [400, "KMSAccessDenied", "KMSAccessDeniedException"],
  ])(
    "maps a %i %s to SNS_REJECTED, not retried, without the body",
    async (status, code, sdkName) => {
      const s = await snsServer({ status, body: refused(code) });
      const error = await topicAt(s.url)
        .publish("s", "m")
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SnsDeliveryError);
      expect(error).toBeInstanceOf(DigestError);
      expect(error).toMatchObject({
        name: "SnsDeliveryError",
        code: "SNS_REJECTED",
        status,
        awsCode: sdkName,
      });
      expect((error as Error).message).toContain("digestSnsTopic");
      expect((error as Error).message).not.toContain("secret detail");
      expect((error as Error).message).not.toContain(TOPIC_ARN);
      expect(s.requests).toHaveLength(1);
    },
  );

  it("retries a 500 and throttling, then maps them to SNS_UNAVAILABLE", async () => {
    const s = await snsServer({ status: 500, body: refused("InternalError", "Receiver") });
    await expect(topicAt(s.url).publish("s", "m")).rejects.toMatchObject({
      code: "SNS_UNAVAILABLE",
      status: 500,
      // The SDK names the errors it knows by their exception class.
      awsCode: "InternalErrorException",
    });
    expect(s.requests).toHaveLength(3);
    await server?.close();
    const t = await snsServer({ status: 429, body: refused("Throttled") });
    await expect(topicAt(t.url).publish("s", "m")).rejects.toMatchObject({
      code: "SNS_UNAVAILABLE",
      status: 429,
      awsCode: "ThrottledException",
    });
    expect(t.requests).toHaveLength(3);
  });

  it("succeeds once a retried 503 gives way to a 200", async () => {
    const s = await snsServer(
      { status: 503, body: refused("ServiceUnavailable", "Receiver") },
      { status: 200, body: published("m-3") },
    );
    await topicAt(s.url).publish("s", "m");
    expect(s.requests).toHaveLength(2);
  });

  it("maps a timeout and a refused connection to SNS_UNAVAILABLE with no status", async () => {
    server = await startRawServer(silent());
    await expect(
      topicAt(server.url, { requestTimeoutMs: 200 }).publish("s", "m"),
    ).rejects.toMatchObject({ code: "SNS_UNAVAILABLE", status: undefined, awsCode: undefined });
    const url = server.url;
    await server.close();
    server = undefined;
    await expect(topicAt(url).publish("s", "m")).rejects.toMatchObject({
      code: "SNS_UNAVAILABLE",
      status: undefined,
    });
  });
});
