/**
 * The reply linker: for each message of a channel without threads, the earlier message it
 * answers, or that it starts a conversation. Decided once, when the message is first seen, from
 * the message and the window before it, so the decision never changes.
 */

import { PairContext } from "./context.js";
import type { LinkChoice, LinkDecision, LinkInput, ReplyLinkerOptions } from "./decision.js";
import {
  CANDIDATE_ONLY,
  CONTENT_SIZE,
  considered,
  contentFeatures,
  conversationActive,
  PAIR_SIZE,
  pairActive,
  pairFeatures,
  QUERY_SIZE,
  queryFeatures,
  SparsePair,
} from "./features.js";
import modelFile from "./linker-model.json" with { type: "json" };
import { finish, LinkerModel, type LinkerModelFile, project } from "./model.js";
import { decodeState, encodeState, type LinkerState } from "./state.js";
import { type Entry, Window } from "./window.js";

/** A conversation an inferred decision may choose: its best candidate's position (-1: starts one). */
interface Ranked {
  readonly at: number;
  readonly mass: number;
}

// The imports the hot loop reads, read once: a loader may make each imported binding a getter.
const activeFeatures = pairActive;
const conversationFeatures = conversationActive;
const isConsidered = considered;

let shipped: LinkerModel | undefined;

/** The model trained on the Ubuntu IRC corpus's training split (`docs/conversations.md`). */
export function defaultLinkerModel(): LinkerModel {
  shipped ??= new LinkerModel(modelFile as LinkerModelFile);
  return shipped;
}

export class ReplyLinker {
  private readonly model: LinkerModel;
  private readonly startBias: number;
  private readonly mergeMargin: number;
  private readonly mergeLimit: number;
  private readonly alternatives: number;
  private window: Window;
  private readonly queryX = new Float64Array(QUERY_SIZE);
  private readonly contentX = new Float64Array(CONTENT_SIZE);
  private readonly pairX = new Float64Array(PAIR_SIZE);
  private readonly active = new SparsePair();
  private readonly context = new PairContext();
  private readonly base: Float64Array;
  private readonly pre: Float64Array;
  /** Per candidate scored for the message being linked: its score and conversation. */
  private readonly scores: Float64Array;
  private readonly conversationAt: Int32Array;
  /**
   * Per conversation of the window (at most one per message in it): summed probability, best
   * score and where.
   */
  private readonly mass: Float64Array;
  private readonly top: Float64Array;
  private readonly topAt: Int32Array;
  /**
   * Each message's own part of the first layer, `hidden` per window position (`position &
   * projectionMask`): one ring for the window, not an array per message.
   */
  private readonly projections: Float64Array;
  private readonly projectionMask: number;
  /** One message's part, built before it goes into the ring. */
  private readonly projected: Float64Array;
  /**
   * Per conversation of the window: the first layer's input from the bias, the new message's own
   * part and the pair features that depend on the conversation alone, `hidden` each; summed once
   * per conversation for each new message (`ready` marks those summed for the message).
   */
  private readonly shared: Float64Array;
  private readonly ready: Uint8Array;
  private readonly sharedActive = new SparsePair();

  constructor(options: ReplyLinkerOptions = {}) {
    this.model = options.model ?? defaultLinkerModel();
    this.startBias = options.startBias ?? this.model.startBias;
    if (!Number.isFinite(this.startBias))
      throw new RangeError(`startBias must be a finite number (got ${String(this.startBias)})`);
    this.mergeMargin = options.mergeMargin ?? this.model.mergeMargin;
    if (!(this.mergeMargin >= 0))
      throw new RangeError(
        `mergeMargin must be a number of at least 0 (got ${String(this.mergeMargin)})`,
      );
    this.mergeLimit = options.mergeLimit ?? this.model.mergeLimit;
    if (!(this.mergeLimit >= 0))
      throw new RangeError(
        `mergeLimit must be a number of at least 0 (got ${String(this.mergeLimit)})`,
      );
    this.alternatives = options.alternatives ?? 0;
    if (!Number.isInteger(this.alternatives) || this.alternatives < 0)
      throw new RangeError(
        `alternatives must be a whole number of at least 0 (got ${String(this.alternatives)})`,
      );
    this.window = new Window(this.model.window, this.model);
    this.base = new Float64Array(this.model.hidden);
    this.pre = new Float64Array(this.model.hidden);
    this.scores = new Float64Array(this.model.window);
    this.conversationAt = new Int32Array(this.model.window);
    this.mass = new Float64Array(this.model.window);
    this.top = new Float64Array(this.model.window);
    this.topAt = new Int32Array(this.model.window);
    this.projected = new Float64Array(this.model.hidden);
    this.shared = new Float64Array(this.model.window * this.model.hidden);
    this.ready = new Uint8Array(this.model.window);
    // The window and the new message: window + 1 positions.
    let ring = 1;
    while (ring < this.model.window + 1) ring *= 2;
    this.projectionMask = ring - 1;
    this.projections = new Float64Array(ring * this.model.hidden);
  }

  /**
   * The linker's memory of the channel, to store between runs: a string of at most
   * `MAX_LINKER_STATE_BYTES` bytes (as JSON, for the shipped model's window) holding numbers,
   * hashes and message ids, no text and no name. `ReplyLinker.restore` gives it back.
   */
  snapshot(): LinkerState {
    return encodeState(this.window.image());
  }

  /**
   * A linker that decides every message after a `snapshot` exactly as the one snapshotted would
   * have, given the same options. Another model must have the same window (its rarities apply to
   * new messages only). Throws a `RangeError` ("linker state: …") naming what is wrong with a
   * state that is malformed, of another format or of another window.
   */
  static restore(state: LinkerState, options: ReplyLinkerOptions = {}): ReplyLinker {
    const linker = new ReplyLinker(options);
    const window = Window.from(decodeState(state, linker.model.window), linker.model);
    linker.window = window;
    for (let p = window.horizon(window.end); p < window.end; p++) linker.remember(window.at(p));
    return linker;
  }

  /**
   * The conversation of message `id` if it is within the window of the next message (and not too
   * long an id to keep): a message linked before, say by a run whose state was snapshotted.
   */
  conversationOf(id: string): string | undefined {
    return this.window.find(id)?.conversation;
  }

  /**
   * Decides `message`'s parent and remembers it for the messages after it. A `choice` the linker
   * may take (see {@link LinkChoice}) replaces its model's for an inferred link.
   */
  link(message: LinkInput, choice?: LinkChoice): LinkDecision {
    if (message.kind === "system")
      return { id: message.id, conversation: message.id, source: "system" };
    const entry = this.window.append(message);
    this.remember(entry);
    if (message.replyTo !== undefined && message.replyTo !== message.id) {
      const conversation = this.window.find(message.replyTo)?.conversation ?? message.replyTo;
      this.window.settle(entry, conversation);
      return { id: message.id, parent: message.replyTo, conversation, source: "platform" };
    }
    return this.infer(entry, choice);
  }

  private remember(entry: Entry): void {
    const projected = this.projected;
    projected.fill(0);
    contentFeatures(entry, this.contentX);
    project(this.model.content, this.contentX, this.model.hidden, projected);
    this.projections.set(projected, (entry.position & this.projectionMask) * this.model.hidden);
  }

  private infer(query: Entry, choice: LinkChoice | undefined): LinkDecision {
    const model = this.model;
    const h = model.hidden;
    const base = this.base;
    base.set(model.bias);
    queryFeatures(this.window, query, this.queryX);
    project(model.query, this.queryX, h, base);
    this.context.begin(this.window, query);

    // Each option's score, then the conversation the most probability falls on: the model's
    // softmax summed over each conversation's candidates (a conversation of several likely
    // parents outweighs one lone likelier parent), "starts a conversation" one of its own. The
    // parent is that conversation's best candidate.
    const context = this.context;
    const n = context.conversations;
    const { mass, top, topAt } = this;
    mass.fill(0, 0, n);
    this.ready.fill(0, 0, n);
    top.fill(Number.NEGATIVE_INFINITY, 0, n);
    const start = this.score(query, undefined) + this.startBias;
    let chosenAt = choice?.parent === null ? -1 : undefined;
    let best = start;
    const low = this.window.horizon(query.position);
    const local = context.local;
    const mask = context.mask;
    let scored = 0;
    for (let p = query.position - 1; p >= low; p--) {
      const candidate = this.window.at(p);
      if (candidate.opaque || !isConsidered(query, candidate, context)) continue;
      if (choice?.parent === candidate.id) chosenAt ??= p;
      const score = this.score(query, candidate);
      const l = local[p & mask] as number;
      // Nearer first: among equal scores the nearer candidate stays its conversation's best.
      if (score > (top[l] as number)) {
        top[l] = score;
        topAt[l] = p;
      }
      if (score > best) best = score;
      this.scores[scored] = score;
      this.conversationAt[scored++] = l;
    }
    // The sums, scaled by the best score so none overflows.
    for (let j = 0; j < scored; j++) {
      const l = this.conversationAt[j] as number;
      mass[l] = (mass[l] as number) + Math.exp((this.scores[j] as number) - best);
    }
    // The two likeliest options by conversation (-1: "starts a conversation").
    let first = Math.exp(start - best);
    let second = 0;
    let firstL = -1;
    let secondL = -1;
    for (let l = 0; l < n; l++) {
      const m = mass[l] as number;
      if (m > first) {
        second = first;
        secondL = firstL;
        first = m;
        firstL = l;
      } else if (m > second) {
        second = m;
        secondL = l;
      }
    }
    // How much likelier the chosen conversation is than the next option, in the scores' units.
    const margin = second > 0 ? Math.log(first / second) : Number.POSITIVE_INFINITY;
    const picked = firstL < 0 ? -1 : (topAt[firstL] as number);
    const at = chosenAt ?? picked;
    let decision: LinkDecision;
    if (at < 0) {
      decision = { id: query.id, conversation: query.id, source: "inferred", margin };
    } else {
      const parent = this.window.at(at);
      query.conversation = parent.conversation;
      decision = {
        id: query.id,
        parent: parent.id,
        conversation: parent.conversation,
        source: "inferred",
        margin,
        // A link chosen for the linker (an advisor's answer, a parent recorded before) is decided:
        // no merge beside it, unless it is the model's own pick. Then it merges as that pick
        // does, so a tick that died after recording its parents is followed by one that merges
        // the same conversations.
        ...(at === picked &&
        secondL >= 0 &&
        margin < this.mergeMargin &&
        (context.size[firstL] as number) + (context.size[secondL] as number) <= this.mergeLimit
          ? this.merge(query, parent, this.window.at(topAt[secondL] as number))
          : {}),
      };
    }
    // The common path returns the plain decision: the extras cost an object only when asked for.
    if (this.alternatives === 0 && chosenAt === undefined) return decision;
    return {
      ...decision,
      ...(this.alternatives === 0 ? {} : { options: this.best(Math.exp(start - best), n) }),
      ...(chosenAt === undefined ? {} : { chosen: true as const }),
    };
  }

  /** Joins `query` to `other`'s conversation too, making it one with its parent's. */
  private merge(query: Entry, parent: Entry, other: Entry): Partial<LinkDecision> {
    const { kept, gone } = this.window.merge(
      parent.conversation,
      other.conversation,
      this.window.horizon(query.position),
    );
    query.conversation = kept;
    this.context.forget();
    return { also: other.id, conversation: kept, merged: gone };
  }

  /**
   * The best `alternatives` options, one per conversation (its best candidate's id, null for
   * "starts a conversation"), likeliest first: the choices that would change the conversation.
   */
  private best(starting: number, conversations: number): (string | null)[] {
    const ranked: Ranked[] = [{ at: -1, mass: starting }];
    for (let l = 0; l < conversations; l++)
      if ((this.top[l] as number) > Number.NEGATIVE_INFINITY)
        ranked.push({ at: this.topAt[l] as number, mass: this.mass[l] as number });
    ranked.sort((a, b) => b.mass - a.mass);
    return ranked
      .slice(0, this.alternatives)
      .map((r) => (r.at < 0 ? null : this.window.at(r.at).id));
  }

  /**
   * The first layer's input that conversation `l`'s candidates share for this message: a
   * conversation holds seven candidates on #stripe, five on Ubuntu, and half of a candidate's
   * active features are its conversation's.
   */
  private share(query: Entry, l: number): void {
    const h = this.model.hidden;
    const w = this.model.pair;
    const active = this.sharedActive;
    conversationFeatures(query, l, this.context, active);
    const shared = this.shared;
    const from = l * h;
    shared.set(this.base, from);
    for (let j = 0; j < active.count; j++) {
      const x = active.value[j] as number;
      const r = (active.index[j] as number) * h;
      for (let k = 0; k < h; k++)
        shared[from + k] = (shared[from + k] as number) + x * (w[r + k] as number);
    }
    this.ready[l] = 1;
  }

  private score(query: Entry, candidate: Entry | undefined): number {
    const model = this.model;
    const h = model.hidden;
    const base = this.base;
    if (candidate === undefined) {
      const pre = this.pre;
      pairFeatures(this.window, query, undefined, this.context, this.pairX);
      pre.set(base);
      project(model.pair, this.pairX, h, pre);
      return finish(model, pre);
    }
    const active = this.active;
    const context = this.context;
    const l = context.local[candidate.position & context.mask] as number;
    if (this.ready[l] === 0) this.share(query, l);
    const shared = this.shared;
    const from = l * h;
    activeFeatures(this.window, query, candidate, context, active, CANDIDATE_ONLY);
    // Eight hidden units at a time, each input summed in a register of its own: the terms of a
    // dense projection (the conversation's shared part, own part, distance row, then the
    // candidate's active features by index); eight independent sums, not one vector written and
    // read back per feature, keep the floating-point adder busy.
    const own = this.projections;
    const at = (candidate.position & this.projectionMask) * h;
    const table = model.byDistance;
    const row = (query.position - candidate.position) * h;
    const w = model.pair;
    const out = model.output;
    const index = active.index;
    const value = active.value;
    const n = active.count;
    let score = 0;
    let k = 0;
    for (; k + 8 <= h; k += 8) {
      let v0 = (shared[from + k] as number) + (own[at + k] as number) + (table[row + k] as number);
      let v1 =
        (shared[from + k + 1] as number) +
        (own[at + k + 1] as number) +
        (table[row + k + 1] as number);
      let v2 =
        (shared[from + k + 2] as number) +
        (own[at + k + 2] as number) +
        (table[row + k + 2] as number);
      let v3 =
        (shared[from + k + 3] as number) +
        (own[at + k + 3] as number) +
        (table[row + k + 3] as number);
      let v4 =
        (shared[from + k + 4] as number) +
        (own[at + k + 4] as number) +
        (table[row + k + 4] as number);
      let v5 =
        (shared[from + k + 5] as number) +
        (own[at + k + 5] as number) +
        (table[row + k + 5] as number);
      let v6 =
        (shared[from + k + 6] as number) +
        (own[at + k + 6] as number) +
        (table[row + k + 6] as number);
      let v7 =
        (shared[from + k + 7] as number) +
        (own[at + k + 7] as number) +
        (table[row + k + 7] as number);
      for (let j = 0; j < n; j++) {
        const x = value[j] as number;
        const r = (index[j] as number) * h + k;
        v0 += x * (w[r] as number);
        v1 += x * (w[r + 1] as number);
        v2 += x * (w[r + 2] as number);
        v3 += x * (w[r + 3] as number);
        v4 += x * (w[r + 4] as number);
        v5 += x * (w[r + 5] as number);
        v6 += x * (w[r + 6] as number);
        v7 += x * (w[r + 7] as number);
      }
      score += (out[k] as number) * (v0 / (1 + Math.abs(v0)));
      score += (out[k + 1] as number) * (v1 / (1 + Math.abs(v1)));
      score += (out[k + 2] as number) * (v2 / (1 + Math.abs(v2)));
      score += (out[k + 3] as number) * (v3 / (1 + Math.abs(v3)));
      score += (out[k + 4] as number) * (v4 / (1 + Math.abs(v4)));
      score += (out[k + 5] as number) * (v5 / (1 + Math.abs(v5)));
      score += (out[k + 6] as number) * (v6 / (1 + Math.abs(v6)));
      score += (out[k + 7] as number) * (v7 / (1 + Math.abs(v7)));
    }
    for (; k < h; k++) {
      let v = (shared[from + k] as number) + (own[at + k] as number) + (table[row + k] as number);
      for (let j = 0; j < n; j++)
        v += (value[j] as number) * (w[(index[j] as number) * h + k] as number);
      score += (out[k] as number) * (v / (1 + Math.abs(v)));
    }
    return score;
  }
}
