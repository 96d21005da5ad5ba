/**
 * A run of the Discord poller: each configured channel (from where a run cut short stopped), read
 * forward from its cursor and re-read over its recent window, then its threads (active ones of
 * its guild and its latest archived public ones) as sources of their own, landing in the
 * channel with `thread` set. A 403 stops that channel, a 401 the whole run (the token is bad for
 * every channel); the deadline stops the run, and the next one resumes at the cursors.
 */
import type { Clock } from "./clock.js";
import type { CursorState } from "./cursors.js";
import { DiscordAuthError, DiscordDeadlineError, DiscordError } from "./errors.js";
import type { Destination } from "./map.js";
import { compareSnowflakes, snowflakeFromTime } from "./snowflake.js";
import { emptyTally, pollForward, reread, type SourceDeps, type SourceTally } from "./source.js";

export const DEFAULT_REREAD_WINDOW = 200;
/** Channel names and guilds are read again after this long (a rename shows within a day). */
const META_MAX_AGE_MS = 24 * 3_600_000;
/** GUILD_FORUM and GUILD_MEDIA: only threads, no messages of their own. */
const THREAD_ONLY = new Set([15, 16]);
/**
 * Pages of 100 archived threads read per channel and run by default: a channel with more to
 * look at (a backfill) is swept back over several runs, each going on where the last stopped.
 */
const MAX_ARCHIVED_PAGES = 10;
/** The cursor store's item for the run itself (no snowflake looks like it). */
const RUN_KEY = "~run";
const DEFAULT_CONCURRENCY = 8;

/** Each guild's active threads, asked once per run whatever the channels in flight. */
type ActiveThreads = Map<string, Promise<ThreadChannel[]>>;

export interface PollSettings {
  /** The channel ids to poll (text, announcement or forum channels). */
  channels: readonly string[];
  /** Latest messages re-read per channel (and active thread) each run; 0 turns it off. */
  rereadWindow?: number;
  /** Epoch ms to read from on a channel's first run; default: the first run's own time. */
  backfillFrom?: number;
  /** Poll threads (default true). */
  threads?: boolean;
  /** Channels polled at once (default 8), all under the same rate limits. */
  concurrency?: number;
  /** Pages of archived threads read per channel and run (default {@link MAX_ARCHIVED_PAGES}). */
  archivedPages?: number;
}

export interface PollDeps extends SourceDeps {
  clock: Clock;
}

export interface PollSummary extends SourceTally {
  channelsPolled: number;
  threadsPolled: number;
  requests: number;
  rateLimited: number;
  globalRateLimited: number;
  authFailures: number;
  /** Sources that stopped, with the error's code (never text): a 403 channel, a failed read. */
  stopped: { source: string; code: string }[];
  /** The run ended before every channel was reached: the rest come first next run. */
  deadlineReached: boolean;
  unauthorized: boolean;
}

interface ThreadChannel {
  id: string;
  parent_id?: string;
  last_message_id?: string | null;
  thread_metadata?: { archived?: boolean; archive_timestamp?: string };
}

interface ChannelObject {
  id: string;
  name?: string;
  guild_id?: string;
  type?: number;
}

export async function pollDiscord(deps: PollDeps, settings: PollSettings): Promise<PollSummary> {
  const window = settings.rereadWindow ?? DEFAULT_REREAD_WINDOW;
  const summary: PollSummary = {
    ...emptyTally(),
    channelsPolled: 0,
    threadsPolled: 0,
    requests: 0,
    rateLimited: 0,
    globalRateLimited: 0,
    authFailures: 0,
    stopped: [],
    deadlineReached: false,
    unauthorized: false,
  };
  const channels = [...new Set(settings.channels)];
  const states = await deps.cursors.getMany([RUN_KEY, ...channels]);
  // A run cut by its deadline is resumed where it stopped, so every channel gets its turn.
  const resume = states.get(RUN_KEY)?.resume;
  const from = Math.max(0, resume ? channels.indexOf(resume) : 0);
  const order = [...channels.slice(from), ...channels.slice(0, from)];
  const activeByGuild: ActiveThreads = new Map();
  // Channels in flight at once: Discord's latency (tens of ms a request) would otherwise keep a
  // run far below the global 50 requests/s, which the shared limits keep whatever the count.
  const concurrency = Math.max(1, settings.concurrency ?? DEFAULT_CONCURRENCY);
  const done = new Set<string>();
  let next = 0;
  let halt: DiscordDeadlineError | DiscordAuthError | undefined;
  const worker = async (limit = Number.POSITIVE_INFINITY) => {
    for (let taken = 0; halt === undefined && next < order.length && taken < limit; taken++) {
      const id = order[next++];
      const state = states.get(id) ?? { key: id, recent: [] };
      try {
        await pollChannel(deps, settings, window, id, state, activeByGuild, summary);
        summary.channelsPolled += 1;
        done.add(id);
      } catch (error) {
        if (error instanceof DiscordDeadlineError) halt ??= error;
        else if (error instanceof DiscordAuthError && error.status === 401) halt = error;
        else {
          summary.stopped.push({ source: id, code: codeOf(error) });
          done.add(id);
        }
      }
    }
  };
  // The first channel alone: a revoked token then costs one refused request, not one per worker.
  if (order.length > 0) {
    const lead = worker(1);
    await lead;
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, order.length) }, () => worker()));
  if (halt instanceof DiscordAuthError) {
    summary.unauthorized = true;
    summary.stopped.push({ source: "*", code: halt.code });
  } else if (halt instanceof DiscordDeadlineError) {
    summary.deadlineReached = true;
    // The first channel not finished: the next run starts there.
    await deps.cursors.update(RUN_KEY, { resume: order.find((id) => !done.has(id)) ?? "" });
  } else if (resume) {
    await deps.cursors.update(RUN_KEY, { resume: "" });
  }
  Object.assign(summary, {
    requests: deps.rest.stats.requests,
    rateLimited: deps.rest.stats.rateLimited,
    globalRateLimited: deps.rest.stats.globalRateLimited,
    authFailures: deps.rest.stats.authFailures,
  });
  return summary;
}

function codeOf(error: unknown): string {
  return error instanceof DiscordError
    ? error.code
    : ((error as { name?: string })?.name ?? "Error");
}

async function pollChannel(
  deps: PollDeps,
  settings: PollSettings,
  window: number,
  id: string,
  state: CursorState,
  activeByGuild: ActiveThreads,
  summary: PollSummary,
): Promise<void> {
  const now = deps.clock.now();
  const stale = state.metaAt === undefined || now - state.metaAt > META_MAX_AGE_MS;
  if (stale) {
    const channel = await deps.rest.get<ChannelObject>("/channels/{id}", id, `/channels/${id}`);
    state.name = channel.name ?? state.name;
    state.guildId = channel.guild_id ?? state.guildId;
    state.type = channel.type ?? state.type;
    state.metaAt = now;
  }
  const since =
    state.since ??
    snowflakeFromTime(settings.backfillFrom !== undefined ? settings.backfillFrom : now);
  // Written when read: once a day, not every run (a write per channel and run would cost more
  // than the reads).
  if (stale || state.since === undefined) {
    state.since = since;
    await deps.cursors.update(id, {
      since,
      ...(state.name === undefined ? {} : { name: state.name }),
      ...(state.guildId === undefined ? {} : { guildId: state.guildId }),
      ...(state.type === undefined ? {} : { type: state.type }),
      metaAt: state.metaAt,
    });
  }
  const to: Destination = {
    channel: id,
    ...(state.name ? { channelName: state.name } : {}),
    ...(state.guildId === undefined ? {} : { guild: state.guildId }),
  };
  if (state.type === undefined || !THREAD_ONLY.has(state.type)) {
    await pollForward(deps, id, to, state, since, window, summary);
    await reread(deps, id, to, state, window, summary);
  }
  if (settings.threads === false) return;
  // Archived threads already looked at need no cursor read: a new message unarchives a thread.
  const archivedAt = state.archivedAt ?? Number.NEGATIVE_INFINITY;
  const sweep = await threadsOf(deps, id, state, activeByGuild, settings.archivedPages);
  const threads = sweep.threads.filter(
    ({ thread, active }) => active || archiveTime(thread) > archivedAt,
  );
  const threadStates = await deps.cursors.getMany(threads.map((t) => t.thread.id));
  let failed = false;
  for (const { thread, active } of threads) {
    const tstate = threadStates.get(thread.id) ?? { key: thread.id, recent: [] };
    const last = thread.last_message_id ?? undefined;
    const behind = (tstate.cursor ?? since) as string;
    const fresh = last !== undefined && last !== null && compareSnowflakes(last, behind) > 0;
    if (!fresh && !(active && tstate.cursor !== undefined)) continue;
    const into: Destination = { ...to, thread: thread.id };
    try {
      if (fresh) await pollForward(deps, thread.id, into, tstate, since, window, summary);
      if (active) await reread(deps, thread.id, into, tstate, window, summary);
      summary.threadsPolled += 1;
    } catch (error) {
      if (error instanceof DiscordDeadlineError) throw error;
      if (error instanceof DiscordAuthError && error.status === 401) throw error;
      summary.stopped.push({ source: thread.id, code: codeOf(error) });
      failed = true;
    }
  }
  // A thread that failed is looked at again next run: the sweep's marks do not pass it.
  if (failed) return;
  const archived = threads.filter(({ active }) => !active);
  const top = Math.max(
    state.archivedTop ?? archivedAt,
    archivedAt,
    ...archived.map(({ thread }) => archiveTime(thread)),
  );
  if (sweep.before !== undefined) {
    // Not down to the mark yet: the next run goes on from here, and the mark stays, so that
    // nothing between here and it is skipped.
    state.archivedBefore = sweep.before;
    state.archivedTop = top;
    await deps.cursors.update(id, { archivedBefore: sweep.before, archivedTop: top });
  } else if (top > archivedAt || state.archivedBefore) {
    state.archivedAt = top;
    state.archivedBefore = "";
    await deps.cursors.update(id, { archivedAt: top, archivedBefore: "" });
  }
}

function archiveTime(thread: ThreadChannel): number {
  const at = Date.parse(thread.thread_metadata?.archive_timestamp ?? "");
  return Number.isNaN(at) ? Number.NEGATIVE_INFINITY : at;
}

/**
 * A channel's threads: the active ones of its guild (one request per guild and run) whose parent
 * it is, and its public archived ones archived after its `archivedAt` mark. Discord lists them by
 * archive time, newest first, in pages read back with `before`; a sweep reads at most `pages`
 * pages a run and, when it stops short of the mark, says where the next run goes on (`before`).
 */
async function threadsOf(
  deps: PollDeps,
  channel: string,
  state: CursorState,
  activeByGuild: ActiveThreads,
  pages = MAX_ARCHIVED_PAGES,
): Promise<{ threads: { thread: ThreadChannel; active: boolean }[]; before?: string }> {
  const guild = state.guildId;
  const archivedAt = state.archivedAt ?? Number.NEGATIVE_INFINITY;
  const found = new Map<string, { thread: ThreadChannel; active: boolean }>();
  if (guild !== undefined) {
    let asked = activeByGuild.get(guild);
    if (asked === undefined) {
      // Kept as a promise: channels in flight share one request, and a refusal is not asked again.
      asked = deps.rest
        .get<{ threads?: ThreadChannel[] }>(
          "/guilds/{id}/threads/active",
          guild,
          `/guilds/${guild}/threads/active`,
        )
        .then((answer) => answer.threads ?? []);
      asked.catch(() => undefined);
      activeByGuild.set(guild, asked);
    }
    const active = await asked;
    for (const thread of active) {
      if (thread.parent_id === channel) found.set(thread.id, { thread, active: true });
    }
  }
  let before = state.archivedBefore || undefined;
  let more = false;
  for (let page = 0; page < pages; page++) {
    const archived = await deps.rest.get<{ threads?: ThreadChannel[]; has_more?: boolean }>(
      "/channels/{id}/threads/archived/public",
      channel,
      `/channels/${channel}/threads/archived/public`,
      { limit: "100", ...(before === undefined ? {} : { before }) },
    );
    const threads = archived.threads ?? [];
    for (const thread of threads) {
      if (!found.has(thread.id)) found.set(thread.id, { thread, active: false });
    }
    const oldest = threads.at(-1)?.thread_metadata?.archive_timestamp;
    // The rest were archived before the last run looked, or there is no rest.
    more = archived.has_more === true && oldest !== undefined && Date.parse(oldest) > archivedAt;
    if (!more) break;
    before = oldest;
  }
  return { threads: [...found.values()], ...(more && before !== undefined ? { before } : {}) };
}
