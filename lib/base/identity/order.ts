/** The one product order of messages: platform timestamp, then message id in UTF-8 byte order. */

/** What ordering needs of a message: its platform id and timestamp. */
export interface MessageRef {
  id: string;
  /** Platform timestamp, epoch ms. */
  ts: number;
}

/** Compares two ids by code point, which is UTF-8 byte order (plain `<` compares UTF-16 units). */
export function compareIds(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** The one order of messages in a channel: timestamp, then id in UTF-8 byte order. */
export function compareRefs(a: MessageRef, b: MessageRef): number {
  return a.ts - b.ts || compareIds(a.id, b.id);
}
