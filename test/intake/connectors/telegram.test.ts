import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type ChatScope,
  ConnectorError,
  type ConnectorMetric,
  type IngestLine,
  MAX_EVENT_BODY_BYTES,
  MemoryEventClaims,
  parseTelegramUpdate,
  telegramReceiver,
  telegramUpdateLines,
  verifyTelegramRequest,
} from "convoseg/connectors";
import { ingestionProblem } from "convoseg/ingest";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { byId, fixture, readAll } from "../exports/support.js";

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

  it("takes a public supergroup's or channel's username for its links, never a private chat's", () => {
    const chat = { id: CHAT, type: "supergroup", title: "Help desk", username: "ubuntu_help" };
    expect(lines({ message: message({ chat }) })[0]).toMatchObject({
      chatUsername: "ubuntu_help",
    });
    expect(lines({ message: message({ chat: { ...chat, type: "channel" } }) })[0]).toMatchObject({
      chatUsername: "ubuntu_help",
    });
    // A private chat's username is the person's; a name not of a username's shape is left out.
    const privateChat = { id: 777, type: "private", first_name: "Ada", username: "ada_l" };
    for (const other of [
      privateChat,
      { ...chat, type: undefined },
      { ...chat, username: "a/../b" },
      { ...chat, username: 5 },
    ]) {
      expect(
        lines({ message: message({ chat: other }) })[0],
        JSON.stringify(other),
      ).not.toHaveProperty("chatUsername");
    }
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
    // A post as the chat itself: the chat's title, with the signature of who wrote it.
    expect(post).toMatchObject({
      user: "Help desk (Grace)",
      userId: "channel1234567890",
      kind: "user",
    });
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

  it("puts each text_link's URL after its label in one pass, inline, however many there are", () => {
    // 20,000 one-letter links: inserting each into the whole text took minutes.
    const count = 20_000;
    const text = "ab ".repeat(count);
    const entities = Array.from({ length: count }, (_, i) => ({
      type: "text_link",
      offset: 3 * i,
      length: 2,
      url: `https://e.example/${i}`,
    }));
    // Out of order, with one ending past the text and one URL that tries to start a line.
    entities.reverse();
    entities.push({ type: "text_link", offset: 3 * count, length: 5, url: "https://past.example" });
    entities[0] = { ...entities[0], url: "https://e.example/last\n<@everyone>" } as never;
    const [line] = lines({ message: message({ text, entities }) });
    const rendered = (line as { text: string }).text;
    const expected = Array.from(
      { length: count },
      (_, i) =>
        `ab (${i === count - 1 ? "https://e.example/last <@everyone>" : `https://e.example/${i}`})`,
    ).join(" ");
    expect(rendered).toBe(`${expected} `);
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
      { message: message({ chat: { id: CHAT, type: "supergroup", username: "ubuntu_help" } }) },
      { message: message({ is_topic_message: true, message_thread_id: 7 }) },
      { edited_message: message({ edit_date: DATE + 1 }) },
    ]) {
      for (const line of lines(update)) {
        expect(ingestionProblem(JSON.parse(JSON.stringify(line)))).toBeUndefined();
      }
    }
  });
});

/** Bot API updates as Telegram sends them, by case (test/intake/connectors/fixtures/telegram). */
const updates = (file: string): Record<string, Record<string, unknown>> =>
  JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "telegram", file), "utf8"));
const SERVICE = updates("service.json");
const CONTENT = updates("content.json");
const lineOf = (update: Record<string, unknown>) =>
  telegramUpdateLines(parseTelegramUpdate(JSON.stringify(update)))[0] as Record<string, unknown>;
const CONTROL = /\p{Cc}/u;

describe("Telegram service messages, live", () => {
  const ADA = "Ada Lovelace";
  const expected: Record<string, string> = {
    forum_topic_created: `${ADA} created the topic "Billing"`,
    forum_topic_edited: `${ADA} renamed the topic to "Billing and invoices"`,
    forum_topic_closed: `${ADA} closed the topic`,
    forum_topic_reopened: `${ADA} reopened the topic`,
    video_chat_scheduled: `${ADA} scheduled a video chat for 2025-01-11 00:00 UTC`,
    video_chat_started: `${ADA} started a video chat`,
    video_chat_ended: `${ADA} ended the video chat (1 h 2 min)`,
    video_chat_participants_invited: `${ADA} invited Grace Hopper to the video chat`,
    migrate_to_chat_id: `${ADA} upgraded the group to a supergroup`,
    migrate_from_chat_id: `${ADA} upgraded the group to this supergroup`,
    giveaway_created: "Announcements started a giveaway",
    giveaway: "Announcements announced a giveaway for 3 winners: a T-shirt",
    giveaway_winners: "Announcements announced the giveaway's winners (2)",
    giveaway_completed: "Announcements completed the giveaway (3 winners)",
    pinned_message: `${ADA} pinned a message`,
    new_chat_members_joined: "Grace Hopper joined the group",
    new_chat_members_added: `${ADA} added Grace Hopper`,
    left_chat_member_left: "Grace Hopper left the group",
    left_chat_member_removed: `${ADA} removed Grace Hopper`,
    new_chat_title: `${ADA} renamed the group to "Help desk (EU)"`,
    new_chat_photo: `${ADA} changed the group photo`,
    delete_chat_photo: `${ADA} removed the group photo`,
    message_auto_delete_timer_changed: `${ADA} set messages to auto-delete after 1 day`,
    boost_added: `${ADA} boosted the group 2 times`,
    supergroup_chat_created: `${ADA} created the group "Help desk"`,
  };

  it("covers every case of the fixture", () => {
    expect(Object.keys(SERVICE).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))("takes %s as a system line: %s", (name, text) => {
    const line = lineOf(SERVICE[name]);
    const byChannel = name.startsWith("giveaway");
    expect(line).toMatchObject({
      kind: "system",
      user: null,
      userId: byChannel
        ? "channel9876543210"
        : name.endsWith("_left") || name.endsWith("_joined")
          ? "user778"
          : "user777",
      text,
    });
    expect(ingestionProblem(JSON.parse(JSON.stringify(line)))).toBeUndefined();
  });

  it("words each event as the export reader words the same event in result.json", async () => {
    const { messages } = await readAll([fixture("telegram", "service.json")]);
    const imported: Record<string, number> = {
      forum_topic_created: 101,
      forum_topic_edited: 102,
      video_chat_scheduled: 103,
      video_chat_started: 104,
      video_chat_ended: 105,
      video_chat_participants_invited: 106,
      migrate_from_chat_id: 107,
      pinned_message: 108,
      new_chat_members_joined: 109,
      new_chat_members_added: 110,
      left_chat_member_left: 111,
      left_chat_member_removed: 112,
      new_chat_title: 113,
      new_chat_photo: 114,
      delete_chat_photo: 115,
      message_auto_delete_timer_changed: 116,
      boost_added: 117,
    };
    for (const [name, id] of Object.entries(imported)) {
      const read = byId(messages, `-1001234567890:${id}`);
      const live = lineOf(SERVICE[name]);
      expect({
        name,
        text: live.text,
        kind: live.kind,
        user: live.user,
        userId: live.userId,
      }).toEqual({
        name,
        text: read.text,
        kind: read.kind,
        user: read.user,
        userId: read.userId,
      });
    }
  });

  it("words the rarer service fields in plain words too", () => {
    const said = (fields: Record<string, unknown>) =>
      lineOf({ update_id: 3, message: message({ text: undefined, ...fields }) }).text;
    expect(said({ gift: { gift: { id: "1", star_count: 50 } } })).toBe("Ada Lovelace sent a gift");
    expect(said({ refunded_payment: { currency: "XTR", total_amount: 5 } })).toBe(
      "Ada Lovelace was refunded a payment",
    );
    expect(said({ web_app_data: { data: "x", button_text: "Open" } })).toBe(
      "Ada Lovelace sent data from a web app",
    );
    expect(said({ checklist_tasks_done: { marked_as_done_task_ids: [1] } })).toBe(
      "Ada Lovelace marked checklist tasks as done",
    );
  });

  it("never puts a control character of a name or title into the sentence", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (name, title) => {
        const update = {
          update_id: 1,
          message: message({
            text: undefined,
            from: { id: 5, first_name: name },
            forum_topic_created: { name: title },
          }),
        };
        const text = lineOf(update).text as string;
        expect(CONTROL.test(text)).toBe(false);
      }),
    );
    const renamed = lineOf({
      update_id: 2,
      message: message({ text: undefined, new_chat_title: "EU\n\u001b[31mfake line" }),
    });
    expect(renamed.text).toBe('Ada Lovelace renamed the group to "EU [31mfake line"');
  });
});

describe("Telegram content without text, live", () => {
  it.each([
    ["dice", "[dice 🎲 4]"],
    ["story", "[story]"],
    ["sticker_without_emoji", "[sticker]"],
    ["video_note", "[video message]"],
    ["contact", "[contact: Grace Hopper]"],
    ["location", "[location]"],
    ["venue", "[place: Tour Eiffel]"],
    ["game", "[game: Lumberjack]"],
    ["paid_media", "[paid media]"],
    ["unknown", "[unsupported message]"],
  ])("shows %s as %s, never an empty line", (name, text) => {
    const line = lineOf(CONTENT[name]);
    expect(line).toMatchObject({ kind: "user", user: "Ada Lovelace", userId: "user777", text });
  });

  it("shows a contact, a location, a place and a game as the export reader shows them", async () => {
    const { messages } = await readAll([fixture("telegram", "service.json")]);
    for (const [name, id] of [
      ["contact", 120],
      ["location", 121],
      ["venue", 122],
      ["game", 123],
    ] as const) {
      expect([name, lineOf(CONTENT[name]).text]).toEqual([
        name,
        byId(messages, `-1001234567890:${id}`).text,
      ]);
    }
  });

  it("takes null in place of a content object without failing the request", () => {
    for (const field of ["dice", "sticker", "invoice", "document", "contact", "game", "venue"]) {
      const [line] = lines({ message: message({ text: undefined, [field]: null }) });
      expect((line as { text: string }).text).not.toBe("");
    }
  });

  it("names a contact without its phone number, and no control character of its name", () => {
    const [line] = lines({
      message: message({
        text: undefined,
        contact: { phone_number: "+15550100", first_name: "Gr\u0007ace\r\nHopper" },
      }),
    });
    expect((line as { text: string }).text).toBe("[contact: Gr ace Hopper]");
  });
});

describe("an anonymous group admin, live", () => {
  it("is the chat it speaks as (its title), with its author signature when present", () => {
    expect(lineOf(CONTENT.anonymous_admin_signed)).toMatchObject({
      kind: "user",
      user: "Help desk (Grace)",
      userId: "channel1234567890",
      text: "Maintenance tonight at 22:00",
    });
    expect(lineOf(CONTENT.anonymous_admin)).toMatchObject({
      kind: "user",
      user: "Help desk",
      userId: "channel1234567890",
    });
  });

  it("is named as the export reader names the same message in result.json", async () => {
    const { messages } = await readAll([fixture("telegram", "service.json")]);
    for (const [name, id] of [
      ["anonymous_admin_signed", 118],
      ["anonymous_admin", 119],
    ] as const) {
      const read = byId(messages, `-1001234567890:${id}`);
      const live = lineOf(CONTENT[name]);
      expect([live.user, live.userId, live.kind]).toEqual([read.user, read.userId, read.kind]);
    }
  });
});

describe("the Telegram receiver", () => {
  function world(scope?: ChatScope) {
    const sent: IngestLine[] = [];
    const counts = new Map<ConnectorMetric, number>();
    const logged: unknown[] = [];
    const log = (message: string, attributes: Record<string, unknown>) =>
      logged.push({ message, attributes });
    const receive = telegramReceiver({
      secretToken: async () => TOKEN,
      ...(scope === undefined ? {} : { scope }),
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

  it("takes only the chats it is given, and private chats only when told to", async () => {
    const open = world();
    const privately = {
      update_id: 903,
      message: message({ chat: { id: 77, type: "private", first_name: "Stranger" } }),
    };
    expect((await open.receive(request(privately))).statusCode).toBe(200);
    expect((await open.receive(request({ update_id: 904, message: message() }))).statusCode).toBe(
      200,
    );
    expect(open.sent.map((l) => l.channel)).toEqual([String(CHAT)]);
    expect(open.count("EventsIgnored")).toBe(1);
    const listed = world({ channels: new Set(["-100999"]), privateChats: true });
    await listed.receive(request({ update_id: 905, message: message() }));
    await listed.receive(request(privately));
    expect(listed.sent.map((l) => l.channel)).toEqual([]);
    const withPrivate = world({ privateChats: true });
    await withPrivate.receive(request(privately));
    expect(withPrivate.sent.map((l) => l.channel)).toEqual(["77"]);
  });

  it("refuses a body over the bound with 413 before reading the token or parsing it", async () => {
    const { receive, sent, count } = world();
    const update = { update_id: 902, message: message({ text: "x".repeat(MAX_EVENT_BODY_BYTES) }) };
    const response = await receive(request(update));
    expect(response.statusCode).toBe(413);
    expect(JSON.parse(response.body)).toEqual({ error: "CONNECTOR_BODY_TOO_LARGE" });
    expect(sent).toEqual([]);
    expect(count("EventsRefused")).toBe(1);
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
