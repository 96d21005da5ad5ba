import {
  ConnectorError,
  type ConnectorMetric,
  type IngestLine,
  MemoryEventClaims,
  parseTelegramUpdate,
  telegramReceiver,
  telegramUpdateLines,
  verifyTelegramRequest,
} from "convoseg/connectors";
import { ingestionProblem } from "convoseg/ingest";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const TOKEN = "convoseg_webhook-Secret_0123456789";
const CHAT = -1001234567890;
const DATE = 1_736_478_630;

const message = (over: Record<string, unknown> = {}) => ({
  message_id: 42,
  date: DATE,
  chat: { id: CHAT, type: "supergroup", title: "Help desk" },
  from: { id: 777, is_bot: false, first_name: "Ada", last_name: "Lovelace", username: "ada" },
  text: "hello",
  ...over,
});
const lines = (update: Record<string, unknown>) =>
  telegramUpdateLines(parseTelegramUpdate(JSON.stringify({ update_id: 1, ...update })));

describe("the Telegram secret token", () => {
  it("takes the webhook's token in any header case", () => {
    expect(() =>
      verifyTelegramRequest({ "x-telegram-bot-api-secret-token": TOKEN }, TOKEN),
    ).not.toThrow();
    expect(() =>
      verifyTelegramRequest({ "X-Telegram-Bot-Api-Secret-Token": TOKEN }, TOKEN),
    ).not.toThrow();
  });

  it("refuses a missing token by name, and any other token", () => {
    expect(() => verifyTelegramRequest({}, TOKEN)).toThrow(
      expect.objectContaining({
        name: "ConnectorError",
        code: "CONNECTOR_HEADER_MISSING",
        field: "X-Telegram-Bot-Api-Secret-Token",
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (other) => {
        fc.pre(other !== TOKEN);
        expect(() =>
          verifyTelegramRequest({ "x-telegram-bot-api-secret-token": other }, TOKEN),
        ).toThrow(expect.objectContaining({ code: "CONNECTOR_BAD_SIGNATURE" }));
      }),
    );
  });
});

describe("Telegram updates as ingest lines", () => {
  it("takes a message: chat_id:message_id, the chat id as channel, date as ts, names as the export", () => {
    expect(lines({ message: message() })).toEqual([
      {
        id: `${CHAT}:42`,
        ts: DATE * 1000,
        channel: String(CHAT),
        channelName: "Help desk",
        user: "Ada Lovelace",
        userId: "user777",
        text: "hello",
        kind: "user",
        platform: "telegram",
      },
    ]);
  });

  it("takes reply_to_message as replyTo, a forum topic as thread (its first message no reply)", () => {
    expect(lines({ message: message({ reply_to_message: { message_id: 40 } }) })[0]).toMatchObject({
      replyTo: `${CHAT}:40`,
    });
    const inTopic = lines({
      message: message({
        is_topic_message: true,
        message_thread_id: 7,
        reply_to_message: { message_id: 7 },
      }),
    })[0];
    expect(inTopic).toMatchObject({ thread: `${CHAT}:7` });
    expect(inTopic).not.toHaveProperty("replyTo");
    const replyInTopic = lines({
      message: message({
        is_topic_message: true,
        message_thread_id: 7,
        reply_to_message: { message_id: 41 },
      }),
    })[0];
    expect(replyInTopic).toMatchObject({ thread: `${CHAT}:7`, replyTo: `${CHAT}:41` });
  });

  it("takes a channel post, signed or by the channel, and a bot's message as kind bot", () => {
    const post = lines({
      channel_post: message({
        from: undefined,
        sender_chat: { id: CHAT, title: "Help desk" },
        author_signature: "Grace",
      }),
    })[0];
    expect(post).toMatchObject({ user: "Grace", userId: "channel1234567890", kind: "user" });
    const bot = lines({
      message: message({ from: { id: 9, is_bot: true, first_name: "Deploy" } }),
    });
    expect(bot[0]).toMatchObject({ kind: "bot", user: "Deploy", userId: "user9" });
  });

  it("routes edited_message and edited_channel_post to edits dated by edit_date", () => {
    for (const field of ["edited_message", "edited_channel_post"]) {
      expect(lines({ [field]: message({ text: "fixed", edit_date: DATE + 60 }) })).toEqual([
        {
          op: "edit",
          channel: String(CHAT),
          id: `${CHAT}:42`,
          text: "fixed",
          editedAt: (DATE + 60) * 1000,
        },
      ]);
    }
  });

  it("renders captions, links and media as the export reader does", () => {
    const [line] = lines({
      message: message({
        text: undefined,
        caption: "see the docs",
        caption_entities: [{ type: "text_link", offset: 8, length: 4, url: "https://example.com" }],
        document: { file_name: "crash.log" },
      }),
    });
    expect((line as { text: string }).text).toBe(
      "see the docs (https://example.com)\n[file: crash.log]",
    );
    const [photo] = lines({ message: message({ text: undefined, photo: [{}] }) });
    expect((photo as { text: string }).text).toBe("[photo]");
  });

  it("takes service messages as kind system", () => {
    const [joined] = lines({
      message: message({ text: undefined, new_chat_members: [{ id: 5, first_name: "Grace" }] }),
    });
    expect(joined).toMatchObject({ kind: "system", user: null, text: "Ada Lovelace added Grace" });
    const [topic] = lines({
      message: message({ text: undefined, forum_topic_created: { name: "Billing" } }),
    });
    expect((topic as { text: string }).text).toBe('Ada Lovelace created the topic "Billing"');
  });

  it("ignores other updates, and refuses a body with no update_id by name", () => {
    expect(lines({ callback_query: { id: "1" } })).toEqual([]);
    expect(lines({ message: message({ date: undefined }) })).toEqual([]);
    expect(() => parseTelegramUpdate('{"message":{}}')).toThrow(
      expect.objectContaining({ code: "CONNECTOR_MALFORMED_BODY", field: "update_id" }),
    );
    expect(() => parseTelegramUpdate("nope")).toThrow(ConnectorError);
  });

  it("makes lines ingestion takes as they are", () => {
    for (const update of [
      { message: message() },
      { message: message({ is_topic_message: true, message_thread_id: 7 }) },
      { edited_message: message({ edit_date: DATE + 1 }) },
    ]) {
      for (const line of lines(update)) {
        expect(ingestionProblem(JSON.parse(JSON.stringify(line)))).toBeUndefined();
      }
    }
  });
});

describe("the Telegram receiver", () => {
  function world() {
    const sent: IngestLine[] = [];
    const counts = new Map<ConnectorMetric, number>();
    const logged: unknown[] = [];
    const log = (message: string, attributes: Record<string, unknown>) =>
      logged.push({ message, attributes });
    const receive = telegramReceiver({
      secretToken: async () => TOKEN,
      claims: new MemoryEventClaims(),
      send: async (line) => {
        sent.push(line);
      },
      metrics: { add: (name, value) => counts.set(name, (counts.get(name) ?? 0) + value) },
      log: { info: log, warn: log, error: log },
    });
    return { receive, sent, count: (name: ConnectorMetric) => counts.get(name) ?? 0, logged };
  }
  const request = (update: unknown, token = TOKEN) => ({
    headers: { "x-telegram-bot-api-secret-token": token },
    body: Buffer.from(JSON.stringify(update)),
  });

  it("sends an update's line once: a repeated update_id is acknowledged, not sent", async () => {
    const { receive, sent, count } = world();
    const update = { update_id: 900, message: message({ text: "private words" }) };
    expect((await receive(request(update))).statusCode).toBe(200);
    expect((await receive(request(update))).statusCode).toBe(200);
    expect(sent).toHaveLength(1);
    expect(count("EventsDuplicate")).toBe(1);
  });

  it("refuses a wrong token with 401 and a malformed body with 400, sending nothing", async () => {
    const { receive, sent, count, logged } = world();
    const update = { update_id: 901, message: message({ text: "private words" }) };
    expect((await receive(request(update, "guess"))).statusCode).toBe(401);
    expect(
      (
        await receive({
          headers: { "x-telegram-bot-api-secret-token": TOKEN },
          body: Buffer.from("{"),
        })
      ).statusCode,
    ).toBe(400);
    expect(sent).toEqual([]);
    expect(count("EventsRefused")).toBe(2);
    expect(JSON.stringify(logged)).not.toContain("private");
  });
});
