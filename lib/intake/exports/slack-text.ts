/** Slack's mrkdwn made readable: `<@U123>` as `@name`, `<url|label>` as `label (url)`, entities. */

export interface SlackNames {
  users: ReadonlyMap<string, string>;
  channels: ReadonlyMap<string, string>;
}

const TOKEN = /<([^<>]*)>/g;

/**
 * The text of a Slack message as a person reads it. A user mention becomes `@` and the name
 * (from `users.json`, else the label, else the id); a channel mention `#name`; `<!here>` and
 * friends `@here`; a link its label followed by the address in parentheses (the address alone
 * when it has no other label); `&lt;`, `&gt;` and `&amp;` their characters.
 */
export function renderSlackText(text: string, names: SlackNames): string {
  const rendered = text.includes("<")
    ? text.replace(TOKEN, (_, inner: string) => token(inner, names))
    : text;
  return rendered.includes("&") ? decodeEntities(rendered) : rendered;
}

function token(inner: string, names: SlackNames): string {
  const bar = inner.indexOf("|");
  const target = bar < 0 ? inner : inner.slice(0, bar);
  const label = bar < 0 ? "" : inner.slice(bar + 1);
  if (target.startsWith("@")) {
    const id = target.slice(1);
    return `@${names.users.get(id) ?? (label || id)}`;
  }
  if (target.startsWith("#")) {
    const id = target.slice(1);
    return `#${names.channels.get(id) ?? (label || id)}`;
  }
  if (target.startsWith("!")) {
    const command = target.slice(1);
    if (command === "here" || command === "channel" || command === "everyone") return `@${command}`;
    if (label) return label;
    return command.startsWith("subteam^") ? `@${command.slice(8)}` : `@${command}`;
  }
  const address = target.startsWith("mailto:") ? target.slice(7) : target;
  if (!label || label === target || label === address) return address;
  return `${label} (${address})`;
}

function decodeEntities(text: string): string {
  return text.replace(/&(lt|gt|amp);/g, (_, name: string) =>
    name === "lt" ? "<" : name === "gt" ? ">" : "&",
  );
}
