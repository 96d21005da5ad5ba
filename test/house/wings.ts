/**
 * The wings of `lib/` as their READMEs declare them: each `lib/<wing>/README.md` opens with what
 * the wing holds, then the lines "Enters:", "Leaves:" and "May import:". The last is the rule
 * the house test enforces, so the header a newcomer reads is the rule itself.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export interface Wing {
  readonly name: string;
  /** The opening paragraph, on one line. */
  readonly about: string;
  readonly enters: string;
  readonly leaves: string;
  /** The wings this one may import; empty for "nothing of ours". */
  readonly mayImport: readonly string[];
}

/** The wings in the order of a message's journey, which is also the order of the maps. */
const WING_ORDER = [
  "base",
  "history",
  "segmentation",
  "intake",
  "knowledge",
  "outlets",
  "lifecycle",
];

const field = (text: string, name: string, file: string): string => {
  const match = new RegExp(`^- ${name}:([\\s\\S]*?)(?=^- |(?![\\s\\S]))`, "m").exec(text);
  if (!match?.[1]) throw new Error(`${file}: no "- ${name}:" line`);
  return match[1].replace(/\s+/g, " ").trim();
};

export function readWings(root: string): Wing[] {
  const lib = join(root, "lib");
  const names = readdirSync(lib).filter((n) => statSync(join(lib, n)).isDirectory());
  return names
    .map((name) => {
      const file = `lib/${name}/README.md`;
      if (!existsSync(join(root, file)))
        throw new Error(`${file} is missing: a wing opens with it`);
      const text = readFileSync(join(root, file), "utf8");
      const about = (text.split(/\n\s*\n/)[1] ?? "").replace(/\s+/g, " ").trim();
      const may = field(text, "May import", file);
      const mayImport = /^nothing\b/.test(may)
        ? []
        : may
            .replace(/\.$/, "")
            .split(",")
            .map((w) => w.trim());
      return {
        name,
        about,
        enters: field(text, "Enters", file),
        leaves: field(text, "Leaves", file),
        mayImport,
      };
    })
    .sort((a, b) => rank(a.name) - rank(b.name));
}

const rank = (wing: string): number => {
  const i = WING_ORDER.indexOf(wing);
  return i === -1 ? WING_ORDER.length : i;
};
