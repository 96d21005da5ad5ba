/**
 * What the segmentation tick's reply linker asks of a history store, on every backend: arrivals
 * read with their content (author, id, kind, text; nothing of a deleted message's), and inferred
 * parents recorded on stored messages (never recreating one that is gone), read back with them
 * and with the content of a later read.
 */
import { type Message, textMessage } from "convoseg/history";
import type { Arrival, InferredReply } from "convoseg/history/dynamodb";
import { describe, expect, it } from "vitest";

interface LinkerReads {
  write(conversation: string, messages: readonly Message[]): Promise<unknown>;
  arrivalsAfter(
    conversation: string,
    after: bigint | undefined,
    options?: { links?: boolean; content?: boolean },
  ): AsyncIterable<Arrival>;
  getMessages(conversation: string, ids: readonly string[]): Promise<Message[]>;
  recordInferredReplies(conversation: string, links: readonly InferredReply[]): Promise<void>;
}

let unique = 0;
const conversation = () => `linker ${++unique} ${Date.now().toString(36)}`;

async function arrivals(store: LinkerReads, id: string, content: boolean): Promise<Arrival[]> {
  const read: Arrival[] = [];
  for await (const arrival of store.arrivalsAfter(id, undefined, { links: true, content }))
    read.push(arrival);
  return read;
}

export function describeLinkerReads(name: string, store: () => LinkerReads): void {
  describe(`${name}: what the reply linker reads and records`, () => {
    it("reads each arrival's author, platform id, kind and text only when asked", async () => {
      const s = store();
      const id = conversation();
      await s.write(id, [
        textMessage("user", "how do I mount ntfs?", { id: "a", ts: 1, author: "ana" }),
        textMessage("user", "ana: use ntfs-3g", { id: "b", ts: 2, author: "Bo", userId: "U2" }),
        textMessage("user", "bo joined", { id: "c", ts: 3, author: "bo", kind: "system" }),
      ]);
      const plain = await arrivals(s, id, false);
      expect(plain.map((a) => a.content)).toEqual([undefined, undefined, undefined]);
      expect((await arrivals(s, id, true)).map((a) => a.content)).toEqual([
        { author: "ana", text: "how do I mount ntfs?" },
        { author: "Bo", userId: "U2", text: "ana: use ntfs-3g" },
        { author: "bo", kind: "system", text: "bo joined" },
      ]);
    });

    it("records inferred parents on stored messages, apart from replyTo, and creates none", async () => {
      const s = store();
      const id = conversation();
      await s.write(id, [
        textMessage("user", "question", { id: "q", ts: 1, author: "ana" }),
        textMessage("user", "answer", { id: "r", ts: 2, author: "bo" }),
      ]);
      const links = [
        { id: "r", parent: "q" },
        { id: "gone", parent: "q" },
      ];
      await s.recordInferredReplies(id, links);
      await s.recordInferredReplies(id, links);
      const [q, r] = await s.getMessages(id, ["q", "r"]);
      expect(q).not.toHaveProperty("inferredReplyTo");
      expect(r).toMatchObject({ id: "r", inferredReplyTo: "q" });
      expect(r).not.toHaveProperty("replyTo");
      expect(await s.getMessages(id, ["gone"])).toEqual([]);
      // A tick that links these again (its predecessor died before moving past them) reads the
      // recorded parent with the content, and keeps it.
      expect((await arrivals(s, id, true)).map((a) => a.content)).toEqual([
        { author: "ana", text: "question" },
        { author: "bo", text: "answer", inferredReplyTo: "q" },
      ]);
    });
  });
}
