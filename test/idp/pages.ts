// The test provider's HTML: the login page (one username field, one "Sign in" button) and its error page.
import type { IdpUser } from "./accounts.ts";

/** The login form's id: signInAt finds the form by it. */
export const LOGIN_FORM_ID = "idp-login";

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · aptix test IdP</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f4f5;margin:0;display:grid;place-items:center;min-height:100vh}
main{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002;width:20rem}
h1{font-size:1.4rem;margin-top:0}label{display:block;margin-bottom:.3rem}
input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem;margin-bottom:1rem}
button{width:100%;padding:.6rem;font-size:1rem;background:#2563eb;color:#fff;border:0;border-radius:4px;cursor:pointer}
.alert{color:#b91c1c}.hint{color:#52525b;font-size:.9rem}
</style>
</head>
<body><main>${body}</main></body>
</html>`;
}

export interface LoginPage {
  /** Where the form posts: the interaction's own URL. */
  action: string;
  clientId: string;
  users: IdpUser[];
  /** Why the last attempt was refused, shown above the form. */
  refusal?: string;
}

export function loginPage(page: LoginPage): string {
  const names = page.users.map((user) => user.sub);
  return layout(
    "Sign in",
    `<h1>Sign in</h1>
<p>to <strong>${escapeHtml(page.clientId)}</strong></p>
${page.refusal === undefined ? "" : `<p role="alert" class="alert">${escapeHtml(page.refusal)}</p>`}
<form id="${LOGIN_FORM_ID}" method="post" action="${escapeHtml(page.action)}">
<label for="login">Username</label>
<input id="login" name="login" list="users" autocomplete="username" autofocus required>
<datalist id="users">${names.map((name) => `<option value="${escapeHtml(name)}">`).join("")}</datalist>
<button type="submit">Sign in</button>
</form>
<p class="hint">Test users: ${names.map(escapeHtml).join(", ")}. No password.</p>`,
  );
}

export function errorPage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p role="alert" class="alert">${escapeHtml(message)}</p>`);
}
