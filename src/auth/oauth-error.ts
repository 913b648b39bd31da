// OAuth's error answer, as its clients read it (RFC 6749 §5.2, RFC 7009 §2.2.1, RFC 7591 §3.2.2):
// `{"error", "error_description"}`, never cached. aptix's own refusals at the OAuth endpoints use it.

export function oauthError(
  status: 400 | 401 | 403 | 413 | 500,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ error, error_description: description }), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache", ...headers },
  });
}
