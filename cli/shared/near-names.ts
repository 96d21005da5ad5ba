/**
 * What a mistyped or invisible-character-laden name probably meant: the stored channels near a
 * channel id nothing is stored under, the command or option near a mistyped one. No SDK: the
 * command list loads it for `--help`.
 */

/** Suggestions shown at most. */
const MAX_SUGGESTIONS = 5;

/** The id as a reader sees it: no invisible or control characters, no case, compatibility forms folded. */
function seen(id: string): string {
  return id
    .normalize("NFKC")
    .replace(/[\p{Cc}\p{Cf}\p{Z}]/gu, "")
    .toLowerCase();
}

/** Edits (insert, delete, substitute) from `a` to `b`, by code point. */
function distance(a: string, b: string): number {
  const [x, y] = [[...a], [...b]];
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      const substitute = previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1);
      row.push(Math.min(previous[j] + 1, row[j - 1] + 1, substitute));
    }
    previous = row;
  }
  return previous[y.length];
}

/**
 * The ids of `known` near `wanted`, nearest first: the same once invisible characters, case and
 * compatibility forms are set aside, or a couple of edits away (one for ids of up to 4
 * characters). `wanted` itself is never one.
 */
export function nearNames(wanted: string, known: Iterable<string>): string[] {
  const target = seen(wanted);
  const allowed = [...target].length <= 4 ? 1 : 2;
  const scored: [string, number][] = [];
  for (const id of new Set(known)) {
    if (id === wanted) continue;
    const d = distance(seen(id), target);
    if (d <= allowed) scored.push([id, d]);
  }
  scored.sort(([a, da], [b, db]) => da - db || (a < b ? -1 : a > b ? 1 : 0));
  return scored.slice(0, MAX_SUGGESTIONS).map(([id]) => id);
}
