/**
 * The one conformance suite every history backend passes (the port of the original's
 * `storetest.Run`), plus the behaviour convoseg relies on: arrival order, detached copies, one
 * message per platform id, idempotent clear, lexical listing.
 */

import {
  findCause,
  InvalidConversationIdError,
  InvalidMessageError,
  type Lister,
  type Message,
  NOTHING_WRITTEN,
  type Store,
  textMessage,
  WriteError,
} from "convoseg/history";
import { describe, expect, it } from "vitest";

export interface Capabilities {
  reader: boolean;
  writer: boolean;
  clearer: boolean;
  lister: boolean;
}

export interface Subject {
  store: Partial<Store & Lister>;
  /** Requests sent to the backend so far, where it can tell: proves "before any I/O". */
  requests?: () => number;
}

const aborted = () => AbortSignal.abort(new Error("caller gave up"));
let unique = 0;
/** A fresh conversation id per test, so backends may share state between tests. */
const conversation = (label: string) => `${label} ${++unique} ${Date.now().toString(36)}`;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

export function describeStoreConformance(
  name: string,
  subject: () => Subject | Promise<Subject>,
  want: Capabilities,
): void {
  describe(`${name}: history store conformance`, () => {
    it("has exactly the expected capabilities", async () => {
      const { store } = await subject();
      expect({
        reader: typeof store.read === "function",
        writer: typeof store.write === "function",
        clearer: typeof store.clear === "function",
        lister: typeof store.conversations === "function",
      }).toEqual(want);
    });

    /** Runs `act` and checks that it sent no request to the backend. */
    async function beforeIO(act: (store: Store & Lister) => Promise<unknown>): Promise<unknown> {
      const { store, requests } = await subject();
      const before = requests?.();
      const error = await rejection(act(store as Store & Lister));
      if (requests) expect(requests()).toBe(before);
      return error;
    }

    const writeFailure = (error: unknown): WriteError => {
      expect(error).toBeInstanceOf(WriteError);
      return error as WriteError;
    };

    if (want.reader) {
      it("read rejects an aborted signal before any I/O", async () => {
        const error = await beforeIO((s) => s.read(conversation("r"), { signal: aborted() }));
        expect((error as Error).message).toBe("caller gave up");
      });

      it("read rejects an invalid conversation before any I/O", async () => {
        const error = await beforeIO((s) => s.read(""));
        expect(error).toBeInstanceOf(InvalidConversationIdError);
      });
    }

    if (want.writer) {
      it("write rejects an aborted signal before any I/O, with the zero outcome", async () => {
        const error = writeFailure(
          await beforeIO((s) =>
            s.write(conversation("w"), [textMessage("user", "x")], { signal: aborted() }),
          ),
        );
        expect(error.outcome).toEqual(NOTHING_WRITTEN);
      });

      it("write rejects an invalid conversation before any I/O, with the zero outcome", async () => {
        const error = writeFailure(
          await beforeIO((s) => s.write(" padded", [textMessage("user", "x")])),
        );
        expect(error.outcome).toEqual(NOTHING_WRITTEN);
        expect(findCause(error, InvalidConversationIdError)).toBeDefined();
      });

      it("write rejects an invalid message before any I/O, with the zero outcome", async () => {
        const batch = [
          textMessage("user", "ok"),
          { role: "user", parts: [] } as unknown as Message,
        ];
        const error = writeFailure(await beforeIO((s) => s.write(conversation("w"), batch)));
        expect(error.outcome).toEqual(NOTHING_WRITTEN);
        expect(findCause(error, InvalidMessageError)?.field).toBe("messages[1].parts");
      });

      it("write treats an empty batch as a no-op", async () => {
        const { store } = await subject();
        const id = conversation("empty");
        await expect(store.write?.(id, [])).resolves.toEqual(NOTHING_WRITTEN);
        if (want.lister) expect(await store.conversations?.()).not.toContain(id);
      });
    }

    if (want.clearer) {
      it("clear rejects an aborted signal before any I/O", async () => {
        const error = await beforeIO((s) => s.clear(conversation("c"), { signal: aborted() }));
        expect((error as Error).message).toBe("caller gave up");
      });

      it("clear rejects an invalid conversation before any I/O", async () => {
        const error = await beforeIO((s) => s.clear("x\n"));
        expect(error).toBeInstanceOf(InvalidConversationIdError);
      });
    }

    if (want.lister) {
      it("conversations rejects an aborted signal before any I/O", async () => {
        const error = await beforeIO((s) => s.conversations({ signal: aborted() }));
        expect((error as Error).message).toBe("caller gave up");
      });
    }

    if (!(want.reader && want.writer)) return;

    it("reads back what was written, in argument order, across writes", async () => {
      const { store } = await subject();
      const id = conversation("order");
      const first = [textMessage("system", "be brief"), textMessage("user", "one")];
      const second = [textMessage("assistant", "two"), textMessage("user", "three")];
      await expect(store.write?.(id, first)).resolves.toEqual({ accepted: 2, uncertain: false });
      await store.write?.(id, second);
      expect(await store.read?.(id)).toEqual([...first, ...second]);
      expect(await store.read?.(conversation("unknown"))).toEqual([]);
    });

    it("keeps each message's kind, and a message without one reads back without one", async () => {
      const { store } = await subject();
      const id = conversation("kinds");
      const messages = [
        textMessage("user", "pitti has joined", { id: "k1", ts: 1, kind: "system" }),
        textMessage("user", "build passed", { id: "k2", ts: 2, author: "ci", kind: "bot" }),
        textMessage("user", "thanks", { id: "k3", ts: 3, author: "ana" }),
      ];
      await store.write?.(id, messages);
      const read = (await store.read?.(id)) ?? [];
      expect(read).toEqual(messages);
      expect(read.map((m) => m.kind)).toEqual(["system", "bot", undefined]);
      expect(read[2]).not.toHaveProperty("kind");
    });

    it("keeps the platform fields (userId, replyTo, thread, platform, channelName)", async () => {
      const { store } = await subject();
      const id = conversation("platform");
      const where = { platform: "slack", channelName: "général" };
      const messages = [
        textMessage("user", "how do I pin?", { id: "t1", ts: 1, author: "ana", ...where }),
        textMessage("user", "like this", {
          id: "t2",
          ts: 2,
          author: "bo",
          userId: "U02",
          replyTo: "t1",
          thread: "t1",
          ...where,
        }),
        textMessage("user", "no fields", { id: "t3", ts: 3 }),
      ];
      await store.write?.(id, messages);
      const read = (await store.read?.(id)) ?? [];
      expect(read).toEqual(messages);
      for (const field of ["userId", "replyTo", "thread", "platform", "channelName"]) {
        expect(read[2]).not.toHaveProperty(field);
      }
    });

    it("refuses an empty or non-string platform field before any I/O, naming it", async () => {
      for (const [field, value] of [
        ["userId", ""],
        ["replyTo", 7],
        ["thread", "\ud800"],
        ["channelName", null],
      ] as const) {
        const error = await beforeIO((s) =>
          s.write(conversation("w"), [
            { ...textMessage("user", "x"), [field]: value } as unknown as Message,
          ]),
        );
        expect(findCause(error, InvalidMessageError)?.field).toBe(`messages[0].${field}`);
      }
    });

    it("refuses a kind that is not user, bot or system before any I/O", async () => {
      const error = await beforeIO((s) =>
        s.write(conversation("w"), [
          { ...textMessage("user", "x"), kind: "admin" } as unknown as Message,
        ]),
      );
      expect(findCause(error, InvalidMessageError)?.field).toBe("messages[0].kind");
    });

    it("keeps every part type, metadata and the platform fields", async () => {
      const { store } = await subject();
      const id = conversation("parts");
      const messages: Message[] = [
        {
          role: "user",
          parts: [
            { type: "text", text: "look", metadata: { lang: "en" } },
            { type: "media", mimeType: "image/png", data: new Uint8Array([0, 1, 254, 255]) },
          ],
          metadata: { nested: { list: [1, "two", null, true], empty: {} }, zero: 0 },
          id: "1234567890",
          ts: 1714564800123,
          author: "ana",
        },
        {
          role: "assistant",
          parts: [
            { type: "reasoning", text: "" },
            { type: "tool-call", id: "c1", name: "weather", arguments: '{"city":"Oslo"}' },
          ],
        },
        {
          role: "tool",
          parts: [{ type: "tool-result", callId: "c1", name: "weather", result: "sunny" }],
        },
      ];
      await store.write?.(id, messages);
      expect(await store.read?.(id)).toEqual(messages);
    });

    it("owns its data: caller changes after write or read do not reach it", async () => {
      const { store } = await subject();
      const id = conversation("own");
      const message = textMessage("user", "hello", { metadata: { k: "v" } });
      await store.write?.(id, [message]);
      message.parts[0] = { type: "text", text: "changed" };
      (message.metadata as { k: string }).k = "changed";
      const [read] = (await store.read?.(id)) ?? [];
      read.parts.push({ type: "text", text: "more" });
      expect(await store.read?.(id)).toEqual([
        textMessage("user", "hello", { metadata: { k: "v" } }),
      ]);
    });

    it("stores a platform message written twice (same id) once, keeping the first", async () => {
      const { store } = await subject();
      const id = conversation("dedupe");
      const a = textMessage("user", "a", { id: "m1", ts: 1 });
      const b = textMessage("user", "b", { id: "m2", ts: 2 });
      await store.write?.(id, [a, b]);
      const again = [
        textMessage("user", "a edited", { id: "m1", ts: 1 }),
        textMessage("user", "c", { id: "m3", ts: 3 }),
      ];
      // The outcome names the accepted messages that were already stored, with what is stored.
      await expect(store.write?.(id, again)).resolves.toEqual({
        accepted: 2,
        uncertain: false,
        existing: [{ index: 0, stored: a }],
      });
      await expect(store.write?.(id, [b, b])).resolves.toEqual({
        accepted: 2,
        uncertain: false,
        existing: [
          { index: 0, stored: b },
          { index: 1, stored: b },
        ],
      });
      expect(await store.read?.(id)).toEqual([a, b, again[1]]);
    });

    it("keeps order over a batch larger than any backend page or transaction", async () => {
      const { store } = await subject();
      const id = conversation("large");
      const batch = Array.from({ length: 260 }, (_, i) =>
        textMessage("user", `message ${i}`, { id: `p${i}`, ts: 1_700_000_000_000 + i }),
      );
      await expect(store.write?.(id, batch)).resolves.toEqual({ accepted: 260, uncertain: false });
      expect(await store.read?.(id)).toEqual(batch);
    });

    if (want.clearer) {
      it("clears one conversation, idempotently", async () => {
        const { store } = await subject();
        const [a, b] = [conversation("a"), conversation("b")];
        await store.write?.(a, [textMessage("user", "x", { id: "1" })]);
        await store.write?.(b, [textMessage("user", "y")]);
        await store.clear?.(a);
        await store.clear?.(a);
        await store.clear?.(conversation("never written"));
        expect(await store.read?.(a)).toEqual([]);
        expect(await store.read?.(b)).toEqual([textMessage("user", "y")]);
        await store.write?.(a, [textMessage("user", "x", { id: "1" })]);
        expect(await store.read?.(a)).toHaveLength(1);
      });
    }

    if (want.lister) {
      it("lists unique conversations in lexical order", async () => {
        const { store } = await subject();
        const suffix = conversation("list");
        const ids = [`b ${suffix}`, `a ${suffix}`, `\u{1F600} ${suffix}`, `\uFFFF ${suffix}`];
        for (const id of ids) {
          await store.write?.(id, [textMessage("user", "x")]);
          await store.write?.(id, [textMessage("user", "y")]);
        }
        const listed = ((await store.conversations?.()) ?? []).filter((c) => c.endsWith(suffix));
        expect(listed).toEqual([
          `a ${suffix}`,
          `b ${suffix}`,
          `\uFFFF ${suffix}`,
          `\u{1F600} ${suffix}`,
        ]);
        if (want.clearer) {
          await store.clear?.(`a ${suffix}`);
          expect(await store.conversations?.()).not.toContain(`a ${suffix}`);
        }
      });
    }
  });
}
