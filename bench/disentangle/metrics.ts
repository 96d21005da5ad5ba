/**
 * The evaluation measures of the Ubuntu IRC disentanglement corpus (Kummerfeld et al., ACL 2019,
 * https://github.com/jkkummerfeld/irc-disentanglement), ported from its
 * `tools/evaluation/conversation-eval.py` (clusters) and `tools/evaluation/graph-eval.py` (links)
 * so that a number printed here can be set beside the paper's. Pure functions, no I/O.
 *
 * How the tools see a file, and so how these functions do:
 * - A file's evaluated messages are its annotated ones (ids >= 1000 in the corpus), system lines
 *   included: the annotation self-links every joins/quits line and the tools drop nothing.
 * - Clusters come from links as `tools/format-conversion/graph-to-cluster.py` builds them: the
 *   nodes are every annotated id and every parent it names (context lines too), union-find over
 *   the non-self links, then only the annotated ids are kept. Two annotated messages answering
 *   the same context line are therefore one conversation.
 * - Several files are pooled, never averaged: the cluster tool reads one file of `file:ids` lines
 *   and keys every cluster by its file, so its contingency table is the files' tables side by side
 *   (VI, ARI and one-to-one computed once over it; exact match counts summed), and the link tool
 *   sums its pair counts over files. A group of files is thus "micro-averaged".
 * - Scores are percentages (0 to 100) as the tools print them; `mixing` is a plain mean.
 */

/** Parents of each annotated message, by id; an empty list starts a conversation (a self link). */
export type Links = ReadonlyMap<number, readonly number[]>;

/** One annotated file's gold and predicted links. */
export interface FileLinks {
  /** The gold parents of every annotated message: this map's keys are the messages evaluated. */
  gold: Links;
  /** The predicted parents, for exactly the same ids as `gold`. */
  predicted: Links;
  /** The annotated ids that are system lines, which `whole` and `mixing` leave out. */
  system?: ReadonlySet<number>;
}

/** One file's gold and predicted conversations, each a list of annotated ids. */
export interface FileClusters {
  gold: readonly (readonly number[])[];
  predicted: readonly (readonly number[])[];
  /** The annotated ids that are system lines, which `whole` and `mixing` leave out. */
  system?: ReadonlySet<number>;
}

/** Precision, recall and F-score, in percent. */
export interface PRF {
  precision: number;
  recall: number;
  f: number;
}

/** Every measure of `evaluate`, pooled over the files given. */
export interface Scores {
  /** conversation-eval.py "Matched clusters": conversations of 2+ messages predicted exactly. */
  exact: PRF;
  /** conversation-eval.py "one-to-one". */
  oneToOne: number;
  /** conversation-eval.py "1 - Scaled VI": 100 × (1 − VI / log2 N). */
  vi: number;
  /** conversation-eval.py "Adjusted rand index", × 100. */
  ari: number;
  /** graph-eval.py: links, self links (conversation starts) counted as links. */
  link: PRF;
  /** Share of gold conversations of 2+ people's messages kept whole in one predicted one. */
  whole: number;
  /** Mean number of gold conversations mixed into one predicted conversation. */
  mixing: number;
}

/**
 * A reply linker's decision as predicted links: its parent and, where it joined two
 * conversations, its second parent (`also`); none where it starts a conversation.
 */
export function decisionLinks(decision: { parent?: string; also?: string }): number[] {
  return [decision.parent, decision.also].flatMap((p) => (p === undefined ? [] : [Number(p)]));
}

/**
 * The conversations of one file's links, the way graph-to-cluster.py builds them: union-find over
 * every non-self link (parents outside the annotated ids join the graph as nodes), then only the
 * annotated ids (the keys) are kept. Each conversation is sorted, and they are in order of their
 * first message, so equal link maps give equal arrays.
 *
 * @throws RangeError for a parent at or after the first annotated id that is not annotated
 *   itself: the tools would see a message the gold lacks and refuse the file.
 */
export function clustersOf(links: Links): number[][] {
  let first = Number.POSITIVE_INFINITY;
  for (const id of links.keys()) first = Math.min(first, id);
  const parent = new Map<number, number>();
  const find = (x: number): number => {
    let root = x;
    for (let up = parent.get(root); up !== undefined && up !== root; up = parent.get(root)) {
      root = up;
    }
    // Path compression: point everything on the way straight at the root.
    for (let at = x; at !== root; ) {
      const next = parent.get(at) as number;
      parent.set(at, root);
      at = next;
    }
    return root;
  };
  for (const id of links.keys()) parent.set(id, id);
  for (const [id, parents] of links) {
    for (const p of parents) {
      if (p === id) continue;
      if (!links.has(p) && p >= first) {
        throw new RangeError(`message ${id} links to ${p}, which is not an annotated message`);
      }
      if (!parent.has(p)) parent.set(p, p);
      const a = find(id);
      const b = find(p);
      if (a !== b) parent.set(a, b);
    }
  }
  const byRoot = new Map<number, number[]>();
  for (const id of links.keys()) {
    const root = find(id);
    const cluster = byRoot.get(root);
    if (cluster === undefined) byRoot.set(root, [id]);
    else cluster.push(id);
  }
  const clusters = [...byRoot.values()];
  for (const cluster of clusters) cluster.sort((a, b) => a - b);
  return clusters.sort((a, b) => a[0] - b[0]);
}

/**
 * A file's links as conversations on both sides.
 *
 * @throws RangeError when the predicted ids are not the gold ids (conversation-eval.py raises
 *   "Set of lines does not match"), or for a link `clustersOf` refuses.
 */
export function toClusters(file: FileLinks): FileClusters {
  for (const id of file.predicted.keys()) {
    if (!file.gold.has(id)) throw new RangeError(`predicted message ${id} is not in the gold`);
  }
  for (const id of file.gold.keys()) {
    if (!file.predicted.has(id)) throw new RangeError(`gold message ${id} has no prediction`);
  }
  const clusters: FileClusters = {
    gold: clustersOf(file.gold),
    predicted: clustersOf(file.predicted),
  };
  if (file.system !== undefined) clusters.system = file.system;
  return clusters;
}

/**
 * Every measure over several files, pooled the way the corpus tools pool them (see the module
 * comment): the one call the benchmark makes per method and group.
 *
 * @throws RangeError for no annotated message at all, or what `toClusters` refuses.
 */
export function evaluate(files: readonly FileLinks[]): Scores {
  const clusters = files.map(toClusters);
  return {
    exact: exactMatch(clusters),
    oneToOne: oneToOne(clusters),
    vi: oneMinusScaledVI(clusters),
    ari: adjustedRandIndex(clusters),
    link: linkScores(files),
    whole: whole(clusters),
    mixing: mixing(clusters),
  };
}

/**
 * conversation-eval.py's `exact_match`: a gold conversation of two or more messages is matched
 * when some predicted conversation of the same file has exactly its messages. Precision is over
 * the predicted conversations of two or more messages, recall over the gold ones; a zero
 * denominator gives 0, as in the tool (so a file of singletons only scores 0 even when perfect).
 */
export function exactMatch(files: readonly FileClusters[]): PRF {
  let gold = 0;
  let predicted = 0;
  let matched = 0;
  for (const file of files) {
    const keys = new Set<string>();
    for (const cluster of file.predicted) {
      if (cluster.length < 2) continue;
      predicted++;
      keys.add(clusterKey(cluster));
    }
    for (const cluster of file.gold) {
      if (cluster.length < 2) continue;
      gold++;
      if (keys.has(clusterKey(cluster))) matched++;
    }
  }
  return prf(gold, predicted, matched);
}

/**
 * conversation-eval.py's `one_to_one`: the largest total overlap of a one-to-one pairing of
 * predicted with gold conversations, over all messages. The tool solves one min-cost flow over
 * the pooled table; a pair across files overlaps nothing, so that optimum is the sum of each
 * file's own optimal pairing, which is what is computed here (Hungarian algorithm per file).
 */
export function oneToOne(files: readonly FileClusters[]): number {
  let total = 0;
  let overlap = 0;
  for (const file of files) {
    const table = contingency(file);
    total += table.total;
    overlap += maxWeightMatching(table);
  }
  if (total === 0) throw new RangeError("no annotated messages to evaluate");
  return (100 * overlap) / total;
}

/**
 * conversation-eval.py's "1 - Scaled VI": variation of information (Meila 2007) in bits, divided
 * by log2 of the number of messages pooled over all files, as 100 − 100 × that. One message in
 * all (log2 1 = 0, where the tool divides by zero) scores 100: its VI is 0.
 */
export function oneMinusScaledVI(files: readonly FileClusters[]): number {
  const tables = files.map(contingency);
  const total = tables.reduce((n, t) => n + t.total, 0);
  if (total === 0) throw new RangeError("no annotated messages to evaluate");
  if (total === 1) return 100;
  // The tool sums H(U,V) and I(U,V) and subtracts; this is the same sum, term by term
  // (p × log2(row × column / count²)), which is exactly 0 for identical sides instead of a
  // rounding error away from it.
  let vi = 0;
  for (const table of tables) {
    for (const [key, count] of table.cells) {
      const row = table.rowSums[Math.floor(key / table.columns)];
      const column = table.columnSums[key % table.columns];
      vi += (count / total) * (Math.log2(row / count) + Math.log2(column / count));
    }
  }
  return 100 - (100 * vi) / Math.log2(total);
}

/**
 * conversation-eval.py's adjusted Rand index (Hubert and Arabie 1985) over the pooled table, × 100.
 * Where the tool divides by zero (both sides all singletons, or both one conversation, which
 * means they agree) this returns 100, as scikit-learn does.
 */
export function adjustedRandIndex(files: readonly FileClusters[]): number {
  const tables = files.map(contingency);
  const total = tables.reduce((n, t) => n + t.total, 0);
  if (total === 0) throw new RangeError("no annotated messages to evaluate");
  const pairs = (n: number) => (n * (n - 1)) / 2;
  let index = 0;
  let rows = 0;
  let columns = 0;
  for (const table of tables) {
    for (const count of table.cells.values()) index += pairs(count);
    for (const n of table.rowSums) rows += pairs(n);
    for (const n of table.columnSums) columns += pairs(n);
  }
  const all = pairs(total);
  if (rows === columns && (rows === 0 || rows === all)) return 100;
  const expected = (rows * columns) / all;
  const max = 0.5 * (rows + columns);
  return (100 * (index - expected)) / (max - expected);
}

/**
 * graph-eval.py: precision, recall and F over links, each a (later, earlier) pair of ids within
 * a file, duplicates counted once. A message with no parent contributes its self link, so
 * predicting a conversation start where the gold has one counts as a correct link; that is how
 * the paper's link scores are computed, and why they run higher than non-self links alone.
 */
export function linkScores(files: readonly Pick<FileLinks, "gold" | "predicted">[]): PRF {
  let gold = 0;
  let predicted = 0;
  let matched = 0;
  for (const file of files) {
    const goldPairs = pairsOf(file.gold);
    const predictedPairs = pairsOf(file.predicted);
    gold += goldPairs.size;
    predicted += predictedPairs.size;
    for (const pair of goldPairs) if (predictedPairs.has(pair)) matched++;
  }
  return prf(gold, predicted, matched);
}

/**
 * Extraction-oriented, not a corpus measure: the share (percent) of gold conversations with at
 * least two non-system messages whose non-system messages all lie in one predicted conversation.
 * Why: extraction reads one segment at a time, so a conversation it can read in full is one kept
 * whole; system lines (joins, quits) never reach it, and one-message conversations are whole
 * whatever the method. NaN when no gold conversation qualifies.
 */
export function whole(files: readonly FileClusters[]): number {
  let eligible = 0;
  let kept = 0;
  for (const file of files) {
    const predictedOf = indexOf(file.predicted);
    for (const cluster of file.gold) {
      const people = cluster.filter((id) => file.system?.has(id) !== true);
      if (people.length < 2) continue;
      eligible++;
      const first = predictedOf.get(people[0]);
      if (people.every((id) => predictedOf.get(id) === first)) kept++;
    }
  }
  return (100 * kept) / eligible;
}

/**
 * Extraction-oriented, not a corpus measure: the mean number of gold conversations whose
 * non-system messages share one predicted conversation, over the predicted conversations holding
 * at least one annotated non-system message. Why: it is how many threads extraction has to pull
 * apart in one segment (1 is clean); system lines are left out as the product never ingests them,
 * so a method that makes them singletons is not rewarded with a crowd of trivially clean ones.
 * NaN when no predicted conversation qualifies.
 */
export function mixing(files: readonly FileClusters[]): number {
  let conversations = 0;
  let mixed = 0;
  for (const file of files) {
    const goldOf = indexOf(file.gold);
    for (const cluster of file.predicted) {
      const threads = new Set<number | undefined>();
      for (const id of cluster) if (file.system?.has(id) !== true) threads.add(goldOf.get(id));
      if (threads.size === 0) continue;
      conversations++;
      mixed += threads.size;
    }
  }
  return mixed / conversations;
}

// ---------------------------------------------------------------------------------------------

function prf(gold: number, predicted: number, matched: number): PRF {
  const precision = predicted > 0 ? (100 * matched) / predicted : 0;
  const recall = gold > 0 ? (100 * matched) / gold : 0;
  const f = matched > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, f };
}

function clusterKey(cluster: readonly number[]): string {
  return [...cluster].sort((a, b) => a - b).join(" ");
}

/** graph-eval.py's `get_pairs` for one file: "later earlier" strings, a start as "id id". */
function pairsOf(links: Links): Set<string> {
  const pairs = new Set<string>();
  for (const [id, parents] of links) {
    if (parents.length === 0) pairs.add(`${id} ${id}`);
    for (const p of parents) pairs.add(`${Math.max(id, p)} ${Math.min(id, p)}`);
  }
  return pairs;
}

/** Message id → index of its conversation. */
function indexOf(clusters: readonly (readonly number[])[]): Map<number, number> {
  const index = new Map<number, number>();
  clusters.forEach((cluster, c) => {
    for (const id of cluster) index.set(id, c);
  });
  return index;
}

/**
 * One file's contingency table: rows are the predicted conversations, columns the gold ones,
 * `cells` the non-zero overlaps keyed `row * columns + column`. Empty conversations are skipped.
 */
interface Table {
  rowSums: number[];
  columnSums: number[];
  columns: number;
  cells: Map<number, number>;
  total: number;
}

function contingency(file: FileClusters): Table {
  const gold = file.gold.filter((c) => c.length > 0);
  const predicted = file.predicted.filter((c) => c.length > 0);
  const goldOf = indexOf(gold);
  const columns = gold.length;
  const cells = new Map<number, number>();
  const seen = new Set<number>();
  predicted.forEach((cluster, row) => {
    for (const id of cluster) {
      const column = goldOf.get(id);
      if (column === undefined || seen.has(id)) {
        throw new RangeError(`message ${id} is not in exactly one gold and one predicted cluster`);
      }
      seen.add(id);
      const key = row * columns + column;
      cells.set(key, (cells.get(key) ?? 0) + 1);
    }
  });
  if (seen.size !== goldOf.size) {
    throw new RangeError("the predicted conversations do not cover the gold messages");
  }
  return {
    rowSums: predicted.map((c) => c.length),
    columnSums: gold.map((c) => c.length),
    columns,
    cells,
    total: seen.size,
  };
}

/**
 * The largest total overlap of a one-to-one pairing of rows with columns: the Hungarian algorithm
 * (shortest augmenting paths with potentials, O(n² m)) on the negated overlaps, with n the
 * smaller side. Pairs without overlap weigh 0, as the tool's zero-cost arcs do.
 */
function maxWeightMatching(table: Table): number {
  const rows = table.rowSums.length;
  const columns = table.columns;
  if (rows === 0 || columns === 0) return 0;
  const transpose = rows > columns;
  const n = transpose ? columns : rows;
  const m = transpose ? rows : columns;
  const cost = new Float64Array(n * m);
  for (const [key, count] of table.cells) {
    const row = Math.floor(key / columns);
    const column = key % columns;
    if (transpose) cost[column * m + row] = -count;
    else cost[row * m + column] = -count;
  }
  // 1-based e-maxx formulation: u, v potentials; match[j] = row paired with column j (0 = none).
  const u = new Float64Array(n + 1);
  const v = new Float64Array(m + 1);
  const match = new Int32Array(m + 1);
  const way = new Int32Array(m + 1);
  const minv = new Float64Array(m + 1);
  const used = new Uint8Array(m + 1);
  for (let i = 1; i <= n; i++) {
    match[0] = i;
    let j0 = 0;
    minv.fill(Number.POSITIVE_INFINITY);
    used.fill(0);
    do {
      used[j0] = 1;
      const i0 = match[j0];
      let delta = Number.POSITIVE_INFINITY;
      let j1 = 0;
      for (let j = 1; j <= m; j++) {
        if (used[j]) continue;
        const reduced = cost[(i0 - 1) * m + j - 1] - u[i0] - v[j];
        if (reduced < minv[j]) {
          minv[j] = reduced;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (let j = 0; j <= m; j++) {
        if (used[j]) {
          u[match[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (match[j0] !== 0);
    do {
      const j1 = way[j0];
      match[j0] = match[j1];
      j0 = j1;
    } while (j0 !== 0);
  }
  let overlap = 0;
  for (let j = 1; j <= m; j++) {
    if (match[j] !== 0) overlap -= cost[(match[j] - 1) * m + j - 1];
  }
  return overlap;
}
