/**
 * How the OpenAI-compatible adapter follows redirects: `fetch` follows up to 20 of any kind by
 * itself, so a 307 loop cost a request per hop (and the SDK's retries on top), a 302 turned the
 * POST into a GET, and a 307 to another origin carried the chat there. Here a redirect is
 * followed only to the same origin, at most a few times, with its method and body kept; anything
 * else is answered with the redirect's own status and a message that names it, marked not to be
 * retried (`x-should-retry: false`, which the SDK honours), so the adapter fails once, named.
 */

/** Same-origin redirects followed at most per request. */
const MAX_REDIRECTS = 3;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A `fetch` that follows redirects as above. */
export function redirectSafeFetch(maxRedirects = MAX_REDIRECTS): typeof fetch {
  return async (input, init) => {
    let url = new URL(input instanceof Request ? input.url : String(input));
    for (let hops = 0; ; hops++) {
      const response = await fetch(url, { ...init, redirect: "manual" });
      const location = response.headers.get("location");
      if (!REDIRECTS.has(response.status) || location === null) return response;
      await response.body?.cancel();
      const next = new URL(location, url);
      if (next.origin !== url.origin) {
        return refused(
          response.status,
          `${url.origin} redirected to another origin, ${next.origin}: not followed, so the request went nowhere else (point the endpoint at the server that answers)`,
        );
      }
      if (hops === maxRedirects) {
        return refused(
          response.status,
          `more than ${maxRedirects} redirects from ${url.origin}${url.pathname} (a redirect loop?): not followed further (point the endpoint at the server that answers)`,
        );
      }
      url = next;
    }
  };
}

/** A redirect not followed, as an error reply the SDK reads and does not retry. */
function refused(status: number, message: string): Response {
  return new Response(JSON.stringify({ error: { message, type: "redirect_not_followed" } }), {
    status,
    headers: { "content-type": "application/json", "x-should-retry": "false" },
  });
}
