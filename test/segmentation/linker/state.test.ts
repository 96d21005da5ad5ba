import {
  defaultLinkerModel,
  type LinkDecision,
  LinkerModel,
  type LinkerModelFile,
  type LinkInput,
  MAX_LINKER_STATE_BYTES,
  ReplyLinker,
} from "convoseg/linker";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import modelFile from "../../../lib/segmentation/linker/linker-model.json" with { type: "json" };
import { MAX_WORDS, readCues } from "../../../lib/segmentation/linker/text.js";
import { MAX_MENTIONS, Window } from "../../../lib/segmentation/linker/window.js";

const T0 = Date.UTC(2026, 0, 5, 12);

const PEOPLE = ["alice", "bob", "carol", "dave", "erin", "frank", "gus", "hana", "zoë", "李雷"];
/** How a person's name shows: as is, decorated the IRC way, or in capitals. */
const SHOWN = [
  (n: string) => n,
  (n: string) => `${n}_`,
  (n: string) => `|${n}|`,
  (n: string) => n.toUpperCase(),
  (n: string) => `${n}-away`,
];
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
  "zorbington",
  "quuxify",
];

const often = <T>(usual: fc.Arbitrary<T>, rare: fc.Arbitrary<T>, odds = 6) =>
  fc.oneof({ arbitrary: usual, weight: odds }, { arbitrary: rare, weight: 1 });

/**
 * Interleaved chat: people under their platform id or only a name, renamed now and then (the same
 * id under another name), addressing each other as `nick:`, `@nick`, `<@id>` or in passing;
 * platform replies to earlier or unknown messages, system lines, bots, ids too long to keep,
 * clocks that step back, and lines with more words than a message keeps.
 */
const chat = (maxLength: number) =>
  fc
    .array(
      fc.record({
        gap: often(fc.integer({ min: 0, max: 240_000 }), fc.integer({ min: -5_000, max: 0 })),
        person: fc.integer({ min: 0, max: PEOPLE.length - 1 }),
        shown: often(fc.constant(0), fc.integer({ min: 1, max: SHOWN.length - 1 }), 3),
        withId: fc.boolean(),
        address: fc.option(
          fc.record({
            person: fc.integer({ min: 0, max: PEOPLE.length - 1 }),
            shown: often(fc.constant(0), fc.integer({ min: 1, max: SHOWN.length - 1 }), 3),
            style: fc.integer({ min: 0, max: 3 }),
          }),
          { nil: undefined },
        ),
        words: often(
          fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 1, maxLength: 6 }),
          fc.array(fc.integer({ min: 0, max: 999 }), { minLength: 20, maxLength: 40 }),
        ),
        question: fc.boolean(),
        kind: often(
          fc.constant("user" as const),
          fc.constantFrom("system" as const, "bot" as const),
        ),
        reply: often(
          fc.constant(undefined),
          fc.oneof(
            fc.integer({ min: 1, max: 150 }),
            fc.constantFrom("elsewhere", "far".repeat(80)),
          ),
          8,
        ),
        id: often(fc.constant("plain"), fc.constantFrom("long", "again", "fraction"), 12),
      }),
      { minLength: 1, maxLength, size: "max" },
    )
    .map((rows) => {
      let ts = T0;
      return rows.map((row, i): LinkInput => {
        ts += row.gap;
        const name = PEOPLE[row.person] as string;
        const author = (SHOWN[row.shown] as (n: string) => string)(name);
        let text = row.words
          .map((w) => WORDS[w] ?? `w${w}`)
          .join(" ")
          .concat(row.question ? "?" : "");
        if (row.address !== undefined) {
          const target = PEOPLE[row.address.person] as string;
          const nick = (SHOWN[row.address.shown] as (n: string) => string)(target);
          text = [
            `${nick}: ${text}`,
            `@${nick} ${text}`,
            `<@U${row.address.person}> ${text}`,
            `${text} ask ${nick}`,
          ][row.address.style] as string;
        }
        const id =
          row.id === "long"
            ? `m${i}-${"x".repeat(210)}`
            : row.id === "again"
              ? `m${i >> 1}`
              : `m${i}`;
        const replyTo =
          row.reply === undefined
            ? undefined
            : typeof row.reply === "number"
              ? `m${Math.max(0, i - row.reply)}`
              : row.reply;
        return {
          id,
          ts: row.id === "fraction" ? ts + 0.5 : ts,
          author,
          ...(row.withId ? { authorId: `U${row.person}` } : {}),
          text,
          ...(row.kind === "user" ? {} : { kind: row.kind }),
          ...(replyTo === undefined ? {} : { replyTo }),
        };
      });
    });

/** The shipped weights over a window of `window` messages, so that short chats pass it often. */
const narrow = (window: number) => new LinkerModel({ ...(modelFile as LinkerModelFile), window });

/**
 * Links `messages` with one linker that never stops and one snapshotted, serialized and restored
 * before each message whose index is in `splits`; the states must agree wherever taken.
 */
function resumedAt(
  messages: readonly LinkInput[],
  splits: ReadonlySet<number>,
  model: LinkerModel,
) {
  const live = new ReplyLinker({ model });
  let resumed = new ReplyLinker({ model });
  const whole: LinkDecision[] = [];
  const pieces: LinkDecision[] = [];
  messages.forEach((message, i) => {
    if (splits.has(i)) {
      const state = resumed.snapshot();
      expect(state).toBe(live.snapshot());
      resumed = ReplyLinker.restore(JSON.parse(JSON.stringify(state)), { model });
      expect(resumed.snapshot()).toBe(state);
    }
    whole.push(live.link(message));
    pieces.push(resumed.link(message));
  });
  return { whole, pieces };
}

/** Long chats shrink slowly: a failure is reported as far as it shrank in this time. */
const SHRINKING = 20_000;

const splitsOf = (cuts: readonly number[], length: number) =>
  new Set(cuts.map((c) => c % (length + 1)));

describe("ReplyLinker.snapshot and restore", () => {
  it("decide every message after any number of restarts as a linker that never stopped", () => {
    const model = defaultLinkerModel();
    fc.assert(
      fc.property(
        chat(400),
        fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
        (messages, cuts) => {
          const { whole, pieces } = resumedAt(messages, splitsOf(cuts, messages.length), model);
          expect(pieces).toStrictEqual(whole);
        },
      ),
      { numRuns: 25, interruptAfterTimeLimit: SHRINKING },
    );
  });

  it("do so too where the window turns over many times (a window of 7)", () => {
    const model = narrow(7);
    fc.assert(
      fc.property(
        chat(160),
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        (messages, cuts) => {
          const { whole, pieces } = resumedAt(messages, splitsOf(cuts, messages.length), model);
          expect(pieces).toStrictEqual(whole);
        },
      ),
      { numRuns: 150, interruptAfterTimeLimit: SHRINKING },
    );
  });

  it("decide as one that never stopped after runs that die having recorded their parents", () => {
    // A tick records each decision's parent before its state: a run that dies in between is
    // followed by one from the state before, given those parents, which must merge as it did.
    const model = narrow(20);
    let merged = 0;
    fc.assert(
      fc.property(
        chat(200),
        fc.array(fc.record({ at: fc.nat(), dies: fc.boolean() }), { minLength: 1, maxLength: 12 }),
        (generated, steps) => {
          // Ids unique, as a channel's are: a recorded parent names one message.
          const messages = generated.map((m, i) => ({
            ...m,
            id: m.id.length > 100 ? `m${i}-${"x".repeat(210)}` : `m${i}`,
          }));
          const live = new ReplyLinker({ model });
          const whole = messages.map((m) => live.link(m));
          merged += whole.filter((d) => d.merged !== undefined).length;
          const ends = new Map(steps.map((s) => [s.at % (messages.length + 1), s.dies]));
          let state = new ReplyLinker({ model }).snapshot();
          let from = 0;
          const recorded = new Map<number, string | null>();
          let run = ReplyLinker.restore(state, { model });
          const last: LinkDecision[] = [];
          for (let i = 0; i <= messages.length; i++) {
            const dies = ends.get(i);
            if (dies === true) {
              run = ReplyLinker.restore(state, { model });
              for (let j = from; j < i; j++) {
                const m = messages[j] as LinkInput;
                last[j] = run.link(
                  m,
                  recorded.has(j) ? { parent: recorded.get(j) ?? null } : undefined,
                );
              }
            } else if (dies === false) {
              state = run.snapshot();
              from = i;
              recorded.clear();
            }
            const m = messages[i];
            if (m === undefined) break;
            const d = run.link(
              m,
              recorded.has(i) ? { parent: recorded.get(i) ?? null } : undefined,
            );
            last[i] = d;
            if (d.source === "inferred") recorded.set(i, d.parent ?? null);
          }
          expect(last.map(({ chosen: _, ...d }) => d)).toStrictEqual(whole);
        },
      ),
      { numRuns: 60, interruptAfterTimeLimit: SHRINKING },
    );
    expect(merged).toBeGreaterThan(0);
  });

  it("restore before every single message and still decide the same", () => {
    const model = narrow(12);
    fc.assert(
      fc.property(chat(120), (messages) => {
        const every = new Set(messages.map((_, i) => i));
        const { whole, pieces } = resumedAt(messages, every, model);
        expect(pieces).toStrictEqual(whole);
      }),
      { numRuns: 15, interruptAfterTimeLimit: SHRINKING },
    );
  });

  it("know the conversation of a message linked before the restart", () => {
    const messages: LinkInput[] = [
      { id: "1", ts: T0, author: "alice", text: "how do I mount an ntfs partition?" },
      { id: "2", ts: T0 + 1000, author: "bob", text: "alice: use ntfs-3g" },
    ];
    const linker = new ReplyLinker();
    const decisions = messages.map((m) => linker.link(m));
    const restored = ReplyLinker.restore(linker.snapshot());
    expect(restored.conversationOf("2")).toBe(decisions[1]?.conversation);
    expect(restored.conversationOf("3")).toBeUndefined();
  });

  it("keep no name, no author id and no word of the chat, only ids and numbers", () => {
    const people = ["Zephyrine_Quartermaine", "Bartholomew|Oakenshield"];
    const linker = new ReplyLinker();
    for (let i = 0; i < 30; i++)
      linker.link({
        id: `msg-${i}`,
        ts: T0 + i * 1000,
        author: people[i % 2] as string,
        authorId: `UIDENTITY${i % 2}`,
        text: `${people[(i + 1) % 2]}: the flibbertigibbet configuration fails <@UIDENTITY${i % 2}>`,
      });
    const bytes = Buffer.from(linker.snapshot(), "base64");
    expect(bytes.includes("msg-29")).toBe(true);
    for (const secret of [...people, "zephyrine", "quartermaine", "bartholomew", "oakenshield"])
      for (const form of [secret, secret.toLowerCase()]) expect(bytes.includes(form)).toBe(false);
    for (const secret of ["UIDENTITY", "uidentity", "flibbertigibbet", "configuration"])
      expect(bytes.includes(secret)).toBe(false);
  });
});

/** A small deterministic generator (mulberry32), for long runs that need no shrinking. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("MAX_LINKER_STATE_BYTES", () => {
  it("bounds the state of the shipped model", () => {
    expect(defaultLinkerModel().window).toBe(100);
  });

  it("holds through thousands of long messages with 40-character ids", () => {
    const next = random(7);
    const linker = new ReplyLinker();
    let largest = 0;
    for (let i = 0; i < 3000; i++) {
      const words = Array.from({ length: 10 + Math.floor(next() * 60) }, () =>
        Math.floor(next() * 1e6).toString(36),
      );
      const person = Math.floor(next() * 40);
      const target = Math.floor(next() * 40);
      linker.link({
        id: `${i.toString().padStart(8, "0")}-${"abcdef0123456789".repeat(2)}`.slice(0, 40),
        ts: T0 + i * 7_000,
        author: `person${person}_`,
        authorId: `U${person.toString().padStart(10, "0")}`,
        text: `<@U${target.toString().padStart(10, "0")}> ${words.join(" ")}`,
        ...(next() < 0.2 ? { replyTo: `${"r".repeat(38)}${i % 97}` } : {}),
      });
      largest = Math.max(largest, JSON.stringify(linker.snapshot()).length);
    }
    expect(largest).toBeLessThanOrEqual(MAX_LINKER_STATE_BYTES);
    expect(largest).toBeGreaterThan(10_000);
  });

  it("holds for the worst a channel can send: every count at its cap, every id at its longest", () => {
    const linker = new ReplyLinker();
    const longest = (tag: string, i: number) => `${tag}${i}-`.padEnd(66, "é").padEnd(100, "é");
    let largest = 0;
    for (let i = 0; i < 400; i++) {
      const addressed = Array.from({ length: 12 }, (_, j) => `<@u${i - j - 1}>`);
      const words = Array.from({ length: 40 }, (_, j) => `q${i}x${j}`);
      linker.link({
        id: longest("m", i),
        ts: T0 + i * 1e9 + 0.25,
        author: `Some-Body ${i} |away|`,
        authorId: `u${i}`,
        text: `${addressed.join(" ")} ${words.join(" ")} ${"x ".repeat(5000)}`,
        replyTo: longest("elsewhere", i),
      });
      largest = Math.max(largest, JSON.stringify(linker.snapshot()).length);
    }
    expect(Buffer.byteLength(longest("m", 399))).toBeLessThanOrEqual(200);
    expect(Buffer.byteLength(longest("m", 399))).toBeGreaterThan(190);
    expect(largest).toBeLessThanOrEqual(MAX_LINKER_STATE_BYTES);
    expect(largest).toBeGreaterThan(MAX_LINKER_STATE_BYTES * 0.6);
  });

  it("does not grow with ids longer than a state keeps, and never links to their messages", () => {
    const linker = new ReplyLinker();
    const decisions: LinkDecision[] = [];
    let largest = 0;
    for (let i = 0; i < 300; i++) {
      decisions.push(
        linker.link({
          id: `${i}:${"y".repeat(5000)}`,
          ts: T0 + i * 1000,
          author: `p${i % 3}`,
          text: "grub kernel wifi",
        }),
      );
      largest = Math.max(largest, JSON.stringify(linker.snapshot()).length);
    }
    expect(largest).toBeLessThan(10_000);
    expect(decisions.every((d) => d.parent === undefined)).toBe(true);
  });
});

describe("what a message keeps", () => {
  it("is its rarest words, up to the cap", () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`);
    const rarity = { lookup: (word: string) => Number(word.slice(4)) / 4 };
    const cues = readCues(words.join(" "), rarity);
    expect(cues.words.length).toBe(MAX_WORDS);
    expect([...cues.rarity].sort((a, b) => a - b)[0]).toBe((40 - MAX_WORDS) / 4);
  });

  it("is the first people it addresses, up to the cap", () => {
    const window = new Window(100, { lookup: () => 1 });
    const people = Array.from({ length: 12 }, (_, i) => `person${i}`);
    for (const [i, author] of people.entries())
      window.append({ id: `m${i}`, ts: T0, author, text: "hello" });
    const entry = window.append({ id: "x", ts: T0, author: "caller", text: people.join(" ") });
    expect(entry.mentions).toHaveLength(MAX_MENTIONS);
    expect(entry.mentions).toEqual([...Array(MAX_MENTIONS).keys()]);
  });
});

describe("ReplyLinker.restore", () => {
  const valid = (() => {
    const linker = new ReplyLinker();
    for (let i = 0; i < 150; i++)
      linker.link({
        id: `m${i}`,
        ts: T0 + i * 1000,
        author: `p${i % 5}`,
        text: `p${(i + 1) % 5}: grub kernel ${i}?`,
        ...(i % 7 === 0 ? { replyTo: "elsewhere" } : {}),
      });
    return linker.snapshot();
  })();
  const bytes = () => Buffer.from(valid, "base64");

  it.each([
    ["a number", 42, /not a string/],
    ["an object", { state: valid }, /not a string/],
    ["not base64", "!!not base64!!", /not base64/],
    // Past even format 1's bound, whose words took a byte more each.
    ["too long for any window", "A".repeat(2 * MAX_LINKER_STATE_BYTES), /over the \d+ of a window/],
    ["empty", "", /ends inside the format/],
    ["truncated", bytes().subarray(0, 200).toString("base64"), /ends inside/],
    ["longer", Buffer.concat([bytes(), Buffer.from([0])]).toString("base64"), /bytes left/],
  ])("refuses a state that is %s", (_, state, message) => {
    expect(() => ReplyLinker.restore(state as string)).toThrow(RangeError);
    expect(() => ReplyLinker.restore(state as string)).toThrow(message);
  });

  it("names the formats it reads when given another", () => {
    const other = bytes();
    other[0] = 3;
    expect(() => ReplyLinker.restore(other.toString("base64"))).toThrow(
      /linker state: format 3, this linker reads 1 and 2/,
    );
  });

  it("reads a state of format 1, whose words carried their rarity, as the linker that wrote it", () => {
    const said: [string, string][] = [
      ["alice", "how do I mount an ntfs partition on boot?"],
      ["bob", "hi all, my wifi driver stopped after the kernel update"],
      ["carol", "alice: add it to fstab with ntfs-3g"],
      ["alice", "carol: which options in fstab?"],
      ["dave", "bob: which chipset? lspci will say"],
      ["bob", "dave: broadcom bcm4311"],
      ["carol", "alice: defaults,uid=1000 works for me"],
      ["dave", "bob: install bcmwl-kernel-source then reboot"],
      ["alice", "thanks carol, it mounts now"],
      ["bob", "dave: that did it, wifi is back"],
      ["erin", "anyone know why pulseaudio crackles on hdmi?"],
      ["carol", "erin: try tsched=0 in default.pa"],
    ];
    const messages: LinkInput[] = said.map(([author, text], i) => ({
      id: `m${i + 1}`,
      ts: T0 + i * 20_000,
      author,
      text,
    }));
    // The snapshot of the first eight, as the linker of 2026-12-06 wrote it (format 1).
    const formatOne =
      "AWQIAARvlulhTaEOBCpshY6VD+sQUOvx3QeHvKTw1yMFAARvlulhTaEOAAQEKmyFjpUPAQLrEFDr8d0HAgGHvKTw1yMFAwAMCQAAAICYuuDxZgJtMQAE1aGU0EQJVAnZSxjj+/pdumoWbFAAIAoBAADAuAICbTIAB98ZVOVNSGQoB1/JfW4bSNhOniJNdJQPKFGa9jpoQk7z4m5xAAAHAgEAwLgCAm0zBATnEyKHw8lVGKx7dBI5O1Idn+xPagEABAUAAwPAuAICbTQDA6VsKO9dHZ/sT2oSjwhnwwECBAYDAgDAuAICbTUFBNSgxoaUCCk8q2tgfhzJUtVB+ABvAQEAAwEEBMC4AgJtNgMDDtfVjKTfxWzQh1gjSGRzAQMABQIBBMC4AgJtNwUE5xMih8MB/hi7oOmzkkRKV1Fxc3oBAAAFAwIDwLgCAm04BASg4WOENNSgxoaUuJ9yh1hecnonwwEBAA==";
    const never = new ReplyLinker();
    const whole = messages.map((m) => never.link(m));
    const restored = ReplyLinker.restore(formatOne);
    expect(messages.slice(8).map((m) => restored.link(m))).toStrictEqual(whole.slice(8));
    // Written again, it is the current format's, a byte shorter for each word kept.
    const again = ReplyLinker.restore(formatOne).snapshot();
    expect(Buffer.from(again, "base64")[0]).toBe(2);
    expect(again.length).toBeLessThan(formatOne.length);
  });

  it("refuses a state of a model with another window", () => {
    expect(() => ReplyLinker.restore(valid, { model: narrow(50) })).toThrow(
      /linker state: a window of 100 messages, the model's is 50/,
    );
  });

  it("either refuses a corrupted state with a RangeError or gives a linker that works", () => {
    const followers: LinkInput[] = Array.from({ length: 120 }, (_, i) => ({
      id: `n${i}`,
      ts: T0 + 200_000 + i * 1000,
      author: `p${i % 6}`,
      text: `p${(i + 2) % 6}: kernel grub ${i}`,
      ...(i % 9 === 0 ? { replyTo: `m${140 + (i % 10)}` } : {}),
    }));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        (flips) => {
          const corrupted = bytes();
          for (const [at, value] of flips) corrupted[at % corrupted.length] = value;
          let linker: ReplyLinker;
          try {
            linker = ReplyLinker.restore(corrupted.toString("base64"));
          } catch (error) {
            expect(error).toBeInstanceOf(RangeError);
            expect((error as Error).message).toMatch(/^linker state: /);
            return;
          }
          for (const message of followers) linker.link(message);
          ReplyLinker.restore(linker.snapshot());
        },
      ),
      { numRuns: 300 },
    );
  });
});
