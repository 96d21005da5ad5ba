/** The registry of knowledge kinds on the memory stores (`./kinds-conformance.ts`). */

import { MemoryAuditStore, MemoryDigestArchive } from "convoseg/erasure";
import { MemoryStore } from "convoseg/history";
import { inResultsTable, KINDS, kindOf } from "convoseg/knowledge";
import { MemoryLedger, MemoryResultStore } from "convoseg/knowledge/store";
import { DEPLOYMENT_PARTITION, ERASURE_AUDIT_PREFIX } from "convoseg/knowledge/store/schema";
import { describe, expect, it } from "vitest";
import { describeKinds } from "./kinds-conformance.js";

describeKinds("the memory stores", async () => {
  const results = new MemoryResultStore();
  const spend = new MemoryLedger();
  const audits = new MemoryAuditStore();
  const history = new MemoryStore();
  return {
    history,
    channelNames: history,
    results,
    spend,
    audits,
    digests: new MemoryDigestArchive(),
    items: async () => [
      ...results.items(),
      ...spend.items(),
      ...audits.all().map((audit) => ({
        channel: DEPLOYMENT_PARTITION,
        item: `${ERASURE_AUDIT_PREFIX}${audit.authorKey}#${audit.requestedAt}`,
        ...audit,
      })),
    ],
    // What the store keeps of each message, deleted ones too, with its channel.
    messageItems: async (written) => {
      const items: Record<string, unknown>[] = [];
      for (const [conversation, ids] of written) {
        for (const message of await history.getMessages(conversation, ids)) {
          items.push({ conversation, ...message });
        }
      }
      return items;
    },
  };
});

describe("the registry", () => {
  it("tells every kind's keys apart: no key of one kind is taken for another's", () => {
    for (const kind of KINDS.filter(inResultsTable)) {
      for (const prefix of kind.storage.prefixes) expect(kindOf(`${prefix}x`)).toBe(kind);
    }
  });

  it("gives every count one kind", () => {
    const names = KINDS.flatMap((kind) => Object.keys(kind.counts));
    expect(new Set(names).size).toBe(names.length);
  });
});
