/** The scheduled digest's run: its period and keys, the bucket first, Slack's failure contained. */

import {
  type Digest,
  type DigestBucket,
  digestSnsClient,
  platformGroups,
  runScheduledDigest,
  runScheduledDigests,
  type ScheduledDigestDeps,
  snsTopic,
} from "convoseg/digest";
import { afterEach, describe, expect, it } from "vitest";
import { type RawServer, startRawServer } from "../../support/raw-servers.js";
import { digest } from "./schedule-fixtures.js";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 30, 8, 0, 5);
const TODAY = Date.UTC(2026, 10, 30);

function memoryBucket() {
  const objects = new Map<string, { body: string; type: string }>();
  const bucket: DigestBucket = {
    async put(key, body, type) {
      objects.set(key, { body, type });
    },
  };
  return { objects, bucket };
}

function deps(bucket: DigestBucket, overrides: Partial<ScheduledDigestDeps> = {}) {
  const builds: { channels: string[]; since: number; until: number }[] = [];
  const value: ScheduledDigestDeps = {
    channels: async () => ["help", "dev"],
    build: async ({ channels, since, until }) => {
      builds.push({ channels, since, until });
      return digest({ channels, since, until }, "<!channel> is grub broken?");
    },
    render: {
      markdown: (d: Digest) => `# ${d.channels.join(",")}`,
      html: (d: Digest) => `<p>${d.topics.length}</p>`,
      json: (d: Digest) => JSON.stringify(d),
    },
    bucket,
    ...overrides,
  };
  return { value, builds };
}

let slack: RawServer | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

describe("digest groups", () => {
  it("groups a deployment's channels by platform, private chats left out", () => {
    expect(
      platformGroups(["C0A", "D0DM", "-1001", "42", "81384788765712384", "help", "C0B"]),
    ).toEqual([
      { name: "discord", channels: ["81384788765712384"] },
      { name: "other", channels: ["help"] },
      { name: "slack", channels: ["C0A", "C0B"] },
      { name: "telegram", channels: ["-1001"] },
    ]);
    // One community, one digest where it always was.
    expect(platformGroups(["help", "dev", "D0DM"])).toEqual([
      { name: "", channels: ["help", "dev"] },
    ]);
    expect(platformGroups(["D0DM"])).toEqual([]);
  });

  it("writes each group's digest under its own folder, and one of nothing without a group", async () => {
    const { objects, bucket } = memoryBucket();
    const { value, builds } = deps(bucket);
    const { channels: _, ...rest } = value;
    const summaries = await runScheduledDigests(
      {
        ...rest,
        groups: async () => [
          { name: "slack", channels: ["C0A"] },
          { name: "other", channels: ["help"] },
        ],
      },
      { now: NOW },
    );
    expect(builds.map((b) => b.channels)).toEqual([["C0A"], ["help"]]);
    expect(summaries.map((s) => [s.group, s.keys[0]])).toEqual([
      ["slack", "digests/2026-11-29/slack/digest.json"],
      ["other", "digests/2026-11-29/other/digest.json"],
    ]);
    expect(objects.get("digests/2026-11-29/slack/digest.md")?.body).toBe("# C0A");
    const empty = await runScheduledDigests({ ...rest, groups: async () => [] }, { now: NOW });
    expect(empty.map((s) => [s.group, s.channels, s.keys[0]])).toEqual([
      ["", 0, "digests/2026-11-29/digest.json"],
    ]);
  });
});

describe("runScheduledDigest", () => {
  it("digests the 7 days before today into digests/<last day>/, the same keys on a rerun", async () => {
    const { objects, bucket } = memoryBucket();
    const { value, builds } = deps(bucket);
    const first = await runScheduledDigest(value, { now: NOW });
    const again = await runScheduledDigest(value, { now: NOW + 3_600_000 });
    expect(builds).toEqual([
      { channels: ["help", "dev"], since: TODAY - 7 * DAY, until: TODAY },
      { channels: ["help", "dev"], since: TODAY - 7 * DAY, until: TODAY },
    ]);
    expect([...objects.keys()].sort()).toEqual([
      "digests/2026-11-29/digest.html",
      "digests/2026-11-29/digest.json",
      "digests/2026-11-29/digest.md",
    ]);
    expect(again.keys).toEqual(first.keys);
    expect(objects.get("digests/2026-11-29/digest.md")).toEqual({
      body: "# help,dev",
      type: "text/markdown; charset=utf-8",
    });
    expect(JSON.parse(objects.get("digests/2026-11-29/digest.json")?.body ?? "").until).toBe(TODAY);
    expect(first).toMatchObject({ channels: 2, topics: 2, unanswered: 1, answered: 1 });
    expect(first.slack).toEqual({ state: "off" });
    expect(first.sns).toEqual({ state: "off" });
  });

  it("takes another period length", async () => {
    const { bucket } = memoryBucket();
    const { value, builds } = deps(bucket);
    await runScheduledDigest(value, { now: NOW, periodMs: DAY });
    expect(builds[0]).toMatchObject({ since: TODAY - DAY, until: TODAY });
  });

  it("fails the run when the bucket refuses a write, before anything is posted", async () => {
    let posts = 0;
    const { value } = deps(
      {
        put: async () => {
          throw new Error("denied");
        },
      },
      {
        slackWebhook: async () => {
          posts++;
          return "http://127.0.0.1:1/";
        },
      },
    );
    await expect(runScheduledDigest(value, { now: NOW })).rejects.toThrow("denied");
    expect(posts).toBe(0);
  });

  it("posts the escaped digest to the webhook once the bucket has it", async () => {
    slack = await startRawServer((_q, response) => response.writeHead(200).end("ok"));
    const url = slack.url;
    const { objects, bucket } = memoryBucket();
    const { value } = deps(bucket, { slackWebhook: async () => `${url}/services/T/B/x` });
    const summary = await runScheduledDigest(value, { now: NOW });
    expect(summary.slack).toEqual({ state: "sent", attempts: 1 });
    expect(objects.size).toBe(3);
    expect(slack.requests).toHaveLength(1);
    expect(slack.requests[0].body).toContain("&lt;!channel&gt; is grub broken?");
    expect(slack.requests[0].body).not.toContain("<!channel>");
  });

  it("reports Slack's refusal by code and status, the bucket's part done", async () => {
    slack = await startRawServer((_q, response) => response.writeHead(404).end("no_service"));
    const url = slack.url;
    const { objects, bucket } = memoryBucket();
    const { value } = deps(bucket, { slackWebhook: async () => url });
    const summary = await runScheduledDigest(value, { now: NOW });
    expect(summary.slack).toEqual({ state: "failed", code: "SLACK_REJECTED", status: 404 });
    expect(objects.size).toBe(3);
  });

  it("reports a webhook secret it cannot read without failing the run", async () => {
    const { bucket } = memoryBucket();
    const { value } = deps(bucket, {
      slackWebhook: async () => {
        throw new Error("ResourceNotFoundException");
      },
    });
    const summary = await runScheduledDigest(value, { now: NOW });
    expect(summary.slack).toEqual({
      state: "failed",
      code: "SLACK_WEBHOOK_UNREADABLE",
      status: undefined,
    });
  });

  it("publishes the Markdown the bucket holds to the SNS topic, with a subject free of chat text", async () => {
    const sns = await snsAt(
      200,
      "<PublishResponse><PublishResult><MessageId>m</MessageId></PublishResult></PublishResponse>",
    );
    const { objects, bucket } = memoryBucket();
    const { value } = deps(bucket, {
      render: { ...deps(bucket).value.render, markdown: (d) => `# ${d.topics[0]?.topic}` },
      snsTopic: sns.topic,
    });
    const summary = await runScheduledDigest(value, { now: NOW });
    expect(summary.sns).toEqual({ state: "sent" });
    const sent = Object.fromEntries(new URLSearchParams(sns.server.requests[0].body));
    expect(sent.Message).toBe(objects.get("digests/2026-11-29/digest.md")?.body);
    expect(sent.Subject).toBe("convoseg digest 2026-11-23..2026-11-29, 2 channels");
  });

  it("reports SNS's refusal by code and status without failing the run or Slack's post", async () => {
    slack = await startRawServer((_q, response) => response.writeHead(200).end("ok"));
    const url = slack.url;
    const sns = await snsAt(
      403,
      "<ErrorResponse><Error><Type>Sender</Type><Code>AuthorizationError</Code></Error></ErrorResponse>",
    );
    const { objects, bucket } = memoryBucket();
    const { value } = deps(bucket, { slackWebhook: async () => url, snsTopic: sns.topic });
    const summary = await runScheduledDigest(value, { now: NOW });
    expect(summary.sns).toEqual({ state: "failed", code: "SNS_REJECTED", status: 403 });
    expect(summary.slack).toEqual({ state: "sent", attempts: 1 });
    expect(objects.size).toBe(3);
  });
});

let snsServer: RawServer | undefined;
afterEach(async () => {
  await snsServer?.close();
  snsServer = undefined;
});

async function snsAt(status: number, body: string) {
  snsServer = await startRawServer((_q, response) =>
    response.writeHead(status, { "content-type": "text/xml" }).end(body),
  );
  const topic = snsTopic({
    topicArn: "arn:aws:sns:eu-west-1:123456789012:digests",
    client: digestSnsClient({
      region: "eu-west-1",
      endpoint: snsServer.url,
      credentials: { accessKeyId: "AKID", secretAccessKey: "secret" },
    }),
  });
  return { server: snsServer, topic };
}
