/**
 * An erasure empties the segmentation tick's reply linker window in each channel the person
 * wrote in (docs/erasure.md): chat of theirs and others' in a `linked` channel, ticks until the
 * window holds their messages, the real erasure, one tick; then the window holds nothing of
 * them (no message id, and it is the window of a linker that saw only what came after), and
 * the channel they did not write in keeps its window. Run on the memory stores and on DynamoDB
 * Local (`./linker-reset.test.ts`, `./linker-reset.emulator.test.ts`).
 */
import { type EraseRequest, type ErasureDependencies, eraseUser } from "convoseg/erasure";
import type { DynamoDbStore } from "convoseg/history/dynamodb";
import { ingest } from "convoseg/ingest";
import { ReplyLinker } from "convoseg/linker";
import { runTick, type TickDependencies } from "convoseg/pipeline";
import type { ChannelStore } from "convoseg/pipeline/store";
import { describe, expect, it } from "vitest";
import { quietTick } from "../../support/quiet-tick.js";

const MINUTE = 60_000;
const T0 = Date.UTC(2025, 0, 6);

/** A deployment's stores: ingestion's history store (with positions), the tick's channels. */
export interface LinkerResetFixture {
  /** `MemoryStore` or `DynamoDbStore`: both ingest and are read by the tick. */
  history: Pick<DynamoDbStore, keyof TickDependencies["messages"] | "write" | "change" | "settle">;
  channels: ChannelStore;
  /** The real eraser over the same tables, its clock `now`. */
  erasure(now: () => number): ErasureDependencies;
}

const PERSON = { user: "zorbington", userId: "UZ0RB8" };

/** Chat in `channel` from `start`, a minute apart, ids `prefix…`; `with` the person or not. */
function chat(channel: string, prefix: string, start: number, people: string[]) {
  return Array.from({ length: 8 }, (_, i) => {
    const user = people[i % people.length];
    return {
      id: `${prefix}${i}`,
      ts: start + i * MINUTE,
      channel,
      user,
      ...(user === PERSON.user ? { userId: PERSON.userId } : {}),
      text:
        user === PERSON.user
          ? `the quuxolator frobnitz ${i} is mine, ${people[0]}`
          : `${user} asks about the bootloader ${i}, @${PERSON.user}?`,
    };
  });
}

/** Whether a linker window holds a message id (ids are kept in clear, words as hashes). */
const holds = (linker: string | undefined, id: string) =>
  linker !== undefined && Buffer.from(linker, "base64").includes(Buffer.from(id));

export function describeLinkerReset(
  name: string,
  make: () => Promise<LinkerResetFixture>,
  timeout = 30_000,
): void {
  describe(`${name}: an erasure resets the reply linker`, () => {
    it(
      "leaves no window holding the person's messages once a tick ran after it",
      async () => {
        const fixture = await make();
        const clock = { now: T0 };
        const deps = quietTick({
          messages: fixture.history,
          channels: fixture.channels,
          now: () => clock.now,
        });
        const tick = async (after: number) => {
          clock.now += after;
          await runTick(deps);
        };
        const state = async (channel: string) =>
          (await fixture.channels.load(channel)).record.state;
        const [theirs, others] = ["lr-theirs", "lr-others"];
        await ingest(fixture.history, [
          ...chat(theirs, "a", T0, ["alice", PERSON.user, "bob"]),
          ...chat(others, "a", T0, ["alice", "bob"]),
        ]);
        await tick(10 * MINUTE);
        const personIds = chat(theirs, "a", T0, ["alice", PERSON.user, "bob"])
          .filter((m) => m.user === PERSON.user)
          .map((m) => m.id);
        expect(personIds.length).toBeGreaterThan(1);
        for (const id of personIds) expect(holds((await state(theirs)).linker, id), id).toBe(true);
        const othersWindow = (await state(others)).linker;
        expect(othersWindow).toBeDefined();

        const request: EraseRequest = { userId: PERSON.userId, requestedBy: "dpo" };
        const outcome = await eraseUser(
          fixture.erasure(() => clock.now),
          request,
        );
        expect(outcome).toMatchObject({ done: true, counts: { messages: personIds.length } });
        // The channel is due again at once, and the next tick drops the window.
        expect(await fixture.channels.earliestDue()).toBeLessThanOrEqual(clock.now);
        await tick(MINUTE);
        const reset = await state(theirs);
        for (const id of personIds) expect(holds(reset.linker, id), id).toBe(false);
        expect(reset.linker).toBe(new ReplyLinker().snapshot());
        expect(reset.linkerResetSeen).toBeDefined();
        // A channel they did not write in keeps its window.
        expect((await state(others)).linker).toBe(othersWindow);

        // What comes after is linked from the empty window, as by a linker that saw only it.
        const later = chat(theirs, "b", clock.now, ["alice", "bob"]);
        await ingest(fixture.history, later);
        await tick(10 * MINUTE);
        const fresh = new ReplyLinker();
        for (const m of later) fresh.link({ id: m.id, ts: m.ts, author: m.user, text: m.text });
        const after = await state(theirs);
        expect(after.linker).toBe(fresh.snapshot());
        for (const id of personIds) expect(holds(after.linker, id), id).toBe(false);
      },
      timeout,
    );
  });
}
