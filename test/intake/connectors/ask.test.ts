import { generateKeyPairSync, sign } from "node:crypto";
import {
  AskRateLimit,
  type AskRequest,
  askWords,
  ConnectorError,
  discordAskReceiver,
  discordPublicKey,
  signSlackRequest,
  slackAskReceiver,
  telegramAskReceiver,
  verifyDiscordRequest,
} from "convoseg/connectors";
import { describe, expect, it } from "vitest";
import { NOW, receiverParts } from "./ask-parts.js";

function parts(limit?: AskRateLimit) {
  const asked: AskRequest[] = [];
  const base = receiverParts(limit);
  return {
    ...base,
    asked,
    options: {
      ...base.options,
      ask: async (request: AskRequest) => {
        asked.push(request);
      },
    },
  };
}

describe("askWords", () => {
  it("keeps words and technical marks, never markup", () => {
    expect(askWords("where is <https://x.org|the wiki> for <@U123> apt-get? /var/cache!")).toBe(
      "where is the wiki for apt-get /var/cache",
    );
    expect(askWords('") OR 1=1 -- *')).toBe("OR 1 1");
    expect(askWords("<!channel>")).toBe("");
    expect(askWords("word ".repeat(200)).length).toBeLessThanOrEqual(300);
  });
});

describe("AskRateLimit", () => {
  it("lets a person ask perPerson at once, then one per 60/perPerson s; a channel likewise", () => {
    let now = NOW;
    const limit = new AskRateLimit({ perPerson: 2, perChannel: 3 }, () => now);
    expect([limit.take("slack", "C1", "U1"), limit.take("slack", "C1", "U1")]).toEqual([0, 0]);
    expect(limit.take("slack", "C1", "U1")).toBe(30);
    // Another person in the same channel takes the channel's last token, then the channel waits.
    expect(limit.take("slack", "C1", "U2")).toBe(0);
    expect(limit.take("slack", "C1", "U3")).toBe(20);
    // The same ids on another platform are another person and channel.
    expect(limit.take("discord", "C1", "U1")).toBe(0);
    now += 30_000;
    expect(limit.take("slack", "C1", "U1")).toBe(0);
  });
});

describe("the Slack ask endpoint", () => {
  const SECRET = "s3cret";
  const request = (fields: Record<string, string>, ts = Math.floor(NOW / 1000)) => {
    const body = new URLSearchParams(fields).toString();
    return {
      headers: {
        "x-slack-request-timestamp": String(ts),
        "x-slack-signature": signSlackRequest(SECRET, ts, body),
      },
      body: Buffer.from(body),
    };
  };
  const command = {
    command: "/ask",
    text: "--public how do I <b>fix</b> grub",
    channel_id: "C0HELP",
    user_id: "U0ASK",
    response_url: "https://hooks.slack.com/commands/T/1/x",
  };

  it("hands on a verified command and acknowledges it; refuses forged and stale ones", async () => {
    const { asked, counts, logged, options } = parts();
    const receive = slackAskReceiver({ ...options, signingSecret: async () => SECRET });
    const ok = await receive(request(command));
    expect(ok.statusCode).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ response_type: "ephemeral" });
    expect(asked).toEqual([
      {
        platform: "slack",
        channel: "C0HELP",
        words: "how do I fix grub",
        responseUrl: command.response_url,
        inChannel: true,
      },
    ]);
    const stale = await receive(request(command, Math.floor(NOW / 1000) - 301));
    const forged = await receive({ ...request(command), body: Buffer.from("command=/ask&text=x") });
    expect([stale.statusCode, forged.statusCode]).toEqual([401, 401]);
    expect(JSON.parse(forged.body)).toEqual({ error: "CONNECTOR_BAD_SIGNATURE" });
    expect(counts).toMatchObject({ AsksReceived: 3, AsksTaken: 1, AsksRefused: 2 });
    expect(JSON.stringify(logged)).not.toContain("grub");
  });

  it("shows the answer to the channel only when asked to, --public or a client's dash", async () => {
    const { asked, options } = parts();
    const receive = slackAskReceiver({ ...options, signingSecret: async () => SECRET });
    for (const text of ["--public grub", "\u2014public grub", "grub --public", "publicity grub"])
      await receive(request({ ...command, text }));
    expect(asked.map((a) => [a.words, a.platform === "slack" && a.inChannel])).toEqual([
      ["grub", true],
      ["grub", true],
      ["grub public", false],
      ["publicity grub", false],
    ]);
  });

  it("answers the asker itself when over the limit, outside its channels or without words", async () => {
    const { asked, options } = parts(new AskRateLimit({ perPerson: 1 }, () => NOW));
    const receive = slackAskReceiver({
      ...options,
      signingSecret: async () => SECRET,
      scope: { channels: new Set(["C0HELP"]) },
    });
    const texts = [];
    for (const fields of [
      command,
      command,
      { ...command, channel_id: "C0OTHER" },
      { ...command, user_id: "U0B", text: "  " },
      { ...command, channel_id: "D0DM", user_id: "U0C" },
    ])
      texts.push(JSON.parse((await receive(request(fields))).body).text);
    expect(asked).toHaveLength(1);
    expect(texts.slice(1)).toEqual([
      "Too many questions at once: try again in 60 s.",
      "Questions are not answered in this channel.",
      "Ask with the words to look for, such as: /ask how do I reset my password",
      "Questions are not answered in this channel.",
    ]);
  });
});

describe("the Slack ask endpoint's app mentions", () => {
  const SECRET = "s3cret";
  const signed = (value: unknown, headers: Record<string, string> = {}) => {
    const body = JSON.stringify(value);
    const ts = Math.floor(NOW / 1000);
    return {
      headers: {
        "x-slack-request-timestamp": String(ts),
        "x-slack-signature": signSlackRequest(SECRET, ts, body),
        ...headers,
      },
      body: Buffer.from(body),
    };
  };
  const mention = (over: Record<string, unknown> = {}) => ({
    type: "event_callback",
    event_id: "Ev1",
    event: {
      type: "app_mention",
      channel: "C0HELP",
      user: "U0ASK",
      ts: "1750000000.000100",
      text: "<@U0BOT> how do I fix grub?",
      ...over,
    },
  });

  it("answers the URL's verification, hands on a mention once, and takes none when off", async () => {
    const { asked, options } = parts();
    const receive = slackAskReceiver({
      ...options,
      signingSecret: async () => SECRET,
      mentions: true,
    });
    const verification = await receive(signed({ type: "url_verification", challenge: "c-1" }));
    expect([verification.statusCode, verification.body]).toEqual([200, "c-1"]);
    expect((await receive(signed(mention({ thread_ts: "1749999999.000001" })))).statusCode).toBe(
      200,
    );
    // Slack's retry of the same event: acknowledged, not asked again.
    await receive(signed(mention(), { "x-slack-retry-num": "1" }));
    expect(asked).toEqual([
      {
        platform: "slack",
        channel: "C0HELP",
        words: "how do I fix grub",
        inChannel: true,
        thread: "1749999999.000001",
      },
    ]);
    const off = parts();
    await slackAskReceiver({ ...off.options, signingSecret: async () => SECRET })(
      signed(mention()),
    );
    expect(off.asked).toEqual([]);
  });
});

describe("the Discord interactions endpoint", () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("hex");
  const key = discordPublicKey(raw);
  const signed = (value: unknown, ts = Math.floor(NOW / 1000)) => {
    const body = JSON.stringify(value);
    return {
      headers: {
        "x-signature-ed25519": sign(null, Buffer.from(`${ts}${body}`), privateKey).toString("hex"),
        "x-signature-timestamp": String(ts),
      },
      body: Buffer.from(body),
    };
  };

  it("verifies Ed25519 signatures with the raw public key", () => {
    const request = signed({ type: 1 });
    expect(() =>
      verifyDiscordRequest({ ...request, rawBody: request.body, publicKey: key, now: NOW }),
    ).not.toThrow();
    const tampered = { ...request, rawBody: Buffer.from('{"type":2}'), publicKey: key, now: NOW };
    expect(() => verifyDiscordRequest(tampered)).toThrow(ConnectorError);
    expect(() => discordPublicKey("nothex")).toThrow(/64 hex digits/);
  });

  it("answers PING with PONG, defers the command, and refuses the unsigned with 401", async () => {
    const { asked, options } = parts();
    const receive = discordAskReceiver({ ...options, publicKey: async () => key });
    expect(JSON.parse((await receive(signed({ type: 1 }))).body)).toEqual({ type: 1 });
    const unsigned = await receive({ headers: {}, body: Buffer.from('{"type":1}') });
    const stale = await receive(signed({ type: 1 }, Math.floor(NOW / 1000) - 600));
    expect([unsigned.statusCode, stale.statusCode]).toEqual([401, 401]);
    const command = {
      type: 2,
      application_id: "1300000000000000001",
      token: "tok",
      guild_id: "1100000000000000002",
      channel_id: "1100000000000000001",
      member: { user: { id: "1400000000000000001" } },
      data: {
        name: "ask",
        options: [
          { name: "question", value: "@everyone why **grub**" },
          { name: "public", value: true },
        ],
      },
    };
    expect(JSON.parse((await receive(signed(command))).body)).toEqual({
      type: 5,
      data: { flags: 0 },
    });
    expect(asked).toEqual([
      {
        platform: "discord",
        channel: "1100000000000000001",
        words: "everyone why grub",
        guild: "1100000000000000002",
        applicationId: "1300000000000000001",
        token: "tok",
      },
    ]);
    // In a DM (no guild) it is outside the chats answered: an ephemeral line says so.
    const dm = await receive(signed({ ...command, guild_id: undefined }));
    expect(JSON.parse(dm.body)).toMatchObject({ type: 4, data: { flags: 64 } });
    expect((await receive(signed({ ...command, data: { name: "other" } }))).statusCode).toBe(400);
  });
});

describe("the Telegram ask endpoint", () => {
  it("takes /ask and /ask@its-name in a group, and nothing else", async () => {
    const { asked, options } = parts();
    const receive = telegramAskReceiver({
      ...options,
      secretToken: async () => "tok",
      botUsername: "AskBot",
    });
    const update = (text: string, type = "supergroup") => ({
      headers: { "x-telegram-bot-api-secret-token": "tok" },
      body: Buffer.from(
        JSON.stringify({
          update_id: 1,
          message: {
            message_id: 5,
            date: 1,
            chat: { id: -1001, type, username: "ubuntu_help" },
            from: { id: 7 },
            text,
          },
        }),
      ),
    });
    for (const text of ["/ask grub", "/ask@askbot grub", "/ask@OtherBot grub", "/asking x", "hi"])
      expect((await receive(update(text))).statusCode).toBe(200);
    await receive(update("/ask grub", "private"));
    expect(asked).toEqual([
      {
        platform: "telegram",
        channel: "-1001",
        words: "grub",
        chatUsername: "ubuntu_help",
        replyTo: 5,
      },
      {
        platform: "telegram",
        channel: "-1001",
        words: "grub",
        chatUsername: "ubuntu_help",
        replyTo: 5,
      },
    ]);
    const wrong = await receive({ ...update("/ask grub"), headers: {} });
    expect(wrong.statusCode).toBe(401);
  });

  it("tells the asker why a question is not taken in the webhook's response, and is silent outside its chats", async () => {
    const { asked, options } = parts(new AskRateLimit({ perPerson: 1 }, () => NOW));
    const receive = telegramAskReceiver({
      ...options,
      scope: { channels: new Set(["-1001"]), privateChats: false },
      secretToken: async () => "tok",
      command: "find",
    });
    const update = (text: string, chat = -1001) => ({
      headers: { "x-telegram-bot-api-secret-token": "tok" },
      body: Buffer.from(
        JSON.stringify({
          update_id: 1,
          message: {
            message_id: 9,
            date: 1,
            chat: { id: chat, type: "group" },
            from: { id: 7 },
            text,
          },
        }),
      ),
    });
    const answered = async (text: string, chat?: number) =>
      JSON.parse(String((await receive(update(text, chat))).body));
    expect(await answered("/find grub")).toEqual({ ok: true });
    const limited = await answered("/find grub <b>again</b>");
    expect(limited).toEqual({
      method: "sendMessage",
      chat_id: -1001,
      text: expect.stringMatching(/^Too many questions at once: try again in \d+ s\.$/),
      reply_parameters: { message_id: 9, allow_sending_without_reply: true },
    });
    expect((await answered("/find")).text).toBe(
      "Ask with the words to look for, such as: /find how do I reset my password",
    );
    // A chat it is not allowed in hears nothing from it.
    expect(await answered("/find grub", -1002)).toEqual({ ok: true });
    expect(asked).toHaveLength(1);
  });
});

describe("every ask endpoint whose secret cannot be read", () => {
  it("answers 500 without handing the question on, counted and logged by the error's name", async () => {
    const failing = async (): Promise<never> => {
      throw new Error("AccessDenied: arn:aws:secretsmanager:eu-west-1:1:secret:s3cret");
    };
    const receivers = [
      (o: ReturnType<typeof parts>["options"]) =>
        slackAskReceiver({ ...o, signingSecret: failing }),
      (o: ReturnType<typeof parts>["options"]) => discordAskReceiver({ ...o, publicKey: failing }),
      (o: ReturnType<typeof parts>["options"]) =>
        telegramAskReceiver({ ...o, secretToken: failing }),
    ];
    for (const receiver of receivers) {
      const { asked, counts, options } = parts();
      const errors: unknown[] = [];
      const handle = receiver({
        ...options,
        log: { ...options.log, error: (m: string, a: unknown) => void errors.push([m, a]) },
      } as typeof options);
      const response = await handle({ headers: {}, body: Buffer.from("{}") });
      expect(response.statusCode).toBe(500);
      expect(JSON.parse(String(response.body)).error).toMatch(
        /^(signing secret|public key|secret token) unreadable$/,
      );
      expect(asked).toEqual([]);
      expect(counts).toEqual({ AsksReceived: 1, AsksFailed: 1 });
      expect(JSON.stringify(errors)).not.toContain("s3cret");
      expect(errors).toEqual([[expect.stringMatching(/unreadable$/), { error: "Error" }]]);
    }
  });
});
