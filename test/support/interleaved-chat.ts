/**
 * Chat on which the reply linker merges conversations (`LinkDecision.merged`): three topics
 * interleaved by six people, one line every 20 s, from a fixed generator (an LCG), so the same
 * lines everywhere. `m<i>` ids, zero-padded to three digits.
 */
const PEOPLE = ["ana", "ben", "cleo", "dev", "eli", "fay"];
const TOPICS = [
  ["grub", "boot", "menu"],
  ["wifi", "driver", "drops"],
  ["printer", "queue", "stuck"],
];

export interface InterleavedLine {
  id: string;
  ts: number;
  user: string;
  text: string;
}

/** `count` lines from `t0`, some addressing someone (`ben: …`), some asking (`…?`). */
export function interleavedChat(count: number, t0: number): InterleavedLine[] {
  let seed = 7;
  const next = (n: number) => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed % n;
  };
  return Array.from({ length: count }, (_, i) => {
    const topic = TOPICS[next(3)] as string[];
    const words = Array.from({ length: 1 + next(4) }, () => topic[next(3)]);
    const address = next(3) === 0 ? `${PEOPLE[next(6)]}: ` : "";
    return {
      id: `m${String(i).padStart(3, "0")}`,
      ts: t0 + i * 20_000,
      user: PEOPLE[next(6)] as string,
      text: `${address}${words.join(" ")}${next(3) === 0 ? "?" : ""}`,
    };
  });
}
