/**
 * The keys a stored window holds instead of what they stand for: a name's hashed key, and which
 * ids are short enough to keep (a longer one gets a stand-in).
 */

/** The longest id (UTF-8 bytes) a stored window holds; a longer one makes its message opaque. */
export const MAX_ID_BYTES = 200;

/**
 * Whether an id fits a stored window: at most {@link MAX_ID_BYTES} of UTF-8, and no lone surrogate
 * (UTF-8 could not carry it back).
 */
export function storable(id: string): boolean {
  let bytes = 0;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c < 0xd800 || c >= 0xe000) bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    else {
      const d = id.charCodeAt(++i);
      if (c >= 0xdc00 || !(d >= 0xdc00 && d < 0xe000)) return false;
      bytes += 4;
    }
  }
  return bytes <= MAX_ID_BYTES;
}

/** What opens a stand-in: a lone surrogate, so that no storable id is one. */
export const STAND_IN = "\ud800";

/**
 * What the window keeps of a conversation id: the id when storable, else a stand-in, its key in
 * base 36 after {@link STAND_IN}, that no storable id equals.
 */
export function standIn(conversation: string): string {
  return storable(conversation) ? conversation : `${STAND_IN}${nameKey(conversation).toString(36)}`;
}

/**
 * A name's key: two 32-bit FNV-1a variants (per UTF-16 unit and per byte, different offsets, each
 * finalized by MurmurHash3's mixer) joined into 52 bits. Two of a window's few hundred names
 * collide with odds near 10⁻¹¹, and the key does not give the name back.
 */
export function nameKey(name: string): number {
  let a = 0x811c9dc5;
  let b = 0x3b9f5c6d;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ (c & 0xff), 0x01000193);
    b = Math.imul(b ^ (c >>> 8), 0x01000193);
  }
  return (mix(a) >>> 0) * 0x100000 + (mix(b) >>> 12);
}

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}
