/**
 * The scheduled digest's Lambda on DynamoDB Local (every channel of the channels table), a
 * scripted S3, SNS and Slack on 127.0.0.1 and the webhook address in a local Secrets Manager.
 */

import { channelsTableDefinition } from "convoseg/pipeline/schema";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { seededChannel, writeSeededChannel } from "../../bench/api-seed.js";
import type { DigestWiring } from "../../functions/digest/lambda.js";
import { createResultsTestTable } from "../knowledge/fixtures.js";
import { digest } from "../outlets/digest/schedule-fixtures.js";
import { stubLocalAws } from "../support/aws-env.js";
import { createTestTable, testDynamoDbClient } from "../support/dynamodb.js";
import { type RawServer, startRawServer } from "../support/raw-servers.js";
import { type SecretsServer, startSecretsServer } from "../support/secrets-manager.js";

const open: RawServer[] = [];
/** One for the file: Powertools keeps its Secrets Manager client (and endpoint) once made. */
let secrets: SecretsServer;
let webhookUrl = "";
beforeAll(async () => {
  secrets = await startSecretsServer({
    get "digest/slack"() {
      return webhookUrl;
    },
  });
});
afterAll(() => secrets.close());
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  vi.unstubAllEnvs();
});

async function world(options: {
  s3Status: number;
  slackStatus?: number;
  snsStatus?: number;
  channels?: string[] | string[][];
  /** The channels table's channels (default dev and help). */
  known?: string[];
}) {
  stubLocalAws();
  const client = testDynamoDbClient();
  const resultsTable = await createResultsTestTable(client);
  const { TableName: _, ...channels } = channelsTableDefinition("unused");
  const channelsTable = await createTestTable(client, channels, "channels");
  for (const c of options.known ?? ["dev", "help"]) {
    await writeSeededChannel(client, { resultsTable, channelsTable }, c, seededChannel(c, 5, 2));
  }
  const s3 = await startRawServer((_q, response) => response.writeHead(options.s3Status).end());
  const slack = await startRawServer((_q, response) =>
    response.writeHead(options.slackStatus ?? 200).end(),
  );
  const sns = await startRawServer((_q, response) =>
    response
      .writeHead(options.snsStatus ?? 200, { "content-type": "text/xml" })
      .end(
        (options.snsStatus ?? 200) === 200
          ? "<PublishResponse><PublishResult><MessageId>m-1</MessageId></PublishResult></PublishResponse>"
          : "<ErrorResponse><Error><Type>Sender</Type><Code>AuthorizationError</Code><Message>not allowed</Message></Error></ErrorResponse>",
      ),
  );
  webhookUrl = `${slack.url}/services/T0/B0/secret-part`;
  open.push(s3, slack, sns);
  vi.stubEnv("RESULTS_TABLE", resultsTable);
  vi.stubEnv("CHANNELS_TABLE", channelsTable);
  vi.stubEnv("MESSAGES_TABLE", "messages");
  vi.stubEnv("DIGEST_BUCKET", "digests");
  vi.stubEnv("AWS_ENDPOINT_URL_S3", s3.url);
  vi.stubEnv("AWS_ENDPOINT_URL_SECRETS_MANAGER", secrets.url);
  vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
  if (options.slackStatus !== undefined) vi.stubEnv("SLACK_WEBHOOK_SECRET", "digest/slack");
  if (options.snsStatus !== undefined) {
    vi.stubEnv("DIGEST_SNS_TOPIC", "arn:aws:sns:eu-west-1:123456789012:digests");
    vi.stubEnv("AWS_ENDPOINT_URL_SNS", sns.url);
  }
  if (options.channels) vi.stubEnv("DIGEST_CHANNELS", JSON.stringify(options.channels));
  const built: string[][] = [];
  const wiring: DigestWiring = {
    build: () => async (o) => {
      built.push(o.channels);
      return digest({ channels: o.channels, since: o.since, until: o.until }, "@here <!channel>");
    },
    render: { markdown: () => "# md", html: () => "<p>html</p>", json: (d) => JSON.stringify(d) },
  };
  vi.resetModules();
  const { digestLambda } = await import("../../functions/digest/lambda.js");
  // Powertools logs through the global console in its dev mode: that is where the test reads.
  vi.stubEnv("POWERTOOLS_DEV", "true");
  vi.stubEnv("POWERTOOLS_LOG_LEVEL", "INFO");
  const lines: string[] = [];
  const capture = (...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  };
  const spies = (["info", "warn", "error", "log", "debug"] as const).map((m) =>
    vi.spyOn(console, m).mockImplementation(capture),
  );
  const logs = {
    mock: {
      get calls() {
        return lines.map((l) => [l]);
      },
    },
    mockRestore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
  const handler = digestLambda(wiring);
  return { handler, s3, slack, sns, built, logs };
}

/** What was logged, the spy restored. */
function logged(spy: { mock: { calls: unknown[][] }; mockRestore(): void }) {
  const text = spy.mock.calls.map((c) => String(c[0])).join("");
  spy.mockRestore();
  return text;
}

describe("the digest function", () => {
  it("digests every channel into the bucket, then posts to Slack", async () => {
    const w = await world({ s3Status: 200, slackStatus: 200 });
    const [summary] = await w.handler();
    const text = logged(w.logs);
    expect(w.built).toEqual([["dev", "help"]]);
    const day = new Date(summary.until - 1).toISOString().slice(0, 10);
    // The SDK's client adds its operation as a query (`?x-id=PutObject`).
    expect(w.s3.requests.map((r) => `${r.method} ${r.path.split("?")[0]}`).sort()).toEqual(
      ["html", "json", "md"].map((ext) => `PUT /digests/digests/${day}/digest.${ext}`),
    );
    expect(w.slack.requests).toHaveLength(1);
    expect(w.slack.requests[0].body).not.toContain("<!channel>");
    expect(secrets.reads.get("digest/slack")).toBeGreaterThanOrEqual(1);
    expect(summary.slack).toEqual({ state: "sent", attempts: 1 });
    expect(text).toContain("digest written");
    expect(text).not.toContain("secret-part");
    expect(text).not.toContain("@here");
  });

  it("digests only the channels DIGEST_CHANNELS names", async () => {
    const w = await world({ s3Status: 200, channels: ["help", "a,b"] });
    await w.handler();
    logged(w.logs);
    expect(w.built).toEqual([["help", "a,b"]]);
  });

  it("digests each platform's channels on their own by default, leaving private chats out", async () => {
    const known = ["C0GENERAL", "C0HELP", "D0ANADM", "-1001234567", "12345678", "help"];
    const w = await world({ s3Status: 200, slackStatus: 200, known });
    const summaries = await w.handler();
    logged(w.logs);
    expect(summaries.map((s) => [s.group, s.channels])).toEqual([
      ["other", 1],
      ["slack", 2],
      ["telegram", 1],
    ]);
    expect(w.built.map((c) => [...c].sort())).toEqual([
      ["help"],
      ["C0GENERAL", "C0HELP"],
      ["-1001234567"],
    ]);
    const day = new Date(summaries[0].until - 1).toISOString().slice(0, 10);
    expect(w.s3.requests.map((r) => r.path.split("?")[0])).toContain(
      `/digests/digests/${day}/slack/digest.md`,
    );
    // Each group its own post: one community's digest never carries another's words.
    expect(w.slack.requests).toHaveLength(3);
  });

  it("digests the groups DIGEST_CHANNELS names, each on its own", async () => {
    const w = await world({ s3Status: 200, channels: [["help"], ["dev", "a,b"]] });
    const summaries = await w.handler();
    logged(w.logs);
    expect(w.built).toEqual([["help"], ["dev", "a,b"]]);
    expect(summaries.map((s) => s.group)).toEqual(["group-1", "group-2"]);
  });

  it("fails the invocation when the bucket refuses, and posts nothing", async () => {
    const w = await world({ s3Status: 403, slackStatus: 200 });
    await expect(w.handler()).rejects.toMatchObject({ code: "DIGEST_BUCKET_WRITE", status: 403 });
    expect(logged(w.logs)).toMatch(/"code": *"DIGEST_BUCKET_WRITE"/);
    expect(w.slack.requests).toHaveLength(0);
  });

  it("logs Slack's refusal by status, without failing the run", async () => {
    const w = await world({ s3Status: 200, slackStatus: 410 });
    const [summary] = await w.handler();
    const text = logged(w.logs);
    expect(summary.slack).toEqual({ state: "failed", code: "SLACK_REJECTED", status: 410 });
    expect(w.s3.requests).toHaveLength(3);
    expect(text).toMatch(/"status": *410/);
    expect(text).not.toContain("secret-part");
  });

  it("publishes the Markdown to DIGEST_SNS_TOPIC beside Slack, and logs SNS's refusal by status", async () => {
    const w = await world({ s3Status: 200, slackStatus: 200, snsStatus: 200 });
    const [summary] = await w.handler();
    logged(w.logs);
    expect(summary.sns).toEqual({ state: "sent" });
    const sent = Object.fromEntries(new URLSearchParams(w.sns.requests[0].body));
    expect(sent).toMatchObject({
      Action: "Publish",
      TopicArn: "arn:aws:sns:eu-west-1:123456789012:digests",
      Message: "# md",
    });
    expect(sent.Subject).toMatch(
      /^convoseg digest \d{4}-\d{2}-\d{2}\.\.\d{4}-\d{2}-\d{2}, 2 channels$/,
    );
    await Promise.all(open.splice(0).map((s) => s.close()));
    vi.unstubAllEnvs();

    const refused = await world({ s3Status: 200, snsStatus: 403 });
    const [outcome] = await refused.handler();
    const text = logged(refused.logs);
    expect(outcome.sns).toEqual({ state: "failed", code: "SNS_REJECTED", status: 403 });
    expect(refused.sns.requests).toHaveLength(1);
    expect(text).toMatch(/"code": *"SNS_REJECTED"/);
    expect(text).not.toContain("not allowed");
  });

  it("publishes nothing without DIGEST_SNS_TOPIC", async () => {
    const w = await world({ s3Status: 200 });
    const [summary] = await w.handler();
    logged(w.logs);
    expect(summary.sns).toEqual({ state: "off" });
    expect(w.sns.requests).toHaveLength(0);
  });
});
