/**
 * Telegram's service messages as sentences, one wording for both readers: the export reader
 * names an event by Telegram Desktop's `action` (`topic_created`, `group_call`, …) and the live
 * connector maps each Bot API field (`forum_topic_created`, `video_chat_ended`, …) to the same
 * action, so that an imported chat and its live continuation say the same thing. Every value from
 * the input is made {@link inline}: no name or title can bring a control character or a line.
 */
import { safeWord } from "./context.js";
import { inline } from "./inline.js";

/** One service event in the export's words. */
export interface TelegramService {
  /** Who did it; absent when the event names no one. */
  actor?: string;
  /** Telegram Desktop's action name; the live connector adds `topic_closed` and a few more. */
  action: string;
  title?: string;
  members?: readonly string[];
  /** A length in seconds: a call's duration, an auto-delete period. */
  seconds?: number;
  /** Unix seconds: when a scheduled video chat starts, when a giveaway's winners are drawn. */
  date?: number;
  /** Winners, boosts. */
  count?: number;
}

const FIXED: Record<string, string> = {
  join_group_by_link: "joined by link",
  join_group_by_request: "joined the group by request",
  pin_message: "pinned a message",
  edit_group_photo: "changed the group photo",
  delete_group_photo: "removed the group photo",
  migrate_to_supergroup: "upgraded the group to a supergroup",
  migrate_from_group: "upgraded the group to this supergroup",
  topic_closed: "closed the topic",
  topic_reopened: "reopened the topic",
  general_topic_hidden: "hid the General topic",
  general_topic_unhidden: "showed the General topic",
  giveaway_launch: "started a giveaway",
  set_chat_wallpaper: "changed the chat wallpaper",
  set_same_chat_wallpaper: "changed the chat wallpaper",
  edit_chat_theme: "changed the chat theme",
  clear_history: "cleared the history",
  allow_sending_messages: "allowed the bot to send messages",
  requested_peer: "shared a chat with the bot",
  send_payment: "sent a payment",
  refunded_payment: "was refunded a payment",
  send_gift: "sent a gift",
  send_premium_gift: "sent a gift",
  send_stars_gift: "sent a gift",
  send_webview_data: "sent data from a web app",
  checklist_tasks_done: "marked checklist tasks as done",
  checklist_tasks_added: "added checklist tasks",
  paid_message_price_changed: "changed the price of messages",
  direct_message_price_changed: "changed the price of direct messages",
  joined_telegram: "joined Telegram",
  take_screenshot: "took a screenshot",
  suggest_profile_photo: "suggested a profile photo",
};

/** The sentence of a service event: the actor (else "someone"), then what happened. */
export function telegramServiceText(event: TelegramService): string {
  const actor = event.actor === undefined ? "someone" : inline(event.actor) || "someone";
  const members = (event.members ?? []).map((m) => inline(m)).filter((m) => m !== "");
  const title = event.title === undefined ? "" : inline(event.title);
  const quoted = title === "" ? "" : ` "${title}"`;
  const list = members.join(", ");
  const alone = members.length === 1 && members[0] === actor;
  const says = (what: string) => `${actor} ${what}`;
  switch (event.action) {
    case "create_group":
      return says(`created the group${quoted}${list ? ` ${list}` : ""}`);
    case "create_channel":
      return says(`created the channel${quoted}`);
    case "invite_members":
      return says(alone ? "joined the group" : `added ${list}`.trimEnd());
    case "remove_members":
      return says(alone ? "left the group" : `removed ${list}`.trimEnd());
    case "edit_group_title":
      return says(`renamed the group to${quoted}`);
    case "topic_created":
      return says(`created the topic${quoted}`);
    case "topic_edit":
      return says(title ? `renamed the topic to${quoted}` : "edited the topic");
    case "group_call":
      return says(
        event.seconds === undefined
          ? "started a video chat"
          : `ended the video chat (${duration(event.seconds)})`,
      );
    case "group_call_scheduled":
      return says(
        `scheduled a video chat${event.date === undefined ? "" : ` for ${when(event.date)}`}`,
      );
    case "invite_to_group_call":
      return says(`invited ${list || "people"} to the video chat`);
    case "set_messages_ttl":
      return says(
        event.seconds
          ? `set messages to auto-delete after ${duration(event.seconds)}`
          : "turned off auto-delete",
      );
    case "boost_apply":
      return says(
        `boosted the group${event.count && event.count > 1 ? ` ${event.count} times` : ""}`,
      );
    case "giveaway":
      return says(
        `announced a giveaway${event.count === undefined ? "" : ` for ${plural(event.count, "winner")}`}${title ? `: ${title}` : ""}`,
      );
    case "giveaway_results":
      return says(
        `announced the giveaway's winners${event.count === undefined ? "" : ` (${event.count})`}`,
      );
    case "giveaway_completed":
      return says(
        `completed the giveaway${event.count === undefined ? "" : ` (${plural(event.count, "winner")})`}`,
      );
  }
  const fixed = FIXED[event.action];
  if (fixed !== undefined) return says(fixed);
  // An action this wording does not know: its name as words, and what it names.
  return [actor, safeWord(event.action).replace(/_/g, " "), quoted.trim(), list]
    .filter(Boolean)
    .join(" ");
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A length as a person says it: `45 s`, `12 min`, `1 h 2 min`, `1 day`. */
function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86_400) {
    const h = Math.floor(s / 3600);
    const min = Math.round((s % 3600) / 60);
    return min === 0 ? `${h} h` : `${h} h ${min} min`;
  }
  const days = s / 86_400;
  if (Number.isInteger(days)) return plural(days, "day");
  return `${Math.floor(days)} d ${Math.round((s % 86_400) / 3600)} h`;
}

/** Minutes and a zone, as the Discord reader writes a timestamp. */
function when(unix: number): string {
  const date = new Date(unix * 1000);
  return Number.isNaN(date.getTime())
    ? "an unknown date"
    : `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
