/**
 * Reading the manual's Markdown for its tests (the pages come from `test/support/docs.ts`): the
 * text outside code blocks, the links, and the headings' anchors as GitHub renders them.
 */

/** The text outside fenced code blocks, line for line (fenced lines become empty). */
function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split("\n")
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return "";
      }
      return fenced ? "" : line;
    })
    .join("\n");
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor of a file's headings, with GitHub's -1, -2 suffixes for repeated ones. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const match of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = slug(match[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

export interface Link {
  target: string;
  line: number;
}

/** The targets of inline links and images outside code, with the line each starts on. */
export function links(markdown: string): Link[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, (span) => " ".repeat(span.length));
  const out: Link[] = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const line = text.slice(0, match.index).split("\n").length;
    out.push({ target: match[1], line });
  }
  return out;
}
