/**
 * How sure the linker is, against the annotations: for each margin threshold, how many of a
 * group's annotated people's lines an advisor would be asked about (per 1,000), how often the
 * linker's own choice joins the right conversation among them (one holding a gold parent, or a
 * start where gold starts one), and how many of its wrong choices there have the right answer
 * among the options an advisor is shown (the most a perfect advisor could mend). No model
 * is called: this is how `ASK_LINKS_MARGIN`'s default was chosen (docs/conversations.md).
 */
import { type LinkInput, ReplyLinker } from "convoseg/linker";

export interface MarginLine {
  id: number;
  input: LinkInput;
  /** Annotated gold parents (empty: starts a conversation); undefined for context lines. */
  gold?: readonly number[];
}

const MARGIN_THRESHOLDS = [0.25, 0.5, 1, 1.5, 2, 3] as const;
/** Options an advisor is shown: the shipped advisor's candidates, and "starts one". */
const SHOWN = 3;

export interface MarginRow {
  threshold: number;
  /** Annotated people's lines with an inferred decision. */
  decided: number;
  asked: number;
  askedRight: number;
  /** Asked, wrong, and the right answer among the options shown. */
  mendable: number;
  /** Wrong decisions in all, asked or not. */
  wrong: number;
}

/** The lines' conversations so far, by id: a link is right when it joins a gold parent's. */
const right = (
  conversationOf: ReadonlyMap<string, string>,
  gold: readonly number[],
  parent: string | undefined,
) => {
  if (parent === undefined) return gold.length === 0;
  const joined = conversationOf.get(parent);
  return gold.some((g) => conversationOf.get(String(g)) === joined);
};

/** The rows for one group of files, each file linked once with its options listed. */
export function marginRows(files: readonly (readonly MarginLine[])[]): MarginRow[] {
  const scored: { margin: number; right: boolean; mendable: boolean }[] = [];
  for (const lines of files) {
    // As the linker decides where an advisor is asked: merging nothing.
    const linker = new ReplyLinker({ alternatives: SHOWN + 1, mergeMargin: 0 });
    const conversationOf = new Map<string, string>();
    for (const line of lines) {
      const decision = linker.link(line.input);
      conversationOf.set(decision.id, decision.conversation);
      if (line.gold === undefined || decision.source !== "inferred") continue;
      const gold = line.gold;
      const ok = right(conversationOf, gold, decision.parent);
      const options = decision.options ?? [];
      const shown = [null, ...options.filter((o) => o !== null).slice(0, SHOWN)];
      scored.push({
        margin: decision.margin ?? Number.POSITIVE_INFINITY,
        right: ok,
        mendable: !ok && shown.some((o) => right(conversationOf, gold, o ?? undefined)),
      });
    }
  }
  const wrong = scored.filter((s) => !s.right).length;
  return MARGIN_THRESHOLDS.map((threshold) => {
    const asked = scored.filter((s) => s.margin < threshold);
    return {
      threshold,
      decided: scored.length,
      asked: asked.length,
      askedRight: asked.filter((s) => s.right).length,
      mendable: asked.filter((s) => s.mendable).length,
      wrong,
    };
  });
}

/** The rows as a table: asked per 1,000 lines, right among them, mendable. */
export function formatMargins(group: string, rows: readonly MarginRow[]): string[] {
  const pct = (n: number, d: number) => (d === 0 ? "n/a" : `${((100 * n) / d).toFixed(1)}%`);
  const out = [
    `${group}: ${rows[0]?.decided ?? 0} inferred decisions of annotated people's lines, ${rows[0]?.wrong ?? 0} wrong`,
    "margin  asked/1000  linker right  mendable  of all wrong",
  ];
  for (const r of rows) {
    out.push(
      [
        `< ${r.threshold}`.padEnd(6),
        ((1000 * r.asked) / Math.max(1, r.decided)).toFixed(0).padStart(10),
        pct(r.askedRight, r.asked).padStart(12),
        String(r.mendable).padStart(8),
        pct(r.mendable, r.wrong).padStart(12),
      ].join("  "),
    );
  }
  return out;
}
