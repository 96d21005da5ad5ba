/**
 * "Mark as answer" end to end: the Slack and Discord ask endpoints' Lambda modules take a signed
 * message shortcut or message command (forged, stale and out-of-scope ones refused), hand the mark
 * to the mark function by an asynchronous invocation (to a Lambda on 127.0.0.1 that records it),
 * and the mark function, run on that invocation, records the correction on DynamoDB Local and
 * tells the person on a scripted Slack or Discord. The question is the IRC sample's 1007 (where
 * apt keeps what it downloaded), which the model left unanswered; a person marks 1019. The
 * correction survives a re-extraction and shows in the read API's questions.
 */
import { generateKeyPairSync, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { apiHandler, dynamoDbApiSources } from "convoseg/api";
import { signSlackRequest } from "convoseg/connectors";
import { textMessage } from "convoseg/history";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { channelsTableDefinition } from "convoseg/pipeline/schema";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createMessagesTestTable, createResultsTestTable } from "../knowledge/fixtures.js";
import { question, resultWith, save } from "../knowledge/question-index.js";
import {
  loadHandlers,
  PLATFORMS,
  type PlatformIds,
  recordingServer,
  startSecretsServer,
  type UrlHandler,
  urlEvent,
} from "../support/ask-world.js";
import { createTestTable, testDynamoDbClient } from "../support/dynamodb.js";

const SLACK_SECRET_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:slack-ask-AbCdEf";
const SLACK_SECRET = "mark-signing-secret";
const MODERATOR = { slack: "U0MODER01", discord: "1400000000000000007" };
const SEGMENT = [1007, 1009, 1013, 1014, 1019, 1020, 1022, 1031];

type MarkHandler = (job: unknown) => Promise<void>;

/** The sample's lines of the apt-cache conversation, by id. */
const sample = new Map(
  readFileSync("examples/irc-ubuntu.jsonl", "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { id: number; ts: string; user: string; text: string })
    .filter((m) => SEGMENT.includes(m.id))
    .map((m) => [m.id, m]),
);
const tsOf = (n: number) => Date.parse(sample.get(n)?.ts ?? "");
const idOf = (ids: PlatformIds, n: number) => ids.id(n, tsOf(n));

const client = testDynamoDbClient();
let tables: { results: string; messages: string; channels: string };
let secrets: Awaited<ReturnType<typeof startSecretsServer>>;
let lambda: Awaited<ReturnType<typeof recordingServer>>;
let platform: Awaited<ReturnType<typeof recordingServer>>;

/** The conversation as `ids` store it, and its result: 1007's question, left unanswered. */
async function store(ids: PlatformIds, extractedAt: string) {
  const results = new DynamoDbResultStore({ client, tableName: tables.results });
  const asked = sample.get(1007);
  await save(
    results,
    resultWith(
      ids.channel,
      "s-apt-cache",
      [
        question("q-apt-cache", tsOf(1007), "unanswered", {
          question: "Where does Ubuntu save the files downloaded from the repositories?",
          askedId: idOf(ids, 1007),
          askedBy: asked?.user,
        }),
      ],
      {
        first: { id: idOf(ids, 1007), ts: tsOf(1007) },
        last: { id: idOf(ids, 1031), ts: tsOf(1031) },
        messageIds: SEGMENT.map((n) => idOf(ids, n)),
        extractedAt,
      },
    ),
  );
}

beforeAll(async () => {
  const { TableName: _, ...channels } = channelsTableDefinition("unused");
  tables = {
    results: await createResultsTestTable(client),
    messages: await createMessagesTestTable(client),
    channels: await createTestTable(client, channels, "channels"),
  };
  const history = new DynamoDbStore({ client, tableName: tables.messages });
  for (const ids of [PLATFORMS.slack, PLATFORMS.discord]) {
    await history.write(
      ids.channel,
      SEGMENT.map((n) =>
        textMessage("user", sample.get(n)?.text ?? "", {
          id: idOf(ids, n),
          ts: tsOf(n),
          author: sample.get(n)?.user ?? "someone",
        }),
      ),
    );
    await store(ids, "2026-06-01T00:00:00.000Z");
  }
  secrets = await startSecretsServer({ [SLACK_SECRET_ARN]: SLACK_SECRET });
  lambda = await recordingServer(202);
  platform = await recordingServer();
}, 120_000);
afterAll(async () => {
  await Promise.all([secrets?.close(), lambda?.close(), platform?.close()]);
});

/** The receiver of `module` and the mark function, with the world's endpoints. */
function load(module: string, environment: Record<string, string>) {
  return loadHandlers<[UrlHandler, MarkHandler]>([module, "functions/ask-mark/handler.js"], {
    AWS_ENDPOINT_URL_LAMBDA: lambda.url,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
    AWS_ENDPOINT_URL_DYNAMODB: inject("dynamodbEndpoint"),
    ANSWER_FUNCTION: "convoseg-ask-answer",
    MARK_FUNCTION: "convoseg-ask-mark",
    RESULTS_TABLE: tables.results,
    MESSAGES_TABLE: tables.messages,
    ASK_MARKERS: `${MODERATOR.slack},${MODERATOR.discord}`,
    ASK_CHANNELS: `${PLATFORMS.slack.channel},${PLATFORMS.discord.channel}`,
    SLACK_RESPONSE_PREFIX: `${platform.url}/slack/`,
    DISCORD_API_BASE: `${platform.url}/discord/api`,
    ...environment,
  });
}

/** Runs the mark function on each invocation recorded since `from`; what it posted. */
async function markInvocations(mark: MarkHandler, from: number, posted: number) {
  const invocations = lambda.requests.slice(from);
  for (const invocation of invocations) {
    expect(invocation.path).toBe("/2015-03-31/functions/convoseg-ask-mark/invocations");
    await mark(JSON.parse(invocation.body));
  }
  return { invocations, posts: platform.requests.slice(posted) };
}

/** The channel's questions as the read API answers them. */
async function apiQuestions(channel: string) {
  const handle = apiHandler(
    dynamoDbApiSources({
      client,
      resultsTable: tables.results,
      channelsTable: tables.channels,
      messagesTable: tables.messages,
      questions: new KnowledgeReader({ client, tableName: tables.results }),
    }),
  );
  const response = await handle({
    method: "GET",
    rawPath: `/channels/${channel}/questions`,
    rawQuery: "",
    headers: {},
  });
  expect(response.status).toBe(200);
  return JSON.parse(String(response.body)) as {
    questions: { id: string; status: string; answerIds: string[]; correction?: { by?: string } }[];
  };
}

describe("Mark as answer", () => {
  it("on Slack: a signed shortcut marks 1019 as the answer to 1007, which survives re-extraction", async () => {
    const [receive, mark] = await load("functions/ask-slack/handler.js", {
      SLACK_SIGNING_SECRET_ARN: SLACK_SECRET_ARN,
    });
    const slack = PLATFORMS.slack;
    const payload = (n: number | string, over: Record<string, unknown> = {}) =>
      new URLSearchParams({
        payload: JSON.stringify({
          type: "message_action",
          callback_id: "mark_answer",
          trigger_id: "1.2.x",
          response_url: `${platform.url}/slack/app/T1/42/secret`,
          channel: { id: slack.channel },
          user: { id: MODERATOR.slack },
          message: { type: "message", ts: typeof n === "number" ? idOf(slack, n) : n },
          ...over,
        }),
      }).toString();
    const signed = (body: string, ts = Math.floor(Date.now() / 1000)) =>
      urlEvent(
        {
          "content-type": "application/x-www-form-urlencoded",
          "x-slack-request-timestamp": String(ts),
          "x-slack-signature": signSlackRequest(SLACK_SECRET, ts, body),
        },
        body,
      );
    const before = { lambda: lambda.requests.length, platform: platform.requests.length };

    const refused = [
      await receive(
        urlEvent({ "x-slack-request-timestamp": "1", "x-slack-signature": "v0=0" }, payload(1019)),
      ),
      await receive({ ...signed(payload(1019)), body: payload(1022) }),
      await receive(signed(payload(1019), Math.floor(Date.now() / 1000) - 600)),
    ];
    expect(refused.map((r) => r.statusCode)).toEqual([401, 401, 401]);
    // A channel outside the allow-list: acknowledged, nothing handed on.
    const outside = await receive(signed(payload(1019, { channel: { id: "C0ELSEWHERE" } })));
    expect([outside.statusCode, outside.body]).toEqual([200, ""]);
    expect(lambda.requests.length).toBe(before.lambda);

    // A message not stored (yet), then the answer.
    for (const body of [payload("1215900000.000001"), payload(1019)]) {
      const ack = await receive(signed(body));
      expect([ack.statusCode, ack.body]).toEqual([200, ""]);
    }
    const { invocations, posts } = await markInvocations(mark, before.lambda, before.platform);
    expect(invocations).toHaveLength(2);
    expect(posts.map((p) => [p.path, JSON.parse(p.body).response_type])).toEqual([
      ["/slack/app/T1/42/secret", "ephemeral"],
      ["/slack/app/T1/42/secret", "ephemeral"],
    ]);
    expect(JSON.parse(posts[0].body).text).toMatch(/not stored yet/);
    expect(JSON.parse(posts[1].body).text).toBe(
      "Marked as the answer to: “Where does Ubuntu save the files downloaded from the repositories?”",
    );

    const answered = (await apiQuestions(slack.channel)).questions;
    expect(answered.map((q) => [q.id, q.status, q.answerIds, q.correction?.by])).toEqual([
      ["q-apt-cache", "answered", [idOf(slack, 1019)], MODERATOR.slack],
    ]);
    // A re-extraction that finds it unanswered again does not undo a person's word.
    await store(slack, "2026-06-02T00:00:00.000Z");
    const results = new DynamoDbResultStore({ client, tableName: tables.results });
    const reextracted = await results.getResult(slack.channel, "s-apt-cache");
    expect([reextracted?.extractedAt, reextracted?.questions?.[0].status]).toEqual([
      "2026-06-02T00:00:00.000Z",
      "unanswered",
    ]);
    const { items } = await new KnowledgeReader({ client, tableName: tables.results }).questions(
      slack.channel,
    );
    expect(items.map((q) => [q.status, q.answerIds, q.correction?.by])).toEqual([
      ["answered", [idOf(slack, 1019)], MODERATOR.slack],
    ]);
  });

  it("on Discord: a signed message command marks 1019, deferred, the outcome edited in", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("hex");
    const [receive, mark] = await load("functions/ask-discord/handler.js", {
      DISCORD_PUBLIC_KEY: raw,
    });
    const discord = PLATFORMS.discord;
    const interaction = (n: number, over: Record<string, unknown> = {}) => ({
      type: 2,
      application_id: "1300000000000000001",
      token: "interaction-token",
      guild_id: "1100000000000000002",
      channel_id: discord.channel,
      member: { user: { id: MODERATOR.discord } },
      data: {
        type: 3,
        name: "Mark as answer",
        target_id: idOf(discord, n),
        resolved: { messages: { [idOf(discord, n)]: { id: idOf(discord, n) } } },
      },
      ...over,
    });
    const signed = (value: unknown, ts = Math.floor(Date.now() / 1000)) => {
      const body = JSON.stringify(value);
      const signature = sign(null, Buffer.from(`${ts}${body}`), privateKey).toString("hex");
      return urlEvent(
        { "x-signature-ed25519": signature, "x-signature-timestamp": String(ts) },
        body,
      );
    };
    const before = { lambda: lambda.requests.length, platform: platform.requests.length };

    const forged = { ...signed(interaction(1019)), body: JSON.stringify(interaction(1022)) };
    const stale = signed(interaction(1019), Math.floor(Date.now() / 1000) - 600);
    const unsigned = urlEvent({}, JSON.stringify(interaction(1019)));
    const statuses = [];
    for (const event of [forged, stale, unsigned]) statuses.push((await receive(event)).statusCode);
    expect(statuses).toEqual([401, 401, 401]);
    const outside = await receive(signed(interaction(1019, { channel_id: "1100000000000000099" })));
    expect(JSON.parse(String(outside.body))).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(lambda.requests.length).toBe(before.lambda);

    // Someone not listed, then the moderator.
    const stranger = interaction(1019, { member: { user: { id: "1400000000000000008" } } });
    for (const value of [stranger, interaction(1019)]) {
      const ack = await receive(signed(value));
      expect(JSON.parse(String(ack.body))).toEqual({ type: 5, data: { flags: 64 } });
    }
    const { posts } = await markInvocations(mark, before.lambda, before.platform);
    expect(posts.map((p) => [p.method, p.path])).toEqual(
      Array(2).fill([
        "PATCH",
        "/discord/api/webhooks/1300000000000000001/interaction-token/messages/@original",
      ]),
    );
    expect(JSON.parse(posts[0].body).content).toMatch(/Only the people/);
    expect(JSON.parse(posts[1].body)).toMatchObject({
      content: expect.stringMatching(/^Marked as the answer to: “Where does Ubuntu/),
      allowed_mentions: { parse: [] },
    });
    const { questions } = await apiQuestions(discord.channel);
    expect(questions.map((q) => [q.status, q.answerIds, q.correction?.by])).toEqual([
      ["answered", [idOf(discord, 1019)], MODERATOR.discord],
    ]);
  });
});
