/**
 * What every history backend's `Editor` does (both stores run it): an edit replaces the text and
 * records `editedAt`, a replay is unchanged, an older edit stale, a deletion redacts the message
 * (reads leave it out, `getMessages` flags it), a deletion of an id not stored leaves a tombstone
 * that refuses the message when it arrives, and a tracked change is applied again until settled.
 */

import { type Message, messageText, type Store, textMessage } from "convoseg/history";
import type { Editor } from "convoseg/history/changes";
import { describe, expect, it } from "vitest";

export type EditableStore = Store &
  Editor & { getMessages(conversation: string, ids: readonly string[]): Promise<Message[]> };

let unique = 0;
const conversation = (label: string) => `${label} ${++unique} ${Date.now().toString(36)}`;

const chat = (id: string, text: string, ts = 1000) =>
  textMessage("user", text, { id, ts, author: "ana", metadata: { thread: "t1" } });

export function describeChangeConformance(name: string, subject: () => Promise<EditableStore>) {
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

    it("reports a change of an id not stored missing; a deletion's tombstone refuses it later", async () => {
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
