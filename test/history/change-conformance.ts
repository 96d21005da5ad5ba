/**
 * What every history backend's `Editor` does (both stores run it): an edit replaces the text and
 * records `editedAt`, a replay is unchanged, an older edit stale, a deletion redacts the message
 * (reads leave it out, `getMessages` flags it), a change of an id not stored is held for the
 * store's hold (a held deletion refuses the message arriving meanwhile, a held edit is applied
 * to it; after the hold, the message is stored as sent), and a tracked change is applied again
 * until settled.
 */

import { type Message, messageText, type Store, textMessage } from "convoseg/history";
import type { Editor, MessageChange } from "convoseg/history/changes";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

export type EditableStore = Store &
  Editor & { getMessages(conversation: string, ids: readonly string[]): Promise<Message[]> };

/** What a subject is built with: the clock its holds are reckoned by, and their length. */
export interface HoldOptions {
  now: () => number;
  changeHoldHours: number;
}

const HOLD_HOURS = 2;
const HOUR = 3_600_000;

/** A clock a test moves: `at` hours (and `minutes`) after a fixed start. */
function testClock() {
  let time = Date.UTC(2025, 5, 1);
  const start = time;
  return {
    now: () => time,
    at: (hours: number, minutes = 0) => {
      time = start + hours * HOUR + minutes * 60_000;
    },
  };
}

let unique = 0;
const conversation = (label: string) => `${label} ${++unique} ${Date.now().toString(36)}`;

const chat = (id: string, text: string, ts = 1000) =>
  textMessage("user", text, { id, ts, author: "ana", metadata: { thread: "t1" } });

export function describeChangeConformance(
  name: string,
  subject: (hold?: HoldOptions) => Promise<EditableStore>,
) {
  /** A subject on a test clock with a hold of HOLD_HOURS. */
  const held = async () => {
    const clock = testClock();
    return { clock, store: await subject({ now: clock.now, changeHoldHours: HOLD_HOURS }) };
  };

  describe(`${name}: edits and deletions`, () => {
    it("edits a message: new text and editedAt, the rest kept; a replay is unchanged", async () => {
      const store = await subject();
      const c = conversation("edit");
      await store.write(c, [chat("m1", "first"), chat("m2", "other", 2000)]);
      const edit = { kind: "edit" as const, id: "m1", text: "second", editedAt: 5000 };
      expect(await store.change(c, edit)).toEqual({
        status: "applied",
        ts: 1000,
        wasDeleted: false,
      });
      const [edited] = await store.getMessages(c, ["m1"]);
      expect(messageText(edited)).toBe("second");
      expect(edited).toMatchObject({ id: "m1", ts: 1000, author: "ana", editedAt: 5000 });
      expect(await store.change(c, edit)).toEqual({
        status: "unchanged",
        ts: 1000,
        wasDeleted: false,
      });
      expect((await store.read(c)).map(messageText)).toEqual(["second", "other"]);
    });

    it("ignores an edit no newer than the stored version (stale), whatever the order", async () => {
      const store = await subject();
      const c = conversation("stale");
      await store.write(c, [chat("m1", "v0")]);
      await store.change(c, { kind: "edit", id: "m1", text: "v2", editedAt: 3000 });
      for (const older of [
        { kind: "edit" as const, id: "m1", text: "v1", editedAt: 2000 },
        { kind: "edit" as const, id: "m1", text: "other v2", editedAt: 3000 },
      ]) {
        expect((await store.change(c, older)).status).toBe("stale");
      }
      const [stored] = await store.getMessages(c, ["m1"]);
      expect(`${messageText(stored)} ${stored.editedAt}`).toBe("v2 3000");
    });

    it("deletes a message's userId with its author and its channel's name, and keeps where it stood", async () => {
      const store = await subject();
      const c = conversation("delete-platform");
      const where = { replyTo: "m0", thread: "m0", platform: "telegram" };
      // A Telegram private chat is named after the person in it.
      const channelName = "Alice Zorbington";
      await store.write(c, [{ ...chat("m1", "secret"), userId: "4242", channelName, ...where }]);
      await store.change(c, { kind: "delete", id: "m1" });
      const [gone] = await store.getMessages(c, ["m1"]);
      expect(gone).toEqual({
        role: "user",
        parts: [],
        id: "m1",
        ts: 1000,
        deleted: true,
        ...where,
      });
    });

    it("keeps the platform fields through an edit", async () => {
      const store = await subject();
      const c = conversation("edit-platform");
      const fields = { userId: "U1", replyTo: "m0", platform: "slack", channelName: "dev" };
      await store.write(c, [{ ...chat("m1", "first"), ...fields }]);
      await store.change(c, { kind: "edit", id: "m1", text: "second", editedAt: 5000 });
      const [edited] = await store.getMessages(c, ["m1"]);
      expect(edited).toMatchObject({ ...fields, editedAt: 5000 });
      expect(messageText(edited)).toBe("second");
    });

    it("deletes a message: id, ts and kind kept, text, author and metadata gone", async () => {
      const store = await subject();
      const c = conversation("delete");
      await store.write(c, [
        { ...chat("m1", "secret words"), kind: "bot" },
        chat("m2", "stays", 2000),
      ]);
      const deletion = { kind: "delete" as const, id: "m1" };
      expect(await store.change(c, deletion)).toEqual({
        status: "applied",
        ts: 1000,
        wasDeleted: false,
      });
      const [gone, kept] = await store.getMessages(c, ["m1", "m2"]);
      expect(gone).toEqual({
        role: "user",
        parts: [],
        id: "m1",
        ts: 1000,
        kind: "bot",
        deleted: true,
      });
      expect(messageText(kept)).toBe("stays");
      expect((await store.read(c)).map((m) => m.id)).toEqual(["m2"]);
      expect(await store.change(c, deletion)).toEqual({
        status: "unchanged",
        ts: 1000,
        wasDeleted: true,
      });
      const edit = { kind: "edit" as const, id: "m1", text: "back", editedAt: 9000 };
      expect(await store.change(c, edit)).toEqual({
        status: "unchanged",
        ts: 1000,
        wasDeleted: true,
      });
      expect((await store.getMessages(c, ["m1"]))[0].parts).toEqual([]);
    });

    it("keeps a deleted message's arrival: readers of positions still see its id and ts", async () => {
      const store = (await subject()) as EditableStore & {
        arrivalsAfter(c: string, after: bigint | undefined): AsyncIterable<{ id?: string }>;
      };
      const c = conversation("arrival");
      await store.write(c, [chat("m1", "a"), chat("m2", "b", 2000)]);
      await store.change(c, { kind: "delete", id: "m1" });
      const ids: (string | undefined)[] = [];
      for await (const arrival of store.arrivalsAfter(c, undefined)) ids.push(arrival.id);
      expect(ids).toEqual(["m1", "m2"]);
    });

    it("reports a change of an id not stored missing; a held deletion refuses it later", async () => {
      const store = await subject();
      const c = conversation("missing");
      const edit = { kind: "edit" as const, id: "m1", text: "x", editedAt: 5 };
      expect(await store.change(c, edit)).toEqual({ status: "missing", wasDeleted: false });
      expect(await store.change(c, { kind: "delete", id: "m1" })).toEqual({
        status: "missing",
        wasDeleted: false,
      });
      expect(await store.change(c, { kind: "delete", id: "m1" })).toEqual({
        status: "missing",
        wasDeleted: false,
      });
      const outcome = await store.write(c, [chat("m1", "late add"), chat("m2", "fresh", 2000)]);
      expect(outcome.existing?.map((e) => [e.index, e.stored.deleted])).toEqual([[0, true]]);
      expect((await store.read(c)).map((m) => m.id)).toEqual(["m2"]);
      expect(await store.change(c, edit)).toEqual({ status: "missing", wasDeleted: false });
    });

    it("refuses a message whose deletion came first within the hold, and stores it as sent after", async () => {
      const { clock, store } = await held();
      const within = conversation("held-delete");
      const after = conversation("lapsed-delete");
      for (const c of [within, after]) {
        expect(await store.change(c, { kind: "delete", id: "m1" })).toEqual({
          status: "missing",
          wasDeleted: false,
        });
      }
      clock.at(HOLD_HOURS, -1);
      const refused = await store.write(within, [chat("m1", "late add")]);
      expect(refused.existing?.map((e) => [e.index, e.stored.deleted])).toEqual([[0, true]]);
      expect(await store.read(within)).toEqual([]);
      expect(await store.getMessages(within, ["m1"])).toEqual([]);
      clock.at(HOLD_HOURS, 1);
      const outcome = await store.write(after, [chat("m1", "late add")]);
      expect(outcome.existing).toBeUndefined();
      expect((await store.read(after)).map(messageText)).toEqual(["late add"]);
      // Stored now: a deletion applies to it, and it stays deleted.
      expect((await store.change(after, { kind: "delete", id: "m1" })).status).toBe("applied");
      expect((await store.getMessages(after, ["m1"]))[0]).toMatchObject({ deleted: true });
    });

    it("stores a message whose edit came first within the hold edited, and as sent after", async () => {
      const { clock, store } = await held();
      const within = conversation("held-edit");
      const after = conversation("lapsed-edit");
      const edit = { kind: "edit" as const, id: "m1", text: "fixed", editedAt: 5000 };
      for (const c of [within, after]) {
        expect(await store.change(c, edit)).toEqual({ status: "missing", wasDeleted: false });
        // Held, not stored: no reader sees it.
        expect(await store.getMessages(c, ["m1"])).toEqual([]);
        expect(await store.read(c)).toEqual([]);
      }
      clock.at(HOLD_HOURS, -1);
      expect((await store.write(within, [chat("m1", "typo")])).existing).toBeUndefined();
      const [edited] = await store.getMessages(within, ["m1"]);
      expect(edited).toMatchObject({ id: "m1", ts: 1000, author: "ana", editedAt: 5000 });
      expect(messageText(edited)).toBe("fixed");
      // The original re-sent finds the edited message; the edit is a replay.
      const again = await store.write(within, [chat("m1", "typo")]);
      expect(again.existing?.map((e) => messageText(e.stored))).toEqual(["fixed"]);
      expect((await store.change(within, edit)).status).toBe("unchanged");
      clock.at(HOLD_HOURS, 1);
      expect((await store.write(after, [chat("m1", "typo")])).existing).toBeUndefined();
      const [sent] = await store.getMessages(after, ["m1"]);
      expect(messageText(sent)).toBe("typo");
      expect(sent.editedAt).toBeUndefined();
    });

    it("holds the newest edit of an id not stored, and a deletion over any edit", async () => {
      const { store } = await held();
      const newest = conversation("held-newest");
      for (const editedAt of [2000, 4000, 3000]) {
        await store.change(newest, { kind: "edit", id: "m1", text: `v${editedAt}`, editedAt });
      }
      await store.write(newest, [chat("m1", "v0")]);
      const [stored] = await store.getMessages(newest, ["m1"]);
      expect(`${messageText(stored)} ${stored.editedAt}`).toBe("v4000 4000");
      const edit = { kind: "edit" as const, id: "m1", text: "words", editedAt: 9000 };
      const deletion = { kind: "delete" as const, id: "m1" };
      for (const order of [
        [edit, deletion],
        [deletion, edit],
      ]) {
        const c = conversation("held-delete-wins");
        for (const change of order) {
          expect((await store.change(c, change)).status).toBe("missing");
        }
        const outcome = await store.write(c, [chat("m1", "words")]);
        expect(outcome.existing?.map((e) => e.stored)).toEqual([
          { role: "user", parts: [], id: "m1", deleted: true },
        ]);
        expect(await store.read(c)).toEqual([]);
      }
    });

    it("never replaces a stored message: not by a held change, nor by a re-send after the hold", async () => {
      const { clock, store } = await held();
      const c = conversation("never-replaced");
      await store.change(c, { kind: "edit", id: "m1", text: "held", editedAt: 5000 });
      await store.write(c, [chat("m1", "sent")]);
      clock.at(HOLD_HOURS * 3);
      // After the hold the message is stored all the same: changes apply to it, never held.
      const older = { kind: "edit" as const, id: "m1", text: "older", editedAt: 4000 };
      expect((await store.change(c, older)).status).toBe("stale");
      const again = await store.write(c, [chat("m1", "sent")]);
      expect(again.existing?.map((e) => messageText(e.stored))).toEqual(["held"]);
      expect((await store.read(c)).map(messageText)).toEqual(["held"]);
      expect((await store.change(c, { kind: "delete", id: "m1" })).status).toBe("applied");
      clock.at(HOLD_HOURS * 6);
      const deleted = await store.write(c, [chat("m1", "sent")]);
      expect(deleted.existing?.map((e) => [e.stored.deleted, e.stored.ts])).toEqual([[true, 1000]]);
      expect(await store.read(c)).toEqual([]);
    });

    it("ends in the same stored state whatever the order of a message, its edits and its deletion within the hold", async () => {
      const { store } = await held();
      const steps = fc
        .record({
          edits: fc.uniqueArray(
            fc.record({
              text: fc.constantFrom("a", "b", "c"),
              editedAt: fc.integer({ min: 1, max: 50 }),
            }),
            { selector: (edit) => edit.editedAt, maxLength: 3 },
          ),
          deleted: fc.boolean(),
        })
        .chain(({ edits, deleted }) => {
          const all: ("add" | MessageChange)[] = [
            "add",
            ...edits.map((edit) => ({ kind: "edit" as const, id: "m1", ...edit })),
            ...(deleted ? [{ kind: "delete" as const, id: "m1" }] : []),
          ];
          return fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length });
        });
      await fc.assert(
        fc.asyncProperty(steps, async (order) => {
          const c = conversation("any-order");
          for (const step of order) {
            if (step === "add") await store.write(c, [chat("m1", "v0")]);
            else await store.change(c, step);
          }
          const edits = order.filter((step) => step !== "add" && step.kind === "edit");
          const newest = edits.sort((a, b) => b.editedAt - a.editedAt)[0];
          const expected = order.some((step) => step !== "add" && step.kind === "delete")
            ? []
            : [newest === undefined ? "v0" : `${newest.text} ${newest.editedAt}`];
          const read = (await store.read(c)).map((m) =>
            m.editedAt === undefined ? messageText(m) : `${messageText(m)} ${m.editedAt}`,
          );
          expect(read).toEqual(expected);
        }),
        { numRuns: 25 },
      );
    });

    it("refuses a hold that is not a whole number of hours from 1 to 720, naming changeHoldHours", async () => {
      for (const hours of [0, 1.5, 721]) {
        await expect(subject({ now: Date.now, changeHoldHours: hours })).rejects.toThrow(
          `changeHoldHours must be a whole number of hours from 1 to 720 (got ${hours})`,
        );
      }
    });

    it("reports a tracked change applied again until it is settled", async () => {
      const store = await subject();
      const c = conversation("tracked");
      await store.write(c, [chat("m1", "v0")]);
      const edit = { kind: "edit" as const, id: "m1", text: "v1", editedAt: 10 };
      expect((await store.change(c, edit, { track: true })).status).toBe("applied");
      expect((await store.change(c, edit, { track: true })).status).toBe("applied");
      await store.settle(c, edit);
      expect((await store.change(c, edit, { track: true })).status).toBe("unchanged");
      const deletion = { kind: "delete" as const, id: "m1" };
      expect((await store.change(c, deletion, { track: true })).status).toBe("applied");
      // Settling the edit now leaves the deletion's mark.
      await store.settle(c, edit);
      expect((await store.change(c, deletion)).status).toBe("applied");
      await store.settle(c, deletion);
      expect((await store.change(c, deletion)).status).toBe("unchanged");
    });

    it("refuses a write that sets editedAt, naming it, and an invalid change", async () => {
      const store = await subject();
      const c = conversation("invalid");
      await expect(store.write(c, [{ ...chat("m1", "x"), editedAt: 5 }])).rejects.toThrow(
        /messages\[0\]\.editedAt: set by an edit/,
      );
      await expect(
        store.change(c, { kind: "edit", id: "m1", text: "x", editedAt: Number.NaN }),
      ).rejects.toThrow(/editedAt/);
    });
  });
}
