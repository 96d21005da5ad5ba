/**
 * Where the trailing conversation of time-sorted `items` starts when it is still open at `now`
 * (its last item no more than `settle` ago, so a later message may still join it), else
 * `items.length`: the items from there on belong to no closed segment yet.
 */
export function openConversationStart(
  items: readonly { ts: number }[],
  settle: number,
  now: number,
): number {
  const n = items.length;
  if (n === 0 || now - items[n - 1].ts > settle) return n;
  let start = n - 1;
  while (start > 0 && items[start].ts - items[start - 1].ts <= settle) start--;
  return start;
}
