/**
 * A literal, plain transcription of the algorithm in `docs/specs/segmenter.md`, step by step,
 * with no attention to speed. It is the oracle the property tests compare the real segmenter with,
 * and the baseline `npm run bench` measures it against. No input validation: callers pass valid
 * values.
 */
export interface LiteralOptions {
  maxSize: number;
  settle: number;
  minItems: number;
}

/** Reply links as the segmenter's `ReplyLinks` gives them. */
export interface LiteralReplies<T> {
  id: (item: T) => string | number;
  replyTo: (item: T) => string | number | null | undefined;
}

interface Entry<T> {
  item: T;
  t: number;
  size: number;
  id?: string | number;
  replyTo?: string | number | null;
  /** Sorted position of this entry, and of the entry it answers (the first of its id), or -1. */
  position?: number;
  parent?: number;
}

const millis = (value: number | Date): number =>
  typeof value === "number" ? value : value.getTime();

export function literalClosedSegments<T>(
  items: readonly T[],
  now: number | Date,
  timestamp: (item: T) => number | Date,
  size: (item: T) => number = () => 1,
  { maxSize, settle, minItems }: LiteralOptions = {
    maxSize: 500,
    settle: 86_400_000,
    minItems: 1,
  },
  replies?: LiteralReplies<T>,
): T[][] {
  // 1. Empty input gives an empty result.
  if (items.length === 0) return [];
  // 2. Accessors once per item; stable sort by timestamp.
  const entries: Entry<T>[] = items.map((item) => ({
    item,
    t: millis(timestamp(item)),
    size: size(item),
    ...(replies && { id: replies.id(item), replyTo: replies.replyTo(item) }),
  }));
  entries.sort((a, b) => a.t - b.t);
  const firstOfId = new Map<string | number, number>();
  entries.forEach((entry, position) => {
    entry.position = position;
    if (entry.id !== undefined && !firstOfId.has(entry.id)) firstOfId.set(entry.id, position);
  });
  for (const entry of entries) {
    entry.parent = entry.replyTo == null ? -1 : (firstOfId.get(entry.replyTo) ?? -1);
  }
  // 3. Conversations split where the gap is strictly greater than settle.
  const conversations: Entry<T>[][] = [[entries[0]]];
  for (let i = 1; i < entries.length; i++) {
    if (entries[i].t - entries[i - 1].t > settle) conversations.push([]);
    conversations[conversations.length - 1].push(entries[i]);
  }
  const nowMs = millis(now);
  const result: T[][] = [];
  conversations.forEach((conversation, index) => {
    // 4. Carve greedily from the front.
    const segments = carve(conversation, maxSize, minItems, replies !== undefined);
    // 5. Withhold the open trailing conversation's last segment; fold elsewhere.
    const isLast = index === conversations.length - 1;
    const open = isLast && nowMs - conversation[conversation.length - 1].t <= settle;
    if (open) {
      segments.pop();
    } else if (segments.length > 1 && segments[segments.length - 1].length < minItems) {
      const tail = segments.pop() ?? [];
      segments[segments.length - 1].push(...tail);
    }
    // 6. Drop undersized segments.
    for (const segment of segments) {
      if (segment.length >= minItems) result.push(segment.map((entry) => entry.item));
    }
  });
  return result;
}

function carve<T>(
  conversation: Entry<T>[],
  maxSize: number,
  minItems: number,
  withReplies: boolean,
): Entry<T>[][] {
  const segments: Entry<T>[][] = [];
  let start = 0;
  while (start < conversation.length) {
    let sum = 0;
    let limit = start;
    while (limit < conversation.length && sum + conversation[limit].size <= maxSize) {
      sum += conversation[limit].size;
      limit++;
    }
    if (limit === start) limit = start + 1;
    if (limit === conversation.length) {
      segments.push(conversation.slice(start));
      break;
    }
    // 4b. With replies: fewest links severed between [start, k) and [k, limit], then the gap.
    const severed = (k: number) => (withReplies ? severedLinks(conversation, start, k, limit) : 0);
    let fewest = Number.POSITIVE_INFINITY;
    let widest = 0;
    let cut = limit;
    for (let k = start + minItems; k <= limit; k++) {
      const gap = conversation[k].t - conversation[k - 1].t;
      const links = severed(k);
      if (links < fewest || (links === fewest && gap >= widest)) {
        fewest = links;
        widest = gap;
        cut = k;
      }
    }
    segments.push(conversation.slice(start, cut));
    start = cut;
  }
  return segments;
}

/** Links with one end in [start, k) and the other in [k, limit] of the conversation. */
function severedLinks<T>(
  conversation: Entry<T>[],
  start: number,
  k: number,
  limit: number,
): number {
  const position = (index: number) => conversation[index].position ?? 0;
  let count = 0;
  for (let x = start; x <= limit; x++) {
    const p = conversation[x].parent ?? -1;
    const own = position(x);
    if (p < 0 || p === own) continue;
    const [lo, hi] = p < own ? [p, own] : [own, p];
    if (lo >= position(start) && hi <= position(limit) && lo < position(k) && hi >= position(k)) {
      count++;
    }
  }
  return count;
}
