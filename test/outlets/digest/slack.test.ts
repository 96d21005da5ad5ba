/** The digest as a Slack webhook message (escaping, limits) and its delivery to a local server. */

import {
  DigestError,
  postSlackWebhook,
  SlackDeliveryError,
  slackDigestPayload,
} from "convoseg/digest";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { SLACK_LIMITS, type SlackPayload, slackEscape } from "../../../lib/outlets/digest/slack.js";
import { type RawServer, silent, startRawServer } from "../../support/raw-servers.js";
import { digest, question, topic } from "./schedule-fixtures.js";

/** Every string Slack would parse in `payload`. */
const texts = (payload: SlackPayload) => [
  payload.text,
  ...(payload.blocks ?? []).flatMap((b) => [
    ...(b.text ? [b.text.text] : []),
    ...(b.elements ?? []).map((e) => e.text),
  ]),
];

const hostile = fc.oneof(
  fc.string(),
  fc.constantFrom(
    "<!channel>",
    "<!here|here>",
    "<@U123>",
    "<#C1|general>",
    "<https://evil.example|click>",
    "@here",
    "@channel please",
    "@EVERYONE",
    "&lt;!channel&gt;",
    "<!subteam^S1>",
  ),
  fc
    .array(fc.constantFrom("<", ">", "!", "@", "&", "here", "channel", "#", "|", " ", ";"), {
      maxLength: 40,
    })
    .map((parts) => parts.join("")),
);

describe("slackEscape", () => {
  it("turns the control characters into entities and breaks the broadcast words", () => {
    expect(slackEscape("a & <b> @here")).toBe("a &amp; &lt;b&gt; @\u2060here");
    expect(slackEscape("@Channel @everyone")).toBe("@\u2060Channel @\u2060everyone");
    expect(slackEscape("mail me@herewego.example")).toContain("@\u2060here");
  });
});

describe("slackDigestPayload", () => {
  it("lists new and recurring topics, unanswered and answered questions, and activity", () => {
    const payload = slackDigestPayload(digest({}, "grub boot loader"), {
      reportUrl: "https://reports.example/d/2026-11-30/digest.html",
    });
    const all = texts(payload).join("\n");
    expect(all).toContain("*New topics*\n• grub boot loader (2 conversations, c1)");
    expect(all).toContain("*Recurring topics*\n• grub boot loader again");
    expect(all).toContain("*Unanswered (1), oldest first*");
    expect(all).toContain(
      "*Unclear (1): whether an answer came is not clear*\n• grub boot loader maybe",
    );
    expect(all).toContain("*Answered (1)*");
    expect(all).toContain("→ grub boot loader");
    expect(all).toContain("40 messages, 5 conversations, 7 active people");
    expect(all).toContain("2026-11-23 to 2026-11-29");
    expect(all).toContain("<https://reports.example/d/2026-11-30/digest.html|Full report>");
  });

  it("links no report whose address is not http(s)", () => {
    const payload = slackDigestPayload(digest(), { reportUrl: "javascript:alert(1)" });
    expect(texts(payload).join("\n")).not.toContain("Full report");
  });

  it("never lets chat text form a mention, a broadcast or a link, whatever it is", () => {
    fc.assert(
      fc.property(hostile, hostile, (text, channel) => {
        const d = digest({ channels: [channel] }, text);
        d.topics = d.topics.map((t) => ({ ...t, channel }));
        for (const part of texts(slackDigestPayload(d))) {
          expect(part).not.toContain("<!");
          expect(part).not.toContain("<@");
          expect(part).not.toContain("<#");
          expect(part.replace(/<https:\/\/[^|>]*\|Full report>/, "")).not.toMatch(/[<>]/);
          expect(part).not.toMatch(/@(here|channel|everyone)/i);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("shows chat text literally: no mrkdwn, no link, no bidi or control character", () => {
    const text =
      "*urgent* _now_ ~gone~ `rm -rf` see https://evil.example/x or docs.rs \u202Eevil\u0007!";
    const payload = slackDigestPayload(digest({}, text));
    const lines = texts(payload)
      .flatMap((t) => t.split("\n"))
      .filter((line) => line.includes("urgent"));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      // The digest's own markup (`*Unanswered*`) is not in an entry's line; chat's is gone.
      expect(line).not.toMatch(/[*_~`\u202e]/);
      expect(line).not.toContain("\u0007");
      expect(line).not.toContain("https://");
      expect(line).not.toContain("docs.rs");
      expect(line).toContain(
        "\u2217urgent\u2217 \u02cdnow\u02cd \u223cgone\u223c \u02cbrm -rf\u02cb see https:\u2060//evil.\u2060example/x or docs.\u2060rs evil !",
      );
    }
  });

  it("stays within Slack's limits however much the digest holds", () => {
    const long = "x&<".repeat(2000);
    const many = digest({
      channels: Array.from({ length: 100 }, (_, i) => `channel-${i}-${"y".repeat(50)}`),
      topics: Array.from({ length: 500 }, (_, i) => topic(`${long}${i}`)),
      unanswered: Array.from({ length: 500 }, (_, i) => question(`${long}${i}`)),
      answered: [],
    });
    const payload = slackDigestPayload(many);
    expect(payload.text.length).toBeLessThanOrEqual(SLACK_LIMITS.textChars);
    expect(payload.blocks?.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    for (const block of payload.blocks ?? []) {
      const text = block.text?.text ?? "";
      const max = block.type === "header" ? SLACK_LIMITS.headerChars : SLACK_LIMITS.sectionChars;
      expect(text.length).toBeLessThanOrEqual(max);
      // A clipped entry never ends in half an entity.
      expect(text).not.toMatch(/&(a|am|amp|l|lt|g|gt)…/);
    }
    const listed = payload.blocks?.find((b) => b.text?.text.startsWith("*New topics*"))?.text?.text;
    const bullets = listed?.split("\n• ").length ?? 0;
    const more = Number(listed?.match(/…and (\d+) more$/)?.[1]);
    expect(bullets - 1 + more).toBe(500);
  });
});

describe("postSlackWebhook", () => {
  let server: RawServer | undefined;
  const sleeps: number[] = [];
  afterEach(async () => {
    await server?.close();
    server = undefined;
    sleeps.length = 0;
  });

  /** A server answering the `n`th request with `statuses[n]` (the last one after that). */
  async function scripted(statuses: (number | [number, Record<string, string>])[]) {
    server = await startRawServer((_request, response) => {
      const step = statuses[Math.min(server?.requests.length ?? 1, statuses.length) - 1];
      const [status, headers] = Array.isArray(step) ? step : [step, {}];
      response.writeHead(status, { "content-type": "text/plain", ...headers }).end("ok");
    });
    return server;
  }

  const pacing = {
    baseDelayMs: 100,
    maxDelayMs: 1000,
    random: () => 1,
    sleep: async (ms: number) => {
      sleeps.push(ms);
    },
  };

  it("posts the payload as JSON and returns on a 2xx", async () => {
    const s = await scripted([200]);
    const payload = slackDigestPayload(digest());
    await expect(postSlackWebhook(`${s.url}/services/T/B/x`, payload)).resolves.toEqual({
      attempts: 1,
    });
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0].method).toBe("POST");
    expect(s.requests[0].path).toBe("/services/T/B/x");
    expect(JSON.parse(s.requests[0].body)).toEqual(payload);
  });

  it("retries a 5xx a bounded number of times, then fails without the URL", async () => {
    const s = await scripted([503]);
    const url = `${s.url}/services/secret-token`;
    const error = await postSlackWebhook(url, { text: "t" }, { backoff: pacing }).catch((e) => e);
    expect(error).toBeInstanceOf(SlackDeliveryError);
    expect(error).toBeInstanceOf(DigestError);
    expect(error).toMatchObject({ code: "SLACK_UNAVAILABLE", status: 503, attempts: 3 });
    expect(String(error.message)).not.toContain("secret-token");
    expect(s.requests).toHaveLength(3);
    expect(sleeps).toEqual([100, 200]);
  });

  it("recovers when a 5xx is followed by a 2xx", async () => {
    const s = await scripted([500, 200]);
    await expect(postSlackWebhook(s.url, { text: "t" }, { backoff: pacing })).resolves.toEqual({
      attempts: 2,
    });
  });

  it("does not retry a 4xx", async () => {
    for (const status of [400, 403, 404, 410]) {
      const s = await scripted([status]);
      const error = await postSlackWebhook(s.url, { text: "t" }, { backoff: pacing }).catch(
        (e) => e,
      );
      expect(error).toMatchObject({ code: "SLACK_REJECTED", status, attempts: 1 });
      expect(s.requests).toHaveLength(1);
      await s.close();
      server = undefined;
    }
  });

  it("waits as Retry-After says on a 429, and gives up when it asks too long", async () => {
    const s = await scripted([[429, { "retry-after": "2" }], 200]);
    await expect(postSlackWebhook(s.url, { text: "t" }, { backoff: pacing })).resolves.toEqual({
      attempts: 2,
    });
    expect(sleeps).toEqual([2000]);
    await s.close();
    const long = await scripted([[429, { "retry-after": "3600" }]]);
    const error = await postSlackWebhook(long.url, { text: "t" }, { backoff: pacing }).catch(
      (e) => e,
    );
    expect(error).toMatchObject({ code: "SLACK_UNAVAILABLE", status: 429, attempts: 1 });
    expect(long.requests).toHaveLength(1);
  });

  it("times out a server that never answers, a bounded number of times", async () => {
    server = await startRawServer(silent());
    const started = Date.now();
    const error = await postSlackWebhook(
      server.url,
      { text: "t" },
      { backoff: pacing, timeoutMs: 200, maxAttempts: 2 },
    ).catch((e) => e);
    expect(error).toMatchObject({ code: "SLACK_UNAVAILABLE", status: undefined, attempts: 2 });
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
