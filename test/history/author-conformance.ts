/**
 * What every history backend's `AuthorIndex` does (both stores run it): it finds the messages a
 * stored author wrote, page by page, in every conversation or the ones named, never another
 * author's, a deleted one or one without a platform id; and paging is by key, so deleting a
 * page's messages before asking for the next skips and repeats nothing.
 */

import { InvalidMessageError, type Store, textMessage } from "convoseg/history";
import type { AuthoredMessage, AuthorIndex, AuthorQuery, Editor } from "convoseg/history/changes";
import { describe, expect, it } from "vitest";

export type AuthorStore = Store & Editor & AuthorIndex;

let unique = 0;
const conversation = (label: string) => `authors ${label} ${++unique} ${Date.now().toString(36)}`;
const by = (author: string, id: string, ts = 1000) =>
  textMessage("user", `${author} says ${id}`, { id, ts, author });

/** Every page of `author`'s messages, `limit` at a time, with `between` run after each page. */
async function allPages(
  store: AuthorIndex,
  author: AuthorQuery,
  options: { limit?: number; channels?: string[] } = {},
  between: (page: AuthoredMessage[]) => Promise<void> = async () => undefined,
): Promise<AuthoredMessage[]> {
  const found: AuthoredMessage[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await store.authorMessages(author, { ...options, cursor });
    expect(page.messages.length).toBeLessThanOrEqual(options.limit ?? 100);
    found.push(...page.messages);
    await between(page.messages);
    cursor = page.cursor;
    if (cursor === undefined) return found;
  }
  throw new Error("paging never ended");
}

const sorted = (messages: AuthoredMessage[]) =>
  messages.map((m) => `${m.conversationId}|${m.id}`).sort();

export function describeAuthorConformance(name: string, subject: () => Promise<AuthorStore>) {
  describe(`${name}: messages by author`, () => {
    it("finds an author's messages in every conversation, paged, and no one else's", async () => {
      const store = await subject();
      const author = `ana-${++unique}-${Date.now()}`;
      const [a, b] = [conversation("a"), conversation("b")];
      await store.write(a, [by(author, "a1"), by("bo", "a2"), by(author, "a3")]);
      await store.write(b, [by(author, "b1"), textMessage("user", "no id", { author })]);
      await store.write(b, [by("bo", "b2")]);
      const expected = [`${a}|a1`, `${a}|a3`, `${b}|b1`];
      for (const limit of [1, 2, 100]) {
        expect(sorted(await allPages(store, author, { limit }))).toEqual(expected.sort());
      }
      expect(sorted(await allPages(store, author, { channels: [b] }))).toEqual([`${b}|b1`]);
      expect(sorted(await allPages(store, author, { channels: [b, a, b], limit: 1 }))).toEqual(
        expected.sort(),
      );
      expect(await allPages(store, `nobody-${unique}`)).toEqual([]);
    });

    it("leaves deleted messages out, and pages on by key while a page is being deleted", async () => {
      const store = await subject();
      const author = `cy-${++unique}-${Date.now()}`;
      const [a, b] = [conversation("a"), conversation("b")];
      const ids = Array.from({ length: 7 }, (_, i) => `m${i}`);
      await store.write(
        a,
        ids.map((id, i) => by(author, id, 1000 + i)),
      );
      await store.write(b, [by(author, "x1"), by("other", "x2")]);
      await store.change(a, { kind: "delete", id: "m3" });
      const deleted: string[] = [];
      const found = await allPages(store, author, { limit: 2 }, async (page) => {
        for (const m of page) {
          await store.change(m.conversationId, { kind: "delete", id: m.id });
          deleted.push(`${m.conversationId}|${m.id}`);
        }
      });
      const expected = [...ids.filter((id) => id !== "m3").map((id) => `${a}|${id}`), `${b}|x1`];
      expect(sorted(found)).toEqual(expected.sort());
      expect(new Set(deleted).size).toBe(deleted.length);
      expect(await allPages(store, author)).toEqual([]);
      expect(sorted(await allPages(store, "other", { channels: [b] }))).toEqual([`${b}|x2`]);
    });

    it("finds a message stored with a userId by that id only, not by its display name", async () => {
      const store = await subject();
      const [id, other] = [`U1-${++unique}-${Date.now()}`, `U2-${unique}-${Date.now()}`];
      const name = `Ann-${unique}-${Date.now()}`;
      const [a, b] = [conversation("a"), conversation("b")];
      // A Slack-like export: U1 is "Ann"; an older import stored Ann without the id; another
      // person shares the display name.
      const slack = (userId: string, msg: string) =>
        textMessage("user", `${name} says ${msg}`, { id: msg, ts: 1000, author: name, userId });
      await store.write(a, [slack(id, "s1"), by(name, "old1"), slack(other, "s2")]);
      await store.write(b, [slack(id, "s3")]);
      expect(sorted(await allPages(store, { userId: id }, { limit: 1 }))).toEqual(
        [`${a}|s1`, `${b}|s3`].sort(),
      );
      expect(sorted(await allPages(store, name))).toEqual([`${a}|old1`]);
      expect(sorted(await allPages(store, { user: name }))).toEqual([`${a}|old1`]);
      expect(sorted(await allPages(store, [{ userId: id }, { user: name }], { limit: 1 }))).toEqual(
        [`${a}|s1`, `${a}|old1`, `${b}|s3`].sort(),
      );
      expect(sorted(await allPages(store, { userId: id }, { channels: [b] }))).toEqual([`${b}|s3`]);
      // A user id is not the display name of the same text.
      await store.write(b, [by(id, "named-like-an-id")]);
      expect(sorted(await allPages(store, { userId: id }, { channels: [b] }))).toEqual([`${b}|s3`]);
      await store.change(a, { kind: "delete", id: "s1" });
      expect(sorted(await allPages(store, { userId: id }))).toEqual([`${b}|s3`]);
    });

    it("refuses an empty author, a page size out of range and a cursor it did not make", async () => {
      const store = await subject();
      for (const [author, options, field] of [
        ["", {}, "author"],
        [{ userId: "" }, {}, "userId"],
        [[], {}, "author"],
        ["ana", { limit: 0 }, "limit"],
        ["ana", { limit: 1001 }, "limit"],
        ["ana", { cursor: "not-a-cursor" }, "cursor"],
      ] as const) {
        const error = await store.authorMessages(author, options).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidMessageError);
        expect((error as InvalidMessageError).field).toBe(field);
      }
    });
  });
}
