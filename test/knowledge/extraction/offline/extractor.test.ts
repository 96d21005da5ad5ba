/**
 * The offline extractor's rules, one by one: what it refuses to propose (people, URLs, short
 * tokens, numbers, stopwords, system lines), what it keeps (technical terms), how it merges
 * inflections, where its evidence points, how the channel's statistics weigh its terms, and that
 * it stays linear and yields to the event loop on large segments.
 */

import {
  type ExtractionTurn,
  LLMError,
  type TermStatistics,
  type WindowOutput,
  type WindowOutputs,
} from "convoseg/extraction";
import { KEYPHRASE_VOCABULARY, KeyphraseExtractor } from "convoseg/extraction/offline";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stem } from "../../../../lib/knowledge/extraction/offline/words.js";

const turn = (author: string, text: string, kind: ExtractionTurn["kind"] = "user") => ({
  role: "user",
  kind,
  author,
  text,
});

/** The topics proposed for `turns`, lower case. */
async function topics(
  turns: ExtractionTurn[],
  options: { statistics?: TermStatistics; channel?: string } = {},
): Promise<string[]> {
  const { candidates } = await new KeyphraseExtractor({ maxCandidates: 50, minScore: 0 }).extract(
    turns,
    options,
  );
  return candidates.map((c) => c.topic.toLowerCase());
}

/** A conversation of `n` turns around one subject, by three people. */
function about(subject: string, n = 12): ExtractionTurn[] {
  const people = ["ana", "bo", "cy"];
  return Array.from({ length: n }, (_, i) =>
    turn(people[i % 3], `${i % 2 === 0 ? "the" : "my"} ${subject} is the question ${i}`),
  );
}

describe("KeyphraseExtractor refuses", () => {
  it("author names, even where they are said in the text", async () => {
    const found = await topics([
      turn("talchas", "the borrow checker rejects this closure"),
      turn("Yaniel", "talchas: the borrow checker wants a move closure"),
      turn("talchas", "Yaniel, a move closure, right, thanks Yaniel"),
      turn("ball", "talchas is right about the borrow checker"),
    ]);
    expect(found).toContain("borrow checker");
    for (const name of ["talchas", "yaniel", "ball"]) {
      expect(
        found.some((t) => t.split(" ").includes(name)),
        name,
      ).toBe(false);
    }
  });

  it("addressed nicknames: `nick: …`, `nick, …` of an author, and `@nick`", async () => {
    const found = await topics([
      turn("ana", "zorblax: did grub2 install on the raid disk"),
      turn("bo", "zorblax: grub2 install failed on the raid disk"),
      turn("ana", "@quimby grub2 again on the raid disk, ask @quimby"),
      turn("quimby", "ana, raid disk is fine"),
      turn("ana", "Error: grub2 install on the raid disk"),
    ]);
    expect(found).toContain("raid disk");
    expect(found.some((t) => t.includes("grub2"))).toBe(true);
    for (const name of ["zorblax", "quimby", "ana"]) {
      expect(
        found.some((t) => t.split(" ").includes(name)),
        name,
      ).toBe(false);
    }
  });

  it("URLs and every piece of them", async () => {
    const found = await topics([
      turn("ana", "see https://bugzilla.example.org/show_bug.cgi?id=4242 for the kernel panic"),
      turn("bo", "https://bugzilla.example.org/show_bug.cgi?id=4242 kernel panic again"),
      turn("cy", "www.pastebin.example.com/xyzzy kernel panic log, and github.com/foo/quux"),
      turn("ana", "10https://bugzilla.example.org/4242 mail me at someone@example.org"),
    ]);
    expect(found).toContain("kernel panic");
    for (const piece of ["https", "http", "bugzilla", "example", "show_bug", "xyzzy", "quux"]) {
      expect(
        found.some((t) => t.includes(piece)),
        piece,
      ).toBe(false);
    }
    expect(found.some((t) => t.includes("someone"))).toBe(false);
  });

  it("tokens of one or two characters, numbers alone, stopwords and chat filler", async () => {
    const found = await topics([
      turn("ana", "ok so I am on 8.04 and 2018 and 10:30, is it ok? lol yes"),
      turn("bo", "ok so you are on 8.04 and 2018 and 10:30 lol, yes it is"),
      turn("cy", "ok 8.04 2018 10:30 1st 64MB 0x1f 1e-8 yes lol it is so"),
    ]);
    expect(found).toEqual([]);
  });

  it("a meeting bot's commands and echoes, the meeting's markup", async () => {
    const found = await topics([
      turn("chair", "#topic pulseaudio stable queue"),
      turn("meetbot", "[TOPIC] pulseaudio stable queue"),
      turn("chair", "#action ana to file the pulseaudio bug"),
      turn("meetbot", "ACTION received: ana to file the pulseaudio bug"),
      turn("bo", "[action] bo to review the stable queue"),
      turn("cy", "#agreed pulseaudio stays on the stable queue"),
      turn("meetbot", "Commands Available: [TOPIC], [IDEA], [ACTION], [AGREED], [VOTE]"),
      turn("meetbot", "Commands Available: [TOPIC], [IDEA], [ACTION], [AGREED], [VOTE]"),
    ]);
    expect(found).toContain("pulseaudio");
    expect(found.filter((t) => /\b(?:topic|idea|action|agreed|vote|received)\b/.test(t))).toEqual(
      [],
    );
    // Said as words, they are words.
    expect(
      await topics([
        turn("ana", "what action does the kernel topic need"),
        turn("bo", "the kernel topic needs action now"),
        turn("cy", "kernel topic action, agreed"),
      ]),
    ).toContain("kernel topic");
  });

  it("a chat bot's command: alone, or naming its bot", async () => {
    const found = await topics([
      turn("ana", "/start"),
      turn("ana", "/stats@GroupHelperBot weekly"),
      turn("bo", "/start"),
      turn("bo", "/stats@GroupHelperBot weekly"),
    ]);
    expect(found.filter((t) => /start|stats|grouphelperbot/.test(t))).toEqual([]);
    // A path that begins a longer line is still a path.
    expect(
      await topics([
        turn("ana", "/etc/fstab is where the mounts live"),
        turn("bo", "/etc/fstab it is, then"),
      ]),
    ).toContain("/etc/fstab");
  });

  it("the text of system lines, which it does not read at all", async () => {
    const found = await topics([
      turn("", "pitti [~pitti@host] has joined #ubuntu, mode +o wibblywobbly", "system"),
      turn("", "wibblywobbly is now known as wibbly, mode +o wibblywobbly", "system"),
      turn("ana", "the xorg config is broken"),
      turn("bo", "regenerate the xorg config then"),
    ]);
    expect(found).toContain("xorg config");
    expect(found.some((t) => /pitti|wibbly|joined|mode/.test(t))).toBe(false);
  });
});

describe("KeyphraseExtractor keeps", () => {
  it("technical terms as written: attributes, commands, versioned names, paths", async () => {
    const found = await topics([
      turn("ana", "use #[macro_use] on the extern crate"),
      turn("bo", "#[macro_use] is old, systemctl restart it"),
      turn("cy", "systemctl says grub2 failed, check /etc/default/grub"),
      turn("ana", "grub2 reads /etc/default/grub and std::ffi::CString"),
      turn("bo", "std::ffi::CString, then systemctl again"),
    ]);
    for (const term of [
      "#[macro_use]",
      "systemctl",
      "grub2",
      "/etc/default/grub",
      "std::ffi::cstring",
    ]) {
      expect(found, term).toContain(term);
    }
  });

  it("one topic for a word's inflections, shown as people wrote it most", async () => {
    const { candidates } = await new KeyphraseExtractor().extract([
      turn("ana", "which drivers do I need"),
      turn("bo", "the nvidia drivers"),
      turn("cy", "the driver from nvidia, the drivers page"),
      turn("ana", "installed the driver"),
      turn("bo", "drivers are fine now"),
    ]);
    const driver = candidates.filter((c) => /^drivers?$/i.test(c.topic));
    expect(driver.map((c) => c.topic)).toEqual(["drivers"]);
    expect(driver[0].turnRange).toEqual([0, 4]);
    expect(["crash", "crashes", "crashed", "crashing"].map(stem)).toEqual(Array(4).fill("crash"));
    expect(["cache", "caches"].map(stem)).toEqual(["cach", "cach"]);
    expect(["library", "libraries"].map(stem)).toEqual(["librari", "librari"]);
    expect(["string", "things", "status", "process"].map(stem)).toEqual([
      "string",
      "thing",
      "status",
      "process",
    ]);
  });

  it("one topic for one word written as a word and as a name (`fixres`, `FixRes`)", async () => {
    // A word is stemmed ("fixr") and a name kept ("fixres"): two terms, shown as one topic, whose
    // index entries would share a key (a real #ubuntu segment failed its write that way).
    const found = await topics([
      turn("cy", "how do I make X reconfigure my card?"),
      turn("vox", "!fixres"),
      turn("bot", "To fix screen resolution see the FixRes page"),
    ]);
    expect(found.filter((t) => t === "fixres")).toEqual(["fixres"]);
  });
});

describe("KeyphraseExtractor's evidence", () => {
  it("runs from the first to the last turn whose text says the topic", async () => {
    const turns = [
      turn("ana", "hello there"),
      turn("bo", "my wifi adapter drops"),
      turn("wifi", "nothing here"),
      turn("cy", "which wifi adapter is it"),
      turn("ana", "bye"),
    ];
    const { candidates } = await new KeyphraseExtractor().extract(turns);
    expect(candidates.length).toBeGreaterThan(0);
    for (const candidate of candidates) {
      const [first, last] = candidate.turnRange ?? [-1, -1];
      for (const word of candidate.topic.toLowerCase().split(" ")) {
        expect(turns[first].text.toLowerCase(), candidate.topic).toContain(word);
        expect(turns[last].text.toLowerCase(), candidate.topic).toContain(word);
      }
    }
    // "wifi" is also an author here: never a topic, so nothing of it is evidence.
    expect(candidates.map((c) => c.topic)).not.toContain("wifi adapter");
  });

  it("is a property: every word of every topic is in the text of its first and last turn", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.constantFrom("ana", "bo", "cy"),
            fc.array(word, { minLength: 1, maxLength: 12 }),
          ),
          {
            minLength: 1,
            maxLength: 30,
          },
        ),
        async (lines) => {
          const turns = lines.map(([author, words]) => turn(author, words.join(" ")));
          const { candidates } = await new KeyphraseExtractor({ minScore: 0 }).extract(turns);
          for (const candidate of candidates) {
            const [first, last] = candidate.turnRange ?? [-1, -1];
            for (const w of candidate.topic.toLowerCase().split(" ")) {
              expect(turns[first].text.toLowerCase()).toContain(w);
              expect(turns[last].text.toLowerCase()).toContain(w);
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

/** Words of chat: subjects, fillers, names and pieces of punctuation. */
const word = fc.constantFrom(
  "grub",
  "kernel",
  "driver",
  "drivers",
  "the",
  "a",
  "ok",
  "ana:",
  "bo,",
  "@cy",
  "nvidia",
  "panic",
  "42",
  "https://example.org/grub",
  "systemctl",
  "fstab",
  "is",
  "broken.",
  "again?",
);

describe("KeyphraseExtractor, a property", () => {
  const nick = fc.stringMatching(/^[a-z][a-z0-9_]{2,8}$/);
  it("never proposes an author or an addressed nickname of the segment", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(nick, { minLength: 2, maxLength: 5 }),
        fc.array(
          fc.tuple(fc.nat(), fc.nat(), fc.constantFrom("%s: ", "@%s ", "", "thanks %s ", "%s, ")),
          { minLength: 2, maxLength: 25 },
        ),
        async (nicks, lines) => {
          // Every nick speaks once; then they talk, addressing and naming each other.
          const hellos = nicks.map((n) => turn(n, "the kernel module loads"));
          const turns = lines.map(([who, whom, form]) => {
            const to = form.replace("%s", nicks[whom % nicks.length]);
            return turn(
              nicks[who % nicks.length],
              `${to}the ${nicks[whom % nicks.length]} kernel module again ${nicks[who % nicks.length]}`,
            );
          });
          const addressed = new Set(nicks);
          for (const t of await topics([...hellos, ...turns])) {
            for (const w of t.split(" ")) expect(addressed.has(w), t).toBe(false);
          }
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe("KeyphraseExtractor and the channel's statistics", () => {
  function statistics(segments: number, frequencies: Record<string, number>) {
    const asked: string[][] = [];
    const stats: TermStatistics = {
      lookup: async (vocabulary, terms) => {
        expect(vocabulary).toBe(KEYPHRASE_VOCABULARY);
        asked.push([...terms]);
        return { segments, frequencies: new Map(Object.entries(frequencies)) };
      },
    };
    return { stats, asked };
  }

  const turns = [
    turn("ana", "the printer queue is stuck, ubuntu printer queue"),
    turn("bo", "restart cups for the printer queue on ubuntu"),
    turn("cy", "cups again, printer queue cleared, ubuntu rocks"),
    turn("ana", "ubuntu cups fixed it"),
  ];

  it("ranks a term below others once most of the channel's segments have it", async () => {
    const alone = await topics(turns);
    expect(alone.indexOf("ubuntu")).toBeLessThan(alone.indexOf("cups"));
    const { stats, asked } = statistics(40, { ubuntu: 39 });
    const weighed = await topics(turns, { statistics: stats });
    expect(weighed.indexOf("cups")).toBeLessThan(weighed.indexOf("ubuntu"));
    expect(asked[0]).toEqual(expect.arrayContaining(["ubuntu", "cup", "printer queue", "@ubuntu"]));
  });

  it("refuses a word the channel's statistics know as someone's name", async () => {
    const { stats } = statistics(5, { "@cups": 2 });
    expect(await topics(turns, { statistics: stats })).not.toContain("cups");
  });

  it("words too general alone, and phrases of two general words in a row", async () => {
    const found = await topics([
      turn("ana", "I implemented the kernel panic fix, the problem last week was the file"),
      turn("bo", "who implemented it? kernel panic problem last seen with that file"),
      turn("cy", "kernel panic problem last night too, I will write a fix for the file"),
    ]);
    expect(found).toContain("kernel panic");
    for (const general of ["implemented", "file", "fix", "write"])
      expect(found).not.toContain(general);
    expect(found.filter((t) => t.includes("problem last"))).toEqual([]);
  });

  it("holds the channel's own name general: never a topic alone, still in phrases", async () => {
    const found = await topics(
      [
        turn("ana", "the rust analyzer crashes on rust code"),
        turn("bo", "rust analyzer needs a restart, rust is fine"),
        turn("cy", "rust analyzer again"),
      ],
      { channel: "rust" },
    );
    expect(found).toContain("rust analyzer");
    expect(found).not.toContain("rust");
  });

  it("says which terms and names the segment adds, and answers a retry as it first did", async () => {
    const stored = new Map<string, WindowOutput>();
    const outputs: WindowOutputs = {
      get: async (key) => stored.get(key),
      put: async (key, output) => {
        stored.set(key, output);
      },
    };
    const extractor = new KeyphraseExtractor();
    const first = await extractor.extract(turns, { outputs, statistics: statistics(0, {}).stats });
    expect(first.terms?.vocabulary).toBe(KEYPHRASE_VOCABULARY);
    expect(first.terms?.terms).toEqual(
      expect.arrayContaining(["printer queue", "cup", "@ana", "@bo", "@cy"]),
    );
    expect(stored.size).toBe(1);
    // Meanwhile the channel counted more: the retry still answers what the first attempt did.
    const second = await extractor.extract(turns, {
      outputs,
      statistics: statistics(50, { cup: 50, "printer queue": 50 }).stats,
    });
    expect(second).toEqual(first);
  });
});

describe("KeyphraseExtractor on large segments", () => {
  /** `count` turns of about `bytes` each, from a vocabulary of pseudo-words. */
  function segment(count: number, bytes: number, seed = 1): ExtractionTurn[] {
    let state = seed;
    const next = () => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const vocabulary = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}x${"qz"[i % 2]}`);
    return Array.from({ length: count }, (_, i) => {
      const words: string[] = [];
      for (let length = 0; length < bytes; length += 7) {
        words.push(vocabulary[Math.floor(next() ** 2 * vocabulary.length)]);
      }
      return turn(`user${i % 12}`, words.join(" "));
    });
  }

  // How long it takes, and how it grows, is measured by `npm run bench:topics`; here, that it
  // lets the event loop run while it reads, whatever the machine's speed.
  it("lets the event loop run while it reads a large segment", async () => {
    const turns = segment(500, 10_000);
    const chars = turns.reduce((sum, t) => sum + t.text.length, 0);
    let loopTurns = 0;
    let done = false;
    const spin = () => {
      loopTurns++;
      if (!done) setImmediate(spin);
    };
    setImmediate(spin);
    const { candidates } = await new KeyphraseExtractor().extract(turns);
    done = true;
    expect(candidates.length).toBeGreaterThan(0);
    // At least one turn of the event loop for every 128 KB of text read.
    expect(loopTurns).toBeGreaterThan(chars / 131_072);
  }, 60_000);

  it("stops at an abort, between turns", async () => {
    const controller = new AbortController();
    const running = new KeyphraseExtractor().extract(segment(100, 10_000), {
      signal: controller.signal,
    });
    controller.abort(new Error("enough"));
    await expect(running).rejects.toBeInstanceOf(LLMError);
  });
});

describe("KeyphraseExtractor options", () => {
  it("caps the candidates and cuts those far below the best", async () => {
    const turns = about("kernel module", 20);
    const { candidates } = await new KeyphraseExtractor({ maxCandidates: 1 }).extract(turns);
    expect(candidates).toHaveLength(1);
    expect(candidates[0].confidence).toBe(1);
  });

  it.each([0, 1.5, Number.NaN])("refuses maxCandidates %s", (maxCandidates) => {
    expect(() => new KeyphraseExtractor({ maxCandidates })).toThrow(/maxCandidates/);
  });

  it.each([-0.1, 2, Number.NaN])("refuses minScore %s", (minScore) => {
    expect(() => new KeyphraseExtractor({ minScore })).toThrow(/minScore/);
  });
});
