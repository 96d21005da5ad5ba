import {
  CONVERSATION_FROM,
  defaultLinkerModel,
  type LinkDecision,
  LinkerModel,
  type LinkerModelFile,
  type LinkInput,
  linkAll,
  ReplyLinker,
} from "convoseg/linker";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const T0 = Date.UTC(2026, 0, 5, 12);

const NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "gus", "hana"];
const WORDS = [
  "grub",
  "kernel",
  "wifi",
  "driver",
  "nvidia",
  "mount",
  "partition",
  "apt",
  "sources",
  "xorg",
  "sound",
  "pulseaudio",
  "boot",
  "fstab",
  "ssh",
  "firewall",
  "printer",
  "cups",
  "dns",
  "proxy",
];

/** Interleaved chat drawn from a few people, words and addresses, system lines among them. */
const chat = fc
  .array(
    fc.record({
      gap: fc.integer({ min: 0, max: 240_000 }),
      author: fc.integer({ min: 0, max: NAMES.length - 1 }),
      address: fc.option(fc.integer({ min: 0, max: NAMES.length - 1 }), { nil: undefined }),
      words: fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), {
        minLength: 1,
        maxLength: 6,
      }),
      question: fc.boolean(),
      system: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    }),
    { minLength: 1, maxLength: 400 },
  )
  .map((rows) => {
    let ts = T0;
    return rows.map((row, i): LinkInput => {
      ts += row.gap;
      const prefix = row.address === undefined ? "" : `${NAMES[row.address]}: `;
      const text = `${prefix}${row.words.map((w) => WORDS[w]).join(" ")}${row.question ? "?" : ""}`;
      return {
        id: `m${i}`,
        ts,
        author: NAMES[row.author] as string,
        text,
        ...(row.system ? { kind: "system" as const } : {}),
      };
    });
  });

const positionOf = (messages: readonly LinkInput[]) => new Map(messages.map((m, i) => [m.id, i]));

describe("ReplyLinker", () => {
  it("links each message to an earlier person's message within its window, or starts a conversation", () => {
    const window = defaultLinkerModel().window;
    fc.assert(
      fc.property(chat, (messages) => {
        const decisions = linkAll(messages);
        const at = positionOf(messages);
        expect(decisions.map((d) => d.id)).toEqual(messages.map((m) => m.id));
        decisions.forEach((decision, i) => {
          const message = messages[i] as LinkInput;
          if (message.kind === "system") {
            expect(decision).toEqual({
              id: message.id,
              conversation: message.id,
              source: "system",
            });
            return;
          }
          expect(decision.source).toBe("inferred");
          if (decision.parent === undefined) return;
          const parent = at.get(decision.parent) as number;
          expect(parent).toBeLessThan(i);
          expect(messages[parent]?.kind).not.toBe("system");
          const between = messages.slice(parent + 1, i).filter((m) => m.kind !== "system").length;
          expect(between).toBeLessThan(window);
        });
      }),
      { numRuns: 60 },
    );
  });

  it("takes a platform's reply as given and never links to a join or a part", () => {
    const messages: LinkInput[] = [
      { id: "1", ts: T0, author: "alice", text: "how do I mount an ntfs partition?" },
      { id: "2", ts: T0 + 1000, author: "bob", text: "bob has joined", kind: "system" },
      { id: "3", ts: T0 + 2000, author: "carol", text: "anyone tried the new kernel?" },
      { id: "4", ts: T0 + 3000, author: "bob", text: "use ntfs-3g", replyTo: "1" },
      { id: "5", ts: T0 + 4000, author: "dave", text: "bob: welcome" },
    ];
    const decisions = linkAll(messages);
    expect(decisions[1]).toEqual({ id: "2", conversation: "2", source: "system" });
    expect(decisions[3]).toEqual({ id: "4", parent: "1", conversation: "1", source: "platform" });
    expect(decisions[4]?.parent).not.toBe("2");
  });

  it("separates two conversations that alternate line by line when people address each other", () => {
    const lines: [string, string][] = [
      ["alice", "my wifi driver drops every few minutes on the thinkpad"],
      ["carol", "is there a way to make grub show the boot menu longer"],
      ["bob", "alice: which wifi chipset, intel or broadcom?"],
      ["dave", "carol: set GRUB_TIMEOUT in /etc/default/grub then update-grub"],
      ["alice", "bob: intel wifi, the iwlwifi driver"],
      ["carol", "dave: and the boot menu timeout changes after update-grub?"],
      ["bob", "alice: try disabling power saving for the iwlwifi driver"],
      ["dave", "carol: yes, grub reads the timeout at boot"],
      ["alice", "bob: thanks, the wifi stays up now"],
      ["carol", "dave: thanks, grub waits now"],
    ];
    const messages = lines.map(([author, text], i) => ({
      id: String(i),
      ts: T0 + i * 20_000,
      author,
      text,
    }));
    const conversation = conversations(messages, linkAll(messages));
    const of = (name: string) =>
      new Set(messages.filter((m) => m.author === name).map((m) => conversation.get(m.id)));
    const wifi = new Set([...of("alice"), ...of("bob")]);
    const grub = new Set([...of("carol"), ...of("dave")]);
    expect(wifi.size).toBe(1);
    expect(grub.size).toBe(1);
    expect([...wifi][0]).not.toBe([...grub][0]);
  });

  it("links nothing more than 6 hours back: after a quiet spell a message starts a conversation", () => {
    const exchange = (gap: number): LinkDecision[] =>
      linkAll([
        { id: "1", ts: T0, author: "alice", text: "my wifi driver drops every few minutes" },
        { id: "2", ts: T0 + 60_000, author: "bob", text: "alice: which wifi chipset?" },
        { id: "3", ts: T0 + 60_000 + gap, author: "alice", text: "bob: intel, the iwlwifi driver" },
      ]);
    expect(exchange(30 * 60_000)[2]?.parent).toBe("2");
    expect(exchange(5.9 * 3_600_000)[2]?.parent).toBe("2");
    expect(exchange(6.1 * 3_600_000)[2]).toMatchObject({ id: "3", conversation: "3" });
    expect(exchange(6.1 * 3_600_000)[2]?.parent).toBeUndefined();
  });

  it("starts fewer conversations as the start bias falls", () => {
    fc.assert(
      fc.property(chat, (messages) => {
        const starts = (startBias: number) =>
          linkAll(messages, { startBias }).filter((d) => d.source === "inferred" && !d.parent)
            .length;
        expect(starts(-1000)).toBeLessThanOrEqual(starts(0));
        expect(starts(0)).toBeLessThanOrEqual(starts(1000));
        const people = messages.filter((m) => m.kind !== "system").length;
        expect(starts(1000)).toBe(people);
        expect(starts(-1000)).toBe(Math.min(people, 1));
      }),
      { numRuns: 20 },
    );
  });

  it("refuses a start bias that is not a finite number", () => {
    expect(() => new ReplyLinker({ startBias: Number.NaN })).toThrow(/startBias/);
  });
});

describe("LinkerModel", () => {
  const shipped = (): LinkerModelFile => {
    const model = defaultLinkerModel();
    return {
      format: "convoseg-linker/1",
      hidden: model.hidden,
      window: model.window,
      query: [...model.query],
      content: [...model.content],
      pair: [...model.pair],
      bias: [...model.bias],
      output: [...model.output],
      startBias: model.startBias,
      documents: 10,
      vocabulary: "grub kernel",
      frequencies: [5, 1],
      provenance: {},
    };
  };

  it("names the block whose size does not match the hidden layer", () => {
    expect(() => new LinkerModel({ ...shipped(), pair: [1, 2, 3] })).toThrow(
      /pair holds 3 weights, expected \d+/,
    );
    expect(() => new LinkerModel({ ...shipped(), frequencies: [5] })).toThrow(
      /2 vocabulary words but 1 frequencies/,
    );
  });

  it("reads a model file from before the conversation features as if their weights were zero", () => {
    const file = shipped();
    const h = file.hidden;
    const older = { ...file, pair: file.pair.slice(0, h * CONVERSATION_FROM) };
    const model = new LinkerModel(older);
    expect(model.pair.length).toBe(file.pair.length);
    expect([...model.pair.subarray(0, h * CONVERSATION_FROM)]).toEqual([
      ...Float32Array.from(older.pair),
    ]);
    expect(model.pair.subarray(h * CONVERSATION_FROM).every((w) => w === 0)).toBe(true);
  });

  it("counts a word it has never seen as rarer than any it has", () => {
    const model = new LinkerModel(shipped());
    expect(model.lookup("grub")).toBeCloseTo(Math.log(2));
    expect(model.lookup("kernel")).toBeCloseTo(Math.log(10));
    expect(model.lookup("zorbington")).toBeGreaterThanOrEqual(model.lookup("kernel"));
  });

  it("is small enough to ship", () => {
    const model = defaultLinkerModel();
    const weights =
      model.query.length + model.content.length + model.pair.length + model.output.length;
    expect(weights).toBeLessThan(100_000);
  });
});

function conversations(
  messages: readonly LinkInput[],
  decisions: readonly LinkDecision[],
): Map<string, string> {
  const root = new Map<string, string>();
  decisions.forEach((decision, i) => {
    const id = (messages[i] as LinkInput).id;
    root.set(
      id,
      decision.parent === undefined ? id : (root.get(decision.parent) ?? decision.parent),
    );
  });
  return root;
}
