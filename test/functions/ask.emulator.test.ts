/**
 * The ask endpoints' Lambda modules end to end, against requests the test signs (Slack's HMAC,
 * Discord's Ed25519 with a key pair made here, Telegram's secret token) or forges: each verified
 * question is acknowledged at once and handed to the answer function by an asynchronous
 * invocation (to a Lambda on 127.0.0.1 that records it), and the answer function, run on that
 * invocation, searches the IRC sample's index and posts the hits with their platform links to a
 * scripted platform on 127.0.0.1.
 */
import { generateKeyPairSync, sign } from "node:crypto";
import { signSlackRequest } from "convoseg/connectors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ASKED,
  loadHandlers,
  PLATFORMS,
  type Recorded,
  recordingServer,
  sampleIndex,
  startSecretsServer,
  type UrlHandler,
  urlEvent,
} from "../support/ask-world.js";

const SLACK_SECRET_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:slack-ask-AbCdEf";
const TELEGRAM_TOKEN_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:tg-ask-AbCdEf";
const BOT_TOKEN_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:tg-bot-AbCdEf";
const SLACK_BOT_ARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:slack-bot-AbCdEf";
const SLACK_SECRET = "ask-signing-secret";
const TELEGRAM_TOKEN = "ask_secret-token";
const BOT_TOKEN = "123456:bot-token";
const QUESTION = "where are the files from the repositories saved?";
const sampleTs = Date.parse("2008-07-14T18:01:00Z");

type AnswerHandler = (job: unknown) => Promise<void>;

let indexDir = "";
let secrets: Awaited<ReturnType<typeof startSecretsServer>>;
let lambda: Awaited<ReturnType<typeof recordingServer>>;
let platform: Awaited<ReturnType<typeof recordingServer>>;

beforeAll(async () => {
  indexDir = await sampleIndex();
  secrets = await startSecretsServer({
    [SLACK_SECRET_ARN]: SLACK_SECRET,
    [TELEGRAM_TOKEN_ARN]: TELEGRAM_TOKEN,
    [BOT_TOKEN_ARN]: BOT_TOKEN,
    [SLACK_BOT_ARN]: "xoxb-ask",
  });
  lambda = await recordingServer(202);
  platform = await recordingServer();
}, 120_000);
afterAll(async () => {
  await Promise.all([secrets?.close(), lambda?.close(), platform?.close()]);
});

/** The receiver of `module` and the answer function, with the world's endpoints. */
async function load(module: string, environment: Record<string, string>) {
  return loadHandlers<[UrlHandler, AnswerHandler]>([module, "functions/ask/handler.js"], {
    AWS_ENDPOINT_URL_LAMBDA: lambda.url,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
    ANSWER_FUNCTION: "convoseg-ask-answer",
    SEARCH_INDEX_URI: indexDir,
    SLACK_RESPONSE_PREFIX: `${platform.url}/slack/`,
    DISCORD_API_BASE: `${platform.url}/discord/api`,
    TELEGRAM_API_BASE: `${platform.url}/telegram`,
    TELEGRAM_BOT_TOKEN_ARN: BOT_TOKEN_ARN,
    SLACK_API_BASE: `${platform.url}/slack/api`,
    SLACK_BOT_TOKEN_ARN: SLACK_BOT_ARN,
    ...environment,
  });
}

/** Runs the answer function on each invocation recorded since `from`; what it posted. */
async function answerInvocations(answer: AnswerHandler, from: number, posted: number) {
  const invocations = lambda.requests.slice(from);
  for (const invocation of invocations) {
    expect(invocation.path).toBe("/2015-03-31/functions/convoseg-ask-answer/invocations");
    await answer(JSON.parse(invocation.body));
  }
  return { invocations, posts: platform.requests.slice(posted) };
}

const link = (ids: (typeof PLATFORMS)[keyof typeof PLATFORMS], base: string) =>
  `${base}${ids.id(ASKED, sampleTs)}`;

describe("the ask endpoints", () => {
  it("answer a signed Slack slash command through response_url, with the question's permalink", async () => {
    const [receive, answer] = await load("functions/ask-slack/handler.js", {
      SLACK_SIGNING_SECRET_ARN: SLACK_SECRET_ARN,
    });
    const slack = PLATFORMS.slack;
    const form = (text: string) =>
      new URLSearchParams({
        command: "/ask",
        text,
        channel_id: slack.channel,
        channel_name: "ubuntu",
        user_id: "U0ASKER01",
        response_url: `${platform.url}/slack/commands/T1/42/secret`,
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

    const forged = form(QUESTION);
    const refused = [
      await receive(
        urlEvent({ "x-slack-request-timestamp": "1", "x-slack-signature": "v0=0" }, forged),
      ),
      await receive({ ...signed(forged), body: form("another question") }),
      await receive(signed(forged, Math.floor(Date.now() / 1000) - 600)),
    ];
    expect(refused.map((r) => r.statusCode)).toEqual([401, 401, 401]);
    expect(lambda.requests.length).toBe(before.lambda);

    const ack = await receive(signed(form(QUESTION)));
    expect(ack.statusCode).toBe(200);
    expect(JSON.parse(ack.body as string)).toMatchObject({ response_type: "ephemeral" });
    const { invocations, posts } = await answerInvocations(answer, before.lambda, before.platform);
    expect(invocations).toHaveLength(1);
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatchObject({ method: "POST", path: "/slack/commands/T1/42/secret" });
    const message = JSON.parse(posts[0].body) as { response_type: string; text: string };
    expect(message.response_type).toBe("ephemeral");
    const lines = message.text.split("\n");
    expect(lines[1]).toContain("*Q:* Where does Ubuntu save the files downloaded");
    expect(lines[1]).toContain("/var/cache/apt/archives");
    const permalink = `https://slack.com/archives/${slack.channel}/p${slack.id(ASKED, sampleTs).replace(".", "")}`;
    expect(lines[1]).toContain(`<${permalink}|2008-07-14>`);
  }, 60_000);

  it("answer a Slack app mention in its thread with chat.postMessage", async () => {
    const [receive, answer] = await load("functions/ask-slack/handler.js", {
      SLACK_SIGNING_SECRET_ARN: SLACK_SECRET_ARN,
      ASK_MENTIONS: "true",
    });
    const body = JSON.stringify({
      type: "event_callback",
      event_id: "EvAsk1",
      event: {
        type: "app_mention",
        channel: PLATFORMS.slack.channel,
        user: "U0ASKER01",
        ts: "1765000000.000100",
        text: `<@U0BOT> ${QUESTION}`,
      },
    });
    const ts = Math.floor(Date.now() / 1000);
    const before = { lambda: lambda.requests.length, platform: platform.requests.length };
    const ack = await receive(
      urlEvent(
        {
          "content-type": "application/json",
          "x-slack-request-timestamp": String(ts),
          "x-slack-signature": signSlackRequest(SLACK_SECRET, ts, body),
        },
        body,
      ),
    );
    expect(ack.statusCode).toBe(200);
    const { posts } = await answerInvocations(answer, before.lambda, before.platform);
    expect(posts.map((p) => [p.method, p.path])).toEqual([["POST", "/slack/api/chat.postMessage"]]);
    const message = JSON.parse(posts[0].body) as Record<string, unknown> & { text: string };
    expect(message).toMatchObject({
      channel: PLATFORMS.slack.channel,
      thread_ts: "1765000000.000100",
      unfurl_links: false,
    });
    expect(message.text.split("\n")[1]).toContain("*Q:* Where does Ubuntu save the files");
  }, 60_000);

  it("answer a signed Discord interaction: PONG, a deferred response, then the webhook edit", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("hex");
    const [receive, answer] = await load("functions/ask-discord/handler.js", {
      DISCORD_PUBLIC_KEY: raw,
    });
    const discord = PLATFORMS.discord;
    const guild = "1100000000000000002";
    const signed = (value: unknown, key = privateKey) => {
      const body = JSON.stringify(value);
      const ts = String(Math.floor(Date.now() / 1000));
      const signature = sign(null, Buffer.from(ts + body), key).toString("hex");
      return urlEvent({ "x-signature-ed25519": signature, "x-signature-timestamp": ts }, body);
    };
    const ping = await receive(signed({ type: 1, id: "1", application_id: "1" }));
    expect(ping.statusCode).toBe(200);
    expect(JSON.parse(ping.body as string)).toEqual({ type: 1 });
    const stranger = generateKeyPairSync("ed25519").privateKey;
    const refused = [
      await receive(urlEvent({}, JSON.stringify({ type: 1 }))),
      await receive(signed({ type: 1 }, stranger)),
    ];
    expect(refused.map((r) => r.statusCode)).toEqual([401, 401]);

    const before = { lambda: lambda.requests.length, platform: platform.requests.length };
    const command = {
      type: 2,
      id: "1200000000000000001",
      application_id: "1300000000000000001",
      token: "aW50ZXJhY3Rpb24.token_1",
      guild_id: guild,
      channel_id: discord.channel,
      channel: { type: 0 },
      member: { user: { id: "1400000000000000001" } },
      data: { name: "ask", options: [{ name: "question", type: 3, value: QUESTION }] },
    };
    const deferred = await receive(signed(command));
    expect(deferred.statusCode).toBe(200);
    expect(JSON.parse(deferred.body as string)).toEqual({ type: 5, data: { flags: 64 } });
    const { posts } = await answerInvocations(answer, before.lambda, before.platform);
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatchObject({
      method: "PATCH",
      path: "/discord/api/webhooks/1300000000000000001/aW50ZXJhY3Rpb24.token_1/messages/@original",
    });
    const message = JSON.parse(posts[0].body) as { content: string; allowed_mentions: unknown };
    expect(message.allowed_mentions).toEqual({ parse: [] });
    const lines = message.content.split("\n");
    expect(lines[1]).toContain("**Q:** Where does Ubuntu save the files downloaded");
    expect(lines[1]).toContain(
      `[2008-07-14](<${link(discord, `https://discord.com/channels/${guild}/${discord.channel}/`)}>)`,
    );
  }, 60_000);

  it("answer /ask in an allowed Telegram chat with sendMessage, and not in another", async () => {
    const telegram = PLATFORMS.telegram;
    const [receive, answer] = await load("functions/ask-telegram/handler.js", {
      TELEGRAM_SECRET_TOKEN_ARN: TELEGRAM_TOKEN_ARN,
      TELEGRAM_BOT_USERNAME: "convoseg_ask_bot",
      ASK_CHANNELS: telegram.channel,
    });
    const update = (id: number, chat: number, text: string, token = TELEGRAM_TOKEN) =>
      urlEvent(
        { "content-type": "application/json", "x-telegram-bot-api-secret-token": token },
        JSON.stringify({
          update_id: id,
          message: {
            message_id: 900 + id,
            date: Math.floor(Date.now() / 1000),
            chat: { id: chat, type: "supergroup", title: "Ubuntu" },
            from: { id: 77, is_bot: false, first_name: "Ada" },
            text,
          },
        }),
      );
    const before = { lambda: lambda.requests.length, platform: platform.requests.length };
    const statuses = [
      (await receive(update(1, Number(telegram.channel), `/ask ${QUESTION}`, "guess"))).statusCode,
      // A chat the bot is in but not allowed to answer in, another bot's command, no command.
      (await receive(update(2, -1009999, `/ask ${QUESTION}`))).statusCode,
      (await receive(update(3, Number(telegram.channel), `/ask@other_bot ${QUESTION}`))).statusCode,
      (await receive(update(4, Number(telegram.channel), "thanks"))).statusCode,
      (await receive(update(5, Number(telegram.channel), `/ask@convoseg_ask_bot ${QUESTION}`)))
        .statusCode,
    ];
    expect(statuses).toEqual([401, 200, 200, 200, 200]);
    const { invocations, posts } = await answerInvocations(answer, before.lambda, before.platform);
    expect(invocations).toHaveLength(1);
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatchObject({
      method: "POST",
      path: `/telegram/bot${BOT_TOKEN}/sendMessage`,
    });
    const message = JSON.parse(posts[0].body) as Record<string, unknown> & { text: string };
    expect(message).toMatchObject({
      chat_id: Number(telegram.channel),
      reply_parameters: { message_id: 905 },
    });
    expect(message.parse_mode).toBeUndefined();
    const lines = message.text.split("\n");
    expect(lines[1]).toContain("Q: Where does Ubuntu save the files downloaded");
    expect(lines[1]).toContain(`https://t.me/c/1234567890/${ASKED}`);
  }, 60_000);

  it("never answer with what the index keeps past SEARCH_RETENTION_DAYS", async () => {
    // The sample is of 2008: a year's retention leaves nothing of it to find.
    const [, answer] = await load("functions/ask-slack/handler.js", {
      SLACK_SIGNING_SECRET_ARN: SLACK_SECRET_ARN,
      SEARCH_RETENTION_DAYS: "365",
    });
    const from = platform.requests.length;
    await answer({
      platform: "slack",
      channel: PLATFORMS.slack.channel,
      words: QUESTION,
      responseUrl: `${platform.url}/slack/commands/T1/44/x`,
      inChannel: true,
    });
    const posted: Recorded[] = platform.requests.slice(from);
    expect(JSON.parse(posted[0].body)).toMatchObject({
      text: expect.stringMatching(/^Nothing found in this channel's history/),
    });
  }, 60_000);

  it("say so when nothing is found", async () => {
    const [, answer] = await load("functions/ask-slack/handler.js", {
      SLACK_SIGNING_SECRET_ARN: SLACK_SECRET_ARN,
    });
    const from = platform.requests.length;
    await answer({
      platform: "slack",
      channel: PLATFORMS.slack.channel,
      words: "quantum chromodynamics lattice",
      responseUrl: `${platform.url}/slack/commands/T1/43/x`,
      inChannel: true,
    });
    const posted: Recorded[] = platform.requests.slice(from);
    expect(JSON.parse(posted[0].body)).toEqual({
      response_type: "in_channel",
      text: `Nothing found in this channel's history for "quantum chromodynamics lattice".`,
    });
  }, 60_000);
});
